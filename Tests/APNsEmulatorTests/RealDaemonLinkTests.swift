import Foundation
import Testing
import TestSupport

/// A real daemon links to the emulator as to a gateway (`unotify emulator devices enroll`, then
/// `unotify daemon --gateway …`): its app's token gets a provider's push, and the emulator's faults
/// and clock apply to it as to a simulated device's.
@Suite(.timeLimit(.minutes(2))) struct RealDaemonLinkTests {
    @Test func aDaemonLinkedToTheEmulatorShowsAProvidersPushToThePerson() async throws {
        let unotify = ChildProcess.built("unotify")
        let folder = try makeTestDirectory()
        let endpoints = folder.appendingPathComponent("emulator.json")
        let emulator = try ChildProcess(unotify, ["emulator", "run", "--topic", "com.example.todo=0", "--endpoints-file", endpoints.path], name: "emulator")
        try await waitFor("the emulator's endpoints file", within: 30) { FileManager.default.fileExists(atPath: endpoints.path) }
        let document = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: endpoints)) as? [String: Any])
        let string = { (key: String) in document[key] as? String ?? "" }
        let located = ["UNOTIFY_EMULATOR": endpoints.path]

        @Sendable func run(_ arguments: [String], _ environment: [String: String]) async throws -> String {
            let command = try ChildProcess(unotify, arguments, environment: environment, name: "unotify \(arguments.prefix(3).joined(separator: " "))")
            #expect(await command.waitUntilExit() == 0, "unotify \(arguments.joined(separator: " ")): \(command.lines)")
            return await command.completeOutput().joined(separator: "\n")
        }

        // The credential on standard output; standard error says how to link with it.
        let enrolled = try await run(["emulator", "devices", "enroll"], located)
        let credential = try #require(enrolled.split(separator: "\n").first { $0.wholeMatch(of: /[0-9a-f]+\.[0-9a-f]{64}/) != nil }.map(String.init), "\(enrolled)")
        let credentialFile = folder.appendingPathComponent("credential")
        try Data(credential.utf8).write(to: credentialFile)
        let daemonEnvironment = ServedSystem.environment(folder.appendingPathComponent("daemon"))
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("daemon"), withIntermediateDirectories: true)
        let daemon = try ChildProcess(unotify, [
            "daemon", "--gateway", string("deviceLink"), "--gateway-credential", credentialFile.path, "--gateway-ca", string("caFile"),
        ], environment: daemonEnvironment, name: "unotify daemon")
        try await daemon.line(containing: "linked to the push gateway")
        _ = try await run(["apps", "add", "com.example.todo"], daemonEnvironment)
        _ = try await run(["authorize", "--app", "com.example.todo", "grant"], daemonEnvironment)
        let token = try await run(["apps", "token", "com.example.todo"], daemonEnvironment).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(token.count == 64, "\(token)")

        let jwt = try await run(["gateway", "token", "--key", string("keyFile"), "--key-id", string("keyID"), "--team", string("teamID")], [:])
            .trimmingCharacters(in: .whitespacesAndNewlines)
        func push(_ alert: String) async throws -> String {
            try await Program.run("/usr/bin/curl", [
                "-s", "--http2", "--cacert", string("caFile"), "-o", "/dev/null", "-w", "%{http_code}",
                "-H", "authorization: bearer \(jwt)", "-H", "apns-topic: com.example.todo", "-d", #"{"aps":{"alert":"\#(alert)"}}"#,
                "\(string("sandbox"))/3/device/\(token)",
            ]).output
        }
        // The emulator's faults apply to the real device's token too.
        _ = try await run(["emulator", "fault", "add", "status", "--reason", "TooManyRequests", "--token", token, "--requests", "1"], located)
        #expect(try await push("Too soon") == "429")
        #expect(try await push("Dinner is ready") == "200")
        try await waitFor("the push to be shown", within: 30) {
            (try? await run(["delivered", "--app", "com.example.todo", "--json"], daemonEnvironment))?.contains("Dinner is ready") == true
        }
        await daemon.stop()
        await emulator.stop()
    }
}
