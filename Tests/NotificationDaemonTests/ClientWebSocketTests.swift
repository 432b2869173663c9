import DaemonTestSupport
import EventLoopWebSocket
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
@testable import NotificationDaemon
import NIOWebSocket
@testable import NotificationEngine
import PushGateway
import Synchronization
import Testing
import TestSupport

/// The one client's end of a WebSocket (`ClientWebSocket`): the device link's, the apps' and the
/// watch's. Against a server's end made here that answers pings or not, as told: the device link's
/// keep-alive of `Docs/device-link.md` (a ping every interval; a link heard nothing from for the
/// silence limit is closed), the close handshake, a message that comes in the same read as the answer
/// to the upgrade, and over every transport a lone message and a reconnection.
@Suite struct ClientWebSocketTests {
    private static let quickKeepAlive = ClientWebSocket.KeepAlive(interval: .milliseconds(50), silenceLimit: .milliseconds(200))

    @Test func aGatewayThatSaysNothingIsClosedWithGoingAwayAfterTheSilenceLimit() async throws {
        let gateway = try await FakeLinkGateway.start(answersPings: false)
        defer { gateway.stop() }
        let socket = try await DeviceLinkClient.connect(to: gateway.address, credential: "device-1.secret", tls: .makeClientConfiguration(),
                                                        keepAlive: Self.quickKeepAlive) { _ in }
        socket.start()
        // Pinged first, then closed: the gateway never answers the close either, so the device ends
        // the connection itself.
        let closeCode = try await withDeadline("the silent link to end", timeout: .seconds(30)) { await socket.waitUntilEnded() }
        #expect(closeCode == nil)
        #expect(gateway.seen.pings >= 1)
        // The device wrote its close before it ended the connection; the gateway's end reads it on
        // its own time, which a busy machine may put after the device's end.
        try await eventually("the gateway to read the device's close") { gateway.seen.closeCodes == [.goingAway] }
    }

    @Test func aGatewayThatAnswersItsPingsKeepsTheLinkLongAfterTheSilenceLimit() async throws {
        let gateway = try await FakeLinkGateway.start(answersPings: true)
        defer { gateway.stop() }
        let ended = Atomic<Bool>(false)
        // The limit is far above the interval: a busy machine (the whole suite running) may delay a
        // ping and its answer by a second or more, and a gap over the limit rightly closes the link.
        let keepAlive = ClientWebSocket.KeepAlive(interval: .milliseconds(250), silenceLimit: .seconds(5))
        let socket = try await DeviceLinkClient.connect(to: gateway.address, credential: "device-1.secret", tls: .makeClientConfiguration(),
                                                        keepAlive: keepAlive) { _ in }
        socket.start()
        let watching = Task {
            let code = await socket.waitUntilEnded()
            ended.store(true, ordering: .relaxed)
            return code
        }
        // Twenty-four pings answered: longer than the silence limit.
        try await withDeadline("twenty-four pings", timeout: .seconds(60)) {
            while gateway.seen.pings < 24 { try await Task.sleep(for: .milliseconds(10)) }
        }
        let endedMeanwhile = ended.load(ordering: .relaxed)
        #expect(!endedMeanwhile)
        // The device's close is answered with the gateway's, whose code the socket reports.
        socket.close(code: .normalClosure)
        let closeCode = try await withDeadline("the closed link to end") { await watching.value }
        #expect(closeCode == .normalClosure)
        #expect(gateway.seen.closeCodes == [.normalClosure])
    }

    @Test func aMessageRightBehindTheUpgradesAnswerIsReceivedAndTheGatewaysCloseIsAnswered() async throws {
        let gateway = try await FakeLinkGateway.start(answersPings: true, greeting: #"{"type":"welcome","deviceID":"device-1","window":64}"#)
        defer { gateway.stop() }
        let received = Mutex<[String]>([])
        let socket = try await DeviceLinkClient.connect(to: gateway.address, credential: "device-1.secret", tls: .makeClientConfiguration()) { text in
            received.withLock { $0.append(String(buffer: text)) }
        }
        socket.start()
        try await eventually("the welcome") { received.withLock { $0.count } == 1 }
        #expect(received.withLock { $0 } == [#"{"type":"welcome","deviceID":"device-1","window":64}"#])
        // A gateway replacing the link: its code is what the socket reports, and the device answers.
        gateway.closeAll(code: .unknown(4001))
        let closeCode = try await withDeadline("the replaced link to end") { await socket.waitUntilEnded() }
        #expect(closeCode == .unknown(4001))
        try await eventually("the device's answer") { gateway.seen.closeCodes == [.unknown(4001)] }
    }

    @Test func aRefusedUpgradeIsAnErrorThatSaysSo() async throws {
        let gateway = try await FakeLinkGateway.start(answersPings: true, refuses: true)
        defer { gateway.stop() }
        await #expect(throws: DaemonError.self) {
            _ = try await DeviceLinkClient.connect(to: gateway.address, credential: "device-1.wrong", tls: .makeClientConfiguration()) { _ in }
        }
    }

    enum Transport: String, CaseIterable, CustomTestStringConvertible {
        case tcp, tls, unixSocket
        var testDescription: String { rawValue }
    }

    /// A server that writes one message right behind its answer to the upgrade and nothing more: the
    /// client has that message, alone, and when the server drops the connection (no close frame), the
    /// next connection has its own, over TCP, TLS and a Unix socket alike.
    @Test(arguments: Transport.allCases)
    func aLoneMessageArrivesAndAReconnectionGetsTheNext(_ transport: Transport) async throws {
        let greetings = Mutex(["one", "two"])
        let server = try await FakeLinkGateway.start(answersPings: true, transport: transport, greet: { greetings.withLock { $0.removeFirst() } })
        defer { server.stop() }
        let received = Mutex<[String]>([])
        for expected in [["one"], ["one", "two"]] {
            let socket = try await ClientWebSocket.connect(to: server.clientAddress, configuration: .init(path: "/stream", maximumMessageSize: 1 << 16)) {
                text in received.withLock { $0.append(String(buffer: text)) }
            }
            socket.start()
            try await eventually("the lone message") { received.withLock { $0.count } == expected.count }
            #expect(received.withLock { $0 } == expected)
            // Dropped without a close: ended with no code.
            server.dropAll()
            #expect(try await withDeadline("the dropped connection to end") { await socket.waitUntilEnded() } == nil)
        }
        #expect(received.withLock { $0 } == ["one", "two"], "nothing else came")
    }

    /// A connection that is over before the client starts reading still hands over what came on it,
    /// and reports its end only after that.
    @Test func messagesOfAConnectionThatEndedBeforeStartAreStillReceived() async throws {
        let server = try await FakeLinkGateway.start(answersPings: true, greet: { "last words" })
        defer { server.stop() }
        let received = Mutex<[String]>([])
        let socket = try await ClientWebSocket.connect(to: server.clientAddress, configuration: .init(path: "/stream", maximumMessageSize: 1 << 16)) {
            text in received.withLock { $0.append(String(buffer: text)) }
        }
        // The client may hear the server's answer to the upgrade before the server has taken the link.
        try await eventually("the server to hold the link") { server.linkCount == 1 }
        server.dropAll()
        try await withDeadline("the connection to close") { try await socket.connectionClosed.get() }
        socket.start()
        #expect(try await withDeadline("the connection to end") { await socket.waitUntilEnded() } == nil)
        #expect(received.withLock { $0 } == ["last words"])
    }

    @Test func aMessageLargerThanTheClientTakesEndsTheConnection() async throws {
        let server = try await FakeLinkGateway.start(answersPings: true, greet: { String(repeating: "x", count: 70_000) })
        defer { server.stop() }
        let received = Atomic<Int>(0)
        let socket = try await ClientWebSocket.connect(to: server.clientAddress, configuration: .init(path: "/stream", maximumMessageSize: 1 << 16)) { _ in
            received.add(1, ordering: .relaxed)
        }
        socket.start()
        _ = try await withDeadline("the connection to end") { await socket.waitUntilEnded() }
        #expect(received.load(ordering: .relaxed) == 0)
    }
}

/// A gateway's end of device links in cleartext (`ws://`), on loopback: it records what the device
/// sends (pings, close codes), answers pings when told to, and may greet each link with a message
/// written right behind its answer to the upgrade.
private final class FakeLinkGateway: Sendable {
    struct Seen: Sendable {
        var pings = 0
        var closeCodes: [WebSocketErrorCode] = []
    }

    let address: String
    /// Where ``ClientWebSocket`` connects.
    let clientAddress: ClientWebSocket.Address
    private let channel: any Channel
    private let record: Recorder

    private init(address: String, clientAddress: ClientWebSocket.Address, channel: any Channel, record: Recorder) {
        self.address = address
        self.clientAddress = clientAddress
        self.channel = channel
        self.record = record
    }

    var seen: Seen { record.state.withLock { $0.seen } }

    /// How many links the server has taken (upgraded) so far.
    var linkCount: Int { record.state.withLock { $0.links.count } }

    static func start(answersPings: Bool, greeting: String? = nil, refuses: Bool = false) async throws -> FakeLinkGateway {
        try await start(answersPings: answersPings, refuses: refuses, greet: { greeting })
    }

    /// Starts the server; `greet` gives the message written right behind the answer to each upgrade.
    static func start(answersPings: Bool, refuses: Bool = false, transport: ClientWebSocketTests.Transport = .tcp,
                      greet: @escaping @Sendable () -> String?) async throws -> FakeLinkGateway {
        let record = Recorder()
        var tls: (server: NIOSSLContext, client: TLSConfiguration)?
        if transport == .tls {
            let authority = try GatewayCertificateAuthority(name: "Test WebSocket CA")
            let issued = try authority.issueServerCertificate(for: ["localhost", "127.0.0.1"])
            let server = TLSConfiguration.makeServerConfiguration(
                certificateChain: try NIOSSLCertificate.fromPEMBytes(Array(issued.certificatePEM.utf8)).map { .certificate($0) },
                privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(issued.privateKeyPEM.utf8), format: .pem))
            )
            var client = TLSConfiguration.makeClientConfiguration()
            client.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(try authority.certificatePEM.utf8)))
            tls = (try NIOSSLContext(configuration: server), client)
        }
        let serverContext = tls?.server
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                let upgrader = NIOWebSocketServerUpgrader(
                    shouldUpgrade: { channel, _ in channel.eventLoop.makeSucceededFuture(refuses ? nil : HTTPHeaders()) },
                    upgradePipelineHandler: { channel, _ in
                        record.add(channel)
                        return channel.eventLoop.makeCompletedFuture {
                            try channel.pipeline.syncOperations.addHandler(Frames(record: record, answersPings: answersPings))
                            guard let greeting = greet() else { return }
                            channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(string: greeting)), promise: nil)
                        }
                    }
                )
                let upgraded: @Sendable (ChannelHandlerContext) -> Void = { context in
                    context.pipeline.syncOperations.removeHandler(name: "refusal", promise: nil)
                }
                if let serverContext {
                    do { try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: serverContext)) } catch {
                        return channel.eventLoop.makeFailedFuture(error)
                    }
                }
                return channel.pipeline.configureHTTPServerPipeline(withServerUpgrade: (upgraders: [upgrader], completionHandler: upgraded)).flatMapThrowing {
                    // A request that is not upgraded gets 401 and the end of the connection.
                    try channel.pipeline.syncOperations.addHandler(Refusal(), name: "refusal")
                }
            }
        switch transport {
        case .unixSocket:
            let path = try makeTestDirectory().appendingPathComponent("ws.sock").path
            let channel = try await bootstrap.bind(unixDomainSocketPath: path).get()
            return FakeLinkGateway(address: "unix:\(path)", clientAddress: .unixSocket(path: path), channel: channel, record: record)
        case .tcp, .tls:
            let channel = try await bootstrap.bind(host: "127.0.0.1", port: 0).get()
            let port = try #require(channel.localAddress?.port)
            return FakeLinkGateway(address: "\(tls == nil ? "ws" : "wss")://127.0.0.1:\(port)/v1/device-link",
                                   clientAddress: .tcp(host: "localhost", port: port, tls: tls?.client), channel: channel, record: record)
        }
    }

    /// Ends every connection at once, without a close frame, as a server that died.
    func dropAll() {
        for link in record.state.withLock({ $0.links }) { link.close(promise: nil) }
    }

    /// Closes every link with `code`, as the gateway does a replaced one.
    func closeAll(code: WebSocketErrorCode) {
        for link in record.state.withLock({ $0.links }) {
            var data = ByteBuffer()
            data.write(webSocketErrorCode: code)
            link.writeAndFlush(WebSocketFrame(fin: true, opcode: .connectionClose, data: data), promise: nil)
        }
    }

    func stop() {
        channel.close(promise: nil)
        for link in record.state.withLock({ $0.links }) { link.close(promise: nil) }
    }

    private final class Recorder: Sendable {
        let state = Mutex<(seen: Seen, links: [any Channel])>((Seen(), []))
        func add(_ channel: any Channel) { state.withLock { $0.links.append(channel) } }
        func ping() { state.withLock { $0.seen.pings += 1 } }
        func close(_ code: WebSocketErrorCode) { state.withLock { $0.seen.closeCodes.append(code) } }
    }

    private final class Frames: ChannelInboundHandler {
        typealias InboundIn = WebSocketFrame
        typealias OutboundOut = WebSocketFrame
        let record: Recorder
        let answersPings: Bool

        init(record: Recorder, answersPings: Bool) {
            self.record = record
            self.answersPings = answersPings
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let frame = unwrapInboundIn(data)
            switch frame.opcode {
            case .ping:
                record.ping()
                if answersPings {
                    context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData)), promise: nil)
                }
            case .connectionClose:
                var data = frame.unmaskedData
                record.close(data.readWebSocketErrorCode() ?? .unknown(0))
                // Answered only by a gateway that answers at all; then the connection ends.
                guard answersPings else { return }
                let echoed = frame.unmaskedData
                let channel = context.channel
                context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: echoed)))
                    .whenComplete { _ in channel.close(promise: nil) }
            default:
                break
            }
        }
    }

    private final class Refusal: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard case .end = unwrapInboundIn(data) else { return }
            var headers = HTTPHeaders()
            headers.add(name: "content-length", value: "0")
            headers.add(name: "connection", value: "close")
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .unauthorized, headers: headers))), promise: nil)
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
        }
    }
}

/// A daemon's link to a gateway that welcomes the device and then answers nothing.
@Suite(.timeLimit(.minutes(1))) struct SilentGatewayTests {
    /// The link asks the gateway to note the device's apps as it comes up, and no answer comes: the
    /// daemon still stops when asked (the question gives up as the link ends, rather than hold the
    /// link's tasks open for ever).
    @Test func aDaemonWhoseGatewayNeverAnswersStillStops() async throws {
        let gateway = try await FakeLinkGateway.start(answersPings: true, greeting: #"{"type":"welcome","deviceID":"device-1","window":64}"#)
        defer { gateway.stop() }
        try await withDaemon(configure: { $0.gateway = .init(url: gateway.address, credential: "device-1.secret") }) { daemon in
            let link = try #require(daemon.link)
            var linked = link.linked.makeAsyncIterator()
            _ = await linked.next()
            #expect(link.isLinked)
        }
    }
}
