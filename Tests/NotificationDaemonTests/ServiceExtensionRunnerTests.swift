import Foundation
import Logging
import NotificationCore
@testable import NotificationDaemon
@testable import NotificationEngine
import Testing
#if canImport(Glibc)
import Glibc
import TestSupport
#endif

/// Extensions run on threads of their own, from their start to their end.
@Suite(.timeLimit(.minutes(1))) struct ServiceExtensionRunnerTests {
    /// The caller of `start` is the engine's actor, which every app's steps wait for: it gets back at
    /// once, even when the extension's start has to wait for its file to be free.
    @Test func startingAnExtensionDoesNotHoldItsCaller() async throws {
        let folder = try makeTestDirectory()
        let path = folder.appendingPathComponent("extension.sh").path
        // Still open for writing: its start fails with ETXTBSY, and is tried again until it is closed.
        let writer = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o755)
        let script = #"""
            #!/bin/sh
            read request
            echo '{"type":"content","content":{"title":"prepared"}}'

            """#
        _ = script.withCString { write(writer, $0, strlen($0)) }
        let runner = ServiceExtensionRunner(logger: Logger(label: "test"))
        let (ended, continuation) = AsyncStream.makeStream(of: ServiceExtensionResult.self)
        var content = NotificationContent()
        content.title = "as sent"
        runner.start(.init(app: "com.example.app", ticket: 1), registration: ServiceExtensionRegistration(executable: path),
                     request: NotificationRequest(identifier: "push", content: content, trigger: nil), folder: folder, caches: folder) {
            continuation.yield($0)
        }
        // Back at once, with the run under way: its start waits for the writer.
        #expect(runner.counts.running == 1)
        close(writer)

        var results = ended.makeAsyncIterator()
        let result = await results.next()
        guard case .content(let prepared)? = result else {
            Issue.record("the extension ended with \(String(describing: result))")
            return
        }
        #expect(prepared.title == "prepared")
    }
}
