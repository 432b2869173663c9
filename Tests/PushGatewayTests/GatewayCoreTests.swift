import AsyncHTTPClient
import Crypto
import Foundation
import GRDB
import Logging
import NIOCore
import NIOHTTP1
import NIOSSL
import NotificationCore
import PushGateway
import Synchronization
import Testing

/// What the core handed on for delivery.
final class DeliveredPushes: Sendable {
    private let pushes = Mutex<[QueuedPush]>([])
    func append(_ more: [QueuedPush]) { pushes.withLock { $0 += more } }
    var apnsIDs: [String] { pushes.withLock { $0.map(\.apnsID) } }
}

/// The provider API in front of the real core and its SQLite store: what a provider's push becomes.
@Suite struct GatewayCoreTests {
    struct Gateway {
        let core: GatewayCore
        let store: SQLiteGatewayStore
        let server: ProviderServer
        let client: HTTPClient
        let url: String
        let signingKey: P256.Signing.PrivateKey
        let delivered: DeliveredPushes
        /// One token for the connection, as a provider must: a new one per request is refused.
        let bearer: String

        func post(_ token: String, topic: String = "com.example.todo", headers: [(String, String)] = [], body: String = #"{"aps":{"alert":"Hi"}}"#)
            async throws -> (status: Int, body: String)
        {
            var request = HTTPClientRequest(url: url + "/3/device/\(token)")
            request.method = .POST
            request.headers.add(name: "authorization", value: "bearer \(bearer)")
            request.headers.add(name: "apns-topic", value: topic)
            for (name, value) in headers { request.headers.add(name: name, value: value) }
            request.body = .bytes(ByteBuffer(string: body))
            let response = try await client.execute(request, timeout: .seconds(10))
            return (Int(response.status.code), String(buffer: try await response.body.collect(upTo: 1 << 16)))
        }
    }

    func withGateway(environment: APNs.Environment = .sandbox, admission: PushAdmission.Configuration = .init(), busyTimeout: TimeInterval = 10,
                     _ body: (Gateway) async throws -> Void) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gateway-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteGatewayStore(path: folder.appendingPathComponent("gateway.sqlite").path, busyTimeout: busyTimeout)
        let signingKey = P256.Signing.PrivateKey()
        try await store.addTeam("TEAM123456", name: "Example")
        try await store.addApp("com.example.todo", team: "TEAM123456")
        try await store.addApp("com.example.chat", team: "TEAM123456")
        try await store.addKey(StoredKey(keyID: "KEY1234567", teamID: "TEAM123456", environment: nil, bundleIdentifiers: nil,
                                         publicKeyPEM: signingKey.publicKey.pemRepresentation))
        try await store.addDevice("device-1", secretHash: "unused", at: Date())
        let delivered = DeliveredPushes()
        let core = GatewayCore(store: store, admission: admission, logger: Logger(label: "test")) { pushes in
            delivered.append(pushes)
        }
        try await core.reloadProviders()

        let bearer = try ProviderToken.make(keyID: "KEY1234567", teamID: "TEAM123456", issuedAt: Int64(Date().timeIntervalSince1970), key: signingKey)
        try await ProviderEndpoint.with(environment: environment, credentials: { core.credentials }, refreshCredentials: { core.refreshProviders($0) },
                                        acceptor: core) { endpoint in
            try await body(Gateway(core: core, store: store, server: endpoint.server, client: endpoint.client, url: endpoint.url,
                                   signingKey: signingKey, delivered: delivered, bearer: bearer))
        }
    }

    @Test func anAcceptedPushIsStoredForItsDeviceBeforeTheAnswer() async throws {
        try await withGateway { gateway in
            let registration = try await gateway.core.register(deviceID: "device-1", bundleIdentifier: "com.example.todo", environment: .sandbox, at: Date())
            #expect(registration.token.count == 64)
            let answer = try await gateway.post(registration.token, headers: [("apns-id", "eabeae54-14a8-11e5-b60b-1697f925ec7b"), ("apns-collapse-id", "c1")])
            #expect(answer.status == 200)
            // Durable before the answer: the store holds it now.
            // The device is not linked: the push is held until it links.
            #expect(try await gateway.store.pushes(for: "device-1", after: 0, now: Date(), limit: 10).isEmpty)
            let queued = try await queuedWhenLinking(gateway.store, "device-1")
            #expect(queued.map(\.apnsID) == ["eabeae54-14a8-11e5-b60b-1697f925ec7b"])
            #expect(queued.first?.collapseID == "c1")
            #expect(queued.first.map { String(decoding: $0.payload, as: UTF8.self) } == #"{"aps":{"alert":"Hi"}}"#)
            #expect(gateway.delivered.apnsIDs == ["eabeae54-14a8-11e5-b60b-1697f925ec7b"])
        }
    }

    @Test func tokensAnswerAsAPNsDoes() async throws {
        try await withGateway { gateway in
            let todo = try await gateway.core.register(deviceID: "device-1", bundleIdentifier: "com.example.todo", environment: .sandbox, at: Date())
            let production = try await gateway.core.register(deviceID: "device-1", bundleIdentifier: "com.example.todo", environment: .production, at: Date())
            #expect(try await gateway.post(String(repeating: "ab", count: 32)) == (400, #"{"reason":"BadDeviceToken"}"#))
            #expect(try await gateway.post(production.token) == (400, #"{"reason":"BadDeviceToken"}"#))
            #expect(try await gateway.post(todo.token, topic: "com.example.chat") == (400, #"{"reason":"DeviceTokenNotForTopic"}"#))

            let removedAt = Date(timeIntervalSince1970: 1_767_225_600.5)
            try await gateway.core.unregister(deviceID: "device-1", bundleIdentifier: "com.example.todo", at: removedAt)
            #expect(try await gateway.post(todo.token) == (410, #"{"reason":"Unregistered","timestamp":1767225600500}"#))
        }
    }

    @Test func aPushForNowOnlyIsKeptOnlyForALinkedDevice() async throws {
        try await withGateway { gateway in
            let token = try await gateway.core.register(deviceID: "device-1", bundleIdentifier: "com.example.todo", environment: .sandbox, at: Date()).token
            // Accepted as APNs accepts it, and not kept: the device is not linked.
            #expect(try await gateway.post(token, headers: [("apns-expiration", "0")]).status == 200)
            #expect(try await gateway.store.storedPushCounts() == (0, 0))
            gateway.core.setConnected("device-1", true)
            #expect(try await gateway.post(token, headers: [("apns-expiration", "0"), ("apns-id", "eabeae54-14a8-11e5-b60b-1697f925ec7b")]).status == 200)
            #expect(try await gateway.store.pushes(for: "device-1", after: 0, now: Date(), limit: 10).map(\.apnsID) == ["eabeae54-14a8-11e5-b60b-1697f925ec7b"])
        }
    }

    /// `unotify gateway devices disable|enable|remove` beside a running gateway, read with the keys.
    @Test func aBlockedDeviceIsForbiddenAndARemovedOnesTokensHaveExpired() async throws {
        try await withGateway { gateway in
            let token = try await gateway.core.register(deviceID: "device-1", bundleIdentifier: "com.example.todo", environment: .sandbox, at: Date()).token
            try await gateway.store.setDeviceDisabled("device-1", true)
            try await gateway.core.reloadProviders()
            #expect(try await gateway.post(token) == (403, #"{"reason":"Forbidden"}"#))
            try await gateway.store.setDeviceDisabled("device-1", false)
            try await gateway.core.reloadProviders()
            #expect(try await gateway.post(token).status == 200)

            try await gateway.store.removeDevice("device-1", at: Date(timeIntervalSince1970: 1_767_225_600.25))
            try await gateway.core.reloadProviders()
            #expect(try await gateway.post(token) == (410, #"{"reason":"ExpiredToken","timestamp":1767225600250}"#))
        }
    }

    /// `unotify gateway apps storage com.example.todo latest`: an offline device gets only the newest push.
    @Test func anAppKeepingOnlyItsLatestPushHasOneQueuedPerDevice() async throws {
        try await withGateway { gateway in
            let todo = try await gateway.core.register(deviceID: "device-1", bundleIdentifier: "com.example.todo", environment: .sandbox, at: Date()).token
            let chat = try await gateway.core.register(deviceID: "device-1", bundleIdentifier: "com.example.chat", environment: .sandbox, at: Date()).token
            try await gateway.store.setKeepsLatestOnly("com.example.todo", true)
            try await gateway.core.reloadProviders()
            for index in 1...3 {
                #expect(try await gateway.post(todo, headers: [("apns-id", "00000000-0000-4000-8000-00000000000\(index)")]).status == 200)
                #expect(try await gateway.post(chat, topic: "com.example.chat", headers: [("apns-id", "00000000-0000-4000-9000-00000000000\(index)")]).status == 200)
            }
            let queued = try await queuedWhenLinking(gateway.store, "device-1")
            #expect(queued.filter { $0.bundleIdentifier == "com.example.todo" }.map(\.apnsID) == ["00000000-0000-4000-8000-000000000003"])
            #expect(queued.filter { $0.bundleIdentifier == "com.example.chat" }.count == 3)
        }
    }

    @Test func aTokenReadFromTheStoreAfterARestartIsKnown() async throws {
        try await withGateway { gateway in
            let registration = try await gateway.store.register(Registration(token: String(repeating: "cd", count: 32), deviceID: "device-1",
                                                                             bundleIdentifier: "com.example.todo", environment: .sandbox, registeredAt: Date()))
            #expect(try await gateway.post(registration.token).status == 200)
        }
    }

    /// Tokens of `com.example.todo` registered in the store alone (as before a restart: the core has
    /// not read them), one per new device `<devices>-<n>`.
    func tokensNotRead(_ count: Int, devices: String, in store: SQLiteGatewayStore) async throws -> [String] {
        var tokens: [String] = []
        for index in 0..<count {
            try await store.addDevice("\(devices)-\(index)", secretHash: "unused", at: Date())
            tokens.append(try await store.register(Registration(token: randomHex(bytes: 32), deviceID: "\(devices)-\(index)", bundleIdentifier: "com.example.todo",
                                                                environment: .sandbox, registeredAt: Date())).token)
        }
        return tokens
    }

    /// After a start, a busy provider's first pushes are each to a token the core has not read: they
    /// wait for their tokens together, and every one is answered as its token says, once.
    @Test func manyTokensNotReadYetAreReadTogetherAndEachPushAnswered() async throws {
        try await withGateway { gateway in
            let tokens = try await tokensNotRead(30, devices: "cold", in: gateway.store)
            let unknown = (0..<5).map { String(format: "%064x", 0xBAD00 + $0) }
            let answers = try await withThrowingTaskGroup(of: (String, Int, String).self) { group in
                // Five invalid tokens weigh half of what closes a connection (APNs closes it sooner for them).
                for round in 0..<5 {
                    for token in tokens + (round == 0 ? unknown : []) {
                        group.addTask {
                            let answer = try await gateway.post(token, body: #"{"aps":{"alert":"\#(round)"}}"#)
                            return (token, answer.status, answer.body)
                        }
                    }
                }
                return try await group.reduce(into: [(String, Int, String)]()) { $0.append($1) }
            }
            #expect(answers.count == 155)
            #expect(answers.filter { tokens.contains($0.0) }.allSatisfy { $0.1 == 200 })
            #expect(answers.filter { unknown.contains($0.0) }.allSatisfy { $0.1 == 400 && $0.2 == #"{"reason":"BadDeviceToken"}"# })
            for index in 0..<30 { #expect(try await queuedWhenLinking(gateway.store, "cold-\(index)").count == 5) }
        }
    }

    /// Pushes to one token keep their order while its token is read, however the reads and the
    /// pushes interleave: here tokens are forgotten again and again (as when another node changes
    /// them) while pushes keep coming, each handed to the core in turn.
    @Test(.timeLimit(.minutes(1))) func pushesToATokenKeepTheirOrderWhileItIsRead() async throws {
        try await withGateway { gateway in
            let tokens = try await tokensNotRead(8, devices: "order", in: gateway.store)
            let rounds = 60, total = rounds * tokens.count
            let answered = Mutex(0)
            let (allAnswered, lastAnswer) = AsyncStream.makeStream(of: Void.self)
            for round in 0..<rounds {
                for token in tokens {
                    let body = Array(#"{"aps":{"alert":"\#(round)"}}"#.utf8)
                    let headers = try APNs.checkHeaders(deviceToken: token, headers: [(name: "apns-topic", value: "com.example.todo")], payloadBytes: body.count,
                                                        newID: { UUID().uuidString.lowercased() }).get()
                    let push = ProviderPush(headers: headers, bundleIdentifier: "com.example.todo", teamID: "TEAM123456", keyID: "KEY1234567",
                                            environment: .sandbox, payload: body, receivedAt: Date())
                    gateway.core.accept(push) { rejection in
                        #expect(rejection == nil)
                        if answered.withLock({ $0 += 1; return $0 }) == total { lastAnswer.finish() }
                    }
                }
                if round % 3 == 0 { gateway.core.forgetTokens(nil) }
                await Task.yield()
            }
            for await _ in allAnswered {}
            #expect(answered.withLock { $0 } == total)
            for index in 0..<tokens.count {
                let alerts = try await queuedWhenLinking(gateway.store, "order-\(index)").map { String(decoding: $0.payload, as: UTF8.self) }
                #expect(alerts == (0..<rounds).map { #"{"aps":{"alert":"\#($0)"}}"# })
            }
        }
    }

    /// `unotify gateway keys create` beside a running gateway: the new key works at the first request.
    @Test func aKeyCreatedAMomentAgoIsReadWhenItsFirstTokenArrives() async throws {
        try await withGateway { gateway in
            let registration = try await gateway.core.register(deviceID: "device-1", bundleIdentifier: "com.example.todo", environment: .sandbox, at: Date())
            let newKey = P256.Signing.PrivateKey()
            try await gateway.store.addKey(StoredKey(keyID: "NEWKEY0001", teamID: "TEAM123456", environment: nil, bundleIdentifiers: nil,
                                                     publicKeyPEM: newKey.publicKey.pemRepresentation))
            var request = HTTPClientRequest(url: gateway.url + "/3/device/\(registration.token)")
            request.method = .POST
            let token = try ProviderToken.make(keyID: "NEWKEY0001", teamID: "TEAM123456", issuedAt: Int64(Date().timeIntervalSince1970), key: newKey)
            request.headers.add(name: "authorization", value: "bearer \(token)")
            request.headers.add(name: "apns-topic", value: "com.example.todo")
            request.body = .bytes(ByteBuffer(string: #"{"aps":{"alert":"new key"}}"#))
            #expect(try await gateway.client.execute(request, timeout: .seconds(10)).status.code == 200)
        }
    }

    @Test func aFloodToOneTokenGets429() async throws {
        var admission = PushAdmission.Configuration()
        admission.burstPerToken = 3
        admission.sustainedPerTokenPerSecond = 0.001
        try await withGateway(admission: admission) { gateway in
            let registration = try await gateway.core.register(deviceID: "device-1", bundleIdentifier: "com.example.todo", environment: .sandbox, at: Date())
            var statuses: [Int] = []
            for _ in 0..<5 { statuses.append(try await gateway.post(registration.token).status) }
            #expect(statuses == [200, 200, 200, 429, 429])
            #expect(try await gateway.post(registration.token).body == #"{"reason":"TooManyRequests"}"#)
        }
    }

    @Test func concurrentPushesShareCommitsAndAllArrive() async throws {
        try await withGateway { gateway in
            var tokens: [String] = []
            for index in 0..<20 {
                try await gateway.store.addDevice("bulk-\(index)", secretHash: "unused", at: Date())
                tokens.append(try await gateway.core.register(deviceID: "bulk-\(index)", bundleIdentifier: "com.example.todo", environment: .sandbox, at: Date()).token)
            }
            _ = try await gateway.post(tokens[0])
            let allTokens = tokens
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<200 { group.addTask { try await gateway.post(allTokens[index % 20]).status } }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 200 }.count == 200)
            var stored = 0
            for index in 0..<20 { stored += try await queuedWhenLinking(gateway.store, "bulk-\(index)").count }
            #expect(stored == 201)
        }
    }

    /// Another process holding the database's write lock (the disk stalls, for the gateway) until released.
    final class WriteLock: Sendable {
        private let released = DispatchSemaphore(value: 0)
        private let held = DispatchSemaphore(value: 0)
        private let done = DispatchSemaphore(value: 0)

        init(path: String) throws {
            let queue = try DatabaseQueue(path: path)
            DispatchQueue.global().async { [released, held, done] in
                try? queue.inTransaction(.immediate) { _ in
                    held.signal()
                    released.wait()
                    return .rollback
                }
                done.signal()
            }
            held.wait()
        }

        func release() {
            released.signal()
            done.wait()
        }
    }

    @Test func aPushThatCannotBeStoredIsInternalServerErrorAndTheNextOneIsTaken() async throws {
        try await withGateway(busyTimeout: 0.2) { gateway in
            let token = try await gateway.core.register(deviceID: "device-1", bundleIdentifier: "com.example.todo", environment: .sandbox, at: Date()).token
            let lock = try WriteLock(path: gateway.store.path)
            let refused = try await gateway.post(token)
            lock.release()
            #expect(refused.status == 500)
            #expect(refused.body == #"{"reason":"InternalServerError"}"#)
            #expect(try await gateway.post(token).status == 200)
            #expect(gateway.delivered.apnsIDs.count == 1)
        }
    }

    @Test func pushesBeyondWhatWaitsForTheDiskAreServiceUnavailable() async throws {
        var admission = PushAdmission.Configuration()
        admission.maximumUnwrittenPushes = 2
        try await withGateway(admission: admission) { gateway in
            let token = try await gateway.core.register(deviceID: "device-1", bundleIdentifier: "com.example.todo", environment: .sandbox, at: Date()).token
            let lock = try WriteLock(path: gateway.store.path)
            // Two pushes wait for the stalled disk; the third is refused at once.
            async let first = gateway.post(token)
            async let second = gateway.post(token)
            var third: (status: Int, body: String) = (0, "")
            // The two must have reached the core before the third is sent: watch the core's count.
            let deadline = ContinuousClock.now + .seconds(10)
            while gateway.core.unwrittenPushes < 2 {
                try #require(ContinuousClock.now < deadline, "the first two pushes did not reach the core")
                await Task.yield()
            }
            third = try await gateway.post(token)
            lock.release()
            #expect(third.status == 503)
            #expect(third.body == #"{"reason":"ServiceUnavailable"}"#)
            #expect(try await first.status == 200)
            #expect(try await second.status == 200)
            #expect(try await gateway.post(token).status == 200)
        }
    }
}

/// What a device that links now receives: the pushes held for it while it was not linked, promoted,
/// in the order it gets them.
func queuedWhenLinking(_ store: any GatewayStore, _ deviceID: String) async throws -> [QueuedPush] {
    while try await store.promoteHeld(deviceID: deviceID, now: Date(), limit: 100) > 0 {}
    return try await store.pushes(for: deviceID, after: 0, now: Date(), limit: 1000)
}
