import ConnectionLifecycle
import CoreMetrics
import Foundation
import Hummingbird
import HummingbirdWebSocket
package import Logging
package import NotificationCore
package import NotificationEngine
import PrivateFiles
import ProcessSpawning
package import ServiceLifecycle

/// The daemon as services to run in one `ServiceGroup`: the scheduler and the local API's listeners.
package struct NotificationDaemonServices: Sendable {
    /// The engine, for tests and for `unotify serve`'s other parts.
    package let engine: DaemonEngine
    /// The services to run.
    package let services: [any Service]
    /// The administrator's key.
    package let adminKey: String
    /// The link to the push gateway, when one is configured.
    package let link: DeviceLinkClient?

    /// Prepares the daemon: the data directory, the database (whose problems are reported now, before
    /// anything listens), the administrator's key, and the listeners.
    ///
    /// - Parameter onListening: called once the local API listens on its Unix socket, and once more
    ///   with the port when it also listens on TCP (the port the system chose, for `tcpPort` 0).
    package init(
        configuration: DaemonConfiguration,
        clock: any NotificationClock = SystemClock(),
        logger: Logger = Logger(label: "unotify.daemon"),
        onListening: @escaping @Sendable (_ tcpPort: Int?) -> Void = { _ in }
    ) async throws {
        let fileManager = FileManager.default
        try PrivateFiles.createDirectory(configuration.dataDirectory)
        try PrivateFiles.touch(configuration.databasePath)
        Self.warnAboutLooseFiles(configuration, logger: logger)
        let store = try SQLiteDaemonStore(path: configuration.databasePath)
        var engineConfiguration = configuration.engine
        engineConfiguration.attachmentStore = engineConfiguration.attachmentStore
            ?? configuration.dataDirectory.appendingPathComponent("attachments", isDirectory: true)
        engineConfiguration.privateFolder = engineConfiguration.privateFolder ?? configuration.dataDirectory
        adminKey = try Self.adminKey(at: configuration.adminKeyPath)
        engine = await DaemonEngine(store: store, clock: clock, configuration: engineConfiguration, logger: logger, launcher: { [logger] in Self.launch($0, logger: logger) })
        // Pushes whose service extension was running when the daemon last stopped are prepared again
        // (or shown as they came) now, before anything else, not when their time would have run out.
        await engine.resumePreparations()

        let engine = self.engine
        let link = configuration.gateway.map { DeviceLinkClient(configuration: $0, engine: engine, logger: logger) }
        self.link = link
        let router = LocalAPIRouter.make(engine: engine, adminKey: adminKey, link: link)
        // Apps' adds are answered on their connection, ahead of the router (see `RequestAddHandler`).
        let channel = HTTP1WebSocketUpgradeChannel.Configuration(http1: .init(additionalChannelHandlers: [RequestAddHandler(engine: engine)]))
        let socketPath = configuration.socketPath
        try? fileManager.removeItem(atPath: socketPath)
        var services: [any Service] = [SchedulerService(engine: engine), IntegrityCheckService(store: store, logger: logger)]
        if configuration.warmsCache { services.append(CacheWarmUpService(engine: engine)) }
        if let link { services.append(link) }
        // Each listener its share of the open files, and its deadlines: apps' and the person's
        // clients never wait behind a flood of another listener's connections.
        // The local API's share is its Unix socket's alone, or halved with its TCP port.
        let capacity = configuration.maximumConnections
            ?? max(16, ConnectionBudget.now.capacity(of: .localAPI) / (configuration.tcpPort == nil ? 1 : 2))
        services.append(Application(
            router: router,
            server: .http1WebSocketUpgrade(webSocketRouter: router, configuration: channel,
                                           lifecycle: ListenerLifecycle(capacity: capacity, deadlines: ListenerLifecycle.httpDeadlines,
                                                                        listener: "local API", logger: logger)),
            configuration: ApplicationConfiguration(address: .unixDomainSocket(path: socketPath), serverName: "unotify"),
            onServerRunning: { _ in
                // Only the daemon's user may talk to it.
                _ = chmod(socketPath, 0o600)
                logger.info("local API listening", metadata: ["socket": .string(socketPath)])
                onListening(nil)
            },
            logger: logger
        ))
        if let port = configuration.tcpPort {
            let host = configuration.tcpHost
            services.append(Application(
                router: router,
                server: .http1WebSocketUpgrade(webSocketRouter: router, configuration: channel,
                                               lifecycle: ListenerLifecycle(capacity: capacity, deadlines: ListenerLifecycle.httpDeadlines,
                                                                        listener: "local API", logger: logger)),
                configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "unotify"),
                onServerRunning: { channel in
                    logger.info("local API listening", metadata: ["address": .string("\(channel.localAddress.map { "\($0)" } ?? "\(host):\(port)")")])
                    onListening(channel.localAddress?.port ?? port)
                },
                logger: logger
            ))
        }
        self.services = services
    }

    /// Sets the gauges that describe the daemon now; run before each exposition of its metrics.
    package func sampleMetrics() async {
        engine.metrics.gatewayLinked.record(link?.isLinked == true ? 1 : 0)
        await engine.sampleMetrics()
    }

    /// Warns about the daemon's files that others than its user may read: they hold every app's
    /// notifications and the person's replies. They are left as they are (someone chose that).
    private static func warnAboutLooseFiles(_ configuration: DaemonConfiguration, logger: Logger) {
        let database = configuration.databasePath
        let paths = [configuration.dataDirectory.path, database, database + "-wal", database + "-shm", configuration.adminKeyPath,
                     configuration.location.centerKeyPath]
        for (path, mode) in PrivateFiles.looserThanPrivate(paths) {
            logger.warning(
                "others than this user can read the daemon's file; run `chmod go-rwx` on it",
                metadata: ["path": .string(path), "mode": .string(String(mode, radix: 8))]
            )
        }
    }

    /// Reads the administrator's key, creating it (mode 0600) on first start.
    private static func adminKey(at path: String) throws -> String {
        if let existing = try? String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines), !existing.isEmpty {
            return existing
        }
        let key = DaemonEngine.makeKey()
        guard PrivateFiles.createFile(atPath: path, contents: Data((key + "\n").utf8)) else {
            throw DaemonError(.storageFailed, "Could not write the administrator's key to \(path).")
        }
        return key
    }

    /// Starts an app with its launch command, to receive what waits for it. The app finds the push it
    /// was started for, if any, in its environment (`LaunchEnvironment`).
    private static func launch(_ launch: AppLaunch, logger: Logger) {
        var environment = ProcessInfo.processInfo.environment
        environment["UNOTIFY_LAUNCHED_FOR"] = launch.bundleIdentifier
        environment[LaunchEnvironment.remoteNotificationVariable] = launch.remoteNotification.flatMap(LaunchEnvironment.value(for:))
        do {
            _ = try SpawnedProcess.spawn("/bin/sh", arguments: ["-c", launch.command], environment: environment)
        } catch {
            logger.error("could not launch an app", metadata: ["app": .string(launch.bundleIdentifier), "error": .string("\(error)")])
        }
    }
}

/// Reads the stored apps into the engine's cache once the daemon has started, behind every call.
struct CacheWarmUpService: Service {
    let engine: DaemonEngine

    func run() async {
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                group.addTask(priority: .low) { await engine.warmCache() }
            }
        }
        // Nothing more to do: stays until the daemon stops, as a service must.
        try? await gracefulShutdown()
    }
}

/// Checks the database once the daemon has started (its time grows with the database, so it does not
/// delay the start), and reports damage loudly; the daemon goes on serving what it can read.
struct IntegrityCheckService: Service {
    let store: SQLiteDaemonStore
    let logger: Logger

    func run() async {
        do {
            try await store.checkIntegrity()
            logger.debug("database checked", metadata: ["path": .string(store.path)])
        } catch {
            logger.critical("the database is damaged", metadata: ["path": .string(store.path), "error": .string(error.message)])
        }
        // Nothing more to do: stays until the daemon stops, as a service must.
        try? await gracefulShutdown()
    }
}
