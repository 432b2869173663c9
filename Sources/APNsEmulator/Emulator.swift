import Crypto
package import Foundation
package import Logging
package import NotificationCore
import PrivateFiles
package import PushGateway
package import ServiceLifecycle
import Synchronization

/// The emulator's settings, with their defaults.
package struct EmulatorConfiguration: Sendable {
    /// Where it keeps its state while it runs; removed when it stops.
    package var folder: URL
    /// The topics (apps) its simulated devices have, and how many devices of each.
    package var topics: [(topic: String, devices: Int)] = []
    /// The team that owns the topics and signs with the key.
    package var teamID = "EMULATOR01"
    /// The signing key's identifier; nil makes one up.
    package var keyID: String?
    /// A `.p8` (PEM) to use as the signing key, such as a test key a backend's configuration names;
    /// nil makes a new one.
    package var keyPEM: String?
    /// Whether time moves only when told, rather than with the system's clock (and when told).
    package var frozenClock = false
    /// The address every endpoint listens on: loopback unless told otherwise.
    package var host = "127.0.0.1"
    /// The ports; 0 picks free ones.
    package var sandboxPort = 0
    package var productionPort = 0
    package var deviceLinkPort = 0
    package var controlPort = 0
    /// The environment the simulated devices' tokens are for.
    package var environment: APNs.Environment = .sandbox
    /// When the simulated devices acknowledge what they receive.
    package var acknowledgement: AcknowledgementTiming = .immediately

    package init(folder: URL) {
        self.folder = folder
    }
}

/// The APNs emulator: the gateway on a clock that moves when told, with faults a test scripts and
/// devices it simulates, and a control API for all three (`Docs/emulator.md`).
///
/// Its answers are the gateway's: where no fault is scripted, a push meets the provider API's rules
/// exactly, and is kept and forwarded as the gateway keeps and forwards it.
package final class Emulator: Sendable {
    package let clock: EmulatorClock
    package let configuration: EmulatorConfiguration
    let gateway: PushGatewayServices
    package let devices: SimulatedDevices
    private let injector: FaultInjector
    private let credentials: (keyID: String, keyPEM: String)
    private let listening = Mutex<[String: Int]>([:])
    private let onReady: @Sendable (EmulatorDocument) -> Void
    private let logger: Logger

    /// Prepares the emulator: its folder, the gateway, the team, its key and topics, the simulated
    /// devices (linked), and its control API. `onReady` is called with the emulator's document once
    /// every endpoint listens.
    package init(configuration: EmulatorConfiguration, logger: Logger, onReady: @escaping @Sendable (EmulatorDocument) -> Void) async throws {
        self.configuration = configuration
        self.logger = logger
        self.onReady = onReady
        let clock = EmulatorClock(frozen: configuration.frozenClock)
        self.clock = clock
        let relay = Relay()
        let injector = FaultInjector(clock: clock, deviceFaultEnded: { relay.emulator?.reconcileDevices() })
        self.injector = injector

        var gatewayConfiguration = GatewayConfiguration(dataDirectory: configuration.folder)
        gatewayConfiguration.host = configuration.host
        gatewayConfiguration.sandboxPort = configuration.sandboxPort
        gatewayConfiguration.productionPort = configuration.productionPort
        gatewayConfiguration.deviceLinkPort = configuration.deviceLinkPort
        gatewayConfiguration.clock = { clock.now() }
        // A test's emulator stops at once: its providers are told (GOAWAY Shutdown), not waited for.
        gatewayConfiguration.stopGrace = .milliseconds(250)
        // Expired pushes go as the clock passes their expiration (and at once when it is moved).
        gatewayConfiguration.housekeepingInterval = .seconds(1)
        // A load test's log stays within a test's means: the latest 100,000 pushes.
        gatewayConfiguration.deliveryLogLimit = 100_000
        gatewayConfiguration.emulation = injector.emulation
        gateway = try await PushGatewayServices(
            configuration: gatewayConfiguration, logger: logger,
            onListening: { environment, port in relay.emulator?.listening(environment.rawValue, port) },
            onDeviceLinkListening: { port in relay.emulator?.listening("deviceLink", port) }
        )
        devices = SimulatedDevices(links: gateway.links, core: gateway.core, store: gateway.store, clock: clock, logger: logger)

        let keyPEM: String, publicKey: P256.Signing.PublicKey
        if let given = configuration.keyPEM {
            do {
                publicKey = try P256.Signing.PrivateKey(pemRepresentation: given).publicKey
            } catch {
                throw EmulatorError(.invalidRequest, "The signing key given is not a P-256 private key in PEM (a .p8).")
            }
            keyPEM = given
        } else {
            let key = P256.Signing.PrivateKey()
            (keyPEM, publicKey) = (key.pemRepresentation, key.publicKey)
        }
        let keyID = configuration.keyID ?? AppleIdentifier.make()
        credentials = (keyID, keyPEM)
        let store = gateway.store
        do {
            try await store.addTeam(configuration.teamID, name: "Emulator")
            for (topic, _) in configuration.topics { try await store.addApp(topic, team: configuration.teamID) }
            try await store.addKey(StoredKey(keyID: keyID, teamID: configuration.teamID, environment: nil, bundleIdentifiers: nil,
                                             publicKeyPEM: publicKey.pemRepresentation))
            try await gateway.core.reloadProviders()
        } catch {
            throw EmulatorError(.internalError, "The emulator could not set up its team: \(error.message)")
        }
        guard PrivateFiles.createFile(atPath: keyFile.path, contents: Data(keyPEM.utf8)) else {
            throw EmulatorError(.internalError, "Could not write \(keyFile.path).")
        }
        relay.emulator = self
        for (topic, count) in configuration.topics where count > 0 {
            _ = try await devices.make(count: count, topics: [topic], environment: configuration.environment,
                                       acknowledgement: configuration.acknowledgement)
        }
    }

    /// The emulator's services, to run in one `ServiceGroup`: the gateway's, its control API, and
    /// its ticker.
    package var services: [any Service] {
        gateway.services + [
            ControlAPI(emulator: self, host: configuration.host, port: configuration.controlPort, logger: logger,
                       onListening: { [weak self] port in self?.listening("control", port) }),
            EmulatorTicker(emulator: self),
        ]
    }

    /// The signing key's `.p8`, in the emulator's folder.
    var keyFile: URL { configuration.folder.appendingPathComponent("AuthKey_\(credentials.keyID).p8") }

    /// Notes that an endpoint listens; once all four do, the emulator is ready.
    private func listening(_ endpoint: String, _ port: Int) {
        let ports = listening.withLock { ports -> [String: Int]? in
            ports[endpoint] = port
            return ports.count == 4 ? ports : nil
        }
        guard let ports else { return }
        onReady(document(ports: ports))
    }

    /// What a provider's test needs to reach the emulator, as it is now.
    package func document() -> EmulatorDocument {
        document(ports: listening.withLock { $0 })
    }

    private func document(ports: [String: Int]) -> EmulatorDocument {
        let host = ["127.0.0.1", "::1", "0.0.0.0", "::"].contains(configuration.host) ? "localhost" : configuration.host
        let controlHost = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        let all = devices.all
        var topics: [String: [String]] = [:]
        for device in all {
            for (topic, token) in device.tokens { topics[topic, default: []].append(token) }
        }
        for (topic, _) in configuration.topics where topics[topic] == nil { topics[topic] = [] }
        return EmulatorDocument(
            pid: getpid(),
            sandbox: "https://\(host):\(ports["sandbox"] ?? 0)", production: "https://\(host):\(ports["production"] ?? 0)",
            deviceLink: "wss://\(host):\(ports["deviceLink"] ?? 0)", control: "http://\(controlHost == "0.0.0.0" ? "127.0.0.1" : controlHost):\(ports["control"] ?? 0)",
            caFile: GatewayConfiguration(dataDirectory: configuration.folder).authorityCertificatePath,
            caPEM: (try? String(contentsOfFile: GatewayConfiguration(dataDirectory: configuration.folder).authorityCertificatePath, encoding: .utf8)) ?? "",
            teamID: configuration.teamID, keyID: credentials.keyID, keyFile: keyFile.path, keyPEM: credentials.keyPEM,
            topics: topics,
            devices: all.map { device in
                EmulatorDocument.Device(deviceID: device.deviceID, tokens: device.tokens, environment: device.environment.rawValue,
                                        acknowledge: device.acknowledgement.text, online: device.isOnline)
            },
            frozenClock: clock.isFrozen, folder: configuration.folder.path
        )
    }

    // MARK: - Faults

    /// Scripts a fault; returns it with its identifier. An `uninstalled` fault removes its apps at once.
    package func script(_ fault: Fault) async throws(EmulatorError) -> Fault {
        if fault.action == .uninstalled, fault.remaining != nil || fault.until != nil || fault.from != nil {
            throw EmulatorError(.refused, "An app uninstalled stays uninstalled: leave out requests, from, until and for.")
        }
        if let remaining = fault.remaining, remaining < 1 {
            throw EmulatorError(.invalidRequest, "A fault is for 1 request or more, not \(remaining).")
        }
        if let until = fault.until, until <= (fault.from ?? .distantPast) || until > EmulatorClock.latest {
            throw EmulatorError(.refused, "A fault's window ends after it starts, and before \(EmulatorClock.text(EmulatorClock.latest)).")
        }
        if case .delay(let seconds) = fault.action, !(seconds >= 0 && seconds <= 300) {
            throw EmulatorError(.refused, "A delay is 0 to 300 seconds.")
        }
        if fault.action.isDeviceFault, let token = fault.token, devices.device(holding: token) == nil {
            throw EmulatorError(.notFound, "No simulated device holds the token \(token): only simulated devices go offline or lose apps.")
        }
        let added = injector.add(fault)
        if added.action == .uninstalled {
            let ended = try await devices.uninstall(added)
            logger.info("emulator uninstalled apps", metadata: ["fault": .stringConvertible(added.id), "tokens": .stringConvertible(ended.count)])
        }
        reconcileDevices()
        return added
    }

    /// Removes a fault (a device it kept offline comes back).
    package func removeFault(_ id: Int) throws(EmulatorError) {
        guard injector.remove(id) != nil else { throw EmulatorError(.notFound, "There is no fault \(id).") }
        reconcileDevices()
    }

    /// Removes every fault.
    package func removeFaults() {
        injector.removeAll()
        reconcileDevices()
    }

    /// The faults scripted, in order.
    package var faults: [Fault] { injector.faults }

    /// Links the simulated devices no `offline` fault in force names, and unlinks the others.
    func reconcileDevices() {
        devices.reconcile(offline: injector.offline)
    }

    // MARK: - Clock

    /// Moves the clock forward by `seconds`; then what expired is removed and the devices whose
    /// `offline` window ended come back. Returns the time now.
    @discardableResult
    package func advance(by seconds: TimeInterval) async throws(EmulatorError) -> Date {
        let now = try clock.advance(by: seconds)
        await afterClockMoved()
        return now
    }

    /// Moves the clock forward to `date`.
    @discardableResult
    package func setClock(to date: Date) async throws(EmulatorError) -> Date {
        let now = try clock.set(to: date)
        await afterClockMoved()
        return now
    }

    private func afterClockMoved() async {
        await gateway.removeExpired()
        reconcileDevices()
    }

    /// The delivery log of the pushes whose `apns-id` or `apns-unique-id` is `id`, with the faults
    /// injected for them.
    package func deliveryRecords(matching id: String) async throws(EmulatorError) -> [DeliveryRecord] {
        let injector = self.injector
        do {
            return try await EmulatedDeliveryLog(log: gateway.core, injected: { injector.injectedRecords(matching: $0) }).deliveryRecords(matching: id)
        } catch {
            throw EmulatorError(.internalError, "The emulator could not read its delivery log: \(error.message)")
        }
    }

    /// Enrolls a real device (a daemon that links as it links to a gateway, with `--gateway`):
    /// returns its credential, `<device id>.<secret>`.
    package func enrollDevice() async throws(EmulatorError) -> String {
        do {
            return try await DeviceLinks.enroll(in: gateway.store, at: clock.now())
        } catch {
            throw EmulatorError(.internalError, "The emulator could not enroll a device: \(error.message)")
        }
    }

    /// The pushes stored for devices now: in their devices' order, and held for devices not linked.
    package func storedPushCounts() async throws(EmulatorError) -> (queued: Int, held: Int) {
        do {
            return try await gateway.store.storedPushCounts()
        } catch {
            throw EmulatorError(.internalError, "The emulator could not count its stored pushes: \(error.message)")
        }
    }
}

/// Lets the gateway's callbacks reach the emulator made after it.
private final class Relay: Sendable {
    private let box = Mutex<Emulator?>(nil)
    var emulator: Emulator? {
        get { box.withLock { $0 } }
        set { box.withLock { $0 = newValue } }
    }
}

/// Once a second, brings back the devices whose `offline` window ended as time flowed.
struct EmulatorTicker: Service {
    let emulator: Emulator

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                emulator.reconcileDevices()
            }
        }
    }
}
