import DaemonTestSupport
import Foundation
import NotificationCore
@testable import NotificationDaemon
@testable import NotificationEngine
import Testing
import TestSupport

/// A notification that falls due while other apps' adds queue up is written ahead of them: it waits
/// for the batch being written and a small one of its own, not for every add queued meanwhile.
@Suite(.timeLimit(.minutes(1))) struct SchedulerPriorityTests {
    private func request(_ identifier: String, in seconds: TimeInterval) -> NotificationRequest {
        var content = NotificationContent()
        content.title = identifier
        return NotificationRequest(identifier: identifier, content: content, trigger: .timeInterval(seconds, repeats: false))
    }

    @Test func aDueNotificationIsSavedAheadOfTheAddsQueuedBeforeIt() async throws {
        let store = try InstrumentedStore(path: makeTestDirectory().appendingPathComponent("db.sqlite").path)
        let clock = ManualDaemonClock()
        var configuration = DaemonEngine.Configuration()
        configuration.timeZone = TimeZone(identifier: "UTC")!
        let engine = await DaemonEngine(store: store, clock: clock, configuration: configuration, launcher: { _ in })
        let busy = (0..<6).map { "com.example.busy\($0)" }
        for app in ["com.example.due"] + busy {
            _ = try await engine.registerApp(app)
            _ = try await engine.authorize(app, .grant)
        }
        try await engine.add("com.example.due", request("stand-up", in: 10))
        let events = await engine.watch().events

        // One add's batch is being written (held), and the other apps' adds queue behind it.
        let earlierBatches = store.batches.count
        store.hold()
        let adds = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for app in busy { group.addTask { try await engine.add(app, self.request("later", in: 3600)) } }
                try await group.waitForAll()
            }
        }
        try await eventually("a batch being written") { store.heldSaves == 1 }
        try await eventually("the other adds queued") { await engine.queuedSaveApps.count == busy.count - 1 }

        // The reminder falls due; its step queues behind them.
        clock.advance(by: 10)
        let round = Task { await engine.processDue() }
        try await eventually("the due step queued") { await engine.queuedSaveApps.last == "com.example.due" }
        store.release()

        let shown = try await withDeadline("the notification shown") { () -> String? in
            for await event in events {
                if case .app(let app, .presented(_)) = event, app == "com.example.due" { return app }
            }
            return nil
        }
        #expect(shown == "com.example.due")
        _ = await round.value
        try await adds.value
        let batches = Array(store.batches.dropFirst(earlierBatches))
        let held = try #require(batches.first)
        #expect(held.count == 1 && held[0].hasPrefix("com.example.busy"), "the batch being written: \(batches)")
        #expect(batches.dropFirst().first == ["com.example.due"], "the due step's batch, alone and next: \(batches)")
        #expect(Set(batches.dropFirst(2).joined()) == Set(busy).subtracting(held), "then the other adds: \(batches)")
        // Everything is saved: a new engine on the store finds it all.
        let restarted = await DaemonEngine(store: try SQLiteDaemonStore(path: store.base.path), clock: clock, configuration: configuration, launcher: { _ in })
        #expect(try await restarted.deliveredNotifications("com.example.due").map(\.request.identifier) == ["stand-up"])
        for app in busy { #expect(try await restarted.pendingRequests(app).map(\.request.identifier) == ["later"]) }
    }
}

