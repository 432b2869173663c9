import Foundation
import Testing

/// `unotify serve` with a provider set up as the README's push quick start does it: the app registered
/// and allowed, a team owning it at the gateway, a key and its JWT.
package struct ServedSystem {
    /// The environment the README's commands run in: one data directory and socket for all of them.
    package static func environment(_ directory: URL) -> [String: String] {
        ["UNOTIFY_DATA_DIR": directory.path, "UNOTIFY_SOCKET": directory.appendingPathComponent("unotify.sock").path]
    }

    /// Starts `unotify serve` as the README does, on ports the system picks, so that a test never meets
    /// a `unotify serve` running on the machine; returns once its local API listens.
    package static func serve(_ directory: URL, arguments: [String] = []) async throws -> ChildProcess {
        let serve = try ChildProcess(ChildProcess.built("unotify"), ["serve", "--sandbox-port", "0", "--production-port", "0", "--device-link-port", "0",
                                                                     "--metrics-port", "0", "--web-port", "0"] + arguments,
                                     environment: environment(directory), name: "unotify serve")
        try await serve.line(containing: "local API listening")
        return serve
    }

    package let directory: URL
    package let environment: [String: String]
    package let unotify: URL
    package let serve: ChildProcess
    /// The sandbox endpoint's port.
    package let port: String
    package let keyID: String
    package let jwt: String

    /// Runs `unotify` (in a folder, or the current one) and returns what it printed.
    package var run: @Sendable ([String], URL?) async throws -> String {
        let (unotify, environment) = (self.unotify, self.environment)
        return { arguments, folder in
            let command = try ChildProcess(unotify, arguments, environment: environment, in: folder, name: "unotify \(arguments.prefix(3).joined(separator: " "))")
            #expect(await command.waitUntilExit() == 0, "unotify \(arguments.joined(separator: " ")): \(command.lines)")
            return await command.completeOutput().joined(separator: "\n")
        }
    }

    /// - Parameters:
    ///   - launchCommand: the app's launch command, given the test's folder.
    ///   - serveArguments: more arguments for `unotify serve`, given the test's folder.
    package static func start(app: String, launchCommand: ((URL) -> String)? = nil,
                              serveArguments: (URL) throws -> [String] = { _ in [] }) async throws -> ServedSystem {
        let directory = try makeTestDirectory()
        let environment = environment(directory)
        let unotify = ChildProcess.built("unotify")
        let serve = try await serve(directory, arguments: try serveArguments(directory))
        let sandbox = try await serve.line(containing: "environment=sandbox")
        let port = try #require(sandbox.firstMatch(of: /127\.0\.0\.1:(\d+) environment=sandbox/).map { String($0.1) })
        try await serve.line(containing: "linked to the push gateway")
        var system = ServedSystem(directory: directory, environment: environment, unotify: unotify, serve: serve, port: port, keyID: "", jwt: "")
        let run = system.run
        _ = try await run(["apps", "add", app] + (launchCommand.map { ["--launch-command", $0(directory)] } ?? []), nil)
        _ = try await run(["authorize", "--app", app, "grant"], nil)
        _ = try await run(["gateway", "teams", "add", "ABCDE12345", "--name", "Example"], nil)
        _ = try await run(["gateway", "apps", "add", app, "--team", "ABCDE12345"], nil)
        // The key's identifier on standard output; standard error says where its .p8 went.
        let keyID = try await run(["gateway", "keys", "create", "--team", "ABCDE12345"], directory)
            .split(separator: "\n").first { !$0.hasPrefix("Key ") }.map(String.init) ?? ""
        let jwt = try await run(["gateway", "token", "--key", directory.appendingPathComponent("AuthKey_\(keyID).p8").path, "--key-id", keyID,
                                 "--team", "ABCDE12345"], nil)
        system = ServedSystem(directory: directory, environment: environment, unotify: unotify, serve: serve, port: port, keyID: keyID, jwt: jwt)
        return system
    }
}
