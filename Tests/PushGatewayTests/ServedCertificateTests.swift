import Crypto
import Foundation
@testable import PushGateway
import SwiftASN1
import Testing
import TestSupport
import X509

/// A certificate authority made by the test, as a company's or a public one is: a root, an
/// intermediate under it, and server certificates from the intermediate. The gateway knows none of it.
struct TestAuthority {
    let rootKey: P256.Signing.PrivateKey
    let intermediateKey: P256.Signing.PrivateKey
    let root: Certificate
    let intermediate: Certificate

    init() throws {
        let (rootKey, intermediateKey) = (P256.Signing.PrivateKey(), P256.Signing.PrivateKey())
        (self.rootKey, self.intermediateKey) = (rootKey, intermediateKey)
        let rootName = try DistinguishedName { CommonName("Test Root CA"); OrganizationName("Served certificate tests") }
        root = try Self.authority(rootName, key: rootKey, issuer: rootName, issuerKey: rootKey, pathLength: 1)
        intermediate = try Self.authority(try DistinguishedName { CommonName("Test Issuing CA"); OrganizationName("Served certificate tests") },
                                          key: intermediateKey, issuer: rootName, issuerKey: rootKey, pathLength: 0)
    }

    /// An authority's certificate for `key`, signed by `issuerKey` (itself for a root), valid for 30 days.
    private static func authority(_ subject: DistinguishedName, key: P256.Signing.PrivateKey, issuer: DistinguishedName,
                                  issuerKey: P256.Signing.PrivateKey, pathLength: Int) throws -> Certificate {
        let now = Date()
        return try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey),
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(86_400 * 30),
            issuer: issuer, subject: subject, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: pathLength))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                SubjectKeyIdentifier(hash: .init(key.publicKey))
                if issuerKey.rawRepresentation != key.rawRepresentation {
                    AuthorityKeyIdentifier(keyIdentifier: SubjectKeyIdentifier(hash: .init(issuerKey.publicKey)).keyIdentifier)
                }
            },
            issuerPrivateKey: .init(issuerKey)
        )
    }

    var rootPEM: String { get throws { try root.serializeAsPEM().pemString + "\n" } }

    /// A server certificate for `names` and its key: the chain (the server's, then the intermediate)
    /// and the key in PEM, and the server certificate's SHA-256 as a client sees it.
    func issue(for names: [String], days: Double = 20) throws -> (chain: String, key: String, fingerprint: String) {
        let key = P256.Signing.PrivateKey()
        let now = Date()
        let leaf = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey),
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(86_400 * days),
            issuer: intermediate.subject, subject: try DistinguishedName { CommonName(names[0]) }, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames(names.map { .dnsName($0) })
                AuthorityKeyIdentifier(keyIdentifier: SubjectKeyIdentifier(hash: .init(intermediateKey.publicKey)).keyIdentifier)
            },
            issuerPrivateKey: .init(intermediateKey)
        )
        var serializer = DER.Serializer()
        try serializer.serialize(leaf)
        let fingerprint = SHA256.hash(data: serializer.serializedBytes).map { String(format: "%02x", $0) }.joined()
        let chain = try leaf.serializeAsPEM().pemString + "\n" + intermediate.serializeAsPEM().pemString + "\n"
        return (chain, key.pemRepresentation + "\n", fingerprint)
    }
}

/// A certificate given to the gateway (`--certificate`, `--certificate-key`): served on its provider
/// endpoints and device links, checked by clients as any public host's is, renewed without a restart.
@Suite(.timeLimit(.minutes(2))) struct ServedCertificateTests {
    /// `unotify serve` (the README's push setup) serving `issued`, its chain and key written as
    /// chain.pem and key.pem in the test's folder, its daemon trusting the authority's root.pem.
    func serve(_ issued: (chain: String, key: String, fingerprint: String), from authority: TestAuthority) async throws -> ServedSystem {
        try await ServedSystem.start(app: "com.example.todo", serveArguments: { directory in
            let (chain, key, root) = (directory.appendingPathComponent("chain.pem"), directory.appendingPathComponent("key.pem"),
                                      directory.appendingPathComponent("root.pem"))
            try Data(issued.chain.utf8).write(to: chain)
            try Data(issued.key.utf8).write(to: key)
            try Data(authority.rootPEM.utf8).write(to: root)
            return ["--certificate", chain.path, "--certificate-key", key.path, "--gateway-ca", root.path]
        })
    }

    /// Writes `text` beside `path` and renames it over it, as certbot and most renewals do.
    func replace(_ path: URL, with text: String) throws {
        let aside = path.appendingPathExtension("new")
        try Data(text.utf8).write(to: aside)
        #expect(rename(aside.path, path.path) == 0)
    }

    @Test func aRenewalIsServedOnceItsChainAndKeyAgreeAndAHalfWrittenOneIsRefusedOnce() throws {
        let authority = try TestAuthority()
        let folder = try makeTestDirectory()
        let chain = folder.appendingPathComponent("chain.pem"), key = folder.appendingPathComponent("key.pem")
        let first = try authority.issue(for: ["push.example.test", "*.push.example.test"])
        try Data(first.chain.utf8).write(to: chain)
        try Data(first.key.utf8).write(to: key)
        let served = try ServedCertificate(files: .init(chain: chain.path, key: key.path))
        #expect(served.loaded.names == ["push.example.test", "*.push.example.test"])
        #expect(served.loaded.generation == 1)
        #expect(served.covers("PUSH.example.test") && served.covers("eu.push.example.test"))
        #expect(!served.covers("example.test") && !served.covers("a.b.push.example.test") && !served.covers("localhost"))
        #expect(served.localName == "push.example.test")
        guard case .unchanged = served.reload() else { Issue.record("nothing changed"); return }

        // The chain is renewed before its key: refused, said once, the first pair still served.
        let second = try authority.issue(for: ["push.example.test"])
        try replace(chain, with: second.chain)
        guard case .refused(let reason) = served.reload() else { Issue.record("a chain without its key was taken"); return }
        #expect(reason.contains("is not the key of the first certificate in \(chain.path)"), "\(reason)")
        guard case .unchanged = served.reload() else { Issue.record("the refusal was said twice"); return }
        #expect(served.loaded.chainPEM == first.chain)

        try replace(key, with: second.key)
        guard case .renewed(let renewed) = served.reload() else { Issue.record("the renewal was not taken"); return }
        #expect(renewed.generation == 2 && renewed.chainPEM == second.chain && renewed.names == ["push.example.test"])
        #expect(served.loaded.keyPEM == second.key)
    }

    @Test func aChainOrKeyThatCannotBeServedStopsTheGatewayWithOneLineNamingTheFile() async throws {
        let authority = try TestAuthority()
        let folder = try makeTestDirectory()
        let (first, other) = (try authority.issue(for: ["localhost"]), try authority.issue(for: ["localhost"]))
        let chain = folder.appendingPathComponent("chain.pem"), key = folder.appendingPathComponent("key.pem")
        try Data(first.chain.utf8).write(to: chain)
        try Data(other.key.utf8).write(to: key)
        let gateway = try ChildProcess(ChildProcess.built("unotify"), [
            "gateway", "serve", "--gateway-dir", folder.appendingPathComponent("gateway").path, "--sandbox-port", "0", "--production-port", "0",
            "--device-link-port", "0", "--no-metrics", "--certificate", chain.path, "--certificate-key", key.path,
        ], name: "unotify gateway serve")
        #expect(await gateway.waitUntilExit() != 0)
        let said = await gateway.completeOutput()
        #expect(said.contains("Error: The served key \(key.path) is not the key of the first certificate in \(chain.path)."), "\(said)")
        #expect(!said.joined().contains("USAGE"))

        let missing = try ChildProcess(ChildProcess.built("unotify"), [
            "gateway", "serve", "--gateway-dir", folder.appendingPathComponent("gateway").path, "--no-metrics", "--certificate", chain.path,
        ], name: "unotify gateway serve")
        #expect(await missing.waitUntilExit() != 0)
        #expect(await missing.completeOutput().contains { $0.contains("--certificate and --certificate-key go together") })
    }

    /// `serve` with a certificate for `localhost` from the test's authority: aioapns and curl check
    /// it as they check APNs' (the authority, the host's name), a provider's client certificate from
    /// the gateway's own authority still authenticates, and a renewed certificate is served to new
    /// connections while one opened before goes on.
    @Test func aGivenCertificateIsCheckedByClientsAndRenewedWithoutDroppingAConnection() async throws {
        let authority = try TestAuthority()
        let first = try authority.issue(for: ["localhost"])
        let system = try await serve(first, from: authority)
        let root = system.directory.appendingPathComponent("root.pem").path
        let token = try await system.run(["apps", "token", "com.example.todo"], nil)

        // aioapns, with Python's default checks: the test's root, the name localhost.
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Clients/aioapns_send.py")
        let aioapns = try await Program.run("/usr/bin/env", [
            "python3", script.path, "--host", "localhost", "--port", system.port, "--ca", root,
            "--key-file", system.directory.appendingPathComponent("AuthKey_\(system.keyID).p8").path, "--key-id", system.keyID,
            "--team", "ABCDE12345", "--topic", "com.example.todo", "--push", #"\#(token)={"aps":{"alert":"Through aioapns"}}"#,
        ])
        #expect(aioapns.succeeded && aioapns.output.contains(#""status": "200""#), "\(aioapns.output) \(aioapns.errors)")

        // curl checks the name: localhost is the certificate's, 127.0.0.1 is not.
        let curl: @Sendable ([String]) async throws -> Program.Run = { arguments in
            try await Program.run("/usr/bin/curl", ["-sS", "--http2", "-o", "/dev/null", "-w", "%{http_code}", "--cacert", root,
                                                    "-H", "apns-topic: com.example.todo", "-H", "apns-push-type: alert",
                                                    "-d", #"{"aps":{"alert":"Through curl"}}"#] + arguments)
        }
        let named = try await curl(["-H", "authorization: bearer \(system.jwt)", "https://localhost:\(system.port)/3/device/\(token)"])
        #expect(named.succeeded && named.output == "200", "\(named.output) \(named.errors)")
        let byAddress = try await curl(["-H", "authorization: bearer \(system.jwt)", "https://127.0.0.1:\(system.port)/3/device/\(token)"])
        #expect(!byAddress.succeeded && byAddress.errors.contains("127.0.0.1"), "\(byAddress.errors)")
        // Without the authority, curl's system roots do not know the test's.
        let unknown = try await Program.run("/usr/bin/curl", ["-sS", "--http2", "-o", "/dev/null", "https://localhost:\(system.port)/3/device/\(token)"])
        #expect(!unknown.succeeded)

        // A provider's client certificate, from the gateway's own authority, as `certificates create` prints it.
        let printed = try await system.run(["gateway", "certificates", "create", "--app", "com.example.todo", "--environment", "sandbox"], system.directory)
        #expect(!printed.contains("--cacert"), "the served certificate is not the gateway's: \(printed)")
        let certified = try await curl(["--cert", system.directory.appendingPathComponent("PushCertificate_com.example.todo.pem").path,
                                        "--key", system.directory.appendingPathComponent("PushCertificate_com.example.todo-key.pem").path,
                                        "https://localhost:\(system.port)/3/device/\(token)"])
        #expect(certified.succeeded && certified.output == "200", "\(certified.output) \(certified.errors)")

        // One connection held across the renewal.
        // aioapns's HTTP/2 library (h2), in the Python that has aioapns.
        let client = try ChildProcess(URL(fileURLWithPath: "/usr/bin/env"), [
            "python3", URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Clients/renewal_client.py").path,
            "--host", "localhost", "--port", system.port, "--ca", root, "--jwt", system.jwt, "--topic", "com.example.todo", "--token", token,
        ], name: "renewal client")
        try await client.line(containing: #"{"peer": "\#(first.fingerprint)"}"#)
        try client.type("push")
        try await client.line(containing: #"{"status": 200"#)

        let renewed = try authority.issue(for: ["localhost"], days: 40)
        try replace(system.directory.appendingPathComponent("key.pem"), with: renewed.key)
        try replace(system.directory.appendingPathComponent("chain.pem"), with: renewed.chain)
        try await system.serve.line(containing: "served certificate renewed")
        try client.type("peer")
        try await client.line(containing: #"{"peer": "\#(renewed.fingerprint)"}"#)
        // The connection opened before goes on, with the certificate it opened with.
        try client.type("push")
        try await client.line(number: 2, matching: { $0.contains(#"{"status": 200"#) }, within: 10)
        try client.endInput()
        #expect(await client.waitUntilExit() == 0)
        // The device linked to the gateway before the renewal is still linked.
        #expect(system.serve.lines.filter { $0.contains("linked to the push gateway") }.count == 1)
        #expect(!system.serve.lines.contains { $0.contains("the device link is down") })
        await system.serve.stop()
    }

    /// A certificate for a public host's name (not localhost): `serve`'s own device links checking
    /// that name on loopback, and `unotify push` finds the endpoint and the name in endpoints.json.
    @Test func aCertificateForAnotherNameIsReachedOnThisMachineByThatName() async throws {
        let authority = try TestAuthority()
        let issued = try authority.issue(for: ["push.example.test"])
        // ServedSystem.start waits until the device linked, which checks the name on loopback.
        let system = try await serve(issued, from: authority)
        let root = system.directory.appendingPathComponent("root.pem").path
        let endpoints = try #require(try JSONSerialization.jsonObject(
            with: Data(contentsOf: system.directory.appendingPathComponent("gateway/endpoints.json"))) as? [String: Any])
        #expect(endpoints["sandbox"] as? String == "https://push.example.test:\(system.port)")
        #expect(endpoints["address"] as? String == "127.0.0.1")
        #expect(endpoints["givenCertificate"] as? Bool == true)

        let token = try await system.run(["apps", "token", "com.example.todo"], nil)
        let sent = try await system.run(["push", "--token", token, "--key", system.directory.appendingPathComponent("AuthKey_\(system.keyID).p8").path,
                                         "--key-id", system.keyID, "--team", "ABCDE12345", "--ca", root, "com.example.todo",
                                         "--payload", #"{"aps":{"alert":"By its name"}}"#], nil)
        #expect(sent.contains("200 apns-id"), "\(sent)")
        let curl = try await Program.run("/usr/bin/curl", [
            "-sS", "--http2", "-o", "/dev/null", "-w", "%{http_code}", "--cacert", root, "--resolve", "push.example.test:\(system.port):127.0.0.1",
            "-H", "apns-topic: com.example.todo", "-H", "apns-push-type: alert", "-H", "authorization: bearer \(system.jwt)",
            "-d", #"{"aps":{"alert":"By curl"}}"#, "https://push.example.test:\(system.port)/3/device/\(token)",
        ])
        #expect(curl.succeeded && curl.output == "200", "\(curl.output) \(curl.errors)")
        await system.serve.stop()
    }
}
