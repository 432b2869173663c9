public import Foundation
import NotificationCore
import NotificationDaemonClient
public import OpenUserNotifications

/// Connects this process's `UNUserNotificationCenter` to the notification daemon (`unotify daemon`),
/// so that its notifications live in the system: they fire while the app is not running, survive
/// restarts, and what the person does reaches the delegate when the app next runs.
///
/// Call it once at launch, before setting the delegate:
///
/// ```swift
/// import OpenUserNotifications
/// import OpenUserNotificationsLink
///
/// try NotificationDaemonLink.bootstrapFromEnvironment()   // UNOTIFY_APP_ID and the app's key
/// UNUserNotificationCenter.current().delegate = handler
/// ```
///
/// Without a configuration, `current()` stays with the process's own in-process system.
public enum NotificationDaemonLink {
    /// Who the app is and where the daemon is.
    public struct Configuration: Sendable, Hashable {
        /// The app's bundle identifier, as registered with `unotify apps add`.
        public var bundleIdentifier: String
        /// The app's key, issued by `unotify apps add`.
        public var key: String
        /// The daemon's Unix socket.
        public var socketPath: String
        /// Whether the app starts in the foreground (its `willPresent` decides) or the background.
        public var startsInForeground: Bool
        /// Whether the app's device token is for the push gateway's production environment rather
        /// than its sandbox: what an iOS app's `aps-environment` entitlement says.
        public var usesProductionPushEnvironment: Bool

        public init(bundleIdentifier: String, key: String, socketPath: String, startsInForeground: Bool = true, usesProductionPushEnvironment: Bool = false) {
            self.bundleIdentifier = bundleIdentifier
            self.key = key
            self.socketPath = socketPath
            self.startsInForeground = startsInForeground
            self.usesProductionPushEnvironment = usesProductionPushEnvironment
        }
    }

    /// Why the configuration could not be read.
    public struct ConfigurationError: Error, CustomStringConvertible {
        public var description: String
    }

    /// The configuration the environment gives, or `nil` when `UNOTIFY_APP_ID` is not set.
    ///
    /// - `UNOTIFY_APP_ID`: the bundle identifier.
    /// - `UNOTIFY_APP_KEY`: the key; without it, the key file `unotify apps add` wrote
    ///   (`apps/<id>.key` in the daemon's data directory) is read.
    /// - The socket and data directory as the daemon finds them (`UNOTIFY_SOCKET`, `UNOTIFY_DATA_DIR`,
    ///   `XDG_RUNTIME_DIR`, `XDG_DATA_HOME`).
    /// - `UNOTIFY_APP_STATE=background` to start in the background.
    /// - `UNOTIFY_APS_ENVIRONMENT=production` for device tokens of the gateway's production
    ///   environment (`development`, the default, is its sandbox), as the `aps-environment` entitlement.
    public static func configurationFromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws -> Configuration? {
        guard let identifier = environment["UNOTIFY_APP_ID"], !identifier.isEmpty else { return nil }
        let location = DaemonLocation.fromEnvironment(environment)
        var key = environment["UNOTIFY_APP_KEY"] ?? ""
        if key.isEmpty {
            let path = location.appKeyPath(for: identifier)
            guard let stored = try? String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines), !stored.isEmpty else {
                throw ConfigurationError(description: "No key for \(identifier): set UNOTIFY_APP_KEY, or register the app with `unotify apps add \(identifier)` (which writes \(path)).")
            }
            key = stored
        }
        return Configuration(
            bundleIdentifier: identifier,
            key: key,
            socketPath: location.socketPath,
            startsInForeground: environment["UNOTIFY_APP_STATE"] != "background",
            usesProductionPushEnvironment: environment["UNOTIFY_APS_ENVIRONMENT"] == "production"
        )
    }

    /// Connects `current()` to the daemon, from now on, for the whole process (harnesses still bind their
    /// own centers in their tasks). Returns the connected center.
    @discardableResult
    public static func bootstrap(_ configuration: Configuration) -> UNUserNotificationCenter {
        let backend = DaemonBackend(
            client: LocalAPIClient(socketPath: configuration.socketPath, key: configuration.key),
            initialState: configuration.startsInForeground ? .foreground : .background,
            pushEnvironment: configuration.usesProductionPushEnvironment ? .production : .sandbox
        )
        let center = UNUserNotificationCenter(backend: backend)
        UNUserNotificationCenter.setProcessCenter(center)
        return center
    }

    /// Connects `current()` to the daemon if the environment configures it.
    ///
    /// - Returns: whether it did; `false` when `UNOTIFY_APP_ID` is not set.
    @discardableResult
    public static func bootstrapFromEnvironment() throws -> Bool {
        guard let configuration = try configurationFromEnvironment() else { return false }
        bootstrap(configuration)
        return true
    }

    /// Closes the link of `center` to the daemon: the daemon sees the app stop. Returns once it is closed.
    public static func close(_ center: UNUserNotificationCenter = .current()) async {
        await (center.backend as? DaemonBackend)?.close()
    }

    /// Returns once another process of the same app has connected to the daemon and taken over from
    /// this one (at once if that already happened).
    ///
    /// An app runs as one process, as on iOS: the newest process to connect receives the delegate
    /// calls, and the replaced one is told so and stops reconnecting. Its calls (adding requests, say)
    /// still reach the daemon. An app that should not run twice exits here:
    ///
    /// ```swift
    /// Task {
    ///     await NotificationDaemonLink.waitUntilReplaced()
    ///     exit(0)
    /// }
    /// ```
    public static func waitUntilReplaced(_ center: UNUserNotificationCenter = .current()) async {
        await (center.backend as? DaemonBackend)?.waitUntilReplaced()
    }

    /// Tells the daemon the app moved to the foreground or the background.
    public static func appDidChangeState(to center: UNUserNotificationCenter = .current(), foreground: Bool) {
        (center.backend as? DaemonBackend)?.setAppState(foreground ? .foreground : .background)
    }
}
