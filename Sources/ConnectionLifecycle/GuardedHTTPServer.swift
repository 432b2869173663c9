package import Hummingbird
package import HummingbirdCore
package import HummingbirdWebSocket
package import Logging
package import NIOCore
import NIOHTTP1

/// What a listener holds its connections to: how many it keeps, and the deadlines of each.
package struct ListenerLifecycle: Sendable {
    package let connections: ListenerConnections
    package let deadlines: ConnectionDeadlines.Configuration

    /// - Parameters:
    ///   - listener: what the listener is, for the log (`"device links"`).
    ///   - logger: where refusals are said (a warning, at most once a minute); nowhere without one.
    package init(capacity: Int, deadlines: ConnectionDeadlines.Configuration, listener: String = "", logger: Logger? = nil) {
        var onRefused: (@Sendable (Int) -> Void)?
        if let logger {
            onRefused = { refused in
                logger.warning("a listener is full: every connection it keeps is in use, and new ones are refused", metadata: [
                    "listener": .string(listener), "capacity": .stringConvertible(capacity), "refused": .stringConvertible(refused),
                ])
            }
        }
        connections = ListenerConnections(capacity: capacity, onRefused: onRefused)
        self.deadlines = deadlines
    }

    /// Admits a connection just accepted, with its deadlines as the pipeline's first handler (for a
    /// listener without TLS); false if it was refused (and is closing).
    package func take(_ channel: any Channel) throws -> Bool {
        guard connections.admit(channel) != .refused else { return false }
        try channel.pipeline.syncOperations.addHandler(ConnectionDeadlineHandler(deadlines, connections: connections), position: .first)
        return true
    }

    /// The deadlines of the local API, the web center and the metrics endpoint: 10 s for a request's
    /// head, then the HTTP/1 server's keep-alive (``httpIdleTimeout``) and the WebSockets' pings.
    package static let httpDeadlines = ConnectionDeadlines.Configuration(handshake: nil, opening: .seconds(10))
    /// How long an HTTP/1 connection waits for its next request, past AsyncHTTPClient's 60 s pool.
    package static let httpIdleTimeout: TimeAmount = .seconds(120)
}

/// A server child channel (Hummingbird's) whose connections a ``ListenerLifecycle`` holds: each is
/// admitted or refused as it is accepted, gets its deadlines, and an ``HTTP1RequestGuard``.
struct GuardedChildChannel<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value

    /// Where the request guard goes once the base has set the pipeline up.
    enum GuardPlacement: Sendable {
        /// Last: after a WebSocket upgrade handler, which the HTTP/1 handlers follow.
        case last
        /// Right after the request decoder.
        case afterRequestDecoder
    }

    let base: Base
    let lifecycle: ListenerLifecycle
    let placement: GuardPlacement

    struct Refused: Error {}

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        do {
            guard try lifecycle.take(channel) else { return channel.eventLoop.makeFailedFuture(Refused()) }
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        return base.setup(channel: channel, logger: logger).flatMapThrowing { value in
            switch placement {
            case .last:
                try channel.pipeline.syncOperations.addHandler(HTTP1RequestGuard())
            case .afterRequestDecoder:
                let decoder = try channel.pipeline.syncOperations.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
                try channel.pipeline.syncOperations.addHandler(HTTP1RequestGuard(), position: .after(decoder))
            }
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}

extension HTTPServerBuilder {
    /// HTTP/1 with WebSocket upgrades, as `http1WebSocketUpgrade(webSocketRouter:configuration:)`,
    /// its connections held by `lifecycle`.
    package static func http1WebSocketUpgrade<WebSocketRouter: HTTPResponderBuilder & _HB_SendableMetatype>(
        webSocketRouter: WebSocketRouter, configuration: HTTP1WebSocketUpgradeChannel.Configuration = .init(), lifecycle: ListenerLifecycle
    ) -> HTTPServerBuilder where WebSocketRouter.Responder.Context: WebSocketRequestContext {
        let webSocketResponder = webSocketRouter.buildResponder()
        var http1 = configuration.http1
        http1.idleTimeout = http1.idleTimeout ?? ListenerLifecycle.httpIdleTimeout
        let held = HTTP1WebSocketUpgradeChannel.Configuration(http1: http1, ws: configuration.ws)
        return HTTPServerBuilder { responder in
            GuardedChildChannel(base: HTTP1WebSocketUpgradeChannel(responder: responder, webSocketResponder: webSocketResponder, configuration: held),
                                lifecycle: lifecycle, placement: .last)
        }
    }

    /// HTTP/1, as `http1(configuration:)`, its connections held by `lifecycle`.
    package static func http1(configuration: HTTP1Channel.Configuration = .init(), lifecycle: ListenerLifecycle) -> HTTPServerBuilder {
        var configuration = configuration
        configuration.idleTimeout = configuration.idleTimeout ?? ListenerLifecycle.httpIdleTimeout
        let held = configuration
        return HTTPServerBuilder { responder in
            GuardedChildChannel(base: HTTP1Channel(responder: responder, configuration: held), lifecycle: lifecycle, placement: .afterRequestDecoder)
        }
    }
}
