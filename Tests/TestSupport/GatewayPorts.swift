import Foundation

extension ChildProcess {
    /// The ports a `unotify gateway` process listens on, read from its log.
    ///
    /// A gateway started with port 0 binds ports the system chooses. A port found free beforehand (bind
    /// to 0, close, pass the number on) may be taken by another test's process before the gateway binds
    /// it: that made a test fail with "Address already in use".
    package func gatewayPorts(within seconds: Double = 30) async throws -> (sandbox: Int, production: Int, links: Int) {
        let sandbox = try await line(containing: "environment=sandbox", within: seconds)
        let production = try await line(containing: "environment=production", within: seconds)
        let links = try await line(containing: "device links listening", within: seconds)
        guard let sandboxPort = Self.port(before: " environment=sandbox", in: sandbox),
              let productionPort = Self.port(before: " environment=production", in: production),
              let linksPort = Self.port(after: "port=", in: links) else {
            throw GatewayPortsNotLogged(lines: [sandbox, production, links])
        }
        return (sandboxPort, productionPort, linksPort)
    }

    /// The number just before `suffix`, as in `address=[IPv4]127.0.0.1/127.0.0.1:8443 environment=…`.
    private static func port(before suffix: String, in line: String) -> Int? {
        guard let end = line.range(of: suffix) else { return nil }
        return Int(String(line[..<end.lowerBound].reversed().prefix(while: \.isNumber).reversed()))
    }

    /// The number just after `prefix`, as in `port=8443`.
    private static func port(after prefix: String, in line: String) -> Int? {
        guard let start = line.range(of: prefix) else { return nil }
        return Int(String(line[start.upperBound...].prefix(while: \.isNumber)))
    }
}

package struct GatewayPortsNotLogged: Error, CustomStringConvertible {
    package var lines: [String]

    package init(lines: [String]) {
        self.lines = lines
    }

    package var description: String { "the gateway's log names no port: \(lines)" }
}
