import Benchmark
import BenchmarkSupport
import Foundation

/// What the scheduling benchmarks schedule: `count` time-interval triggers, one per request.
enum SchedulingWorkload {
    /// The request counts each scheduling benchmark runs at: 1_000 is the small reference.
    static let requestCounts = [1_000, 10_000, 100_000]

    /// The seed of every run, so that runs are comparable.
    static let seed: UInt64 = 0x0DD5_EED5

    /// `count` distinct intervals, 1…count seconds, in a seeded pseudo-random order: the requests are
    /// added out of firing order, so the queue does real work on every insertion.
    static func intervals(count: Int) -> [TimeInterval] {
        var generator = SeededGenerator(seed: seed)
        return (1...count).shuffled(using: &generator).map(TimeInterval.init)
    }

    /// How many benchmark iterations to run at `count` requests: enough samples for a median at small
    /// counts, without spending minutes per iteration at large ones.
    static func maxIterations(count: Int) -> Int {
        switch count {
        case ..<10_000: 50
        case ..<100_000: 15
        default: 5
        }
    }

    /// The wall-clock time of one iteration divided by the number of requests it scheduled and fired.
    static let nanosecondsPerRequest = BenchmarkMetric.custom("ns per request", polarity: .prefersSmaller, useScalingFactor: false)
}

extension Duration {
    /// The duration in whole nanoseconds.
    var nanoseconds: Int64 {
        components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000
    }
}
