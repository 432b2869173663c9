import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import Synchronization
import Testing
import TestSupport

// A Swift backend's tests against the APNs emulator, as `Docs/emulator.md` shows them: Swift Testing,
// AsyncHTTPClient for both the provider API (HTTP/2) and the emulator's control API, swift-crypto
// for the provider token. Nothing below uses the project's own modules but the helper that starts
// the `unotify` binary (a backend starts it with Foundation's `Process` or swift-subprocess).

/// A provider's push sender, as a Swift backend writes one: ES256 provider tokens, refreshed when
/// APNs says the one in use expired; tokens APNs says are gone are forgotten; 429 and 503 retried.
final class PushSender: Sendable {
    struct Outcome: Sendable {
        var status: Int
        var reason: String?
        var apnsID: String?
        var attempts: Int
    }

    let endpoint: String
    let topic: String
    let teamID: String
    let keyID: String
    let key: P256.Signing.PrivateKey
    let client: HTTPClient
    private let state = Mutex<(token: String?, tokens: Set<String>, refreshes: Int)>((nil, [], 0))

    init(endpoint: String, topic: String, teamID: String, keyID: String, keyPEM: String, trusting caPEM: String) throws {
        (self.endpoint, self.topic, self.teamID, self.keyID) = (endpoint, topic, teamID, keyID)
        key = try P256.Signing.PrivateKey(pemRepresentation: keyPEM)
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(caPEM.utf8)))
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: HTTPClient.Configuration(tlsConfiguration: tls))
    }

    var tokens: Set<String> { state.withLock { $0.tokens } }
    var refreshes: Int { state.withLock { $0.refreshes } }
    func register(_ token: String) { state.withLock { _ = $0.tokens.insert(token) } }

    /// The provider token in use, signed now if there is none.
    func providerToken() throws -> String {
        if let token = state.withLock({ $0.token }) { return token }
        func base64URL(_ data: some DataProtocol) -> String {
            Data(data).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
        let header = base64URL(Data(#"{"alg":"ES256","kid":"\#(keyID)"}"#.utf8))
        let claims = base64URL(Data(#"{"iss":"\#(teamID)","iat":\#(Int(Date().timeIntervalSince1970))}"#.utf8))
        let signature = try key.signature(for: Data("\(header).\(claims)".utf8))
        let token = "\(header).\(claims).\(base64URL(signature.rawRepresentation))"
        state.withLock { $0.token = token }
        return token
    }

    /// Sends one alert: until APNs takes it, or refuses it for good. Each attempt carries the same
    /// `apns-id`: APNs' delivery log, and the emulator's, show them together.
    func send(_ alert: String, to deviceToken: String, retryDelay: Duration = .milliseconds(100)) async throws -> Outcome {
        let apnsID = UUID().uuidString.lowercased()
        var attempts = 0
        while true {
            attempts += 1
            var request = HTTPClientRequest(url: "\(endpoint)/3/device/\(deviceToken)")
            request.method = .POST
            request.headers.add(name: "authorization", value: "bearer \(try providerToken())")
            request.headers.add(name: "apns-topic", value: topic)
            request.headers.add(name: "apns-push-type", value: "alert")
            request.headers.add(name: "apns-id", value: apnsID)
            request.body = .bytes(ByteBuffer(string: #"{"aps":{"alert":"\#(alert)"}}"#))
            let response = try await client.execute(request, timeout: .seconds(30))
            let body = try await response.body.collect(upTo: 4096)
            let reason = (try? JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any])?["reason"] as? String
            let outcome = Outcome(status: Int(response.status.code), reason: reason, apnsID: response.headers.first(name: "apns-id"), attempts: attempts)
            switch (outcome.status, reason) {
            case (403, "ExpiredProviderToken"?):
                state.withLock {
                    $0.token = nil
                    $0.refreshes += 1
                }
            case (410, _):
                state.withLock { _ = $0.tokens.remove(deviceToken) }
                return outcome
            case (429, _), (500, _), (503, _):
                try await Task.sleep(for: retryDelay)
            default:
                return outcome
            }
        }
    }
}

/// A running `unotify emulator run`, and its control API over AsyncHTTPClient.
struct RunningEmulator: Sendable {
    let process: ChildProcess
    /// The endpoints file's texts: `sandbox`, `control`, `caPEM`, `teamID`, `keyID`, `keyPEM`, …
    let strings: [String: String]
    /// Each topic's tokens.
    let topics: [String: [String]]

    var control: String { strings["control"] ?? "" }
    func tokens(_ topic: String) -> [String] { topics[topic] ?? [] }
    func string(_ key: String) -> String { strings[key] ?? "" }

    static func start(topics: [String]) async throws -> RunningEmulator {
        let file = try TemporaryFolders.make("emulator-").appendingPathComponent("emulator.json")
        let process = try ChildProcess(ChildProcess.built("unotify"), ["emulator", "run", "--endpoints-file", file.path] + topics.flatMap { ["--topic", $0] })
        try await waitFor("the emulator's endpoints file", within: 30) { FileManager.default.fileExists(atPath: file.path) }
        let document = try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any] ?? [:]
        return RunningEmulator(process: process, strings: document.compactMapValues { $0 as? String },
                               topics: document["topics"] as? [String: [String]] ?? [:])
    }

    @discardableResult
    func call(_ method: HTTPMethod, _ path: String, _ body: String? = nil) async throws -> [String: Any] {
        var request = HTTPClientRequest(url: control + path)
        request.method = method
        if let body {
            request.headers.add(name: "content-type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: body))
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        #expect((200..<300).contains(response.status.code), "\(method) \(path): \(String(buffer: bytes))")
        return (try? JSONSerialization.jsonObject(with: Data(buffer: bytes)) as? [String: Any]) ?? [:]
    }

    func received(_ token: String, count: Int) async throws -> [[String: Any]] {
        try await call(.GET, "/v1/tokens/\(token)/received?count=\(count)&wait=3")["pushes"] as? [[String: Any]] ?? []
    }

    func stop() async {
        _ = await process.stop()
    }
}

@Suite(.timeLimit(.minutes(1))) struct SwiftBackendExampleTests {
    static let topic = "com.example.app"

    func withBackend(_ body: (RunningEmulator, PushSender) async throws -> Void) async throws {
        let emulator = try await RunningEmulator.start(topics: ["\(Self.topic)=3"])
        let sender = try PushSender(endpoint: emulator.string("sandbox"), topic: Self.topic, teamID: emulator.string("teamID"),
                                    keyID: emulator.string("keyID"), keyPEM: emulator.string("keyPEM"), trusting: emulator.string("caPEM"))
        for token in emulator.tokens(Self.topic) { sender.register(token) }
        do {
            try await body(emulator, sender)
        } catch {
            try? await sender.client.shutdown()
            await emulator.stop()
            throw error
        }
        try await sender.client.shutdown()
        await emulator.stop()
    }

    @Test func anHourLaterTheOldProviderTokenIsExpiredAndTheSenderSignsANewOne() async throws {
        try await withBackend { emulator, sender in
            let device = emulator.tokens(Self.topic)[0]
            #expect(try await sender.send("Before", to: device).status == 200)
            let stale = try sender.providerToken()
            try await emulator.call(.POST, "/v1/clock/advance", #"{"by":"61m"}"#)

            // The token the sender holds is an hour old now.
            var request = HTTPClientRequest(url: "\(emulator.string("sandbox"))/3/device/\(device)")
            request.method = .POST
            request.headers.add(name: "authorization", value: "bearer \(stale)")
            request.headers.add(name: "apns-topic", value: Self.topic)
            request.body = .bytes(ByteBuffer(string: #"{"aps":{"alert":"Stale"}}"#))
            let refused = try await sender.client.execute(request, timeout: .seconds(30))
            #expect(refused.status.code == 403)
            #expect(String(buffer: try await refused.body.collect(upTo: 1024)) == #"{"reason":"ExpiredProviderToken"}"#)

            // The sender's own send signs a new one.
            let after = try await sender.send("After", to: device)
            #expect(after.status == 200 && after.attempts == 2)
            #expect(sender.refreshes == 1)
            let alerts = try await emulator.received(device, count: 2).compactMap { (($0["payload"] as? [String: Any])?["aps"] as? [String: Any])?["alert"] as? String }
            #expect(alerts == ["Before", "After"])
        }
    }

    @Test func aTokenAnswered410IsForgottenAndA503WindowIsRetriedThrough() async throws {
        try await withBackend { emulator, sender in
            let (gone, device) = (emulator.tokens(Self.topic)[1], emulator.tokens(Self.topic)[2])
            try await emulator.call(.POST, "/v1/faults", #"{"action":"status","reason":"Unregistered","token":"\#(gone)"}"#)
            let unregistered = try await sender.send("Anyone there?", to: gone)
            #expect(unregistered.status == 410 && unregistered.reason == "Unregistered")
            #expect(!sender.tokens.contains(gone))

            try await emulator.call(.POST, "/v1/faults", #"{"action":"status","reason":"ServiceUnavailable","for":"5m"}"#)
            async let sent = sender.send("Eventually", to: device)
            // Once the sender has met the window, the test closes it by moving time past it.
            try await waitFor("the 503 window to be met", within: 10) {
                let faults = (try? await emulator.call(.GET, "/v1/faults"))?["faults"] as? [[String: Any]] ?? []
                return (faults.last?["fired"] as? Int ?? 0) >= 1
            }
            try await emulator.call(.POST, "/v1/clock/advance", #"{"by":"5m"}"#)
            let outcome = try await sent
            #expect(outcome.status == 200 && outcome.attempts >= 2)

            let pushes = try await emulator.received(device, count: 1)
            #expect(pushes.count == 1)
            let apnsID = try #require((pushes.first?["headers"] as? [String: Any])?["apns-id"] as? String)
            #expect(apnsID == outcome.apnsID)
            // The delivery log shows each 503 the window injected, then the push's way to the device.
            let log = try await emulator.call(.GET, "/v1/log/\(apnsID)")
            let attempts = (log["pushes"] as? [[String: Any]] ?? []).map { push in
                (push["stages"] as? [[String: Any]] ?? []).compactMap { $0["stage"] as? String }
            }
            #expect(attempts.count == outcome.attempts, "\(attempts)")
            #expect(attempts.dropLast().allSatisfy { $0 == ["injected"] }, "\(attempts)")
            #expect(attempts.last?.first == "accepted" && attempts.last?.last == "acknowledged", "\(attempts)")
        }
    }
}
