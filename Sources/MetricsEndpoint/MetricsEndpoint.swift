import ConnectionLifecycle
import Hummingbird
package import Logging
import ServiceLifecycle
import Synchronization

/// What a process waits for before it serves (its listeners): `GET /readyz` on its metrics endpoint
/// answers `200` once nothing is left, `503` naming what is.
package final class Readiness: Sendable {
    private let waiting: Mutex<Set<String>>
    private let onReady: @Sendable () -> Void

    /// - Parameter onReady: called once, when the last part is up.
    package init(waitingFor parts: Set<String>, onReady: @escaping @Sendable () -> Void = {}) {
        waiting = Mutex(parts)
        self.onReady = onReady
    }

    /// `part` is up.
    package func ready(_ part: String) {
        let isLast = waiting.withLock { waiting in waiting.remove(part) != nil && waiting.isEmpty }
        if isLast { onReady() }
    }

    /// What is not up yet, sorted.
    package var unready: [String] { waiting.withLock { $0.sorted() } }
}

/// Serves a process's metrics at `GET /metrics` over plain HTTP, for Prometheus to scrape: on
/// loopback unless told otherwise (they tell who is busy, not what anyone was sent). Beside them,
/// `GET /healthz` (`200` while the process runs) and `GET /readyz` (``Readiness``), for a service
/// manager or a load balancer.
package struct MetricsEndpoint: Service {
    package struct Configuration: Sendable {
        package var host = "127.0.0.1"
        package var port: Int
        /// Whether the process stops when the endpoint cannot listen (its port was asked for), or
        /// goes on without metrics, warning (the default port was taken by another process).
        package var isRequired = false

        package init(host: String = "127.0.0.1", port: Int, isRequired: Bool = false) {
            self.host = host
            self.port = port
            self.isRequired = isRequired
        }
    }

    /// The media type of the text exposition format.
    package static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    private let registry: MetricsRegistry
    private let configuration: Configuration
    private let readiness: Readiness
    private let logger: Logger

    package init(registry: MetricsRegistry, configuration: Configuration, readiness: Readiness = Readiness(waitingFor: []), logger: Logger) {
        self.registry = registry
        self.configuration = configuration
        self.readiness = readiness
        self.logger = logger
    }

    package func run() async throws {
        let router = Router()
        let registry = self.registry
        router.get("metrics") { _, _ -> Response in
            let body = await registry.exposition()
            return Response(status: .ok, headers: [.contentType: Self.contentType],
                            body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
        }
        router.get("healthz") { _, _ -> Response in
            Response(status: .ok, headers: [.contentType: "text/plain; charset=utf-8"], body: ResponseBody(byteBuffer: ByteBuffer(string: "ok\n")))
        }
        let readiness = self.readiness
        router.get("readyz") { _, _ -> Response in
            let unready = readiness.unready
            return Response(status: unready.isEmpty ? .ok : .serviceUnavailable, headers: [.contentType: "text/plain; charset=utf-8"],
                            body: ResponseBody(byteBuffer: ByteBuffer(string: unready.isEmpty ? "ready\n" : "waiting for \(unready.joined(separator: ", "))\n")))
        }
        let listened = Atomic<Bool>(false)
        let (host, port, logger) = (configuration.host, configuration.port, self.logger)
        let application = Application(
            router: router,
            server: .http1(lifecycle: ListenerLifecycle(capacity: ConnectionBudget.now.capacity(of: .metrics), deadlines: ListenerLifecycle.httpDeadlines,
                                                        listener: "metrics", logger: logger)),
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "unotify"),
            onServerRunning: { channel in
                listened.store(true, ordering: .relaxed)
                let port = channel.localAddress?.port ?? port
                logger.info("metrics listening", metadata: ["address": .string("http://\(host):\(port)/metrics")])
            },
            logger: logger
        )
        do {
            try await application.run()
        } catch where !listened.load(ordering: .relaxed) && !configuration.isRequired {
            logger.warning("the metrics endpoint could not listen; going on without it (--metrics-port picks another port)",
                           metadata: ["address": .string("\(host):\(port)"), "error": .string("\(error)")])
            try? await gracefulShutdown()
        }
    }
}
