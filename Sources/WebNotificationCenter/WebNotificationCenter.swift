import ConnectionLifecycle
import Foundation
import Hummingbird
import HummingbirdWebSocket
package import Logging
import NotificationCore
import NotificationDaemon
import PrivateFiles
package import NotificationEngine
package import ServiceLifecycle

/// The web notification center: the page where a person sees every app's notifications and acts on
/// them, served over HTTP on loopback and kept live over a WebSocket.
///
/// It is a presenter like `unotify watch`: it reads the engine's events and what is on screen, and
/// answers through the engine's person actions, the same path every surface takes; it has no rules of
/// its own. Everything the page needs ships with it (no CDN, no build step).
///
/// **Security.** A secret (``WebCredential``, kept in the data directory so pairings outlive restarts) is
/// in the URL printed at start; opening that URL trades it for an HttpOnly, SameSite=Strict cookie, and
/// every other request needs the cookie. Replacing the secret signs every browser out, their open pages
/// included. The secret is never logged. The `Host` of every request must be the center's own address
/// (no DNS rebinding), and a request that changes anything, the WebSocket included, must come from the
/// center's own `Origin` (no cross-site actions). Every answer carries a strict Content-Security-Policy.
package struct WebNotificationCenter: Sendable {
    package struct Configuration: Sendable {
        /// The address to bind: loopback unless told otherwise.
        package var host = "127.0.0.1"
        /// The port; 0 picks a free one.
        package var port = WebNotificationCenter.defaultPort
        /// The most connections the center keeps; `nil`, its share of the process's open files
        /// (``ConnectionBudget``). One beyond it closes the oldest that sent no request yet.
        package var maximumConnections: Int?
        /// The secret the printed URL carries: kept in memory only (a new one at each start) unless given.
        package var credential = WebCredential()
        /// Where to write the center's address (without its secret) once it listens, for `unotify center link`.
        package var addressFile: String?

        package init() {}
    }

    package static let defaultPort = 2202

    /// The link that pairs a browser: the center's address with the secret.
    package static func link(address: String, secret: String) -> String {
        "\(address)?secret=\(secret)"
    }

    /// The service that serves the page.
    package let service: any Service

    /// Prepares the center over `engine`.
    ///
    /// - Parameter onListening: called with the URL to open (it holds the secret) once the center listens.
    package init(
        engine: DaemonEngine,
        configuration: Configuration,
        logger: Logger,
        onListening: @escaping @Sendable (_ url: String) -> Void = { _ in }
    ) {
        let access = WebAccess(credential: configuration.credential, boundHost: configuration.host)
        let router = WebRoutes.make(engine: engine, access: access, logger: logger)
        service = Application(
            router: router,
            server: .http1WebSocketUpgrade(webSocketRouter: router, lifecycle: ListenerLifecycle(
                capacity: configuration.maximumConnections ?? ConnectionBudget.now.capacity(of: .webCenter), deadlines: ListenerLifecycle.httpDeadlines,
                listener: "web notification center", logger: logger
            )),
            configuration: ApplicationConfiguration(address: .hostname(configuration.host, port: configuration.port), serverName: "unotify"),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? configuration.port
                access.setPort(port)
                let address = "http://\(WebAccess.urlHost(configuration.host)):\(port)/"
                if let file = configuration.addressFile {
                    // Replaced whole: `unotify center link` never reads half of it.
                    PrivateFiles.replaceFile(atPath: file, contents: Data((address + "\n").utf8))
                }
                // The log has the address only: logs are collected, and the secret is a credential.
                logger.info("web notification center listening", metadata: ["address": .string(address)])
                onListening(Self.link(address: address, secret: configuration.credential.secret))
            },
            logger: logger
        )
    }
}
