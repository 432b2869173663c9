import ArgumentParser
import Crypto
import Foundation
import Logging
import MetricsEndpoint
import NotificationCore
import PrivateFiles
import NotificationDaemon
import PushGateway
import ServiceLifecycle
import UnixSignals

/// Where the gateway keeps its files: `gateway/` in the data directory unless told otherwise.
struct GatewayLocation: ParsableArguments {
    @Option(name: .long, help: "The gateway's folder (database, certificate authority). Default: gateway/ in the data directory.")
    var gatewayDir: String?

    @Option(name: .long, help: "The data directory whose gateway/ folder to use.")
    var dataDir: String?

    var directory: URL {
        if let gatewayDir { return URL(fileURLWithPath: gatewayDir, isDirectory: true) }
        var environment = ProcessInfo.processInfo.environment
        if let dataDir { environment["UNOTIFY_DATA_DIR"] = dataDir }
        return DaemonConfiguration.fromEnvironment(environment).dataDirectory.appendingPathComponent("gateway", isDirectory: true)
    }

    @Option(name: .long, help: "A PostgreSQL database to keep the gateway's state in, such as postgres://user:password@host:5432/unotify, shared by several gateway nodes. Default: SQLite in the gateway's folder.")
    var database: String?

    @Option(name: .long, help: ArgumentHelp("A configuration file whose [gateway] table gives options (its gateway-dir, data-dir and database for the commands that manage the gateway). Default: $UNOTIFY_CONFIG, else ~/.config/unotify/unotify.toml, else /etc/unotify/unotify.toml, when there is one.", valueName: "file"))
    var config: String?

    /// Runs `body` with the gateway's store: its PostgreSQL database (`--database`), its connection
    /// pool running meanwhile, or its SQLite file, opened beside a running gateway if there is one
    /// (both allow it). A store's error becomes the message a person reads.
    /// Runs `body`, which changes the store, then announces the change and waits (5 s at most) until
    /// every gateway node that runs has read it: what the command did holds before it returns.
    func withStoreChanging<T: Sendable>(_ body: @Sendable (any GatewayStore) async throws -> T) async throws -> T {
        try await withStore { store in
            let result = try await body(store)
            let number = try await store.announceChange()
            let deadline = ContinuousClock.now + .seconds(5)
            while try await store.nodesBehind(number) > 0 {
                guard ContinuousClock.now < deadline else {
                    FileHandle.standardError.write(Data("warning: a running gateway did not confirm the change within 5 s; it reads it within 30 s.\n".utf8))
                    break
                }
                try await Task.sleep(for: .milliseconds(10))
            }
            return result
        }
    }

    func withStore<T: Sendable>(_ body: @Sendable (any GatewayStore) async throws -> T) async throws -> T {
        umask(0o077)
        guard let database else {
            let configuration = GatewayConfiguration(dataDirectory: directory)
            try PrivateFiles.createDirectory(directory)
            try PrivateFiles.touch(configuration.databasePath)
            do {
                return try await body(SQLiteGatewayStore(path: configuration.databasePath))
            } catch let error as GatewayError {
                throw CommandFailure(error.message)
            }
        }
        var logger = Logger(label: "unotify.gateway")
        logger.logLevel = .warning
        let store: PostgresGatewayStore
        do { store = try PostgresGatewayStore(url: database, logger: logger) } catch { throw CommandFailure(error.message) }
        return try await withThrowingTaskGroup(of: T?.self) { tasks in
            tasks.addTask {
                await store.run()
                return nil
            }
            defer { tasks.cancelAll() }
            do {
                try await store.migrate()
                return try await body(store)
            } catch let error as GatewayError {
                throw CommandFailure(error.message)
            }
        }
    }
}

struct GatewayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gateway",
        abstract: "Run the APNs-compatible push gateway, and manage its teams, keys and apps.",
        discussion: """
            Providers send pushes with Apple's HTTP/2 provider API, unchanged: token authentication with a team's ES256 key (.p8), the same headers, status codes and reasons. Set up a provider with `unotify gateway teams add`, `unotify gateway apps add` and `unotify gateway keys create`, then point its APNs client at the sandbox endpoint (port 2197) or the production one (2198), trusting the gateway's certificate authority (ca.pem in the gateway's folder).
            """,
        subcommands: [Serve.self, Teams.self, Apps.self, Keys.self, Certificates.self, Token.self, Devices.self],
        defaultSubcommand: Serve.self
    )

    struct Serve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Run the gateway's provider API (sandbox and production endpoints).")

        @OptionGroup var location: GatewayLocation
        @Option(name: .long, help: "The address to listen on (loopback unless told otherwise).") var host = "127.0.0.1"
        @Option(name: .long, help: "The sandbox endpoint's port.") var sandboxPort = 2197
        @Option(name: .long, help: "The production endpoint's port.") var productionPort = 2198
        @Option(name: .long, help: "The port devices link to.") var deviceLinkPort = 2199
        @Option(name: .long, help: "Another name or address for the server certificate (repeatable).") var hostName: [String] = []
        @Option(name: .long, help: "The most device links kept at once. Default: 30 % of the open-files limit, after 256 files kept for the process (Docs/connections.md).")
        var maximumDeviceLinks: Int?
        @Flag(name: .long, help: "Serve HTTP/2 without TLS (prior knowledge); for tests on one machine.") var cleartext = false
        @Flag(name: .long, help: "Refuse a key of the other environment with BadEnvironmentKeyIdInToken, as Apple's documentation spells it, instead of BadEnvironmentKeyInToken, as APNs sends it.")
        var documentedEnvironmentReason = false
        @Option(name: .long, help: "trace, debug, info, notice, warning, error or critical.") var logLevel = "info"
        @OptionGroup var deliveryLog: DeliveryLogOptions
        @OptionGroup var tokenExpiry: TokenExpiryOptions
        @OptionGroup var servedCertificate: ServedCertificateOptions
        @OptionGroup var metrics: MetricsOptions

        func run() async throws {
            ServerProcess.prepare()
            umask(0o077)
            var configuration = GatewayConfiguration(dataDirectory: location.directory)
            let registry = metrics.makeRegistry()
            if let registry { configuration.metrics = registry }
            deliveryLog.apply(to: &configuration)
            tokenExpiry.apply(to: &configuration)
            servedCertificate.apply(to: &configuration)
            configuration.host = host
            configuration.sandboxPort = sandboxPort
            configuration.productionPort = productionPort
            configuration.deviceLinkPort = deviceLinkPort
            configuration.hostNames = hostName
            if let maximumDeviceLinks {
                guard maximumDeviceLinks > 0 else { throw CommandFailure("--maximum-device-links is at least 1.") }
                configuration.maximumDeviceLinks = maximumDeviceLinks
            }
            configuration.cleartext = cleartext
            if documentedEnvironmentReason { configuration.environmentKeyReason = .badEnvironmentKeyIdInToken }
            var logger = Logger(label: "unotify.gateway")
            logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
            guard let database = location.database else {
                try await serve(configuration, store: nil, registry: registry, logger: logger)
                return
            }
            // The database's connection pool runs for as long as the gateway does.
            let store: PostgresGatewayStore
            do { store = try PostgresGatewayStore(url: database, logger: logger) } catch { throw CommandFailure(error.message) }
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { await store.run() }
                defer { tasks.cancelAll() }
                do throws(GatewayError) { try await store.migrate() } catch { throw CommandFailure(error.message) }
                logger.info("gateway database", metadata: ["database": .string(store.location)])
                try await serve(configuration, store: store, registry: registry, logger: logger)
            }
        }

        private func serve(_ configuration: GatewayConfiguration, store: (any GatewayStore)?, registry: MetricsRegistry?, logger: Logger) async throws {
            let readiness = Readiness(waitingFor: Self.gatewayParts, onReady: ServiceManagerNotification.ready)
            let gateway = try await ServeCommand.failingInOneLine { try await PushGatewayServices(configuration: configuration, store: store, logger: logger,
                                                        onListening: { environment, _ in readiness.ready("provider API (\(environment.rawValue))") },
                                                        onDeviceLinkListening: { _ in readiness.ready("device links") }) }
            logger.info("gateway folder", metadata: ["path": .string(configuration.dataDirectory.path),
                                                     "ca": .string(configuration.authorityCertificatePath)])
            var services = gateway.services
            if let registry {
                registry.addSampler { await gateway.sampleMetrics() }
                services.append(metrics.endpoint(for: registry, defaultPort: MetricsOptions.gatewayPort, readiness: readiness, logger: logger))
            }
            let group = ServiceGroup(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
            try await group.run()
        }

        /// What `GET /readyz` waits for: the gateway's three listeners.
        static let gatewayParts: Set<String> = ["provider API (sandbox)", "provider API (production)", "device links"]
    }

    struct Teams: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add and list teams (a team owns apps and signing keys).", subcommands: [Add.self, List.self])

        struct Add: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Add a team.")
            @OptionGroup var location: GatewayLocation
            @Argument(help: "The team's identifier: 10 upper-case letters or digits, as Apple's, such as ABCDE12345.") var teamID: String
            @Option(name: .long, help: "A name to recognize it by.") var name: String?

            func validate() throws {
                guard AppleIdentifier.isValid(teamID) else { throw ValidationError("A team identifier is 10 upper-case letters or digits, such as ABCDE12345.") }
            }

            func run() async throws {
                try await location.withStoreChanging { try await $0.addTeam(teamID, name: name ?? teamID) }
                print(teamID)
            }
        }

        struct List: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "List the teams.")
            @OptionGroup var location: GatewayLocation

            func run() async throws {
                for team in try await location.withStore({ try await $0.teams() }) { print("\(team.teamID)  \(team.name)") }
            }
        }
    }

    struct Apps: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Give apps (topics) to teams.", subcommands: [Add.self, List.self, Remove.self, Storage.self])

        struct Storage: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Choose what the gateway keeps of an app's pushes for a device that is offline.",
                discussion: "all (the default): every push until it expires. latest: only the newest, as APNs keeps one notification per app."
            )
            @OptionGroup var location: GatewayLocation
            @Argument(help: "The app's bundle identifier.") var bundleIdentifier: String
            @Argument(help: "all or latest.") var keep: String

            func validate() throws {
                guard keep == "all" || keep == "latest" else { throw ValidationError("Keep all or latest, not \(keep).") }
            }

            func run() async throws {
                try await location.withStoreChanging { try await $0.setKeepsLatestOnly(bundleIdentifier, keep == "latest") }
                print(keep == "latest" ? "\(bundleIdentifier): only the latest push is kept for an offline device, as on APNs."
                                       : "\(bundleIdentifier): every unexpired push is kept for an offline device.")
            }
        }

        struct Add: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Let a team push to an app.")
            @OptionGroup var location: GatewayLocation
            @Argument(help: "The app's bundle identifier, such as com.example.todo.") var bundleIdentifier: String
            @Option(name: .long, help: "The team that owns it.") var team: String

            func validate() throws {
                if let violation = RequestRules.violation(inBundleIdentifier: bundleIdentifier) { throw ValidationError(violation.message) }
            }

            func run() async throws {
                try await location.withStoreChanging { try await $0.addApp(bundleIdentifier, team: team) }
                print("Team \(team) may push to \(bundleIdentifier).")
            }
        }

        struct List: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "List every team's apps.")
            @OptionGroup var location: GatewayLocation

            func run() async throws {
                let providers = try await location.withStore { try await $0.providers() }
                for (team, apps) in providers.appsByTeam.sorted(by: { $0.key < $1.key }) {
                    for app in apps.sorted() { print("\(app)  \(team)") }
                }
            }
        }

        struct Remove: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Stop a team from pushing to an app.")
            @OptionGroup var location: GatewayLocation
            @Argument var bundleIdentifier: String

            func run() async throws {
                try await location.withStoreChanging { try await $0.removeApp(bundleIdentifier) }
                print("No team may push to \(bundleIdentifier) now.")
            }
        }
    }

    struct Keys: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create, list and revoke teams' signing keys.", subcommands: [Create.self, List.self, Remove.self])

        struct Create: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Create a signing key and write its .p8 for the provider.",
                discussion: "Prints the key's identifier (the JWT's kid). The gateway keeps only the public key; the .p8 file, readable only by you, is what the provider's APNs client is given, with the key and team identifiers."
            )
            @OptionGroup var location: GatewayLocation
            @Option(name: .long, help: "The team the key belongs to.") var team: String
            @Option(name: .long, help: "sandbox or production: restrict the key to one environment (a team-scoped key). Default: both.")
            var environment: APNs.Environment?
            @Option(name: .long, help: "Restrict the key to these apps (a topic-specific key; repeatable).") var topic: [String] = []
            @Option(name: .long, help: "Where to write the .p8. Default: AuthKey_<key id>.p8 in the current folder.") var output: String?

            func run() async throws {
                let key = P256.Signing.PrivateKey()
                let keyID = AppleIdentifier.make()
                let path = output ?? "AuthKey_\(keyID).p8"
                guard !FileManager.default.fileExists(atPath: path) else { throw CommandFailure("\(path) exists already.") }
                let stored = StoredKey(keyID: keyID, teamID: team, environment: environment,
                                       bundleIdentifiers: topic.isEmpty ? nil : Set(topic), publicKeyPEM: key.publicKey.pemRepresentation)
                try await location.withStoreChanging { try await $0.addKey(stored) }
                guard PrivateFiles.createFile(atPath: path, contents: Data(key.pemRepresentation.utf8)) else {
                    throw CommandFailure("Could not write \(path); the key \(keyID) is registered, remove it with `unotify gateway keys remove \(keyID)`.")
                }
                print(keyID)
                FileHandle.standardError.write(Data("Key \(keyID) of team \(team) written to \(path).\n".utf8))
            }
        }

        struct List: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "List the signing keys.")
            @OptionGroup var location: GatewayLocation

            func run() async throws {
                for key in try await location.withStore({ try await $0.providers().keys }) {
                    let scope = key.bundleIdentifiers.map { "topics " + $0.sorted().joined(separator: ",") } ?? "every app of the team"
                    print("\(key.keyID)  team \(key.teamID)  \(key.environment?.rawValue ?? "sandbox and production")  \(scope)")
                }
            }
        }

        struct Remove: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Revoke a signing key: tokens it signed stop working.")
            @OptionGroup var location: GatewayLocation
            @Argument var keyID: String

            func run() async throws {
                try await location.withStoreChanging { try await $0.removeKey(keyID) }
                print("Key \(keyID) revoked: tokens it signed are refused now.")
            }
        }
    }

    struct Certificates: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Issue providers' client certificates (certificate-based authentication).",
            subcommands: [Create.self]
        )

        struct Create: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Issue a client certificate for one app, and print the curl command that pushes with it.",
                discussion: "Like Apple's push certificates: for the sandbox, production, or both (the default, with the app's VoIP and complication topics, so requests must name their apns-topic). Signed by the gateway's certificate authority (ca.pem in its folder, made when the gateway first starts); valid for a year. The certificate and its key (readable only by you) are written as <output>.pem and <output>-key.pem."
            )
            @OptionGroup var location: GatewayLocation
            @Option(name: .long, help: "The app (topic) the certificate is for; it must belong to a team (`unotify gateway apps add`).") var app: String
            @Option(name: .long, help: "sandbox or production. Default: both.") var environment: APNs.Environment?
            @Option(name: .long, help: "The files' name without extension. Default: PushCertificate_<app> in the current folder.") var output: String?

            func run() async throws {
                let apps = try await location.withStore { try await $0.providers().appsByTeam }
                guard let team = apps.first(where: { $0.value.contains(app) })?.key else {
                    throw CommandFailure("\(app) belongs to no team: add it with `unotify gateway apps add \(app) --team <team>`.")
                }
                let configuration = GatewayConfiguration(dataDirectory: location.directory)
                guard let certificatePEM = try? String(contentsOfFile: configuration.authorityCertificatePath, encoding: .utf8),
                      let keyPEM = try? String(contentsOfFile: configuration.authorityKeyPath, encoding: .utf8) else {
                    throw CommandFailure("The gateway has no certificate authority yet in \(location.directory.path): start it once (`unotify serve` or `unotify gateway`).")
                }
                let authority = try GatewayCertificateAuthority(certificatePEM: certificatePEM, privateKeyPEM: keyPEM)
                let environments: Set<APNs.Environment> = environment.map { [$0] } ?? [.sandbox, .production]
                let issued = try authority.issueProviderCertificate(bundleIdentifier: app, teamID: team, environments: environments)
                let base = output ?? "PushCertificate_\(app)"
                let (certificatePath, keyPath) = (base + ".pem", base + "-key.pem")
                for path in [certificatePath, keyPath] where FileManager.default.fileExists(atPath: path) {
                    throw CommandFailure("\(path) exists already.")
                }
                guard PrivateFiles.createFile(atPath: keyPath, contents: Data(issued.privateKeyPEM.utf8)),
                      PrivateFiles.createFile(atPath: certificatePath, contents: Data(issued.certificatePEM.utf8)) else {
                    throw CommandFailure("Could not write \(certificatePath) and \(keyPath).")
                }
                // The running gateway's endpoint and certificate, else the default ports and the gateway's authority.
                let running = GatewayEndpoints.running(in: location.directory)
                let production = environments == [.production]
                let endpoint = (production ? running?.production : running?.sandbox) ?? "https://localhost:\(production ? 2198 : 2197)"
                var trust = running?.givenCertificate == true ? "" : "--cacert \(configuration.authorityCertificatePath) "
                if let address = running?.address, let url = URL(string: endpoint), let host = url.host, let port = url.port {
                    trust += "--resolve \(host):\(port):\(address) "
                }
                FileHandle.standardError.write(Data("Certificate for \(app) (team \(team), \(environments.map(\.rawValue).sorted().joined(separator: " and "))) written to \(certificatePath), its key to \(keyPath). Push with:\n".utf8))
                print("""
                    curl --http2 \(trust)--cert \(certificatePath) --key \(keyPath) \\
                      -H "apns-topic: \(app)" -H "apns-push-type: alert" -d '{"aps":{"alert":"Hello"}}' \(endpoint)/3/device/<device token>
                    """)
            }
        }
    }

    struct Devices: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Enroll devices (notification daemons) that link to the gateway; retire or block them.",
            subcommands: [Add.self, Remove.self, Disable.self, Enable.self]
        )

        struct Add: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Enroll a device and print its credential.",
                discussion: "Prints `<device id>.<secret>`: give it to the device's daemon (`unotify daemon --gateway … --gateway-credential …`). The gateway keeps only a hash of the secret."
            )
            @OptionGroup var location: GatewayLocation

            func run() async throws {
                print(try await location.withStoreChanging { try await DeviceLinks.enroll(in: $0, at: Date()) })
            }
        }

        struct Remove: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Retire a device: it can no longer link, what waited for it is dropped, and providers pushing to its tokens get 410 ExpiredToken."
            )
            @OptionGroup var location: GatewayLocation
            @Argument(help: "The device's identifier (the part of its credential before the dot).") var device: String

            func run() async throws {
                try await location.withStoreChanging { try await $0.removeDevice(device, at: Date()) }
                print("Device \(device) removed.")
            }
        }

        struct Disable: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Block pushes to a device: providers get 403 Forbidden until it is enabled again.")
            @OptionGroup var location: GatewayLocation
            @Argument(help: "The device's identifier.") var device: String

            func run() async throws {
                try await location.withStoreChanging { try await $0.setDeviceDisabled(device, true) }
                print("Pushes to device \(device) are blocked.")
            }
        }

        struct Enable: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Let pushes reach a disabled device again.")
            @OptionGroup var location: GatewayLocation
            @Argument(help: "The device's identifier.") var device: String

            func run() async throws {
                try await location.withStoreChanging { try await $0.setDeviceDisabled(device, false) }
                print("Pushes to device \(device) are allowed again.")
            }
        }
    }

    struct Token: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a provider authentication token (JWT) signed with a .p8, as APNs clients make them.",
            discussion: "For `curl`: -H \"authorization: bearer $(unotify gateway token --key AuthKey_KEY.p8 --key-id KEY --team TEAM)\". A token is valid for an hour; reuse it for 20 minutes at least."
        )
        @Option(name: .long, help: "The .p8 file.") var key: String
        @Option(name: .long, help: "The key's identifier (kid).") var keyID: String
        @Option(name: .long, help: "The team's identifier (iss).") var team: String

        func run() async throws {
            let pem = try String(contentsOfFile: key, encoding: .utf8)
            let privateKey: P256.Signing.PrivateKey
            do {
                privateKey = try P256.Signing.PrivateKey(pemRepresentation: pem)
            } catch {
                throw CommandFailure("\(key) is not a P-256 private key in PEM (a .p8).")
            }
            print(try ProviderToken.make(keyID: keyID, teamID: team, issuedAt: Int64(Date().timeIntervalSince1970), key: privateKey))
        }
    }
}


/// How long the gateway's delivery log keeps pushes, and how many.
struct DeliveryLogOptions: ParsableArguments {
    @Option(name: .long, help: "Days the delivery log keeps a push after it was accepted (longer while it is still stored); 0 keeps no log.")
    var deliveryLogDays: Double = 7
    @Option(name: .long, help: "The most pushes the delivery log keeps; the oldest go first.")
    var deliveryLogLimit = 1_000_000

    func validate() throws {
        guard deliveryLogDays >= 0, deliveryLogDays <= 366 else { throw ValidationError("--delivery-log-days is between 0 and 366.") }
        guard deliveryLogLimit >= 1 else { throw ValidationError("--delivery-log-limit is at least 1.") }
    }

    func apply(to configuration: inout GatewayConfiguration) {
        configuration.deliveryLogRetention = deliveryLogDays * 86_400
        configuration.deliveryLogLimit = deliveryLogLimit
    }
}

/// How long a token lasts once its device stops linking.
struct TokenExpiryOptions: ParsableArguments {
    @Option(name: .long, help: "Days after its device last linked (or after it was issued) that a token answers 410 ExpiredToken; 0: never.")
    var tokenExpiryDays: Double = 90

    func validate() throws {
        guard tokenExpiryDays >= 0, tokenExpiryDays <= 3_650 else { throw ValidationError("--token-expiry-days is between 0 and 3650.") }
    }

    func apply(to configuration: inout GatewayConfiguration) {
        configuration.admission.tokenExpiry = tokenExpiryDays == 0 ? nil : tokenExpiryDays * 86_400
    }
}

/// A certificate given to the gateway to serve (`Docs/certificates.md`).
struct ServedCertificateOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("A certificate chain to serve on the provider endpoints and the device links' port (PEM: the server's certificate, then its intermediates), such as a public host's, in place of one from the gateway's own authority; read again when the file changes.", valueName: "chain.pem"))
    var certificate: String?
    @Option(name: .long, help: ArgumentHelp("The private key of --certificate (PEM).", valueName: "key.pem"))
    var certificateKey: String?

    func validate() throws {
        guard (certificate == nil) == (certificateKey == nil) else {
            throw ValidationError("--certificate and --certificate-key go together: the chain to serve and its key.")
        }
        guard !(certificate?.isEmpty ?? false), !(certificateKey?.isEmpty ?? false) else { throw ValidationError("--certificate and --certificate-key name files.") }
    }

    func apply(to configuration: inout GatewayConfiguration) {
        guard let certificate, let certificateKey else { return }
        configuration.certificateFiles = .init(chain: certificate, key: certificateKey)
    }
}
