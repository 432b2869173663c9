package import NIOCore
import Synchronization

/// A listener's connections, at most ``capacity`` of them: what keeps one listener's flood from
/// taking the descriptors every other listener (and the process's own files) needs.
///
/// A connection accepted beyond the capacity makes room for itself by closing the oldest one not yet
/// in use (still in its handshake, its opening, or waiting for its first use: what a flood of idle or
/// half-open connections is made of); when every connection is in use, the new one is closed at once.
/// A client that finishes opening promptly is therefore never shut out by strangers that connect and
/// say nothing, and the descriptors in use never exceed the capacity but for the moment a close takes.
///
/// Thread-safe: accepted connections live on several event loops.
package final class ListenerConnections: Sendable {
    /// Whether an accepted connection was kept.
    package enum Admission: Sendable, Equatable {
        case admitted
        /// Admitted in place of an older connection not in use, which is being closed.
        case admittedInPlaceOfAnother
        /// Refused: every connection is in use.
        case refused
    }

    private struct Entry {
        let channel: any Channel
        var inUse = false
        /// The order of acceptance.
        let number: UInt64
    }

    private struct State {
        var entries: [ObjectIdentifier: Entry] = [:]
        var accepted: UInt64 = 0
        var given: Int = 0
        var refused: Int = 0
        /// Refusals not said yet, and when they were last said (``onRefused``).
        var refusedUnsaid = 0
        var refusalsLastSaid: NIODeadline?
    }

    package let capacity: Int
    private let state = Mutex(State())
    /// Told of refusals, at most once a minute, with how many there were since it was last told.
    private let onRefused: (@Sendable (Int) -> Void)?

    package init(capacity: Int, onRefused: (@Sendable (_ refusedSinceLastTold: Int) -> Void)? = nil) {
        precondition(capacity > 0, "a listener takes at least one connection")
        self.capacity = capacity
        self.onRefused = onRefused
    }

    /// Takes a connection just accepted, closing another or it when the listener is full (see the
    /// type's description). Forgets it once it closes.
    @discardableResult
    package func admit(_ channel: any Channel) -> Admission {
        let id = ObjectIdentifier(channel)
        var refusalsToSay: Int?
        let (admission, victim) = state.withLock { state -> (Admission, (any Channel)?) in
            var victim: (any Channel)?
            if state.entries.count >= capacity {
                guard let oldest = state.entries.values.filter({ !$0.inUse }).min(by: { $0.number < $1.number }) else {
                    state.refused += 1
                    state.refusedUnsaid += 1
                    let now = NIODeadline.now()
                    if onRefused != nil, state.refusalsLastSaid.map({ now - $0 >= .minutes(1) }) ?? true {
                        refusalsToSay = state.refusedUnsaid
                        state.refusedUnsaid = 0
                        state.refusalsLastSaid = now
                    }
                    return (.refused, nil)
                }
                state.entries.removeValue(forKey: ObjectIdentifier(oldest.channel))
                state.given += 1
                victim = oldest.channel
            }
            state.accepted += 1
            state.entries[id] = Entry(channel: channel, number: state.accepted)
            return (victim == nil ? .admitted : .admittedInPlaceOfAnother, victim)
        }
        guard admission != .refused else {
            channel.close(promise: nil)
            if let refusalsToSay { onRefused?(refusalsToSay) }
            return .refused
        }
        victim?.close(promise: nil)
        channel.closeFuture.whenComplete { [self] _ in _ = state.withLock { $0.entries.removeValue(forKey: id) } }
        return admission
    }

    /// The connection is in use: it is kept from now on.
    package func firstUsed(_ channel: any Channel) {
        state.withLock { $0.entries[ObjectIdentifier(channel)]?.inUse = true }
    }

    /// The connections open now.
    package var count: Int { state.withLock { $0.entries.count } }

    /// Every connection open now, and whether it is in use.
    package var all: [(channel: any Channel, inUse: Bool)] { state.withLock { $0.entries.values.map { ($0.channel, $0.inUse) } } }

    /// How many connections were closed to make room for newer ones, and refused, since the start.
    package var turnedAway: (givenUp: Int, refused: Int) { state.withLock { ($0.given, $0.refused) } }
}
