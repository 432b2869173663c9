import Foundation
import Testing
import TestSupport

/// What `unotify gateway …` changes beside the running gateway holds before the command returns: a
/// push sent right after it meets the change, with the real `unotify serve` and curl.
@Suite(.timeLimit(.minutes(2))) struct ChangesAtOnceTests {
    /// Sends a push with curl to the served system's sandbox endpoint; the status line and body.
    func push(_ system: ServedSystem, topic: String, token: String, jwt: String) async throws -> String {
        let curl = try ChildProcess(URL(fileURLWithPath: "/usr/bin/curl"), [
            "-sS", "-i", "--http2", "--cacert", system.directory.appendingPathComponent("gateway/ca.pem").path,
            "-H", "apns-topic: \(topic)", "-H", "apns-push-type: alert", "-H", "authorization: bearer \(jwt)",
            "-d", #"{"aps":{"alert":"Right after"}}"#, "https://localhost:\(system.port)/3/device/\(token)",
        ], name: "curl")
        #expect(await curl.waitUntilExit() == 0)
        return await curl.completeOutput().joined(separator: "\n")
    }

    @Test func anAppAddedOrAKeyRemovedHoldsForTheNextPush() async throws {
        let system = try await ServedSystem.start(app: "com.example.todo")
        let run = system.run
        _ = try await run(["apps", "add", "com.example.notes"], nil)
        _ = try await run(["authorize", "--app", "com.example.notes", "grant"], nil)
        let token = try await run(["apps", "token", "com.example.notes"], nil)
        // Before the gateway knows the app, its team's key may not push to it.
        #expect(try await push(system, topic: "com.example.notes", token: token, jwt: system.jwt).contains("TopicDisallowed"))

        _ = try await run(["gateway", "apps", "add", "com.example.notes", "--team", "ABCDE12345"], nil)
        let added = try await push(system, topic: "com.example.notes", token: token, jwt: system.jwt)
        #expect(added.hasPrefix("HTTP/2 200"), "\(added)")

        _ = try await run(["gateway", "keys", "remove", system.keyID], nil)
        let revoked = try await push(system, topic: "com.example.notes", token: token, jwt: system.jwt)
        #expect(revoked.hasPrefix("HTTP/2 403"), "\(revoked)")
        #expect(revoked.contains("InvalidProviderToken"), "\(revoked)")
        await system.serve.stop()
    }
}
