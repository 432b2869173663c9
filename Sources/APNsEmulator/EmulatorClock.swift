package import Foundation
import Synchronization

/// The emulator's time, which every rule of the provider API and of storage counts with: the
/// system's clock moved forward by what it was told (``advance(by:)``), or, frozen, the time it was
/// told alone. It never goes back: held pushes, expirations and the delivery log keep their order.
package final class EmulatorClock: Sendable {
    private struct State {
        /// How far ahead of the system's clock it runs.
        var offset: TimeInterval = 0
        /// The time it stands at, when frozen.
        var frozenAt: Date?
    }

    private let state: Mutex<State>
    private let system: @Sendable () -> Date

    /// - Parameters:
    ///   - frozen: whether time stands still between moves (from the system's time now), rather
    ///     than flowing with the system's clock.
    ///   - system: the system's clock.
    package init(frozen: Bool = false, system: @escaping @Sendable () -> Date = { Date() }) {
        self.system = system
        state = Mutex(State(frozenAt: frozen ? system() : nil))
    }

    /// The emulator's time now (at most ``latest``).
    package func now() -> Date {
        let system = system()
        return min(Self.latest, state.withLock { $0.frozenAt ?? system.addingTimeInterval($0.offset) })
    }

    /// As far as the clock goes: APNs' times (`apns-expiration`, `410` timestamps) stay within what
    /// every client reads.
    package static let latest = Date(timeIntervalSince1970: 253_402_300_799)

    /// The system's time now.
    package func systemNow() -> Date { system() }

    /// Whether time moves only when told.
    package var isFrozen: Bool { state.withLock { $0.frozenAt != nil } }

    /// How far the emulator's time is ahead of the system's now, in seconds.
    package var offset: TimeInterval {
        let system = system()
        return min(Self.latest, state.withLock { $0.frozenAt ?? system.addingTimeInterval($0.offset) }).timeIntervalSince(system)
    }

    /// Moves time forward by `seconds` (0 or more); returns the time now.
    @discardableResult
    package func advance(by seconds: TimeInterval) throws(EmulatorError) -> Date {
        guard seconds >= 0, seconds.isFinite else { throw EmulatorError(.refused, "The clock moves forward only: advance it by 0 seconds or more.") }
        guard now().addingTimeInterval(seconds) < Self.latest else {
            throw EmulatorError(.refused, "The clock stops before \(Self.text(Self.latest)): move it less far.")
        }
        let system = system()
        return state.withLock { state in
            if let frozenAt = state.frozenAt {
                state.frozenAt = frozenAt.addingTimeInterval(seconds)
                return frozenAt.addingTimeInterval(seconds)
            }
            state.offset += seconds
            return system.addingTimeInterval(state.offset)
        }
    }

    /// Moves time forward to `date`; returns the time now.
    @discardableResult
    package func set(to date: Date) throws(EmulatorError) -> Date {
        let now = now()
        guard date >= now else {
            throw EmulatorError(.refused, "The clock moves forward only: it is \(Self.text(now)) already, after \(Self.text(date)).")
        }
        return try advance(by: date.timeIntervalSince(now))
    }

    /// A time as ISO 8601 with milliseconds, in UTC.
    package static func text(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }
}
