package import Foundation

/// The rules of triggers: which ones are valid and when each fires next.
package enum TriggerRules {
    /// The shortest interval a repeating time-interval trigger may have, in seconds.
    package static let minimumRepeatingInterval: TimeInterval = 60

    /// Why a trigger cannot be made. Apple raises an exception for these at construction time.
    package enum Violation: Sendable, Hashable, CustomStringConvertible {
        case intervalNotPositive(TimeInterval)
        case repeatingIntervalTooShort(TimeInterval)

        package var description: String {
            switch self {
            case .intervalNotPositive(let interval):
                "time interval must be greater than 0 (got \(interval))"
            case .repeatingIntervalTooShort(let interval):
                "time interval must be at least 60 if repeating (got \(interval))"
            }
        }
    }

    /// Checks a time-interval trigger: the interval must be above zero, and at least 60 s if it repeats.
    package static func validateTimeInterval(_ interval: TimeInterval, repeats: Bool) -> Violation? {
        guard interval > 0, interval.isFinite else { return .intervalNotPositive(interval) }
        if repeats, interval < minimumRepeatingInterval { return .repeatingIntervalTooShort(interval) }
        return nil
    }

    /// The calendar components a calendar trigger can match on.
    package static let matchableComponents: [Calendar.Component] = [
        .era, .year, .month, .day, .hour, .minute, .second, .weekday, .weekdayOrdinal, .quarter,
        .weekOfMonth, .weekOfYear, .yearForWeekOfYear, .nanosecond,
    ]

    /// The next date after `date` whose wall-clock components match `components`.
    ///
    /// The components are read in the trigger's own calendar and time zone when it names them, and in
    /// the device's `calendar` and `timeZone` otherwise. Wall-clock times that a daylight-saving change
    /// skips fire at the first moment after the gap; times that it repeats fire once, at the first
    /// occurrence.
    ///
    /// - Returns: `nil` when no date ever matches (for example February 30th), or when the components
    ///   name no field to match.
    package static func nextDate(
        matching components: DateComponents,
        after date: Date,
        calendar: Calendar,
        timeZone: TimeZone
    ) -> Date? {
        var calendar = components.calendar ?? calendar
        calendar.timeZone = components.timeZone ?? components.calendar?.timeZone ?? timeZone
        var matching = DateComponents()
        var hasField = false
        for component in matchableComponents {
            if let value = components.value(for: component) {
                matching.setValue(value, for: component)
                hasField = true
            }
        }
        if let leap = components.isLeapMonth { matching.isLeapMonth = leap }
        guard hasField else { return nil }
        return calendar.nextDate(
            after: date,
            matching: matching,
            matchingPolicy: .nextTime,
            repeatedTimePolicy: .first,
            direction: .forward
        )
    }

    /// When a trigger fires for the first time if it is scheduled at `date`.
    ///
    /// Location and push triggers have no date: they fire on events, so this returns `nil` for them.
    package static func firstFireDate(
        of trigger: NotificationTrigger,
        scheduledAt date: Date,
        calendar: Calendar,
        timeZone: TimeZone
    ) -> Date? {
        switch trigger {
        case .timeInterval(let interval, _):
            date.addingTimeInterval(interval)
        case .calendar(let components, _):
            nextDate(matching: components, after: date, calendar: calendar, timeZone: timeZone)
        case .location, .push:
            nil
        }
    }

    /// When a repeating trigger fires after firing at `previous`; `nil` for one that does not repeat.
    ///
    /// Time-interval repeats keep to their original cadence (no drift from delivery delays).
    package static func fireDate(
        of trigger: NotificationTrigger,
        after previous: Date,
        calendar: Calendar,
        timeZone: TimeZone
    ) -> Date? {
        guard trigger.repeats else { return nil }
        switch trigger {
        case .timeInterval(let interval, _):
            return previous.addingTimeInterval(interval)
        case .calendar(let components, _):
            return nextDate(matching: components, after: previous, calendar: calendar, timeZone: timeZone)
        case .location, .push:
            return nil
        }
    }
}
