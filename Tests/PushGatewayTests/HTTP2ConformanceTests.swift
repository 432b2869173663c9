import Foundation
import NIOCore
import NIOPosix
import NotificationCore
import ProcessSpawning
import PushGateway
import Testing
import TestSupport

/// The provider port against the frame-level HTTP/2 conformance suite (`Tests/HTTP2Conformance`: the
/// cases of RFC 9113 and 7540 and of HPACK that h2spec checks, as raw frames over TLS), with a
/// provider's token and without, and nghttpd against the same suite in the same run: every case
/// nghttpd passes, the provider port passes.
@Suite(.timeLimit(.minutes(2))) struct HTTP2ConformanceTests {
    static let suite = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("HTTP2Conformance/h2conformance.py")

    struct Outcome {
        var passed: Set<String>
        var failed: [String: String]
    }

    /// Runs the suite against `port`; the cases passed, and those failed with what was seen.
    static func run(port: Int, authority: URL, arguments: [String] = []) async throws -> Outcome {
        let results = try TemporaryFolders.make("h2c-").appendingPathComponent("results.json")
        let run = try await Program.run("/usr/bin/env", [
            "python3", suite.path, "--host", "127.0.0.1", "--port", String(port), "--cafile", authority.path, "--server-name", "localhost",
            // Each case's verdict waits at most 8 s: the tests beside it may keep the machine busy.
            "--json", results.path, "--timeout", "8",
        ] + arguments)
        #expect(run.termination == .exited(0) || run.termination == .exited(1), "the suite ran: \(run.output) \(run.errors)")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: results)) as? [String: Any])
        let cases = try #require(document["cases"] as? [[String: Any]])
        var outcome = Outcome(passed: [], failed: [:])
        for entry in cases {
            guard let id = entry["id"] as? String else { continue }
            switch entry["result"] as? String {
            case "pass": outcome.passed.insert(id)
            default: outcome.failed[id] = "expected \(entry["expected"] ?? ""), saw \(entry["seen"] ?? "")"
            }
        }
        #expect(cases.count >= 146, "every case ran")
        return outcome
    }

    /// And as the APNs emulator runs it, with no fault scripted (`emulated`).
    @Test(arguments: [false, true]) func theProviderPortPassesEveryCaseNghttpdPasses(emulated: Bool) async throws {
        let reference = try await Self.runAgainstNghttpd()
        #expect(reference.passed.count >= 140, "nghttpd is a fair reference: \(reference.failed)")

        let provider = ProviderServerTests()
        try await provider.withServer(emulated: emulated) { running in
            let authority = try TemporaryFolders.make("h2c-ca-").appendingPathComponent("ca.pem")
            try Data(running.endpoint.authorityPEM.utf8).write(to: authority)
            let authorized = try await Self.run(port: running.endpoint.port, authority: authority, arguments: [
                "--path", "/3/device/\(ProviderServerTests.token)", "--header", "apns-topic:com.example.todo",
                "--header", "authorization:\(try running.bearer())",
            ])
            let anonymous = try await Self.run(port: running.endpoint.port, authority: authority)
            for (what, outcome) in [("with a token", authorized), ("without one", anonymous)] {
                #expect(outcome.failed.isEmpty, "\(what): \(outcome.failed.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" })")
                #expect(reference.passed.isSubset(of: outcome.passed), "\(what): nghttpd passes \(reference.passed.subtracting(outcome.passed).sorted())")
            }
        }
    }

    /// nghttpd on loopback, with a certificate of a fresh authority, run against the suite.
    static func runAgainstNghttpd() async throws -> Outcome {
        let folder = try TemporaryFolders.make("nghttpd-")
        let authority = try GatewayCertificateAuthority(name: "Test nghttpd CA")
        let issued = try authority.issueServerCertificate(for: ["localhost", "127.0.0.1"])
        let key = folder.appendingPathComponent("key.pem"), certificate = folder.appendingPathComponent("cert.pem")
        let authorityFile = folder.appendingPathComponent("ca.pem")
        try Data(issued.privateKeyPEM.utf8).write(to: key)
        try Data(issued.certificatePEM.utf8).write(to: certificate)
        try Data(try authority.certificatePEM.utf8).write(to: authorityFile)
        let documents = folder.appendingPathComponent("htdocs")
        try FileManager.default.createDirectory(at: documents, withIntermediateDirectories: true)
        let port = try freePort()
        let server = try SpawnedProcess.spawn("/usr/sbin/nghttpd", arguments: ["--address=127.0.0.1", "-d", documents.path, String(port), key.path, certificate.path],
                                              environment: ProcessInfo.processInfo.environment, standardInput: .null, standardOutput: .null, standardError: .null)
        defer {
            server.send(SIGTERM)
            _ = server.waitUntilExit()
        }
        try await waitFor("nghttpd to listen", within: 10) { (try? connectable(port)) == true }
        return try await run(port: port, authority: authorityFile)
    }

    /// A port nothing listens on now.
    static func freePort() throws -> Int {
        let channel = try ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).wait()
        defer { try? channel.close().wait() }
        return channel.localAddress?.port ?? 0
    }

    static func connectable(_ port: Int) throws -> Bool {
        let channel = try ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(host: "127.0.0.1", port: port).wait()
        try channel.close().wait()
        return true
    }
}
