import AsyncHTTPClient
import Foundation
import NIOCore
import NIOSSL
import Testing
import TestSupport

/// Every listener of the real `unotify serve` held to its connections' lifecycle: what an oversized
/// header gets, and what a flood of idle and half-open connections does to the others (nothing).
@Suite(.timeLimit(.minutes(3))) struct ConnectionLimitsTests {
    /// `unotify serve` with every port picked free, and `ulimit -n` set first when asked.
    static func serve(_ directory: URL, openFiles: Int? = nil) async throws -> ChildProcess {
        let unotify = ChildProcess.built("unotify").path
        let arguments = ["serve", "--sandbox-port", "0", "--production-port", "0", "--device-link-port", "0", "--metrics-port", "0", "--web-port", "0"]
        let serve: ChildProcess
        if let openFiles {
            // Soft and hard: the process cannot raise it, so its listeners must share what it has.
            serve = try ChildProcess(URL(fileURLWithPath: "/bin/sh"), ["-c", "ulimit -n \(openFiles) && exec \"$0\" \"$@\"", unotify] + arguments,
                                     environment: ServedSystem.environment(directory), name: "unotify serve")
        } else {
            serve = try ChildProcess(URL(fileURLWithPath: unotify), arguments, environment: ServedSystem.environment(directory), name: "unotify serve")
        }
        try await serve.line(containing: "local API listening")
        return serve
    }

    static func port(in line: String, after marker: String) -> Int? {
        guard let start = line.range(of: marker) else { return nil }
        return Int(String(line[start.upperBound...].prefix(while: \.isNumber)))
    }

    /// curl with a header of `size` bytes; the status it got (0: no answer within 10 s).
    static func status(_ arguments: [String], headerOf size: Int, in directory: URL) async throws -> Int {
        let header = directory.appendingPathComponent("header-\(size).txt")
        try Data(("x-big: " + String(repeating: "a", count: size) + "\n").utf8).write(to: header)
        let run = try await Program.run("/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "10", "-H", "@\(header.path)"] + arguments)
        return Int(run.output) ?? 0
    }

    @Test func anOversizedHeaderIsAnswered431OnEveryListener() async throws {
        let directory = try makeTestDirectory()
        let serve = try await Self.serve(directory)
        defer { Task { await serve.stop() } }
        let ports = try await serve.gatewayPorts()
        let web = try #require(Self.port(in: try await serve.line(containing: "web notification center listening"), after: "127.0.0.1:"))
        let metrics = try #require(Self.port(in: try await serve.line(containing: "metrics listening"), after: "127.0.0.1:"))
        let socket = directory.appendingPathComponent("unotify.sock").path
        let ca = directory.appendingPathComponent("gateway/ca.pem").path
        let answers = [
            ("the local API", try await Self.status(["--unix-socket", socket, "http://localhost/v1/health"], headerOf: 200_000, in: directory)),
            ("the web center", try await Self.status(["http://127.0.0.1:\(web)/"], headerOf: 200_000, in: directory)),
            ("the metrics", try await Self.status(["http://127.0.0.1:\(metrics)/metrics"], headerOf: 200_000, in: directory)),
            ("the device links", try await Self.status(["--cacert", ca, "https://localhost:\(ports.links)/v1/device-link"], headerOf: 200_000, in: directory)),
            // HTTP/2: past the 8,000 bytes the provider API announces.
            ("the provider API", try await Self.status(["--http2", "--cacert", ca, "-d", "{}", "https://localhost:\(ports.sandbox)/3/device/00"],
                                                       headerOf: 9_000, in: directory)),
        ]
        for (listener, status) in answers { #expect(status == 431, "\(listener)") }
        // Every listener goes on.
        #expect(try await Self.status(["--unix-socket", socket, "http://localhost/v1/health"], headerOf: 10, in: directory) == 200)
    }

    /// 2,000 connections to the provider port that say nothing, or half of HTTP/2's opening, at the
    /// open-files limit most systems start a process with: the provider's own connection, a new one,
    /// and the local API's health check are answered all the same; the strangers are closed within
    /// their deadlines, and the process does not spin.
    @Test func aFloodOfIdleConnectionsStarvesNoOneAndIsClosedOnTime() async throws {
        let directory = try makeTestDirectory()
        let environment = ServedSystem.environment(directory)
        let serve = try await Self.serve(directory, openFiles: 1024)
        defer { Task { await serve.stop() } }
        let ports = try await serve.gatewayPorts()
        func run(_ arguments: [String]) async throws -> String {
            let command = try ChildProcess(ChildProcess.built("unotify"), arguments, environment: environment, in: directory, name: "unotify \(arguments.prefix(2).joined(separator: " "))")
            #expect(await command.waitUntilExit() == 0, "unotify \(arguments.joined(separator: " ")): \(command.lines)")
            return await command.completeOutput().last ?? ""
        }
        _ = try await run(["apps", "add", "com.example.todo"])
        _ = try await run(["authorize", "--app", "com.example.todo", "grant"])
        _ = try await run(["gateway", "teams", "add", "ABCDE12345", "--name", "Example"])
        _ = try await run(["gateway", "apps", "add", "com.example.todo", "--team", "ABCDE12345"])
        let keyID = try await run(["gateway", "keys", "create", "--team", "ABCDE12345"])
        let jwt = try await run(["gateway", "token", "--key", directory.appendingPathComponent("AuthKey_\(keyID).p8").path, "--key-id", keyID, "--team", "ABCDE12345"])
        let token = try await run(["apps", "token", "com.example.todo"])

        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(directory.appendingPathComponent("gateway/ca.pem").path))
        func push(_ client: HTTPClient, _ title: String) async throws -> Int {
            var request = HTTPClientRequest(url: "https://localhost:\(ports.sandbox)/3/device/\(token)")
            request.method = .POST
            request.headers.add(name: "authorization", value: "bearer \(jwt)")
            request.headers.add(name: "apns-topic", value: "com.example.todo")
            request.body = .bytes(ByteBuffer(string: #"{"aps":{"alert":"\#(title)"}}"#))
            return Int(try await client.execute(request, timeout: .seconds(10)).status.code)
        }
        // The provider's connection, open before the flood, as a provider keeps it.
        let provider = HTTPClient(eventLoopGroupProvider: .singleton, configuration: HTTPClient.Configuration(tlsConfiguration: tls))
        defer { _ = provider.shutdown() as EventLoopFuture<Void> }
        #expect(try await push(provider, "before") == 200)

        // From a process of its own, as a hostile client would.
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Clients/idle_flood.py")
        let flood = try ChildProcess(URL(fileURLWithPath: "/usr/bin/env"), ["python3", script.path, "--port", "\(ports.sandbox)", "--count", "2000",
                                                                           "--cafile", directory.appendingPathComponent("gateway/ca.pem").path],
                                     name: "idle flood")
        let opened = try await flood.line(containing: "opened", within: 120)
        #expect(opened == "opened 2000", "\(flood.lines)")
        let cpuBefore = try Self.cpuSeconds(of: serve.pid)
        let floodStarted = ContinuousClock.now

        #expect(try await push(provider, "during") == 200, "the provider's connection is served")
        let newcomer = HTTPClient(eventLoopGroupProvider: .singleton, configuration: HTTPClient.Configuration(tlsConfiguration: tls))
        defer { _ = newcomer.shutdown() as EventLoopFuture<Void> }
        #expect(try await push(newcomer, "new") == 200, "a new provider connection takes the place of a stranger's")
        let health = try await Program.run("/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "10", "--unix-socket",
                                                             environment["UNOTIFY_SOCKET"]!, "http://localhost/v1/health"])
        #expect(health.output == "200", "the local API's health check is answered")

        // The handshake's 10 s, then the opening's 10 s: every stranger is closed within them.
        #expect(await flood.waitUntilExit(within: 60) == 0, "\(flood.lines)")
        let elapsed = ContinuousClock.now - floodStarted
        let cpu = try Self.cpuSeconds(of: serve.pid) - cpuBefore
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        #expect(cpu < seconds / 2, "the process did not spin: \(cpu) s of CPU in \(seconds) s")
        #expect(try await push(provider, "after") == 200)
    }

    /// The CPU the process has used, user and system, in seconds.
    static func cpuSeconds(of pid: Int32) throws -> Double {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        // After the command's name in parentheses: utime and stime are fields 14 and 15.
        let fields = stat[stat.index(after: stat.lastIndex(of: ")")!)...].split(separator: " ")
        let ticks = (Double(fields[11]) ?? 0) + (Double(fields[12]) ?? 0)
        return ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}

