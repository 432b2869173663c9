package import NIOCore
package import NIOHTTP1

/// Answers what an HTTP/1 server's decoder refuses, where the server would say nothing: a request
/// whose header is over the decoder's limits gets `431 Request Header Fields Too Large` (unless an
/// earlier request's answer is still being written), and a connection's first request that is not
/// HTTP `400 Bad Request`, each with `Connection: close`. The rest of what the client sends is
/// read and dropped for a moment (closing at once, with its bytes unread, would reset the connection
/// and lose the answer), then the connection closes. A request's head (or, on a listener of
/// WebSocket links only, the upgrade) also tells the ``ConnectionDeadlineHandler`` that the connection
/// opened and is in use.
///
/// Placed right after the request decoder, or after a WebSocket upgrade handler (it leaves the
/// pipeline with the upgrade), so that it sees HTTP/1's own parts both ways.
package final class HTTP1RequestGuard: ChannelDuplexHandler, RemovableChannelHandler {
    package typealias InboundIn = HTTPServerRequestPart
    package typealias InboundOut = HTTPServerRequestPart
    package typealias OutboundIn = HTTPServerResponsePart
    package typealias OutboundOut = HTTPServerResponsePart

    /// How long a refused client's bytes are read and dropped before the connection closes.
    static let lingering: TimeAmount = .seconds(2)

    /// What opens a connection, and ends its opening deadline.
    package enum Opening: Sendable {
        /// A request's head: any HTTP/1 request is a use of the listener.
        case requestHead
        /// Its upgrade to a WebSocket: a request that is not one is answered and the connection
        /// closed, within the opening deadline (a head with a body that never comes keeps nothing open).
        case upgrade
    }

    private let opening: Opening
    private var opened = false
    /// Requests whose head was read and whose answer has not ended: an answer of this handler's
    /// would cut into theirs.
    private var unanswered = 0
    private var refusing = false

    package init(openedBy opening: Opening = .requestHead) {
        self.opening = opening
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refusing else { return }
        if case .head = unwrapInboundIn(data) {
            unanswered += 1
            if !opened, opening == .requestHead {
                opened = true
                context.triggerUserOutboundEvent(ConnectionOpened(), promise: nil)
                context.triggerUserOutboundEvent(ConnectionFirstUsed(), promise: nil)
            }
        }
        context.fireChannelRead(data)
    }

    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { unanswered = max(0, unanswered - 1) }
        context.write(data, promise: promise)
    }

    package func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        context.fireUserInboundEventTriggered(event)
        if event is HTTPServerUpgradeEvents {
            // A WebSocket now (its upgrade request went to the upgrade handler, not here): open and
            // in use, and no HTTP/1 to guard.
            if !opened {
                opened = true
                context.triggerUserOutboundEvent(ConnectionOpened(), promise: nil)
                context.triggerUserOutboundEvent(ConnectionFirstUsed(), promise: nil)
            }
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
    }

    package func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if refusing { return }
        // A header too large, or anything before the connection opened (no server handler is
        // there yet to answer it), is answered here; the server answers the rest as it does.
        guard let parserError = error as? HTTPParserError, !opened || (parserError == .headerOverflow && unanswered == 0) else {
            context.fireErrorCaught(error)
            return
        }
        refusing = true
        let status: HTTPResponseStatus = parserError == .headerOverflow ? .requestHeaderFieldsTooLarge : .badRequest
        let head = HTTPResponseHead(version: .http1_1, status: status, headers: ["Connection": "close", "Content-Length": "0"])
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
            channel.close(mode: .output, promise: nil)
            channel.eventLoop.scheduleTask(in: Self.lingering) { channel.close(promise: nil) }
        }
    }
}
