import AsyncHTTPClient
import DaemonTestSupport
import Foundation
import GRDB
import Logging
import NIOCore
import NIOHTTP1
import NotificationCore
@testable import NotificationDaemon
import NotificationDaemonClient
@testable import NotificationEngine
import Synchronization
import Testing
import TestSupport

/// What any client of the daemon can send it, and what it can never do: the rules are the machine's,
/// the files are private, prompts answer only their app, and one app's bad state stalls nobody.
@Suite(.timeLimit(.minutes(1))) struct TrustBoundaryTests {
    @Test func theHostileRequestGetsA400NamingTheRuleAndTheDaemonGoesOn() async throws {
        try await withDaemon { daemon in
            let hostile = try await daemon.authorizedApp("com.example.hostile")
            let neighbour = try await daemon.authorizedApp("com.example.neighbour")
            let body = #"{"identifier":"spin","content":{"title":"x"},"trigger":{"type":"timeInterval","interval":0,"repeats":true}}"#
            let answer = try await hostile.rawJSON(.POST, "/v1/requests", body)
            #expect(answer.status == 400)
            let problem = try JSONDecoder().decode(LocalAPI.Problem.self, from: answer.body)
            #expect(problem.code == "invalidRequest")
            #expect(problem.reason == "intervalNotPositive")
            #expect(problem.unErrorCode == NotificationErrorCode.notificationInvalidNoDate.rawValue)
            #expect(try await hostile.pending().isEmpty, "nothing was kept")

            try await neighbour.add("fine", trigger: .timeInterval(60, repeats: true))
            #expect(try await neighbour.pending().map(\.request.identifier) == ["fine"])
        }
    }

    @Test(arguments: [
        ("..", 400), ("com/example", 400), ("com_example.todo", 400), (".hidden", 400), ("com.example.todo", 201),
    ])
    func onlyReverseDNSBundleIdentifiersAreRegistered(_ identifier: String, status: Int) async throws {
        try await withDaemon { daemon in
            let answer = try await daemon.admin.raw(.POST, "/v1/admin/apps", body: LocalAPI.RegisterApp(bundleIdentifier: identifier))
            #expect(answer.status == status)
            #expect(FileManager.default.fileExists(atPath: daemon.directory.path), "the data directory is still there")
        }
    }

    /// Files an app could name to hang, flood or reach past the daemon: each is refused at once with
    /// the attachment's `UNError` code, and nothing is copied.
    @Test(arguments: ["fifo", "directory", "/dev/zero", "link to /dev/zero", "another app's copy", "outside the store, named as inside"])
    func hostileAttachmentsAreRefused(_ kind: String) async throws {
        try await withDaemon { daemon in
            let app = try await daemon.authorizedApp("com.example.todo")
            let other = try await daemon.authorizedApp("com.example.other")
            let folder = try makeTestDirectory()
            let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 0, count: 64))
            let path: String
            switch kind {
            case "fifo":
                path = folder.appendingPathComponent("pipe.png").path
                #expect(mkfifo(path, 0o600) == 0)
            case "directory":
                path = folder.appendingPathComponent("folder.png").path
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            case "/dev/zero":
                path = "/dev/zero"
            case "link to /dev/zero":
                path = folder.appendingPathComponent("zero.png").path
                try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: "/dev/zero")
            case "another app's copy":
                let source = folder.appendingPathComponent("theirs.png")
                try png.write(to: source)
                try await other.call(.POST, "/v1/requests", body: request(attaching: source.path))
                let stored = try #require(try await other.pending().first?.request.content.attachments.first?.url.path)
                path = stored
            default:
                let attachments = daemon.directory.appendingPathComponent("attachments/com.example.todo")
                path = attachments.path + "/../com.example.other/../../admin.key.png"
            }
            let answer = try await app.raw(.POST, "/v1/requests", body: request(attaching: path))
            let problem = try JSONDecoder().decode(LocalAPI.Problem.self, from: answer.body)
            #expect(answer.status == 422, "\(problem.detail)")
            #expect([100, 101, 103, 105].contains(problem.unErrorCode ?? 0), "\(problem.detail)")
            #expect(try await app.pending().isEmpty)
            let copies = daemon.directory.appendingPathComponent("attachments/com.example.todo").path
            #expect((try? FileManager.default.contentsOfDirectory(atPath: copies))?.isEmpty ?? true, "nothing was copied")
        }
    }

    /// A value no reader could keep, or an identifier that would collapse on disk, is refused on every
    /// route before anything is stored (an app's request, an admin push, an admin path); what was
    /// taken, at the limits, is read back after a restart, and the lists go on working.
    @Test func poisonIsRefusedOnEveryRouteAndWhatWasTakenReadsBackAfterARestart() async throws {
        let directory = try makeTestDirectory()
        @Sendable func nested(_ depth: Int) -> String {
            #"{"aps":{"alert":"deep"},"d":"# + String(repeating: "[", count: depth - 1) + "1" + String(repeating: "]", count: depth - 1) + "}"
        }
        @Sendable func request(_ identifier: String, userInfoDepth depth: Int) -> Data {
            Data(#"{"identifier":"\#(identifier)","content":{"title":"t","userInfo":\#(nested(depth))},"trigger":{"type":"timeInterval","interval":60,"repeats":false}}"#.utf8)
        }
        try await withDaemon(directory: directory) { daemon in
            let key = try await daemon.admin.call(.POST, "/v1/admin/apps", body: LocalAPI.RegisterApp(bundleIdentifier: "com.example.todo"),
                                                  as: LocalAPI.AppKey.self).key
            _ = try await daemon.admin.call(.POST, "/v1/admin/apps/com.example.todo/authorization",
                                            body: LocalAPI.AuthorizationDecision(decision: "grant"), as: NotificationSettings.self)
            let cases: [(what: String, method: String, path: String, key: String, body: Data, status: Int, reason: String?)] = [
                ("userInfo 65 deep", "POST", "/v1/requests", key, request("deep", userInfoDepth: 65), 400, "userInfoTooDeep"),
                ("userInfo 510 deep", "POST", "/v1/requests", key, request("deeper", userInfoDepth: 510), 400, nil),
                ("a NUL in its identifier", "POST", "/v1/requests", key, Data(#"{"identifier":"nul\u0000A","content":{"title":"t"}}"#.utf8), 400,
                 "identifierHasControlCharacter"),
                ("a control character in its thread", "POST", "/v1/requests", key,
                 Data(#"{"identifier":"t","content":{"title":"t","threadIdentifier":"a\u0001"}}"#.utf8), 400, "identifierHasControlCharacter"),
                ("a null in its userInfo", "POST", "/v1/requests", key, Data(#"{"identifier":"n","content":{"title":"t","userInfo":{"n":null}}}"#.utf8),
                 400, "userInfoNotPropertyList"),
                ("an admin push 65 deep", "POST", "/v1/admin/apps/com.example.todo/pushes", daemon.adminKey,
                 try JSONEncoder().encode(LocalAPI.LocalPush(payload: nested(65))), 400, nil),
                ("an admin push with a control character in its collapse id", "POST", "/v1/admin/apps/com.example.todo/pushes", daemon.adminKey,
                 try JSONEncoder().encode(LocalAPI.LocalPush(payload: #"{"aps":{"alert":"x"}}"#, collapseID: "a\u{1}")), 400, nil),
                ("an app path with %00", "GET", "/v1/admin/apps/com.example.todo%00anything/settings", daemon.adminKey, Data(), 400, nil),
                ("settings changed through %00", "PATCH", "/v1/admin/apps/com.example.todo%00x/settings", daemon.adminKey,
                 Data(#"{"alertSetting":"disabled"}"#.utf8), 400, nil),
                ("userInfo 64 deep", "POST", "/v1/requests", key, request("kept", userInfoDepth: 64), 201, nil),
                ("an admin push 64 deep", "POST", "/v1/admin/apps/com.example.todo/pushes", daemon.adminKey,
                 try JSONEncoder().encode(LocalAPI.LocalPush(payload: nested(64), collapseID: "pushed")), 204, nil),
            ]
            for test in cases {
                let connection = try RawHTTPConnection(socketPath: daemon.socketPath)
                try await connection.send(RawHTTPConnection.request(test.method, test.path, key: test.key, body: test.body.isEmpty ? nil : test.body))
                let answer = try #require(try await connection.responses(1).first)
                #expect(answer.status == test.status, "\(test.what): \(String(decoding: answer.body, as: UTF8.self))")
                if let reason = test.reason {
                    #expect((try? JSONDecoder().decode(LocalAPI.Problem.self, from: answer.body))?.reason == reason, "\(test.what)")
                }
            }
            #expect(try await daemon.engine.pendingRequests("com.example.todo").map(\.request.identifier) == ["kept"])
            #expect(try await daemon.engine.settings("com.example.todo").alertSetting == .enabled, "the %00 path changed nothing")
        }
        // A new daemon over the same files reads everything back.
        try await withDaemon(directory: directory) { daemon in
            let pending = try await daemon.engine.pendingRequests("com.example.todo")
            #expect(pending.map(\.request.identifier) == ["kept"])
            #expect(pending.first?.request.content.userInfo["d"]?.nests(deeperThan: 62) == true)
            #expect(try await daemon.engine.deliveredNotifications("com.example.todo").map(\.request.identifier) == ["pushed"])
            #expect(try await daemon.admin.raw(.GET, "/v1/admin/notifications").status == 200)
        }
    }

    /// One app's stored state that cannot be read (a bug, a damaged disk, another version's format)
    /// quarantines that app alone: the lists, the other apps and the device link go on; its calls say
    /// why; a push for it is dropped with why and acknowledged; the administrator resets it.
    @Test func anAppWhoseStateCannotBeReadIsQuarantinedAloneAndCanBeReset() async throws {
        let directory = try makeTestDirectory()
        let keys = try await withDaemon(directory: directory) { daemon in
            var keys: [String: String] = [:]
            for app in ["com.example.damaged", "com.example.fine"] {
                keys[app] = try await daemon.admin.call(.POST, "/v1/admin/apps", body: LocalAPI.RegisterApp(bundleIdentifier: app), as: LocalAPI.AppKey.self).key
                _ = try await daemon.admin.call(.POST, "/v1/admin/apps/\(app)/authorization", body: LocalAPI.AuthorizationDecision(decision: "grant"),
                                                as: NotificationSettings.self)
                try await LocalAPIClient(socketPath: daemon.socketPath, key: keys[app]!).add("shown")
            }
            return keys
        }
        // Written by a bug, or damaged on disk, while the daemon was stopped.
        let queue = try DatabaseQueue(path: directory.appendingPathComponent("unotify.sqlite").path)
        try await queue.write { db in
            try db.execute(sql: "UPDATE delivered SET notification = CAST('{not json' AS BLOB) WHERE app = 'com.example.damaged'")
        }
        let log = LogRecorder()
        try await withWebCenter(directory: directory, logHandler: log) { daemon, url in
            // The web center's state: the other app's notification, where the request failed for every app.
            let secret = try #require(url.firstMatch(of: /secret=(\S+)/).map { String($0.1) })
            let origin = try #require(url.firstMatch(of: /http:\/\/[^\/]+/).map { String($0.0) })
            let port = try #require(origin.split(separator: ":").last.map(String.init))
            var request = HTTPClientRequest(url: origin + "/api/state")
            request.headers.add(name: "Cookie", value: "unotify-center-\(port)=\(secret)")
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
            let state = String(buffer: try await response.body.collect(upTo: 1 << 20))
            #expect(response.status.code == 200, "\(state)")
            #expect(state.contains("com.example.fine") && !state.contains("com.example.damaged"), "\(state)")

            let damaged = LocalAPIClient(socketPath: daemon.socketPath, key: keys["com.example.damaged"]!)
            let fine = LocalAPIClient(socketPath: daemon.socketPath, key: keys["com.example.fine"]!)
            // Every list, and the other app, as before.
            let listed = try await daemon.admin.call(.GET, "/v1/admin/notifications", as: [LocalAPI.VisibleNotification].self)
            #expect(listed.map(\.bundleIdentifier) == ["com.example.fine"])
            #expect(try await daemon.admin.raw(.GET, "/v1/admin/prompts").status == 200)
            #expect(try await fine.delivered().map(\.request.identifier) == ["shown"])
            // The damaged app's own calls say what is wrong and what to do.
            let refused = await problem { _ = try await damaged.delivered() }
            #expect(refused?.status == 503 && refused?.code == "appQuarantined")
            #expect(refused?.detail.contains("unotify apps reset com.example.damaged") == true)
            let apps = try await daemon.admin.call(.GET, "/v1/admin/apps", as: [LocalAPI.AppSummary].self)
            #expect(apps.first { $0.bundleIdentifier == "com.example.damaged" }?.quarantined?.contains("cannot be read") == true)
            #expect(apps.first { $0.bundleIdentifier == "com.example.fine" }?.quarantined == nil)
            #expect(log.messages.filter { $0.level == .error && $0.message.contains("quarantined") }.count == 1, "said once in the log")

            // Pushes from the link: the damaged app's is dropped with why, the other's shown, both acknowledged.
            func push(_ sequence: Int64, _ app: String) -> DeviceLink.Push {
                DeviceLink.Push(sequence: sequence, token: "ab", bundleIdentifier: app, environment: .sandbox, apnsID: "id-\(sequence)",
                                pushType: .alert, priority: 10, expiresAt: 2_000_000_000, collapseID: "push-\(sequence)",
                                payload: #"{"aps":{"alert":"hello"}}"#, receivedAt: 1_767_225_600, uniqueID: "unique-\(sequence)")
            }
            try await daemon.engine.takePushes([push(1, "com.example.damaged"), push(2, "com.example.fine")])
            #expect(await daemon.engine.linkSequence == 2)
            #expect(try await fine.delivered().map(\.request.identifier).sorted() == ["push-2", "shown"])
            let reports = try #require(try await daemon.engine.unsentDeliveryReports(limit: 100)).reports
            #expect(reports.contains { $0.uniqueID == "unique-1" && $0.stage == .notShown && $0.detail?.contains("quarantined") == true })

            // The way out: its state set aside, the app afresh with its key.
            let reset = try await daemon.admin.call(.POST, "/v1/admin/apps/com.example.damaged/reset", as: LocalAPI.AppReset.self)
            #expect(reset.setAside == 3, "its core, its categories and its delivered notification")
            #expect(try await damaged.delivered().isEmpty)
            #expect(try await damaged.call(.GET, "/v1/settings", as: NotificationSettings.self).authorizationStatus == .notDetermined)
            _ = try await daemon.admin.call(.POST, "/v1/admin/apps/com.example.damaged/authorization", body: LocalAPI.AuthorizationDecision(decision: "grant"),
                                            as: NotificationSettings.self)
            try await damaged.add("again")
            #expect(try await damaged.delivered().map(\.request.identifier) == ["again"])
            let listedAgain = try await daemon.admin.call(.GET, "/v1/admin/notifications", as: [LocalAPI.VisibleNotification].self)
            #expect(Set(listedAgain.map(\.bundleIdentifier)) == ["com.example.damaged", "com.example.fine"])
        }
        let kept = try await queue.read { db in try String.fetchAll(db, sql: "SELECT part FROM set_aside WHERE app = 'com.example.damaged' ORDER BY part") }
        #expect(kept == ["categories", "core", "delivered"])
    }

    @Test func aBrokenStateFromAnOlderDaemonNeitherSpinsNorDelaysAnotherApp() async throws {
        let directory = try makeTestDirectory()
        let clock = ManualDaemonClock()
        // An older daemon stored the hostile request: its state is written here as it would have been.
        do {
            let store = try SQLiteDaemonStore(path: directory.appendingPathComponent("unotify.sqlite").path)
            var machine = NotificationCenterMachine(now: clock.now, calendar: Calendar(identifier: .gregorian), timeZone: TimeZone(identifier: "UTC")!,
                                                    appState: .notRunning, appReachable: false)
            _ = machine.changeSettings(.granting([.alert, .sound, .badge], status: .authorized))
            var content = NotificationContent()
            content.title = "spin"
            _ = try machine.add(NotificationRequest(identifier: "spin", content: content, trigger: .timeInterval(60, repeats: true)))
            let broken = try brokenCopy(of: machine, interval: 0)
            try await store.insert(StoredApp(bundleIdentifier: "com.example.old", keyHash: DaemonEngine.hash("old-key"), launchCommand: nil,
                                       machine: broken, bootID: "an-older-run"))
        }
        clock.advance(by: 3600)
        try await withDaemon(directory: directory, clock: clock) { daemon in
            let neighbour = try await daemon.authorizedApp("com.example.neighbour")
            try await neighbour.add("soon", trigger: .timeInterval(5, repeats: false))
            clock.advance(by: 5)
            await daemon.engine.processDue()
            #expect(try await neighbour.delivered().map(\.request.identifier) == ["soon"], "the other app's notification fired")
            #expect(try await daemon.engine.pendingRequests("com.example.old").isEmpty, "the broken request was dropped")
            let shown = try await daemon.engine.deliveredNotifications("com.example.old")
            #expect(shown.count <= 1, "it did not flood the person: \(shown.count) shown")
        }
    }

    @Test func theDaemonsFilesAreItsUsersAloneFromTheFirstByte() async throws {
        // A data directory the daemon creates itself.
        try await withDaemon(directory: try makeTestDirectory().appendingPathComponent("data")) { daemon in
            let app = try await daemon.authorizedApp("com.example.todo")
            try await app.add("one")
            let database = daemon.configuration.databasePath
            for path in [daemon.directory.path, database, database + "-wal", database + "-shm", daemon.configuration.adminKeyPath] {
                let mode = try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
                #expect(mode & 0o077 == 0, "\(path) is \(String(mode, radix: 8))")
            }
        }
    }

    @Test func looseFilesAreReportedAtStart() async throws {
        let directory = try makeTestDirectory()
        try await withDaemon(directory: directory) { _ in }
        _ = chmod(directory.path, 0o755)
        _ = chmod(directory.appendingPathComponent("unotify.sqlite").path, 0o644)
        let recorder = LogRecorder()
        try await withDaemon(directory: directory, logHandler: recorder) { _ in }
        let warned = recorder.messages.filter { $0.level == .warning }.compactMap { $0.metadata["path"] }
        #expect(warned.contains(directory.path))
        #expect(warned.contains(directory.appendingPathComponent("unotify.sqlite").path))
    }

    @Test func anAnswerToAStalePromptNeverReachesAnotherAppsCall() async throws {
        let directory = try makeTestDirectory()
        let path = directory.appendingPathComponent("db.sqlite").path
        let clock = ManualDaemonClock()
        // A run of the daemon in which the first app asked, and stopped before the person answered.
        do {
            let engine = await DaemonEngine(store: try SQLiteDaemonStore(path: path), clock: clock)
            _ = try await engine.registerApp("com.example.first")
            _ = try await engine.registerApp("com.example.second")
            let events = await engine.watch().events
            let asking = Task { try await engine.requestAuthorization("com.example.first", options: [.alert]) }
            try await withDeadline("the first app's prompt") { await nextPrompt(in: events) }
            asking.cancel()
        }
        // The next run: the second app asks, and the person answers the first app's prompt, still on screen.
        let engine = await DaemonEngine(store: try SQLiteDaemonStore(path: path), clock: clock)
        let events = await engine.watch().events
        let second = Task { try await engine.requestAuthorization("com.example.second", options: [.alert]) }
        #expect(try await withDeadline("the second app's prompt") { await nextPrompt(in: events) } == "com.example.second")
        #expect(try await engine.authorizationPrompts().map(\.bundleIdentifier) == ["com.example.first", "com.example.second"])
        _ = try await engine.authorize("com.example.first", .deny)
        #expect(try await engine.authorizationPrompts().map(\.bundleIdentifier) == ["com.example.second"],
                "the second app's prompt still waits for its own answer")
        _ = try await engine.authorize("com.example.second", .grant)
        #expect(try await second.value == true, "the second app's call got the answer given to it")
    }

    @Test func aWatchStartedWhileAnAppWaitsSeesThePrompt() async throws {
        try await withDaemon { daemon in
            let app = try await daemon.registerApp("com.example.todo")
            let events = await daemon.engine.watch().events
            async let granted = app.call(.POST, "/v1/authorization", body: LocalAPI.AuthorizationRequest(options: 7), as: LocalAPI.AuthorizationResult.self)
            _ = try await withDeadline("the prompt") { await nextPrompt(in: events) }
            // A presenter that starts now finds it by listing.
            let prompts = try await daemon.admin.call(.GET, "/v1/admin/prompts", as: [LocalAPI.AuthorizationPrompt].self)
            #expect(prompts == [LocalAPI.AuthorizationPrompt(bundleIdentifier: "com.example.todo", options: 7)])
            _ = try await daemon.admin.call(.POST, "/v1/admin/apps/com.example.todo/authorization",
                                            body: LocalAPI.AuthorizationDecision(decision: "grant"), as: NotificationSettings.self)
            #expect(try await granted.granted)
            #expect(try await daemon.admin.call(.GET, "/v1/admin/prompts", as: [LocalAPI.AuthorizationPrompt].self).isEmpty)
        }
    }

    @Test func aPresenterThatFallsBehindIsToldSoAndNotFedAGap() async throws {
        try await withDaemon(configure: { $0.engine.presenterBacklog = 2 }) { daemon in
            let home = CircularRegion(identifier: "home", center: Coordinate(latitude: 48.85, longitude: 2.35), radius: 500)
            for index in 0..<4 {
                let app = try await daemon.authorizedApp("com.example.app\(index)")
                for request in 0..<40 {
                    try await app.add("home-\(request)", title: String(repeating: "long title ", count: 200), trigger: .location(home, repeats: false))
                }
            }
            try await daemon.withWatch { watch in
                // One move fires 160 notifications at once, megabytes of events, while the presenter reads
                // nothing: far more than its socket and its backlog hold.
                try await daemon.admin.call(.POST, "/v1/admin/device", body: LocalAPI.DeviceChange(latitude: 48.85, longitude: 2.35))
                var presented = 0
                _ = try await watch.next { event in
                    if event.type == "presented" { presented += 1 }
                    return event.type == "overflowed"
                }
                #expect(presented < 160, "some events were not sent, and the presenter was told")
                let visible = try await daemon.admin.call(.GET, "/v1/admin/notifications", as: [LocalAPI.VisibleNotification].self)
                #expect(visible.count == 160, "what is on screen, read again, has every notification")
                // After the overflow the presenter is fed again.
                try await daemon.authorizedApp("com.example.later").add("now")
                let next = try await watch.next { $0.type == "presented" }
                #expect(next.bundleIdentifier == "com.example.later")
            }
        }
    }

    @Test func aWatchThatOverflowsEndsWithWhatItHeldAndSaysSo() async throws {
        try await withDaemon(configure: { $0.engine.presenterBacklog = 2 }) { daemon in
            let watch = await daemon.engine.watch()
            let app = try await daemon.authorizedApp("com.example.todo")
            for index in 0..<3 { try await app.add("n\(index)") }
            var received: [String] = []
            for await event in watch.events {
                if case .app(_, .presented(let shown)) = event { received.append(shown.notification.request.identifier) }
            }
            #expect(received == ["n0"], "the backlog held the settings change and the first notification")
            #expect(watch.overflowed)
            let later = await daemon.engine.watch()
            #expect(!later.overflowed)
        }
    }
}

/// The app of the next authorization prompt on `events`.
private func nextPrompt(in events: AsyncStream<DaemonEvent>) async -> String? {
    for await event in events {
        if case .app(let app, .authorizationPrompt(_)) = event { return app }
    }
    return nil
}

/// A request with one PNG attachment at `path`.
private func request(attaching path: String) -> NotificationRequest {
    var content = NotificationContent()
    content.title = "With a picture"
    content.attachments = [NotificationAttachment(identifier: "picture", url: URL(fileURLWithPath: path), type: "public.png")]
    return NotificationRequest(identifier: "picture", content: content, trigger: .timeInterval(60, repeats: false))
}

/// A copy of `machine` in which every pending time-interval trigger has `interval`, as an older daemon
/// that did not enforce the rules could have stored it.
func brokenCopy(of machine: NotificationCenterMachine, interval: Double) throws -> NotificationCenterMachine {
    let json = String(decoding: try JSONEncoder().encode(machine), as: UTF8.self)
    let broken = json.replacingOccurrences(of: #""interval":60"#, with: #""interval":\#(interval)"#)
    precondition(broken != json, "the machine has a 60 s interval to break")
    return try JSONDecoder().decode(NotificationCenterMachine.self, from: Data(broken.utf8))
}

extension LocalAPIClient {
    /// Sends a JSON body as it is written, and returns the status and the body of the answer.
    func rawJSON(_ method: HTTPMethod, _ path: String, _ json: String) async throws -> (status: Int, body: Data) {
        let answer = try await raw(method, path, body: RawJSON(text: json))
        return (answer.status, answer.body)
    }
}

/// A JSON text sent as it is.
struct RawJSON: Encodable {
    let text: String
    func encode(to encoder: any Encoder) throws {
        let value = try JSONDecoder().decode(AnyJSON.self, from: Data(text.utf8))
        try value.encode(to: encoder)
    }
}

/// A log handler that keeps every message, for tests that check what the daemon reported.
final class LogRecorder: LogHandler, @unchecked Sendable {
    // Sendable: `recorded` is only touched under `lock`; the rest is what swift-log asks of a handler.
    struct Message: Sendable {
        let level: Logger.Level
        let message: String
        let metadata: [String: String]
    }

    private let lock = NSLock()
    private var recorded: [Message] = []
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let metadata = (event.metadata ?? [:]).mapValues { "\($0)" }
        lock.withLock { recorded.append(Message(level: event.level, message: "\(event.message)", metadata: metadata)) }
    }

    var messages: [Message] { lock.withLock { recorded } }
}
