import NIOCore
import NIOTLS

/// Closes a connection that has not finished opening in time, so that connections that connect and
/// send nothing (or too little, too slowly) do not hold the gateway's sockets for ever.
///
/// What opening means depends on the listener: for the provider API, the TLS handshake (the handler
/// sits after the TLS handler and ends with its handshake); for device links, the TLS handshake and
/// the upgrade to a link (the handler is removed by the upgrade, ``removeOnTLSHandshake`` false).
/// Once open, a connection is the business of its own keep-alive and idle rules.
final class OpeningDeadline: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    static let name = "opening-deadline"

    private let timeout: TimeAmount
    private let removeOnTLSHandshake: Bool
    private var timer: Scheduled<Void>?

    init(timeout: TimeAmount, removeOnTLSHandshake: Bool) {
        self.timeout = timeout
        self.removeOnTLSHandshake = removeOnTLSHandshake
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let channel = context.channel
        timer = context.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        let opened = removeOnTLSHandshake && {
            if case .handshakeCompleted? = event as? TLSUserEvent { return true }
            return false
        }()
        context.fireUserInboundEventTriggered(event)
        if opened {
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
    }
}
