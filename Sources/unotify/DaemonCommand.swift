import ArgumentParser
import Foundation
import Logging
import NotificationDaemon
import ServiceLifecycle
import UnixSignals

/// Options of the daemon.
struct DaemonOptions: ParsableArguments {
    @OptionGroup var location: LocationOptions

    @Option(name: .long, help: "Also serve the local API over TCP on this port.")
    var tcpPort: Int?

    @Option(name: .long, help: "The address the TCP listener binds (loopback unless told otherwise).")
    var tcpHost: String = "127.0.0.1"

    @Option(name: .long, help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: String = "info"

    func run() async throws {
        // Whatever the daemon and its libraries create (the socket, SQLite's files) is its user's alone.
        umask(0o077)
        var configuration = location.configuration
        configuration.tcpPort = tcpPort
        configuration.tcpHost = tcpHost
        var logger = Logger(label: "unotify")
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
        let daemon: NotificationDaemonServices
        do {
            daemon = try await NotificationDaemonServices(configuration: configuration, logger: logger)
        } catch let error as DaemonError {
            throw ValidationError(error.message)
        }
        logger.info("data directory", metadata: ["path": .string(configuration.dataDirectory.path)])
        let group = ServiceGroup(services: daemon.services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        try await group.run()
    }
}

struct DaemonCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "daemon",
        abstract: "Run the notification daemon: every app's notifications, kept durably, fired on time.",
        discussion: "Stops gracefully on SIGTERM or SIGINT. Serves the local API on a Unix socket readable only by its user."
    )

    @OptionGroup var options: DaemonOptions

    func run() async throws { try await options.run() }
}

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the whole system on this machine, on embedded SQLite.",
        discussion: "Today this is the notification daemon; the push gateway and the web notification center will join it here."
    )

    @OptionGroup var options: DaemonOptions

    func run() async throws { try await options.run() }
}
