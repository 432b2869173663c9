import Foundation
import Testing
import TestSupport

/// The metrics of the real `unotify serve`, scraped over HTTP as Prometheus scrapes them, after pushes
/// that went each way: shown as they came, through the app's service extension, refused.
@Suite(.timeLimit(.minutes(2))) struct MetricsEndpointTests {
    @Test func aScrapeTellsWhatBecameOfThePushes() async throws {
        let system = try await ServedSystem.start(app: "com.example.todo")
        let (directory, environment, serve, port, jwt, run) = (system.directory, system.environment, system.serve, system.port, system.jwt, system.run)
        let listening = try await serve.line(containing: "metrics listening")
        // On loopback, as every server of ours unless told otherwise.
        let metrics = try #require(listening.firstMatch(of: /address=(http:\/\/127\.0\.0\.1:\d+\/metrics)/).map { String($0.1) })
        let token = try await run(["apps", "token", "com.example.todo"], nil)
        _ = try await run(["apps", "extension", "com.example.todo", ChildProcess.built("ServiceExtensionFixture").path], nil)
        let watch = try ChildProcess(system.unotify, ["watch"], environment: environment, name: "unotify watch")
        try await watch.line(containing: "Watching")

        func curl(_ headers: [String], _ payload: String) async throws -> String {
            let curl = try ChildProcess(URL(fileURLWithPath: "/usr/bin/curl"), [
                "-sS", "-i", "--http2", "--cacert", directory.appendingPathComponent("gateway/ca.pem").path,
                "-H", "apns-topic: com.example.todo", "-H", "authorization: bearer \(jwt)",
            ] + headers.flatMap { ["-H", $0] } + ["-d", payload, "https://localhost:\(port)/3/device/\(token)"], name: "curl")
            #expect(await curl.waitUntilExit() == 0)
            return await curl.completeOutput().first ?? ""
        }
        #expect(try await curl(["apns-push-type: alert"], #"{"aps":{"alert":{"title":"Plain","body":"as it came"}}}"#).hasPrefix("HTTP/2 200"))
        try await watch.line(containing: "Plain — as it came")
        #expect(try await curl(["apns-push-type: alert"], #"{"aps":{"alert":{"title":"Mutable","body":"rewritten"},"mutable-content":1},"behaviour":"append"}"#)
            .hasPrefix("HTTP/2 200"))
        try await watch.line(containing: "Mutable (prepared) — rewritten (prepared)")
        // Priority 7 does not exist: refused, and counted by its reason.
        #expect(try await curl(["apns-push-type: alert", "apns-priority: 7"], #"{"aps":{"alert":"Never"}}"#).hasPrefix("HTTP/2 400"))

        // The device acknowledges a push after the person sees it: scraped again until it has.
        let scraped = try await Self.scrape(metrics) { $0["unotify_gateway_push_delivery_seconds_count"] == 2 && $0["unotify_gateway_pushes_in_flight"] == 0 }
        let expected: [String: Double] = [
            #"unotify_gateway_pushes_accepted_total{environment="sandbox",push_type="alert"}"#: 2,
            #"unotify_gateway_pushes_accepted_total{environment="production",push_type="alert"}"#: 0,
            #"unotify_gateway_pushes_rejected_total{environment="sandbox",status="400",reason="BadPriority"}"#: 1,
            "unotify_gateway_pushes_sent_total": 2,
            "unotify_gateway_device_links": 1,
            #"unotify_gateway_pushes_stored{state="queued"}"#: 0,
            #"unotify_gateway_pushes_stored{state="held"}"#: 0,
            "unotify_daemon_gateway_linked": 1,
            "unotify_daemon_pushes_received_total": 2,
            #"unotify_daemon_service_extension_runs_total{outcome="prepared"}"#: 1,
            #"unotify_daemon_service_extension_runs_total{outcome="failed"}"#: 0,
            #"unotify_daemon_notifications_presented_total{source="push",shown="banner"}"#: 2,
            #"unotify_daemon_push_latency_seconds_count{path="direct"}"#: 1,
            #"unotify_daemon_push_latency_seconds_count{path="service_extension"}"#: 1,
            #"unotify_daemon_push_latency_seconds_count{path="background"}"#: 0,
            #"unotify_daemon_service_extensions{state="running"}"#: 0,
        ]
        for (series, value) in expected {
            #expect(scraped[series] == value, "\(series)")
        }
        // A push through an extension takes longer than a process start; every latency is under the budget.
        let extensionSeconds = try #require(scraped[#"unotify_daemon_push_latency_seconds_sum{path="service_extension"}"#])
        #expect(extensionSeconds > 0 && extensionSeconds < 30)
        #expect(scraped[#"unotify_daemon_push_latency_seconds_bucket{path="direct",le="+Inf"}"#] == 1)

        await watch.stop()
        await serve.stop()
    }

    /// `--metrics-port` asked for a port another process holds: the server says so and stops, rather
    /// than run without the metrics it was asked for.
    @Test func aMetricsPortThatIsTakenStopsTheServer() async throws {
        let directory = try makeTestDirectory()
        let holder = try ChildProcess(URL(fileURLWithPath: "/usr/bin/python3"), ["-c", """
            import socket, sys
            s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(); print(s.getsockname()[1], flush=True); sys.stdin.read()
            """], name: "port holder")
        let taken = try await holder.line(within: 30, "a port") { Int($0) != nil }
        let gateway = try ChildProcess(ChildProcess.built("unotify"), [
            "gateway", "serve", "--gateway-dir", directory.appendingPathComponent("gateway").path,
            "--sandbox-port", "0", "--production-port", "0", "--device-link-port", "0", "--metrics-port", taken,
        ], name: "unotify gateway serve")
        #expect(await gateway.waitUntilExit() != 0)
        try await gateway.line(containing: "Address already in use")
        try holder.endInput()
        _ = await holder.waitUntilExit()
    }

    /// Every series of one exposition and its value, scraped until `done` holds (or the deadline).
    static func scrape(_ url: String, within seconds: Double = 30, until done: ([String: Double]) -> Bool) async throws -> [String: Double] {
        let deadline = Date().addingTimeInterval(seconds)
        var series: [String: Double] = [:]
        repeat {
            let curl = try ChildProcess(URL(fileURLWithPath: "/usr/bin/curl"), ["-sS", "-i", url], name: "curl metrics")
            #expect(await curl.waitUntilExit() == 0)
            // The head's lines end in CRLF, the exposition's in LF.
            let output = await curl.completeOutput().joined(separator: "\n")
            let parts = output.components(separatedBy: "\r\n\r\n")
            let head = parts[0].components(separatedBy: "\r\n")
            #expect(head.first?.hasPrefix("HTTP/1.1 200") == true, "\(head)")
            #expect(head.contains { $0.lowercased() == "content-type: text/plain; version=0.0.4; charset=utf-8" }, "\(head)")
            series = [:]
            for line in parts.dropFirst().joined().split(separator: "\n") where !line.hasPrefix("#") {
                guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
                series[String(line[..<space])] = value
            }
            if done(series) { return series }
        } while Date() < deadline
        return series
    }
}
