import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import HummingbirdWebSocket
package import Logging
import NIOSSL
import NotificationCore
package import ServiceLifecycle

/// The listener devices link to (`wss://…:2199/v1/device-link`): a WebSocket over TLS, on a port of
/// its own (the provider API's port speaks HTTP/2 only).
package enum DeviceLinkServer {
    /// The service that accepts device links for `links`.
    ///
    /// - Parameters:
    ///   - tls: the server's certificate chain and key; nil listens in cleartext (`ws://`).
    ///   - onListening: called with the port once it listens.
    package static func service(
        links: DeviceLinks,
        host: String,
        port: Int,
        tls: ProviderServer.Configuration.TLS?,
        logger: Logger,
        onListening: @escaping @Sendable (Int) -> Void = { _ in }
    ) throws -> any Service {
        let router = Router(context: BasicWebSocketRequestContext.self)
        router.ws(RouterPath(DeviceLink.path)) { request, _ in
            guard let credential = request.headers[.authorization].flatMap(bearer), let _ = await links.authenticate(credential) else {
                throw HTTPError(.unauthorized, message: "A device link needs `Authorization: Bearer <device id>.<secret>`, from `unotify gateway devices add`.")
            }
            return .upgrade([:])
        } onUpgrade: { inbound, outbound, context in
            // Checked again here: the upgrade's decision cannot hand the device over.
            guard let credential = context.request.headers[.authorization].flatMap(bearer), let deviceID = await links.authenticate(credential) else { return }
            await links.run(deviceID: deviceID, inbound: inbound, outbound: outbound)
        }
        let server: HTTPServerBuilder
        if let tls {
            let configuration = TLSConfiguration.makeServerConfiguration(
                certificateChain: try NIOSSLCertificate.fromPEMBytes(Array(tls.certificateChainPEM.utf8)).map { .certificate($0) },
                privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(tls.privateKeyPEM.utf8), format: .pem))
            )
            server = try .tls(.http1WebSocketUpgrade(webSocketRouter: router, configuration: .init(ws: .init(autoPing: .enabled(timePeriod: .seconds(20))))),
                              tlsConfiguration: configuration)
        } else {
            server = .http1WebSocketUpgrade(webSocketRouter: router, configuration: .init(ws: .init(autoPing: .enabled(timePeriod: .seconds(20)))))
        }
        return Application(
            router: router,
            server: server,
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "unotify-gateway"),
            onServerRunning: { channel in
                let bound = channel.localAddress?.port ?? port
                logger.info("device links listening", metadata: ["port": .stringConvertible(bound), "tls": .stringConvertible(tls != nil)])
                onListening(bound)
            },
            logger: logger
        )
    }

    private static func bearer(_ header: String) -> String? {
        guard header.count > 7, header.prefix(7).lowercased() == "bearer " else { return nil }
        return String(header.dropFirst(7))
    }
}
