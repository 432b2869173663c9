package import CoreMetrics
package import Foundation
package import Logging
package import NIOCore
package import NotificationCore
import PrivateFiles
package import ServiceLifecycle
import Synchronization

/// The push gateway's settings, with their defaults.
package struct GatewayConfiguration: Sendable {
    /// Where the gateway keeps its database, its certificate authority and its server certificate.
    package var dataDirectory: URL
    /// The address the provider API listens on: loopback unless told otherwise.
    package var host = "127.0.0.1"
    /// The sandbox endpoint's port (APNs' `api.sandbox.push.apple.com`); 0 picks a free one.
    package var sandboxPort = 2197
    /// The production endpoint's port (APNs' `api.push.apple.com`); 0 picks a free one.
    package var productionPort = 2198
    /// The port devices link to (`Docs/device-link.md`); 0 picks a free one.
    package var deviceLinkPort = 2199
    /// Pushes a device may hold unacknowledged.
    package var deviceLinkWindow = 64
    /// The most device links (and connections on their way to become one) kept at once; `nil`, the
    /// links' share of the process's open files (``ConnectionBudget``, `Docs/connections.md`).
    package var maximumDeviceLinks: Int?
    /// The links a push may be the oldest one not taken on, ended by the device's error or without a
    /// close, before it is dropped and logged as such: no push is sent again forever.
    package var deviceLinkTriesPerPush = 10
    /// Names and addresses the server certificate is issued for, besides `localhost`, `127.0.0.1`
    /// and `::1`.
    package var hostNames: [String] = []
    /// A certificate chain and key to serve (a public host's), in place of a server certificate from
    /// the gateway's own authority; read again when the files change. Providers' client
    /// certificates still come from the gateway's authority.
    package var certificateFiles: ServedCertificate.Files?
    /// How often the files of ``certificateFiles`` are read again for a renewal.
    package var certificateCheckInterval: Duration = .seconds(1)
    /// Serve HTTP/2 without TLS (prior knowledge). Only when asked for: providers send keys' tokens.
    package var cleartext = false
    package var environmentKeyReason: APNs.Reason = .badEnvironmentKeyInToken
    package var admission = PushAdmission.Configuration()
    /// How often the providers' keys and apps are read again whatever happened: a change made by
    /// `unotify gateway` is read at once (``ChangeAnnouncement``); this catches one made otherwise.
    package var providerReloadInterval: Duration = .seconds(30)
    /// How long the delivery log keeps a push after it was accepted (longer while it is still stored
    /// for its device): Apple's console keeps seven days. 0 keeps no log.
    package var deliveryLogRetention: TimeInterval = 7 * 86_400
    /// The most pushes the delivery log keeps; the oldest go first.
    package var deliveryLogLimit = 1_000_000
    /// How long a connection to the provider API or to the device links' port may take to open (its
    /// TLS handshake, and for a device link its upgrade): then it is closed, so that connections that
    /// send nothing do not hold the gateway's sockets.
    package var openingTimeout: TimeAmount = .seconds(10)
    /// How often expired pushes are removed and the delivery log is trimmed.
    package var housekeepingInterval: Duration = .seconds(60)
    /// How often the devices linked to a node are recorded as still linked (their tokens' expiry,
    /// ``PushAdmission/Configuration/tokenExpiry``, counts from the last time).
    package var linksHeldInterval: Duration = .seconds(3600)
    /// Where the gateway's metrics go (``GatewayMetrics``); by default nowhere.
    package var metrics: any MetricsFactory = NOOPMetricsHandler.instance
    /// The time every rule of the provider API and of storage counts with: provider tokens' age and
    /// refresh, expiration, throttling, tokens' `410` timestamps, the delivery log. The system's
    /// clock; an emulator's moves when told (`Docs/emulator.md`).
    package var clock: @Sendable () -> Date = { Date() }
    /// What an emulator changes of the provider API; nil in a gateway.
    package var emulation: ProviderEmulation?
    /// How long a stop waits for the connections it told (GOAWAY `Shutdown`, a link's close) to end
    /// before closing them.
    package var stopGrace: Duration = .seconds(5)

    package init(dataDirectory: URL) {
        self.dataDirectory = dataDirectory
    }

    package var databasePath: String { dataDirectory.appendingPathComponent("gateway.sqlite").path }
    package var authorityCertificatePath: String { dataDirectory.appendingPathComponent("ca.pem").path }
    package var authorityKeyPath: String { dataDirectory.appendingPathComponent("ca-key.pem").path }
    package var serverCertificatePath: String { dataDirectory.appendingPathComponent("server.pem").path }
    package var serverKeyPath: String { dataDirectory.appendingPathComponent("server-key.pem").path }
}

/// The gateway as services to run in one `ServiceGroup`: the provider API's two endpoints and the
/// reading of providers' changes.
package struct PushGatewayServices: Sendable {
    package let core: GatewayCore
    package let store: any GatewayStore
    package let links: DeviceLinks
    package let services: [any Service]
    package let metrics: GatewayMetrics
    /// The certificate given to serve (``GatewayConfiguration/certificateFiles``), as it is now.
    package let servedCertificate: ServedCertificate?
    private let housekeeping: HousekeepingService

    /// Prepares the gateway: its private folder, database, certificate authority and server
    /// certificate (made on first start), and its endpoints.
    ///
    /// - Parameters:
    ///   - store: where the gateway keeps its state, running (a ``PostgresGatewayStore`` shared by
    ///     several nodes); nil for the SQLite file in its folder.
    ///   - onListening: called with each provider endpoint's environment and port once it listens.
    ///   - onDeviceLinkListening: called with the device links' port once it listens.
    package init(
        configuration: GatewayConfiguration,
        store: (any GatewayStore)? = nil,
        logger: Logger,
        onListening: @escaping @Sendable (APNs.Environment, Int) -> Void = { _, _ in },
        onDeviceLinkListening: @escaping @Sendable (Int) -> Void = { _ in }
    ) async throws {
        try PrivateFiles.createDirectory(configuration.dataDirectory)
        if let store {
            self.store = store
        } else {
            try PrivateFiles.touch(configuration.databasePath)
            self.store = try SQLiteGatewayStore(path: configuration.databasePath)
        }
        let store = self.store
        // The links are made after the core, which tells them of each durable batch.
        let relay = LinksRelay()
        let metrics = GatewayMetrics(factory: configuration.metrics)
        self.metrics = metrics
        core = GatewayCore(store: store, admission: configuration.admission, logsDeliveries: configuration.deliveryLogRetention > 0,
                           clock: configuration.clock, logger: logger,
                           queued: { pushes in relay.links?.stored(pushes) }, wake: { devices in relay.links?.wake(devices) })
        links = DeviceLinks(store: store, core: core, window: configuration.deviceLinkWindow, triesPerPush: configuration.deviceLinkTriesPerPush,
                            metrics: metrics, logger: logger, clock: configuration.clock)
        relay.links = links
        try await core.reloadProviders()
        let tls = configuration.cleartext ? nil : try Self.serverCertificate(configuration)
        servedCertificate = tls?.renewals
        if let served = tls?.renewals {
            logger.info("serving the given certificate", metadata: ServedCertificateWatch.metadata(served.loaded).merging(["chain": .string(served.files.chain)]) { $1 })
            if served.loaded.notValidAfter < Date() {
                logger.warning("the given certificate has expired: clients refuse it until it is renewed", metadata: ["chain": .string(served.files.chain)])
            }
        }
        var keepAlive = DeviceLinkServer.KeepAlive()
        keepAlive.openingTimeout = configuration.openingTimeout
        keepAlive.maximumConnections = configuration.maximumDeviceLinks
        let endpoints = EndpointsFile(directory: configuration.dataDirectory, cleartext: configuration.cleartext, listening: configuration.host,
                                      served: servedCertificate)
        housekeeping = HousekeepingService(store: store, configuration: configuration, metrics: metrics, logger: logger)
        var services: [any Service] = [
            // First, so that it stops last: the listeners' links and connections end before it waits
            // for what they started.
            OwnedTasksService(tasks: core.tasks),
            endpoints,
            ProviderChangesService(core: core, store: store, fullReloadInterval: configuration.providerReloadInterval, logger: logger),
            housekeeping,
            LinksHeldService(core: core, interval: configuration.linksHeldInterval),
            StoreChangesService(store: store, core: core, links: links),
            DeviceLinkServer.service(links: links, host: configuration.host, port: configuration.deviceLinkPort, tls: tls,
                                     keepAlive: keepAlive, grace: configuration.stopGrace, logger: logger, onListening: { port in
                                         endpoints.listening(deviceLink: port)
                                         onDeviceLinkListening(port)
                                     }),
        ]
        if let served = tls?.renewals {
            services.append(ServedCertificateWatch(certificate: served, interval: configuration.certificateCheckInterval, logger: logger))
        }
        let deliveryLog: any DeliveryLogReader = if let emulation = configuration.emulation {
            EmulatedDeliveryLog(log: core, injected: emulation.injectedRecords)
        } else {
            core
        }
        for (environment, port) in [(APNs.Environment.sandbox, configuration.sandboxPort), (.production, configuration.productionPort)] {
            var server = ProviderServer.Configuration()
            server.host = configuration.host
            server.port = port
            server.environment = environment
            server.tls = tls
            server.environmentKeyReason = configuration.environmentKeyReason
            server.openingTimeout = configuration.openingTimeout
            let core = self.core
            services.append(ListenerService(
                server: ProviderServer(configuration: server, credentials: { core.credentials }, refreshCredentials: { core.refreshProviders($0) },
                                       acceptor: core, deliveryLog: deliveryLog, channels: core, metrics: metrics, clock: configuration.clock,
                                       emulation: configuration.emulation, tasks: core.tasks, logger: logger),
                grace: configuration.stopGrace,
                onListening: { port in
                    if environment == .sandbox { endpoints.listening(sandbox: port) } else { endpoints.listening(production: port) }
                    onListening(environment, port)
                }
            ))
        }
        self.services = services
    }

    /// Removes the pushes whose expiration has passed and trims the delivery log now, as the
    /// gateway does every ``GatewayConfiguration/housekeepingInterval``: after its clock moved.
    package func removeExpired() async {
        await housekeeping.sweep(now: housekeeping.configuration.clock())
    }

    /// Sets the gauges that describe the gateway now (links, pushes in flight, stored, unwritten);
    /// run before each exposition of its metrics.
    package func sampleMetrics() async {
        links.sampleMetrics()
        metrics.unwritten.record(core.unwrittenPushes)
        if let (queued, held) = try? await store.storedPushCounts() {
            metrics.queued.record(queued)
            metrics.held.record(held)
        }
    }

    /// The server certificate, issued by the gateway's own authority; both are made on first start
    /// and kept (keys 0600) so that providers can trust the authority once.
    ///
    /// With ``GatewayConfiguration/certificateFiles``, those are served instead, and the authority
    /// (made if it is not there yet) only issues providers' client certificates.
    static func serverCertificate(_ configuration: GatewayConfiguration) throws -> ProviderServer.Configuration.TLS {
        let files = FileManager.default
        if let given = configuration.certificateFiles {
            let served = try ServedCertificate(files: given)
            let loaded = served.loaded
            return .init(certificateChainPEM: loaded.chainPEM, privateKeyPEM: loaded.keyPEM,
                         clientAuthorityPEM: try authority(configuration).certificatePEM, renewals: served)
        }
        if let certificate = try? String(contentsOfFile: configuration.serverCertificatePath, encoding: .utf8),
           let key = try? String(contentsOfFile: configuration.serverKeyPath, encoding: .utf8) {
            return .init(certificateChainPEM: certificate, privateKeyPEM: key,
                         clientAuthorityPEM: try? String(contentsOfFile: configuration.authorityCertificatePath, encoding: .utf8))
        }
        let authority = try authority(configuration)
        var hosts = ["localhost", "127.0.0.1", "::1"]
        for name in configuration.hostNames + [configuration.host] where !hosts.contains(name) && name != "0.0.0.0" && name != "::" {
            hosts.append(name)
        }
        let issued = try authority.issueServerCertificate(for: hosts)
        // The chain: the server's certificate, then the authority's (each PEM block on its own lines).
        let chain = [issued.certificatePEM, try authority.certificatePEM].map { $0.hasSuffix("\n") ? $0 : $0 + "\n" }.joined()
        try? files.removeItem(atPath: configuration.serverKeyPath)
        try write(issued.privateKeyPEM, to: configuration.serverKeyPath)
        try? files.removeItem(atPath: configuration.serverCertificatePath)
        try write(chain, to: configuration.serverCertificatePath)
        // Providers' client certificates come from the same authority (`unotify gateway certificates create`).
        return .init(certificateChainPEM: chain, privateKeyPEM: issued.privateKeyPEM, clientAuthorityPEM: try authority.certificatePEM)
    }

    /// The gateway's own authority, made on first start.
    private static func authority(_ configuration: GatewayConfiguration) throws -> GatewayCertificateAuthority {
        if let certificate = try? String(contentsOfFile: configuration.authorityCertificatePath, encoding: .utf8),
           let key = try? String(contentsOfFile: configuration.authorityKeyPath, encoding: .utf8) {
            return try GatewayCertificateAuthority(certificatePEM: certificate, privateKeyPEM: key)
        }
        let authority = try GatewayCertificateAuthority(name: "unotify gateway CA")
        try write(authority.privateKeyPEM, to: configuration.authorityKeyPath)
        try write(try authority.certificatePEM, to: configuration.authorityCertificatePath)
        return authority
    }

    private static func write(_ text: String, to path: String) throws {
        guard PrivateFiles.createFile(atPath: path, contents: Data(text.utf8)) else {
            throw GatewayError(.storageFailed, "Could not write \(path).")
        }
    }
}

/// Lets the core reach the device links made after it.
private final class LinksRelay: Sendable {
    private let box = Mutex<DeviceLinks?>(nil)
    var links: DeviceLinks? {
        get { box.withLock { $0 } }
        set { box.withLock { $0 = newValue } }
    }
}

/// A server of the gateway that listens on a port until it is stopped.
protocol Listener: Sendable {
    /// Starts listening; returns the address.
    func start() async throws -> SocketAddress
    /// Stops gracefully.
    func stop(grace: Duration) async
}

extension Listener {
    /// Returns once every channel has closed, or at `deadline`, whichever comes first.
    ///
    /// Polled: waiting on a channel's `closeFuture` cannot be cancelled, so a task group racing it
    /// against the deadline would wait for it all the same, for ever if the channel never closes.
    static func waitUntilClosed(_ channels: [any Channel], until deadline: ContinuousClock.Instant) async {
        while channels.contains(where: \.isActive), ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Closes the channels still open once the grace is over, all at once, without waiting: the
    /// TLS of one whose peer no longer reads waits seconds for its close_notify, and one after
    /// another they held a stop for as many times that.
    static func closeAll(_ channels: [any Channel]) {
        for channel in channels { channel.close(promise: nil) }
    }
}

/// One listener of the gateway (a provider endpoint, the device links), from start to graceful shutdown.
struct ListenerService<Server: Listener>: Service {
    let server: Server
    var grace: Duration = .seconds(5)
    let onListening: @Sendable (Int) -> Void

    func run() async throws {
        let address = try await server.start()
        onListening(address.port ?? 0)
        // Runs until the group shuts down; then every connection closes.
        try? await gracefulShutdown()
        await server.stop(grace: grace)
    }
}

/// Wakes this node's links for the pushes other nodes store (a store shared by several nodes).
/// Follows what other nodes sharing the store change: pushes they stored wake this node's links,
/// tokens they unregistered are read again, links their devices replaced on another node close.
struct StoreChangesService: Service {
    let store: any GatewayStore
    let core: GatewayCore
    let links: DeviceLinks

    func run() async throws {
        let (core, links) = (self.core, self.links)
        await cancelWhenGracefulShutdown {
            await store.followChanges { change in
                switch change {
                case .pushesStored(let devices?): links.wake(devices)
                case .pushesStored(nil): links.wakeAll()
                case .tokensUnregistered(let tokens): core.forgetTokens(tokens)
                case .devicesLinkedElsewhere(let devices): links.replacedElsewhere(devices)
                }
            }
        }
        // A store of one node has nothing to follow: the rest of the gateway runs until it stops.
        try? await gracefulShutdown()
    }
}

/// Reads providers' keys and apps, and the devices' standings, again as soon as a `unotify gateway`
/// command announces a change (``ChangeAnnouncement``: it looks every 50 ms), notes the change read
/// so that the command can return, and says every 5 s that this node runs; reads them again every
/// `fullReloadInterval` whatever happened.
struct ProviderChangesService: Service {
    let core: GatewayCore
    let store: any GatewayStore
    let fullReloadInterval: Duration
    let logger: Logger
    static let lookInterval: Duration = .milliseconds(50)
    static let heartbeatInterval: Duration = .seconds(5)

    func run() async throws {
        await cancelWhenGracefulShutdown {
            var read: Int64 = -1
            var lastBeat = ContinuousClock.now
            var lastReload = ContinuousClock.now
            while !Task.isCancelled {
                do {
                    let number = try await store.changeNumber()
                    let now = ContinuousClock.now
                    if number != read || now - lastReload >= fullReloadInterval {
                        try await core.reloadProviders()
                        lastReload = now
                    }
                    if number != read || now - lastBeat >= Self.heartbeatInterval {
                        try await store.noteChangeRead(number)
                        read = number
                        lastBeat = now
                    }
                } catch {
                    // Stopping cancels a read under way: nothing went wrong.
                    guard !Task.isCancelled else { break }
                    logger.error("could not read the providers' keys and apps", metadata: ["error": .string("\(error)")])
                    try? await Task.sleep(for: .seconds(1))
                }
                try? await Task.sleep(for: Self.lookInterval)
            }
        }
        await store.leave()
    }
}

/// Records now and then that the devices linked to this node still are (``GatewayCore/noteLinksHeld()``).
struct LinksHeldService: Service {
    let core: GatewayCore
    let interval: Duration

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard !Task.isCancelled else { return }
                await core.noteLinksHeld()
            }
        }
    }
}

/// Removes pushes whose expiration passed (the log says they expired) and trims the delivery log to
/// its retention and size, now and then.
struct HousekeepingService: Service {
    let store: any GatewayStore
    let configuration: GatewayConfiguration
    var metrics = GatewayMetrics()
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                await sweep(now: configuration.clock())
                try? await Task.sleep(for: configuration.housekeepingInterval)
            }
        }
    }

    func sweep(now: Date) async {
        do {
            let expired = try await store.removeExpired(before: now)
            let forgotten = try await store.pruneDeliveryLog(acceptedBefore: now.addingTimeInterval(-configuration.deliveryLogRetention),
                                                             keepingAtMost: configuration.deliveryLogLimit)
            metrics.expired.increment(by: expired)
            if expired + forgotten > 0 {
                logger.debug("housekeeping", metadata: ["expired": .stringConvertible(expired), "forgotten": .stringConvertible(forgotten)])
            }
        } catch {
            // Stopping cancels a sweep under way: nothing went wrong.
            guard !Task.isCancelled else { return }
            logger.error("could not remove expired pushes or trim the delivery log", metadata: ["error": .string("\(error)")])
        }
    }
}
