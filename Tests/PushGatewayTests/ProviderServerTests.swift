import APNsEmulator
import AsyncHTTPClient
import Crypto
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOSSL
import NotificationCore
import PushGateway
import Synchronization
import TestSupport
import Testing

/// Takes every push, refusing the tokens it is told to, and remembers what it took.
final class RecordingAcceptor: PushAcceptor {
    let accepted = Mutex<[ProviderPush]>([])
    let refusals: [String: APNs.Rejection]

    init(refusals: [String: APNs.Rejection] = [:]) { self.refusals = refusals }

    func accept(_ push: ProviderPush, completion: @escaping @Sendable (APNs.Rejection?) -> Void) {
        if let refusal = refusals[push.headers.deviceToken] { return completion(refusal) }
        accepted.withLock { $0.append(push) }
        completion(nil)
    }
}

/// Takes pushes at once, but for the one it is told to hold (counting from 0), which waits until
/// ``release()``.
final class HoldingAcceptor: PushAcceptor {
    private let state = Mutex<(taken: Int, waiting: (@Sendable (APNs.Rejection?) -> Void)?)>((0, nil))
    private let holding: Int
    /// Yields once the held push has arrived.
    let held: AsyncStream<Void>
    private let heldContinuation: AsyncStream<Void>.Continuation

    init(holding: Int) {
        self.holding = holding
        (held, heldContinuation) = AsyncStream.makeStream(of: Void.self)
    }

    func accept(_ push: ProviderPush, completion: @escaping @Sendable (APNs.Rejection?) -> Void) {
        let holds = state.withLock { state in
            defer { state.taken += 1 }
            guard state.taken == holding else { return false }
            state.waiting = completion
            return true
        }
        guard holds else { return completion(nil) }
        heldContinuation.yield()
    }

    func release() { state.withLock { $0.waiting }?(nil) }
}

/// The provider API over real HTTP/2 and TLS on loopback, spoken to by AsyncHTTPClient as a
/// provider's backend would.
@Suite struct ProviderServerTests {
    static let token = "00fc13adff785122b4ad28809a3420982341241421348097878e577c991de8f0"
    static let gone = "aa" + String(repeating: "0", count: 62)

    struct Running {
        let server: ProviderServer
        let url: String
        let client: HTTPClient
        let acceptor: RecordingAcceptor
        let signingKey: P256.Signing.PrivateKey
        let now: Date
        let endpoint: ProviderEndpoint

        func bearer(_ issuedAt: Date? = nil) throws -> String {
            "bearer " + (try ProviderToken.make(keyID: "KEY1234567", teamID: "TEAM123456",
                                                issuedAt: Int64((issuedAt ?? now).timeIntervalSince1970), key: signingKey))
        }

        func post(
            path: String = "/3/device/\(ProviderServerTests.token)",
            method: HTTPMethod = .POST,
            headers: [(String, String)],
            body: String = #"{"aps":{"alert":"Hello"}}"#,
            bytes: [UInt8]? = nil
        ) async throws -> (status: Int, apnsID: String?, contentType: String?, body: String) {
            var request = HTTPClientRequest(url: url + path)
            request.method = method
            for (name, value) in headers { request.headers.add(name: name, value: value) }
            let sent = bytes ?? Array(body.utf8)
            if !sent.isEmpty { request.body = .bytes(ByteBuffer(bytes: sent)) }
            let response = try await client.execute(request, timeout: .seconds(10))
            let bytes = try await response.body.collect(upTo: 1 << 16)
            return (Int(response.status.code), response.headers.first(name: "apns-id"), response.headers.first(name: "content-type"),
                    String(buffer: bytes))
        }
    }

    func withServer(acceptor: RecordingAcceptor = RecordingAcceptor(refusals: [gone: APNs.Rejection(.unregistered, timestamp: 1_767_225_600_123)]),
                    requestIdleTimeout: TimeAmount = .seconds(10),
                    emulation: ProviderEmulation? = nil,
                    emulated: Bool = false,
                    _ body: (Running) async throws -> Void) async throws {
        let signingKey = P256.Signing.PrivateKey()
        let now = Date()
        // As the APNs emulator runs it with no fault scripted: its answers are the gateway's.
        let emulation = emulation ?? (emulated ? Self.emulatorWithoutFaults(now: now) : nil)
        let credentials = ProviderCredentials(
            keys: [ProviderKey(keyID: "KEY1234567", teamID: "TEAM123456", environment: nil, publicKey: signingKey.publicKey)],
            appsByTeam: ["TEAM123456": ["com.example.todo"]]
        )
        try await ProviderEndpoint.with(credentials: { credentials }, acceptor: acceptor, clock: { now }, emulation: emulation,
                                        requestIdleTimeout: requestIdleTimeout) { endpoint in
            try await body(Running(server: endpoint.server, url: endpoint.url, client: endpoint.client, acceptor: acceptor, signingKey: signingKey, now: now,
                                   endpoint: endpoint))
        }
    }

    /// What the APNs emulator changes of the provider API, with no fault scripted and its clock at `now`.
    static func emulatorWithoutFaults(now: Date) -> ProviderEmulation {
        FaultInjector(clock: EmulatorClock(system: { now })).emulation
    }

    @Test(arguments: [false, true]) func anAcceptedPushIsAnsweredWithItsApnsIDAndNoBody(emulated: Bool) async throws {
        try await withServer(emulated: emulated) { running in
            let answer = try await running.post(headers: [
                ("authorization", try running.bearer()), ("apns-topic", "com.example.todo"), ("apns-push-type", "alert"),
                ("apns-id", "eabeae54-14a8-11e5-b60b-1697f925ec7b"), ("apns-expiration", "0"), ("apns-priority", "10"),
            ])
            #expect(answer.status == 200)
            #expect(answer.apnsID == "eabeae54-14a8-11e5-b60b-1697f925ec7b")
            #expect(answer.body.isEmpty)
            let pushes = running.acceptor.accepted.withLock { $0 }
            #expect(pushes.count == 1)
            #expect(pushes.first?.bundleIdentifier == "com.example.todo")
            #expect(pushes.first?.teamID == "TEAM123456")
            #expect(pushes.first.map { String(decoding: $0.payload, as: UTF8.self) } == #"{"aps":{"alert":"Hello"}}"#)
            #expect(pushes.first?.headers.expiration == 0)
        }
    }

    @Test func aPushWithoutApnsIDGetsOneMadeUp() async throws {
        try await withServer { running in
            let answer = try await running.post(headers: [("authorization", try running.bearer()), ("apns-topic", "com.example.todo")])
            #expect(answer.status == 200)
            #expect(answer.apnsID.map(APNs.isCanonicalUUID) == true)
            #expect(answer.apnsID == answer.apnsID?.lowercased())
        }
    }

    /// A payload some reader of the system could not keep (nested past the limit, a key twice, a lone
    /// surrogate, bytes that are not UTF-8, a number no `Double` holds, not JSON at all) is refused
    /// before it is stored; one at the limit is taken, and so is `null`, as APNs takes it.
    @Test(arguments: [
        ("64 deep", 200), ("65 deep", 400), ("510 deep", 400), ("a key twice", 400), ("a lone surrogate", 400),
        ("not UTF-8", 400), ("1e400", 400), ("not JSON", 400), ("an array", 400), ("null inside", 200),
    ])
    func aPayloadNoReaderCouldKeepIsRefusedBeforeItIsStored(_ kind: String, status: Int) async throws {
        func nested(_ depth: Int) -> [UInt8] {
            Array((#"{"aps":{"alert":"deep"},"d":"# + String(repeating: "[", count: depth - 1) + "1" + String(repeating: "]", count: depth - 1) + "}").utf8)
        }
        let payloads: [String: [UInt8]] = [
            "64 deep": nested(64), "65 deep": nested(65), "510 deep": nested(510),
            "a key twice": Array(#"{"aps":{"alert":"a"},"k":1,"k":2}"#.utf8),
            "a lone surrogate": Array(#"{"aps":{"alert":"\ud800"}}"#.utf8),
            "not UTF-8": Array(#"{"aps":{"alert":""#.utf8) + [0xFF] + Array(#""}}"#.utf8),
            "1e400": Array(#"{"aps":{"alert":"a"},"n":1e400}"#.utf8),
            "not JSON": Array(#"{"aps":{"alert":"a"}"#.utf8),
            "an array": Array(#"[{"aps":{"alert":"a"}}]"#.utf8),
            "null inside": Array(#"{"aps":{"alert":"a"},"n":null}"#.utf8),
        ]
        let acceptor = RecordingAcceptor()
        try await withServer(acceptor: acceptor) { running in
            let headers = [("authorization", try running.bearer()), ("apns-topic", "com.example.todo")]
            let answer = try await running.post(headers: headers, bytes: payloads[kind]!)
            #expect(answer.status == status)
            if status == 400 {
                #expect(answer.body == #"{"reason":"BadRequestPayload"}"#)
                #expect(acceptor.accepted.withLock { $0.isEmpty }, "nothing was stored")
            } else {
                #expect(acceptor.accepted.withLock { $0.count } == 1)
            }
        }
    }

    @Test(arguments: [false, true]) func refusalsCarryApplesStatusReasonAndApnsID(emulated: Bool) async throws {
        try await withServer(emulated: emulated) { running in
            let bearer = try running.bearer()
            let valid = [("authorization", bearer), ("apns-topic", "com.example.todo")]
            func expectRefusal(_ answer: (status: Int, apnsID: String?, contentType: String?, body: String), _ status: Int, _ reason: String,
                               sourceLocation: SourceLocation = #_sourceLocation) {
                #expect(answer.status == status, sourceLocation: sourceLocation)
                #expect(answer.contentType == "application/json", sourceLocation: sourceLocation)
                #expect(answer.body == #"{"reason":"\#(reason)"}"#, sourceLocation: sourceLocation)
                #expect(answer.apnsID.map(APNs.isCanonicalUUID) == true, sourceLocation: sourceLocation)
            }
            // Authenticate the connection first: until then it has one stream.
            #expect(try await running.post(headers: valid).status == 200)
            expectRefusal(try await running.post(method: .GET, headers: valid, body: ""), 405, "MethodNotAllowed")
            expectRefusal(try await running.post(path: "/3/devices/\(Self.token)", headers: valid), 404, "BadPath")
            expectRefusal(try await running.post(path: "/3/device/", headers: valid), 400, "MissingDeviceToken")
            expectRefusal(try await running.post(path: "/3/device/nothex", headers: valid), 400, "BadDeviceToken")
            expectRefusal(try await running.post(headers: valid + [("apns-priority", "7")]), 400, "BadPriority")
            expectRefusal(try await running.post(headers: valid + [("apns-push-type", "banner")]), 400, "InvalidPushType")
            expectRefusal(try await running.post(headers: valid + [("apns-collapse-id", String(repeating: "x", count: 65))]), 400, "BadCollapseId")
            expectRefusal(try await running.post(headers: valid + [("apns-expiration", "later")]), 400, "BadExpirationDate")
            expectRefusal(try await running.post(headers: valid + [("apns-id", "nope")]), 400, "BadMessageId")
            expectRefusal(try await running.post(headers: valid, body: ""), 400, "PayloadEmpty")
            expectRefusal(try await running.post(headers: valid, body: "{\"aps\":{},\"x\":\"" + String(repeating: "y", count: 4090) + "\"}"), 413, "PayloadTooLarge")
            expectRefusal(try await running.post(headers: [("authorization", bearer), ("apns-topic", "org.other.app")]), 400, "TopicDisallowed")
            expectRefusal(try await running.post(headers: [("authorization", bearer)]), 400, "MissingTopic")
            expectRefusal(try await running.post(headers: [("apns-topic", "com.example.todo")]), 403, "MissingProviderToken")
            expectRefusal(try await running.post(headers: [("authorization", "bearer a.b.c"), ("apns-topic", "com.example.todo")]), 403, "InvalidProviderToken")
            // A new token on the same connection minutes after the first: the classic client bug.
            expectRefusal(try await running.post(headers: [("authorization", try running.bearer(running.now - 60)), ("apns-topic", "com.example.todo")]),
                          429, "TooManyProviderTokenUpdates")
            expectRefusal(try await running.post(headers: [("authorization", try running.bearer(running.now - 3601)), ("apns-topic", "com.example.todo")]),
                          403, "ExpiredProviderToken")
        }
    }

    @Test(arguments: [false, true]) func anUnregisteredTokenAnswers410WithItsTimestamp(emulated: Bool) async throws {
        try await withServer(emulated: emulated) { running in
            let answer = try await running.post(path: "/3/device/\(Self.gone)", headers: [("authorization", try running.bearer()), ("apns-topic", "com.example.todo")])
            #expect(answer.status == 410)
            #expect(answer.body == #"{"reason":"Unregistered","timestamp":1767225600123}"#)
        }
    }

    /// Runs nghttp (verbose: every frame it sends and receives) on one connection, posting `payload`
    /// to each of `urls` in turn; returns what it printed. Waited for without blocking a thread: the
    /// server answering it runs on the same threads.
    static func nghttp(payload: URL, headers: [(String, String)], urls: [String]) async throws -> String {
        try await Program.run("/usr/bin/nghttp", ["-v", "-n", "-y", "-d", payload.path] + headers.flatMap { ["-H", "\($0.0): \($0.1)"] } + urls,
                        mergingErrors: true).output
    }

    /// What a frame-level client sees: APNs ends a `200` on its HEADERS frame (END_STREAM), and an
    /// error with one DATA frame after its headers; some clients break on anything else.
    @Test(arguments: [false, true]) func answersEndOnTheFramesAPNsEndsThemOn(emulated: Bool) async throws {
        try await withServer(emulated: emulated) { running in
            let payload = FileManager.default.temporaryDirectory.appendingPathComponent("payload-\(UUID().uuidString).json")
            try Data(#"{"aps":{"alert":"Hello"}}"#.utf8).write(to: payload)
            defer { try? FileManager.default.removeItem(at: payload) }
            func nghttp(_ path: String, _ headers: [(String, String)]) async throws -> String {
                try await Self.nghttp(payload: payload, headers: headers, urls: [running.url.replacingOccurrences(of: "localhost", with: "127.0.0.1") + path])
            }
            let bearer = try running.bearer()
            let success = try await nghttp("/3/device/\(Self.token)", [("authorization", bearer), ("apns-topic", "com.example.todo")])
            // The reply to stream 13 (nghttp's first request stream) is one HEADERS frame with END_STREAM and END_HEADERS.
            #expect(success.contains("recv HEADERS frame <length="), "\(success)")
            let replyHeaders = success.split(separator: "\n").filter { $0.contains("recv HEADERS frame") }
            #expect(replyHeaders.count == 1)
            #expect(replyHeaders.first?.contains("flags=0x05") == true, "\(success)")
            #expect(!success.contains("recv DATA frame"), "\(success)")
            #expect(success.contains(":status: 200"))
            #expect(success.contains("apns-id: "))

            let refused = try await nghttp("/3/device/\(Self.token)", [("authorization", bearer), ("apns-topic", "org.other.app")])
            #expect(refused.contains(":status: 400"))
            let headers = refused.split(separator: "\n").filter { $0.contains("recv HEADERS frame") }
            #expect(headers.first?.contains("flags=0x04") == true, "\(refused)")
            let data = refused.split(separator: "\n").filter { $0.contains("recv DATA frame") }
            #expect(data.count == 1)
            #expect(data.first?.contains("flags=0x01") == true, "\(refused)")
        }
    }

    /// A connection that keeps sending bad requests is told why and closed, as APNs does: a bad
    /// device token weighs ten ordinary errors, and the limit is 100 within a minute.
    @Test func aConnectionWithTooManyErrorsIsClosedWithGoAway() async throws {
        try await withServer { running in
            let payload = FileManager.default.temporaryDirectory.appendingPathComponent("payload-\(UUID().uuidString).json")
            try Data(#"{"aps":{"alert":"Hello"}}"#.utf8).write(to: payload)
            defer { try? FileManager.default.removeItem(at: payload) }
            let base = running.url.replacingOccurrences(of: "localhost", with: "127.0.0.1")
            // One connection: a valid push first (it authenticates), then twelve to a malformed token.
            let urls = [base + "/3/device/\(Self.token)"] + (0..<12).map { base + "/3/device/zz\($0)" }
            let text = try await Self.nghttp(payload: payload, headers: [("authorization", try running.bearer()), ("apns-topic", "com.example.todo")], urls: urls)
            let goAway = text.split(separator: "\n").filter { $0.contains("recv GOAWAY frame") }
            #expect(goAway.count == 1, "\(text)")
            #expect(text.contains(#"{"reason":"BadDeviceToken"}"#))
            // Ten bad tokens were answered before the connection closed; the rest never were.
            #expect(text.components(separatedBy: ":status: 400").count - 1 == 10, "\(text)")
        }
    }

    /// Closing for too many errors does not lose the answers of the pushes the connection had
    /// handed over (they may be stored: a provider told nothing would send them again, and the device
    /// would show them twice); a request not complete then is refused unprocessed, to send again.
    @Test(.timeLimit(.minutes(1))) func aConnectionClosedForErrorsStillAnswersThePushesItTook() async throws {
        let (server, _, _, client, headers, acceptor, unfinished, underWay) = try await Self.serverWithAPushUnderWay()
        // Ten malformed tokens: a hundred errors' weight.
        for index in 0..<10 {
            let answer = try await client.push(path: "/3/device/zz\(index)", headers: headers, body: #"{"aps":{"alert":"bad"}}"#)
            #expect(answer.status == "400")
        }
        var goAways = client.goAways.makeAsyncIterator()
        #expect(await goAways.next() == #"{"reason":"BadDeviceToken"}"#)
        #expect(await unfinished.resetCode() == .refusedStream)
        acceptor.release()
        #expect(await underWay.answer().status == "200")
        // Then the connection closes.
        #expect(await goAways.next() == nil)
        await client.close()
        await server.stop(grace: .seconds(5))
    }

    /// A server of the test's own, to stop (`withServer` stops its server itself), one
    /// connection to it, and the headers of a valid push.
    static func serverToStop(acceptor: any PushAcceptor) async throws
        -> (server: ProviderServer, address: SocketAddress, authority: GatewayCertificateAuthority, client: FrameClient, headers: [(String, String)])
    {
        let signingKey = P256.Signing.PrivateKey()
        let credentials = ProviderCredentials(
            keys: [ProviderKey(keyID: "KEY1234567", teamID: "TEAM123456", environment: nil, publicKey: signingKey.publicKey)],
            appsByTeam: ["TEAM123456": ["com.example.todo"]]
        )
        let authority = try GatewayCertificateAuthority(name: "Test gateway CA")
        let issued = try authority.issueServerCertificate(for: ["localhost"])
        var configuration = ProviderServer.Configuration()
        configuration.port = 0
        configuration.tls = .init(certificateChainPEM: issued.certificatePEM, privateKeyPEM: issued.privateKeyPEM)
        // The tests leave requests unfinished on purpose, for as long as a loaded machine takes to get
        // to them: not for the idle timeout's sweep (tested on its own).
        configuration.requestIdleTimeout = .minutes(10)
        let server = ProviderServer(configuration: configuration, credentials: { credentials }, acceptor: acceptor, logger: Logger(label: "test"))
        let address = try await server.start()
        let client = try await FrameClient.connect(port: address.port!, authorityPEM: try authority.certificatePEM)
        let bearer = try ProviderToken.make(keyID: "KEY1234567", teamID: "TEAM123456", issuedAt: Int64(Date().timeIntervalSince1970), key: signingKey)
        return (server, address, authority, client, [("authorization", "bearer \(bearer)"), ("apns-topic", "com.example.todo")])
    }

    /// ``serverToStop(acceptor:)`` with its connection authenticated by a first push, then a request
    /// not complete (its headers sent) and a push held under way by the acceptor: once that one is
    /// held, the server has read the other's headers too (frames of a connection are read in order).
    static func serverWithAPushUnderWay() async throws -> (server: ProviderServer, address: SocketAddress, authority: GatewayCertificateAuthority,
                                                            client: FrameClient, headers: [(String, String)], acceptor: HoldingAcceptor,
                                                            unfinished: FrameStream, underWay: FrameStream) {
        let acceptor = HoldingAcceptor(holding: 1)
        let (server, address, authority, client, headers) = try await serverToStop(acceptor: acceptor)
        let path = "/3/device/\(token)"
        #expect(try await client.push(path: path, headers: headers, body: #"{"aps":{"alert":"1"}}"#).status == "200")
        let unfinished = try await client.openStream(path: path, headers: headers)
        let underWay = try await client.openStream(path: path, headers: headers)
        try await underWay.sendBody(#"{"aps":{"alert":"2"}}"#)
        var held = acceptor.held.makeAsyncIterator()
        _ = await held.next()
        return (server, address, authority, client, headers, acceptor, unfinished, underWay)
    }

    /// Stopping gracefully, as APNs does: GOAWAY with `{"reason":"Shutdown"}`, a request that ends
    /// after the stop began answered `503 Shutdown`, a request under way answered as usual.
    @Test(.timeLimit(.minutes(1))) func aGracefulStopSaysShutdownAndFinishesWhatIsUnderWay() async throws {
        let (server, address, authority, client, _, acceptor, unfinished, underWay) = try await Self.serverWithAPushUnderWay()

        let stopping = Task { await server.stop(grace: .seconds(30)) }
        var goAways = client.goAways.makeAsyncIterator()
        #expect(await goAways.next() == #"{"reason":"Shutdown"}"#)
        #expect(server.isStopping)
        try await unfinished.sendBody(#"{"aps":{"alert":"3"}}"#)
        let refused = await unfinished.answer()
        #expect(refused.status == "503")
        #expect(refused.body == #"{"reason":"Shutdown"}"#)
        acceptor.release()
        #expect(await underWay.answer().status == "200")
        await client.close()
        await stopping.value
        // Stopped: nothing listens any more.
        await #expect(throws: (any Error).self) { _ = try await FrameClient.connect(port: address.port!, authorityPEM: try authority.certificatePEM) }
    }

    /// The answer that ends a stopping connection's last stream arrives whole before the connection
    /// closes, a body included: here a request that ends after the stop began, answered `503 Shutdown`.
    @Test(.timeLimit(.minutes(1))) func theLastAnswerOfAStoppingConnectionArrivesWhole() async throws {
        let (server, _, _, client, headers) = try await Self.serverToStop(acceptor: RecordingAcceptor())
        let path = "/3/device/\(Self.token)"

        #expect(try await client.push(path: path, headers: headers, body: #"{"aps":{"alert":"1"}}"#).status == "200")
        // The last request sends its headers; a whole one sent after it is answered, so the server has
        // read those headers too (frames of a connection are read in order) before the stop begins.
        let last = try await client.openStream(path: path, headers: headers)
        #expect(try await client.push(path: path, headers: headers, body: #"{"aps":{"alert":"2"}}"#).status == "200")

        let stopping = Task { await server.stop(grace: .seconds(30)) }
        var goAways = client.goAways.makeAsyncIterator()
        #expect(await goAways.next() == #"{"reason":"Shutdown"}"#)
        try await last.sendBody(#"{"aps":{"alert":"3"}}"#)
        let refused = await last.answer()
        #expect(refused.status == "503")
        #expect(refused.body == #"{"reason":"Shutdown"}"#)
        await client.close()
        await stopping.value
    }

    /// A request that stops sending before its end is answered `400 IdleTimeout`, and the connection
    /// goes on; so is each of several. (Two seconds of silence: a whole request's headers and body
    /// go in one write, so that a loaded machine cannot part them for that long.)
    @Test func aRequestThatStopsHalfWayIsIdleTimeout() async throws {
        try await withServer(requestIdleTimeout: .seconds(2)) { running in
            let client = try await FrameClient.connect(port: running.endpoint.port, authorityPEM: running.endpoint.authorityPEM)
            let headers = [("authorization", try running.bearer()), ("apns-topic", "com.example.todo"), ("apns-id", "eabeae54-14a8-11e5-b60b-1697f925ec7b")]
            let stalled = try await client.openStream(path: "/3/device/\(Self.token)", headers: headers)
            let answer = await stalled.answer()
            #expect(answer.status == "400")
            #expect(answer.body == #"{"reason":"IdleTimeout"}"#)
            #expect(try await client.push(path: "/3/device/\(Self.token)", headers: headers, body: #"{"aps":{"alert":"whole"}}"#).status == "200")
            // The connection watches its requests with one timer: two stalled at once, and one after
            // those, each meet it.
            let both = [try await client.openStream(path: "/3/device/\(Self.token)", headers: headers),
                        try await client.openStream(path: "/3/device/\(Self.token)", headers: headers)]
            for stream in both {
                let answer = await stream.answer()
                #expect(answer.status == "400")
                #expect(answer.body == #"{"reason":"IdleTimeout"}"#)
            }
            let last = try await client.openStream(path: "/3/device/\(Self.token)", headers: headers)
            #expect(await last.answer().body == #"{"reason":"IdleTimeout"}"#)
            await client.close()
            #expect(running.acceptor.accepted.withLock { $0.count } == 1)
        }
    }

    /// A request whose header list is over the 8,000 bytes the gateway announces, as APNs does, is
    /// answered `431` without a body, whether its body came or not, and the connection goes on.
    @Test func aHeaderListOverTheAnnouncedSizeIs431() async throws {
        try await withServer { running in
            let client = try await FrameClient.connect(port: running.endpoint.port, authorityPEM: running.endpoint.authorityPEM)
            let headers = [("authorization", try running.bearer()), ("apns-topic", "com.example.todo")]
            let large = headers + [("x-note", String(repeating: "a", count: 9_000))]
            let whole = try await client.push(path: "/3/device/\(Self.token)", headers: large, body: #"{"aps":{"alert":"large"}}"#)
            #expect(whole.status == "431")
            #expect(whole.body.isEmpty)
            let headersOnly = try await client.openStream(path: "/3/device/\(Self.token)", headers: large)
            #expect(await headersOnly.answer().status == "431")
            #expect(try await client.push(path: "/3/device/\(Self.token)", headers: headers, body: #"{"aps":{"alert":"small"}}"#).status == "200")
            await client.close()
            #expect(running.acceptor.accepted.withLock { $0.count } == 1)
        }
    }

    /// Header lists over the announced size count against the connection as refused requests do:
    /// the hundredth within a minute closes it with GOAWAY (without a reason, as `431` has none),
    /// and a new connection is served.
    @Test(.timeLimit(.minutes(1))) func aConnectionThatKeepsSendingOversizedHeaderListsIsClosed() async throws {
        try await withServer { running in
            let client = try await FrameClient.connect(port: running.endpoint.port, authorityPEM: running.endpoint.authorityPEM)
            let headers = [("authorization", try running.bearer()), ("apns-topic", "com.example.todo")]
            #expect(try await client.push(path: "/3/device/\(Self.token)", headers: headers, body: #"{"aps":{"alert":"first"}}"#).status == "200")
            let large = headers + [("x-note", String(repeating: "a", count: 9_000))]
            for _ in 0..<99 {
                #expect(try await client.push(path: "/3/device/\(Self.token)", headers: large, body: #"{"aps":{"alert":"large"}}"#).status == "431")
            }
            var goAways = client.goAways.makeAsyncIterator()
            #expect(try await client.push(path: "/3/device/\(Self.token)", headers: large, body: #"{"aps":{"alert":"large"}}"#).status == "431")
            #expect(await goAways.next() == "")
            #expect(await goAways.next() == nil)
            await client.close()
            let again = try await FrameClient.connect(port: running.endpoint.port, authorityPEM: running.endpoint.authorityPEM)
            #expect(try await again.push(path: "/3/device/\(Self.token)", headers: headers, body: #"{"aps":{"alert":"again"}}"#).status == "200")
            await again.close()
            #expect(running.acceptor.accepted.withLock { $0.count } == 2)
        }
    }

    /// A request whose header block HTTP/2 calls malformed (RFC 9113 §8.2, §8.3) is not a push: its
    /// stream is reset with PROTOCOL_ERROR, and the connection goes on.
    @Test func aMalformedHeaderBlockResetsItsStream() async throws {
        try await withServer { running in
            let client = try await FrameClient.connect(port: running.endpoint.port, authorityPEM: running.endpoint.authorityPEM, checksHeaders: false)
            let path = "/3/device/\(Self.token)"
            let authorization = ("authorization", try running.bearer())
            let pseudo = [(":method", "POST"), (":path", path), (":scheme", "https"), (":authority", "localhost")]
            let topic = ("apns-topic", "com.example.todo")
            #expect(try await client.push(path: path, headers: [authorization, topic], body: #"{"aps":{"alert":"first"}}"#).status == "200")
            let malformed: [(String, [(String, String)])] = [
                // (A name HPACK's tables hold goes out as their entry, lower-case whatever its case:
                // this one is in neither.)
                ("an upper-case name", pseudo + [authorization, topic, ("X-Upper-Case", "1")]),
                ("a name that is not a token", pseudo + [authorization, topic, ("apns topic", "x")]),
                ("a connection-specific field", pseudo + [authorization, topic, ("connection", "close")]),
                ("te other than trailers", pseudo + [authorization, topic, ("te", "gzip")]),
                ("a pseudo-header after a regular field", [(":method", "POST"), authorization, (":path", path), (":scheme", "https")]),
                ("no :path", [(":method", "POST"), (":scheme", "https"), (":authority", "localhost"), authorization, topic]),
                ("an empty :path", [(":method", "POST"), (":path", ""), (":scheme", "https"), authorization, topic]),
                ("a response's pseudo-header", pseudo + [(":status", "200"), authorization, topic]),
                ("a pseudo-header twice", pseudo + [(":method", "POST"), authorization, topic]),
                ("a space in :path", [(":method", "POST"), (":path", path + " x"), (":scheme", "https"), authorization, topic]),
                ("a line feed in a value", pseudo + [authorization, ("apns-topic", "com.example\ntodo")]),
            ]
            for (what, fields) in malformed {
                let stream = try await client.openStream(fields: fields)
                #expect(await stream.resetCode() == .protocolError, "\(what)")
            }
            // Trailers carry no pseudo-header.
            let trailed = try await client.openStream(path: path, headers: [authorization, topic])
            try await trailed.sendPart(#"{"aps":{"alert":"trailed"}}"#)
            try await trailed.sendTrailers([(":path", path)])
            #expect(await trailed.resetCode() == .protocolError)
            // Well-formed trailers end a request as its last DATA would.
            let withTrailers = try await client.openStream(path: path, headers: [authorization, topic])
            try await withTrailers.sendPart(#"{"aps":{"alert":"with trailers"}}"#)
            try await withTrailers.sendTrailers([("x-checksum", "none")])
            #expect(await withTrailers.answer().status == "200")
            #expect(try await client.push(path: path, headers: [authorization, topic], body: #"{"aps":{"alert":"last"}}"#).status == "200")
            await client.close()
            #expect(running.acceptor.accepted.withLock { $0.count } == 3)
        }
    }

    /// A provider whose client cancels many requests (`RST_STREAM`), more than SwiftNIO's default
    /// limit of 200 in 30 seconds, keeps its connection: a busy provider's client cancels some of its
    /// requests, and closing the connection lost the answers of every push under way.
    @Test(.timeLimit(.minutes(1))) func aProviderThatCancelsManyRequestsKeepsItsConnection() async throws {
        try await withServer { running in
            let client = try await FrameClient.connect(port: running.endpoint.port, authorityPEM: running.endpoint.authorityPEM)
            let headers = [("authorization", try running.bearer()), ("apns-topic", "com.example.todo")]
            let path = "/3/device/\(Self.token)"
            #expect(try await client.push(path: path, headers: headers, body: #"{"aps":{"alert":"first"}}"#).status == "200")
            for _ in 0..<500 {
                let cancelled = try await client.openStream(path: path, headers: headers)
                // Closing a stream under way sends RST_STREAM (CANCEL); the close reports the stream
                // as closed with CANCEL.
                try? await cancelled.channel.close()
            }
            let last = try await client.openStream(path: path, headers: headers)
            try await last.sendBody(#"{"aps":{"alert":"last"}}"#)
            #expect(await last.answer(within: .seconds(10))?.status == "200")
            await client.close()
            #expect(running.acceptor.accepted.withLock { $0.count } == 2)
        }
    }

    /// Some APNs clients (aioapns among them) offer no ALPN: the connection is HTTP/2 all the same.
    @Test func aConnectionWithoutALPNSpeaksHTTP2() async throws {
        try await withServer { running in
            let client = try await FrameClient.connect(port: running.endpoint.port, authorityPEM: running.endpoint.authorityPEM, alpn: [])
            let headers = [("authorization", try running.bearer()), ("apns-topic", "com.example.todo")]
            #expect(try await client.push(path: "/3/device/\(Self.token)", headers: headers, body: #"{"aps":{"alert":"no ALPN"}}"#).status == "200")
            await client.close()
            #expect(running.acceptor.accepted.withLock { $0.count } == 1)
        }
    }

    @Test func manyStreamsRunAtOnceOnceAuthenticated() async throws {
        try await withServer { running in
            let headers = [("authorization", try running.bearer()), ("apns-topic", "com.example.todo")]
            #expect(try await running.post(headers: headers).status == 200)
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<200 { group.addTask { try await running.post(headers: headers).status } }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.count == 200)
            #expect(statuses.allSatisfy { $0 == 200 })
            #expect(running.acceptor.accepted.withLock { $0.count } == 201)
        }
    }

    /// An HTTP/2 implementation of its own, python-hyper's h2 (installed with aioapns), drives the
    /// connection frame by frame (`Clients/h2_frames.py`): PING answered with its data, an error's body
    /// sent through an 8-byte window, padded DATA, trailers, a cancelled stream, 50 streams at once, and
    /// a frame on a server's stream closing the connection with GOAWAY `PROTOCOL_ERROR`.
    @Test func anotherHTTP2ImplementationSpeaksWithItFrameByFrame() async throws {
        try await withServer { running in
            let authority = FileManager.default.temporaryDirectory.appendingPathComponent("ca-\(UUID().uuidString).pem")
            try Data(running.endpoint.authorityPEM.utf8).write(to: authority)
            defer { try? FileManager.default.removeItem(at: authority) }
            let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Clients/h2_frames.py")
            let run = try await Program.run("/usr/bin/env", [
                "python3", script.path, "--port", String(running.endpoint.port), "--ca", authority.path, "--authorization", try running.bearer(),
                "--token", Self.token, "--topic", "com.example.todo",
            ])
            #expect(run.succeeded, "\(run.errors)")
            let results = try #require(try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any], "\(run.output)")
            #expect(results["ping"] as? [String] == ["12345678"])
            let refused = try #require(results["small_window"] as? [String: Any])
            #expect(refused["status"] as? String == "400")
            #expect(refused["body"] as? String == #"{"reason":"TopicDisallowed"}"#)
            let frames = refused["frames"] as? [Int] ?? []
            #expect(frames.count >= 3 && frames.allSatisfy { $0 <= 8 }, "\(frames)")
            for name in ["padded", "trailers", "after_cancel"] {
                #expect((results[name] as? [String: Any])?["status"] as? String == "200", "\(name)")
            }
            #expect(results["concurrent"] as? [String] == Array(repeating: "200", count: 50))
            #expect(results["burst"] as? [String] == ["200"])
            let evenStream = try #require(results["even_stream"] as? [String: Any])
            #expect(evenStream["goaway"] as? [Int] == [1])
            #expect(evenStream["closed"] as? Bool == true)
            #expect(running.acceptor.accepted.withLock { $0.count } == 54 + 1_000)
        }
    }
}
