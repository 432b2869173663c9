public import Foundation
package import NotificationCore
internal import OpenUserNotifications
internal import Synchronization

/// A clock that moves only when a test moves it.
///
/// Advancing it fires exactly the triggers that fall due, in the order of their dates, and lets the
/// app's delegate answer each notification before time moves on: as if the device had been running
/// for that long.
///
/// ```swift
/// let clock = ManualClock()
/// await clock.advance(by: 3)   // the 3-second trigger fires now
/// ```
public final class ManualClock: Sendable {
    private let state: Mutex<State>

    private struct State {
        var now: Date
        var systems: [WeakSystem] = []
    }

    /// A clock that reads `now` until it is moved.
    ///
    /// - Parameter now: the starting time; by default 2026-01-01 00:00:00 UTC, so that tests do not
    ///   depend on when they run.
    public init(now: Date = Date(timeIntervalSince1970: 1_767_225_600)) {
        state = Mutex(State(now: now))
    }

    /// The clock's current time.
    public var now: Date { state.withLock { $0.now } }

    /// Moves the clock forward by `seconds`, firing everything that falls due on the way, in order.
    public func advance(by seconds: TimeInterval) async {
        await advance(to: now.addingTimeInterval(seconds))
    }

    /// Moves the clock forward to `date`, firing everything that falls due on the way, in order.
    /// A date in the past leaves the clock where it is.
    public func advance(to date: Date) async {
        while let (system, next) = await nextDue(before: date) {
            set(next)
            await system.system.catchUp()
            await system.system.waitUntilSettled(timeout: system.grace)
        }
        set(max(now, date))
        for system in liveSystems() {
            await system.system.catchUp()
            await system.system.waitUntilSettled(timeout: system.grace)
        }
    }

    private func set(_ date: Date) {
        state.withLock { $0.now = max($0.now, date) }
    }

    private func liveSystems() -> [DrivenSystem] {
        state.withLock { state in
            state.systems.removeAll { $0.system == nil }
            return state.systems.compactMap { entry in entry.system.map { DrivenSystem(system: $0, grace: entry.grace) } }
        }
    }

    private func nextDue(before date: Date) async -> (DrivenSystem, Date)? {
        var earliest: (DrivenSystem, Date)?
        for system in liveSystems() {
            guard let next = await system.system.nextWakeUpDate(), next <= date else { continue }
            if earliest.map({ next < $0.1 }) ?? true { earliest = (system, next) }
        }
        return earliest
    }

    /// Lets the clock drive `system`; `grace` is how long, in real time, an advance waits for the app's
    /// delegate to answer before time moves on.
    func drive(_ system: InProcessNotificationSystem, grace: Duration) {
        state.withLock { $0.systems.append(WeakSystem(system: system, grace: grace)) }
    }
}

extension ManualClock: NotificationClock {
    /// Sets off nothing: ``advance(to:)`` steps every system on this clock through each date that
    /// falls due, in order, and waits for its delegate's answers, which an alarm could not.
    package func alarm(at deadline: Date, _ action: @escaping @Sendable () -> Void) -> ClockAlarm {
        .none
    }

    package var alarmsGoOff: Bool { false }
}

private struct WeakSystem: Sendable {
    weak var system: InProcessNotificationSystem?
    var grace: Duration
}

private struct DrivenSystem {
    var system: InProcessNotificationSystem
    var grace: Duration
}
