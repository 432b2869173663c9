import ConnectionLifecycle
import Foundation
package import Logging
package import NIOCore
import NIOSSL
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import NotificationCore
package import ServiceLifecycle
import Synchronization

/// The listener devices link to (`wss://…:2199/v1/device-link`): a WebSocket over TLS, on a port of
/// its own (the provider API's port speaks HTTP/2 only).
///
/// A link is served by handlers on its connection's event loop and holds no task of its own while it
/// is idle: with many thousands of devices linked, what each link holds is what the gateway's memory
/// is made of (BENCHMARKS.md, "Memory per linked device").
package final class DeviceLinkServer: Listener {
    /// How often the gateway pings a link, and how long it waits to hear anything before closing it
    /// (`Docs/device-link.md`, "Keep-alive").
    package struct KeepAlive: Sendable {
        package var interval: TimeAmount = .seconds(20)
        package var silenceLimit: TimeAmount = .seconds(60)
        /// How long a connection may take for its TLS handshake, and then again to become a link (its
        /// upgrade request, authenticated); then it is closed.
        package var openingTimeout: TimeAmount = .seconds(10)
        /// The most connections the listener keeps; `nil`, its share of the process's open files
        /// (``ConnectionBudget``). One beyond it closes the oldest that is not a link yet, or, with
        /// every one linked, is closed.
        package var maximumConnections: Int?
        package init() {}
    }


    private let links: DeviceLinks
    private let host: String
    private let port: Int
    private let tls: ProviderServer.Configuration.TLS?
    private let keepAlive: KeepAlive
    private let group: any EventLoopGroup
    private let logger: Logger
    private let listener = Mutex<(any Channel)?>(nil)
    private let lifecycle: ListenerLifecycle

    package init(
        links: DeviceLinks, host: String, port: Int, tls: ProviderServer.Configuration.TLS?, keepAlive: KeepAlive = KeepAlive(),
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton, logger: Logger
    ) {
        self.links = links
        self.host = host
        self.port = port
        self.tls = tls
        self.keepAlive = keepAlive
        self.group = group
        self.logger = logger
        // Once linked, a connection is kept alive by the link's pings (``KeepAlive``).
        lifecycle = ListenerLifecycle(
            capacity: keepAlive.maximumConnections ?? ConnectionBudget.now.capacity(of: .deviceLinks),
            deadlines: ConnectionDeadlines.Configuration(handshake: tls == nil ? nil : keepAlive.openingTimeout, opening: keepAlive.openingTimeout),
            listener: "device links", logger: logger
        )
    }

    /// The service that accepts device links for `links` until the group shuts down.
    ///
    /// - Parameters:
    ///   - tls: the server's certificate chain and key; nil listens in cleartext (`ws://`).
    ///   - onListening: called with the port once it listens.
    package static func service(
        links: DeviceLinks,
        host: String,
        port: Int,
        tls: ProviderServer.Configuration.TLS?,
        keepAlive: KeepAlive = KeepAlive(),
        grace: Duration = .seconds(5),
        logger: Logger,
        onListening: @escaping @Sendable (Int) -> Void = { _ in }
    ) -> any Service {
        ListenerService(server: DeviceLinkServer(links: links, host: host, port: port, tls: tls, keepAlive: keepAlive, logger: logger),
                        grace: grace, onListening: onListening)
    }

    /// Starts listening; returns the address it listens on.
    package func start() async throws -> SocketAddress {
        let tlsContexts = try tls.map { tls in
            try ListenerTLSContext(tls, listener: "device links", logger: logger) { try NIOSSLContext(configuration: $0.serverConfiguration(for: "device links' listener")) }
        }
        let links = self.links
        let keepAlive = self.keepAlive
        let lifecycle = self.lifecycle
        let bound = try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            // A link is idle nearly all its life: reads start small and grow when they fill.
            .childChannelOption(.recvAllocator, value: AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 512, maximum: 65536))
            .childChannelInitializer { channel in
                guard lifecycle.connections.admit(channel) != .refused else { return channel.eventLoop.makeSucceededVoidFuture() }
                return channel.eventLoop.makeCompletedFuture {
                    if let tlsContexts {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tlsContexts.current))
                    }
                    try channel.pipeline.syncOperations.addHandler(ConnectionDeadlineHandler(lifecycle.deadlines, connections: lifecycle.connections))
                    try Self.configureUpgrade(channel, links: links, keepAlive: keepAlive)
                }
            }
            .bind(host: host, port: port)
            .get()
        listener.withLock { $0 = bound }
        guard let address = bound.localAddress else { throw ProviderServerError("the device links' socket has no address") }
        logger.info("device links listening", metadata: ["port": .stringConvertible(address.port ?? port), "tls": .stringConvertible(tls != nil)])
        return address
    }

    /// Stops: no new links; each open one is closed with `1001` ("going away"), and the device
    /// links again once a gateway listens.
    package func stop(grace: Duration = .seconds(2)) async {
        let bound = listener.withLock { listener in
            defer { listener = nil }
            return listener
        }
        try? await bound?.close()
        links.closeAll(code: .goingAway, reason: "the gateway is stopping")
        let channels = lifecycle.connections.all.map(\.channel)
        let deadline = ContinuousClock.now + grace
        await Self.waitUntilClosed(channels, until: deadline)
        Self.closeAll(lifecycle.connections.all.map(\.channel))
    }

    /// HTTP/1 until a request to ``DeviceLink/path`` with a device's credential upgrades to a WebSocket;
    /// any other request is answered and the connection closed.
    private static func configureUpgrade(_ channel: any Channel, links: DeviceLinks, keepAlive: KeepAlive) throws {
        let upgrader = NIOWebSocketServerUpgrader(
            maxFrameSize: DeviceLink.maximumMessageSize,
            automaticErrorHandling: true,
            shouldUpgrade: { channel, head in
                guard isLinkPath(head.uri),
                      let credential = head.headers.first(name: "authorization").flatMap(bearer) else {
                    return channel.eventLoop.makeSucceededFuture(nil)
                }
                return channel.eventLoop.makeFutureWithTask {
                    await links.authenticate(credential) == nil ? nil : HTTPHeaders()
                }
            },
            upgradePipelineHandler: { channel, head in
                // The request was authenticated before its upgrade: the credential names the device.
                guard let deviceID = head.headers.first(name: "authorization").flatMap(bearer).flatMap(DeviceLinks.deviceID(in:)) else {
                    return channel.close()
                }
                let transport = WebSocketLinkTransport(channel: channel)
                let session = LinkSession(deviceID: deviceID, transport: transport)
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers([
                        NIOWebSocketFrameAggregator(minNonFinalFragmentSize: 1, maxAccumulatedFrameCount: 64, maxAccumulatedFrameSize: DeviceLink.maximumMessageSize),
                        DeviceLinkHandler(links: links, session: session, transport: transport, keepAlive: keepAlive),
                    ])
                }
            }
        )
        try channel.pipeline.syncOperations.configureHTTPServerPipeline(
            withServerUpgrade: (upgraders: [upgrader], completionHandler: { context in
                context.pipeline.syncOperations.removeHandler(name: DeviceLinkRefusal.name, promise: nil)
            }),
            // Requests HTTP/1 cannot read are answered by the guard: 431 for a header too large.
            withErrorHandling: false
        )
        // Opened and in use once upgraded (the guard says so); before that, within the opening
        // deadline, one request's answer, and what HTTP/1 cannot read answered 400 or 431.
        try channel.pipeline.syncOperations.addHandler(HTTP1RequestGuard(openedBy: .upgrade))
        try channel.pipeline.syncOperations.addHandler(DeviceLinkRefusal(), name: DeviceLinkRefusal.name)
    }

    /// Whether a request's target is ``DeviceLink/path`` (with a query or not).
    static func isLinkPath(_ uri: String) -> Bool {
        uri.split(separator: "?", maxSplits: 1).first == Substring(DeviceLink.path)
    }

    static func bearer(_ header: String) -> String? {
        guard header.utf8.count > 7, header.prefix(7).lowercased() == "bearer " else { return nil }
        return String(header.dropFirst(7))
    }
}

/// One device's link once upgraded: reads its frames, answers its pings, pings it when quiet, and
/// hands its messages to ``DeviceLinks``.
private final class DeviceLinkHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let links: DeviceLinks
    private let session: LinkSession
    private let transport: WebSocketLinkTransport
    private let keepAlive: DeviceLinkServer.KeepAlive
    private var lastHeard = NIODeadline.now()
    private var pinger: RepeatedTask?
    private let decoder = JSONDecoder()

    init(links: DeviceLinks, session: LinkSession, transport: WebSocketLinkTransport, keepAlive: DeviceLinkServer.KeepAlive) {
        self.links = links
        self.session = session
        self.transport = transport
        self.keepAlive = keepAlive
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        pinger = context.eventLoop.scheduleRepeatedTask(initialDelay: keepAlive.interval, delay: keepAlive.interval) { _ in
            handler.value.ping()
        }
        links.attach(session)
    }

    /// Also when the connection closes: its handlers are removed once it is inactive.
    func handlerRemoved(context: ChannelHandlerContext) {
        pinger?.cancel()
        pinger = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        links.detach(session)
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        lastHeard = .now()
        switch frame.opcode {
        case .text:
            // Reports, the link's largest messages (a few hundred a message), have a decoder of
            // their own: this loop also writes the device's pushes. Every other message, `JSONDecoder`.
            let bytes = frame.unmaskedData.readableBytesView
            guard let message = try? NotificationJSONReader.linkReport(from: bytes)
                    ?? JSONLimits.decode(DeviceLink.DeviceMessage.self, from: bytes, with: decoder) else {
                links.ignoredMalformedMessage(on: session)
                return
            }
            links.received(message, on: session)
        case .ping:
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData)), promise: nil)
        case .connectionClose:
            transport.peerClosed(frame.unmaskedData, session: session)
        case .binary:
            links.ignoredMalformedMessage(on: session)
        default:
            break
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    /// Pings the device, or closes a link that has been silent too long.
    private func ping() {
        guard NIODeadline.now() - lastHeard < keepAlive.silenceLimit else {
            session.close(code: .goingAway, reason: "silent")
            return
        }
        transport.channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .ping, data: ByteBuffer()), promise: nil)
    }
}

/// Answers a request that did not become a link: `404` off ``DeviceLink/path``, `401` without a
/// valid credential, `426` for a request that does not ask for a WebSocket. The connection then closes.
private final class DeviceLinkRefusal: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    static let name = "device-link-refusal"
    private var answer: (status: HTTPResponseStatus, message: String)?

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            if !DeviceLinkServer.isLinkPath(head.uri) {
                answer = (.notFound, "Devices link at \(DeviceLink.path).")
            } else if head.headers.first(name: "upgrade")?.lowercased() == "websocket" || head.headers.first(name: "authorization").flatMap(DeviceLinkServer.bearer) == nil {
                answer = (.unauthorized, "A device link needs `Authorization: Bearer <device id>.<secret>`, from `unotify gateway devices add`.")
            } else {
                answer = (.upgradeRequired, "A device link is a WebSocket: ask for `Upgrade: websocket`.")
            }
        case .body:
            break
        case .end:
            let (status, message) = answer ?? (.badRequest, "")
            let body = ByteBuffer(string: #"{"error":{"message":"# + DeviceLinkRefusal.quoted(message) + "}}\n")
            var headers = HTTPHeaders()
            headers.add(name: "content-type", value: "application/json")
            headers.add(name: "content-length", value: "\(body.readableBytes)")
            headers.add(name: "connection", value: "close")
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
        }
    }

    private static func quoted(_ text: String) -> String {
        String(decoding: (try? JSONEncoder().encode(text)) ?? Data("\"\"".utf8), as: UTF8.self)
    }
}
