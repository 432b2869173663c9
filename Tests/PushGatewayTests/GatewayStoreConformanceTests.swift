import Foundation
import NotificationCore
import PushGateway
import TestSupport
import Testing

/// What every gateway store must do, run against each implementation. A new store (PostgreSQL)
/// adds its case to ``Kind`` and passes the same tests.
@Suite struct GatewayStoreConformanceTests {
    enum Kind: String, CaseIterable, CustomTestStringConvertible {
        case sqlite
        /// A real PostgreSQL server started by the test run (``PostgresServer``).
        case postgres
        var testDescription: String { rawValue }
    }

    /// A fresh, empty store of `kind`, and a way to open it again as after a restart.
    struct Opened {
        let store: any GatewayStore
        let reopen: @Sendable () async throws -> any GatewayStore
    }

    static func open(_ kind: Kind) async throws -> Opened {
        switch kind {
        case .sqlite:
            let folder = try TemporaryFolders.make("gateway-store-")
            let path = folder.appendingPathComponent("gateway.sqlite").path
            return Opened(store: try SQLiteGatewayStore(path: path), reopen: { try SQLiteGatewayStore(path: path) })
        case .postgres:
            let url = try await PostgresServer.newDatabase()
            return Opened(store: try await PostgresServer.openStore(url), reopen: { try await PostgresServer.openStore(url) })
        }
    }

    static let t0 = Date(timeIntervalSince1970: 1_767_225_600)
    static let pem = "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----\n"

    func push(_ device: String = "device-1", token: String = "aa01", app: String = "com.example.todo", id: String, collapse: String? = nil,
              expires: Date = t0 + 3600) -> QueuedPush {
        QueuedPush(deviceID: device, token: token, bundleIdentifier: app, environment: .sandbox, apnsID: id, pushType: .alert, priority: 10, expiresAt: expires,
                   collapseID: collapse, payload: Array(#"{"aps":{"alert":"\#(id)"}}"#.utf8), receivedAt: Self.t0)
    }

    func withDevice(_ kind: Kind, _ body: (any GatewayStore, Opened) async throws -> Void) async throws {
        let opened = try await Self.open(kind)
        try await opened.store.addDevice("device-1", secretHash: "hash-1", at: Self.t0)
        try await opened.store.addDevice("device-2", secretHash: "hash-2", at: Self.t0)
        try await body(opened.store, opened)
    }

    /// Many providers' pushes for one device stored at once, while its link follows them in their
    /// order and acknowledges them: the link sees every one (a push may never commit after one with a
    /// later sequence that the link has passed, or the acknowledgement would remove it unseen).
    @Test(arguments: Kind.allCases)
    func concurrentPushesForOneDeviceReachItsLinkInOrderAllOfThem(kind: Kind) async throws {
        try await withDevice(kind) { store, _ in
            let writers = 16, each = 40, batch = 8
            let seen = try await withThrowingTaskGroup(of: [String]?.self) { group in
                for writer in 0..<writers {
                    group.addTask {
                        for first in stride(from: 0, to: each, by: batch) {
                            _ = try await store.enqueue((first..<(first + batch)).map { push(id: "w\(writer)-\($0)") }, at: Self.t0)
                        }
                        return nil
                    }
                }
                let reader = Task {
                    var cursor: Int64 = 0
                    var seen: [String] = []
                    while seen.count < writers * each {
                        let pushes = try await store.pushes(for: "device-1", after: cursor, now: Self.t0, limit: 16)
                        guard let last = pushes.last else {
                            try await Task.sleep(for: .milliseconds(1))
                            continue
                        }
                        seen += pushes.map(\.apnsID)
                        cursor = last.sequence
                        try await store.acknowledge(deviceID: "device-1", through: cursor, at: Self.t0, sent: [])
                    }
                    return seen
                }
                try await group.waitForAll()
                return try await withThrowingTaskGroup(of: [String].self) { deadline in
                    deadline.addTask { try await reader.value }
                    deadline.addTask {
                        try await Task.sleep(for: .seconds(20))
                        reader.cancel()
                        throw CancellationError()
                    }
                    defer { deadline.cancelAll() }
                    return try await deadline.next() ?? []
                }
            }
            #expect(seen.count == writers * each)
            #expect(Set(seen).count == writers * each)
            #expect(try await store.storedPushCounts().queued == 0)
        }
    }

    @Test(arguments: Kind.allCases)
    func teamsKeysAndAppsMakeTheCredentials(kind: Kind) async throws {
        let store = try await Self.open(kind).store
        try await store.addTeam("TEAM123456", name: "Example")
        try await store.addApp("com.example.todo", team: "TEAM123456")
        try await store.addApp("com.example.chat", team: "TEAM123456")
        try await store.addKey(StoredKey(keyID: "KEY1234567", teamID: "TEAM123456", environment: .sandbox, bundleIdentifiers: nil, publicKeyPEM: Self.pem))
        try await store.addKey(StoredKey(keyID: "KEY2345678", teamID: "TEAM123456", environment: nil, bundleIdentifiers: ["com.example.chat"], publicKeyPEM: Self.pem))
        let providers = try await store.providers()
        #expect(providers.appsByTeam == ["TEAM123456": ["com.example.todo", "com.example.chat"]])
        #expect(providers.keys.map(\.keyID) == ["KEY1234567", "KEY2345678"])
        #expect(providers.keys[0].environment == .sandbox)
        #expect(providers.keys[0].bundleIdentifiers == nil)
        #expect(providers.keys[1].environment == nil)
        #expect(providers.keys[1].bundleIdentifiers == ["com.example.chat"])
        #expect(providers.keys[1].publicKeyPEM == Self.pem)
        #expect(try await store.teams().map(\.name) == ["Example"])

        try await store.removeKey("KEY1234567")
        try await store.removeApp("com.example.chat")
        let after = try await store.providers()
        #expect(after.keys.map(\.keyID) == ["KEY2345678"])
        #expect(after.appsByTeam == ["TEAM123456": ["com.example.todo"]])
    }

    /// A device's last link is read with its tokens; its apps with a live token are listed; an app
    /// unregistered because it left the device drops what was queued for it, the log saying why.
    @Test(arguments: Kind.allCases)
    func aDevicesLastLinkAndItsAppsAreReadWithItsTokens(kind: Kind) async throws {
        try await withDevice(kind) { store, opened in
            for (token, app) in [("aa01", "com.example.todo"), ("aa02", "com.example.chat")] {
                _ = try await store.register(Registration(token: token, deviceID: "device-1", bundleIdentifier: app, environment: .sandbox, registeredAt: Self.t0))
            }
            #expect(try await store.registration(token: "aa01")?.deviceLastLinkedAt == nil)
            try await store.noteLinked(["device-1", "device-2"], at: Self.t0 + 60)
            #expect(try await store.registration(token: "aa01")?.deviceLastLinkedAt == Self.t0 + 60)
            #expect(try await opened.reopen().registration(token: "aa02")?.deviceLastLinkedAt == Self.t0 + 60)
            #expect(try await store.registeredApps(of: "device-1") == ["com.example.todo", "com.example.chat"])
            #expect(try await store.registeredApps(of: "device-2") == [])

            var queued = push(id: "for-the-removed-app")
            queued.uniqueID = "01a21e5a-9a68-724b-b31b-6f2d0e1c5b77"
            queued.sender = QueuedPush.Sender(teamID: "TEAM123456", credential: "key KEY1234567")
            _ = try await store.enqueue([queued], at: Self.t0)
            try await store.unregister(deviceID: "device-1", bundleIdentifier: "com.example.todo", at: Self.t0 + 90, because: "the app was removed from the device")
            #expect(try await store.registeredApps(of: "device-1") == ["com.example.chat"])
            #expect(try await store.pushes(for: "device-1", after: 0, now: Self.t0 + 91, limit: 10).isEmpty)
            let stages = try await store.deliveryRecords(matching: "01a21e5a-9a68-724b-b31b-6f2d0e1c5b77").first?.stages ?? []
            #expect(stages.last?.stage == .dropped)
            #expect(stages.last?.detail == "the app was removed from the device")
        }
    }

    @Test(arguments: Kind.allCases)
    func mistakesAreNamedAndChangeNothing(kind: Kind) async throws {
        let store = try await Self.open(kind).store
        await #expect(throws: GatewayError.self) { try await store.addApp("com.example.todo", team: "NOSUCHTEAM") }
        try await store.addTeam("TEAM123456", name: "Example")
        await #expect(throws: GatewayError.self) { try await store.addTeam("TEAM123456", name: "Again") }
        try await store.addApp("com.example.todo", team: "TEAM123456")
        try await store.addTeam("OTHERTEAM1", name: "Other")
        let taken = await #expect(throws: GatewayError.self) { try await store.addApp("com.example.todo", team: "OTHERTEAM1") }
        #expect(taken?.code == .alreadyExists)
        let missing = await #expect(throws: GatewayError.self) { try await store.removeKey("NOSUCHKEY0") }
        #expect(missing?.code == .notFound)
        #expect(try await store.providers().appsByTeam == ["TEAM123456": ["com.example.todo"]])
    }

    @Test(arguments: Kind.allCases)
    func aTokenIsIssuedOncePerDeviceAppAndEnvironment(kind: Kind) async throws {
        try await withDevice(kind) { store, _ in
            let first = try await store.register(Registration(token: "aa01", deviceID: "device-1", bundleIdentifier: "com.example.todo",
                                                              environment: .sandbox, registeredAt: Self.t0))
            // Registering again (each launch does) returns the same token.
            let again = try await store.register(Registration(token: "bb02", deviceID: "device-1", bundleIdentifier: "com.example.todo",
                                                              environment: .sandbox, registeredAt: Self.t0 + 60))
            #expect(again == first)
            // Another environment is another token.
            let production = try await store.register(Registration(token: "cc03", deviceID: "device-1", bundleIdentifier: "com.example.todo",
                                                                   environment: .production, registeredAt: Self.t0))
            #expect(production.token == "cc03")
            #expect(try await store.registration(token: "aa01") == first)
            #expect(try await store.registration(token: "bb02") == nil)

            try await store.unregister(deviceID: "device-1", bundleIdentifier: "com.example.todo", at: Self.t0 + 100)
            #expect(try await store.registration(token: "aa01")?.unregisteredAt == Self.t0 + 100)
            #expect(try await store.registration(token: "cc03")?.unregisteredAt == Self.t0 + 100)
            // Registering after that issues a new token; the old one stays unregistered.
            let renewed = try await store.register(Registration(token: "dd04", deviceID: "device-1", bundleIdentifier: "com.example.todo",
                                                                environment: .sandbox, registeredAt: Self.t0 + 200))
            #expect(renewed.token == "dd04")
            #expect(try await store.registration(token: "aa01")?.unregisteredAt == Self.t0 + 100)
        }
    }

    @Test(arguments: Kind.allCases)
    func aTokenNeedsAKnownDevice(kind: Kind) async throws {
        let store = try await Self.open(kind).store
        let error = await #expect(throws: GatewayError.self) {
            try await store.register(Registration(token: "aa01", deviceID: "nobody", bundleIdentifier: "com.example.todo", environment: .sandbox, registeredAt: Self.t0))
        }
        #expect(error?.code == .notFound)
    }

    @Test(arguments: Kind.allCases)
    func pushesQueueInOrderPerDeviceUntilAcknowledged(kind: Kind) async throws {
        try await withDevice(kind) { store, _ in
            let stored = try await store.enqueue([push(id: "a"), push("device-2", token: "bb01", id: "b"), push(id: "c")], at: Self.t0)
            #expect(stored.map(\.apnsID) == ["a", "b", "c"])
            #expect(stored[0].sequence < stored[1].sequence && stored[1].sequence < stored[2].sequence)
            let later = try await store.enqueue([push(id: "d")], at: Self.t0)
            #expect(later[0].sequence > stored[2].sequence)

            #expect(try await store.pushes(for: "device-1", after: 0, now: Self.t0, limit: 10).map(\.apnsID) == ["a", "c", "d"])
            #expect(try await store.pushes(for: "device-1", after: stored[0].sequence, now: Self.t0, limit: 10).map(\.apnsID) == ["c", "d"])
            #expect(try await store.pushes(for: "device-1", after: 0, now: Self.t0, limit: 2).map(\.apnsID) == ["a", "c"])
            #expect(try await store.pushes(for: "device-2", after: 0, now: Self.t0, limit: 10).map(\.apnsID) == ["b"])

            try await store.acknowledge(deviceID: "device-1", through: stored[2].sequence, at: Self.t0, sent: [])
            #expect(try await store.pushes(for: "device-1", after: 0, now: Self.t0, limit: 10).map(\.apnsID) == ["d"])
            #expect(try await store.pushes(for: "device-2", after: 0, now: Self.t0, limit: 10).map(\.apnsID) == ["b"])
            // Everything of a push comes back as it went in.
            let back = try await store.pushes(for: "device-2", after: 0, now: Self.t0, limit: 1)[0]
            #expect(back == stored[1])
        }
    }

    @Test(arguments: Kind.allCases)
    func pushesHeldForAnOfflineDeviceComeHighestPriorityFirstOnceItLinks(kind: Kind) async throws {
        func held(_ id: String, priority: Int, expires: Date = Self.t0 + 3600) -> QueuedPush {
            var push = push(id: id, expires: expires)
            push.priority = priority
            push.held = true
            return push
        }
        try await withDevice(kind) { store, opened in
            let live = try await store.enqueue([push(id: "live")], at: Self.t0)[0]
            let stored = try await store.enqueue([
                held("background-1", priority: 5), held("alert-1", priority: 10), held("background-2", priority: 5),
                held("expired", priority: 10, expires: Self.t0 + 1), held("alert-2", priority: 10),
            ], at: Self.t0)
            // Held pushes have no place in the device's order yet, and an acknowledgement past their
            // stored sequences does not drop them.
            #expect(try await store.storedPushCounts() == (queued: 1, held: 5))
            #expect(try await store.pushes(for: "device-1", after: 0, now: Self.t0 + 10, limit: 10).map(\.apnsID) == ["live"])
            try await store.acknowledge(deviceID: "device-1", through: stored.map(\.sequence).max()!, at: Self.t0, sent: [])
            #expect(try await store.storedPushCounts() == (queued: 0, held: 5))
            #expect(try await store.pushes(for: "device-1", after: 0, now: Self.t0 + 10, limit: 10).isEmpty)
            // They keep being held across a restart.
            let store = try await opened.reopen()
            #expect(try await store.pushes(for: "device-1", after: 0, now: Self.t0 + 10, limit: 10).isEmpty)

            // Promoted a window at a time: the highest priority first, then in the order they came;
            // each after every sequence given before, so a device that acknowledged those takes them.
            #expect(try await store.promoteHeld(deviceID: "device-1", now: Self.t0 + 10, limit: 3) == 3)
            #expect(try await store.storedPushCounts() == (queued: 3, held: 2))
            let first = try await store.pushes(for: "device-1", after: live.sequence, now: Self.t0 + 10, limit: 10)
            #expect(first.map(\.apnsID) == ["alert-1", "alert-2", "background-1"])
            #expect(first.allSatisfy { $0.sequence > stored.map(\.sequence).max()! })
            #expect(first[0].priority == 10 && first[2].priority == 5)
            #expect(try await store.promoteHeld(deviceID: "device-1", now: Self.t0 + 10, limit: 3) == 1)
            let second = try await store.pushes(for: "device-1", after: first.last!.sequence, now: Self.t0 + 10, limit: 10)
            #expect(second.map(\.apnsID) == ["background-2"])
            // The expired one is never promoted; another device's held pushes are its own.
            #expect(try await store.promoteHeld(deviceID: "device-1", now: Self.t0 + 10, limit: 3) == 0)
            #expect(try await store.promoteHeld(deviceID: "device-2", now: Self.t0 + 10, limit: 3) == 0)
        }
    }

    /// Held pushes go as queued ones do: replaced by a push with their collapse id, dropped with
    /// their app or their device, removed once expired.
    @Test(arguments: Kind.allCases)
    func heldPushesLeaveWithTheirCollapseIDTheirAppTheirDeviceAndTheirTime(kind: Kind) async throws {
        func held(_ id: String, device: String = "device-1", token: String = "aa01", app: String = "com.example.todo", collapse: String? = nil,
                  expires: Date = Self.t0 + 3600) -> QueuedPush {
            var push = push(device, token: token, app: app, id: id, collapse: collapse, expires: expires)
            push.held = true
            return push
        }
        try await withDevice(kind) { store, _ in
            _ = try await store.enqueue([
                held("score-1", collapse: "score"), held("todo"), held("chat", token: "bb02", app: "com.example.chat"),
                held("short", expires: Self.t0 + 10), held("elsewhere", device: "device-2", token: "cc03"),
            ], at: Self.t0)
            _ = try await store.enqueue([held("score-2", collapse: "score")], at: Self.t0)
            #expect(try await store.storedPushCounts() == (queued: 0, held: 5))
            #expect(try await store.removeExpired(before: Self.t0 + 10) == 1)
            #expect(try await store.storedPushCounts() == (queued: 0, held: 4))
            try await store.unregister(deviceID: "device-1", bundleIdentifier: "com.example.chat", at: Self.t0)
            #expect(try await store.storedPushCounts() == (queued: 0, held: 3))
            #expect(try await store.promoteHeld(deviceID: "device-1", now: Self.t0 + 20, limit: 10) == 2)
            #expect(try await store.pushes(for: "device-1", after: 0, now: Self.t0 + 20, limit: 10).map(\.apnsID) == ["todo", "score-2"])
            try await store.removeDevice("device-2", at: Self.t0 + 30)
            #expect(try await store.storedPushCounts() == (queued: 2, held: 0))
            #expect(try await store.promoteHeld(deviceID: "device-2", now: Self.t0 + 30, limit: 10) == 0)
        }
    }

    @Test(arguments: Kind.allCases)
    func aCollapseIDReplacesTheQueuedPushOfTheSameToken(kind: Kind) async throws {
        try await withDevice(kind) { store, _ in
            _ = try await store.enqueue([push(id: "score-1", collapse: "score"), push(token: "aa02", id: "other-token", collapse: "score")], at: Self.t0)
            _ = try await store.enqueue([push(id: "score-2", collapse: "score"), push(id: "plain")], at: Self.t0)
            #expect(try await store.pushes(for: "device-1", after: 0, now: Self.t0, limit: 10).map(\.apnsID) == ["other-token", "score-2", "plain"])
            // Within one batch too, the later one wins.
            _ = try await store.enqueue([push(id: "score-3", collapse: "score"), push(id: "score-4", collapse: "score")], at: Self.t0)
            #expect(try await store.pushes(for: "device-1", after: 0, now: Self.t0, limit: 10).map(\.apnsID) == ["other-token", "plain", "score-4"])
        }
    }

    @Test(arguments: Kind.allCases)
    func expiredPushesAreNeitherDeliveredNorKept(kind: Kind) async throws {
        try await withDevice(kind) { store, _ in
            _ = try await store.enqueue([push(id: "short", expires: Self.t0 + 10), push(id: "long", expires: Self.t0 + 1000)], at: Self.t0)
            #expect(try await store.pushes(for: "device-1", after: 0, now: Self.t0 + 10, limit: 10).map(\.apnsID) == ["long"])
            #expect(try await store.removeExpired(before: Self.t0 + 10) == 1)
            #expect(try await store.removeExpired(before: Self.t0 + 10) == 0)
        }
    }

    @Test(arguments: Kind.allCases)
    func unregisteringDropsWhatWasQueuedForTheApp(kind: Kind) async throws {
        try await withDevice(kind) { store, _ in
            _ = try await store.enqueue([push(id: "todo"), push(app: "com.example.chat", id: "chat")], at: Self.t0)
            try await store.unregister(deviceID: "device-1", bundleIdentifier: "com.example.todo", at: Self.t0)
            #expect(try await store.pushes(for: "device-1", after: 0, now: Self.t0, limit: 10).map(\.apnsID) == ["chat"])
        }
    }

    @Test(arguments: Kind.allCases)
    func everythingSurvivesReopening(kind: Kind) async throws {
        try await withDevice(kind) { store, opened in
            try await store.addTeam("TEAM123456", name: "Example")
            try await store.addApp("com.example.todo", team: "TEAM123456")
            _ = try await store.register(Registration(token: "aa01", deviceID: "device-1", bundleIdentifier: "com.example.todo", environment: .sandbox, registeredAt: Self.t0))
            let stored = try await store.enqueue([push(id: "kept")], at: Self.t0)
            let reopened = try await opened.reopen()
            #expect(try await reopened.providers().appsByTeam == ["TEAM123456": ["com.example.todo"]])
            #expect(try await reopened.registration(token: "aa01")?.deviceID == "device-1")
            #expect(try await reopened.deviceSecretHash("device-1") == "hash-1")
            #expect(try await reopened.pushes(for: "device-1", after: 0, now: Self.t0, limit: 10) == stored)
        }
    }

    @Test(arguments: Kind.allCases)
    func aRemovedDeviceCannotLinkLosesItsPushesAndStaysRemoved(kind: Kind) async throws {
        try await withDevice(kind) { store, opened in
            _ = try await store.enqueue([push(id: "a")], at: Self.t0)
            #expect(try await store.deviceStandings().isEmpty)
            try await store.setDeviceDisabled("device-2", true)
            try await store.removeDevice("device-1", at: Self.t0 + 60)
            #expect(try await store.deviceSecretHash("device-1") == nil)
            #expect(try await store.deviceSecretHash("device-2") == "hash-2")
            #expect(try await store.pushes(for: "device-1", after: 0, now: Self.t0, limit: 10).isEmpty)
            let expected = ["device-1": DeviceStanding(removedAt: Self.t0 + 60), "device-2": DeviceStanding(isDisabled: true)]
            #expect(try await store.deviceStandings() == expected)
            await #expect(throws: GatewayError.self) { try await store.removeDevice("device-1", at: Self.t0 + 120) }
            await #expect(throws: GatewayError.self) { try await store.setDeviceDisabled("device-9", true) }
            #expect(try await opened.reopen().deviceStandings() == expected)
            try await store.setDeviceDisabled("device-2", false)
            #expect(try await store.deviceStandings() == ["device-1": DeviceStanding(removedAt: Self.t0 + 60)])
        }
    }

    @Test(arguments: Kind.allCases)
    func anAppKeepingOnlyItsLatestPushReplacesWhatWasQueuedForTheToken(kind: Kind) async throws {
        try await withDevice(kind) { store, opened in
            try await store.addTeam("TEAM123456", name: "Example")
            try await store.addApp("com.example.todo", team: "TEAM123456")
            try await store.addApp("com.example.chat", team: "TEAM123456")
            #expect(try await store.appsKeepingLatestOnly().isEmpty)
            try await store.setKeepsLatestOnly("com.example.todo", true)
            #expect(try await store.appsKeepingLatestOnly() == ["com.example.todo"])
            #expect(try await opened.reopen().appsKeepingLatestOnly() == ["com.example.todo"])
            await #expect(throws: GatewayError.self) { try await store.setKeepsLatestOnly("com.example.nobody", true) }

            var latest = push(id: "c")
            latest.replacesQueued = true
            // One of those it replaces is held for the device (not linked when it came).
            var held = push(id: "held")
            held.held = true
            _ = try await store.enqueue([push(id: "a"), held, push(token: "bb02", id: "other-token"), push(id: "b")], at: Self.t0)
            _ = try await store.enqueue([latest], at: Self.t0)
            #expect(try await store.promoteHeld(deviceID: "device-1", now: Self.t0, limit: 10) == 0)
            let queued = try await store.pushes(for: "device-1", after: 0, now: Self.t0, limit: 10).map(\.apnsID)
            #expect(queued == ["other-token", "c"])
            try await store.setKeepsLatestOnly("com.example.todo", false)
            #expect(try await store.appsKeepingLatestOnly().isEmpty)
        }
    }
}
