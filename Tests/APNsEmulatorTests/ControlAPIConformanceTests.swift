import Foundation
import Testing
import TestSupport

/// The control API answers exactly as its spec (`Docs/emulator.openapi.json`) says, found by
/// schemathesis against the real `unotify emulator`: every answer one the spec documents, with its
/// body; whatever the spec calls invalid refused; whatever it calls valid not refused as malformed;
/// and the emulator still serves its providers afterwards.
@Suite(.timeLimit(.minutes(4))) struct ControlAPIConformanceTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let spec = repository.appendingPathComponent("Docs/emulator.openapi.json")

    /// How long schemathesis generates requests for, in seconds; `UNOTIFY_FUZZ_SECONDS` changes it.
    static var seconds: Int { Int(ProcessInfo.processInfo.environment["UNOTIFY_FUZZ_SECONDS"] ?? "") ?? 40 }

    @Test func theSpecIsAValidOpenAPIDocument() async throws {
        let run = try await Program.run("/usr/bin/env", ["python3", "-c", "import json, sys; from openapi_spec_validator import validate; validate(json.load(open(sys.argv[1])))", Self.spec.path])
        #expect(run.succeeded, "openapi-spec-validator: \(run.errors)")
    }

    /// A body too large to read, one that is not JSON, one of the wrong shape: each refused with its
    /// code and a message that says what to send.
    @Test(arguments: [
        (String(repeating: "x", count: 70_000), 413, "tooLarge"),
        ("not json", 400, "invalidRequest"),
        (#"{"action":"status","requests":"three"}"#, 400, "invalidRequest"),
        (#"{"action":"status","reason":"Unregistered","topic":null}"#, 400, "invalidRequest"),
        (#"{"action":"delay","delay":"10m"}"#, 422, "refused"),
    ])
    func aRequestTheAPIDoesNotTakeIsRefusedWithItsCode(body: String, status: Int, code: String) async throws {
        try await LocalEmulator.with(devices: 1) { local in
            let answer = try await local.control(.POST, "/v1/faults", body)
            #expect(answer.status == status)
            let error = try #require(answer.json["error"] as? [String: Any])
            #expect(error["code"] as? String == code)
            #expect((error["message"] as? String)?.isEmpty == false)
            #expect(local.emulator.faults.isEmpty, "nothing was scripted")
        }
    }

    @Test func generatedRequestsGetDocumentedAnswers() async throws {
        let emulator = try await RunningEmulator.start(topics: ["com.example.app=2"])
        let seed = ProcessInfo.processInfo.environment["UNOTIFY_FUZZ_SEED"] ?? "20261129"
        let schemathesis = try ChildProcess(URL(fileURLWithPath: "/usr/bin/env"), [
            "schemathesis", "--config-file", Self.repository.appendingPathComponent("Tests/GeneratedInput/emulator-schemathesis.toml").path,
            "run", Self.spec.path, "--url", emulator.control,
            "--checks", "all",
            // Methods the spec does not list get 404 from the router rather than 405.
            "--exclude-checks", "unsupported_method",
            "--generation-codec", "utf-8",
            "--max-time", "\(Self.seconds)",
            "--request-timeout", "30",
            "--no-color",
        ] + (seed == "random" ? [] : ["--seed", seed]), environment: ["PYTHONIOENCODING": "utf-8"], in: try makeTestDirectory(), name: "schemathesis")
        let status = await schemathesis.waitUntilExit(within: Double(Self.seconds) + 120)
        #expect(status == 0, "schemathesis found answers the spec does not allow:\n\(schemathesis.lines.suffix(80).joined(separator: "\n"))")
        #expect(schemathesis.lines.contains { $0.contains("generated") }, "schemathesis ran")

        // The emulator still answers at once.
        let clock = try await emulator.call(.GET, "/v1/clock")
        #expect(clock["now"] is String)
        await emulator.stop()
    }
}
