import Foundation
import NotificationCore
import PushGateway
import Synchronization
import TestSupport
import Testing

/// Providers that authenticate with a TLS client certificate instead of a token, as APNs'
/// certificate-based connections do.
@Suite struct CertificateAuthenticationTests {
    static let now = Date(timeIntervalSince1970: 1_767_225_600)
    static let credentials = ProviderCredentials(appsByTeam: ["ABCDE12345": ["com.example.todo"]])

    static func verdict(_ environments: Set<APNs.Environment>, app: String = "com.example.todo", by authority: GatewayCertificateAuthority? = nil,
                        at date: Date = now) throws -> (ProviderCertificate.Verdict, GatewayCertificateAuthority) {
        let authority = try authority ?? GatewayCertificateAuthority(name: "Test CA", now: now)
        let issued = try authority.issueProviderCertificate(bundleIdentifier: app, teamID: "ABCDE12345", environments: environments, now: now)
        let der = try Self.der(issued.certificatePEM)
        return (ProviderCertificate.verify([der], authority: authority.certificate, now: date), authority)
    }

    static func der(_ pem: String) throws -> [UInt8] {
        let base64 = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        return Array(try #require(Data(base64Encoded: base64)))
    }

    // MARK: - The certificate

    @Test func aCertificateForOneEnvironmentHasOneTopicAndOneForBothHasTheAppsOtherTopics() throws {
        #expect(try Self.verdict([.sandbox]).0 == .valid(ProviderCertificate(
            bundleIdentifier: "com.example.todo", teamID: "ABCDE12345", environments: [.sandbox], topics: ["com.example.todo"])))
        #expect(try Self.verdict([.sandbox, .production]).0 == .valid(ProviderCertificate(
            bundleIdentifier: "com.example.todo", teamID: "ABCDE12345", environments: [.sandbox, .production],
            topics: ["com.example.todo", "com.example.todo.voip", "com.example.todo.complication"])))
    }

    @Test func aCertificateOfAnotherAuthorityOrOutOfDateIsNotAccepted() throws {
        let (_, ours) = try Self.verdict([.sandbox])
        let other = try GatewayCertificateAuthority(name: "Someone else's CA", now: Self.now)
        let foreign = try other.issueProviderCertificate(bundleIdentifier: "com.example.todo", teamID: "ABCDE12345", environments: [.sandbox], now: Self.now)
        guard case .invalid = ProviderCertificate.verify([try Self.der(foreign.certificatePEM)], authority: ours.certificate, now: Self.now) else {
            Issue.record("a certificate of another authority was accepted")
            return
        }
        let (expired, _) = try Self.verdict([.sandbox], at: Self.now.addingTimeInterval(366 * 86_400))
        guard case .invalid = expired else {
            Issue.record("an expired certificate was accepted")
            return
        }
        let server = try ours.issueServerCertificate(for: ["localhost"], now: Self.now)
        guard case .invalid = ProviderCertificate.verify([try Self.der(server.certificatePEM)], authority: ours.certificate, now: Self.now) else {
            Issue.record("a server certificate was accepted as a provider's")
            return
        }
    }

    // MARK: - Requests on a certificate connection

    func authorize(_ verdict: ProviderCertificate.Verdict, environment: APNs.Environment = .sandbox, topic: String?,
                   pushType: APNs.PushType = .alert, credentials: ProviderCredentials = credentials) -> Result<ProviderConnectionAuthorization.Authorized, APNs.Rejection> {
        var connection = ProviderConnectionAuthorization(environment: environment, certificate: verdict)
        return connection.authorize(authorization: nil, topic: topic, pushType: pushType, now: Self.now, credentials: credentials)
    }

    func reason(_ result: Result<ProviderConnectionAuthorization.Authorized, APNs.Rejection>) -> String? {
        if case .failure(let rejection) = result { return rejection.reason.rawValue }
        return nil
    }

    @Test func aSingleTopicCertificateMayLeaveTheTopicOut() throws {
        let (verdict, _) = try Self.verdict([.sandbox])
        let authorized = try authorize(verdict, topic: nil).get()
        #expect(authorized.bundleIdentifier == "com.example.todo")
        #expect(authorized.teamID == "ABCDE12345")
        #expect(authorized.isFirst)
        #expect(try authorize(verdict, topic: "com.example.todo").get().bundleIdentifier == "com.example.todo")
    }

    @Test func aMultiTopicCertificateMustNameItsTopic() throws {
        let (verdict, _) = try Self.verdict([.sandbox, .production])
        #expect(reason(authorize(verdict, topic: nil)) == "MissingTopic")
        #expect(try authorize(verdict, topic: "com.example.todo.voip", pushType: .voip).get().bundleIdentifier == "com.example.todo")
        #expect(reason(authorize(verdict, topic: "com.example.other")) == "TopicDisallowed")
    }

    @Test func aCertificateOfTheOtherEnvironmentIsBadCertificateEnvironment() throws {
        let (verdict, _) = try Self.verdict([.production])
        #expect(reason(authorize(verdict, environment: .sandbox, topic: nil)) == "BadCertificateEnvironment")
        #expect(reason(authorize(verdict, environment: .production, topic: nil)) == nil)
    }

    @Test func anInvalidCertificateOrOneOfAnAppNoLongerRegisteredIsBadCertificate() throws {
        #expect(reason(authorize(.invalid("not ours"), topic: nil)) == "BadCertificate")
        let (verdict, _) = try Self.verdict([.sandbox])
        #expect(reason(authorize(verdict, topic: nil, credentials: ProviderCredentials())) == "BadCertificate")
    }

    @Test func aTokenCannotTakeOverACertificateConnection() throws {
        let (verdict, _) = try Self.verdict([.sandbox])
        var connection = ProviderConnectionAuthorization(environment: .sandbox, certificate: verdict)
        _ = connection.authorize(authorization: nil, topic: nil, pushType: .alert, now: Self.now, credentials: Self.credentials)
        let result = connection.authorize(authorization: "bearer x.y.z", topic: nil, pushType: .alert, now: Self.now, credentials: Self.credentials)
        #expect(reason(result) == "InvalidProviderToken")
    }

    // MARK: - With curl, over TLS

    /// Runs curl with a client certificate; returns its status line and body.
    func curl(_ endpoint: ProviderEndpoint, certificate: GatewayCertificateAuthority.Issued, headers: [String] = []) async throws -> (status: String, body: String) {
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("cert-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (ca, cert, key) = (folder.appendingPathComponent("ca.pem"), folder.appendingPathComponent("cert.pem"), folder.appendingPathComponent("key.pem"))
        try Data(endpoint.authorityPEM.utf8).write(to: ca)
        try Data(certificate.certificatePEM.utf8).write(to: cert)
        try Data(certificate.privateKeyPEM.utf8).write(to: key)
        let arguments = ["-sS", "-i", "--http2", "--cacert", ca.path, "--cert", cert.path, "--key", key.path]
            + headers.flatMap { ["-H", $0] }
            + ["-d", #"{"aps":{"alert":"Hello"}}"#, "\(endpoint.url)/3/device/\(ProviderServerTests.token)"]
        let text = try await Program.run("/usr/bin/curl", arguments).output
        let lines = text.split(separator: "\r\n", omittingEmptySubsequences: false)
        return (String(lines.first ?? ""), String(lines.last ?? ""))
    }

    @Test func curlWithAClientCertificateIsAnsweredAsAPNsAnswers() async throws {
        let acceptor = RecordingAcceptor()
        try await ProviderEndpoint.with(credentials: { Self.credentials }, acceptor: acceptor) { endpoint in
            let sandbox = try endpoint.authority.issueProviderCertificate(bundleIdentifier: "com.example.todo", teamID: "ABCDE12345", environments: [.sandbox])
            #expect(try await curl(endpoint, certificate: sandbox).status.hasPrefix("HTTP/2 200"))
            #expect(acceptor.accepted.withLock { $0.map(\.bundleIdentifier) } == ["com.example.todo"])

            let universal = try endpoint.authority.issueProviderCertificate(bundleIdentifier: "com.example.todo", teamID: "ABCDE12345",
                                                                            environments: [.sandbox, .production])
            let missing = try await curl(endpoint, certificate: universal)
            #expect(missing.status.hasPrefix("HTTP/2 400"))
            #expect(missing.body == #"{"reason":"MissingTopic"}"#)
            #expect(try await curl(endpoint, certificate: universal, headers: ["apns-topic: com.example.todo"]).status.hasPrefix("HTTP/2 200"))

            let production = try endpoint.authority.issueProviderCertificate(bundleIdentifier: "com.example.todo", teamID: "ABCDE12345", environments: [.production])
            let wrongEnvironment = try await curl(endpoint, certificate: production)
            #expect(wrongEnvironment.status.hasPrefix("HTTP/2 403"))
            #expect(wrongEnvironment.body == #"{"reason":"BadCertificateEnvironment"}"#)

            let stranger = try GatewayCertificateAuthority(name: "Someone else's CA")
                .issueProviderCertificate(bundleIdentifier: "com.example.todo", teamID: "ABCDE12345", environments: [.sandbox])
            let bad = try await curl(endpoint, certificate: stranger)
            #expect(bad.status.hasPrefix("HTTP/2 403"))
            #expect(bad.body == #"{"reason":"BadCertificate"}"#)
        }
    }
}
