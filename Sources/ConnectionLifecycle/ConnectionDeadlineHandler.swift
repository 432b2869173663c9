package import NIOCore
import NIOTLS

/// Says to the ``ConnectionDeadlineHandler`` ahead of it in the pipeline that the protocol's first
/// words arrived (an outbound user event: it travels towards the head).
package struct ConnectionOpened: Sendable {
    package init() {}
}

/// Says to the ``ConnectionDeadlineHandler`` ahead of it that the connection is a client's (its first
/// use): it is kept from then on, and no longer given up for a newer connection.
package struct ConnectionFirstUsed: Sendable {
    package init() {}
}

/// Tells the protocol, inbound, that its connection read nothing for the listener's idle time: it
/// may close it gracefully before the handler closes it.
package struct ConnectionIdle: Sendable {
    package init() {}
}

/// Carries out a connection's ``ConnectionDeadlines``: placed right after the TLS handler (or first,
/// without TLS), it sees the handshake complete, the reads, and the protocol's outbound
/// ``ConnectionOpened`` and ``ConnectionFirstUsed``; it keeps one timer, and closes the connection
/// that is late. It tells its listener's ``ListenerConnections`` of the first use.
package final class ConnectionDeadlineHandler: ChannelDuplexHandler, RemovableChannelHandler {
    package typealias InboundIn = NIOAny
    package typealias OutboundIn = NIOAny

    private var deadlines: ConnectionDeadlines
    private let connections: ListenerConnections?
    private var timer: Scheduled<Void>?
    /// Whether the listener was told of the first use.
    private var toldFirstUse = false

    package init(_ configuration: ConnectionDeadlines.Configuration, connections: ListenerConnections? = nil) {
        deadlines = ConnectionDeadlines(configuration: configuration, now: .now())
        self.connections = connections
    }

    package func handlerAdded(context: ChannelHandlerContext) {
        perform(deadlines.firstWakeUp, context: context)
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        deadlines.read(now: .now())
        context.fireChannelRead(data)
    }

    package func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted? = event as? TLSUserEvent {
            perform(deadlines.handshakeCompleted(now: .now()), context: context)
        }
        context.fireUserInboundEventTriggered(event)
    }

    package func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        switch event {
        case is ConnectionOpened:
            perform(deadlines.opened(now: .now()), context: context)
            promise?.succeed()
        case is ConnectionFirstUsed:
            perform(deadlines.firstUsed(now: .now()), context: context)
            promise?.succeed()
        default:
            context.triggerUserOutboundEvent(event, promise: promise)
        }
    }

    private func perform(_ action: ConnectionDeadlines.Action, context: ChannelHandlerContext) {
        if deadlines.stage == .inUse, !toldFirstUse {
            toldFirstUse = true
            connections?.firstUsed(context.channel)
        }
        switch action {
        case .none:
            break
        case .wakeUp(let deadline):
            arm(deadline, context: context)
        case .cancelTimer:
            timer?.cancel()
            timer = nil
        case .close:
            timer = nil
            context.close(promise: nil)
        case .signalIdle(let closeAt):
            arm(closeAt, context: context)
            context.fireUserInboundEventTriggered(ConnectionIdle())
        }
    }

    private func arm(_ deadline: NIODeadline, context: ChannelHandlerContext) {
        timer?.cancel()
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(deadline: deadline) {
            let (handler, context) = loopBound.value
            handler.timer = nil
            handler.perform(handler.deadlines.wokeUp(now: .now()), context: context)
        }
    }
}
