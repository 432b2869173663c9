package import NIOCore
import NIOHTTP1
import NIOPosix
package import NIOSSL
package import NIOWebSocket

/// The client's end of a WebSocket, the one path of the daemon's device link, the apps' event streams
/// and the watch: its messages are read on the connection's event loop and handed to `receive` there,
/// and written from any thread, so that no task stands between the socket and what is done with a
/// message.
///
/// It answers pings and the server's close frame (echoing its code), pings a quiet server when asked
/// to (``KeepAlive``) and closes a connection it has heard nothing from for too long; ``close(code:reason:)``
/// sends a close frame and waits for the server's answer (2 s at most) before it ends the connection.
/// Messages, fragments put together, are at most ``Configuration/maximumMessageSize``: a larger one
/// ends the connection.
package final class ClientWebSocket: Sendable {
    /// Where the server is.
    package enum Address: Sendable {
        /// TCP, over TLS when `tls` is given (`wss://`), else in the clear (`ws://`).
        case tcp(host: String, port: Int, tls: TLSConfiguration?)
        /// A Unix domain socket (the daemon's local API).
        case unixSocket(path: String)
    }

    /// A quiet server is pinged every `interval`; one silent for `silenceLimit` is closed (`goingAway`).
    package struct KeepAlive: Sendable, Hashable {
        package var interval: TimeAmount
        package var silenceLimit: TimeAmount

        package init(interval: TimeAmount = .seconds(20), silenceLimit: TimeAmount = .seconds(60)) {
            self.interval = interval
            self.silenceLimit = silenceLimit
        }
    }

    package struct Configuration: Sendable {
        /// The request's target, such as `/v1/link`.
        package var path: String
        /// Sent with the upgrade request, after `Host`.
        package var headers: [(name: String, value: String)]
        /// The largest message, fragments put together, the client takes.
        package var maximumMessageSize: Int
        /// The client's own pings; `nil` when the server pings (the local API does).
        package var keepAlive: KeepAlive?
        /// How long connecting may take, the TLS handshake and the upgrade included.
        package var openingTimeout: TimeAmount
        /// The server's name, when the address reaches it by another (a name this machine does not
        /// resolve to it): sent in `Host` and as SNI, and what its certificate is checked against.
        package var serverName: String?

        package init(path: String, headers: [(name: String, value: String)] = [], maximumMessageSize: Int, keepAlive: KeepAlive? = nil,
                     openingTimeout: TimeAmount = .seconds(10)) {
            self.path = path
            self.headers = headers
            self.maximumMessageSize = maximumMessageSize
            self.keepAlive = keepAlive
            self.openingTimeout = openingTimeout
        }
    }

    private let channel: any Channel
    /// Held here, not looked up in the pipeline: a connection that ended before ``start()`` has no
    /// handlers left, and its messages must still reach `receive`.
    private let frames: NIOLoopBound<ClientFrames>
    private let ended: EventLoopFuture<WebSocketErrorCode?>

    private init(channel: any Channel, frames: NIOLoopBound<ClientFrames>, ended: EventLoopFuture<WebSocketErrorCode?>) {
        self.channel = channel
        self.frames = frames
        self.ended = ended
    }

    private enum Upgrade {
        case upgraded(any Channel, NIOLoopBound<ClientFrames>, EventLoopFuture<WebSocketErrorCode?>)
        case refused
    }

    deinit {
        // Never started: its end is reported to whoever still waits for it, its messages to no one.
        let frames = self.frames
        channel.eventLoop.execute { frames.value.abandon() }
    }

    /// Completes once the connection itself is closed, whether or not ``start()`` was called.
    package var connectionClosed: EventLoopFuture<Void> { channel.closeFuture }

    /// Connects and asks for the WebSocket.
    ///
    /// - Parameter receive: called with each text message, whole, on the connection's event loop, in
    ///   order, from ``start()`` on (what arrives before, even with the server's answer to the
    ///   upgrade, is kept for it); it must not block.
    /// - Throws: ``ClientWebSocketError``: `unreachable`, or `refused` when the server answers the
    ///   upgrade with something else (a wrong credential).
    package static func connect(
        to address: Address, configuration: Configuration, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        receive: @escaping @Sendable (ByteBuffer) -> Void
    ) async throws(ClientWebSocketError) -> ClientWebSocket {
        let host: String
        switch address {
        case .tcp(let address, let port, _):
            let name = configuration.serverName ?? address
            host = port == 443 || port == 80 ? name : "\(name):\(port)"
        case .unixSocket: host = "localhost"
        }
        let sslContext: NIOSSLContext?
        do {
            if case .tcp(_, _, let tls?) = address { sslContext = try NIOSSLContext(configuration: tls) } else { sslContext = nil }
        } catch {
            throw ClientWebSocketError(.unreachable, "its TLS configuration cannot be used (\(error))")
        }
        let initialize: @Sendable (any Channel) -> EventLoopFuture<EventLoopFuture<Upgrade>> = { channel in
            channel.eventLoop.makeCompletedFuture {
                // Connected, but not a WebSocket in time (a peer that never answers): closed.
                let deadline = channel.eventLoop.scheduleTask(in: configuration.openingTimeout) { channel.close(promise: nil) }
                let upgrader = NIOTypedWebSocketClientUpgrader<Upgrade>(maxFrameSize: configuration.maximumMessageSize) { channel, _ in
                    channel.eventLoop.makeCompletedFuture {
                        deadline.cancel()
                        let frames = ClientFrames(keepAlive: configuration.keepAlive, receive: receive, ended: channel.eventLoop.makePromise())
                        try channel.pipeline.syncOperations.addHandlers([
                            NIOWebSocketFrameAggregator(minNonFinalFragmentSize: 0, maxAccumulatedFrameCount: 64,
                                                        maxAccumulatedFrameSize: configuration.maximumMessageSize),
                            frames,
                        ])
                        return .upgraded(channel, NIOLoopBound(frames, eventLoop: channel.eventLoop), frames.ended.futureResult)
                    }
                }
                var headers = HTTPHeaders()
                headers.add(name: "Host", value: host)
                for (name, value) in configuration.headers { headers.add(name: name, value: value) }
                headers.add(name: "Content-Length", value: "0")
                let upgrade = NIOTypedHTTPClientUpgradeConfiguration<Upgrade>(
                    upgradeRequestHead: HTTPRequestHead(version: .http1_1, method: .GET, uri: configuration.path, headers: headers),
                    upgraders: [upgrader],
                    notUpgradingCompletionHandler: { channel in
                        channel.eventLoop.makeCompletedFuture {
                            deadline.cancel()
                            channel.close(promise: nil)
                            return .refused
                        }
                    }
                )
                if let sslContext, case .tcp(let address, _, _) = address {
                    let name = configuration.serverName ?? address
                    // A name is sent as the server's name (SNI) and checked against its certificate; an
                    // address is checked against the certificate's addresses, and cannot be sent as a name.
                    let serverName = (try? SocketAddress(ipAddress: name, port: 0)) == nil ? name : nil
                    try channel.pipeline.syncOperations.addHandler(try NIOSSLClientHandler(context: sslContext, serverHostname: serverName))
                }
                // The server's first message may come in the same read as its answer to the upgrade.
                var pipeline = NIOUpgradableHTTPClientPipelineConfiguration(upgradeConfiguration: upgrade)
                pipeline.leftOverBytesStrategy = .forwardBytes
                return try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(configuration: pipeline)
            }
        }
        let upgrade: EventLoopFuture<Upgrade>
        do {
            let bootstrap = ClientBootstrap(group: group).connectTimeout(configuration.openingTimeout)
            switch address {
            case .tcp(let name, let port, _):
                upgrade = try await bootstrap.channelOption(.socketOption(.tcp_nodelay), value: 1)
                    .connect(host: name, port: port, channelInitializer: initialize)
            case .unixSocket(let path):
                upgrade = try await bootstrap.connect(unixDomainSocketPath: path, channelInitializer: initialize)
            }
        } catch {
            throw ClientWebSocketError(.unreachable, "\(error)")
        }
        let upgraded: Upgrade
        do {
            upgraded = try await upgrade.get()
        } catch {
            throw ClientWebSocketError(.unreachable, "\(error)")
        }
        switch upgraded {
        case .upgraded(let channel, let frames, let ended):
            return ClientWebSocket(channel: channel, frames: frames, ended: ended)
        case .refused:
            throw ClientWebSocketError(.refused, "the server answered the upgrade with something else")
        }
    }

    /// Hands the messages received so far, and from now on, to `receive`, even when the connection
    /// has already ended. The end is reported (``whenEnded(_:)``, ``waitUntilEnded()``) only after
    /// this and after every message received before the end.
    package func start() {
        let frames = self.frames
        channel.eventLoop.execute { frames.value.start() }
    }

    /// Sends one text message without waiting for it to be written: messages leave in the order of the
    /// calls. A failed write ends the connection.
    package func send(_ text: String) {
        channel.writeAndFlush(Self.textFrame(ByteBuffer(string: text)), promise: nil)
    }

    /// Sends one text message of these bytes, as ``send(_:)-(String)``.
    package func send(_ bytes: [UInt8]) {
        channel.writeAndFlush(Self.textFrame(ByteBuffer(bytes: bytes)), promise: nil)
    }

    /// Sends one text message and returns once it is written.
    package func sendAndWait(_ text: String) async throws {
        try await channel.writeAndFlush(Self.textFrame(ByteBuffer(string: text)))
    }

    private static func textFrame(_ data: ByteBuffer) -> WebSocketFrame {
        WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: data)
    }

    /// Sends a close frame with `code` and `reason` (unless one was sent) and ends the connection once
    /// the server answers, or after 2 s.
    package func close(code: WebSocketErrorCode, reason: String = "") {
        let channel = self.channel
        let frames = self.frames
        channel.eventLoop.execute { frames.value.sendClose(code, reason: reason, on: channel) }
    }

    /// Calls `body` once the connection has ended and ``start()`` was called, with the code of the
    /// server's close frame if it sent one, on the connection's event loop.
    package func whenEnded(_ body: @escaping @Sendable (WebSocketErrorCode?) -> Void) {
        ended.whenComplete { body((try? $0.get()) ?? nil) }
    }

    /// Returns once the connection has ended and ``start()`` was called, with the code of the server's
    /// close frame if it sent one. Cancelling the wait ends the connection at once, without a close
    /// handshake.
    package func waitUntilEnded() async -> WebSocketErrorCode? {
        let channel = self.channel
        let ended = self.ended
        return await withTaskCancellationHandler {
            (try? await ended.get()) ?? nil
        } onCancel: {
            channel.close(promise: nil)
        }
    }
}

/// Why a WebSocket could not be opened.
package struct ClientWebSocketError: Error, Sendable, CustomStringConvertible {
    /// What went wrong; new codes can be added.
    package struct Code: Hashable, Sendable {
        private let name: String
        /// The server could not be reached, or did not answer in time.
        package static let unreachable = Code(name: "unreachable")
        /// The server answered the upgrade with something else.
        package static let refused = Code(name: "refused")
    }

    package let code: Code
    package let detail: String

    init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    package var description: String { detail }
}

/// A WebSocket's frames once upgraded: text messages to `receive`, pings answered, the server pinged
/// when quiet (if asked), close frames answered.
private final class ClientFrames: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    let ended: EventLoopPromise<WebSocketErrorCode?>
    private let keepAlive: ClientWebSocket.KeepAlive?
    private let receive: @Sendable (ByteBuffer) -> Void
    private var lastHeard = NIODeadline.now()
    private var pinger: RepeatedTask?
    private var closeSent = false
    private var closeCode: WebSocketErrorCode?
    private var isEnded = false
    /// Messages received before ``start()``, kept for it.
    private var early: [ByteBuffer]? = []

    init(keepAlive: ClientWebSocket.KeepAlive?, receive: @escaping @Sendable (ByteBuffer) -> Void, ended: EventLoopPromise<WebSocketErrorCode?>) {
        self.keepAlive = keepAlive
        self.receive = receive
        self.ended = ended
    }

    func handlerAdded(context: ChannelHandlerContext) {
        guard let keepAlive else { return }
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        let channel = context.channel
        pinger = context.eventLoop.scheduleRepeatedTask(initialDelay: keepAlive.interval, delay: keepAlive.interval) { _ in
            handler.value.ping(channel)
        }
    }

    /// Also when the connection closes: its handlers are removed once it is inactive.
    func handlerRemoved(context: ChannelHandlerContext) {
        end()
    }

    func channelInactive(context: ChannelHandlerContext) {
        end()
        context.fireChannelInactive()
    }

    private func end() {
        pinger?.cancel()
        pinger = nil
        guard !isEnded else { return }
        isEnded = true
        // Before start(), the end waits for the messages that came before it.
        if early == nil { ended.succeed(closeCode) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        lastHeard = .now()
        switch frame.opcode {
        case .text:
            if early != nil { early!.append(frame.unmaskedData) } else { receive(frame.unmaskedData) }
        case .ping:
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, maskKey: .random(), data: frame.unmaskedData)),
                                  promise: nil)
        case .connectionClose:
            var data = frame.unmaskedData
            closeCode = data.readWebSocketErrorCode()
            if closeSent {
                context.close(promise: nil)
            } else {
                // The answer echoes the server's code; then the connection ends.
                closeSent = true
                let channel = context.channel
                context.writeAndFlush(wrapOutboundOut(Self.closeFrame(closeCode, on: channel))).whenComplete { _ in channel.close(promise: nil) }
            }
        default:
            break
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    func start() {
        guard let early else { return }
        self.early = nil
        early.forEach(receive)
        if isEnded { ended.succeed(closeCode) }
    }

    func abandon() {
        guard early != nil else { return }
        early = nil
        if isEnded { ended.succeed(closeCode) }
    }

    /// Sends a close frame (once), and ends the connection if the server has not answered in 2 s.
    func sendClose(_ code: WebSocketErrorCode, reason: String = "", on channel: any Channel) {
        guard !closeSent, !isEnded else { return }
        closeSent = true
        channel.writeAndFlush(Self.closeFrame(code, reason: reason, on: channel), promise: nil)
        channel.eventLoop.scheduleTask(in: .seconds(2)) { channel.close(promise: nil) }
    }

    /// A close frame with `code` (none: an empty one) and `reason` (cut to the 123 bytes a close
    /// frame holds, on a character's boundary), masked as a client's frames are.
    private static func closeFrame(_ code: WebSocketErrorCode?, reason: String = "", on channel: any Channel) -> WebSocketFrame {
        var data = channel.allocator.buffer(capacity: 2 + reason.utf8.count)
        if let code {
            data.write(webSocketErrorCode: code)
            var cut = Substring(reason)
            while cut.utf8.count > 123 { cut = cut.dropLast() }
            data.writeString(String(cut))
        }
        return WebSocketFrame(fin: true, opcode: .connectionClose, maskKey: .random(), data: data)
    }

    /// Pings the server, or closes a connection it has heard nothing from for too long.
    private func ping(_ channel: any Channel) {
        guard let keepAlive else { return }
        guard NIODeadline.now() - lastHeard < keepAlive.silenceLimit else {
            sendClose(.goingAway, on: channel)
            return
        }
        channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .ping, maskKey: .random(), data: ByteBuffer()), promise: nil)
    }
}
