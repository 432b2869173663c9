import Benchmark
import Foundation
import NotificationCore

/// Scheduling, then firing, N time-interval requests on `NotificationCenterMachine` alone: the cost of
/// the rules and the trigger queue, without the in-process shell, its queue and the test harness.
///
/// Measured: N `add` calls, then `advance(to:)` repeated until it returns `nil`. Checked afterwards:
/// exactly N notifications were presented.
func registerMachineSchedulingBenchmarks() {
    for count in SchedulingWorkload.requestCounts {
        Benchmark(
            "Machine schedule+fire N=\(count)",
            configuration: .init(
                metrics: [.wallClock, .cpuTotal, .mallocCountTotal, SchedulingWorkload.nanosecondsPerRequest],
                maxDuration: .seconds(30),
                maxIterations: SchedulingWorkload.maxIterations(count: count)
            )
        ) { benchmark in
            let start = Date(timeIntervalSince1970: 1_767_225_600)
            let intervals = SchedulingWorkload.intervals(count: count)
            var content = NotificationContent()
            content.title = "Benchmark"
            let requests = intervals.enumerated().map { index, interval in
                NotificationRequest(identifier: "request-\(index)", content: content, trigger: .timeInterval(interval, repeats: false))
            }
            var configuration = NotificationCenterMachine.Configuration()
            configuration.pendingRequestLimit = nil
            var machine = NotificationCenterMachine(
                now: start,
                calendar: Calendar(identifier: .gregorian),
                timeZone: TimeZone(identifier: "UTC")!,
                appState: .background,
                configuration: configuration
            )
            _ = machine.requestAuthorization(options: [.alert, .sound, .badge], call: 0)
            _ = machine.answerAuthorizationPrompt(allow: true)
            let end = start.addingTimeInterval(intervals.max()! + 1)

            benchmark.startMeasurement()
            let began = ContinuousClock.now
            do {
                for request in requests { _ = try machine.add(request) }
            } catch {
                benchmark.error("add failed: \(error)")
                return
            }
            var presented = 0
            while let effects = machine.advance(to: end) {
                for case .presented in effects { presented += 1 }
            }
            let elapsed = ContinuousClock.now - began
            benchmark.stopMeasurement()

            guard presented == count else {
                benchmark.error("presented \(presented) notifications, expected \(count)")
                return
            }
            benchmark.measurement(SchedulingWorkload.nanosecondsPerRequest, Int(elapsed.nanoseconds / Int64(count)))
            blackHole(machine)
        }
    }
}
