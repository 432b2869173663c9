import Logging
import PushGateway
import Synchronization
import TestSupport

extension PostgresServer {
    /// Opens a store on `url` and runs its connection pool for the rest of the test process.
    static func openStore(_ url: String, pauses: PostgresGatewayStore.StoringPauses = .init()) async throws -> PostgresGatewayStore {
        var logger = Logger(label: "postgres")
        logger.logLevel = .critical
        // The whole suite on two cores can keep a call waiting for far longer than a server would.
        let store = try PostgresGatewayStore(url: url, logger: logger, answerTimeout: .seconds(60), pauses: pauses)
        PostgresPools.running.withLock { $0.append(Task { await store.run() }) }
        try await store.migrate()
        return store
    }
}

/// The stores' connection pools, running until the test process ends.
enum PostgresPools {
    static let running = Mutex<[Task<Void, Never>]>([])
}
