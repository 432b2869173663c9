import Foundation
import NotificationCore
@testable import NotificationDaemon
import Synchronization
import Testing

/// A real SQLite store that notes the apps of every batch it saves, and can hold saves back.
final class GatedStore: DaemonStore {
    let base: SQLiteDaemonStore
    private struct State {
        var batches: [[String]] = []
        var holding = false
        var held: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Mutex(State())

    init(path: String) throws { base = try SQLiteDaemonStore(path: path) }

    /// The apps of each batch saved so far, in order.
    var batches: [[String]] { state.withLock { $0.batches } }
    /// How many saves wait to be let through.
    var heldSaves: Int { state.withLock { $0.held.count } }

    /// Makes the following saves wait until ``release()``.
    func hold() { state.withLock { $0.holding = true } }

    func release() {
        let held = state.withLock { state in
            state.holding = false
            defer { state.held.removeAll() }
            return state.held
        }
        held.forEach { $0.resume() }
    }

    func save(_ saves: [AppSave], bootID: String) async throws(DaemonError) {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let wait = state.withLock { state in
                if state.holding { state.held.append(continuation) }
                return state.holding
            }
            if !wait { continuation.resume() }
        }
        state.withLock { $0.batches.append(saves.map(\.bundleIdentifier)) }
        try await base.save(saves, bootID: bootID)
    }

    func app(_ bundleIdentifier: String) async throws(DaemonError) -> StoredApp? { try await base.app(bundleIdentifier) }
    func insert(_ app: StoredApp) async throws(DaemonError) { try await base.insert(app) }
    func bundleIdentifier(forKeyHash keyHash: String) async throws(DaemonError) -> String? { try await base.bundleIdentifier(forKeyHash: keyHash) }
    func replaceKey(of bundleIdentifier: String, with keyHash: String) async throws(DaemonError) { try await base.replaceKey(of: bundleIdentifier, with: keyHash) }
    func delete(_ bundleIdentifier: String) async throws(DaemonError) { try await base.delete(bundleIdentifier) }
    func apps() async throws(DaemonError) -> [(bundleIdentifier: String, launchCommand: String?)] { try await base.apps() }
    func appsDue(by date: Date, limit: Int) async throws(DaemonError) -> [String] { try await base.appsDue(by: date, limit: limit) }
    func appsWatchingLocation() async throws(DaemonError) -> [String] { try await base.appsWatchingLocation() }
    func appsShowingNotifications() async throws(DaemonError) -> [String] { try await base.appsShowingNotifications() }
    func postponeWakeUp(of bundleIdentifier: String, to date: Date) async throws(DaemonError) { try await base.postponeWakeUp(of: bundleIdentifier, to: date) }
    func deviceState() async throws(DaemonError) -> DeviceState? { try await base.deviceState() }
    func saveDeviceState(_ state: DeviceState) async throws(DaemonError) { try await base.saveDeviceState(state) }
    func earliestWakeUp() async throws(DaemonError) -> Date? { try await base.earliestWakeUp() }
    func linkSequence() async throws(DaemonError) -> Int64 { try await base.linkSequence() }
    func saveLinkSequence(_ sequence: Int64) async throws(DaemonError) { try await base.saveLinkSequence(sequence) }
}

/// Waits, with a deadline, until `condition` holds.
private func eventually(_ what: String, _ condition: @escaping @Sendable () async throws -> Bool) async throws {
    try await withDeadline(what) {
        while try await !condition() { try await Task.sleep(for: .milliseconds(1)) }
    }
}

/// A notification that falls due while other apps' adds queue up is written ahead of them: it waits
/// for the batch being written and a small one of its own, not for every add queued meanwhile.
@Suite(.timeLimit(.minutes(1))) struct SchedulerPriorityTests {
    private func request(_ identifier: String, in seconds: TimeInterval) -> NotificationRequest {
        var content = NotificationContent()
        content.title = identifier
        return NotificationRequest(identifier: identifier, content: content, trigger: .timeInterval(seconds, repeats: false))
    }

    @Test func aDueNotificationIsSavedAheadOfTheAddsQueuedBeforeIt() async throws {
        let store = try GatedStore(path: makeTestDirectory().appendingPathComponent("db.sqlite").path)
        let clock = ManualDaemonClock()
        var configuration = DaemonEngine.Configuration()
        configuration.timeZone = TimeZone(identifier: "UTC")!
        let engine = await DaemonEngine(store: store, clock: clock, configuration: configuration, launcher: { _, _ in })
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
                if case .presented(let app, _) = event, app == "com.example.due" { return app }
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
        let restarted = await DaemonEngine(store: try SQLiteDaemonStore(path: store.base.path), clock: clock, configuration: configuration, launcher: { _, _ in })
        #expect(try await restarted.deliveredNotifications("com.example.due").map(\.request.identifier) == ["stand-up"])
        for app in busy { #expect(try await restarted.pendingRequests(app).map(\.request.identifier) == ["later"]) }
    }
}

