import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket

/// The WebSocket of one device link, the daemon's end (`Docs/device-link.md`): its messages are read
/// on the connection's event loop and handed to `receive` there, and written from any thread, so that
/// no task stands between the socket and what the daemon does with a push.
///
/// It pings the gateway every 20 s and closes a link it has heard nothing from for 60 s; it answers
/// the gateway's pings and its close frame (echoing the code), and ``close(code:)`` sends one and
/// waits for the gateway's answer (2 s at most) before it ends the connection.
final class LinkSocket: Sendable {
    /// How often the device pings, and how long it waits to hear anything before closing the link.
    struct KeepAlive: Sendable {
        var interval: TimeAmount = .seconds(20)
        var silenceLimit: TimeAmount = .seconds(60)
        /// How long connecting may take, the TLS handshake and the upgrade included.
        var openingTimeout: TimeAmount = .seconds(10)
    }

    /// The largest message the gateway may send, fragments put together.
    static let maximumMessageSize = 1 << 16

    private let channel: any Channel
    private let ended: EventLoopFuture<WebSocketErrorCode?>

    private init(channel: any Channel, ended: EventLoopFuture<WebSocketErrorCode?>) {
        self.channel = channel
        self.ended = ended
    }

    private enum Upgrade {
        case upgraded(any Channel, EventLoopFuture<WebSocketErrorCode?>)
        case refused
    }

    /// Connects to `address` (`wss://host:port/path` or `ws://…`), asking for the link with
    /// `Authorization: Bearer <credential>`.
    ///
    /// - Parameter receive: called with each text message, whole, on the connection's event loop, in
    ///   order, from ``start()`` on (what arrives before is kept for it); it must not block.
    /// - Throws: `DaemonError` `gatewayUnavailable` when the gateway cannot be reached or refuses the link.
    static func connect(
        to address: String,
        credential: String,
        tls: TLSConfiguration,
        keepAlive: KeepAlive = KeepAlive(),
        receive: @escaping @Sendable (ByteBuffer) -> Void
    ) async throws -> LinkSocket {
        guard let url = URL(string: address), let scheme = url.scheme?.lowercased(), scheme == "wss" || scheme == "ws",
              let host = url.host, !host.isEmpty else {
            throw DaemonError(.invalidRequest, "\(address) is not a device-link address (wss://host:port).")
        }
        let port = url.port ?? (scheme == "wss" ? 443 : 80)
        let target = (url.path.isEmpty ? "/" : url.path) + (url.query.map { "?" + $0 } ?? "")
        let sslContext = scheme == "wss" ? try NIOSSLContext(configuration: tls) : nil
        // A name is sent as the server's name (SNI) and checked against its certificate; an address is
        // checked against the certificate's addresses, and cannot be sent as a name.
        let serverName = (try? SocketAddress(ipAddress: host, port: 0)) == nil ? host : nil
        let upgrade: EventLoopFuture<Upgrade>
        do {
            upgrade = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
                .connectTimeout(keepAlive.openingTimeout)
                .connect(host: host, port: port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        // Connected, but not a link in time (a peer that never answers): closed.
                        let deadline = channel.eventLoop.scheduleTask(in: keepAlive.openingTimeout) { channel.close(promise: nil) }
                        let upgrader = NIOTypedWebSocketClientUpgrader<Upgrade>(maxFrameSize: maximumMessageSize) { channel, _ in
                            channel.eventLoop.makeCompletedFuture {
                                deadline.cancel()
                                let frames = LinkFrames(keepAlive: keepAlive, receive: receive, ended: channel.eventLoop.makePromise())
                                try channel.pipeline.syncOperations.addHandlers([
                                    NIOWebSocketFrameAggregator(minNonFinalFragmentSize: 0, maxAccumulatedFrameCount: 64,
                                                                maxAccumulatedFrameSize: maximumMessageSize),
                                    frames,
                                ])
                                return .upgraded(channel, frames.ended.futureResult)
                            }
                        }
                        var headers = HTTPHeaders()
                        headers.add(name: "Host", value: url.port.map { "\(host):\($0)" } ?? host)
                        headers.add(name: "Authorization", value: "Bearer \(credential)")
                        headers.add(name: "Content-Length", value: "0")
                        let configuration = NIOTypedHTTPClientUpgradeConfiguration<Upgrade>(
                            upgradeRequestHead: HTTPRequestHead(version: .http1_1, method: .GET, uri: target, headers: headers),
                            upgraders: [upgrader],
                            notUpgradingCompletionHandler: { channel in
                                channel.eventLoop.makeCompletedFuture {
                                    deadline.cancel()
                                    channel.close(promise: nil)
                                    return .refused
                                }
                            }
                        )
                        if let sslContext {
                            try channel.pipeline.syncOperations.addHandler(try NIOSSLClientHandler(context: sslContext, serverHostname: serverName))
                        }
                        // The gateway's welcome may come in the same read as its answer to the upgrade.
                        var pipeline = NIOUpgradableHTTPClientPipelineConfiguration(upgradeConfiguration: configuration)
                        pipeline.leftOverBytesStrategy = .forwardBytes
                        return try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(configuration: pipeline)
                    }
                }
            switch try await upgrade.get() {
            case .upgraded(let channel, let ended):
                return LinkSocket(channel: channel, ended: ended)
            case .refused:
                throw DaemonError(.gatewayUnavailable, "The gateway at \(address) refused the link: check the device's credential.")
            }
        } catch let error as DaemonError {
            throw error
        } catch {
            throw DaemonError(.gatewayUnavailable, "The gateway at \(address) could not be reached (\(error)).")
        }
    }

    /// Hands the messages received so far, and from now on, to `receive`.
    func start() {
        let channel = self.channel
        channel.eventLoop.execute {
            (try? channel.pipeline.syncOperations.handler(type: LinkFrames.self))?.start()
        }
    }

    /// Sends one text message; messages leave in the order of the calls. A failed write closes the link.
    func send(_ text: String) {
        channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: ByteBuffer(string: text)), promise: nil)
    }

    /// Sends a close frame with `code` and `reason` (unless one was sent) and ends the connection once
    /// the gateway answers, or after 2 s.
    func close(code: WebSocketErrorCode, reason: String = "") {
        let channel = self.channel
        channel.eventLoop.execute {
            (try? channel.pipeline.syncOperations.handler(type: LinkFrames.self))?.sendClose(code, reason: reason, on: channel)
        }
    }

    /// Returns once the connection has ended, with the code of the gateway's close frame if it sent one.
    /// Cancelling the wait ends the connection at once, without a close handshake.
    func waitUntilEnded() async -> WebSocketErrorCode? {
        let channel = self.channel
        return await withTaskCancellationHandler {
            (try? await ended.get()) ?? nil
        } onCancel: {
            channel.close(promise: nil)
        }
    }
}

/// A link's frames once upgraded: text messages to `receive`, pings answered, the gateway pinged when
/// quiet, close frames answered.
private final class LinkFrames: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    let ended: EventLoopPromise<WebSocketErrorCode?>
    private let keepAlive: LinkSocket.KeepAlive
    private let receive: @Sendable (ByteBuffer) -> Void
    private var lastHeard = NIODeadline.now()
    private var pinger: RepeatedTask?
    private var closeSent = false
    private var closeCode: WebSocketErrorCode?
    private var isEnded = false
    /// Messages received before ``start()``, kept for it.
    private var early: [ByteBuffer]? = []

    init(keepAlive: LinkSocket.KeepAlive, receive: @escaping @Sendable (ByteBuffer) -> Void, ended: EventLoopPromise<WebSocketErrorCode?>) {
        self.keepAlive = keepAlive
        self.receive = receive
        self.ended = ended
    }

    func handlerAdded(context: ChannelHandlerContext) {
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
        ended.succeed(closeCode)
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
                // The answer echoes the gateway's code; then the connection ends.
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
    }

    /// Sends a close frame (once), and ends the connection if the gateway has not answered in 2 s.
    func sendClose(_ code: WebSocketErrorCode, reason: String = "", on channel: any Channel) {
        guard !closeSent else { return }
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

    /// Pings the gateway, or closes a link it has heard nothing from for too long.
    private func ping(_ channel: any Channel) {
        guard NIODeadline.now() - lastHeard < keepAlive.silenceLimit else {
            sendClose(.goingAway, on: channel)
            return
        }
        channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .ping, maskKey: .random(), data: ByteBuffer()), promise: nil)
    }
}
