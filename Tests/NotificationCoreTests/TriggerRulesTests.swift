import Foundation
import NotificationCore
import Testing

private let utc = TimeZone(identifier: "UTC")!
private let gregorian: Calendar = {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = utc
    return calendar
}()
/// 2026-01-01T00:00:00Z.
private let newYear2026 = Date(timeIntervalSince1970: 1_767_225_600)

@Suite("Trigger rules")
struct TriggerRulesTests {
    // MARK: - Time-interval validation

    struct IntervalCase: Sendable, CustomTestStringConvertible {
        var interval: TimeInterval
        var repeats: Bool
        var expected: TriggerRules.Violation?
        var testDescription: String { "\(interval) s, repeats: \(repeats)" }
    }

    static let intervalCases: [IntervalCase] = [
        IntervalCase(interval: 0, repeats: false, expected: .intervalNotPositive(0)),
        IntervalCase(interval: 0, repeats: true, expected: .intervalNotPositive(0)),
        IntervalCase(interval: -0.0, repeats: false, expected: .intervalNotPositive(-0.0)),
        IntervalCase(interval: -1, repeats: false, expected: .intervalNotPositive(-1)),
        IntervalCase(interval: -60, repeats: true, expected: .intervalNotPositive(-60)),
        IntervalCase(interval: .infinity, repeats: false, expected: .intervalNotPositive(.infinity)),
        IntervalCase(interval: .infinity, repeats: true, expected: .intervalNotPositive(.infinity)),
        IntervalCase(interval: -.infinity, repeats: false, expected: .intervalNotPositive(-.infinity)),
        IntervalCase(interval: .leastNonzeroMagnitude, repeats: false, expected: nil),
        IntervalCase(interval: 0.001, repeats: false, expected: nil),
        IntervalCase(interval: 0.001, repeats: true, expected: .repeatingIntervalTooShort(0.001)),
        IntervalCase(interval: 1, repeats: false, expected: nil),
        IntervalCase(interval: 1, repeats: true, expected: .repeatingIntervalTooShort(1)),
        IntervalCase(interval: 59.999, repeats: false, expected: nil),
        IntervalCase(interval: 59.999, repeats: true, expected: .repeatingIntervalTooShort(59.999)),
        IntervalCase(interval: 60.0.nextDown, repeats: true, expected: .repeatingIntervalTooShort(60.0.nextDown)),
        IntervalCase(interval: 60, repeats: true, expected: nil),
        IntervalCase(interval: 60, repeats: false, expected: nil),
        IntervalCase(interval: 86_400 * 365, repeats: true, expected: nil),
        IntervalCase(interval: .greatestFiniteMagnitude, repeats: true, expected: nil),
    ]

    @Test(arguments: intervalCases)
    func validateTimeInterval(_ testCase: IntervalCase) {
        #expect(TriggerRules.validateTimeInterval(testCase.interval, repeats: testCase.repeats) == testCase.expected)
    }

    @Test("NaN is not a positive interval", arguments: [false, true])
    func nanIsRejected(repeats: Bool) throws {
        // NaN never equals itself, so the violation is matched by its case, not by ==.
        let violation = try #require(TriggerRules.validateTimeInterval(.nan, repeats: repeats))
        guard case .intervalNotPositive(let interval) = violation else {
            Issue.record("expected intervalNotPositive, got \(violation)")
            return
        }
        #expect(interval.isNaN)
    }

    @Test func violationsSayWhatIsWrong() {
        #expect(TriggerRules.Violation.intervalNotPositive(0).description == "time interval must be greater than 0 (got 0.0)")
        #expect(TriggerRules.Violation.repeatingIntervalTooShort(30).description == "time interval must be at least 60 if repeating (got 30.0)")
    }

    // MARK: - First fire date

    @Test("a time-interval trigger first fires its interval after scheduling", arguments: [0.001, 1, 60, 3600.5])
    func timeIntervalFirstFire(interval: TimeInterval) {
        for repeats in [false, true] {
            let first = TriggerRules.firstFireDate(of: .timeInterval(interval, repeats: repeats), scheduledAt: newYear2026, calendar: gregorian, timeZone: utc)
            #expect(first == newYear2026.addingTimeInterval(interval))
        }
    }

    @Test("a calendar trigger first fires at the next match")
    func calendarFirstFire() {
        let first = TriggerRules.firstFireDate(
            of: .calendar(DateComponents(hour: 8, minute: 30), repeats: false),
            scheduledAt: newYear2026,
            calendar: gregorian,
            timeZone: utc
        )
        #expect(first == newYear2026.addingTimeInterval(8 * 3600 + 30 * 60))
    }

    @Test("a calendar trigger scheduled exactly at a match fires at the next one")
    func calendarFirstFireIsStrictlyAfter() {
        let first = TriggerRules.firstFireDate(
            of: .calendar(DateComponents(hour: 0), repeats: false),
            scheduledAt: newYear2026,
            calendar: gregorian,
            timeZone: utc
        )
        #expect(first == newYear2026.addingTimeInterval(86_400))
    }

    static let eventTriggers: [NotificationTrigger] = [
        .location(CircularRegion(identifier: "home", center: Coordinate(latitude: 52.52, longitude: 13.405), radius: 100), repeats: false),
        .location(CircularRegion(identifier: "home", center: Coordinate(latitude: 52.52, longitude: 13.405), radius: 100), repeats: true),
        .push,
    ]

    @Test("location and push triggers have no date", arguments: eventTriggers)
    func eventTriggersHaveNoDate(trigger: NotificationTrigger) {
        #expect(TriggerRules.firstFireDate(of: trigger, scheduledAt: newYear2026, calendar: gregorian, timeZone: utc) == nil)
        #expect(TriggerRules.fireDate(of: trigger, after: newYear2026, calendar: gregorian, timeZone: utc) == nil)
    }

    static let neverMatching: [DateComponents] = [
        DateComponents(),
        DateComponents(month: 2, day: 30),
        DateComponents(month: 2, day: 31),
        DateComponents(month: 4, day: 31),
        DateComponents(year: 2025, month: 6, day: 1),
        DateComponents(day: 32),
        DateComponents(hour: 24),
        DateComponents(minute: 60),
    ]

    @Test("components that name nothing, or nothing that exists, never fire", arguments: neverMatching)
    func neverMatchingComponents(components: DateComponents) {
        for repeats in [false, true] {
            let trigger = NotificationTrigger.calendar(components, repeats: repeats)
            #expect(TriggerRules.firstFireDate(of: trigger, scheduledAt: newYear2026, calendar: gregorian, timeZone: utc) == nil)
            #expect(TriggerRules.fireDate(of: trigger, after: newYear2026, calendar: gregorian, timeZone: utc) == nil)
        }
    }

    @Test("components naming only fields a trigger cannot match on name nothing")
    func unmatchableFieldsOnly() {
        var components = DateComponents()
        components.timeZone = utc
        components.calendar = gregorian
        #expect(TriggerRules.nextDate(matching: components, after: newYear2026, calendar: gregorian, timeZone: utc) == nil)
    }

    // MARK: - Repeats

    @Test("a trigger that does not repeat has no next date", arguments: [
        NotificationTrigger.timeInterval(60, repeats: false),
        NotificationTrigger.calendar(DateComponents(hour: 9), repeats: false),
    ])
    func nonRepeatingHasNoNext(trigger: NotificationTrigger) {
        #expect(TriggerRules.fireDate(of: trigger, after: newYear2026, calendar: gregorian, timeZone: utc) == nil)
    }

    @Test("a repeating interval keeps its cadence from the scheduled fire dates, with no drift", arguments: [60, 61.25, 3600, 86_400.5])
    func intervalRepeatsKeepCadence(interval: TimeInterval) throws {
        let trigger = NotificationTrigger.timeInterval(interval, repeats: true)
        var fire = try #require(TriggerRules.firstFireDate(of: trigger, scheduledAt: newYear2026, calendar: gregorian, timeZone: utc))
        for _ in 1..<1000 {
            fire = try #require(TriggerRules.fireDate(of: trigger, after: fire, calendar: gregorian, timeZone: utc))
        }
        // Every step is exactly the interval: after 1000 fires the total is 1000 intervals to the bit.
        #expect(fire.timeIntervalSince(newYear2026) == 1000 * interval)
    }

    @Test("a repeating interval is counted from when it was due, not from when it was delivered late")
    func intervalRepeatIgnoresDeliveryDelay() {
        let due = newYear2026.addingTimeInterval(60)
        let next = TriggerRules.fireDate(of: .timeInterval(60, repeats: true), after: due, calendar: gregorian, timeZone: utc)
        #expect(next == newYear2026.addingTimeInterval(120))
    }

    @Test("a repeating calendar trigger fires at each following match")
    func calendarRepeats() throws {
        let trigger = NotificationTrigger.calendar(DateComponents(hour: 9, weekday: 2), repeats: true)
        // 2026-01-01 is a Thursday; the following Mondays are the 5th, 12th and 19th.
        let first = try #require(TriggerRules.firstFireDate(of: trigger, scheduledAt: newYear2026, calendar: gregorian, timeZone: utc))
        let second = try #require(TriggerRules.fireDate(of: trigger, after: first, calendar: gregorian, timeZone: utc))
        let third = try #require(TriggerRules.fireDate(of: trigger, after: second, calendar: gregorian, timeZone: utc))
        let monday5th = newYear2026.addingTimeInterval(4 * 86_400 + 9 * 3600)
        #expect([first, second, third] == [0, 7, 14].map { monday5th.addingTimeInterval(TimeInterval($0) * 86_400) })
    }

    @Test("a calendar trigger follows the device's time zone when its components name none")
    func calendarFollowsDeviceZone() throws {
        let tokyo = try #require(TimeZone(identifier: "Asia/Tokyo"))
        let trigger = NotificationTrigger.calendar(DateComponents(hour: 9), repeats: true)
        let inUTC = TriggerRules.firstFireDate(of: trigger, scheduledAt: newYear2026, calendar: gregorian, timeZone: utc)
        let inTokyo = TriggerRules.firstFireDate(of: trigger, scheduledAt: newYear2026, calendar: gregorian, timeZone: tokyo)
        #expect(inUTC == newYear2026.addingTimeInterval(9 * 3600))
        // 09:00 in Tokyo (+09:00) on 2026-01-01 is midnight UTC, not after the start; the next is a day later.
        #expect(inTokyo == newYear2026.addingTimeInterval(86_400))
    }
}

/// A trigger that names no hour means "every hour at this minute": it fires in both copies of a
/// repeated hour and not at all in a skipped one.
@Suite struct HourlyTriggerDaylightSavingTests {
    let newYork = TimeZone(identifier: "America/New_York")!
    var calendar: Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = newYork
        return calendar
    }

    func fires(from start: Date, count: Int) -> [Date] {
        var dates: [Date] = []
        var cursor = start
        for _ in 0..<count {
            guard let next = TriggerRules.nextDate(matching: DateComponents(minute: 30), after: cursor, calendar: calendar, timeZone: newYork) else { break }
            dates.append(next)
            cursor = next
        }
        return dates
    }

    @Test func fallBackFiresInBothCopiesOfTheRepeatedHour() {
        // 2026-11-01 00:00 EDT = 04:00 UTC; the clocks go back from 02:00 EDT to 01:00 EST at 06:00 UTC.
        let start = Date(timeIntervalSince1970: 1_793_505_600)
        let utcHours = fires(from: start, count: 4).map { Int($0.timeIntervalSince(start) / 3600 * 2) }
        // 00:30 EDT, 01:30 EDT, 01:30 EST, 02:30 EST: every hour, half an hour past.
        #expect(utcHours == [1, 3, 5, 7])
    }

    @Test func springForwardSkipsTheMissingHour() {
        // 2026-03-08 00:00 EST = 05:00 UTC; the clocks go forward from 02:00 EST to 03:00 EDT at 07:00 UTC.
        let start = Date(timeIntervalSince1970: 1_772_946_000)
        let local = fires(from: start, count: 3).map { calendar.dateComponents([.hour, .minute], from: $0) }
        #expect(local.map(\.hour) == [0, 1, 3])
        #expect(local.allSatisfy { $0.minute == 30 })
    }
}
