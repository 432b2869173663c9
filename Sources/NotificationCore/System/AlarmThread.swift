import Dispatch
package import Foundation
import Synchronization

/// Calls actions at their deadlines from a thread of its own, which sleeps on the monotonic clock
/// until the earliest: one thread woken at the deadline, where `Task.sleep` wakes the dispatch
/// timer's thread and then a worker, each of which waits for a core on a busy machine.
package final class AlarmThread: Sendable {
    package static let shared = AlarmThread()

    private struct Alarms {
        /// Each alarm's deadline, in nanoseconds of `DispatchTime`'s monotonic clock, and its action.
        var pending: [UInt64: (deadline: UInt64, action: @Sendable () -> Void)] = [:]
        var nextID: UInt64 = 0
    }

    private let alarms = Mutex(Alarms())
    /// Signalled when an alarm earlier than all the others is set: the thread waits on it until the
    /// earliest deadline.
    private let earlierAlarm = DispatchSemaphore(value: 0)

    private init() {
        let thread = Thread { [unowned self] in self.run() }
        thread.name = "unotify-alarms"
        thread.start()
    }

    /// Calls `action` on the alarm thread once `deadline` has come (at once if it has); returns the
    /// number that ``cancel(_:)`` takes.
    package func schedule(at deadline: Date, _ action: @escaping @Sendable () -> Void) -> UInt64 {
        let seconds = max(0, min(deadline.timeIntervalSinceNow, 86_400 * 365))
        let due = DispatchTime.now().uptimeNanoseconds &+ UInt64(seconds * 1e9)
        let (id, isEarliest) = alarms.withLock { alarms in
            alarms.nextID += 1
            let earliest = alarms.pending.values.lazy.map(\.deadline).min()
            alarms.pending[alarms.nextID] = (due, action)
            return (alarms.nextID, earliest.map { due < $0 } ?? true)
        }
        if isEarliest { earlierAlarm.signal() }
        return id
    }

    /// Forgets an alarm that has not gone off yet; one that has is left as it is.
    package func cancel(_ id: UInt64) {
        _ = alarms.withLock { $0.pending.removeValue(forKey: id) }
    }

    private func run() {
        while true {
            let now = DispatchTime.now().uptimeNanoseconds
            let (due, earliest) = alarms.withLock { alarms in
                let due = alarms.pending.filter { $0.value.deadline <= now }
                for id in due.keys { alarms.pending.removeValue(forKey: id) }
                return (due.values.sorted { $0.deadline < $1.deadline }, alarms.pending.values.lazy.map(\.deadline).min())
            }
            for alarm in due { alarm.action() }
            guard due.isEmpty else { continue }
            // A signal left from an alarm set meanwhile only makes the loop look again.
            if let earliest {
                _ = earlierAlarm.wait(timeout: DispatchTime(uptimeNanoseconds: earliest))
            } else {
                earlierAlarm.wait()
            }
        }
    }
}
