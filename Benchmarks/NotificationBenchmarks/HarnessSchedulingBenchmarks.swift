import Benchmark
import Foundation
import OpenUserNotifications
import OpenUserNotificationsTesting

/// Scheduling, then firing, N time-interval requests through the whole in-process system, as a test
/// does: `UNUserNotificationCenter.add` on a `NotificationTestHarness` whose app is in the background,
/// then the harness's manual clock advanced past the last trigger.
///
/// Measured: N awaited `add` calls, then `clock.advance(by:)`. Checked afterwards: the history holds
/// exactly N presentations.
func registerHarnessSchedulingBenchmarks() {
    for count in SchedulingWorkload.requestCounts {
        Benchmark(
            "Harness schedule+fire N=\(count)",
            configuration: .init(
                metrics: [.wallClock, .cpuTotal, .mallocCountTotal, SchedulingWorkload.nanosecondsPerRequest],
                maxDuration: .seconds(60),
                maxIterations: SchedulingWorkload.maxIterations(count: count)
            )
        ) { benchmark in
            let harness = NotificationTestHarness(appState: .background, pendingRequestLimit: nil)
            harness.person.willAnswerAuthorization(allow: true)
            let center = harness.center
            guard try await center.requestAuthorization(options: [.alert, .sound, .badge]) else {
                benchmark.error("authorization was not granted")
                return
            }
            let intervals = SchedulingWorkload.intervals(count: count)
            let content = UNMutableNotificationContent()
            content.title = "Benchmark"
            let requests = intervals.enumerated().map { index, interval in
                UNNotificationRequest(
                    identifier: "request-\(index)",
                    content: content,
                    trigger: UNTimeIntervalNotificationTrigger(timeInterval: interval, repeats: false)
                )
            }
            let lastInterval = intervals.max()!

            benchmark.startMeasurement()
            let began = ContinuousClock.now
            for request in requests { try await center.add(request) }
            await harness.clock.advance(by: lastInterval + 1)
            let elapsed = ContinuousClock.now - began
            benchmark.stopMeasurement()

            let presented = harness.history.presentations.count
            guard presented == count else {
                benchmark.error("presented \(presented) notifications, expected \(count)")
                return
            }
            benchmark.measurement(SchedulingWorkload.nanosecondsPerRequest, Int(elapsed.nanoseconds / Int64(count)))
        }
    }
}
