package import CoreMetrics
import Prometheus
import Synchronization

/// What a metric measures: the `# HELP` line of its exposition. Each part of the system lists its
/// own (`GatewayMetrics`, `DaemonMetrics`).
package struct MetricDescription: Sendable {
    package var name: String
    package var help: String

    package init(_ name: String, _ help: String) {
        self.name = name
        self.help = help
    }

    /// The buckets of every timer: how long a push takes, from a millisecond to a service
    /// extension's longest time.
    package static let latencyBuckets: [Duration] = [
        .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(20), .milliseconds(50),
        .milliseconds(100), .milliseconds(200), .milliseconds(500), .seconds(1), .seconds(2), .seconds(5),
        .seconds(10), .seconds(30), .seconds(60), .seconds(300),
    ]
}

/// A process's metrics, in Prometheus's text format: a swift-metrics factory that the parts of the
/// process are given (never the global one, so that two systems in one test process do not mix),
/// over one `PrometheusCollectorRegistry`.
///
/// Counters and histograms are updated as things happen. Gauges that describe a state (links
/// connected, pushes stored) are read when the metrics are: each part adds a sampler, which runs
/// before every exposition.
package final class MetricsRegistry: MetricsFactory, Sendable {
    private let registry = PrometheusCollectorRegistry()
    /// The help text of each metric, by name.
    private let descriptions: [String: String]
    private let samplers = Mutex<[@Sendable () async -> Void]>([])

    /// - Parameter descriptions: the metrics the process's parts may make; one made under any other
    ///   name has no help line.
    package init(describing descriptions: [MetricDescription]) {
        self.descriptions = Dictionary(descriptions.map { ($0.name, $0.help) }) { first, _ in first }
    }

    /// Adds work that sets gauges to what they describe now, run before each exposition.
    package func addSampler(_ sampler: @escaping @Sendable () async -> Void) {
        samplers.withLock { $0.append(sampler) }
    }

    /// Every metric, in the text exposition format (version 0.0.4), gauges sampled first.
    package func exposition() async -> [UInt8] {
        for sampler in samplers.withLock({ $0 }) { await sampler() }
        return registry.emitToBuffer()
    }

    private func descriptor(_ label: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: label, unitName: "", helpText: descriptions[label] ?? "")
    }

    // MARK: - MetricsFactory

    package func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        registry.makeCounter(descriptor: descriptor(label), labels: dimensions)
    }

    package func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        registry.makeCounter(descriptor: descriptor(label), labels: dimensions)
    }

    package func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        guard aggregate else { return registry.makeGauge(descriptor: descriptor(label), labels: dimensions) }
        return registry.makeValueHistogram(descriptor: descriptor(label), labels: dimensions, buckets: Self.valueBuckets)
    }

    package func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        registry.makeGauge(descriptor: descriptor(label), labels: dimensions)
    }

    package func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        registry.makeDurationHistogram(descriptor: descriptor(label), labels: dimensions, buckets: MetricDescription.latencyBuckets)
    }

    package func destroyCounter(_ handler: any CounterHandler) {
        if let counter = handler as? Prometheus.Counter { registry.unregisterCounter(counter) }
    }

    package func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {
        if let counter = handler as? Prometheus.Counter { registry.unregisterCounter(counter) }
    }

    package func destroyRecorder(_ handler: any RecorderHandler) {
        if let gauge = handler as? Prometheus.Gauge { registry.unregisterGauge(gauge) }
        if let histogram = handler as? ValueHistogram { registry.unregisterValueHistogram(histogram) }
    }

    package func destroyMeter(_ handler: any MeterHandler) {
        if let gauge = handler as? Prometheus.Gauge { registry.unregisterGauge(gauge) }
    }

    package func destroyTimer(_ handler: any TimerHandler) {
        if let histogram = handler as? DurationHistogram { registry.unregisterDurationHistogram(histogram) }
    }

    private static let valueBuckets: [Double] = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000]
}
