package import Foundation

/// Where the daemon reads the time and how it waits; tests pass a manual clock.
package protocol DaemonClock: Sendable {
    var now: Date { get }
    /// Calls `action` once `deadline` has come (at once if it has), unless the alarm is cancelled first.
    func alarm(at deadline: Date, _ action: @escaping @Sendable () -> Void) -> DaemonAlarm
}

/// An alarm set with ``DaemonClock/alarm(at:_:)``.
package struct DaemonAlarm: Sendable {
    private let onCancel: @Sendable () -> Void

    package init(cancel: @escaping @Sendable () -> Void) {
        onCancel = cancel
    }

    /// Stops the alarm if it has not gone off yet.
    package func cancel() { onCancel() }
}

/// The wall clock.
package struct SystemDaemonClock: DaemonClock {
    package init() {}
    package var now: Date { Date() }

    /// Goes off on the alarm thread, at the deadline to the microsecond when a core is free: the
    /// scheduler's wake-ups, which decide how late a notification is.
    package func alarm(at deadline: Date, _ action: @escaping @Sendable () -> Void) -> DaemonAlarm {
        let id = AlarmThread.shared.schedule(at: deadline, action)
        return DaemonAlarm { AlarmThread.shared.cancel(id) }
    }
}
