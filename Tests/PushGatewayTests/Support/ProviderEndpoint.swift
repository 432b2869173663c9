import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOSSL
import NotificationCore
import PushGateway

/// A provider API endpoint over TLS on loopback, with a certificate from a fresh authority, and an
/// HTTP/2 client that trusts that authority: what the provider-side tests stand on.
struct ProviderEndpoint {
    let server: ProviderServer
    let client: HTTPClient
    /// `https://localhost:<port>`.
    let url: String
    let port: Int
    /// The authority that issued the endpoint's certificate, in PEM.
    let authorityPEM: String
    /// That authority, which also issues the providers' client certificates the endpoint accepts.
    let authority: GatewayCertificateAuthority

    /// Starts an endpoint, runs `body` with it, and stops it, whether `body` throws or not.
    static func with(
        environment: APNs.Environment = .sandbox,
        credentials: @escaping @Sendable () -> ProviderCredentials,
        refreshCredentials: @escaping @Sendable (_ done: @escaping @Sendable () -> Void) -> Void = { $0() },
        acceptor: any PushAcceptor,
        channels: (any BroadcastChannels)? = nil,
        clock: @escaping @Sendable () -> Date = { Date() },
        emulation: ProviderEmulation? = nil,
        requestIdleTimeout: TimeAmount = .seconds(10),
        _ body: (ProviderEndpoint) async throws -> Void
    ) async throws {
        let authority = try GatewayCertificateAuthority(name: "Test gateway CA")
        let issued = try authority.issueServerCertificate(for: ["localhost", "127.0.0.1"])
        var configuration = ProviderServer.Configuration()
        configuration.port = 0
        configuration.environment = environment
        configuration.requestIdleTimeout = requestIdleTimeout
        configuration.tls = .init(certificateChainPEM: issued.certificatePEM, privateKeyPEM: issued.privateKeyPEM,
                                  clientAuthorityPEM: try authority.certificatePEM)
        let server = ProviderServer(configuration: configuration, credentials: credentials, refreshCredentials: refreshCredentials, acceptor: acceptor,
                                    channels: channels, clock: clock, emulation: emulation, logger: Logger(label: "test"))
        let address = try await server.start()
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates([try NIOSSLCertificate(bytes: Array(try authority.certificatePEM.utf8), format: .pem)])
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: HTTPClient.Configuration(tlsConfiguration: tls))
        let endpoint = ProviderEndpoint(server: server, client: client, url: "https://localhost:\(address.port ?? 0)", port: address.port ?? 0,
                                        authorityPEM: try authority.certificatePEM, authority: authority)
        do {
            try await body(endpoint)
        } catch {
            try? await client.shutdown()
            await server.stop()
            throw error
        }
        try await client.shutdown()
        await server.stop()
    }
}
