import AsyncHTTPClient
import Crypto
import Foundation
import HummingbirdWSClient
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NotificationCore
import PushGateway
import ServiceLifecycle
import Synchronization
import Testing
import TestSupport

/// The whole gateway as `unotify gateway` runs it (provider endpoints, device links, on SQLite and
/// TLS), with a device linked over a real WebSocket and a provider sending over real HTTP/2.
@Suite(.timeLimit(.minutes(2))) struct DeviceLinkTests {

    struct Running {
        let gateway: PushGatewayServices
        let sandboxURL: String
        let linkURL: String
        let http: HTTPClient
        var tls: TLSConfiguration
        let bearer: String
        let credential: String
        let sandboxPort: Int
        let linkPort: Int
        let authorityPath: String
        let signingKey: P256.Signing.PrivateKey

        func post(_ token: String, _ payload: String, headers: [(String, String)] = []) async throws -> Int {
            var request = HTTPClientRequest(url: sandboxURL + "/3/device/\(token)")
            request.method = .POST
            request.headers.add(name: "authorization", value: "bearer \(bearer)")
            request.headers.add(name: "apns-topic", value: "com.example.todo")
            for (name, value) in headers { request.headers.add(name: name, value: value) }
            request.body = .bytes(ByteBuffer(string: payload))
            return Int(try await http.execute(request, timeout: .seconds(10)).status.code)
        }

        /// Links as the device, runs `body` on the link, and closes it; returns how the gateway closed it.
        @discardableResult
        func link(credential: String? = nil, _ body: @escaping @Sendable (inout DeviceSide) async throws -> Void) async throws -> WebSocketCloseFrame? {
            var configuration = WebSocketClientConfiguration()
            configuration.additionalHeaders[.authorization] = "Bearer \(credential ?? self.credential)"
            return try await WebSocketClient.connect(url: linkURL, configuration: configuration, tlsConfiguration: tls, logger: Logger(label: "device")) { inbound, outbound, _ in
                var side = DeviceSide(iterator: inbound.messages(maxSize: 1 << 16).makeAsyncIterator(), outbound: outbound)
                try await body(&side)
            }
        }
    }

    /// The device's end of a link.
    struct DeviceSide {
        var iterator: WebSocketInboundMessageStream.AsyncIterator
        let outbound: WebSocketOutboundWriter

        mutating func next() async throws -> DeviceLink.GatewayMessage? {
            guard case .text(let text)? = try await iterator.next() else { return nil }
            return try JSONDecoder().decode(DeviceLink.GatewayMessage.self, from: Data(text.utf8))
        }

        func send(_ message: DeviceLink.DeviceMessage) async throws {
            try await outbound.write(.text(String(decoding: try JSONEncoder().encode(message), as: UTF8.self)))
        }

        mutating func nextPush() async throws -> DeviceLink.Push {
            while let message = try await next() {
                if case .push(let push) = message { return push }
            }
            throw CancellationError()
        }

        mutating func register(_ bundleIdentifier: String) async throws -> String {
            try await send(.register(requestID: "r-\(bundleIdentifier)", bundleIdentifier: bundleIdentifier, environment: .sandbox))
            while let message = try await next() {
                if case .registered(_, let token, _, _) = message { return token }
            }
            throw CancellationError()
        }
    }

    func withGateway(window: Int = 64, triesPerPush: Int = 10, openingTimeout: TimeAmount = .seconds(10),
                     _ body: (Running) async throws -> Void) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gateway-link-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        var configuration = GatewayConfiguration(dataDirectory: folder)
        configuration.sandboxPort = 0
        configuration.productionPort = 0
        configuration.deviceLinkPort = 0
        configuration.deviceLinkWindow = window
        configuration.deviceLinkTriesPerPush = triesPerPush
        configuration.openingTimeout = openingTimeout
        let ports = ListeningPorts()
        let gateway = try await PushGatewayServices(configuration: configuration, logger: Logger(label: "gateway"),
                                                    onListening: { environment, port in ports.set(environment.rawValue, port) },
                                                    onDeviceLinkListening: { port in ports.set("link", port) })
        let signingKey = P256.Signing.PrivateKey()
        try await gateway.store.addTeam("TEAM123456", name: "Example")
        try await gateway.store.addApp("com.example.todo", team: "TEAM123456")
        try await gateway.store.addKey(StoredKey(keyID: "KEY1234567", teamID: "TEAM123456", environment: nil, bundleIdentifiers: nil,
                                                 publicKeyPEM: signingKey.publicKey.pemRepresentation))
        try await gateway.core.reloadProviders()
        let secret = "s3cr3t-of-the-device"
        try await gateway.store.addDevice("device-1", secretHash: DeviceLinks.hash(secret), at: Date())

        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(configuration.authorityCertificatePath))
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: HTTPClient.Configuration(tlsConfiguration: tls))
        let group = ServiceGroup(services: gateway.services, gracefulShutdownSignals: [], logger: Logger(label: "gateway"))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask {
                defer { ports.end() }
                try await group.run()
            }
            let bound = try await ports.waitFor(["sandbox", "link"])
            let running = Running(
                gateway: gateway, sandboxURL: "https://localhost:\(bound["sandbox"]!)", linkURL: "wss://localhost:\(bound["link"]!)\(DeviceLink.path)",
                http: http, tls: tls,
                bearer: try ProviderToken.make(keyID: "KEY1234567", teamID: "TEAM123456", issuedAt: Int64(Date().timeIntervalSince1970), key: signingKey),
                credential: "device-1.\(secret)", sandboxPort: bound["sandbox"]!, linkPort: bound["link"]!,
                authorityPath: configuration.authorityCertificatePath,
                signingKey: signingKey
            )
            defer { }
            do {
                try await body(running)
            } catch {
                try? await http.shutdown()
                await group.triggerGracefulShutdown()
                throw error
            }
            try await http.shutdown()
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }

    @Test func aPushReachesTheLinkedDeviceAndIsKeptUntilAcknowledged() async throws {
        try await withGateway { running in
            let token = Mutex<String?>(nil)
            let firstSequence = Mutex<Int64?>(nil)
            try await running.link { side in
                guard case .welcome(let deviceID, let window)? = try await side.next() else { throw CancellationError() }
                #expect(deviceID == "device-1")
                #expect(window == 64)
                let issued = try await side.register("com.example.todo")
                #expect(issued.count == 64)
                // Registering again, as every launch does, returns the same token.
                #expect(try await side.register("com.example.todo") == issued)
                token.withLock { $0 = issued }
                #expect(try await running.post(issued, #"{"aps":{"alert":"Hello"}}"#, headers: [("apns-id", "eabeae54-14a8-11e5-b60b-1697f925ec7b")]) == 200)
                let push = try await side.nextPush()
                #expect(push.apnsID == "eabeae54-14a8-11e5-b60b-1697f925ec7b")
                #expect(push.payload == #"{"aps":{"alert":"Hello"}}"#)
                #expect(push.bundleIdentifier == "com.example.todo")
                #expect(push.environment == .sandbox)
                #expect(push.token == issued)
                firstSequence.withLock { $0 = push.sequence }
                // Not acknowledged: the link drops here.
            }
            // Sent while the device is away: stored.
            let issued = try #require(token.withLock { $0 })
            #expect(try await running.post(issued, #"{"aps":{"alert":"While away"}}"#) == 200)
            try await running.link { side in
                let first = try await side.nextPush()
                #expect(first.sequence == firstSequence.withLock { $0 })
                let second = try await side.nextPush()
                #expect(second.payload == #"{"aps":{"alert":"While away"}}"#)
                try await side.send(.ack(through: second.sequence))
                // Acknowledged: answered by sending whatever else there is, here nothing; a later push arrives alone.
                #expect(try await running.post(issued, #"{"aps":{"alert":"Third"}}"#) == 200)
                let third = try await side.nextPush()
                #expect(third.payload == #"{"aps":{"alert":"Third"}}"#)
                try await side.send(.ack(through: third.sequence))
                // The acknowledgement is stored before anything else is read on this link.
                _ = try await side.register("com.example.todo")
            }
            #expect(try await running.gateway.store.pushes(for: "device-1", after: 0, now: Date(), limit: 10).isEmpty)
        }
    }

    /// A push the device fails with on every link (its daemon closes on an error, or dies) is dropped
    /// after its tries, with why in the delivery log; the next push flows. A link ended well (a normal
    /// close) is no failure.
    @Test func aPushTheDeviceKeepsFailingWithIsDroppedAfterItsTriesAndTheNextOneFlows() async throws {
        try await withGateway(triesPerPush: 3) { running in
            let registered = try await running.gateway.core.register(deviceID: "device-1", bundleIdentifier: "com.example.todo", environment: .sandbox, at: Date())
            let stuckID = "eabeae54-14a8-11e5-b60b-1697f925ec7b"
            #expect(try await running.post(registered.token, #"{"aps":{"alert":"stuck"}}"#, headers: [("apns-id", stuckID)]) == 200)
            #expect(try await running.post(registered.token, #"{"aps":{"alert":"next"}}"#) == 200)
            @Sendable func stages() async -> [String] {
                ((try? await running.gateway.store.deliveryRecords(matching: stuckID)) ?? []).flatMap { $0.stages.map { "\($0.stage.rawValue): \($0.detail ?? "")" } }
            }
            // Closed well, twice: not a failure of the push.
            for _ in 0..<2 {
                try await running.link { side in
                    #expect(try await side.nextPush().payload == #"{"aps":{"alert":"stuck"}}"#)
                    try await side.outbound.close(.normalClosure, reason: nil)
                }
            }
            // Failed with, three times: dropped.
            for attempt in 1...3 {
                try await running.link { side in
                    #expect(try await side.nextPush().payload == #"{"aps":{"alert":"stuck"}}"#, "link \(attempt)")
                    try await side.outbound.close(.unexpectedServerError, reason: "disk full")
                }
            }
            try await waitFor("the stuck push to be dropped", within: 10) { await stages().contains { $0.hasPrefix("dropped") } }
            #expect(await stages().last == "dropped: the device did not take it in 3 tries: the device closed its link with 1011: disk full")
            try await running.link { side in
                let push = try await side.nextPush()
                #expect(push.payload == #"{"aps":{"alert":"next"}}"#)
                try await side.send(.ack(through: push.sequence))
                _ = try await side.register("com.example.todo")
            }
            #expect(try await running.gateway.store.pushes(for: "device-1", after: 0, now: Date(), limit: 10).isEmpty)
        }
    }

    /// A device that took a push and failed with the next acknowledges the first, then closes: the
    /// failure is the second's, however soon after the acknowledgement the close comes.
    @Test func aFailureAfterAnAcknowledgementCountsAgainstThePushAfterIt() async throws {
        try await withGateway(triesPerPush: 2) { running in
            let registered = try await running.gateway.core.register(deviceID: "device-1", bundleIdentifier: "com.example.todo", environment: .sandbox, at: Date())
            let takenID = "0b7e3c1a-7d0e-4f57-9a43-1f6d2b8c9e01"
            let failingID = "5c2d9e7f-3a41-4b8e-8f6a-2e9c1d7b4a02"
            #expect(try await running.post(registered.token, #"{"aps":{"alert":"taken"}}"#, headers: [("apns-id", takenID)]) == 200)
            #expect(try await running.post(registered.token, #"{"aps":{"alert":"failing"}}"#, headers: [("apns-id", failingID)]) == 200)
            @Sendable func stages(_ id: String) async -> [String] {
                ((try? await running.gateway.store.deliveryRecords(matching: id)) ?? []).flatMap { $0.stages.map(\.stage.rawValue) }
            }
            for _ in 0..<2 {
                try await running.link { side in
                    let taken = try await side.nextPush()
                    if taken.payload == #"{"aps":{"alert":"taken"}}"# {
                        #expect(try await side.nextPush().payload == #"{"aps":{"alert":"failing"}}"#)
                        try await side.send(.ack(through: taken.sequence))
                    } else {
                        #expect(taken.payload == #"{"aps":{"alert":"failing"}}"#)
                    }
                    try await side.outbound.close(.unexpectedServerError, reason: "disk full")
                }
            }
            try await waitFor("the failing push to be dropped", within: 10) { await stages(failingID).contains("dropped") }
            #expect(!(await stages(takenID).contains("dropped")))
            #expect(try await running.gateway.store.pushes(for: "device-1", after: 0, now: Date(), limit: 10).isEmpty)
        }
    }

    @Test func noMoreThanTheWindowIsInFlight() async throws {
        try await withGateway(window: 2) { running in
            let registered = try await running.gateway.core.register(deviceID: "device-1", bundleIdentifier: "com.example.todo", environment: .sandbox, at: Date())
            // Five pushes wait for the device before it links.
            for index in 0..<5 { #expect(try await running.post(registered.token, #"{"aps":{"alert":"\#(index)"}}"#) == 200) }
            try await running.link { side in
                // The link's first fill sends what the window allows, in one go: two.
                let first = try await side.nextPush()
                let second = try await side.nextPush()
                #expect([first.payload, second.payload] == [#"{"aps":{"alert":"0"}}"#, #"{"aps":{"alert":"1"}}"#])
                // Two requests answered after that (each a durable write) show what else came:
                // nothing until an acknowledgement (a fill beyond the window would have sent the rest
                // with the first two, ahead of these answers).
                try await side.send(.register(requestID: "a", bundleIdentifier: "com.example.todo", environment: .sandbox))
                try await side.send(.register(requestID: "b", bundleIdentifier: "com.example.todo", environment: .sandbox))
                var pushes: [DeviceLink.Push] = [first, second]
                var answers = 0
                while answers < 2, let message = try await side.next() {
                    switch message {
                    case .push(let push): pushes.append(push)
                    case .registered: answers += 1
                    default: break
                    }
                }
                #expect(pushes.count == 2)
                // One acknowledged: one more comes.
                try await side.send(.ack(through: first.sequence))
                let third = try await side.nextPush()
                #expect(third.payload == #"{"aps":{"alert":"2"}}"#)
                // Both acknowledged: the last two.
                try await side.send(.ack(through: third.sequence))
                let fourth = try await side.nextPush()
                let fifth = try await side.nextPush()
                #expect([fourth.payload, fifth.payload] == [#"{"aps":{"alert":"3"}}"#, #"{"aps":{"alert":"4"}}"#])
            }
        }
    }

    /// A link that has sent everything stored is handed each new push as it is stored, without
    /// reading it back; pushes and broadcasts stored at the same time still reach the device once
    /// each, in the order of their sequences.
    @Test func pushesAndBroadcastsStoredTogetherReachTheDeviceOnceEachInOrder() async throws {
        try await withGateway { running in
            let (core, links) = (running.gateway.core, running.gateway.links)
            let registered = try await core.register(deviceID: "device-1", bundleIdentifier: "com.example.todo", environment: .sandbox, at: Date())
            let channel = try await core.createChannel(bundleIdentifier: "com.example.todo", environment: .sandbox,
                                                       settings: APNs.ChannelSettings(storesMostRecent: false, pushType: .alert), at: Date())
            try await running.gateway.store.setSubscribed(true, deviceID: "device-1", bundleIdentifier: "com.example.todo", environment: .sandbox,
                                                          channelID: channel.channelID, at: Date())
            let headers = try APNs.checkBroadcastHeaders(headers: [("apns-push-type", "alert"), ("apns-expiration", "0"), ("apns-priority", "10")],
                                                         payloadBytes: 20, channel: channel.settings, newID: { UUID().uuidString }).get()
            try await running.link { side in
                // One at a time, each acknowledged (and the acknowledgement handled, as the answer to
                // a registration after it shows) before the next is sent: the link is caught up each time.
                var handedOverBefore = links.pushesHandedOver
                for index in 0..<5 {
                    if index == 1 { handedOverBefore = links.pushesHandedOver }
                    #expect(try await running.post(registered.token, #"{"aps":{"alert":"one \#(index)"}}"#) == 200)
                    let push = try await side.nextPush()
                    #expect(push.payload == #"{"aps":{"alert":"one \#(index)"}}"#)
                    try await side.send(.ack(through: push.sequence))
                    _ = try await side.register("com.example.todo")
                }
                // The first may have come while the link was reading what was stored as it opened.
                #expect(links.pushesHandedOver - handedOverBefore == 4)

                let (pushes, broadcasts) = (30, 10)
                async let sent: Void = withThrowingTaskGroup(of: Void.self) { group in
                    for index in 0..<pushes {
                        group.addTask {
                            let status = try await running.post(registered.token, #"{"aps":{"alert":"p\#(index)"}}"#)
                            #expect(status == 200)
                        }
                    }
                    for index in 0..<broadcasts {
                        group.addTask {
                            let reached = try await core.broadcast(to: channel, headers: headers, payload: Array(#"{"aps":{"alert":"b\#(index)"}}"#.utf8), at: Date())
                            #expect(reached == 1)
                        }
                    }
                    try await group.waitForAll()
                }
                var received: [DeviceLink.Push] = []
                while received.count < pushes + broadcasts {
                    let push = try await side.nextPush()
                    received.append(push)
                    try await side.send(.ack(through: push.sequence))
                }
                try await sent
                let sequences = received.map(\.sequence)
                #expect(sequences == sequences.sorted() && Set(sequences).count == sequences.count)
                let expected = Set((0..<pushes).map { #"{"aps":{"alert":"p\#($0)"}}"# } + (0..<broadcasts).map { #"{"aps":{"alert":"b\#($0)"}}"# })
                #expect(Set(received.map(\.payload)) == expected)
                // Nothing more comes: a registration's answer is the next message.
                try await side.send(.register(requestID: "last", bundleIdentifier: "com.example.todo", environment: .sandbox))
                guard case .registered? = try await side.next() else {
                    Issue.record("a push came twice")
                    return
                }
            }
            #expect(try await running.gateway.store.pushes(for: "device-1", after: 0, now: Date(), limit: 100).isEmpty)
        }
    }

    @Test func pushesStoredWhileTheDeviceIsAwayComeHighestPriorityFirst() async throws {
        try await withGateway(window: 2) { running in
            let registered = try await running.gateway.core.register(deviceID: "device-1", bundleIdentifier: "com.example.todo", environment: .sandbox, at: Date())
            for (name, priority) in [("low-1", "5"), ("high-1", "10"), ("low-2", "5"), ("high-2", "10"), ("low-3", "1")] {
                #expect(try await running.post(registered.token, #"{"aps":{"alert":"\#(name)"}}"#, headers: [("apns-priority", priority)]) == 200)
            }
            try await running.link { side in
                var received: [DeviceLink.Push] = []
                while received.count < 5 {
                    let push = try await side.nextPush()
                    received.append(push)
                    try await side.send(.ack(through: push.sequence))
                }
                // Priority 10 first, then 5, then 1; among equals, in the order they were sent. The
                // sequences still grow, as the link's acknowledgements need.
                #expect(received.map(\.payload) == ["high-1", "high-2", "low-1", "low-2", "low-3"].map { #"{"aps":{"alert":"\#($0)"}}"# })
                #expect(received.map(\.priority) == [10, 10, 5, 5, 1])
                #expect(zip(received, received.dropFirst()).allSatisfy { $0.sequence < $1.sequence })
                // Once the device is linked, a push takes its place at once: a low one sent now comes
                // next, whatever its priority.
                #expect(try await running.post(registered.token, #"{"aps":{"alert":"live"}}"#, headers: [("apns-priority", "5")]) == 200)
                #expect(try await side.nextPush().payload == #"{"aps":{"alert":"live"}}"#)
            }
        }
    }

    @Test func anUnregisteredAppsTokenAnswers410() async throws {
        try await withGateway { running in
            let token = Mutex<String?>(nil)
            try await running.link { side in
                token.withLock { $0 = nil }
                let issued = try await side.register("com.example.todo")
                token.withLock { $0 = issued }
                try await side.send(.unregister(requestID: "u1", bundleIdentifier: "com.example.todo"))
                while let message = try await side.next() {
                    if case .unregistered(let requestID, _) = message, requestID == "u1" { break }
                }
            }
            let issued = try #require(token.withLock { $0 })
            #expect(try await running.post(issued, #"{"aps":{"alert":"Gone?"}}"#) == 410)
        }
    }

    /// A device that links tells the gateway every app on it: an app removed while it was away has its
    /// tokens ended then (`410 Unregistered` from that time), and the others keep theirs.
    @Test func anAppRemovedWhileTheDeviceWasAwayHasItsTokensEndedWhenItLinksAgain() async throws {
        try await withGateway { running in
            let tokens = Mutex<[String: String]>([:])
            try await running.link { side in
                for app in ["com.example.todo", "com.example.chat"] {
                    let token = try await side.register(app)
                    tokens.withLock { $0[app] = token }
                }
            }
            let todo = try #require(tokens.withLock { $0["com.example.todo"] })
            let chat = try #require(tokens.withLock { $0["com.example.chat"] })
            // Away, the device is still the app's: a push is accepted and kept for it.
            #expect(try await running.post(todo, #"{"aps":{"alert":"While away"}}"#) == 200)

            let linkedAgain = Date()
            try await running.link { side in
                try await side.send(.apps(requestID: "apps-1", bundleIdentifiers: ["com.example.chat"]))
                while let message = try await side.next() {
                    if case .appsNoted(let requestID) = message {
                        #expect(requestID == "apps-1")
                        break
                    }
                }
            }
            #expect(try await running.post(todo, #"{"aps":{"alert":"After"}}"#) == 410)
            let ended = try #require(try await running.gateway.store.registration(token: todo)?.unregisteredAt)
            #expect(ended >= linkedAgain.addingTimeInterval(-0.001))
            #expect(try await running.gateway.store.registration(token: chat)?.unregisteredAt == nil)
            #expect(try await running.gateway.store.registeredApps(of: "device-1") == ["com.example.chat"])
        }
    }

    /// aioapns, an APNs client library from PyPI, sends through TLS (offering no ALPN) to the gateway,
    /// unchanged but for the host, port and trusted CA; the device receives what it sent.
    @Test func anAPNsClientLibraryFromPyPIPushesToTheDevice() async throws {
        try await withGateway { running in
            let keyFile = FileManager.default.temporaryDirectory.appendingPathComponent("AuthKey_\(UUID().uuidString).p8")
            try Data(running.signingKey.pemRepresentation.utf8).write(to: keyFile)
            defer { try? FileManager.default.removeItem(at: keyFile) }
            // Waited for without blocking a thread: the gateway answering it runs on the same threads.
            @Sendable func aioapns(_ pushes: [(token: String, payload: String)]) async throws -> [[String: String]] {
                let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Clients/aioapns_send.py")
                let run = try await Program.run("/usr/bin/env", ["python3", script.path, "--host", "localhost", "--port", String(running.sandboxPort), "--ca", running.authorityPath,
                                                           "--key-file", keyFile.path, "--key-id", "KEY1234567", "--team", "TEAM123456", "--topic", "com.example.todo"]
                    + pushes.flatMap { ["--push", "\($0.token)=\($0.payload)"] })
                #expect(run.succeeded, "\(run.errors)")
                return run.output.split(separator: "\n").compactMap { line in
                    (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?.compactMapValues { value in
                        value is NSNull ? nil : "\(value)"
                    }
                }
            }

            let token = Mutex<String?>(nil)
            try await running.link { side in
                let issued = try await side.register("com.example.todo")
                token.withLock { $0 = issued }
                let results = try await aioapns([
                    (issued, #"{"aps":{"alert":{"title":"From aioapns","body":"One"}}}"#),
                    (issued, #"{"aps":{"alert":"Two","badge":2},"custom":"value"}"#),
                    (String(repeating: "ab", count: 32), #"{"aps":{"alert":"Nobody"}}"#),
                ])
                #expect(results.map { $0["status"] } == ["200", "200", "400"])
                #expect(results.last?["reason"] == "BadDeviceToken")
                let first = try await side.nextPush()
                let second = try await side.nextPush()
                #expect(first.payload.contains("From aioapns"))
                #expect(first.apnsID == results[0]["id"])
                #expect(second.payload.contains(#""custom":"value""#) || second.payload.contains(#""custom": "value""#))
                try await side.send(.ack(through: second.sequence))
                try await side.send(.unregister(requestID: "u", bundleIdentifier: "com.example.todo"))
                while let message = try await side.next() {
                    if case .unregistered = message { break }
                }
            }
            let gone = try await aioapns([(try #require(token.withLock { $0 }), #"{"aps":{"alert":"After"}}"#)])
            #expect(gone.first?["status"] == "410")
            #expect(gone.first?["reason"] == "Unregistered")
            #expect(gone.first?["timestamp"].flatMap { Int($0) }.map { $0 > 1_700_000_000_000 } == true)
        }
    }

    /// A connection that connects and sends nothing is closed once the opening timeout passes, on the
    /// device links' port (no TLS handshake, no upgrade) and on the provider API's (no TLS
    /// handshake); a link and a provider's connection opened before it go on working.
    @Test func connectionsThatNeverOpenAreClosed() async throws {
        // Long enough for the link itself to open on a loaded machine (at 0.5 s, full runs stalled: the
        // link was closed while it opened); the silent connections are waited for well past it.
        try await withGateway(openingTimeout: .seconds(3)) { running in
            let registered = try await running.gateway.core.register(deviceID: "device-1", bundleIdentifier: "com.example.todo", environment: .sandbox, at: Date())
            #expect(try await running.post(registered.token, #"{"aps":{"alert":"before"}}"#) == 200)
            try await running.link { side in
                var silent: [any Channel] = []
                for port in [running.linkPort, running.sandboxPort] {
                    silent.append(try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(host: "127.0.0.1", port: port).get())
                }
                // A request to the link's path whose promised body never comes is no link either.
                let tls = try NIOSSLContext(configuration: running.tls)
                let stalled = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                    .connect(host: "127.0.0.1", port: running.linkPort) { channel in
                        channel.eventLoop.makeCompletedFuture {
                            try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: tls, serverHostname: "localhost"))
                            return channel
                        }
                    }
                try await stalled.writeAndFlush(ByteBuffer(string: "POST \(DeviceLink.path) HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1000000000\r\n\r\n"))
                silent.append(stalled)
                for connection in silent {
                    try await waitFor("the gateway to close a connection that is not a link", within: 20) { !connection.isActive }
                }
                // Longer than the opening timeout later, the link and the provider's connection still work.
                #expect(try await side.register("com.example.todo") == registered.token)
                #expect(try await running.post(registered.token, #"{"aps":{"alert":"after"}}"#) == 200)
            }
        }
    }

    @Test func aWrongCredentialIsRefused() async throws {
        try await withGateway { running in
            await #expect(throws: (any Error).self) {
                try await running.link(credential: "device-1.wrong") { _ in }
            }
            await #expect(throws: (any Error).self) {
                try await running.link(credential: "nobody") { _ in }
            }
        }
    }

    /// The links' listener takes TLS 1.2 and 1.3, and nothing older.
    @Test func aDeviceLinksOverTLS12And13AndNotOverAnOlderVersion() async throws {
        try await withGateway { running in
            for version in [TLSVersion.tlsv12, .tlsv13] {
                var tls = running.tls
                tls.minimumTLSVersion = version
                tls.maximumTLSVersion = version
                var linked = running
                linked.tls = tls
                _ = try await linked.link { device in
                    guard case .welcome? = try await device.next() else {
                        Issue.record("no welcome over \(version)")
                        return
                    }
                }
            }
            var old = running.tls
            old.minimumTLSVersion = .tlsv1
            old.maximumTLSVersion = .tlsv11
            var outdated = running
            outdated.tls = old
            await #expect(throws: (any Error).self) {
                try await outdated.link { _ in Issue.record("linked over TLS 1.1") }
            }
        }
    }

    @Test func aRequestThatIsNotALinkIsAnsweredWithWhatIsWrong() async throws {
        try await withGateway { running in
            let origin = running.linkURL.replacingOccurrences(of: "wss://", with: "https://").replacingOccurrences(of: DeviceLink.path, with: "")
            func status(_ path: String, _ headers: [(String, String)]) async throws -> (Int, String) {
                var request = HTTPClientRequest(url: origin + path)
                for (name, value) in headers { request.headers.add(name: name, value: value) }
                let response = try await running.http.execute(request, timeout: .seconds(10))
                let body = try await response.body.collect(upTo: 4096)
                return (Int(response.status.code), String(buffer: body))
            }
            let upgrade = [("connection", "upgrade"), ("upgrade", "websocket"), ("sec-websocket-version", "13"),
                           ("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ==")]
            let (unknownPath, _) = try await status("/v1/elsewhere", [("authorization", "Bearer \(running.credential)")])
            #expect(unknownPath == 404)
            let (anonymous, message) = try await status(DeviceLink.path, upgrade)
            #expect(anonymous == 401)
            #expect(message.contains("Authorization: Bearer"))
            let (wrongSecret, _) = try await status(DeviceLink.path, upgrade + [("authorization", "Bearer device-1.wrong")])
            #expect(wrongSecret == 401)
            let (notAWebSocket, _) = try await status(DeviceLink.path, [("authorization", "Bearer \(running.credential)")])
            #expect(notAWebSocket == 426)
        }
    }

    @Test func aSecondLinkOfTheDeviceReplacesTheFirst() async throws {
        try await withGateway { running in
            let (replacedStream, replacedContinuation) = AsyncStream.makeStream(of: Void.self)
            async let first = running.link { side in
                _ = try await side.next()  // welcome
                replacedContinuation.yield()
                // Reads until the gateway closes this link.
                while try await side.next() != nil {}
            }
            var ready = replacedStream.makeAsyncIterator()
            _ = await ready.next()
            _ = try await running.link { side in
                guard case .welcome? = try await side.next() else { throw CancellationError() }
            }
            let closed = try await first
            #expect(closed?.closeCode == .unknown(DeviceLinks.replacedCloseCode))
        }
    }
}
