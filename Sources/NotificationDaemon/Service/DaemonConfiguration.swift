package import Foundation
package import NotificationCore
package import NotificationEngine

/// Where the daemon keeps its files and where it listens.
package struct DaemonConfiguration: Sendable {
    /// The folder of the database, the administrator's key and the app keys. Created (mode 0700) if
    /// missing. Default: `$UNOTIFY_DATA_DIR`, else `$XDG_DATA_HOME/unotify`, else `~/.local/share/unotify`.
    package var dataDirectory: URL
    /// The Unix domain socket of the local API (mode 0600). Default: `$UNOTIFY_SOCKET`, else
    /// `$XDG_RUNTIME_DIR/unotify.sock`, else `unotify.sock` in the data directory.
    package var socketPath: String
    /// Also serve the local API over TCP on this port (`nil`: not at all).
    package var tcpPort: Int?
    /// The address the TCP listener binds; loopback unless told otherwise.
    package var tcpHost: String = "127.0.0.1"
    /// The most connections each listener of the local API keeps; `nil`, the local API's share of the
    /// process's open files (``ConnectionBudget``), halved between its listeners when it has two. One beyond it closes the oldest that sent no request yet, or,
    /// with every one in use, is closed.
    package var maximumConnections: Int?
    /// The engine's rules and limits.
    package var engine = DaemonEngine.Configuration()
    /// Whether the stored apps are read into memory after a start, while the cache has room
    /// (``DaemonEngine/warmCache()``); otherwise each is read when first used.
    package var warmsCache = true
    /// The push gateway to link to (`Docs/device-link.md`); nil: none, and apps cannot register for
    /// remote notifications.
    package var gateway: DeviceLinkClient.Configuration?

    package init(dataDirectory: URL, socketPath: String? = nil, tcpPort: Int? = nil) {
        self.dataDirectory = dataDirectory
        self.socketPath = socketPath ?? dataDirectory.appendingPathComponent("unotify.sock").path
        self.tcpPort = tcpPort
        engine.firesAhead = DaemonEngine.Configuration.defaultFiresAhead
    }

    /// The configuration the environment describes, with the defaults above.
    package static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> DaemonConfiguration {
        let location = DaemonLocation.fromEnvironment(environment)
        return DaemonConfiguration(dataDirectory: location.dataDirectory, socketPath: location.socketPath)
    }

    /// Where the daemon is, as its clients find it.
    package var location: DaemonLocation { DaemonLocation(dataDirectory: dataDirectory, socketPath: socketPath) }

    /// The SQLite database.
    package var databasePath: String { dataDirectory.appendingPathComponent("unotify.sqlite").path }
    /// The administrator's key, readable only by the daemon's user.
    package var adminKeyPath: String { location.adminKeyPath }
    /// Where `unotify apps add` writes an app's key.
    package func appKeyPath(for bundleIdentifier: String) -> String { location.appKeyPath(for: bundleIdentifier) }
}
