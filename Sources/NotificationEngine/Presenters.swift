import Foundation
package import NotificationCore
internal import Synchronization

/// The presenters' feeds (the watch, the web center, the desktop): every event the person would see,
/// to each presenter watching, in order. A presenter that falls more than its backlog behind is not
/// fed a stream with a gap: its stream ends, marked as overflowed, and it reads what is on screen
/// again and watches anew.
final class Presenters: Sendable {
    private struct Feed {
        let continuation: AsyncStream<DaemonEvent>.Continuation
        let overflowed: OverflowFlag
    }

    private let backlog: Int
    private let feeds = Mutex<[UUID: Feed]>([:])

    /// - Parameter backlog: how many events a presenter may fall behind.
    init(backlog: Int) {
        self.backlog = max(1, backlog)
    }

    /// Starts a presenter's feed; it is forgotten once its reader stops.
    func watch() -> DaemonEngine.Watch {
        let id = UUID()
        let (stream, continuation) = AsyncStream<DaemonEvent>.makeStream(bufferingPolicy: .bufferingOldest(backlog))
        let flag = OverflowFlag()
        feeds.withLock { $0[id] = Feed(continuation: continuation, overflowed: flag) }
        continuation.onTermination = { [weak self] _ in
            _ = self?.feeds.withLock { $0.removeValue(forKey: id) }
        }
        return DaemonEngine.Watch(events: stream, flag: flag)
    }

    /// Tells every presenter; ends the feed of each that has fallen too far behind.
    func publish(_ event: DaemonEvent) {
        let current = feeds.withLock { $0 }
        for (id, feed) in current {
            if case .dropped = feed.continuation.yield(event) {
                feeds.withLock { _ = $0.removeValue(forKey: id) }
                feed.overflowed.set()
                // Outside the lock: ending the stream calls its `onTermination`, which takes it.
                feed.continuation.finish()
            }
        }
    }
}

extension DaemonEngine {
    /// A presenter's view of events: everything the person would see, from now on, in order.
    package struct Watch: Sendable {
        /// The events. The stream ends when the presenter stops watching, or when it fell more than
        /// ``Configuration/presenterBacklog`` events behind: then ``overflowed`` is true, and the
        /// presenter reads what is on screen again and watches anew.
        package let events: AsyncStream<DaemonEvent>
        private let flag: OverflowFlag

        init(events: AsyncStream<DaemonEvent>, flag: OverflowFlag) {
            self.events = events
            self.flag = flag
        }

        /// Whether the stream ended because the presenter fell behind.
        package var overflowed: Bool { flag.isSet }
    }
}

/// Set once a presenter's feed ended because the presenter fell behind.
final class OverflowFlag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .relaxed) }
    var isSet: Bool { value.load(ordering: .relaxed) }
}
