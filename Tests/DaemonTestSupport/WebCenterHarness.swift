import Foundation
import Logging
import ServiceLifecycle
import Testing
import WebNotificationCenter

/// Runs `body` with a daemon in this process, on a clock the test moves, and the center over it,
/// with the center's URL (holding its secret).
package func withWebCenter(directory: URL? = nil, logHandler: (any LogHandler)? = nil,
                              _ body: @Sendable @escaping (RunningDaemon, String) async throws -> Void) async throws {
    try await withDaemon(directory: directory, logHandler: logHandler) { daemon in
        var logger = Logger(label: "test.web")
        logger.logLevel = .critical
        var configuration = WebNotificationCenter.Configuration()
        configuration.port = 0
        let (urls, listening) = AsyncStream<String>.makeStream()
        let center = WebNotificationCenter(engine: daemon.engine, configuration: configuration, logger: logger) { listening.yield($0) }
        let group = ServiceGroup(services: [center.service], gracefulShutdownSignals: [], cancellationSignals: [], logger: logger)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask {
                defer { listening.finish() }
                try await group.run()
            }
            do {
                var iterator = urls.makeAsyncIterator()
                let url = try #require(await iterator.next(), "the center did not listen")
                try await body(daemon, url)
            } catch {
                await group.triggerGracefulShutdown()
                try? await tasks.waitForAll()
                throw error
            }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }
}
