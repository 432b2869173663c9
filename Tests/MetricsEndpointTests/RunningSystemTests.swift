import Foundation
import Testing
import TestSupport

/// What a machine that runs `unotify serve` relies on: its health and readiness on the metrics port,
/// where it wrote its endpoints, `unotify push` finding its gateway without being told, and a
/// failure at run time said in one line.
@Suite(.timeLimit(.minutes(2))) struct RunningSystemTests {
    /// The status line and body of `GET url`.
    func get(_ url: String) async throws -> (status: String, body: String) {
        let curl = try ChildProcess(URL(fileURLWithPath: "/usr/bin/curl"), ["-sS", "-i", url], name: "curl")
        #expect(await curl.waitUntilExit() == 0)
        let parts = await curl.completeOutput().joined(separator: "\n").components(separatedBy: "\r\n\r\n")
        return (parts[0].components(separatedBy: "\r\n").first ?? "", parts.dropFirst().joined())
    }

    @Test func aServedSystemIsReadyAndFoundWithoutPortsAndAGoneOneIsSaidInOneLine() async throws {
        let system = try await ServedSystem.start(app: "com.example.todo")
        let listening = try await system.serve.line(containing: "metrics listening")
        let metrics = try #require(listening.firstMatch(of: /address=(http:\/\/127\.0\.0\.1:\d+)\/metrics/).map { String($0.1) })
        let health = try await get(metrics + "/healthz")
        #expect(health.status.hasPrefix("HTTP/1.1 200") && health.body == "ok")
        let ready = try await get(metrics + "/readyz")
        #expect(ready.status.hasPrefix("HTTP/1.1 200"), "\(ready)")
        #expect(ready.body == "ready")

        // The gateway says where it listens, to its user alone.
        let file = system.directory.appendingPathComponent("gateway/endpoints.json")
        let endpoints = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any])
        #expect(endpoints["sandbox"] as? String == "https://localhost:\(system.port)")
        #expect((try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? NSNumber)?.intValue == 0o600)

        // `unotify push` to a token finds the running gateway's sandbox endpoint (its port is not 2197).
        let token = try await system.run(["apps", "token", "com.example.todo"], nil)
        let pushArguments = ["push", "--token", token, "--key", system.directory.appendingPathComponent("AuthKey_\(system.keyID).p8").path,
                             "--key-id", system.keyID, "--team", "ABCDE12345", "com.example.todo", "--payload", #"{"aps":{"alert":"Found"}}"#]
        let sent = try await system.run(pushArguments, nil)
        #expect(sent.hasPrefix("200 apns-id "), "\(sent)")

        await system.serve.stop()
        #expect(!FileManager.default.fileExists(atPath: file.path), "removed when the gateway stops")
        // Nothing answers now: one line says so and what to do, without the command's usage.
        let failed = try ChildProcess(system.unotify, pushArguments, environment: system.environment, name: "unotify push (gone)")
        #expect(await failed.waitUntilExit() == 1)
        let output = await failed.completeOutput()
        #expect(output.count == 1, "\(output)")
        #expect(output.first?.hasPrefix("Error: No gateway answered at https://localhost:2197") == true, "\(output)")
        #expect(output.first?.contains("--gateway") == true)
    }
}

/// The systemd units under `deploy/systemd`, and the readiness they wait for.
@Suite(.timeLimit(.minutes(2))) struct ServiceUnitTests {
    /// Each unit passes `systemd-analyze verify` with nothing to say (it warns of a line it ignores
    /// and still exits 0), its `ExecStart` pointed at the built `unotify`.
    @Test(arguments: ["unotify-serve.service", "unotify-daemon.service", "unotify-gateway.service"])
    func theUnitPassesSystemdAnalyzeVerify(unit: String) async throws {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("deploy/systemd/\(unit)")
        let text = try String(contentsOf: source, encoding: .utf8)
        #expect(text.contains("Type=notify") && text.contains("Restart=on-failure") && text.contains("KillSignal=SIGTERM"))
        let folder = try makeTestDirectory()
        let checked = folder.appendingPathComponent(unit)
        try text.replacingOccurrences(of: "/usr/local/bin/unotify", with: ChildProcess.built("unotify").path).write(to: checked, atomically: true, encoding: .utf8)
        let verify = try await Program.run("/usr/bin/env", ["systemd-analyze", "verify", checked.path], mergingErrors: true)
        #expect(verify.succeeded, "\(verify.output)")
        #expect(verify.output.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "\(verify.output)")
    }

    /// Started by a service manager (`NOTIFY_SOCKET`), the gateway says `READY=1` once its listeners are up.
    @Test func theGatewayTellsTheServiceManagerWhenItIsReady() async throws {
        let folder = try makeTestDirectory()
        let socket = folder.appendingPathComponent("notify.sock").path
        let manager = try ChildProcess(URL(fileURLWithPath: "/usr/bin/python3"), ["-c", """
            import socket, sys
            s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind(sys.argv[1]); print("bound", flush=True)
            print(s.recv(4096).decode(), flush=True)
            """, socket], name: "service manager")
        try await manager.line(containing: "bound")
        let gateway = try ChildProcess(ChildProcess.built("unotify"), [
            "gateway", "serve", "--gateway-dir", folder.appendingPathComponent("gateway").path,
            "--sandbox-port", "0", "--production-port", "0", "--device-link-port", "0", "--metrics-port", "0",
        ], environment: ["NOTIFY_SOCKET": socket], name: "unotify gateway serve")
        try await manager.line(containing: "READY=1")
        // Ready means listening: the endpoints it wrote answer at once.
        let gatewayFolder = folder.appendingPathComponent("gateway")
        let endpoints = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: gatewayFolder.appendingPathComponent("endpoints.json"))) as? [String: Any])
        for key in ["sandbox", "production"] {
            let url = try #require(endpoints[key] as? String)
            let curl = try await Program.run("/usr/bin/curl", ["-sS", "--http2", "-o", "/dev/null", "-w", "%{http_code}", "--cacert",
                                                               gatewayFolder.appendingPathComponent("ca.pem").path, "-X", "POST", url + "/3/device/ab"])
            #expect(curl.succeeded && curl.output == "403", "\(key): \(curl.output) \(curl.errors)")
        }
        #expect(await gateway.stop() == 0)
        _ = await manager.stop()
    }
}
