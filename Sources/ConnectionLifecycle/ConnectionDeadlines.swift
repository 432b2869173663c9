package import NIOCore

/// When a connection must have reached its next stage, as a value: the shell
/// (``ConnectionDeadlineHandler``) tells it what happened and carries out what it decides.
///
/// A connection goes through, in order:
/// 1. its TLS handshake (skipped without TLS);
/// 2. its opening: the protocol's first words (HTTP/2's preface and first SETTINGS, an HTTP/1
///    request's head, a WebSocket upgrade);
/// 3. its first use: what makes it a client's and not a stranger's (a provider's first request with a
///    token the gateway takes; for most listeners the opening itself);
/// 4. its use, while it reads something at least every ``Configuration/idle``; past that, the protocol
///    is told (it may close gracefully: HTTP/2's GOAWAY) and the connection closes after
///    ``Configuration/idleGrace``.
///
/// A connection late for a stage is closed. Only reads count as use: a client that stopped reading
/// and writing is idle, whatever this side sends it.
package struct ConnectionDeadlines: Sendable {
    /// The deadlines of a listener's connections.
    package struct Configuration: Sendable, Hashable {
        /// Time for the TLS handshake, from the connection; `nil` for a listener without TLS.
        package var handshake: TimeAmount?
        /// Time for the opening, from the handshake (or the connection).
        package var opening: TimeAmount
        /// Time for the first use, from the opening; `nil` when the opening is the first use.
        package var firstUse: TimeAmount?
        /// Time a connection in use may go without reading anything; `nil` when the protocol keeps
        /// its connections alive itself (a WebSocket's pings, an HTTP/1 keep-alive timeout).
        package var idle: TimeAmount?
        /// Time from telling the protocol a connection is idle to closing it.
        package var idleGrace: TimeAmount

        package init(handshake: TimeAmount?, opening: TimeAmount, firstUse: TimeAmount? = nil, idle: TimeAmount? = nil,
                     idleGrace: TimeAmount = .seconds(5)) {
            self.handshake = handshake
            self.opening = opening
            self.firstUse = firstUse
            self.idle = idle
            self.idleGrace = idleGrace
        }
    }

    /// Where a connection is.
    package enum Stage: Sendable, Hashable {
        case handshaking
        case opening
        case awaitingFirstUse
        case inUse
        /// Told it is idle; closes at its deadline.
        case closingIdle
        case closed
    }

    /// What the shell must do.
    package enum Action: Sendable, Hashable {
        /// Nothing now; the timer, if any, stays as it is.
        case none
        /// (Re)arm the one timer at `deadline`.
        case wakeUp(at: NIODeadline)
        /// No deadline any more: cancel the timer.
        case cancelTimer
        /// Close the connection now; `stage` is what it was late for.
        case close(lateFor: Stage)
        /// Tell the protocol the connection is idle, and wake up at `closeAt` to close it.
        case signalIdle(closeAt: NIODeadline)
    }

    package let configuration: Configuration
    package private(set) var stage: Stage
    /// When the current stage must end (for a connection in use: computed from its last read).
    private var deadline: NIODeadline?
    /// When the connection last read something, in use.
    private var lastRead: NIODeadline

    /// A connection accepted at `now`: the action arms its first deadline.
    package init(configuration: Configuration, now: NIODeadline) {
        self.configuration = configuration
        lastRead = now
        if let handshake = configuration.handshake {
            stage = .handshaking
            deadline = now + handshake
        } else {
            stage = .opening
            deadline = now + configuration.opening
        }
    }

    /// The first deadline to arm.
    package var firstWakeUp: Action { deadline.map { .wakeUp(at: $0) } ?? .none }

    /// The TLS handshake completed.
    package mutating func handshakeCompleted(now: NIODeadline) -> Action {
        guard stage == .handshaking else { return .none }
        stage = .opening
        return arm(now + configuration.opening)
    }

    /// The protocol's first words arrived.
    package mutating func opened(now: NIODeadline) -> Action {
        guard stage == .handshaking || stage == .opening else { return .none }
        guard let firstUse = configuration.firstUse else { return used(now: now) }
        stage = .awaitingFirstUse
        return arm(now + firstUse)
    }

    /// The connection is a client's: its first use (for listeners without a first use of their own,
    /// the opening is it).
    package mutating func firstUsed(now: NIODeadline) -> Action {
        guard stage == .handshaking || stage == .opening || stage == .awaitingFirstUse else { return .none }
        return used(now: now)
    }

    private mutating func used(now: NIODeadline) -> Action {
        stage = .inUse
        lastRead = now
        guard let idle = configuration.idle else {
            deadline = nil
            return .cancelTimer
        }
        return arm(now + idle)
    }

    /// Something was read. Cheap: the timer is not moved (it finds the read when it fires).
    package mutating func read(now: NIODeadline) {
        lastRead = now
    }

    /// The timer went off at `now`.
    package mutating func wokeUp(now: NIODeadline) -> Action {
        guard let deadline else { return .none }
        switch stage {
        case .closed:
            return .none
        case .inUse:
            guard let idle = configuration.idle else { return .none }
            // Read meanwhile: the idle time counts from that read.
            if lastRead + idle > now { return arm(lastRead + idle) }
            stage = .closingIdle
            let closeAt = now + configuration.idleGrace
            self.deadline = closeAt
            return .signalIdle(closeAt: closeAt)
        case .handshaking, .opening, .awaitingFirstUse, .closingIdle:
            guard now >= deadline else { return .wakeUp(at: deadline) }
            let late = stage
            stage = .closed
            self.deadline = nil
            return .close(lateFor: late)
        }
    }

    private mutating func arm(_ at: NIODeadline) -> Action {
        deadline = at
        return .wakeUp(at: at)
    }
}
