package import MetricsEndpoint
package import NotificationEngine

/// How the daemon's metrics are described on the Prometheus endpoint (``DaemonMetrics``).
extension DaemonMetrics {
    package static let descriptions: [MetricDescription] = [
        .init("unotify_daemon_pushes_received_total", "Pushes from the device link handed to their app's notification center."),
        .init("unotify_daemon_pushes_dropped_total", "Pushes from the device link dropped, by reason."),
        .init("unotify_daemon_apps_quarantined_total", "Apps found with a stored state that cannot be read, and quarantined (once a run each)."),
        .init("unotify_daemon_notifications_presented_total", "Notifications that reached the presentation decision, by source and by how they were shown."),
        .init("unotify_daemon_service_extension_runs_total", "Service extensions' work on pushes, by outcome."),
        .init("unotify_daemon_push_latency_seconds",
              "From a push's acceptance by the gateway to its presentation (or, for a background push, its handing to the app), by path."),
        .init("unotify_daemon_gateway_linked", "1 while the device link to the push gateway is up."),
        .init("unotify_daemon_apps_connected", "Apps connected to the daemon now."),
        .init("unotify_daemon_service_extensions", "Service extensions running now, and pushes waiting for one."),
        .init("unotify_daemon_app_messages_waiting", "Responses and pushes kept for apps that have not taken them yet."),
        .init("unotify_daemon_delivery_reports_unsent", "Delivery-log reports not yet confirmed by the gateway."),
    ]
}
