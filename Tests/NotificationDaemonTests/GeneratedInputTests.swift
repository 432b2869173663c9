import DaemonTestSupport
import Foundation
import NotificationCore
import NotificationDaemonClient
import Testing
import TestSupport

/// Random and hostile requests derived from the local API's spec, `Docs/local-api.openapi.json`, sent
/// by schemathesis to a live daemon as one app: every answer must be one the spec documents, with the
/// body it documents; whatever the spec calls invalid must be refused; whatever it calls valid must not
/// be refused as malformed (so the spec is exactly as strict as the server); the daemon must stay
/// responsive; and another app must be untouched.
@Suite(.timeLimit(.minutes(5))) struct GeneratedInputTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// How long schemathesis generates requests for, in seconds; `UNOTIFY_FUZZ_SECONDS` changes it.
    static var seconds: Int { Int(ProcessInfo.processInfo.environment["UNOTIFY_FUZZ_SECONDS"] ?? "") ?? 60 }

    /// The seed of the requests generated: a fixed one, so that a run's failure can be replayed; set
    /// `UNOTIFY_FUZZ_SEED` to another number to explore further, or to `random`.
    static var seedArguments: [String] {
        let seed = ProcessInfo.processInfo.environment["UNOTIFY_FUZZ_SEED"] ?? "20261122"
        return seed == "random" ? [] : ["--seed", seed]
    }

    @Test func generatedRequestsGetDocumentedAnswersAndHarmNoOtherApp() async throws {
        try await withDaemon(configure: { $0.tcpPort = 0 }) { daemon in
            let port = try #require(daemon.tcpPort)
            let fuzzed = try await daemon.authorizedApp("com.example.fuzzed")
            let bystander = try await daemon.authorizedApp("com.example.bystander")
            try await bystander.add("hourly", title: "Every hour", trigger: .timeInterval(3600, repeats: true))
            try await bystander.add("now", title: "Shown")
            try await bystander.call(.PUT, "/v1/categories", body: [NotificationCategory(identifier: "TODO", actions: [NotificationAction(identifier: "DONE", title: "Done")])])
            try await bystander.call(.PUT, "/v1/badge", body: LocalAPI.BadgeRequest(count: 3))
            let before = try await BystanderState(bystander)
            let badge = try await daemon.engine.badge("com.example.bystander")

            let schemathesis = try ChildProcess(URL(fileURLWithPath: "/usr/bin/env"), [
                "schemathesis", "--config-file", Self.repository.appendingPathComponent("Tests/GeneratedInput/schemathesis.toml").path,
                "run", Self.repository.appendingPathComponent("Docs/local-api.openapi.json").path,
                "--url", "http://127.0.0.1:\(port)",
                "-H", "Authorization: Bearer \(fuzzed.key)",
                // The app's routes: what any app can send. The administrator is the person, not a client to distrust.
                "--exclude-path-regex", "^/v1/admin",
                "--checks", "all",
                // Methods the spec does not list get 404 from the router rather than 405.
                "--exclude-checks", "unsupported_method",
                "--generation-codec", "utf-8",
                "--max-time", "\(Self.seconds)",
                // An answer within 30 s: the full suite on two cores has stalled one for over 10 s (a
                // lone NUL byte to PUT /v1/categories, answered 400 in 3 ms alone). A hang still fails.
                "--request-timeout", "30",
                "--no-color",
            ] + Self.seedArguments, environment: ["PYTHONIOENCODING": "utf-8"], in: try makeTestDirectory(), name: "schemathesis")
            let status = await schemathesis.waitUntilExit(within: Double(Self.seconds) + 120)
            #expect(status == 0, "schemathesis found answers the spec does not allow:\n\(schemathesis.lines.suffix(80).joined(separator: "\n"))")
            #expect(schemathesis.lines.contains { $0.contains("generated") }, "schemathesis ran")

            // The daemon still answers at once, and the other app is as it was.
            let health = try await daemon.admin.raw(.GET, "/v1/health", timeout: .seconds(2))
            #expect(health.status == 200)
            #expect(try await BystanderState(bystander) == before)
            #expect(try await daemon.engine.badge("com.example.bystander") == badge)
        }
    }
}

/// Everything an app can read of its own state.
struct BystanderState: Equatable {
    var pending: [LocalAPI.PendingRequest]
    var delivered: [DeliveredNotification]
    var categories: [NotificationCategory]
    var settings: NotificationSettings

    init(_ app: LocalAPIClient) async throws {
        pending = try await app.pending()
        delivered = try await app.delivered()
        categories = try await app.call(.GET, "/v1/categories", as: [NotificationCategory].self)
        settings = try await app.call(.GET, "/v1/settings", as: NotificationSettings.self)
    }
}
