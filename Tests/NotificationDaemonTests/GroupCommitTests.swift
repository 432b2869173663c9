import DaemonTestSupport
import Foundation
import NotificationCore
@testable import NotificationDaemon
@testable import NotificationEngine
import Testing
import TestSupport

/// Concurrent steps share one save (a group commit), written by one of their callers.
@Suite(.timeLimit(.minutes(1))) struct GroupCommitTests {
    func request(_ identifier: String) -> NotificationRequest {
        var content = NotificationContent()
        content.title = identifier
        return NotificationRequest(identifier: identifier, content: content, trigger: .timeInterval(3600, repeats: false))
    }

    /// The caller that writes a batch being cancelled (a stopping service's task, a client gone) fails
    /// neither its own step nor the others' in the batch: each is saved and answered.
    @Test func aCancelledCallerThatWritesTheBatchFailsNobodysStep() async throws {
        let store = try InstrumentedStore(path: makeTestDirectory().appendingPathComponent("db.sqlite").path)
        var configuration = DaemonEngine.Configuration()
        configuration.timeZone = TimeZone(identifier: "UTC")!
        let engine = await DaemonEngine(store: store, clock: ManualDaemonClock(), configuration: configuration, launcher: { _ in })
        for app in ["com.example.first", "com.example.a", "com.example.b"] {
            _ = try await engine.registerApp(app)
            _ = try await engine.authorize(app, .grant)
        }
        // A save under way, held: the next two steps queue theirs behind it, for one batch.
        store.hold()
        let first = Task { try await engine.add("com.example.first", request("first")) }
        try await eventually("the first save") { store.heldSaves == 1 }
        let a = Task { try await engine.add("com.example.a", request("a")) }
        try await eventually("a's step") { await engine.queuedSaveCount == 1 }
        let b = Task { try await engine.add("com.example.b", request("b")) }
        try await eventually("b's step") { await engine.queuedSaveCount == 2 }
        // `a` waited first: it writes the batch of both once the first save is done.
        a.cancel()
        store.release()
        try await first.value
        try await a.value
        try await b.value
        #expect(store.batches.suffix(1) == [["com.example.a", "com.example.b"]])
        #expect(try await engine.pendingRequests("com.example.a").map(\.request.identifier) == ["a"])
        #expect(try await engine.pendingRequests("com.example.b").map(\.request.identifier) == ["b"])
        #expect(try await store.base.app("com.example.b")?.machine.pendingRequests.map(\.request.identifier) == ["b"])
    }
}
