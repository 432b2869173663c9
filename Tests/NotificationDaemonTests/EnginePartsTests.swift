import Foundation
import NotificationCore
@testable import NotificationDaemon
@testable import NotificationEngine
import Testing

/// The engine's parts that are values: each decides alone, with no store, clock or actor.
@Suite(.timeLimit(.minutes(1))) struct EnginePartsTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    // MARK: App connections

    /// A connection taken over is told so and ends; its successor's wait ends when it lets go, whether
    /// it let go before the wait began or during it, and ends once.
    @Test func aTakeoverWaitsForThePreviousConnectionToLetGo() async {
        var connections = AppConnections()
        let (first, firstContinuation) = AsyncStream<LocalAPI.AppEvent>.makeStream()
        let firstID = UUID()
        connections.connect("a", .init(id: firstID, deliver: { firstContinuation.yield($0) }, finish: { firstContinuation.finish() }))
        #expect(connections.isConnected("a") && connections.isConnected("a", by: firstID) && !connections.isConnected("a", by: UUID()))

        let replaced = connections.takeOver("a")
        #expect(replaced == firstID && !connections.isConnected("a"))
        var told: [LocalAPI.AppEvent] = []
        for await message in first { told.append(message) }
        #expect(told == [.replaced], "told it was replaced, and its stream ended")

        // Let go before its successor waits: the wait ends at once (the test's time limit is what
        // fails a wait that does not end).
        connections.released(firstID)
        await withCheckedContinuation { continuation in connections.wait(for: firstID, continuation) }
        connections.endWaiting(for: firstID)

        // Let go while its successor waits.
        let (_, secondContinuation) = AsyncStream<LocalAPI.AppEvent>.makeStream()
        let secondID = UUID()
        connections.connect("a", .init(id: secondID, deliver: { secondContinuation.yield($0) }, finish: { secondContinuation.finish() }))
        let replacedAgain = connections.takeOver("a")
        #expect(replacedAgain == secondID)
        await withCheckedContinuation { continuation in
            connections.wait(for: secondID, continuation)
            connections.released(secondID)
        }
        // Ended already: ending the wait again resumes nobody twice.
        connections.endWaiting(for: secondID)
        let nothing = connections.takeOver("a")
        #expect(nothing == nil, "nothing connected to take over")
    }

    /// Waiting for a connection nobody replaced (or whose wait ended) does not wait.
    @Test func waitingForAConnectionNotReplacedEndsAtOnce() async {
        var connections = AppConnections()
        await withCheckedContinuation { continuation in connections.wait(for: UUID(), continuation) }
        let closed = connections.close("a")
        #expect(connections.count == 0 && !closed)
    }

    // MARK: Device settings

    /// Saved and read back, the settings are the same.
    @Test func deviceSettingsAreKeptAsSaved() throws {
        var settings = DeviceSettings(timeZone: TimeZone(identifier: "UTC")!, saved: nil)
        settings.conditions.isLocked = true
        settings.conditions.location = Coordinate(latitude: 1, longitude: 2)
        settings.conditions.timeZone = TimeZone(identifier: "Asia/Shanghai")!
        settings.conditions.focus = Focus(name: "Work")
        settings.passcode = try DevicePasscode.make("1234")
        let read = DeviceSettings(timeZone: TimeZone(identifier: "UTC")!, saved: settings.saved)
        #expect(read == settings)
    }

    /// Wrong passcodes are counted: from the sixth in a row the person waits, then a right one clears
    /// the count; an attempt against a passcode changed meanwhile counts nothing.
    @Test func wrongPasscodesAreCountedAndARightOneClearsThem() throws {
        var settings = DeviceSettings(timeZone: TimeZone(identifier: "UTC")!, saved: nil)
        #expect(settings.attemptRefusal(at: now) == nil, "no passcode, nothing refused")
        let passcode = try DevicePasscode.make("1234")
        settings.passcode = passcode
        for _ in 1...5 {
            let counted = settings.count(attemptMatched: false, against: passcode.salt, at: now)
            #expect(counted)
        }
        #expect(settings.attemptRefusal(at: now) == nil, "five wrong ones: no wait yet")
        let sixth = settings.count(attemptMatched: false, against: passcode.salt, at: now)
        #expect(sixth)
        #expect(settings.attemptRefusal(at: now) == "Too many wrong passcodes: try again in 1 minute.")
        #expect(settings.attemptRefusal(at: now.addingTimeInterval(61)) == nil)
        let right = settings.count(attemptMatched: true, against: passcode.salt, at: now.addingTimeInterval(61))
        #expect(right)
        #expect(settings.passcode?.failures == 0 && settings.passcode?.retryAfter == nil)
        let againstAnother = settings.count(attemptMatched: false, against: Data([1, 2, 3]), at: now)
        #expect(!againstAnother)
        #expect(settings.passcode?.failures == 0)
    }

    @Test func aFocusWithoutANameOrAllowingAnAppTwiceIsRefused() {
        #expect(DeviceSettings.problem(with: Focus(name: "Work")) == nil)
        #expect(DeviceSettings.problem(with: Focus(name: "  ")) != nil)
        #expect(DeviceSettings.problem(with: Focus(name: String(repeating: "x", count: 65))) != nil)
        #expect(DeviceSettings.problem(with: Focus(name: "Work", allowedApps: ["a", "a"])) != nil)
    }

    // MARK: Quarantines

    /// A read begun during a reset, or before one that began since, is not a reason to quarantine.
    @Test func aReadThatAResetOverlapsHasNoEpochOfItsOwn() {
        var quarantines = Quarantines()
        let first = quarantines.note("a"), second = quarantines.note("a")
        #expect(first && !second, "noted once a run")
        let before = quarantines.readEpoch(of: "a")
        quarantines.beginReset("a")
        #expect(quarantines.readEpoch(of: "a") == nil, "under way")
        quarantines.lift("a")
        quarantines.endReset("a")
        #expect(quarantines.readEpoch(of: "a") != before, "a read begun before the reset is stale")
        let afterReset = quarantines.note("a")
        #expect(afterReset, "reset, it can be quarantined again")
        #expect(quarantines.readEpoch(of: "b") == 0)
    }

    // MARK: App resources

    /// What a read finds is kept unless a write came after the read began; a write changes what is
    /// known; at capacity one app leaves for each that comes.
    @Test func aReadOverlappedByAWriteIsNotKept() {
        var resources = AppResources(capacity: 2)
        let mark = resources.beginRead()
        resources.wrote("a") { $0.strings = ["K": "new"] }
        resources.finishRead("a", ResourcesOfApp(strings: ["K": "old"]), begunAt: mark)
        #expect(resources["a"] == nil, "the read may have seen the state before the write")

        resources.finishRead("a", ResourcesOfApp(strings: ["K": "new"]), begunAt: resources.beginRead())
        resources.wrote("a") { $0.strings = ["K": "newer"] }
        #expect(resources["a"]?.strings == ["K": "newer"])
        resources.finishRead("b", ResourcesOfApp(), begunAt: resources.beginRead())
        resources.finishRead("c", ResourcesOfApp(), begunAt: resources.beginRead())
        #expect([resources["a"], resources["b"], resources["c"]].compactMap { $0 }.count == 2)
        resources.forget("c")
        #expect(resources["c"] == nil)
    }
}
