import Synchronization

/// Whether this process is the desktop's notification server (`unotify serve --freedesktop`), shared
/// by that server and the desktop presenter: the presenter shows the daemon's notifications on
/// another server when there is one, never on its own process's (they would come back to it as a
/// desktop program's), and waits for the server's claim to be decided before it asks the bus to start
/// one (or it would start the server `--freedesktop` was given to replace).
package final class NotificationServerClaim: Sendable {
    package enum Outcome: Sendable, Equatable {
        /// This process owns the name, as this unique name.
        case ours(String)
        /// Another server owns it, or the bus could not be asked: the presenter shows there.
        case notOurs
    }

    private struct State {
        var outcome: Outcome?
        var waiting: [CheckedContinuation<Outcome, Never>] = []
    }

    private let state = Mutex(State())

    package init() {}

    /// Records how the claim went, once; waiters go on.
    package func decide(_ outcome: Outcome) {
        let waiting = state.withLock { state -> [CheckedContinuation<Outcome, Never>] in
            guard state.outcome == nil else { return [] }
            state.outcome = outcome
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume(returning: outcome) }
    }

    /// How the claim went, once it is decided.
    package func outcome() async -> Outcome {
        await withCheckedContinuation { continuation in
            let decided = state.withLock { state -> Outcome? in
                if let outcome = state.outcome { return outcome }
                state.waiting.append(continuation)
                return nil
            }
            if let decided { continuation.resume(returning: decided) }
        }
    }
}
