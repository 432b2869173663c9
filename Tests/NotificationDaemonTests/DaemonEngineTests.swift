import DaemonTestSupport
import Foundation
import NotificationCore
@testable import NotificationDaemon
@testable import NotificationEngine
import Synchronization
import Testing
import TestSupport

/// The engine over a real SQLite file, without the HTTP layer: restarts and launching stopped apps.
@Suite(.timeLimit(.minutes(2))) struct DaemonEngineTests {
    final class Launches: Sendable {
        private let commands = Mutex<[String]>([])
        func record(_ command: String, _ app: String) { commands.withLock { $0.append("\(app): \(command)") } }
        var all: [String] { commands.withLock { $0 } }
    }

    func engine(at path: String, clock: ManualDaemonClock, launches: Launches = Launches(),
                configure: (inout DaemonEngine.Configuration) -> Void = { _ in }) async throws -> DaemonEngine {
        var configuration = DaemonEngine.Configuration()
        configuration.timeZone = TimeZone(identifier: "UTC")!
        configure(&configuration)
        return await DaemonEngine(store: try SQLiteDaemonStore(path: path), clock: clock, configuration: configuration,
                            launcher: { launches.record($0.command, $0.bundleIdentifier) })
    }

    /// Registers and authorizes `app`, and shows its notification "n", whose action DELETE needs the
    /// device unlocked.
    func showNotificationWithAProtectedAction(on engine: DaemonEngine, app: String) async throws {
        _ = try await engine.registerApp(app)
        _ = try await engine.authorize(app, .grant)
        try await engine.setCategories(app, [NotificationCategory(
            identifier: "C", actions: [NotificationAction(identifier: "DELETE", title: "Delete", options: [.authenticationRequired])])])
        var content = NotificationContent()
        content.title = "n"
        content.categoryIdentifier = "C"
        try await engine.add(app, NotificationRequest(identifier: "n", content: content, trigger: nil))
    }

    func request(_ identifier: String, _ trigger: NotificationTrigger?) -> NotificationRequest {
        var content = NotificationContent()
        content.title = identifier
        return NotificationRequest(identifier: identifier, content: content, trigger: trigger)
    }

    @Test func aResponseForAStoppedAppRunsItsLaunchCommand() async throws {
        let path = try makeTestDirectory().appendingPathComponent("db.sqlite").path
        let launches = Launches()
        let engine = try await engine(at: path, clock: ManualDaemonClock(), launches: launches)
        _ = try await engine.registerApp("com.example.todo", launchCommand: "todo-example")
        _ = try await engine.registerApp("com.example.quiet")
        for app in ["com.example.todo", "com.example.quiet"] {
            _ = try await engine.authorize(app, .grant)
            try await engine.add(app, request("n", nil))
            try await engine.respond(app, to: "n", with: .open)
        }
        #expect(launches.all == ["com.example.todo: todo-example"], "only an app with a launch command is started")
    }

    @Test func afterARestartOverdueOneShotsFireOnceAndMissedRepeatsAreSkipped() async throws {
        let path = try makeTestDirectory().appendingPathComponent("db.sqlite").path
        let clock = ManualDaemonClock()
        do {
            let first = try await engine(at: path, clock: clock)
            _ = try await first.registerApp("com.example.todo")
            _ = try await first.authorize("com.example.todo", .grant)
            try await first.add("com.example.todo", request("once", .timeInterval(60, repeats: false)))
            try await first.add("com.example.todo", request("hourly", .timeInterval(3600, repeats: true)))
        }
        // The daemon is down for a day.
        clock.advance(by: 86_400 + 30)
        let second = try await engine(at: path, clock: clock)
        let events = await second.watch().events
        let next = await second.processDue()
        #expect(next == Date(timeIntervalSince1970: 1_767_225_600 + 86_400 + 3600), "the hourly one resumes at its next hour")
        let delivered = try await second.deliveredNotifications("com.example.todo").map(\.request.identifier)
        #expect(delivered == ["once"], "the overdue one-shot fired once; none of the 24 missed hourly ones did")
        var presented: [String] = []
        for await event in events {
            if case .app(_, .presented(let shown)) = event { presented.append(shown.notification.request.identifier) }
            if presented.count == 1 { break }
        }
        #expect(presented == ["once"])
    }

    @Test func presentersHearWhichDeliveredNotificationsAnAppRemoved() async throws {
        let engine = try await engine(at: try makeTestDirectory().appendingPathComponent("db.sqlite").path, clock: ManualDaemonClock())
        _ = try await engine.registerApp("com.example.removes")
        _ = try await engine.authorize("com.example.removes", .grant)
        for identifier in ["a", "b", "c"] { try await engine.add("com.example.removes", request(identifier, nil)) }
        var events = await engine.watch().events.makeAsyncIterator()
        try await engine.removeDeliveredNotifications("com.example.removes", ["b", "not-shown"])
        try await engine.removeDeliveredNotifications("com.example.removes", ["b"])
        try await engine.removeDeliveredNotifications("com.example.removes", nil)
        #expect(await events.next() == .app("com.example.removes", .notificationsRemoved(["b"])))
        #expect(await events.next() == .app("com.example.removes", .notificationsRemoved(["a", "c"])),
                "removing what is not shown tells no one; removing all names each, oldest first")
        #expect(try await engine.deliveredNotifications("com.example.removes").isEmpty)
    }

    @Test func aFocusIsKeptAcrossARestartAndAnAppItAllowsBreaksThrough() async throws {
        let path = try makeTestDirectory().appendingPathComponent("db.sqlite").path
        let clock = ManualDaemonClock()
        do {
            let engine = try await engine(at: path, clock: clock)
            for app in ["com.example.pager", "com.example.games"] {
                _ = try await engine.registerApp(app)
                _ = try await engine.authorize(app, .grant)
            }
            var events = await engine.watch().events.makeAsyncIterator()
            let work = Focus(name: "Work", allowsTimeSensitive: false, allowedApps: ["com.example.pager"])
            try await engine.setFocus(work)
            try await engine.setFocus(work)
            #expect(await events.next() == .focusChanged(work), "setting the same Focus again tells no one")
            await #expect(throws: DaemonError.self) { try await engine.setFocus(Focus(name: "")) }
            #expect(await engine.focus == work)
        }
        // After a restart: still on, the allowed app's notification breaks through, the other's is silenced.
        let engine = try await engine(at: path, clock: clock)
        #expect(await engine.focus?.name == "Work")
        for app in ["com.example.pager", "com.example.games"] { try await engine.add(app, request("n", nil)) }
        #expect(try await engine.visibleNotifications("com.example.pager").first?.presentation.banner == true)
        let silenced = try #require(try await engine.visibleNotifications("com.example.games").first?.presentation)
        #expect(!silenced.banner && silenced.list)
        try await engine.setFocus(nil)
        try await engine.add("com.example.games", request("m", nil))
        #expect(try await engine.visibleNotifications("com.example.games").first { $0.notification.request.identifier == "m" }?.presentation.banner == true)
    }

    @Test func theScheduledSummaryAndWhatWaitsForItSurviveARestartAndComeOnTime() async throws {
        let path = try makeTestDirectory().appendingPathComponent("db.sqlite").path
        let clock = ManualDaemonClock()
        let evening = ScheduledSummary(times: [.init(hour: 18, minute: 0)])
        do {
            let engine = try await engine(at: path, clock: clock)
            for app in ["com.example.news", "com.example.chat", "com.example.shop"] {
                _ = try await engine.registerApp(app)
                _ = try await engine.authorize(app, .grant)
            }
            for app in ["com.example.news", "com.example.shop"] {
                _ = try await engine.changeSettings(app) { $0.scheduledDeliverySetting = .enabled }
            }
            var events = await engine.watch().events.makeAsyncIterator()
            await #expect(throws: DaemonError.self) { try await engine.setScheduledSummary(ScheduledSummary(times: [])) }
            try await engine.setScheduledSummary(evening)
            try await engine.setScheduledSummary(evening)
            #expect(await events.next() == .summaryChanged(evening), "setting the same summary again tells no one")
            for app in ["com.example.news", "com.example.chat", "com.example.shop"] { try await engine.add(app, request("n", nil)) }
            #expect(try await engine.visibleNotifications("com.example.news").first?.summary?.held == true)
            #expect(try await engine.visibleNotifications("com.example.chat").first?.summary == nil, "an app not in the summary")
        }
        // Down from noon until after six; restarted, the summary comes for both apps at once.
        clock.advance(by: 19 * 3600)
        let engine = try await engine(at: path, clock: clock)
        #expect(await engine.scheduledSummary == evening)
        let events = await engine.watch().events
        _ = await engine.processDue()
        var delivered: [String: [String]] = [:]
        for await event in events {
            if case .app(let app, .summaryDelivered(let shown)) = event { delivered[app] = shown.map(\.notification.request.identifier) }
            if delivered.count == 2 { break }
        }
        #expect(delivered == ["com.example.news": ["n"], "com.example.shop": ["n"]])
        let shown = try #require(try await engine.visibleNotifications("com.example.news").first)
        #expect(shown.summary?.date == Date(timeIntervalSince1970: 1_767_225_600 + 18 * 3600) && shown.summary?.held == false)

        // Off: the next arrives at once.
        try await engine.setScheduledSummary(nil)
        try await engine.add("com.example.news", request("m", nil))
        #expect(try await engine.visibleNotifications("com.example.news").first { $0.notification.request.identifier == "m" }?.presentation.banner == true)
    }

    @Test func provisionalNotificationsAreKeptForTheSummaryOnlyWhileItIsOn() async throws {
        let engine = try await engine(at: try makeTestDirectory().appendingPathComponent("db.sqlite").path, clock: ManualDaemonClock())
        _ = try await engine.registerApp("com.example.quiet")
        _ = try await engine.authorize("com.example.quiet", .provisional)
        await #expect(throws: DaemonError.self) { try await engine.keepProvisionalNotifications("com.example.quiet", inSummary: true) }
        #expect(try await engine.settings("com.example.quiet").authorizationStatus == .provisional, "nothing changed")
        try await engine.setScheduledSummary(ScheduledSummary())
        let kept = try await engine.keepProvisionalNotifications("com.example.quiet", inSummary: true)
        #expect(kept.authorizationStatus == .authorized && kept.scheduledDeliverySetting == .enabled)
        try await engine.add("com.example.quiet", request("n", nil))
        #expect(try await engine.visibleNotifications("com.example.quiet").first?.summary?.held == true)
    }

    @Test func theDevicesLockAndLocationReachAppsRegisteredAfterTheyChanged() async throws {
        let path = try makeTestDirectory().appendingPathComponent("db.sqlite").path
        let engine = try await engine(at: path, clock: ManualDaemonClock())
        try await engine.setDeviceLocked(true)
        try await engine.updateLocation(Coordinate(latitude: 48.8566, longitude: 2.3522))

        try await showNotificationWithAProtectedAction(on: engine, app: "com.example.later")
        await #expect(throws: DaemonError.self) { try await engine.respond("com.example.later", to: "n", with: .action("DELETE")) }

        // A region around where the device already is: leaving it fires, entering it never happened.
        let paris = CircularRegion(identifier: "paris", center: Coordinate(latitude: 48.8566, longitude: 2.3522), radius: 1000,
                                   notifyOnEntry: true, notifyOnExit: true)
        try await engine.add("com.example.later", request("paris", .location(paris, repeats: false)))
        let events = await engine.watch().events
        try await engine.updateLocation(Coordinate(latitude: 51.5072, longitude: -0.1276))
        var iterator = events.makeAsyncIterator()
        var presented: [String] = []
        while presented.isEmpty, let event = await iterator.next() {
            if case .app(_, .presented(let shown)) = event { presented.append(shown.notification.request.identifier) }
        }
        #expect(presented == ["paris"])

        try await engine.setDeviceLocked(false)
        try await engine.respond("com.example.later", to: "n", with: .action("DELETE"))
    }

    @Test func theDevicesLockLocationAndTimeZoneSurviveARestart() async throws {
        let path = try makeTestDirectory().appendingPathComponent("db.sqlite").path
        let clock = ManualDaemonClock()
        do {
            let engine = try await engine(at: path, clock: clock)
            try await engine.setDeviceLocked(true)
            try await engine.updateLocation(Coordinate(latitude: 48.8566, longitude: 2.3522))
            var events = await engine.watch().events.makeAsyncIterator()
            try await engine.changeTimeZone(TimeZone(identifier: "Asia/Tokyo")!)
            #expect(await events.next() == .timeZoneChanged(TimeZone(identifier: "Asia/Tokyo")!), "presenters tell times in the new zone")
        }
        let restarted = try await engine(at: path, clock: clock)
        #expect(await restarted.timeZone.identifier == "Asia/Tokyo")
        try await showNotificationWithAProtectedAction(on: restarted, app: "com.example.after")
        await #expect(throws: DaemonError.self, "still locked") { try await restarted.respond("com.example.after", to: "n", with: .action("DELETE")) }

        // Still in Tokyo: 09:00 comes at 00:00 UTC.
        var nine = DateComponents()
        nine.hour = 9
        try await restarted.add("com.example.after", request("nine", .calendar(nine, repeats: true)))
        let next = try await restarted.pendingRequests("com.example.after").first?.nextFireDate
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC")!
        #expect(next.map { utc.component(.hour, from: $0) } == 0)

        // Still in Paris: leaving it fires a region trigger around it.
        let paris = CircularRegion(identifier: "paris", center: Coordinate(latitude: 48.8566, longitude: 2.3522), radius: 1000)
        try await restarted.add("com.example.after", request("paris", .location(paris, repeats: false)))
        try await restarted.updateLocation(Coordinate(latitude: 51.5072, longitude: -0.1276))
        #expect(try await restarted.visibleNotifications("com.example.after").map(\.notification.request.identifier).contains("paris"))
    }

    @Test func concurrentCallsForAnAppNotYetLoadedAllLandAfterARestart() async throws {
        let path = try makeTestDirectory().appendingPathComponent("db.sqlite").path
        let clock = ManualDaemonClock()
        do {
            let engine = try await engine(at: path, clock: clock)
            _ = try await engine.registerApp("com.example.busy")
            _ = try await engine.authorize("com.example.busy", .grant)
        }
        // A new run: the app is in the store only. Its first calls arrive together; each waits for
        // the one read of the store, and none of their changes is lost to another's.
        let restarted = try await engine(at: path, clock: clock)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<32 {
                group.addTask { try await restarted.add("com.example.busy", self.request("r\(index)", .timeInterval(3600, repeats: false))) }
            }
            try await group.waitForAll()
        }
        #expect(try await restarted.pendingRequests("com.example.busy").count == 32)
        let again = try await engine(at: path, clock: clock)
        #expect(try await again.pendingRequests("com.example.busy").count == 32, "and all of them are in the store")
    }

    @Test func appsLeaveAFullCacheAndComeBackAsTheyWere() async throws {
        let path = try makeTestDirectory().appendingPathComponent("db.sqlite").path
        let engine = try await engine(at: path, clock: ManualDaemonClock()) { $0.cachedApps = 2 }
        let apps = (0..<5).map { "com.example.app\($0)" }
        for app in apps {
            _ = try await engine.registerApp(app)
            _ = try await engine.authorize(app, .grant)
        }
        // Round after round over more apps than the cache holds, some calls at once.
        for round in 0..<3 {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for app in apps {
                    group.addTask { try await engine.add(app, self.request("r\(round)", .timeInterval(3600, repeats: false))) }
                }
                try await group.waitForAll()
            }
        }
        for app in apps {
            #expect(try await engine.pendingRequests(app).map(\.request.identifier) == ["r0", "r1", "r2"], "\(app)")
        }
    }

    /// The cache is bounded by what its apps take in memory, not by how many they are: many apps
    /// of one request each fit where a few of 64 do, and every app comes back as it was.
    @Test func theCacheHoldsAsManyAppsAsItsMemoryAllows() async throws {
        let path = try makeTestDirectory().appendingPathComponent("db.sqlite").path
        let engine = try await engine(at: path, clock: ManualDaemonClock()) { $0.cacheMemory = 200_000 }
        let small = (0..<60).map { "com.example.small\($0)" }
        for app in small {
            _ = try await engine.registerApp(app)
            _ = try await engine.authorize(app, .grant)
            try await engine.add(app, request("only", .timeInterval(3600, repeats: false)))
        }
        // An app of one request is estimated at 4,636 bytes: 43 of them fit in 200,000, and the cache
        // keeps itself a little under its bound.
        let smallCount = await engine.cachedAppCount
        #expect((36...43).contains(smallCount), "\(smallCount) apps of one request")
        #expect(await engine.cachedBytes <= 200_000)

        let large = (0..<8).map { "com.example.large\($0)" }
        for app in large {
            _ = try await engine.registerApp(app)
            _ = try await engine.authorize(app, .grant)
            for index in 0..<64 { try await engine.add(app, request("r\(index)", .timeInterval(3600 + Double(index), repeats: false))) }
        }
        // One of 64 requests is estimated at 38,656 bytes: five fit, or four and a few small ones.
        let largeCount = await engine.cachedAppCount
        #expect(largeCount <= 12, "\(largeCount) apps once the large ones came")
        #expect(await engine.cachedBytes <= 200_000)

        for app in small { #expect(try await engine.pendingRequests(app).map(\.request.identifier) == ["only"], "\(app)") }
        for app in large { #expect(try await engine.pendingRequests(app).count == 64, "\(app)") }
    }

    @Test("an app in use stays in a full cache while many others pass through it")
    func anAppInUseStaysInTheCache() async throws {
        let store = try InstrumentedStore(path: makeTestDirectory().appendingPathComponent("db.sqlite").path)
        var configuration = DaemonEngine.Configuration()
        configuration.timeZone = TimeZone(identifier: "UTC")!
        configuration.cachedApps = 24
        let engine = await DaemonEngine(store: store, clock: ManualDaemonClock(), configuration: configuration, launcher: { _ in })
        _ = try await engine.registerApp("com.example.hot")
        _ = try await engine.authorize("com.example.hot", .grant)
        try await engine.add("com.example.hot", request("r0", .timeInterval(3600, repeats: false)))
        let readsOfHot = store.reads(of: "com.example.hot")
        // Ten times as many apps as the cache holds go through it, the hot app used between each two.
        let others = (0..<240).map { "com.example.cold\($0)" }
        for (index, app) in others.enumerated() {
            _ = try await engine.registerApp(app)
            _ = try await engine.authorize(app, .grant)
            try await engine.add(app, request("r\(index)", .timeInterval(3600, repeats: false)))
            #expect(try await engine.badge("com.example.hot") == 0)
        }
        #expect(store.reads(of: "com.example.hot") == readsOfHot, "never read again: it never left the cache")
        // The others left it, and come back as they were.
        #expect(store.reads(of: others[0]) >= 1)
        for (index, app) in others.enumerated().prefix(30) {
            #expect(try await engine.pendingRequests(app).map(\.request.identifier) == ["r\(index)"])
        }
        #expect(store.reads(of: others[0]) >= 2, "read again after leaving the cache")
    }

    /// Most adds leave the app's record in the store alone (its clock, its numbering, its next
    /// wake-up) and write their request's row only; what they change of the record is written when it
    /// matters, so the app fires on time, keeps its order and numbers on once it left the cache and
    /// after a restart.
    @Test func mostAddsWriteOnlyTheirRowAndTheAppComesBackAsItWas() async throws {
        let path = try makeTestDirectory().appendingPathComponent("db.sqlite").path
        let clock = ManualDaemonClock()
        let store = try InstrumentedStore(path: path)
        var configuration = DaemonEngine.Configuration()
        configuration.timeZone = TimeZone(identifier: "UTC")!
        configuration.cachedApps = 1
        let engine = await DaemonEngine(store: store, clock: clock, configuration: configuration, launcher: { _ in })
        let others = (0..<3).map { "com.example.other\($0)" }
        for app in ["com.example.a"] + others {
            _ = try await engine.registerApp(app)
            _ = try await engine.authorize(app, .grant)
        }
        try await engine.add("com.example.a", request("first", .timeInterval(3600, repeats: false)))
        let before = store.recordWrites.count
        for index in 0..<10 { try await engine.add("com.example.a", request("r\(index)", .timeInterval(7200 + Double(index), repeats: false))) }
        #expect(Array(store.recordWrites.dropFirst(before)) == Array(repeating: false, count: 10), "no add moved the next wake-up")
        try await engine.add("com.example.a", request("soon", .timeInterval(60, repeats: false)))
        #expect(store.recordWrites.last == true, "an earlier one did")

        // The app leaves the cache (others take its place), and is read back when its request is due.
        let reads = store.reads(of: "com.example.a")
        for app in others { try await engine.add(app, request("other", .timeInterval(3600, repeats: false))) }
        clock.advance(by: 61)
        _ = await engine.processDue()
        #expect(store.reads(of: "com.example.a") == reads + 1, "read back from the store")
        #expect(try await engine.deliveredNotifications("com.example.a").map(\.request.identifier) == ["soon"])
        try await engine.add("com.example.a", request("after", .timeInterval(9000, repeats: false)))

        let restarted = try await self.engine(at: path, clock: clock)
        try await restarted.add("com.example.a", request("restarted", .timeInterval(9000, repeats: false)))
        let order = ["first"] + (0..<10).map { "r\($0)" } + ["after", "restarted"]
        #expect(try await restarted.pendingRequests("com.example.a").map(\.request.identifier) == order, "in the order they were added")
    }

    @Test func whatFellDueBeforeARefusedCallStillHappensAndIsKept() async throws {
        let path = try makeTestDirectory().appendingPathComponent("db.sqlite").path
        let clock = ManualDaemonClock()
        let engine = try await engine(at: path, clock: clock)
        _ = try await engine.registerApp("com.example.due")
        _ = try await engine.authorize("com.example.due", .grant)
        try await engine.add("com.example.due", request("soon", .timeInterval(60, repeats: false)))
        let events = await engine.watch().events
        clock.advance(by: 61)
        // The next call is refused (nothing to show); the trigger that fell due before it still fires,
        // then, without waiting for any later step.
        let empty = NotificationRequest(identifier: "empty", content: NotificationContent(), trigger: nil)
        await #expect(throws: DaemonError.self) { try await engine.add("com.example.due", empty) }
        let shown = try await withDeadline("the notification that fell due") { () -> String? in
            for await event in events {
                if case .app(_, .presented(let shown)) = event { return shown.notification.request.identifier }
            }
            return nil
        }
        #expect(shown == "soon")
        let restarted = try await self.engine(at: path, clock: clock)
        #expect(try await restarted.visibleNotifications("com.example.due").map(\.notification.request.identifier) == ["soon"])
        #expect(try await restarted.pendingRequests("com.example.due").isEmpty)
    }

    @Test func aRenewedKeyStopsTheOldOneAtOnceThoughItWasRemembered() async throws {
        let path = try makeTestDirectory().appendingPathComponent("db.sqlite").path
        let engine = try await engine(at: path, clock: ManualDaemonClock())
        let old = try await engine.registerApp("com.example.keys")
        #expect(try await engine.authenticate(key: old) == "com.example.keys")
        let new = try await engine.renewKey(of: "com.example.keys")
        await #expect(throws: DaemonError.self) { try await engine.authenticate(key: old) }
        #expect(try await engine.authenticate(key: new) == "com.example.keys")
        try await engine.removeApp("com.example.keys")
        await #expect(throws: DaemonError.self) { try await engine.authenticate(key: new) }
    }

    @Test func listingWhatThePersonSeesReadsOnlyTheAppsThatShowSomething() async throws {
        let path = try makeTestDirectory().appendingPathComponent("db.sqlite").path
        let engine = try await engine(at: path, clock: ManualDaemonClock())
        for app in ["com.example.a", "com.example.b", "com.example.c"] {
            _ = try await engine.registerApp(app)
            _ = try await engine.authorize(app, .grant)
        }
        try await engine.add("com.example.b", request("shown", nil))
        try await engine.add("com.example.c", request("later", .timeInterval(60, repeats: false)))
        #expect(try await engine.appsShowingNotifications() == ["com.example.b"])
        try await engine.removeDeliveredNotifications("com.example.b", nil)
        #expect(try await engine.appsShowingNotifications().isEmpty)
    }
}
