package import Foundation
import PrivateFiles
import ServiceLifecycle
import Synchronization

/// Where a running gateway listens, written to `endpoints.json` in its folder (readable only by its
/// user) once its three listeners are up, and removed when it stops: every `unotify` command finds
/// the gateway of `serve` or `gateway serve` there, whatever ports they were given.
package struct GatewayEndpoints: Codable, Sendable, Hashable {
    /// The process that wrote it: a file left by one that was killed names a process that is gone.
    package var pid: Int32
    /// The provider API's sandbox endpoint, such as `https://localhost:2197`.
    package var sandbox: String
    package var production: String
    /// Where devices link, such as `wss://localhost:2199`.
    package var deviceLink: String
    /// The address the endpoints are reached at from this machine, when their host is a name it may
    /// not resolve to the gateway (that of a certificate given to it, such as `push.example.com`):
    /// a client connects there and checks the certificate against the name.
    package var address: String?
    /// Whether the gateway serves a certificate given to it (checked against the system's roots),
    /// rather than one from its own authority (`ca.pem`).
    package var givenCertificate: Bool?

    package init(pid: Int32, sandbox: String, production: String, deviceLink: String, address: String? = nil, givenCertificate: Bool = false) {
        self.pid = pid
        self.sandbox = sandbox
        self.production = production
        self.deviceLink = deviceLink
        self.address = address
        self.givenCertificate = givenCertificate
    }

    package static func path(in directory: URL) -> URL { directory.appendingPathComponent("endpoints.json") }

    /// The endpoints of the gateway running with its folder at `directory`: nil when none runs (no
    /// file, or one whose process is gone).
    package static func running(in directory: URL) -> GatewayEndpoints? {
        guard let data = FileManager.default.contents(atPath: path(in: directory).path),
              let endpoints = try? JSONDecoder().decode(GatewayEndpoints.self, from: data),
              kill(endpoints.pid, 0) == 0 || errno == EPERM
        else { return nil }
        return endpoints
    }
}

/// Writes the gateway's `endpoints.json` once each of its listeners said where it listens, and
/// removes it when the gateway stops.
final class EndpointsFile: Service, Sendable {
    private let directory: URL
    private let scheme: (http: String, webSocket: String)
    /// The host the endpoints name, and where to reach it when that is not the name.
    private let host: (name: String, address: String?)
    private let givenCertificate: Bool
    private let ports = Mutex<(sandbox: Int?, production: Int?, deviceLink: Int?)>((nil, nil, nil))

    /// - Parameters:
    ///   - listening: the address the listeners bind.
    ///   - served: the certificate given to the gateway, if one was: its name is the endpoints'.
    init(directory: URL, cleartext: Bool, listening: String, served: ServedCertificate?) {
        self.directory = directory
        scheme = cleartext ? ("http", "ws") : ("https", "wss")
        let address = ["0.0.0.0", "::", ""].contains(listening) ? "127.0.0.1" : listening
        let name = served?.localName ?? (["127.0.0.1", "::1"].contains(address) ? "localhost" : address)
        host = (name.contains(":") ? "[\(name)]" : name, name == address || name == "localhost" ? nil : address)
        givenCertificate = served != nil
    }

    func listening(sandbox: Int? = nil, production: Int? = nil, deviceLink: Int? = nil) {
        let all = ports.withLock { ports -> (Int, Int, Int)? in
            ports.sandbox = sandbox ?? ports.sandbox
            ports.production = production ?? ports.production
            ports.deviceLink = deviceLink ?? ports.deviceLink
            guard let sandbox = ports.sandbox, let production = ports.production, let deviceLink = ports.deviceLink else { return nil }
            return (sandbox, production, deviceLink)
        }
        guard let (sandbox, production, deviceLink) = all else { return }
        let endpoints = GatewayEndpoints(pid: getpid(), sandbox: "\(scheme.http)://\(host.name):\(sandbox)", production: "\(scheme.http)://\(host.name):\(production)",
                                         deviceLink: "\(scheme.webSocket)://\(host.name):\(deviceLink)", address: host.address, givenCertificate: givenCertificate)
        guard let data = try? JSONEncoder().encode(endpoints) else { return }
        // Replaced whole (0600): a reader sees a whole file or none.
        PrivateFiles.replaceFile(atPath: GatewayEndpoints.path(in: directory).path, contents: data)
    }

    func run() async throws {
        try? await gracefulShutdown()
        try? FileManager.default.removeItem(at: GatewayEndpoints.path(in: directory))
    }
}
