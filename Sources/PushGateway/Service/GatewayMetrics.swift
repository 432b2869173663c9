package import CoreMetrics
package import MetricsEndpoint
package import NotificationCore
import Synchronization

/// What the gateway counts and measures, through swift-metrics (`Docs/metrics.md`). Made from the
/// factory the gateway is given; with none, nothing is recorded.
///
/// Handles are made once (or once per reason) and kept: a push costs an atomic increment, not a
/// lookup in the factory's registry.
package final class GatewayMetrics: Sendable {
    package static let descriptions: [MetricDescription] = [
        .init("unotify_gateway_pushes_accepted_total", "Pushes the provider API answered 200, by environment and push type."),
        .init("unotify_gateway_pushes_rejected_total", "Provider requests refused, by environment, HTTP status and APNs reason."),
        .init("unotify_gateway_pushes_sent_total", "Pushes sent to devices on their links (again after a reconnection)."),
        .init("unotify_gateway_pushes_expired_total", "Stored pushes removed when their apns-expiration passed."),
        .init("unotify_gateway_pushes_not_taken_total", "Pushes dropped after their device's links failed with them the most tries a push has."),
        .init("unotify_gateway_push_delivery_seconds", "From a push's acceptance to the device's acknowledgement of it."),
        .init("unotify_gateway_device_links", "Devices linked now."),
        .init("unotify_gateway_pushes_in_flight", "Pushes sent on a link and not acknowledged yet."),
        .init("unotify_gateway_pushes_stored", "Pushes stored for devices: queued (in order for a linked device) or held (the device was not linked)."),
        .init("unotify_gateway_pushes_unwritten", "Pushes accepted and not durable yet (waiting for the next commit)."),
    ]

    private let factory: any MetricsFactory
    private let accepted: [APNs.Environment: [APNs.PushType: Counter]]
    private let rejected = Mutex<[RejectionKey: Counter]>([:])
    package let sent: Counter
    package let expired: Counter
    package let droppedNotTaken: Counter
    /// Acceptance to acknowledgement.
    package let delivery: CoreMetrics.Timer
    package let deviceLinks: Gauge
    package let inFlight: Gauge
    package let queued: Gauge
    package let held: Gauge
    package let unwritten: Gauge

    private struct RejectionKey: Hashable {
        var environment: APNs.Environment
        var reason: APNs.Reason
    }

    package init(factory: any MetricsFactory = NOOPMetricsHandler.instance) {
        self.factory = factory
        var accepted: [APNs.Environment: [APNs.PushType: Counter]] = [:]
        for environment in APNs.Environment.allCases {
            for pushType in APNs.PushType.allCases {
                accepted[environment, default: [:]][pushType] = Counter(
                    label: "unotify_gateway_pushes_accepted_total",
                    dimensions: [("environment", environment.rawValue), ("push_type", pushType.rawValue)], factory: factory)
            }
        }
        self.accepted = accepted
        sent = Counter(label: "unotify_gateway_pushes_sent_total", factory: factory)
        expired = Counter(label: "unotify_gateway_pushes_expired_total", factory: factory)
        droppedNotTaken = Counter(label: "unotify_gateway_pushes_not_taken_total", factory: factory)
        delivery = CoreMetrics.Timer(label: "unotify_gateway_push_delivery_seconds", factory: factory)
        deviceLinks = Gauge(label: "unotify_gateway_device_links", factory: factory)
        inFlight = Gauge(label: "unotify_gateway_pushes_in_flight", factory: factory)
        queued = Gauge(label: "unotify_gateway_pushes_stored", dimensions: [("state", "queued")], factory: factory)
        held = Gauge(label: "unotify_gateway_pushes_stored", dimensions: [("state", "held")], factory: factory)
        unwritten = Gauge(label: "unotify_gateway_pushes_unwritten", factory: factory)
    }

    package func accepted(_ environment: APNs.Environment, _ pushType: APNs.PushType) {
        accepted[environment]?[pushType]?.increment()
    }

    package func rejected(_ environment: APNs.Environment, _ reason: APNs.Reason) {
        let key = RejectionKey(environment: environment, reason: reason)
        let counter = rejected.withLock { counters in
            if let counter = counters[key] { return counter }
            let counter = Counter(label: "unotify_gateway_pushes_rejected_total", dimensions: [
                ("environment", environment.rawValue), ("status", String(reason.status)), ("reason", reason.rawValue),
            ], factory: factory)
            counters[key] = counter
            return counter
        }
        counter.increment()
    }
}
