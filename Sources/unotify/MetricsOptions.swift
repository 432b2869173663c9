import ArgumentParser
import Logging
import MetricsEndpoint
import NotificationDaemon
import NotificationEngine
import PushGateway

/// Where a server of `unotify` serves its Prometheus metrics (`Docs/metrics.md`).
struct MetricsOptions: ParsableArguments {
    @Option(name: .long, help: "The port of the metrics endpoint (GET /metrics, Prometheus's text format); 0 picks a free one. Default: 2200 for serve and gateway serve, 2201 for daemon; when the default is taken, the server goes on without metrics.")
    var metricsPort: Int?

    @Option(name: .long, help: "The address the metrics endpoint binds (loopback unless told otherwise).")
    var metricsHost = "127.0.0.1"

    @Flag(name: .long, help: "Serve no metrics.")
    var noMetrics = false

    /// The port `unotify serve` and `unotify gateway serve` serve metrics on by default.
    static let gatewayPort = 2200
    /// The port `unotify daemon` serves metrics on by default.
    static let daemonPort = 2201

    func validate() throws {
        if let metricsPort, !(0...65_535).contains(metricsPort) { throw ValidationError("--metrics-port is between 0 and 65535.") }
    }

    /// The process's metrics, or nil with `--no-metrics`.
    func makeRegistry() -> MetricsRegistry? {
        noMetrics ? nil : MetricsRegistry(describing: GatewayMetrics.descriptions + DaemonMetrics.descriptions)
    }

    /// The endpoint serving `registry`: on `--metrics-port`, which must be free, or on `defaultPort`,
    /// which another process may hold.
    func endpoint(for registry: MetricsRegistry, defaultPort: Int, readiness: Readiness, logger: Logger) -> MetricsEndpoint {
        MetricsEndpoint(registry: registry, configuration: .init(host: metricsHost, port: metricsPort ?? defaultPort, isRequired: metricsPort != nil),
                        readiness: readiness, logger: logger)
    }
}
