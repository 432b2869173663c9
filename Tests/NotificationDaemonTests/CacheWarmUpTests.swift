import DaemonTestSupport
import Foundation
import GRDB
import NotificationCore
@testable import NotificationDaemon
@testable import NotificationEngine
import Testing
import TestSupport

/// After a start, the daemon reads its stored apps into memory a few at a time (as far as the cache
/// has room), so that the first call for each does not wait for a read of its own.
@Suite(.timeLimit(.minutes(1))) struct CacheWarmUpTests {
    func engine(_ store: InstrumentedStore, clock: ManualDaemonClock, configure: (inout DaemonEngine.Configuration) -> Void = { _ in }) async -> DaemonEngine {
        var configuration = DaemonEngine.Configuration()
        configuration.timeZone = TimeZone(identifier: "UTC")!
        configure(&configuration)
        return await DaemonEngine(store: store, clock: clock, configuration: configuration, launcher: { _ in })
    }

    func request(_ identifier: String, _ trigger: NotificationTrigger?) -> NotificationRequest {
        var content = NotificationContent()
        content.title = identifier
        return NotificationRequest(identifier: identifier, content: content, trigger: trigger)
    }

    /// `count` apps of one request each, saved by a daemon that has stopped; returns the store's path.
    func storedApps(_ count: Int, clock: ManualDaemonClock) async throws -> String {
        let path = try makeTestDirectory().appendingPathComponent("db.sqlite").path
        let first = await engine(try InstrumentedStore(path: path), clock: clock)
        for index in 0..<count {
            let app = "com.example.app\(index)"
            _ = try await first.registerApp(app)
            _ = try await first.authorize(app, .grant)
            // Every tenth repeats each minute: it falls due while no daemon runs.
            let trigger: NotificationTrigger = index % 10 == 0 ? .timeInterval(60, repeats: true) : .timeInterval(3600, repeats: false)
            try await first.add(app, request("r\(index)", trigger))
        }
        return path
    }

    @Test func afterAStartEveryStoredAppIsInMemoryBeforeItsFirstCall() async throws {
        let clock = ManualDaemonClock()
        let path = try await storedApps(150, clock: clock)
        clock.advance(by: 600)
        let store = try InstrumentedStore(path: path)
        let engine = await engine(store, clock: clock)
        await engine.warmCache()

        #expect(await engine.cachedAppCount == 150)
        // In reads of 64 apps, not one read per app.
        #expect(store.batchedReads.map(\.count) == [64, 64, 22])
        for index in 0..<150 {
            let app = "com.example.app\(index)"
            let pending = try await engine.pendingRequests(app)
            #expect(pending.map(\.request.identifier) == ["r\(index)"], "\(app)")
            #expect(store.reads(of: app) == 0, "\(app) was read again")
            if index % 10 == 0 {
                // Resumed as a load after a restart resumes it: the repeat missed while stopped is
                // skipped, the next one is ahead.
                let next = try #require(pending.first?.nextFireDate)
                #expect(next > clock.now && next <= clock.now.addingTimeInterval(60), "\(app) next fires at \(next)")
            }
        }
    }

    @Test func theWarmUpFillsThreeQuartersOfTheCacheAndMakesNoAppLeave() async throws {
        let clock = ManualDaemonClock()
        let path = try await storedApps(60, clock: clock)
        let store = try InstrumentedStore(path: path)
        // An app of one request is estimated at 4,636 bytes: 32 of them fit in three quarters of 200,000.
        let engine = await engine(store, clock: clock) { $0.cacheMemory = 200_000 }
        // Used before the warm-up: it stays.
        _ = try await engine.pendingRequests("com.example.app59")
        await engine.warmCache()
        #expect(await engine.cachedAppCount == 32)
        #expect(await engine.cachedBytes <= 150_000)
        #expect(store.reads(of: "com.example.app59") == 1)
        _ = try await engine.pendingRequests("com.example.app59")
        #expect(store.reads(of: "com.example.app59") == 1, "it left the cache for the warm-up")
        // The apps the warm-up left out are read when first used.
        #expect(try await engine.pendingRequests("com.example.app40").map(\.request.identifier) == ["r40"])
        #expect(store.reads(of: "com.example.app40") == 1)
    }

    @Test func aCallDuringTheWarmUpsReadWaitsForItAndARemovedAppStaysRemoved() async throws {
        let clock = ManualDaemonClock()
        let path = try await storedApps(10, clock: clock)
        let store = try InstrumentedStore(path: path)
        let engine = await engine(store, clock: clock)
        store.holdReads()
        let warmUp = Task { await engine.warmCache() }
        try await eventually("the warm-up's read of the store") { store.heldReads > 0 }
        // Asked for once the warm-up has read it, before it is in memory: answered from that read.
        let call = Task { try await engine.pendingRequests("com.example.app3").map(\.request.identifier) }
        // Removed once the warm-up has read it: not brought back from what was read.
        try await engine.removeApp("com.example.app5")
        store.releaseReads()
        await warmUp.value
        #expect(try await call.value == ["r3"])
        #expect(store.reads(of: "com.example.app3") == 0)
        #expect(await engine.cachedAppCount == 9)
        await #expect(throws: DaemonError.self) { try await engine.pendingRequests("com.example.app5") }
        #expect(try await engine.apps().map(\.bundleIdentifier).contains("com.example.app5") == false)
    }

    @Test func anAppRemovedAfterTheWarmUpListedItLeavesTheOthersOfItsReadWarmed() async throws {
        let clock = ManualDaemonClock()
        let path = try await storedApps(10, clock: clock)
        let store = try InstrumentedStore(path: path)
        let engine = await engine(store, clock: clock)
        store.holdListing()
        let warmUp = Task { await engine.warmCache() }
        try await eventually("the warm-up's list of the apps") { store.heldListings > 0 }
        try await engine.removeApp("com.example.app3")
        store.releaseListing()
        await warmUp.value
        #expect(await engine.cachedAppCount == 9)
        for index in 0..<10 where index != 3 {
            #expect(try await engine.pendingRequests("com.example.app\(index)").map(\.request.identifier) == ["r\(index)"])
            #expect(store.reads(of: "com.example.app\(index)") == 0, "app\(index) was read alone")
        }
    }

    /// A read that saw an app's damaged state and is heard of only after the app was reset does not
    /// quarantine the app afresh: its new state is the one that counts.
    @Test func aReadFromBeforeAResetDoesNotQuarantineTheAppAgain() async throws {
        let clock = ManualDaemonClock()
        let path = try await storedApps(2, clock: clock)
        let damaged = "com.example.app0"
        try await DatabaseQueue(path: path).write { db in
            try db.execute(sql: "UPDATE app SET core = CAST('{not json' AS BLOB) WHERE bundleIdentifier = ?", arguments: [damaged])
        }
        let store = try InstrumentedStore(path: path)
        let engine = await engine(store, clock: clock)
        store.holdReads()
        let warming = Task { await engine.warmCache() }
        try await eventually("the warm-up's read") { store.heldReads == 1 }
        // Quarantined meanwhile (as by an earlier run), then reset while that read is still on its way.
        try await store.base.quarantine(damaged, reason: "its stored state cannot be read", at: clock.now)
        #expect(try await engine.resetApp(damaged) >= 1)
        store.releaseReads()
        await warming.value

        #expect(try await store.apps().first { $0.bundleIdentifier == damaged }?.quarantined == nil)
        #expect(try await engine.pendingRequests(damaged).isEmpty, "the app afresh")
        #expect(try await engine.pendingRequests("com.example.app1").map(\.request.identifier) == ["r1"])
    }
}
