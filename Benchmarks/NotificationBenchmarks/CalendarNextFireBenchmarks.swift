import Benchmark
import Foundation
import NotificationCore

/// The next-fire computation of calendar triggers, `TriggerRules.nextDate(matching:after:calendar:timeZone:)`.
///
/// Each iteration computes 1_000 next dates (the scaling factor, so results read per call), from start
/// dates spread evenly over a year, so that month ends and both daylight-saving changes are crossed.
func registerCalendarNextFireBenchmarks() {
    let cases: [(name: String, components: DateComponents, timeZone: String)] = [
        ("daily 08:00", DateComponents(hour: 8, minute: 0), "UTC"),
        ("weekly Monday 09:30", DateComponents(hour: 9, minute: 30, weekday: 2), "UTC"),
        ("monthly day 31", DateComponents(day: 31), "UTC"),
        ("daily 02:30 in America/New_York (DST)", DateComponents(hour: 2, minute: 30), "America/New_York"),
    ]
    let calendar = Calendar(identifier: .gregorian)
    let start = Date(timeIntervalSince1970: 1_767_225_600) // 2026-01-01 00:00:00 UTC
    let year: TimeInterval = 365 * 86_400

    for entry in cases {
        let timeZone = TimeZone(identifier: entry.timeZone)!
        Benchmark(
            "Calendar next fire: \(entry.name)",
            configuration: .init(
                metrics: [.wallClock, .cpuTotal, .mallocCountTotal, .throughput],
                scalingFactor: .kilo,
                maxDuration: .seconds(3),
                maxIterations: 1_000
            )
        ) { benchmark in
            let calls = benchmark.scaledIterations
            let step = year / TimeInterval(calls.count)
            var unmatched = 0
            for index in calls {
                let after = start.addingTimeInterval(TimeInterval(index) * step)
                let next = TriggerRules.nextDate(matching: entry.components, after: after, calendar: calendar, timeZone: timeZone)
                if next == nil { unmatched += 1 }
                blackHole(next)
            }
            // Every one of these components matches some date: a nil means the work was not done.
            if unmatched > 0 {
                benchmark.error("\(unmatched) of \(calls.count) calls found no next date for \(entry.name)")
            }
        }
    }
}
