import APNsEmulator
import Foundation
import NotificationCore
import Synchronization
import Testing

/// The emulator's parts alone, without a socket: its clock, the ages of provider tokens on it, the
/// durations people write, and the script of faults.
@Suite struct EmulatorPartsTests {
    /// A system clock a test moves.
    final class SystemClock: Sendable {
        private let now = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
        func read() -> Date { now.withLock { $0 } }
        func pass(_ seconds: TimeInterval) { now.withLock { $0 += seconds } }
    }

    @Test func aFlowingClockRunsWithTheSystemsAndAheadOfItOnceAdvanced() throws {
        let system = SystemClock()
        let clock = EmulatorClock(system: { system.read() })
        #expect(clock.now() == system.read())
        system.pass(10)
        #expect(clock.now() == system.read())
        try clock.advance(by: 3_660)
        #expect(clock.now() == system.read().addingTimeInterval(3_660))
        #expect(clock.offset == 3_660)
        system.pass(5)
        #expect(clock.now() == system.read().addingTimeInterval(3_660))
    }

    @Test func aFrozenClockMovesOnlyWhenTold() throws {
        let system = SystemClock()
        let clock = EmulatorClock(frozen: true, system: { system.read() })
        let start = clock.now()
        system.pass(600)
        #expect(clock.now() == start)
        try clock.advance(by: 61 * 60)
        #expect(clock.now() == start.addingTimeInterval(61 * 60))
        try clock.set(to: start.addingTimeInterval(2 * 3_600))
        #expect(clock.now() == start.addingTimeInterval(2 * 3_600))
    }

    @Test func theClockNeverGoesBack() throws {
        let clock = EmulatorClock(frozen: true)
        let now = clock.now()
        #expect(throws: EmulatorError.self) { try clock.advance(by: -1) }
        #expect(throws: EmulatorError.self) { try clock.set(to: now.addingTimeInterval(-60)) }
        #expect(clock.now() == now)
    }

    @Test(arguments: [
        ("61m", 3_660.0), ("90s", 90.0), ("2h", 7_200.0), ("1d", 86_400.0), ("1h30m", 5_400.0), ("2.5s", 2.5), ("45", 45.0), ("0", 0.0),
    ])
    func durationsReadAsPeopleWriteThem(text: String, seconds: Double) {
        #expect(EmulatorDuration.seconds(text) == seconds)
    }

    @Test(arguments: ["", "m", "61x", "-5", "5m3", "1h-2m", "soon"])
    func whatIsNotADurationIsRefused(text: String) {
        #expect(EmulatorDuration.seconds(text) == nil)
    }

    @Test func aTokenSignedOnTheSystemsClockAgesOnTheEmulatorsFromWhenItIsFirstSeen() throws {
        let system = SystemClock()
        let clock = EmulatorClock(system: { system.read() })
        let issues = ProviderTokenIssues(clock: clock)
        let signed = Int64(system.read().timeIntervalSince1970)
        // First seen before the clock moves: its iat, as it is.
        #expect(issues.issuedAt(token: "old", iat: signed) == signed)
        try clock.advance(by: 61 * 60)
        // Seen again: as issued, 61 minutes before the emulator's now.
        #expect(issues.issuedAt(token: "old", iat: signed) == signed)
        // Signed now on the system's clock, first seen after the move: new on the emulator's.
        let fresh = Int64(system.read().timeIntervalSince1970)
        #expect(issues.issuedAt(token: "new", iat: fresh) == fresh + 61 * 60)
    }

    @Test func aTokenSignedOnAClockMovedWithTheEmulatorsIsReadOnIt() throws {
        let system = SystemClock()
        let clock = EmulatorClock(system: { system.read() })
        let issues = ProviderTokenIssues(clock: clock)
        try clock.advance(by: 3 * 3_600)
        // The provider's test moved its own clock as far: its iat is the emulator's time.
        let iat = Int64(clock.now().timeIntervalSince1970)
        #expect(issues.issuedAt(token: "moved", iat: iat) == iat)
        // One signed 2 hours before the system's now is 2 hours old.
        let stale = Int64(system.read().timeIntervalSince1970) - 7_200
        #expect(issues.issuedAt(token: "stale", iat: stale) == Int64(clock.now().timeIntervalSince1970) - 7_200)
    }

    @Test func aFaultForTheNextRequestsMeetsThatManyPushesAndTheFirstMatchingWins() {
        var script = FaultScript()
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let unregistered = script.add(Fault(action: .status(.unregistered), token: "aa", remaining: 1))
        let unavailable = script.add(Fault(action: .status(.serviceUnavailable), topic: "com.example.app", remaining: 2))
        #expect(script.meet(token: "bb", topic: "com.example.other", bundleIdentifier: "com.example.other", at: now).answer == nil)
        #expect(script.meet(token: "aa", topic: "com.example.app", bundleIdentifier: "com.example.app", at: now).answer?.id == unregistered.id)
        #expect(script.meet(token: "aa", topic: "com.example.app", bundleIdentifier: "com.example.app", at: now).answer?.id == unavailable.id)
        // A VoIP push's topic names its app too.
        #expect(script.meet(token: "cc", topic: "com.example.app.voip", bundleIdentifier: "com.example.app", at: now).answer?.id == unavailable.id)
        #expect(script.meet(token: "aa", topic: "com.example.app", bundleIdentifier: "com.example.app", at: now).answer == nil)
        #expect(script.faults.map(\.fired) == [1, 2])
    }

    @Test func aFaultsWindowIsOnTheEmulatorsClock() {
        var script = FaultScript()
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        _ = script.add(Fault(action: .status(.serviceUnavailable), from: now.addingTimeInterval(60), until: now.addingTimeInterval(660)))
        #expect(script.meet(token: "aa", topic: nil, bundleIdentifier: "com.example.app", at: now).answer == nil)
        #expect(script.meet(token: "aa", topic: nil, bundleIdentifier: "com.example.app", at: now.addingTimeInterval(60)).answer != nil)
        #expect(script.meet(token: "aa", topic: nil, bundleIdentifier: "com.example.app", at: now.addingTimeInterval(659)).answer != nil)
        #expect(script.meet(token: "aa", topic: nil, bundleIdentifier: "com.example.app", at: now.addingTimeInterval(660)).answer == nil)
    }

    @Test func anOfflineDeviceCountsItsPushesAndComesBackAfterTheLast() {
        var script = FaultScript()
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        _ = script.add(Fault(action: .offline, token: "aa", remaining: 2))
        #expect(script.offline(at: now).count == 1)
        let first = script.meet(token: "aa", topic: nil, bundleIdentifier: "com.example.app", at: now)
        #expect(first.answer == nil && first.device.map(\.remaining) == [1])
        _ = script.meet(token: "aa", topic: nil, bundleIdentifier: "com.example.app", at: now)
        #expect(script.offline(at: now).isEmpty)
    }
}
