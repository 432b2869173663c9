import ArgumentParser
import DesktopNotifications
import Foundation
import Logging
import MetricsEndpoint
import NotificationCore
import NotificationDaemon
import NotificationEngine
import PrivateFiles
import PushGateway
import ServiceLifecycle
import UnixSignals
import WebNotificationCenter

/// Options of the daemon.
struct DaemonOptions: ParsableArguments {
    @OptionGroup var location: LocationOptions

    @Option(name: .long, help: ArgumentHelp("A configuration file whose [serve] or [daemon] table gives options (README: \"A configuration file\"). Default: $UNOTIFY_CONFIG, else ~/.config/unotify/unotify.toml, else /etc/unotify/unotify.toml, when there is one.", valueName: "file"))
    var config: String?

    @Option(name: .long, help: "Also serve the local API over TCP on this port.")
    var tcpPort: Int?

    @Option(name: .long, help: "The address the TCP listener binds (loopback unless told otherwise).")
    var tcpHost: String = "127.0.0.1"

    @Option(name: .long, help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: String = "info"

    @Option(name: .long, help: "A push gateway to link this device to, such as wss://push.example.com:2199; for a gateway on several nodes, their addresses separated by commas (each reconnection tries the next).")
    var gateway: String?

    @Option(name: .long, help: "The file holding this device's credential for the gateway (from `unotify gateway devices add`).")
    var gatewayCredential: String?

    @Option(name: .long, help: "A certificate authority (PEM) to trust for the gateway, such as its ca.pem.")
    var gatewayCa: String?

    @Option(name: .long, help: "Serve the web notification center on this port (`serve` uses 2202 unless given; 0 picks a free port).")
    var webPort: Int?

    @Option(name: .long, help: "The address the web notification center binds (loopback unless told otherwise).")
    var webHost: String = "127.0.0.1"

    @Option(name: .long, help: "auto: show notifications on the desktop when there is a session bus; off: never.")
    var desktopNotifications: DesktopNotificationsMode = .auto

    @Option(name: .long, help: "The D-Bus address of the bus whose notification server shows them (the session bus unless given).")
    var desktopBus: String?

    @Flag(name: .long, help: "Be the desktop's notification server (org.freedesktop.Notifications) when no other owns the name: notify-send and every libnotify program's notifications are kept here.")
    var freedesktop = false

    @Option(name: .long, help: ArgumentHelp("How much memory the apps' states the daemon keeps in memory may take (apps connected to it are always kept), as bytes or with K, M or G: by default a sixteenth of this machine's memory, at least 64M. An app of 64 pending requests takes about 38K.", valueName: "size"))
    var cacheMemory: String?

    @Option(name: .long, help: "How many apps' states the daemon keeps in memory at most, whatever their size (apps connected to it are always kept); no bound but --cache-memory by default.")
    var cachedApps: Int?

    @Flag(name: .long, help: "Do not read the stored apps into memory after a start (by default they are, up to three quarters of --cache-memory); each is then read when first used.")
    var noCacheWarmUp = false

    @OptionGroup var metrics: MetricsOptions

    var logger: Logger {
        var logger = Logger(label: "unotify")
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
        return logger
    }

    /// A size as the options take it: bytes, or a number with `K`, `M` or `G` (powers of 1024, with
    /// or without a following `B` or `iB`); `nil` when it is not one.
    static func bytes(in text: String) -> Int? {
        var digits = Substring(text.trimmingCharacters(in: .whitespaces))
        for suffix in ["iB", "B"] where digits.uppercased().hasSuffix(suffix.uppercased()) && digits.count > suffix.count {
            digits = digits.dropLast(suffix.count)
            break
        }
        let units: [Character: Int] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30]
        var unit = 1
        if let last = digits.last?.uppercased().first, let value = units[last] {
            unit = value
            digits = digits.dropLast()
        }
        guard let number = Int(digits), number >= 0 else { return nil }
        let (bytes, overflow) = number.multipliedReportingOverflow(by: unit)
        return overflow ? nil : bytes
    }

    /// The daemon's configuration from these options.
    func configuration() throws -> DaemonConfiguration {
        var configuration = location.configuration
        configuration.tcpPort = tcpPort
        configuration.tcpHost = tcpHost
        configuration.warmsCache = !noCacheWarmUp
        if let cachedApps {
            guard cachedApps >= 1 else { throw CommandFailure("--cached-apps needs at least 1.") }
            configuration.engine.cachedApps = cachedApps
        }
        if let cacheMemory {
            guard let bytes = Self.bytes(in: cacheMemory), bytes >= 1 << 20 else {
                throw CommandFailure("--cache-memory is a size of at least 1M: bytes, or a number with K, M or G (\"512M\"), not \"\(cacheMemory)\".")
            }
            configuration.engine.cacheMemory = bytes
        }
        if let gateway {
            guard let credentialFile = gatewayCredential,
                  let credential = try? String(contentsOfFile: credentialFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines),
                  !credential.isEmpty else {
                throw CommandFailure("--gateway needs --gateway-credential, a file holding the credential `unotify gateway devices add` printed.")
            }
            let authority = try gatewayCa.map { path in
                do { return try String(contentsOfFile: path, encoding: .utf8) } catch { throw CommandFailure("Cannot read \(path).") }
            }
            let urls = gateway.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            guard !urls.isEmpty else { throw CommandFailure("--gateway needs an address, such as wss://push.example.com:2199.") }
            configuration.gateway = .init(urls: urls, credential: credential, trustedAuthorityPEM: authority)
        }
        return configuration
    }

    /// Runs the daemon until SIGTERM or SIGINT.
    ///
    /// - Parameters:
    ///   - registry: the process's metrics (the daemon's are added), served on `defaultMetricsPort`
    ///     unless `--metrics-port` says otherwise; nil serves none.
    ///   - webPort: where the web notification center listens; nil serves none.
    func run(configuration: DaemonConfiguration, metrics registry: MetricsRegistry?, defaultMetricsPort: Int, webPort: Int?,
             readiness: Readiness = Readiness(waitingFor: ["local API"], onReady: ServiceManagerNotification.ready)) async throws {
        // Whatever the daemon and its libraries create (the socket, SQLite's files) is its user's alone.
        umask(0o077)
        var configuration = configuration
        if let registry { configuration.engine.metrics = registry }
        // The web notification center shows content extensions: apps learn that they are supported.
        configuration.engine.hostsContentExtensions = webPort != nil
        let logger = self.logger
        let daemon: NotificationDaemonServices
        do {
            daemon = try await NotificationDaemonServices(configuration: configuration, logger: logger,
                                                          onListening: { port in if port == nil { readiness.ready("local API") } })
        } catch let error as DaemonError {
            throw CommandFailure(error.message)
        }
        logger.info("data directory", metadata: ["path": .string(configuration.dataDirectory.path)])
        var services = daemon.services
        if let registry {
            registry.addSampler { await daemon.sampleMetrics() }
            services.append(self.metrics.endpoint(for: registry, defaultPort: defaultMetricsPort, readiness: readiness, logger: logger))
        }
        if let webPort {
            var web = WebNotificationCenter.Configuration()
            web.host = webHost
            web.port = webPort
            do {
                web.credential = try WebCredential(at: configuration.location.centerKeyPath)
            } catch {
                throw CommandFailure(error.message)
            }
            web.addressFile = configuration.location.centerAddressPath
            // Under systemd, what is printed is collected in the journal: the link's secret stays out of it.
            let collected = Self.standardOutputIsTheJournal()
            services.append(WebNotificationCenter(engine: daemon.engine, configuration: web, logger: logger) { link in
                // The one line a person needs: printed whatever the log level, and at once.
                let line = collected
                    ? "Notification center: \(link.prefix { $0 != "?" }) (`unotify center link` prints the link that pairs a browser)"
                    : "Notification center: \(link)"
                FileHandle.standardOutput.write(Data("\(line)\n".utf8))
            }.service)
        }
        var desktop = DesktopPresenter.Configuration(busAddress: desktopBus)
        if webPort != nil {
            // "Reply…" on a desktop with no reply field opens the center where it listens now.
            let addressFile = configuration.location.centerAddressPath
            desktop.centerAddress = {
                (try? String(contentsOfFile: addressFile, encoding: .utf8)).map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
            }
        }
        if freedesktop {
            // The daemon is the desktop's server when no other is; when another is, it shows there.
            let claim = NotificationServerClaim()
            desktop.claim = claim
            services.append(FreedesktopNotificationServer(engine: daemon.engine, busAddress: desktopBus, claim: claim, logger: logger))
        }
        if desktopNotifications == .auto {
            services.append(DesktopPresenter(engine: daemon.engine, configuration: desktop, logger: logger))
        }
        let group = ServiceGroup(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        try await group.run()
    }
}

extension DaemonOptions {
    /// Whether standard output is the journal's stream: systemd says which stream it gave as
    /// `JOURNAL_STREAM` (`device:inode`), which a child process inherits with another output; only
    /// the same file counts (as `sd_journal_stream_fd`'s documentation says to check).
    static func standardOutputIsTheJournal(environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        guard let stream = environment["JOURNAL_STREAM"] else { return false }
        let parts = stream.split(separator: ":")
        var status = stat()
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]), fstat(STDOUT_FILENO, &status) == 0 else { return false }
        return UInt64(status.st_dev) == device && UInt64(status.st_ino) == inode
    }
}

/// Whether the daemon shows its notifications on the Linux desktop.
enum DesktopNotificationsMode: String, ExpressibleByArgument, CaseIterable {
    case auto, off
}

struct DaemonCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "daemon",
        abstract: "Run the notification daemon: every app's notifications, kept durably, fired on time.",
        discussion: "Stops gracefully on SIGTERM or SIGINT. Serves the local API on a Unix socket readable only by its user."
    )

    @OptionGroup var options: DaemonOptions

    func run() async throws {
        ServerProcess.prepare()
        try await options.run(configuration: options.configuration(), metrics: options.metrics.makeRegistry(), defaultMetricsPort: MetricsOptions.daemonPort,
                              webPort: options.webPort)
    }
}

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the whole system on this machine, on embedded SQLite: the notification daemon and a push gateway it is linked to.",
        discussion: "The web notification center listens on 2202 (it prints its URL, which holds the secret that pairs a browser, kept in the data directory), the gateway's provider API on 2197 (sandbox) and 2198 (production), its device links on 2199, the metrics of both on 2200, all on loopback; the gateway's folder is gateway/ in the data directory."
    )

    @OptionGroup var options: DaemonOptions

    @Option(name: .long, help: "The gateway's sandbox port.") var sandboxPort = 2197
    @Option(name: .long, help: "The gateway's production port.") var productionPort = 2198
    @Option(name: .long, help: "The gateway's device-link port.") var deviceLinkPort = 2199
    @OptionGroup var deliveryLog: DeliveryLogOptions
    @OptionGroup var tokenExpiry: TokenExpiryOptions
    @OptionGroup var servedCertificate: ServedCertificateOptions

    func run() async throws {
        ServerProcess.prepare()
        umask(0o077)
        var configuration = try options.configuration()
        var gatewayConfiguration = GatewayConfiguration(dataDirectory: configuration.dataDirectory.appendingPathComponent("gateway", isDirectory: true))
        gatewayConfiguration.sandboxPort = sandboxPort
        gatewayConfiguration.productionPort = productionPort
        gatewayConfiguration.deviceLinkPort = deviceLinkPort
        deliveryLog.apply(to: &gatewayConfiguration)
        tokenExpiry.apply(to: &gatewayConfiguration)
        servedCertificate.apply(to: &gatewayConfiguration)
        // One endpoint for the gateway's metrics and the daemon's.
        let registry = options.metrics.makeRegistry()
        if let registry { gatewayConfiguration.metrics = registry }
        let (linkPorts, linkPort) = AsyncStream.makeStream(of: Int.self)
        let readiness = Readiness(waitingFor: GatewayCommand.Serve.gatewayParts.union(["local API"]), onReady: ServiceManagerNotification.ready)
        let gateway = try await Self.failingInOneLine {
            try await PushGatewayServices(configuration: gatewayConfiguration, logger: options.logger,
                                          onListening: { environment, _ in readiness.ready("provider API (\(environment.rawValue))") },
                                          onDeviceLinkListening: { port in
                                              readiness.ready("device links")
                                              linkPort.yield(port)
                                          })
        }
        registry?.addSampler { await gateway.sampleMetrics() }
        // The gateway starts first: the daemon links to the port it listens on (0 picks a free one).
        let gatewayGroup = ServiceGroup(services: gateway.services, gracefulShutdownSignals: [], logger: options.logger)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask {
                defer { linkPort.finish() }
                try await gatewayGroup.run()
            }
            var ports = linkPorts.makeAsyncIterator()
            guard let port = await ports.next() else {
                try await tasks.waitForAll()
                throw CommandFailure("The push gateway stopped before it listened.")
            }
            // This machine is the gateway's own device: enrolled once, its credential kept beside the daemon's files.
            if configuration.gateway == nil {
                let credential = try await Self.localCredential(at: configuration.dataDirectory.appendingPathComponent("gateway-link.credential").path,
                                                               store: gateway.store)
                let authority = try String(contentsOfFile: gatewayConfiguration.authorityCertificatePath, encoding: .utf8)
                if let served = gateway.servedCertificate {
                    // The given certificate, checked as any device checks it: against the system's
                    // roots and --gateway-ca, by a name it is for, reached on loopback.
                    let extra = try options.gatewayCa.map { path in
                        do { return try String(contentsOfFile: path, encoding: .utf8) } catch { throw CommandFailure("Cannot read \(path).") }
                    }
                    let name = served.localName
                    var link = DeviceLinkClient.Configuration(url: "wss://\(name.contains(":") ? "[\(name)]" : name):\(port)", credential: credential,
                                                              trustedAuthorityPEM: [authority, extra].compactMap { $0 }.joined(separator: "\n"))
                    link.trustsSystemRoots = true
                    if !["localhost", "127.0.0.1", "::1"].contains(name) { link.connectAddress = "127.0.0.1" }
                    configuration.gateway = link
                } else {
                    configuration.gateway = .init(url: "wss://localhost:\(port)", credential: credential, trustedAuthorityPEM: authority)
                }
            }
            do {
                try await options.run(configuration: configuration, metrics: registry, defaultMetricsPort: MetricsOptions.gatewayPort,
                                      webPort: options.webPort ?? WebNotificationCenter.defaultPort, readiness: readiness)
            } catch {
                await gatewayGroup.triggerGracefulShutdown()
                throw error
            }
            await gatewayGroup.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }

    /// Runs `body`; a gateway that cannot start (a certificate that cannot be served) is one line.
    static func failingInOneLine<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as ProviderServerError {
            throw CommandFailure(error.description)
        } catch let error as GatewayError {
            throw CommandFailure(error.message)
        }
    }

    /// The local device's credential for the built-in gateway, made and enrolled on first start.
    static func localCredential(at path: String, store: any GatewayStore) async throws -> String {
        if let existing = try? String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines), !existing.isEmpty {
            return existing
        }
        try PrivateFiles.createDirectory(URL(fileURLWithPath: path).deletingLastPathComponent())
        let credential: String
        do {
            credential = try await DeviceLinks.enroll(in: store, prefix: "local-", at: Date())
        } catch {
            throw CommandFailure(error.message)
        }
        guard PrivateFiles.createFile(atPath: path, contents: Data((credential + "\n").utf8)) else {
            throw CommandFailure("Could not write \(path).")
        }
        return credential
    }
}
