package import Foundation

/// Where a notification system reads the time and how it is woken when something falls due: the
/// daemon's engine and scheduler, and the in-process system, read the same clock. Tests pass a manual
/// one.
package protocol NotificationClock: Sendable {
    var now: Date { get }
    /// Calls `action` once `deadline` has come, unless the alarm is cancelled first. A deadline that has
    /// come already may call `action` before this returns, so a caller must not hold a lock that
    /// `action` takes.
    func alarm(at deadline: Date, _ action: @escaping @Sendable () -> Void) -> ClockAlarm
    /// Whether its alarms go off: `false` for a clock that moves only when told and steps what it
    /// drives itself (its alarms are ``ClockAlarm/none``), so nothing needs to wait for them.
    var alarmsGoOff: Bool { get }
}

extension NotificationClock {
    package var alarmsGoOff: Bool { true }
}

/// An alarm set with ``NotificationClock/alarm(at:_:)``.
package struct ClockAlarm: Sendable {
    private let onCancel: @Sendable () -> Void

    package init(cancel: @escaping @Sendable () -> Void) {
        onCancel = cancel
    }

    /// An alarm that nothing will set off: from a clock that moves only when told, and steps what it
    /// drives itself.
    package static let none = ClockAlarm {}

    /// Stops the alarm if it has not gone off yet.
    package func cancel() { onCancel() }
}

/// The wall clock.
package struct SystemClock: NotificationClock {
    package init() {}
    package var now: Date { Date() }

    /// Goes off on the alarm thread, at the deadline to the microsecond when a core is free: the
    /// scheduler's wake-ups, which decide how late a notification is. Never before this returns.
    package func alarm(at deadline: Date, _ action: @escaping @Sendable () -> Void) -> ClockAlarm {
        let id = AlarmThread.shared.schedule(at: deadline, action)
        return ClockAlarm { AlarmThread.shared.cancel(id) }
    }
}
