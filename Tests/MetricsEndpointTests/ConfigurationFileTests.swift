import Foundation
import Testing
import TestSupport

/// `unotify.toml`: the options of `serve`, `daemon` and `gateway` in a file, each key an option's long
/// name, flags winning over it, a mistake said with the file, the line and the key.
@Suite(.timeLimit(.minutes(2))) struct ConfigurationFileTests {
    let unotify = ChildProcess.built("unotify")

    /// Runs `unotify` to its end; its exit status and what it printed (standard error included).
    func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> (status: Int32?, output: String) {
        let command = try ChildProcess(unotify, arguments, environment: environment, name: "unotify \(arguments.prefix(2).joined(separator: " "))")
        let status = await command.waitUntilExit()
        return (status, await command.completeOutput().joined(separator: "\n"))
    }

    func write(_ text: String, to file: URL) throws {
        try Data(text.utf8).write(to: file)
    }

    @Test func theGatewayTakesItsOptionsFromTheFileAndAFlagWinsOverAKey() async throws {
        let folder = try makeTestDirectory()
        let file = folder.appendingPathComponent("unotify.toml")
        let gatewayDir = folder.appendingPathComponent("gateway").path
        try write("""
            # The host's gateway.
            [gateway]
            gateway-dir = "\(gatewayDir)"
            sandbox-port = 0         # any free port
            production-port = 0
            device-link-port = 0
            no-metrics = true
            cleartext = false
            host-name = ["push.example.test", 'push2.example.test']
            delivery-log-days = 400
            """, to: file)

        // A bad value: the file, its line and the key, in one line.
        let refused = try await run(["gateway", "--config", file.path])
        #expect(refused.status == 1)
        #expect(refused.output == "Error: \(file.path):10: delivery-log-days = 400: --delivery-log-days is between 0 and 366.", "\(refused.output)")

        // The flag wins over the key; every other key holds.
        let gateway = try ChildProcess(unotify, ["gateway", "serve", "--config", file.path, "--delivery-log-days", "7"], name: "unotify gateway serve")
        _ = try await gateway.gatewayPorts()
        // The server certificate it made names the hosts (its first PEM block, the DER's bytes).
        let pem = try String(contentsOfFile: gatewayDir + "/server.pem", encoding: .utf8)
        let base64 = pem.split(separator: "\n").drop { !$0.hasPrefix("-----BEGIN") }.dropFirst().prefix { !$0.hasPrefix("-----END") }.joined()
        let der = String(decoding: try #require(Data(base64Encoded: base64)), as: UTF8.self)
        #expect(der.contains("push.example.test") && der.contains("push2.example.test"))
        #expect(!gateway.lines.contains { $0.contains("metrics listening") })

        // The commands that manage the gateway find its folder in the same file ($UNOTIFY_CONFIG).
        let added = try await run(["gateway", "teams", "add", "ABCDE12345", "--name", "Example"], environment: ["UNOTIFY_CONFIG": file.path])
        #expect(added.status == 0 && added.output == "ABCDE12345", "\(added.output)")
        let listed = try await run(["gateway", "teams", "list", "--gateway-dir", gatewayDir])
        #expect(listed.output == "ABCDE12345  Example")
        #expect(await gateway.stop() == 0)
    }

    @Test func aMistakeInTheFileIsSaidWithItsLine() async throws {
        let folder = try makeTestDirectory()
        let file = folder.appendingPathComponent("unotify.toml")
        let cases: [(text: String, said: String)] = [
            ("[gateway]\nsandbox_port = 2197\n", "2: sandbox_port = 2197: Unknown option '--sandbox_port'. Did you mean '--sandbox-port'?"),
            ("[gateway]\nsandbox-port = \"many\"\n", "2: sandbox-port = \"many\": The value 'many' is invalid for '--sandbox-port <sandbox-port>'"),
            ("[gateway]\nclear-text = false\n", "2: clear-text = false: Unknown option '--clear-text'"),
            ("cleartext = true\n", "1: cleartext is not under a table: put it under [serve], [daemon] or [gateway]."),
            ("[gateways]\n", "1: [gateways] is not a table of unotify's: they are [serve], [daemon] and [gateway]."),
            ("[gateway]\nhost = 0.0.0.0\n", "2: host: 0.0.0.0 is not a value: a string is in quotes (\"…\"), or write a number, true or false."),
            ("[gateway]\nhost = \"0.0.0.0\n", "2: host: a string in \"…\" ends on its line."),
            ("[gateway]\nhost = \"::\"\nhost = \"::\"\n", "3: host is a second time in [gateway]."),
            ("[gateway]\nhost-name = [\"a\", [\"b\"]]\n", "2: host-name: an array holds strings, numbers or booleans, not arrays."),
            ("[gateway]\ncertificate = \"chain.pem\"\n", "2: certificate = \"chain.pem\": --certificate and --certificate-key go together"),
        ]
        for (text, said) in cases {
            try write(text, to: file)
            let refused = try await run(["gateway", "serve", "--config", file.path, "--gateway-dir", folder.appendingPathComponent("gateway").path])
            #expect(refused.status != 0 && refused.output.hasPrefix("Error: \(file.path):\(said)"), "\(text): \(refused.output)")
        }
        let missing = try await run(["daemon", "--config", folder.appendingPathComponent("none.toml").path])
        #expect(missing.status == 1 && missing.output == "Error: The configuration file \(folder.appendingPathComponent("none.toml").path) cannot be read.")
    }

    /// The daemon finds the file where a person keeps it ($XDG_CONFIG_HOME/unotify/unotify.toml) and
    /// reads its own table; `serve` reads `[serve]`.
    @Test func theDaemonAndServeReadTheirOwnTables() async throws {
        let folder = try makeTestDirectory()
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("config/unotify"), withIntermediateDirectories: true)
        let socket = folder.appendingPathComponent("from-the-file.sock").path
        try write("""
            [daemon]
            data-dir = "\(folder.appendingPathComponent("data").path)"
            socket = "\(socket)"
            no-metrics = true
            desktop-notifications = "off"

            [serve]
            data-dir = "\(folder.appendingPathComponent("served").path)"
            sandbox-port = 0
            production-port = 0
            device-link-port = 0
            metrics-port = 0
            web-port = 0
            desktop-notifications = "off"
            """, to: folder.appendingPathComponent("config/unotify/unotify.toml"))
        let environment = ["XDG_CONFIG_HOME": folder.appendingPathComponent("config").path, "UNOTIFY_CONFIG": "", "UNOTIFY_DATA_DIR": "", "UNOTIFY_SOCKET": ""]
        let daemon = try ChildProcess(unotify, ["daemon"], environment: environment, name: "unotify daemon")
        try await daemon.line(containing: "local API listening")
        #expect(FileManager.default.fileExists(atPath: socket))
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("data/admin.key").path))
        #expect(await daemon.stop() == 0)

        let serve = try ChildProcess(unotify, ["serve"], environment: environment, name: "unotify serve")
        try await serve.line(containing: "Notification center: http://127.0.0.1:")
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("served/gateway/endpoints.json").path))
        #expect(await serve.stop() == 0)
    }
}
