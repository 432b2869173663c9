import Foundation
import NotificationCore
import PropertyBased
import Testing

/// Zones with every kind of offset history a calendar trigger meets: northern and southern daylight
/// saving, changes at midnight (Santiago), half-hour and 45-minute offsets, a 30-minute change (Lord Howe),
/// a 45-minute zone that changes (Chatham), one that dropped daylight saving in 2021 (Apia), and none.
private let zoneNames = [
    "America/New_York", "Europe/Berlin", "Australia/Sydney", "America/Santiago", "Asia/Kolkata",
    "Asia/Kathmandu", "Pacific/Chatham", "Pacific/Apia", "Australia/Lord_Howe", "UTC",
]

/// 2019-01-01T00:00Z to 2029-01-01T00:00Z, in seconds since 1970.
private let yearsCovered = 1_546_300_800..<1_861_920_000

/// The offset changes of each zone in `yearsCovered`, as (instant, offset before, offset after).
private let transitionsByZone: [String: [(at: Int, before: Int, after: Int)]] = {
    var result: [String: [(at: Int, before: Int, after: Int)]] = [:]
    for name in zoneNames {
        let zone = TimeZone(identifier: name)!
        var found: [(at: Int, before: Int, after: Int)] = []
        var cursor = Date(timeIntervalSince1970: TimeInterval(yearsCovered.lowerBound))
        while let next = zone.nextDaylightSavingTimeTransition(after: cursor), next.timeIntervalSince1970 < TimeInterval(yearsCovered.upperBound) {
            let at = Int(next.timeIntervalSince1970)
            found.append((at, zone.secondsFromGMT(for: next.addingTimeInterval(-1)), zone.secondsFromGMT(for: next)))
            cursor = next
        }
        result[name] = found
    }
    return result
}()

/// A daily, weekly or monthly trigger in a zone, and the instant its next date is computed from.
struct CalendarCase: Sendable, CustomStringConvertible {
    var zoneName: String
    var start: Int
    var spec: WallClockSpec

    var zone: TimeZone { TimeZone(identifier: zoneName)! }
    var startDate: Date { Date(timeIntervalSince1970: TimeInterval(start)) }
    var description: String { "\(spec) in \(zoneName) after \(localTime(start, in: zone))" }
}

/// The instant written as a local wall-clock time with its offset, for failure messages.
func localTime(_ seconds: Int, in zone: TimeZone) -> String {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = zone
    formatter.dateFormat = "yyyy-MM-dd HH:mm:ss xxx EEE"
    return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
}

/// The device calendar the tests pass in; its zone is the device zone each test names.
private func deviceCalendar(_ zone: TimeZone) -> Calendar {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = zone
    return calendar
}

private func nextFire(_ spec: WallClockSpec, after start: Int, in zone: TimeZone) -> Int? {
    TriggerRules.nextDate(
        matching: spec.components,
        after: Date(timeIntervalSince1970: TimeInterval(start)),
        calendar: deviceCalendar(zone),
        timeZone: zone
    ).map { Int($0.timeIntervalSince1970.rounded(.down)) }
}

/// Starts spread over ten years, half of them within a day and a half of one of the zone's offset changes,
/// and times of day biased towards the small hours, where the changes happen.
private let calendarCases = zip(
    Gen.int(in: 0..<zoneNames.count),
    Gen.int(in: 0...3),
    Gen.int(in: yearsCovered.lowerBound...(yearsCovered.upperBound - 400 * 86_400)),
    Gen.int(in: -129_600...129_600),
    Gen.int(in: 0...3),
    Gen.int(in: 0...35),
    Gen.int(in: -15...59),
    Gen.int(in: -30...59),
    Gen.int(in: 1...7),
    Gen.int(in: 1...31)
).map { zoneIndex, startKind, uniformStart, nearTransition, kind, hourPick, minute, second, weekday, day in
    let name = zoneNames[zoneIndex]
    let transitions = transitionsByZone[name]!
    let start = startKind == 0 || transitions.isEmpty
        ? uniformStart
        : transitions[(uniformStart / 7) % transitions.count].at + nearTransition
    let smallHours = [0, 1, 2, 3, 4, 23]
    let spec = WallClockSpec(
        hour: hourPick < 24 ? hourPick : smallHours[hourPick % smallHours.count],
        minute: minute < 0 ? nil : minute,
        second: second < 0 ? nil : (second < 30 ? 0 : second),
        weekday: kind == 2 ? weekday : nil,
        day: kind == 3 ? day : nil
    )
    return CalendarCase(zoneName: name, start: start, spec: spec)
}

@Suite("Calendar trigger next fire date, properties")
struct CalendarNextFireDatePropertyTests {
    @Test("(a) the next date is strictly after the start")
    func nextDateIsAfterStart() async throws {
        await propertyCheck(count: 400, input: calendarCases) { testCase in
            let fire = try #require(nextFire(testCase.spec, after: testCase.start, in: testCase.zone), "\(testCase)")
            #expect(fire > testCase.start, "\(testCase) gave \(localTime(fire, in: testCase.zone))")
        }
    }

    @Test("(b) the next date shows the requested wall-clock time, or ends the gap that skipped it")
    func nextDateShowsRequestedWallClock() async throws {
        await propertyCheck(count: 1000, input: calendarCases) { testCase in
            let zone = testCase.zone
            let spec = testCase.spec
            let fire = try #require(nextFire(spec, after: testCase.start, in: zone), "\(testCase)")
            let shown = deviceCalendar(zone).dateComponents([.day, .hour, .minute, .second, .weekday], from: Date(timeIntervalSince1970: TimeInterval(fire)))
            let showsRequested = shown.hour == spec.hour && shown.minute == (spec.minute ?? 0)
                && shown.second == (spec.second ?? 0)
                && (spec.weekday == nil || shown.weekday == spec.weekday) && (spec.day == nil || shown.day == spec.day)
            if showsRequested { return }
            // Otherwise the requested time did not exist: the clocks jumped over it at exactly `fire`.
            let oracle = WallClockOracle(zone: zone)
            let before = oracle.offset(at: fire - 1)
            let after = oracle.offset(at: fire)
            #expect(after > before, "\(testCase) gave \(localTime(fire, in: zone)), which neither shows the time nor ends a gap")
            let gap = (fire + before)..<(fire + after)
            let skipped = [oracle.civilDay(at: fire).adding(-1), oracle.civilDay(at: fire)].contains { day in
                spec.matchesDay(day) && gap.contains(day.number * 86_400 + spec.secondOfDay)
            }
            #expect(skipped, "\(testCase) gave \(localTime(fire, in: zone)), the end of a gap that did not skip the requested time")
        }
    }

    @Test("(c) no matching instant lies between the start and the next date (brute-force oracle)")
    func nextDateIsTheEarliestMatch() async throws {
        await propertyCheck(count: 1000, input: calendarCases) { testCase in
            let zone = testCase.zone
            let fire = nextFire(testCase.spec, after: testCase.start, in: zone)
            let expected = WallClockOracle(zone: zone).nextFire(of: testCase.spec, after: testCase.start)
            #expect(
                fire == expected,
                "\(testCase): got \(fire.map { localTime($0, in: zone) } ?? "nil"), oracle \(expected.map { localTime($0, in: zone) } ?? "nil")"
            )
        }
    }

    @Test("(d) a wall-clock time the clocks repeat fires once, at its first occurrence")
    func repeatedWallClockTimeFiresOnce() async throws {
        let fallBacks = zoneNames.flatMap { name in
            transitionsByZone[name]!.filter { $0.before > $0.after }.map { (name: name, transition: $0) }
        }
        let cases = zip(Gen.int(in: 0..<fallBacks.count), Gen.int(in: 0...1_000_000), Gen.int(in: -86_399...7_200))
        await propertyCheck(count: 300, input: cases) { pick, withinOverlap, startOffset in
            let (name, transition) = fallBacks[pick]
            let zone = TimeZone(identifier: name)!
            let oracle = WallClockOracle(zone: zone)
            let overlap = transition.before - transition.after
            let firstOccurrence = transition.at - overlap + withinOverlap % overlap
            let secondOccurrence = firstOccurrence + overlap
            let local = oracle.localSeconds(at: firstOccurrence)
            #expect(oracle.localSeconds(at: secondOccurrence) == local)
            let timeOfDay = ((local % 86_400) + 86_400) % 86_400
            let spec = WallClockSpec(hour: timeOfDay / 3600, minute: timeOfDay / 60 % 60, second: timeOfDay % 60)
            let start = min(firstOccurrence + startOffset, secondOccurrence - 1)
            let context = "\(spec) in \(name) after \(localTime(start, in: zone))"

            let fire = try #require(nextFire(spec, after: start, in: zone), "\(context)")
            #expect(fire != secondOccurrence, "\(context) fired at the second occurrence")
            if start < firstOccurrence {
                #expect(fire == firstOccurrence, "\(context) gave \(localTime(fire, in: zone))")
            } else {
                #expect(oracle.civilDay(at: fire) == oracle.civilDay(at: firstOccurrence).adding(1), "\(context) gave \(localTime(fire, in: zone))")
            }
            let following = try #require(nextFire(spec, after: fire, in: zone), "\(context)")
            #expect(following != secondOccurrence, "\(context) fired again at the second occurrence")
            #expect(oracle.civilDay(at: following) == oracle.civilDay(at: fire).adding(1), "\(context) then gave \(localTime(following, in: zone))")
        }
    }

    @Test("(e) components that name a time zone are matched in it, whatever the device's zone")
    func componentsZoneWinsOverDeviceZone() async throws {
        let cases = zip(calendarCases, Gen.int(in: 0..<zoneNames.count))
        await propertyCheck(count: 500, input: cases) { testCase, deviceIndex in
            let deviceZone = TimeZone(identifier: zoneNames[deviceIndex])!
            var components = testCase.spec.components
            components.timeZone = testCase.zone
            let fire = TriggerRules.nextDate(
                matching: components,
                after: testCase.startDate,
                calendar: deviceCalendar(deviceZone),
                timeZone: deviceZone
            ).map { Int($0.timeIntervalSince1970) }
            let expected = WallClockOracle(zone: testCase.zone).nextFire(of: testCase.spec, after: testCase.start)
            #expect(fire == expected, "\(testCase) on a device in \(deviceZone.identifier)")
        }
    }

    @Test("(f) a daily trigger steps one calendar day at a time through a year", arguments: zoneNames)
    func dailyTriggerStepsOneDayAtATime(zoneName: String) async throws {
        let zone = TimeZone(identifier: zoneName)!
        let oracle = WallClockOracle(zone: zone)
        let cases = zip(Gen.int(in: 0...23), Gen.int(in: 0...59), Gen.int(in: 2019...2027))
        await propertyCheck(count: 5, input: cases) { hour, minute, year in
            let spec = WallClockSpec(hour: hour, minute: minute, second: 0)
            // Midnight UTC on January 1st of `year` (every fourth year from 1972 is a leap year until 2100).
            let start = ((year - 1970) * 365 + (year - 1969) / 4) * 86_400
            let first = try #require(nextFire(spec, after: start, in: zone))
            var previous = first
            var unevenDays = 0
            for _ in 0..<366 {
                let fire = try #require(nextFire(spec, after: previous, in: zone))
                // A closure, so that the formatting is done only for a failure.
                let context = { [previous] in Comment(rawValue: "\(spec) in \(zoneName): \(localTime(previous, in: zone)) then \(localTime(fire, in: zone))") }
                #expect(oracle.civilDay(at: fire) == oracle.civilDay(at: previous).adding(1), context())
                let bothExact = [previous, fire].allSatisfy { oracle.localSeconds(at: $0) % 86_400 == spec.secondOfDay }
                if bothExact {
                    let offsetChange = oracle.offset(at: fire) - oracle.offset(at: previous)
                    #expect(fire - previous == 86_400 - offsetChange, context())
                    #expect([82_800, 84_600, 86_400, 88_200, 90_000].contains(fire - previous), context())
                }
                if fire - previous != 86_400 { unevenDays += 1 }
                previous = fire
            }
            // Away from the small hours no time is skipped or repeated: the only days that are not 24 hours
            // long are those with an offset change.
            if (5...21).contains(hour) {
                let changes = transitionsByZone[zoneName]!.filter { $0.at > first && $0.at <= previous }.count
                #expect(unevenDays == changes, "\(spec) in \(zoneName) from \(year)")
            }
        }
    }
}

/// Every wall-clock time near every offset change, exhaustively: the random cases above land next to a change
/// only now and then, and that is where Foundation's matching goes wrong.
@Suite("Calendar trigger next fire date, around every offset change")
struct CalendarNextFireDateTransitionSweepTests {
    @Test("every 5 minutes within 3 hours of each change in 2026 and 2027, from six starts, agrees with the oracle", arguments: zoneNames)
    func sweepAroundTransitions(zoneName: String) {
        let zone = TimeZone(identifier: zoneName)!
        let oracle = WallClockOracle(zone: zone)
        let changes = transitionsByZone[zoneName]!.filter { (1_767_225_600..<1_830_297_600).contains($0.at) }
        var disagreements = 0
        for change in changes {
            let localChange = oracle.localSeconds(at: change.at)
            for minutes in stride(from: -180, through: 180, by: 5) {
                let timeOfDay = ((localChange + minutes * 60) % 86_400 + 86_400) % 86_400
                let spec = WallClockSpec(hour: timeOfDay / 3600, minute: timeOfDay / 60 % 60, second: 0)
                for start in [change.at - 86_400, change.at - 5 * 3600, change.at - 1, change.at, change.at + 1, change.at + 3600] {
                    let fire = nextFire(spec, after: start, in: zone)
                    let expected = oracle.nextFire(of: spec, after: start)
                    guard fire != expected else { continue }
                    disagreements += 1
                    // Report a few in full; the count says how many more there were.
                    if disagreements <= 5 {
                        Issue.record("\(spec) in \(zoneName) after \(localTime(start, in: zone)): got \(fire.map { localTime($0, in: zone) } ?? "nil"), oracle \(expected.map { localTime($0, in: zone) } ?? "nil")")
                    }
                }
            }
        }
        #expect(disagreements == 0)
    }
}

/// Hand-picked dates, each checked against the local time a person would read off a clock.
@Suite("Calendar trigger next fire date, examples")
struct CalendarNextFireDateExampleTests {
    struct Example: Sendable, CustomTestStringConvertible {
        var zone: String
        var after: String
        var components: DateComponents
        var expected: String?
        var testDescription: String { "\(components) in \(zone) after \(after) → \(expected ?? "nil")" }
    }

    static let examples: [Example] = [
        // US spring forward, 2026-03-08: 02:00 EST becomes 03:00 EDT.
        Example(zone: "America/New_York", after: "2026-03-08T00:00:00-05:00", components: DateComponents(hour: 2, minute: 30), expected: "2026-03-08T03:00:00-04:00"),
        Example(zone: "America/New_York", after: "2026-03-07T12:00:00-05:00", components: DateComponents(hour: 2, minute: 30), expected: "2026-03-08T03:00:00-04:00"),
        Example(zone: "America/New_York", after: "2026-03-08T03:00:00-04:00", components: DateComponents(hour: 2, minute: 30), expected: "2026-03-09T02:30:00-04:00"),
        Example(zone: "America/New_York", after: "2026-03-08T00:00:00-05:00", components: DateComponents(hour: 2), expected: "2026-03-08T03:00:00-04:00"),
        Example(zone: "America/New_York", after: "2026-03-02T00:00:00-05:00", components: DateComponents(hour: 2, minute: 30, weekday: 1), expected: "2026-03-08T03:00:00-04:00"),
        Example(zone: "America/New_York", after: "2026-01-01T00:00:00-05:00", components: DateComponents(year: 2026, month: 3, day: 8, hour: 2, minute: 30), expected: "2026-03-08T03:00:00-04:00"),
        // US fall back, 2026-11-01: 02:00 EDT becomes 01:00 EST, so 01:30 happens twice.
        Example(zone: "America/New_York", after: "2026-11-01T00:00:00-04:00", components: DateComponents(hour: 1, minute: 30), expected: "2026-11-01T01:30:00-04:00"),
        Example(zone: "America/New_York", after: "2026-11-01T01:30:00-04:00", components: DateComponents(hour: 1, minute: 30), expected: "2026-11-02T01:30:00-05:00"),
        Example(zone: "America/New_York", after: "2026-11-01T01:40:00-04:00", components: DateComponents(hour: 1, minute: 30), expected: "2026-11-02T01:30:00-05:00"),
        // Europe, 2026-03-29 and 2026-10-25.
        Example(zone: "Europe/Berlin", after: "2026-03-29T00:00:00+01:00", components: DateComponents(hour: 2, minute: 30), expected: "2026-03-29T03:00:00+02:00"),
        Example(zone: "Europe/Berlin", after: "2026-10-25T00:00:00+02:00", components: DateComponents(hour: 2, minute: 30), expected: "2026-10-25T02:30:00+02:00"),
        // Southern hemisphere: Sydney springs forward in October and falls back in April.
        Example(zone: "Australia/Sydney", after: "2026-10-04T00:00:00+10:00", components: DateComponents(hour: 2, minute: 30), expected: "2026-10-04T03:00:00+11:00"),
        Example(zone: "Australia/Sydney", after: "2026-04-05T00:00:00+11:00", components: DateComponents(hour: 2, minute: 30), expected: "2026-04-05T02:30:00+11:00"),
        // Santiago changes at midnight: on 2026-09-06 the day starts at 01:00; on 2026-04-04 23:xx happens twice.
        Example(zone: "America/Santiago", after: "2026-09-05T12:00:00-04:00", components: DateComponents(hour: 0, minute: 30), expected: "2026-09-06T01:00:00-03:00"),
        Example(zone: "America/Santiago", after: "2026-09-05T12:00:00-04:00", components: DateComponents(hour: 0), expected: "2026-09-06T01:00:00-03:00"),
        Example(zone: "America/Santiago", after: "2026-04-04T12:00:00-03:00", components: DateComponents(hour: 23, minute: 30), expected: "2026-04-04T23:30:00-03:00"),
        Example(zone: "America/Santiago", after: "2026-04-04T23:30:00-03:00", components: DateComponents(hour: 23, minute: 30), expected: "2026-04-05T23:30:00-04:00"),
        // Chatham springs forward from 02:45 (+12:45) to 03:45 (+13:45) on 2026-09-27: the gap ends at 03:45.
        Example(zone: "Pacific/Chatham", after: "2026-09-27T00:00:00+12:45", components: DateComponents(hour: 2, minute: 50), expected: "2026-09-27T03:45:00+13:45"),
        Example(zone: "Pacific/Chatham", after: "2026-09-27T00:00:00+12:45", components: DateComponents(hour: 3, minute: 0), expected: "2026-09-27T03:45:00+13:45"),
        // Chatham falls back from 03:45 (+13:45) to 02:45 (+12:45) on 2026-04-05: 03:45 and later happen once.
        Example(zone: "Pacific/Chatham", after: "2026-04-05T03:44:59+13:45", components: DateComponents(hour: 3, minute: 45), expected: "2026-04-05T03:45:00+12:45"),
        Example(zone: "Pacific/Chatham", after: "2026-04-05T01:00:00+13:45", components: DateComponents(hour: 3, minute: 50), expected: "2026-04-05T03:50:00+12:45"),
        Example(zone: "Pacific/Chatham", after: "2026-04-05T01:00:00+13:45", components: DateComponents(hour: 3, minute: 30), expected: "2026-04-05T03:30:00+13:45"),
        // Lord Howe springs forward by 30 minutes, from 02:00 to 02:30, on 2026-10-04.
        Example(zone: "Australia/Lord_Howe", after: "2026-10-04T02:30:00+11:00", components: DateComponents(hour: 2, minute: 40), expected: "2026-10-04T02:40:00+11:00"),
        Example(zone: "Australia/Lord_Howe", after: "2026-10-04T00:00:00+10:30", components: DateComponents(hour: 2, minute: 15), expected: "2026-10-04T02:30:00+11:00"),
        Example(zone: "Australia/Lord_Howe", after: "2026-10-01T00:00:00+10:30", components: DateComponents(year: 2026, month: 10, day: 4, hour: 2, minute: 15), expected: "2026-10-04T02:30:00+11:00"),
        // Apia sprang forward from 03:00 to 04:00 on 2020-09-27, its last daylight-saving change but one.
        Example(zone: "Pacific/Apia", after: "2020-09-26T12:00:00+13:00", components: DateComponents(hour: 3, minute: 30), expected: "2020-09-27T04:00:00+14:00"),
        // Fixed half-hour and 45-minute offsets.
        Example(zone: "Asia/Kolkata", after: "2026-03-08T00:00:00+05:30", components: DateComponents(hour: 9, minute: 15), expected: "2026-03-08T09:15:00+05:30"),
        Example(zone: "Asia/Kathmandu", after: "2026-03-08T23:59:59+05:45", components: DateComponents(hour: 0), expected: "2026-03-09T00:00:00+05:45"),
        // Days that some months lack are matched in the months that have them; February 30th never.
        Example(zone: "UTC", after: "2026-02-01T00:00:00Z", components: DateComponents(day: 31), expected: "2026-03-31T00:00:00Z"),
        Example(zone: "UTC", after: "2026-01-01T00:00:00Z", components: DateComponents(month: 2, day: 29), expected: "2028-02-29T00:00:00Z"),
        Example(zone: "UTC", after: "2026-01-01T00:00:00Z", components: DateComponents(month: 2, day: 30), expected: nil),
        Example(zone: "America/Santiago", after: "2026-01-01T00:00:00-03:00", components: DateComponents(month: 4, day: 31), expected: nil),
    ]

    @Test(arguments: examples)
    func nextDate(_ example: Example) throws {
        let zone = try #require(TimeZone(identifier: example.zone))
        let after = try #require(ISO8601DateFormatter().date(from: example.after))
        let expected = try example.expected.map { try #require(ISO8601DateFormatter().date(from: $0)) }
        let fire = TriggerRules.nextDate(matching: example.components, after: after, calendar: deviceCalendar(zone), timeZone: zone)
        #expect(fire == expected, "got \(fire.map { localTime(Int($0.timeIntervalSince1970), in: zone) } ?? "nil")")
    }

    @Test("a trigger's own calendar does not carry its zone along: the device's zone applies")
    func componentsCalendarZoneIsNotUsed() throws {
        var sydney = Calendar(identifier: .gregorian)
        sydney.timeZone = try #require(TimeZone(identifier: "Australia/Sydney"))
        var components = DateComponents(hour: 8)
        components.calendar = sydney
        let newYork = try #require(TimeZone(identifier: "America/New_York"))
        let after = try #require(ISO8601DateFormatter().date(from: "2026-06-01T00:00:00Z"))
        let fire = TriggerRules.nextDate(matching: components, after: after, calendar: deviceCalendar(newYork), timeZone: newYork)
        #expect(fire == ISO8601DateFormatter().date(from: "2026-06-01T08:00:00-04:00"))
    }

    @Test("a trigger's zone wins over its calendar's zone")
    func componentsZoneWinsOverItsCalendarZone() throws {
        var sydney = Calendar(identifier: .gregorian)
        sydney.timeZone = try #require(TimeZone(identifier: "Australia/Sydney"))
        var components = DateComponents(hour: 8)
        components.calendar = sydney
        components.timeZone = TimeZone(identifier: "Asia/Kolkata")
        let utc = try #require(TimeZone(identifier: "UTC"))
        let after = try #require(ISO8601DateFormatter().date(from: "2026-06-01T00:00:00Z"))
        let fire = TriggerRules.nextDate(matching: components, after: after, calendar: deviceCalendar(utc), timeZone: utc)
        #expect(fire == ISO8601DateFormatter().date(from: "2026-06-01T08:00:00+05:30"))
    }
}
