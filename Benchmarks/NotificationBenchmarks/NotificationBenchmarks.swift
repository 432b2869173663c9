import Benchmark

/// Every benchmark of the package, registered for the benchmark runner.
///
/// Run them with `OUN_BENCHMARKS=1 swift package --scratch-path .build-bench benchmark --target NotificationBenchmarks`
/// (see BENCHMARKS.md for what each one measures and how to read the results).
let benchmarks: @Sendable () -> Void = {
    registerCalendarNextFireBenchmarks()
    registerMachineSchedulingBenchmarks()
    registerHarnessSchedulingBenchmarks()
    registerJSONBenchmarks()
}
