import AsyncHTTPClient
import Crypto
import Foundation
import Logging
import NIOCore
import NotificationCore
import PushGateway
import Synchronization
import TestSupport
import Testing

/// The APNs rules that count per device token or need to know where a device is linked, held across
/// two gateway nodes: two cores, each with its own store on one PostgreSQL database (as two
/// `unotify gateway --database` processes), each behind its own provider endpoint.
@Suite(.serialized, .timeLimit(.minutes(2))) struct SeveralNodesTests {
    struct Node {
        let core: GatewayCore
        let store: PostgresGatewayStore
        let endpoint: ProviderEndpoint
        let bearer: String

        func post(_ token: String, headers: [(String, String)] = []) async throws -> (status: Int, body: String) {
            var request = HTTPClientRequest(url: endpoint.url + "/3/device/\(token)")
            request.method = .POST
            request.headers.add(name: "authorization", value: "bearer \(bearer)")
            request.headers.add(name: "apns-topic", value: "com.example.todo")
            for (name, value) in headers { request.headers.add(name: name, value: value) }
            request.body = .bytes(ByteBuffer(string: #"{"aps":{"alert":"Hi"}}"#))
            let response = try await endpoint.client.execute(request, timeout: .seconds(10))
            return (Int(response.status.code), String(buffer: try await response.body.collect(upTo: 1 << 16)))
        }
    }

    /// Two nodes on a new database holding a team, its app and key, and `device-1`.
    func withTwoNodes(admission: PushAdmission.Configuration = .init(), _ body: (Node, Node) async throws -> Void) async throws {
        let url = try await PostgresServer.newDatabase()
        let signingKey = P256.Signing.PrivateKey()
        let setUp = try await PostgresServer.openStore(url)
        try await setUp.addTeam("TEAM123456", name: "Example")
        try await setUp.addApp("com.example.todo", team: "TEAM123456")
        try await setUp.addKey(StoredKey(keyID: "KEY1234567", teamID: "TEAM123456", environment: nil, bundleIdentifiers: nil,
                                         publicKeyPEM: signingKey.publicKey.pemRepresentation))
        try await setUp.addDevice("device-1", secretHash: "unused", at: Date())
        let bearer = try ProviderToken.make(keyID: "KEY1234567", teamID: "TEAM123456", issuedAt: Int64(Date().timeIntervalSince1970), key: signingKey)

        func node(_ body: (Node) async throws -> Void) async throws {
            let store = try await PostgresServer.openStore(url)
            let core = GatewayCore(store: store, admission: admission, logger: Logger(label: "test"))
            try await core.reloadProviders()
            // What the node hears of the others, as `unotify gateway` does.
            let following = Task {
                await store.followChanges { change in
                    if case .tokensUnregistered(let tokens) = change { core.forgetTokens(tokens) }
                }
            }
            defer { following.cancel() }
            try await ProviderEndpoint.with(credentials: { core.credentials }, refreshCredentials: { core.refreshProviders($0) }, acceptor: core) { endpoint in
                try await body(Node(core: core, store: store, endpoint: endpoint, bearer: bearer))
            }
        }
        try await node { a in try await node { b in try await body(a, b) } }
    }

    @Test func aPushForNowOnlyIsKeptForADeviceLinkedToAnotherNodeAndDroppedForOneLinkedNowhere() async throws {
        try await withTwoNodes { a, b in
            let token = try await a.core.register(deviceID: "device-1", bundleIdentifier: "com.example.todo", environment: .sandbox, at: Date()).token
            b.core.setConnected("device-1", true)
            try await waitFor("node A to see the device linked to node B", within: 10) {
                (try? await a.store.devicesLinkedElsewhere(["device-1"])) == ["device-1"]
            }
            #expect(try await a.post(token, headers: [("apns-expiration", "0"), ("apns-id", "11111111-1111-1111-1111-111111111111")]).status == 200)
            // Kept, and in the device's order at once (not held for a device that is linked).
            #expect(try await a.store.pushes(for: "device-1", after: 0, now: Date(), limit: 10).map(\.apnsID) == ["11111111-1111-1111-1111-111111111111"])

            b.core.setConnected("device-1", false)
            try await waitFor("node A to see the device unlinked", within: 10) {
                (try? await a.store.devicesLinkedElsewhere(["device-1"])) == []
            }
            #expect(try await a.post(token, headers: [("apns-expiration", "0"), ("apns-id", "22222222-2222-2222-2222-222222222222")]).status == 200)
            let counts = try await a.store.storedPushCounts()
            #expect(counts.queued == 1 && counts.held == 0, "the second was accepted and not kept")
            #expect(try await a.core.deliveryRecords(matching: "22222222-2222-2222-2222-222222222222").first?.stages.last?.stage == .dropped)
        }
    }

    @Test func aPushForALinkedDeviceThroughAnotherNodeTakesItsPlaceAtOnce() async throws {
        try await withTwoNodes { a, b in
            let token = try await a.core.register(deviceID: "device-1", bundleIdentifier: "com.example.todo", environment: .sandbox, at: Date()).token
            #expect(try await a.post(token, headers: [("apns-id", "33333333-3333-3333-3333-333333333333")]).status == 200)
            #expect(try await a.store.storedPushCounts().held == 1, "stored held: the device is linked nowhere")
            b.core.setConnected("device-1", true)
            try await waitFor("node A to see the device linked to node B", within: 10) {
                (try? await a.store.devicesLinkedElsewhere(["device-1"])) == ["device-1"]
            }
            #expect(try await a.post(token, headers: [("apns-id", "44444444-4444-4444-4444-444444444444")]).status == 200)
            #expect(try await a.store.pushes(for: "device-1", after: 0, now: Date(), limit: 10).map(\.apnsID) == ["44444444-4444-4444-4444-444444444444"])
        }
    }

    @Test func tooManyRequestsCountsThePushesToATokenThroughEveryNode() async throws {
        var admission = PushAdmission.Configuration()
        admission.burstPerToken = 4
        admission.sustainedPerTokenPerSecond = 0.001
        try await withTwoNodes(admission: admission) { a, b in
            let token = try await a.core.register(deviceID: "device-1", bundleIdentifier: "com.example.todo", environment: .sandbox, at: Date()).token
            for node in [a, b, a, b] { #expect(try await node.post(token).status == 200) }
            // Each node took two: its own count allows more, the token's does not.
            #expect(try await a.post(token) == (429, #"{"reason":"TooManyRequests"}"#))
            #expect(try await b.post(token) == (429, #"{"reason":"TooManyRequests"}"#))
            #expect(try await a.store.storedPushCounts().held == 4)
        }
    }

    @Test func aTokenUnregisteredThroughOneNodeAnswers410OnTheOther() async throws {
        try await withTwoNodes { a, b in
            let token = try await a.core.register(deviceID: "device-1", bundleIdentifier: "com.example.todo", environment: .sandbox, at: Date()).token
            // Node B reads the token and keeps it.
            #expect(try await b.post(token).status == 200)
            try await a.core.unregister(deviceID: "device-1", bundleIdentifier: "com.example.todo", at: Date(timeIntervalSince1970: 1_767_225_600.5))
            try await waitFor("node B to answer 410", within: 10) {
                (try? await b.post(token)) ?? (0, "") == (410, #"{"reason":"Unregistered","timestamp":1767225600500}"#)
            }
        }
    }

    enum Stage: Sendable { case beforeLocking, afterCommit }

    /// A node on PostgreSQL writes two batches at once: a device's pushes still take their places in
    /// the order they were accepted, and are handed to its link in that order, batch after batch,
    /// whichever batch commits first (a link that was handed a later batch first would pass the
    /// earlier one's pushes for good). Held pushes of a device linked nowhere go in beside them.
    ///
    /// The pushes come in chunks, the next one as each batch is stored (so that one batch is cut
    /// while another is being written), and every other batch is made slow: before it locks its
    /// devices, or after its commit. The batch cut after it would otherwise take the device's places
    /// first, or be handed on first.
    @Test(.timeLimit(.minutes(1)), arguments: [Stage.beforeLocking, .afterCommit])
    func batchesWrittenTwoAtATimeKeepEachDevicesOrder(slowed stage: Stage) async throws {
        let url = try await PostgresServer.newDatabase()
        let feed = Mutex<(@Sendable () -> Void)?>(nil)
        let paused = Mutex(0)
        let pause: @Sendable ([QueuedPush]) async -> Void = { _ in
            let count = paused.withLock { $0 += 1; return $0 }
            feed.withLock { $0 }?()
            if count % 2 == 1 { try? await Task.sleep(for: .milliseconds(100)) }
        }
        let store = try await PostgresServer.openStore(url, pauses: stage == .beforeLocking ? .init(beforeLocking: pause) : .init(afterCommit: pause))
        try await store.addTeam("TEAM123456", name: "Example")
        try await store.addApp("com.example.todo", team: "TEAM123456")
        for device in ["linked", "away"] { try await store.addDevice(device, secretHash: "unused", at: Date()) }
        let handedOn = Mutex<[[QueuedPush]]>([])
        var admission = PushAdmission.Configuration()
        admission.burstPerToken = 10_000
        let core = GatewayCore(store: store, admission: admission, logger: Logger(label: "test"), queued: { pushes in handedOn.withLock { $0.append(pushes) } })
        core.setConnected("linked", true)
        let linked = try await core.register(deviceID: "linked", bundleIdentifier: "com.example.todo", environment: .sandbox, at: Date()).token
        let away = try await core.register(deviceID: "away", bundleIdentifier: "com.example.todo", environment: .sandbox, at: Date()).token

        let (chunks, chunkSize) = (20, 40)
        let total = chunks * chunkSize
        let answered = Mutex(0)
        let fed = Mutex(0)
        let (allAnswered, lastAnswer) = AsyncStream.makeStream(of: Void.self)
        let pushes = try (0..<total).map { index in
            let body = Array(#"{"aps":{"alert":"\#(index)"}}"#.utf8)
            let headers = try APNs.checkHeaders(deviceToken: index % 3 == 0 ? away : linked, headers: [(name: "apns-topic", value: "com.example.todo")],
                                                payloadBytes: body.count, newID: { UUID().uuidString.lowercased() }).get()
            return ProviderPush(headers: headers, bundleIdentifier: "com.example.todo", teamID: "TEAM123456", keyID: "KEY1234567",
                                environment: .sandbox, payload: body, receivedAt: Date())
        }
        // A chunk at a time, whichever batches ask at once: the pushes are accepted in their order.
        let feedNext: @Sendable () -> Void = {
            fed.withLock { fed in
                guard fed < chunks else { return }
                defer { fed += 1 }
                for push in pushes[(fed * chunkSize)..<((fed + 1) * chunkSize)] {
                    core.accept(push) { rejection in
                        #expect(rejection == nil)
                        if answered.withLock({ $0 += 1; return $0 }) == total { lastAnswer.finish() }
                    }
                }
            }
        }
        feed.withLock { $0 = feedNext }
        feedNext()
        for await _ in allAnswered {}
        let batches = handedOn.withLock { $0 }
        #expect(batches.count >= chunks, "a batch a chunk at least")
        // The linked device's pushes, as handed on: in the order accepted, their sequences rising.
        let toLinked = batches.flatMap { $0 }.filter { $0.deviceID == "linked" }
        let expected = (0..<total).filter { $0 % 3 != 0 }.map { #"{"aps":{"alert":"\#($0)"}}"# }
        #expect(toLinked.map { String(decoding: $0.payload, as: UTF8.self) } == expected)
        #expect(zip(toLinked, toLinked.dropFirst()).allSatisfy { $0.sequence < $1.sequence })
        // As the link reads them from the store, and the held ones once the other device links.
        #expect(try await store.pushes(for: "linked", after: 0, now: Date(), limit: 1000).map { String(decoding: $0.payload, as: UTF8.self) } == expected)
        let held = try await queuedWhenLinking(store, "away").map { String(decoding: $0.payload, as: UTF8.self) }
        #expect(held == (0..<total).filter { $0 % 3 == 0 }.map { #"{"aps":{"alert":"\#($0)"}}"# })
    }
}
