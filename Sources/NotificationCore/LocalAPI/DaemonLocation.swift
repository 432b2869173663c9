package import Foundation

/// Where the daemon keeps its files and listens, as the daemon, `unotify` and apps all find it.
package struct DaemonLocation: Sendable, Hashable {
    /// The data directory: `$UNOTIFY_DATA_DIR`, else `$XDG_DATA_HOME/unotify`, else `~/.local/share/unotify`.
    package var dataDirectory: URL
    /// The Unix socket: `$UNOTIFY_SOCKET`, else `$XDG_RUNTIME_DIR/unotify.sock`, else `unotify.sock` in the
    /// data directory.
    package var socketPath: String

    package init(dataDirectory: URL, socketPath: String? = nil) {
        self.dataDirectory = dataDirectory
        self.socketPath = socketPath ?? dataDirectory.appendingPathComponent("unotify.sock").path
    }

    /// The location the environment describes.
    package static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> DaemonLocation {
        let dataDirectory: URL
        if let explicit = environment["UNOTIFY_DATA_DIR"], !explicit.isEmpty {
            dataDirectory = URL(fileURLWithPath: explicit, isDirectory: true)
        } else if let xdg = environment["XDG_DATA_HOME"], !xdg.isEmpty {
            dataDirectory = URL(fileURLWithPath: xdg, isDirectory: true).appendingPathComponent("unotify", isDirectory: true)
        } else {
            let home = environment["HOME"] ?? FileManager.default.homeDirectoryForCurrentUser.path
            dataDirectory = URL(fileURLWithPath: home, isDirectory: true).appendingPathComponent(".local/share/unotify", isDirectory: true)
        }
        var socket = environment["UNOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
        if socket == nil, let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
            socket = URL(fileURLWithPath: runtime, isDirectory: true).appendingPathComponent("unotify.sock").path
        }
        return DaemonLocation(dataDirectory: dataDirectory, socketPath: socket)
    }

    /// The administrator's key file.
    package var adminKeyPath: String { dataDirectory.appendingPathComponent("admin.key").path }

    /// The web notification center's credential: the secret a browser is paired with (``WebCredential``).
    package var centerKeyPath: String { dataDirectory.appendingPathComponent("center.key").path }

    /// Where the web notification center writes its address (without the secret) once it listens.
    package var centerAddressPath: String { dataDirectory.appendingPathComponent("center.address").path }

    /// Where `unotify apps add` writes an app's key.
    package func appKeyPath(for bundleIdentifier: String) -> String {
        dataDirectory.appendingPathComponent("apps/\(bundleIdentifier).key").path
    }
}
