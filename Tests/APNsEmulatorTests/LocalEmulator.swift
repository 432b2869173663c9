import APNsEmulator
import AsyncHTTPClient
import Crypto
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOSSL
import PushGateway
import ServiceLifecycle
import Testing
import TestSupport

/// An emulator run in the test's process, on a frozen clock unless told otherwise, with a provider's
/// HTTP/2 client (one connection) and the control API's client.
struct LocalEmulator {
    let emulator: Emulator
    let document: EmulatorDocument
    let provider: HTTPClient
    let key: P256.Signing.PrivateKey

    static let topic = "com.example.app"

    /// Starts an emulator with `devices` simulated devices of ``topic``, runs `body`, and stops it.
    static func with(devices: Int = 2, frozen: Bool = true, acknowledgement: AcknowledgementTiming = .immediately,
                     _ body: (LocalEmulator) async throws -> Void) async throws {
        var configuration = EmulatorConfiguration(folder: try TemporaryFolders.make("emulator-"))
        configuration.topics = [(topic, devices)]
        configuration.frozenClock = frozen
        configuration.acknowledgement = acknowledgement
        let (ready, readiness) = AsyncStream.makeStream(of: EmulatorDocument.self)
        let emulator = try await Emulator(configuration: configuration, logger: Logger(label: "emulator")) { readiness.yield($0) }
        let group = ServiceGroup(services: emulator.services, logger: Logger(label: "emulator"))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            var documents = ready.makeAsyncIterator()
            let document = try #require(await documents.next())
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(document.caPEM.utf8)))
            let provider = HTTPClient(eventLoopGroupProvider: .singleton, configuration: HTTPClient.Configuration(tlsConfiguration: tls))
            let local = LocalEmulator(emulator: emulator, document: document, provider: provider,
                                      key: try P256.Signing.PrivateKey(pemRepresentation: document.keyPEM))
            do {
                try await body(local)
            } catch {
                try? await provider.shutdown()
                await group.triggerGracefulShutdown()
                throw error
            }
            try await provider.shutdown()
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }

    var tokens: [String] { document.topics[Self.topic] ?? [] }

    /// A provider token of the emulator's team, signed at `issuedAt` (by default, the system's now).
    func providerToken(issuedAt: Date = Date()) throws -> String {
        try ProviderToken.make(keyID: document.keyID, teamID: document.teamID, issuedAt: Int64(issuedAt.timeIntervalSince1970), key: key)
    }

    struct Answer {
        var status: Int
        var body: String
        var apnsID: String?
    }

    /// Posts a push to the sandbox endpoint.
    func push(_ alert: String, to device: String, token: String, headers: [(String, String)] = []) async throws -> Answer {
        var request = HTTPClientRequest(url: "\(document.sandbox)/3/device/\(device)")
        request.method = .POST
        request.headers.add(name: "authorization", value: "bearer \(token)")
        request.headers.add(name: "apns-topic", value: Self.topic)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        request.body = .bytes(ByteBuffer(string: #"{"aps":{"alert":"\#(alert)"}}"#))
        let response = try await provider.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 1 << 16)
        return Answer(status: Int(response.status.code), body: String(buffer: body), apnsID: response.headers.first(name: "apns-id"))
    }

    /// A request to the control API; its status and body.
    func control(_ method: HTTPMethod, _ path: String, _ body: String? = nil) async throws -> (status: Int, json: [String: Any]) {
        var request = HTTPClientRequest(url: document.control + path)
        request.method = method
        if let body {
            request.headers.add(name: "content-type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: body))
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 1 << 22)
        return (Int(response.status.code), (try? JSONSerialization.jsonObject(with: Data(buffer: bytes)) as? [String: Any]) ?? [:])
    }

    /// The alerts the device holding `token` received, once there are `count`.
    func alerts(_ token: String, count: Int) async throws -> [String] {
        try await emulator.devices.received(token: token, count: count, wait: 10).map { push in
            let payload = try? JSONSerialization.jsonObject(with: Data(push.payload.utf8)) as? [String: Any]
            return (payload?["aps"] as? [String: Any])?["alert"] as? String ?? ""
        }
    }
}
