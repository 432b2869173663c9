package import CoreMetrics
import DequeModule
package import Foundation
package import NotificationCore
import Synchronization

/// What the daemon counts and measures, through swift-metrics (`Docs/metrics.md`; each metric is
/// described beside the daemon's service, `DaemonMetrics+Descriptions`). Made from the
/// factory in the engine's configuration; with none, nothing is recorded.
package final class DaemonMetrics: Sendable {
    /// How a push reached the person, for its latency.
    package enum PushPath: String, CaseIterable, Sendable {
        /// Shown (or not) as it came.
        case direct
        /// Through the app's service extension.
        case serviceExtension = "service_extension"
        /// A background push handed to its app.
        case background
    }

    private let pushesReceived: Counter
    private let appsQuarantined: Counter
    private let dropped: [String: Counter]
    private let presented: [String: Counter]
    private let extensionRuns: [String: Counter]
    private let latency: [PushPath: CoreMetrics.Timer]
    package let gatewayLinked: Gauge
    package let appsConnected: Gauge
    package let extensionsRunning: Gauge
    package let extensionsWaiting: Gauge
    package let appMessagesWaiting: Gauge
    package let deliveryReportsUnsent: Gauge
    /// When each push on its way to the person was accepted by the gateway, by delivery-log
    /// identifier, and whether it went through a service extension.
    private let arrivals = Mutex(Arrivals())

    /// Reasons a push from the link is dropped, as labelled.
    private static let droppedReasons = ["app_not_found", "app_quarantined", "unreadable_payload"]
    /// How a notification was shown, as labelled: the most visible way.
    private static let presentationLabels = ["banner", "list", "sound_or_badge", "none"]
    private static let sources = ["local", "push"]
    private static let outcomes = ["prepared", "timedOut", "failed", "interrupted"]

    package init(factory: any MetricsFactory = NOOPMetricsHandler.instance) {
        pushesReceived = Counter(label: "unotify_daemon_pushes_received_total", factory: factory)
        appsQuarantined = Counter(label: "unotify_daemon_apps_quarantined_total", factory: factory)
        dropped = Dictionary(uniqueKeysWithValues: Self.droppedReasons.map {
            ($0, Counter(label: "unotify_daemon_pushes_dropped_total", dimensions: [("reason", $0)], factory: factory))
        })
        var presented: [String: Counter] = [:]
        for source in Self.sources {
            for how in Self.presentationLabels {
                presented["\(source) \(how)"] = Counter(label: "unotify_daemon_notifications_presented_total",
                                                         dimensions: [("source", source), ("shown", how)], factory: factory)
            }
        }
        self.presented = presented
        extensionRuns = Dictionary(uniqueKeysWithValues: Self.outcomes.map {
            ($0, Counter(label: "unotify_daemon_service_extension_runs_total", dimensions: [("outcome", $0)], factory: factory))
        })
        latency = Dictionary(uniqueKeysWithValues: PushPath.allCases.map {
            ($0, CoreMetrics.Timer(label: "unotify_daemon_push_latency_seconds", dimensions: [("path", $0.rawValue)], factory: factory))
        })
        gatewayLinked = Gauge(label: "unotify_daemon_gateway_linked", factory: factory)
        appsConnected = Gauge(label: "unotify_daemon_apps_connected", factory: factory)
        extensionsRunning = Gauge(label: "unotify_daemon_service_extensions", dimensions: [("state", "running")], factory: factory)
        extensionsWaiting = Gauge(label: "unotify_daemon_service_extensions", dimensions: [("state", "waiting")], factory: factory)
        appMessagesWaiting = Gauge(label: "unotify_daemon_app_messages_waiting", factory: factory)
        deliveryReportsUnsent = Gauge(label: "unotify_daemon_delivery_reports_unsent", factory: factory)
    }

    package func quarantined() {
        appsQuarantined.increment()
    }

    package func dropped(because reason: String) {
        dropped[reason]?.increment()
    }

    package func extensionRan(_ outcome: PreparationOutcome) {
        extensionRuns[outcome.name]?.increment()
    }

    /// A push reached its app's notification center; `acceptedAt` is when the gateway accepted it.
    package func pushArrived(uniqueID: String?, acceptedAt: Date) {
        pushesReceived.increment()
        guard let uniqueID else { return }
        arrivals.withLock { $0.insert(uniqueID, acceptedAt) }
    }

    /// The push went to its app's service extension.
    package func pushPreparing(uniqueID: String?) {
        guard let uniqueID else { return }
        arrivals.withLock { $0.markPrepared(uniqueID) }
    }

    /// A notification reached the presentation decision at `now`.
    package func presented(_ notification: DeliveredNotification, _ presentation: Presentation, at now: Date) {
        let uniqueID = notification.request.pushUniqueID
        let how = presentation.banner ? "banner" : presentation.list || presentation.lockScreen ? "list"
            : presentation.sound || presentation.badge != nil ? "sound_or_badge" : "none"
        presented["\(notification.request.trigger == .push ? "push" : "local") \(how)"]?.increment()
        guard let uniqueID, let arrival = arrivals.withLock({ $0.remove(uniqueID) }) else { return }
        record(arrival.prepared ? .serviceExtension : .direct, since: arrival.acceptedAt, at: now)
    }

    /// A background push was handed to its app at `now`.
    package func handedToApp(uniqueID: String?, at now: Date) {
        guard let uniqueID, let arrival = arrivals.withLock({ $0.remove(uniqueID) }) else { return }
        record(.background, since: arrival.acceptedAt, at: now)
    }

    private func record(_ path: PushPath, since acceptedAt: Date, at now: Date) {
        // The gateway's clock and this one may differ by a little (on two machines): never below zero.
        latency[path]?.recordNanoseconds(Int64(max(0, now.timeIntervalSince(acceptedAt)) * 1_000_000_000))
    }

    /// The pushes between their arrival and their presentation, bounded: the oldest are forgotten
    /// first (a push held for a stopped app may wait for days).
    private struct Arrivals {
        static let limit = 10_000
        var byID: [String: (acceptedAt: Date, prepared: Bool)] = [:]
        var order = Deque<String>()

        mutating func insert(_ id: String, _ acceptedAt: Date) {
            guard byID.updateValue((acceptedAt, false), forKey: id) == nil else { return }
            order.append(id)
            // Identifiers already removed stay in `order` until they reach its front.
            while byID.count > Self.limit || order.count > 2 * Self.limit, let oldest = order.popFirst() {
                byID.removeValue(forKey: oldest)
            }
        }

        mutating func markPrepared(_ id: String) { byID[id]?.prepared = true }

        mutating func remove(_ id: String) -> (acceptedAt: Date, prepared: Bool)? { byID.removeValue(forKey: id) }
    }
}
