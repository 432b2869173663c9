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

    /// Checks a time-interval trigger as Apple does when one is made: the interval must be above zero,
    /// and at least 60 s if it repeats.
    package static func validateTimeInterval(_ interval: TimeInterval, repeats: Bool) -> Violation? {
        guard interval > 0, interval.isFinite else { return .intervalNotPositive(interval) }
        if repeats, interval < minimumRepeatingInterval { return .repeatingIntervalTooShort(interval) }
        return nil
    }

    /// A calendar component a trigger can match on: its name on the wire (Foundation's JSON key) and
    /// the values it may take. A value outside the range can never match; such a trigger is refused
    /// before any search for its date (``RequestRules``).
    package struct MatchableComponent: Sendable {
        package var component: Calendar.Component
        package var name: String
        package var range: ClosedRange<Int>
    }

    /// Every calendar component a calendar trigger can match on.
    package static let matchableComponents: [MatchableComponent] = [
        MatchableComponent(component: .era, name: "era", range: 0...1_000),
        MatchableComponent(component: .year, name: "year", range: 1...100_000),
        MatchableComponent(component: .month, name: "month", range: 1...13),
        MatchableComponent(component: .day, name: "day", range: 1...31),
        MatchableComponent(component: .hour, name: "hour", range: 0...23),
        MatchableComponent(component: .minute, name: "minute", range: 0...59),
        MatchableComponent(component: .second, name: "second", range: 0...59),
        MatchableComponent(component: .weekday, name: "weekday", range: 1...7),
        MatchableComponent(component: .weekdayOrdinal, name: "weekdayOrdinal", range: -5...5),
        MatchableComponent(component: .quarter, name: "quarter", range: 1...4),
        MatchableComponent(component: .weekOfMonth, name: "weekOfMonth", range: 0...6),
        MatchableComponent(component: .weekOfYear, name: "weekOfYear", range: 1...53),
        MatchableComponent(component: .yearForWeekOfYear, name: "yearForWeekOfYear", range: 1...100_000),
        MatchableComponent(component: .nanosecond, name: "nanosecond", range: 0...999_999_999),
    ]

    /// The next date after `date` whose wall-clock components match `components`.
    ///
    /// The components are read in the trigger's own calendar when they name one (its calendar system and
    /// week rules), and in the device's `calendar` otherwise; and in their own `timeZone` when they name
    /// one, else in the device's current `timeZone`, so wall-clock triggers follow a travelling device.
    ///
    /// Daylight-saving changes: a trigger that names the hour means one time of day, so a time the
    /// change skips fires at the first moment after the gap, and a time it repeats fires once, at its
    /// first occurrence. A trigger that names no hour (every hour at minute 30, say) fires at every
    /// instant whose clock matches: in both copies of a repeated hour, and not at all in a skipped one.
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
        calendar.timeZone = components.timeZone ?? timeZone
        var matching = DateComponents()
        var hasField = false
        for matchable in matchableComponents {
            if let value = components.value(for: matchable.component) {
                matching.setValue(value, for: matchable.component)
                hasField = true
            }
        }
        if let leap = components.isLeapMonth { matching.isLeapMonth = leap }
        guard hasField else { return nil }
        // Foundation matches wall-clock times in zones with daylight saving unreliably: `.nextTime` rolls dates
        // that do not exist (February 30th) into the next month and moves some skipped times to the next whole
        // hour (Pacific/Chatham), and both `.nextTime` and `.strict` skip real times next to a change that is
        // not on the hour (Chatham, Australia/Lord_Howe) and, from between the two occurrences of a repeated
        // time, return the second. In a zone with a fixed offset it is exact. So the search runs one stretch of
        // constant offset at a time, on a clock with that offset.
        let zone = calendar.timeZone
        let namesHour = matching.hour != nil
        var searchAfter = date
        var stretchStart = date
        while true {
            let stretchEnd = zone.nextDaylightSavingTimeTransition(after: stretchStart)
            var stretchCalendar = calendar
            stretchCalendar.timeZone = TimeZone(secondsFromGMT: zone.secondsFromGMT(for: stretchStart)) ?? zone
            var match = stretchCalendar.nextDate(
                after: searchAfter, matching: matching, matchingPolicy: .strict, repeatedTimePolicy: .first, direction: .forward
            )
            guard match != nil else { return nil }
            // A time the clocks repeat has fired at its first occurrence: skip the second.
            while namesHour, let repeated = match, stretchEnd.map({ repeated < $0 }) ?? true, isSecondOccurrence(repeated, in: zone) {
                match = stretchCalendar.nextDate(
                    after: repeated, matching: matching, matchingPolicy: .strict, repeatedTimePolicy: .first, direction: .forward
                )
            }
            if let match, stretchEnd.map({ match < $0 }) ?? true { return match }
            guard let stretchEnd else { return nil }
            // A time the clocks skip fires at the first moment after the gap.
            if namesHour, gapSkipsMatch(matching, at: stretchEnd, calendar: calendar) { return stretchEnd }
            // Transitions fall on whole seconds, so searching after the second before one finds matches at it.
            searchAfter = max(searchAfter, stretchEnd.addingTimeInterval(-1))
            stretchStart = stretchEnd
        }
    }

    /// Whether the clocks jumping forward at `transition` skip a wall-clock time that `matching` names.
    private static func gapSkipsMatch(_ matching: DateComponents, at transition: Date, calendar: Calendar) -> Bool {
        let before = calendar.timeZone.secondsFromGMT(for: transition.addingTimeInterval(-1))
        let after = calendar.timeZone.secondsFromGMT(for: transition)
        guard after > before, let unchanged = TimeZone(secondsFromGMT: before) else { return false }
        // On a clock that kept the old offset, the skipped wall-clock times are the instants of the gap.
        var unchangedCalendar = calendar
        unchangedCalendar.timeZone = unchanged
        guard let match = unchangedCalendar.nextDate(
            after: transition.addingTimeInterval(-1),
            matching: matching,
            matchingPolicy: .strict,
            repeatedTimePolicy: .first,
            direction: .forward
        ) else { return false }
        return match < transition.addingTimeInterval(TimeInterval(after - before))
    }

    /// Whether the wall-clock time at `instant` already happened once, before the clocks were turned back.
    private static func isSecondOccurrence(_ instant: Date, in zone: TimeZone) -> Bool {
        let offset = zone.secondsFromGMT(for: instant)
        let earlierOffset = zone.secondsFromGMT(for: instant.addingTimeInterval(-86_400))
        guard earlierOffset > offset else { return false }
        let firstOccurrence = instant.addingTimeInterval(-TimeInterval(earlierOffset - offset))
        return zone.secondsFromGMT(for: firstOccurrence) == earlierOffset
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
