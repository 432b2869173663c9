import ArgumentParser
import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import NotificationCore
import NotificationDaemon
import NotificationDaemonClient
import PushGateway

/// `unotify push`: sends a push, or shows where one went (`unotify push status`).
struct PushCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract: "Send a push (to an app on this device, or through a gateway), or see where one went (`unotify push status`).",
        subcommands: [SendPush.self, PushStatus.self],
        defaultSubcommand: SendPush.self
    )
}

/// The gateway a command speaks to as a provider, and the provider's key.
struct ProviderOptions: ParsableArguments {
    @Option(name: .long, help: "The gateway's provider endpoint. Default: the sandbox endpoint of the gateway running with the local gateway folder (it writes endpoints.json there), else https://localhost:2197.")
    var gateway: String?
    @Option(name: .long, help: "The gateway's certificate authority (default: ca.pem of the local gateway).") var ca: String?
    @Option(name: .long, help: "The provider's .p8 key.") var key: String?
    @Option(name: .long, help: "The key's identifier.") var keyId: String?
    @Option(name: .long, help: "The team's identifier.") var team: String?

    /// The provider endpoint: `--gateway`, or the sandbox endpoint of the gateway running with its
    /// folder at `directory` (and where it listens, see ``GatewayEndpoints``), or the default port
    /// on this machine.
    func endpoint(gatewayDirectory directory: URL) -> (url: String, running: GatewayEndpoints?) {
        if let gateway { return (gateway, nil) }
        let running = GatewayEndpoints.running(in: directory)
        return (running?.sandbox ?? "https://localhost:2197", running)
    }

    /// Sends `request` on `client`; a gateway that cannot be reached is one line that says what to do.
    static func execute(_ request: HTTPClientRequest, on client: HTTPClient, endpoint: String) async throws -> HTTPClientResponse {
        do {
            return try await client.execute(request, timeout: .seconds(30))
        } catch {
            throw CommandFailure("No gateway answered at \(endpoint) (\(error)). Is `unotify serve` or `unotify gateway` running? Give its provider endpoint with --gateway.")
        }
    }

    /// A client trusting the gateway's authority (`--ca`; else the local gateway's `ca.pem`, with the
    /// system's roots when the running gateway serves a certificate given to it), a fresh provider
    /// token, and the endpoint.
    func client(gatewayDirectory: URL) throws -> (client: HTTPClient, token: String, endpoint: String) {
        guard let key, let keyId, let team else {
            throw CommandFailure("As a provider, give --key, --key-id and --team (see `unotify gateway keys create`).")
        }
        let privateKey: P256.Signing.PrivateKey
        do {
            privateKey = try P256.Signing.PrivateKey(pemRepresentation: try String(contentsOfFile: key, encoding: .utf8))
        } catch {
            throw CommandFailure("\(key) is not a P-256 private key in PEM (a .p8).")
        }
        let (endpoint, running) = self.endpoint(gatewayDirectory: gatewayDirectory)
        let authority = ca ?? gatewayDirectory.appendingPathComponent("ca.pem").path
        var tls = TLSConfiguration.makeClientConfiguration()
        if FileManager.default.fileExists(atPath: authority) {
            let certificates: [NIOSSLCertificate]
            do { certificates = try NIOSSLCertificate.fromPEMFile(authority) } catch { throw CommandFailure("\(authority) is not a PEM certificate.") }
            if ca == nil, running?.givenCertificate == true {
                tls.additionalTrustRoots = [.certificates(certificates)]
            } else {
                tls.trustRoots = .certificates(certificates)
            }
        }
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        // The certificate's name, reached where the gateway listens on this machine.
        if let address = running?.address, let host = URL(string: endpoint)?.host { configuration.dnsOverride = [host: address] }
        let token = try ProviderToken.make(keyID: keyId, teamID: team, issuedAt: Int64(Date().timeIntervalSince1970), key: privateKey)
        return (HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration), token, endpoint)
    }
}

/// `unotify push [send]`: a push to an app on this device (as `xcrun simctl push`), or to a device
/// token through a gateway (as a provider sends it, with Apple's provider API).
struct SendPush: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Send a push: to an app on this device (like `xcrun simctl push`), or to a device token through a gateway.",
        discussion: """
            To an app on this device: `unotify push com.example.todo payload.apns` (or `-` to read standard input, or --payload '{"aps":…}'). An .apns file (Xcode's format) may name its app with a top-level "Simulator Target Bundle" key; the bundle identifier given here wins.

            Through a gateway, as a provider: `unotify push --token <device token> --key AuthKey_<id>.p8 --key-id <id> --team <team> com.example.todo payload.json`. It sends to the local gateway's sandbox endpoint unless --gateway says otherwise, trusting its ca.pem.
            """
    )

    @OptionGroup var location: LocationOptions
    @Argument(help: "The app's bundle identifier, then the payload file (.json or .apns, or - for standard input).") var arguments: [String] = []
    @Option(name: .long, help: "The payload itself, as JSON.") var payload: String?
    @Option(name: .customLong("collapse-id"), help: "apns-collapse-id: a later push with the same one replaces it.") var collapseID: String?

    @Option(name: .long, help: "Send through a gateway to this device token, as a provider.") var token: String?
    @OptionGroup var provider: ProviderOptions
    @Option(name: .long, help: "apns-push-type: alert, background, voip… (a type with a topic of its own, such as voip's <bundle>.voip, is sent to that topic).") var pushType = "alert"
    @Option(name: .long, help: "apns-priority.") var priority: Int?
    @Option(name: .long, help: "apns-expiration, in seconds since 1970 (0: now or never).") var expiration: Int?

    func run() async throws {
        var (bundle, json) = try readPayload()
        // Xcode's .apns key names the app; it is not part of what the app receives.
        if var object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any], let target = object["Simulator Target Bundle"] as? String {
            bundle = bundle ?? target
            object.removeValue(forKey: "Simulator Target Bundle")
            json = String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
        }
        guard let bundle else {
            throw CommandFailure("Name the app: `unotify push <bundle identifier> <payload file>`, or a \"Simulator Target Bundle\" key in the file.")
        }
        if let token {
            // A push type with a topic of its own (VoIP's `<bundle>.voip`, and the others) is sent to it,
            // as a provider must; a bundle identifier given with the suffix already is kept as it is.
            let suffix = APNs.PushType(rawValue: pushType)?.topicSuffix
            let topic = suffix.map { bundle.hasSuffix($0) ? bundle : bundle + $0 } ?? bundle
            try await sendThroughGateway(to: token, topic: topic, payload: json)
        } else {
            try await location.adminClient().call(.POST, "/v1/admin/apps/\(segment(bundle))/pushes",
                                                  body: LocalAPI.LocalPush(payload: json, collapseID: collapseID))
            print("Delivered to \(bundle).")
        }
    }

    /// The bundle identifier given, if any, and the payload's text.
    private func readPayload() throws -> (String?, String) {
        var positional = arguments
        if let payload {
            guard positional.count <= 1 else { throw CommandFailure("With --payload, give only the bundle identifier.") }
            return (positional.first, payload)
        }
        guard let source = positional.popLast() else { throw CommandFailure("Give a payload file (or - for standard input), or --payload.") }
        guard positional.count <= 1 else { throw CommandFailure("Give at most a bundle identifier and a payload file.") }
        let data: Data
        if source == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            guard let contents = FileManager.default.contents(atPath: source) else { throw CommandFailure("Cannot read \(source).") }
            data = contents
        }
        return (positional.first, String(decoding: data, as: UTF8.self))
    }

    private func sendThroughGateway(to token: String, topic: String, payload: String) async throws {
        let gatewayDirectory = location.configuration.dataDirectory.appendingPathComponent("gateway", isDirectory: true)
        let (client, providerToken, endpoint) = try provider.client(gatewayDirectory: gatewayDirectory)
        defer { _ = client.shutdown() as EventLoopFuture<Void> }
        var request = HTTPClientRequest(url: endpoint + "/3/device/" + token)
        request.method = .POST
        request.headers.add(name: "authorization", value: "bearer " + providerToken)
        request.headers.add(name: "apns-topic", value: topic)
        request.headers.add(name: "apns-push-type", value: pushType)
        if let priority { request.headers.add(name: "apns-priority", value: String(priority)) }
        if let expiration { request.headers.add(name: "apns-expiration", value: String(expiration)) }
        if let collapseID { request.headers.add(name: "apns-collapse-id", value: collapseID) }
        request.body = .bytes(ByteBuffer(string: payload))
        let response = try await ProviderOptions.execute(request, on: client, endpoint: endpoint)
        let body = String(buffer: try await response.body.collect(upTo: 1 << 16))
        let apnsID = response.headers.first(name: "apns-id") ?? "?"
        guard response.status == .ok else {
            throw CommandFailure("\(response.status.code) \(body) (apns-id \(apnsID))")
        }
        // The development environment names the push for its delivery log, as APNs does.
        print("200 apns-id \(apnsID)" + (response.headers.first(name: "apns-unique-id").map { " apns-unique-id \($0)" } ?? ""))
    }
}

/// `unotify push status <id>`: every stage of a push in the gateway's delivery log.
struct PushStatus: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show where a push went: every stage of it in the gateway's delivery log.",
        discussion: """
            Give the push's apns-id (or the apns-unique-id the sandbox endpoint answers with), or a device token to see its life (issued, unregistered). Read from the local gateway's database by default; with --key, --key-id and --team, from a gateway's provider API as that provider (which sees only its own pushes).
            """
    )

    @Argument(help: "The push's apns-id or apns-unique-id, or a device token.") var id: String
    @OptionGroup var location: GatewayLocation
    @OptionGroup var provider: ProviderOptions
    @Flag(name: .long, help: "Print the log as JSON, as the provider API answers it.") var json = false

    func run() async throws {
        let log: DeliveryLogResponse
        if provider.key != nil {
            log = try await readFromGateway()
        } else {
            let records = try await location.withStore { try await $0.deliveryRecords(matching: id) }
            if records.isEmpty, id.count >= 32, id.count % 2 == 0, id.allSatisfy(\.isHexDigit) {
                // A device token: its life, as the gateway answers for it.
                guard let registration = try await location.withStore({ try await $0.registration(token: id.lowercased()) }) else {
                    throw CommandFailure("No push or token \(id) at the gateway at \(location.directory.path).")
                }
                return print(Self.describe(registration))
            }
            guard !records.isEmpty else { throw CommandFailure("No push \(id) in the delivery log of the gateway at \(location.directory.path).") }
            log = DeliveryLogResponse(id: id, records: records)
        }
        if json { return try printJSON(log) }
        for push in log.pushes { print(Self.describe(push)) }
    }

    private func readFromGateway() async throws -> DeliveryLogResponse {
        let (client, token, endpoint) = try provider.client(gatewayDirectory: location.directory)
        defer { _ = client.shutdown() as EventLoopFuture<Void> }
        var request = HTTPClientRequest(url: endpoint + DeliveryLogResponse.pathPrefix + segment(id))
        request.headers.add(name: "authorization", value: "bearer " + token)
        let response = try await ProviderOptions.execute(request, on: client, endpoint: endpoint)
        let body = try await response.body.collect(upTo: 1 << 22)
        guard response.status == .ok else {
            throw CommandFailure(response.status == .notFound ? "No push \(id) of yours in the gateway's delivery log." : "\(response.status.code) \(String(buffer: body))")
        }
        return try JSONDecoder().decode(DeliveryLogResponse.self, from: Data(body.readableBytesView))
    }

    /// A token's life: whose it is, when it was issued, when its device last linked, and when it was
    /// unregistered (then pushes to it are answered `410 Unregistered` with that time).
    static func describe(_ registration: Registration) -> String {
        let format = DateFormatter()
        format.locale = Locale(identifier: "en_US_POSIX")
        format.dateFormat = "yyyy-MM-dd HH:mm:ss.SSS"
        var lines = ["token \(registration.token.prefix(16))…: \(registration.bundleIdentifier) (\(registration.environment.rawValue)) on device \(registration.deviceID)",
                     "  \(format.string(from: registration.registeredAt))  issued"]
        if let linked = registration.deviceLastLinkedAt { lines.append("  \(format.string(from: linked))  its device last linked or unlinked") }
        if let gone = registration.unregisteredAt {
            lines.append("  \(format.string(from: gone))  unregistered: pushes to it are answered 410 Unregistered")
        }
        return lines.joined(separator: "\n")
    }

    /// A push and its stages, one per line, with local times to the millisecond (each as the clock
    /// that recorded it: the device's own for what it reports).
    static func describe(_ push: DeliveryLogResponse.Push) -> String {
        var lines = ["push \(push.apnsUniqueId) (apns-id \(push.apnsId)): \(push.pushType) to \(push.topic), token \(push.deviceToken.prefix(16))…, "
            + "\(push.payloadBytes) bytes, priority \(push.priority)" + (push.collapseId.map { ", collapse id \($0)" } ?? "")]
        let format = DateFormatter()
        format.locale = Locale(identifier: "en_US_POSIX")
        format.dateFormat = "yyyy-MM-dd HH:mm:ss.SSS"
        let width = push.stages.map(\.stage.count).max() ?? 0
        for stage in push.stages {
            let at = format.string(from: Date(timeIntervalSince1970: Double(stage.timestamp) / 1000))
            let line = "  \(at)  " + (stage.detail.map { stage.stage.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + $0 } ?? stage.stage)
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }
}
