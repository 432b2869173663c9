import DaemonTestSupport
import Foundation
import NotificationCore
@testable import NotificationDaemon
@testable import NotificationEngine
import Synchronization
import Testing
import TestSupport

/// A real SQLite store that counts how often each app is read from it, notes the apps of every batch
/// it saves, and can hold saves back.
final class InstrumentedStore: DaemonStore {
    let base: SQLiteDaemonStore
    /// Calls held back while it is closed, let through together when it opens.
    private struct Gate {
        var isClosed = false
        var waiting: [CheckedContinuation<Void, Never>] = []
    }
    private struct State {
        var reads: [String: Int] = [:]
        var batches: [[String]] = []
        var recordWrites: [Bool] = []
        var saveGate = Gate()
        var wakeUpReads = 0
        var batchedReads: [[String]] = []
        var readGate = Gate()
        var listGate = Gate()
        var syncGate = Gate()
        var syncs = 0
        var syncedBatches: [Bool] = []
    }
    private let state = Mutex(State())

    init(path: String) throws { base = try SQLiteDaemonStore(path: path) }

    func reads(of app: String) -> Int { state.withLock { $0.reads[app, default: 0] } }
    /// The apps of each batch saved so far, in order.
    var batches: [[String]] { state.withLock { $0.batches } }
    /// For each save so far, in order, whether it wrote its app's record.
    var recordWrites: [Bool] { state.withLock { $0.recordWrites } }
    /// How often the apps' wake-ups were read (what is due, and when the next is).
    var wakeUpReads: Int { state.withLock { $0.wakeUpReads } }
    /// How many saves wait to be let through.
    var heldSaves: Int { state.withLock { $0.saveGate.waiting.count } }
    /// The apps of each read of several apps at once, in order.
    var batchedReads: [[String]] { state.withLock { $0.batchedReads } }
    /// How many reads of several apps wait to be let through.
    var heldReads: Int { state.withLock { $0.readGate.waiting.count } }

    /// Makes the following saves wait until ``release()``.
    func hold() { state.withLock { $0.saveGate.isClosed = true } }
    func release() { open(\.saveGate) }
    /// Makes the following reads of several apps, once read, wait until ``releaseReads()``.
    func holdReads() { state.withLock { $0.readGate.isClosed = true } }
    func releaseReads() { open(\.readGate) }
    /// Makes the following lists of every app, once read, wait until ``releaseListing()``.
    func holdListing() { state.withLock { $0.listGate.isClosed = true } }
    func releaseListing() { open(\.listGate) }
    /// How many lists of every app wait to be let through.
    var heldListings: Int { state.withLock { $0.listGate.waiting.count } }

    /// Makes the following waits for the disk wait until ``releaseSyncs()``, then sync.
    func holdSyncs() { state.withLock { $0.syncGate.isClosed = true } }
    func releaseSyncs() { open(\.syncGate) }
    /// How many waits for the disk wait to be let through.
    var heldSyncs: Int { state.withLock { $0.syncGate.waiting.count } }
    /// For each batch saved so far, in order, whether its commit waited for the disk.
    var syncedBatches: [Bool] { state.withLock { $0.syncedBatches } }
    /// The waits for the disk that returned.
    var syncs: Int { state.withLock { $0.syncs } }

    private func open(_ gate: WritableKeyPath<State, Gate>) {
        let waiting = state.withLock { state in
            state[keyPath: gate].isClosed = false
            defer { state[keyPath: gate].waiting.removeAll() }
            return state[keyPath: gate].waiting
        }
        waiting.forEach { $0.resume() }
    }

    private func pass(_ gate: WritableKeyPath<State, Gate>) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let wait = state.withLock { state in
                if state[keyPath: gate].isClosed { state[keyPath: gate].waiting.append(continuation) }
                return state[keyPath: gate].isClosed
            }
            if !wait { continuation.resume() }
        }
    }

    func app(_ bundleIdentifier: String) async throws(DaemonError) -> StoredApp? {
        state.withLock { $0.reads[bundleIdentifier, default: 0] += 1 }
        return try await base.app(bundleIdentifier)
    }

    func apps(_ bundleIdentifiers: [String]) async throws(DaemonError) -> [String: Result<StoredApp, DaemonError>] {
        state.withLock { $0.batchedReads.append(bundleIdentifiers) }
        // Read, then held: what was read may have changed by the time the reader hears of it.
        let apps = try await base.apps(bundleIdentifiers)
        await pass(\.readGate)
        return apps
    }

    func save(_ saves: [AppSave], bootID: String) async throws(DaemonError) {
        await pass(\.saveGate)
        state.withLock {
            $0.batches.append(saves.map(\.bundleIdentifier))
            $0.recordWrites += saves.map(\.writesAppRecord)
            $0.syncedBatches.append(saves.contains(where: \.waitsForTheDisk))
        }
        try await base.save(saves, bootID: bootID)
    }

    func waitForTheDisk() async throws(DaemonError) {
        await pass(\.syncGate)
        try await base.waitForTheDisk()
        state.withLock { $0.syncs += 1 }
    }
    func insert(_ app: StoredApp) async throws(DaemonError) { try await base.insert(app) }
    func bundleIdentifier(forKeyHash keyHash: String) async throws(DaemonError) -> String? { try await base.bundleIdentifier(forKeyHash: keyHash) }
    func replaceKey(of bundleIdentifier: String, with keyHash: String) async throws(DaemonError) { try await base.replaceKey(of: bundleIdentifier, with: keyHash) }
    func delete(_ bundleIdentifier: String) async throws(DaemonError) { try await base.delete(bundleIdentifier) }
    func resources(of bundleIdentifier: String) async throws(DaemonError) -> [AppResource: Data] { try await base.resources(of: bundleIdentifier) }
    func setResource(_ resource: AppResource, of bundleIdentifier: String, to value: Data?) async throws(DaemonError) {
        try await base.setResource(resource, of: bundleIdentifier, to: value)
    }
    func apps() async throws(DaemonError) -> [(bundleIdentifier: String, launchCommand: String?, quarantined: Quarantine?)] {
        let apps = try await base.apps()
        await pass(\.listGate)
        return apps
    }
    func quarantine(_ bundleIdentifier: String, reason: String, at date: Date) async throws(DaemonError) {
        try await base.quarantine(bundleIdentifier, reason: reason, at: date)
    }
    func reset(_ app: StoredApp, at date: Date) async throws(DaemonError) -> Int { try await base.reset(app, at: date) }
    func appsDue(by date: Date, limit: Int) async throws(DaemonError) -> [String] {
        state.withLock { $0.wakeUpReads += 1 }
        return try await base.appsDue(by: date, limit: limit)
    }
    func appsWatchingLocation() async throws(DaemonError) -> [String] { try await base.appsWatchingLocation() }
    func appsPreparingContent() async throws(DaemonError) -> [String] { try await base.appsPreparingContent() }
    func appsShowingNotifications() async throws(DaemonError) -> [String] { try await base.appsShowingNotifications() }
    func postponeWakeUp(of bundleIdentifier: String, to date: Date) async throws(DaemonError) { try await base.postponeWakeUp(of: bundleIdentifier, to: date) }
    func deviceState() async throws(DaemonError) -> DeviceState? { try await base.deviceState() }
    func saveDeviceState(_ state: DeviceState) async throws(DaemonError) { try await base.saveDeviceState(state) }
    func earliestWakeUp() async throws(DaemonError) -> Date? {
        state.withLock { $0.wakeUpReads += 1 }
        return try await base.earliestWakeUp()
    }
    func earliestWakeUps(limit: Int) async throws(DaemonError) -> [(bundleIdentifier: String, date: Date)] {
        state.withLock { $0.wakeUpReads += 1 }
        return try await base.earliestWakeUps(limit: limit)
    }
    func linkSequence() async throws(DaemonError) -> Int64 { try await base.linkSequence() }
    func saveLinkSequence(_ sequence: Int64, reports: [DeliveryLog.Report]) async throws(DaemonError) {
        try await base.saveLinkSequence(sequence, reports: reports)
    }
    func deliveryReports(limit: Int) async throws(DaemonError) -> (through: Int64, reports: [DeliveryLog.Report])? {
        try await base.deliveryReports(limit: limit)
    }
    func forgetDeliveryReports(through number: Int64) async throws(DaemonError) { try await base.forgetDeliveryReports(through: number) }
    func waitingCounts() async throws(DaemonError) -> (appMessages: Int, deliveryReports: Int) { try await base.waitingCounts() }
}

/// An app about to fire is read into the engine's cache before its time, so that firing it does not
/// wait for the store (behind every other app's read, when the daemon is busy).
@Suite(.timeLimit(.minutes(1))) struct ReadAheadTests {
    @Test func anAppThatLeftTheCacheIsReadBackBeforeItsNotificationIsDue() async throws {
        let store = try InstrumentedStore(path: makeTestDirectory().appendingPathComponent("db.sqlite").path)
        let clock = ManualDaemonClock()
        var configuration = DaemonEngine.Configuration()
        configuration.timeZone = TimeZone(identifier: "UTC")!
        configuration.cachedApps = 4
        let engine = await DaemonEngine(store: store, clock: clock, configuration: configuration, launcher: { _ in })
        var content = NotificationContent()
        content.title = "Stand up"
        _ = try await engine.registerApp("com.example.due")
        _ = try await engine.authorize("com.example.due", .grant)
        try await engine.add("com.example.due", NotificationRequest(identifier: "stand-up", content: content, trigger: .timeInterval(10, repeats: false)))
        // Other apps push it out of the cache.
        for index in 0..<8 {
            _ = try await engine.registerApp("com.example.other\(index)")
            _ = try await engine.authorize("com.example.other\(index)", .grant)
        }
        let readsBefore = store.reads(of: "com.example.due")

        // Half a second before it is due, the scheduler's round reads it back, once.
        clock.advance(by: 9.5)
        #expect(await engine.processDue() == clock.now.addingTimeInterval(0.5))
        let deadline = ContinuousClock.now + .seconds(10)
        while store.reads(of: "com.example.due") == readsBefore, ContinuousClock.now < deadline { await Task.yield() }
        #expect(store.reads(of: "com.example.due") == readsBefore + 1, "read ahead of its time")

        // At its time it fires without another read; other apps' steps did not push it out meanwhile.
        for index in 0..<8 { _ = try await engine.authorize("com.example.other\(index)", .grant) }
        clock.advance(by: 0.5)
        _ = await engine.processDue()
        #expect(store.reads(of: "com.example.due") == readsBefore + 1, "fired from the cache")
        #expect(try await engine.deliveredNotifications("com.example.due").map(\.request.identifier) == ["stand-up"])
    }
}
