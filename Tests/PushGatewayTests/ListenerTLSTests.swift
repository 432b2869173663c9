import NIOSSL
@testable import PushGateway
import Testing

/// The TLS of the gateway's listeners (the provider API's ports and the device links'), SwiftNIO
/// SSL's: what each is started with is checked at start, and nothing older than TLS 1.2 is taken.
@Suite struct ListenerTLSTests {
    @Test func aKeyThatIsNotTheCertificatesIsRefusedAtStart() throws {
        let authority = try GatewayCertificateAuthority(name: "Listener TLS test CA")
        let issued = try authority.issueServerCertificate(for: ["localhost"])
        let other = try authority.issueServerCertificate(for: ["localhost"])
        let mismatched = ProviderServer.Configuration.TLS(certificateChainPEM: issued.certificatePEM, privateKeyPEM: other.privateKeyPEM)
        #expect(throws: ProviderServerError.self) { try mismatched.serverConfiguration(for: "device links' listener") }
        let unreadable = ProviderServer.Configuration.TLS(certificateChainPEM: "not PEM", privateKeyPEM: issued.privateKeyPEM)
        #expect(throws: ProviderServerError.self) { try unreadable.serverConfiguration(for: "device links' listener") }

        let matching = ProviderServer.Configuration.TLS(certificateChainPEM: issued.certificatePEM, privateKeyPEM: issued.privateKeyPEM)
        let configuration = try matching.serverConfiguration(for: "device links' listener")
        #expect(configuration.minimumTLSVersion == .tlsv12)
        _ = try NIOSSLContext(configuration: configuration)
    }
}
