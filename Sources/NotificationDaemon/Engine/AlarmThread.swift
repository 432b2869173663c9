#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
#if canImport(CDispatch)
// Where the toolchain's `timespec` is declared on Linux.
internal import CDispatch
#endif
import Foundation

/// Calls actions at their deadlines from a thread of its own, which sleeps on the monotonic clock
/// until the earliest: one thread woken at the deadline, where `Task.sleep` wakes the dispatch
/// timer's thread and then a worker, each of which waits for a core on a busy machine.
final class AlarmThread: @unchecked Sendable {
    static let shared = AlarmThread()

    /// Guards `alarms` and `nextID`; the thread waits on `condition` with it.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var alarms: [UInt64: (deadline: UInt64, action: @Sendable () -> Void)] = [:]
    private var nextID: UInt64 = 0

    private init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
        let thread = Thread { [unowned self] in self.run() }
        thread.name = "unotify-alarms"
        thread.start()
    }

    /// Calls `action` on the alarm thread once `deadline` has come (at once if it has); returns the
    /// number that ``cancel(_:)`` takes.
    func schedule(at deadline: Date, _ action: @escaping @Sendable () -> Void) -> UInt64 {
        let seconds = max(0, min(deadline.timeIntervalSinceNow, 86_400 * 365))
        let due = Self.monotonicNanoseconds() &+ UInt64(seconds * 1e9)
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        nextID += 1
        let earliest = alarms.values.lazy.map(\.deadline).min()
        alarms[nextID] = (due, action)
        if earliest.map({ due < $0 }) ?? true { pthread_cond_signal(condition) }
        return nextID
    }

    /// Forgets an alarm that has not gone off yet; one that has is left as it is.
    func cancel(_ id: UInt64) {
        pthread_mutex_lock(mutex)
        alarms.removeValue(forKey: id)
        pthread_mutex_unlock(mutex)
    }

    private func run() {
        pthread_mutex_lock(mutex)
        while true {
            guard let earliest = alarms.values.lazy.map(\.deadline).min() else {
                pthread_cond_wait(condition, mutex)
                continue
            }
            let now = Self.monotonicNanoseconds()
            guard earliest <= now else {
                var until = timespec(tv_sec: Int(earliest / 1_000_000_000), tv_nsec: Int(earliest % 1_000_000_000))
                pthread_cond_timedwait(condition, mutex, &until)
                continue
            }
            let due = alarms.filter { $0.value.deadline <= now }
            for id in due.keys { alarms.removeValue(forKey: id) }
            pthread_mutex_unlock(mutex)
            for alarm in due.values.sorted(by: { $0.deadline < $1.deadline }) { alarm.action() }
            pthread_mutex_lock(mutex)
        }
    }

    private static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}
