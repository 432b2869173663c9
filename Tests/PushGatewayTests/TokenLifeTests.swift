import Foundation
import Testing
import TestSupport

/// A token's whole life as a provider's backend sees it, with the real `unotify serve` (its daemon
/// linked to its gateway) and aioapns, an APNs client library from PyPI: the backend's "delete the
/// token on 410" flow.
@Suite(.timeLimit(.minutes(2))) struct TokenLifeTests {
    /// Pushes with aioapns to the served system's sandbox endpoint, as its provider (the README's key);
    /// each result's `status`, `reason` and `timestamp`.
    func aioapns(_ system: ServedSystem, _ pushes: [(token: String, payload: String)]) async throws -> [[String: String]] {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Clients/aioapns_send.py")
        let run = try await Program.run("/usr/bin/env", [
            "python3", script.path, "--host", "localhost", "--port", system.port,
            "--ca", system.directory.appendingPathComponent("gateway/ca.pem").path,
            "--key-file", system.directory.appendingPathComponent("AuthKey_\(system.keyID).p8").path, "--key-id", system.keyID,
            "--team", "ABCDE12345", "--topic", "com.example.todo",
        ] + pushes.flatMap { ["--push", "\($0.token)=\($0.payload)"] })
        #expect(run.succeeded, "\(run.errors)")
        return run.output.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?.compactMapValues { $0 is NSNull ? nil : "\($0)" }
        }
    }

    @Test func anAppRemovedFromTheDeviceHasItsTokenAnswered410AndAReinstalledOneGetsANewToken() async throws {
        let system = try await ServedSystem.start(app: "com.example.todo")
        let run = system.run
        let first = try await run(["apps", "token", "com.example.todo"], nil)
        #expect(try await aioapns(system, [(first, #"{"aps":{"alert":"Installed"}}"#)]).map { $0["status"] } == ["200"])

        // The person removes the app: the device tells the gateway before the command returns.
        let removedAfter = Int64(Date().timeIntervalSince1970 * 1000)
        _ = try await run(["apps", "remove", "com.example.todo"], nil)
        let removedBefore = Int64(Date().timeIntervalSince1970 * 1000)
        let gone = try await aioapns(system, [(first, #"{"aps":{"alert":"After removal"}}"#)])
        #expect(gone.first?["status"] == "410")
        #expect(gone.first?["reason"] == "Unregistered")
        // The timestamp is when the gateway learnt it, in milliseconds, as APNs gives it.
        let timestamp = try #require(gone.first?["timestamp"].flatMap { Int64($0) })
        #expect(timestamp >= removedAfter - 1 && timestamp <= removedBefore + 1, "\(timestamp) not in \(removedAfter)...\(removedBefore)")

        // `unotify push status` tells the token's life.
        let life = try await run(["push", "status", first], nil)
        #expect(life.contains("com.example.todo (sandbox)"), "\(life)")
        #expect(life.contains("unregistered: pushes to it are answered 410 Unregistered"), "\(life)")

        // Installed again, the app gets a new token; the old one stays 410, the new one delivers.
        _ = try await run(["apps", "add", "com.example.todo"], nil)
        _ = try await run(["authorize", "--app", "com.example.todo", "grant"], nil)
        let second = try await run(["apps", "token", "com.example.todo"], nil)
        #expect(second.count == 64 && second != first)
        let results = try await aioapns(system, [(first, #"{"aps":{"alert":"Old"}}"#), (second, #"{"aps":{"alert":"New"}}"#)])
        #expect(results.map { $0["status"] } == ["410", "200"])
        #expect(results.first?["timestamp"].flatMap { Int64($0) } == timestamp)
        await system.serve.stop()
    }
}
