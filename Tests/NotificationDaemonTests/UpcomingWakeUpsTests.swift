import DaemonTestSupport
import Foundation
import NotificationCore
@testable import NotificationDaemon
@testable import NotificationEngine
import Testing
import TestSupport

/// The scheduler knows what falls due from the store's index read once and every save since, so a
/// busy daemon does not read the store on each round, and a notification falling due waits for no read.
@Suite(.timeLimit(.minutes(1))) struct UpcomingWakeUpsTests {
    static let start = Date(timeIntervalSince1970: 1_767_225_600)

    func at(_ seconds: TimeInterval) -> Date { Self.start.addingTimeInterval(seconds) }

    @Test func beforeAnyReadNothingIsKnown() {
        let upcoming = UpcomingWakeUps(capacity: 4)
        #expect(upcoming.due(by: at(0), limit: 10) == nil)
        #expect(upcoming.next == .unknown)
    }

    @Test func aReadOfFewerThanItsCapacityKnowsEveryWakeUp() {
        var upcoming = UpcomingWakeUps(capacity: 4)
        upcoming.load([("b", at(20)), ("a", at(10))])
        #expect(upcoming.horizon == .distantFuture)
        #expect(upcoming.next == .at(at(10)))
        #expect(upcoming.due(by: at(5), limit: 10) == [])
        #expect(upcoming.due(by: at(30), limit: 10) == ["a", "b"])
        #expect(upcoming.due(by: at(30), limit: 1) == ["a"])
        // Saves move, add and remove apps.
        upcoming.note("a", wakeUp: at(40))
        upcoming.note("c", wakeUp: at(15))
        upcoming.note("b", wakeUp: nil)
        #expect(upcoming.due(by: at(30), limit: 10) == ["c"])
        #expect(upcoming.next == .at(at(15)))
        upcoming.note("a", wakeUp: nil)
        upcoming.note("c", wakeUp: nil)
        #expect(upcoming.next == .at(nil), "nothing is due ever")
    }

    @Test func aFullReadKnowsOnlyWhatComesBeforeItsLastWakeUp() {
        var upcoming = UpcomingWakeUps(capacity: 3)
        // The store may hold more apps waking up with the last one read: they are not known.
        upcoming.load([("a", at(10)), ("b", at(20)), ("c", at(30))])
        let horizon = try! #require(upcoming.horizon)
        #expect(horizon < at(30) && horizon > at(29.999))
        #expect(upcoming.due(by: at(25), limit: 10) == ["a", "b"])
        #expect(upcoming.due(by: at(30), limit: 10) == nil, "past the horizon: read the store")
        // A save past the horizon is not kept; one before it is.
        upcoming.note("d", wakeUp: at(31))
        upcoming.note("e", wakeUp: at(5))
        #expect(upcoming.due(by: at(25), limit: 10) == ["e", "a", "b"])
        // With nothing before the horizon, the scheduler looks again there.
        for app in ["a", "b", "e"] { upcoming.note(app, wakeUp: nil) }
        #expect(upcoming.next == .at(horizon))
    }

    @Test func savesBeyondFourTimesItsCapacityKeepTheEarliest() {
        var upcoming = UpcomingWakeUps(capacity: 2)
        upcoming.load([])
        for index in 0...8 { upcoming.note("app\(index)", wakeUp: at(Double(100 - index))) }
        // Nine apps noted, at most eight kept: the two earliest, and the horizon before the third.
        #expect(upcoming.due(by: at(93), limit: 10) == ["app8", "app7"])
        #expect(upcoming.due(by: at(94), limit: 10) == nil)
    }

    @Test func theSchedulerReadsTheStoresWakeUpsOnceAndThenFollowsTheSaves() async throws {
        let store = try InstrumentedStore(path: makeTestDirectory().appendingPathComponent("db.sqlite").path)
        let clock = ManualDaemonClock()
        var configuration = DaemonEngine.Configuration()
        configuration.timeZone = TimeZone(identifier: "UTC")!
        let engine = await DaemonEngine(store: store, clock: clock, configuration: configuration, launcher: { _ in })
        var content = NotificationContent()
        content.title = "Stand up"
        for app in ["com.example.a", "com.example.b"] {
            _ = try await engine.registerApp(app)
            _ = try await engine.authorize(app, .grant)
        }
        try await engine.add("com.example.a", NotificationRequest(identifier: "later", content: content, trigger: .timeInterval(60, repeats: false)))
        #expect(await engine.processDue() == clock.now.addingTimeInterval(60))
        let reads = store.wakeUpReads

        // Another app's request falls due sooner: the scheduler knows it from the save.
        try await engine.add("com.example.b", NotificationRequest(identifier: "sooner", content: content, trigger: .timeInterval(10, repeats: false)))
        #expect(await engine.processDue() == clock.now.addingTimeInterval(10))
        clock.advance(by: 10)
        #expect(await engine.processDue() == clock.now.addingTimeInterval(50))
        #expect(try await engine.deliveredNotifications("com.example.b").map(\.request.identifier) == ["sooner"])

        // A removed app wakes nobody; with nothing left, the scheduler waits for a save.
        try await engine.removeApp("com.example.a")
        #expect(await engine.processDue() == nil)
        #expect(store.wakeUpReads == reads, "no read of the store's wake-ups after the first")

        // An app registered again under a removed app's name starts with nothing due.
        _ = try await engine.registerApp("com.example.a")
        #expect(await engine.processDue() == nil)
        #expect(try await engine.pendingRequests("com.example.a").isEmpty)
    }
}

/// A notification is decided and made durable a little before its time, and shown at its time: a
/// busy store does not make it late.
@Suite(.timeLimit(.minutes(1))) struct FiringAheadTests {
    let clock = ManualDaemonClock()
    let start: Date
    let path: String
    let store: InstrumentedStore
    let engine: DaemonEngine

    init() async throws {
        var configuration = DaemonEngine.Configuration()
        configuration.timeZone = TimeZone(identifier: "UTC")!
        configuration.firesAhead = 0.025
        configuration.wakeUpsReadAtOnce = 4
        start = clock.now
        path = try makeTestDirectory().appendingPathComponent("db.sqlite").path
        store = try InstrumentedStore(path: path)
        engine = await DaemonEngine(store: store, clock: clock, configuration: configuration, launcher: { _ in })
    }

    /// The seconds from the clock's start to `date`.
    func seconds(_ date: Date) -> TimeInterval { date.timeIntervalSince(start) }

    /// Registers `app`, allows it, and adds a request due in `seconds`.
    func addDue(_ app: String, _ identifier: String, in seconds: TimeInterval) async throws {
        var content = NotificationContent()
        content.title = identifier
        _ = try await engine.registerApp(app)
        _ = try await engine.authorize(app, .grant)
        try await engine.add(app, NotificationRequest(identifier: identifier, content: content, trigger: .timeInterval(seconds, repeats: false)))
    }

    @Test func aNotificationIsSavedAheadOfItsTimeAndShownAtItWithTheAppsLaterStepsAfterIt() async throws {
        try await addDue("com.example.due", "stand-up", in: 10)
        _ = try await engine.registerApp("com.example.other")
        var events = await engine.watch().events.makeAsyncIterator()

        // The scheduler wakes up a little before the time.
        #expect(await engine.processDue() == start.addingTimeInterval(10 - 0.025))
        clock.advance(by: 9.99)
        _ = await engine.processDue()
        // Decided and durable now: a store opened on the file sees it delivered, at its time.
        let saved = try #require(try await SQLiteDaemonStore(path: path).app("com.example.due")).machine
        #expect(saved.pendingRequests.isEmpty)
        #expect(saved.deliveredNotifications.map { seconds($0.date) } == [10])
        // The app's later step waits behind it.
        try await engine.setBadgeCount("com.example.due", 3)

        // Not shown yet: another app's event, published now, comes first.
        _ = try await engine.authorize("com.example.other", .grant)
        #expect(await next(&events) == "settingsChanged com.example.other")
        clock.advance(by: 0.01)
        #expect(await next(&events) == "presented com.example.due stand-up at 10.0")
        #expect(await next(&events) == "badgeChanged com.example.due 3")
    }

    @Test func moreAppsWakingUpAtOnceThanOneReadHoldsAreAllFiredAheadWithoutSpinning() async throws {
        let apps = (0..<10).map { "com.example.app\($0)" }
        for app in apps { try await addDue(app, "hour", in: 60) }
        // Known up to just before that time (more apps may wake up at it than the four read).
        let first = try #require(await engine.processDue())
        #expect(abs(seconds(first) - (60 - 0.025)) < 0.001)

        // Ten apps at one time, four read at once: each round steps what it read, none goes round empty.
        clock.advance(by: 59.99)
        var rounds = 0
        while let next = await engine.processDue(), next <= clock.now {
            rounds += 1
            try #require(rounds < 10, "the scheduler goes round without stepping anything")
        }
        for app in apps {
            #expect(try await engine.deliveredNotifications(app).map { seconds($0.date) } == [60], "\(app)")
        }
        #expect(store.wakeUpReads <= 8)
    }

    @Test func aStoppingDaemonShowsWhatWaitsForItsTimeAtOnce() async throws {
        try await addDue("com.example.due", "stand-up", in: 10)
        var events = await engine.watch().events.makeAsyncIterator()
        _ = await engine.processDue()
        clock.advance(by: 9.99)
        _ = await engine.processDue()

        // What the scheduler runs last when the daemon stops: the clock has not reached the time.
        await engine.carryOutEverythingHeld()
        #expect(await next(&events) == "presented com.example.due stand-up at 10.0")
    }

    /// The next event, in a line.
    func next(_ events: inout AsyncStream<DaemonEvent>.Iterator) async -> String? {
        switch await events.next() {
        case .app(let app, .presented(let shown))?:
            return "presented \(app) \(shown.notification.request.identifier) at \(seconds(shown.notification.date))"
        case .app(let app, .settingsChanged(_))?: return "settingsChanged \(app)"
        case .app(let app, .badgeChanged(let badge))?: return "badgeChanged \(app) \(badge)"
        case let other?: return "\(other)"
        case nil: return nil
        }
    }
}
