import DaemonTestSupport
import Foundation
import NotificationCore
@testable import NotificationDaemon
@testable import NotificationEngine
import Testing
import TestSupport

/// The device's passcode: what unlocks the device on the notification center's page. Kept across
/// restarts (as a derived key, never as typed), and wrong attempts make the person wait as on iOS.
@Suite(.timeLimit(.minutes(2))) struct DevicePasscodeTests {
    func engine(at path: String, clock: ManualDaemonClock) async throws -> DaemonEngine {
        await DaemonEngine(store: try SQLiteDaemonStore(path: path), clock: clock)
    }

    func code(of call: () async throws -> Void) async -> String? {
        do {
            try await call()
            return nil
        } catch let error as DaemonError {
            return error.code.description
        } catch {
            return "\(error)"
        }
    }

    @Test func theDeviceUnlocksOnlyWithItsPasscodeEvenAfterARestart() async throws {
        let path = try makeTestDirectory().appendingPathComponent("db.sqlite").path
        let clock = ManualDaemonClock()
        do {
            let engine = try await engine(at: path, clock: clock)
            // No passcode yet: unlocking needs none.
            try await engine.setDeviceLocked(true)
            try await engine.unlockDevice(passcode: nil)
            #expect(await engine.lockState == (false, false))

            try await engine.setPasscode("2468", current: nil)
            try await engine.setDeviceLocked(true)
            #expect(await code { try await engine.unlockDevice(passcode: nil) } == "wrongPasscode")
            #expect(await code { try await engine.unlockDevice(passcode: "1357") } == "wrongPasscode")
            #expect(await engine.lockState == (true, true))
        }
        let store = try SQLiteDaemonStore(path: path)
        let saved = try #require(try await store.deviceState()?.passcode)
        #expect(!saved.key.isEmpty && saved.key != Data("2468".utf8), "the passcode is kept derived, not as typed")
        #expect(saved.failures == 2)

        let restarted = try await engine(at: path, clock: clock)
        #expect(await restarted.lockState == (true, true))
        try await restarted.unlockDevice(passcode: "2468")
        #expect(await restarted.lockState == (false, true))
        #expect(try await store.deviceState()?.passcode?.failures == 0)
    }

    @Test func changingOrRemovingThePasscodeNeedsTheCurrentOne() async throws {
        let engine = try await engine(at: try makeTestDirectory().appendingPathComponent("db.sqlite").path, clock: ManualDaemonClock())
        #expect(await code { try await engine.setPasscode("12", current: nil) } == "invalidRequest")
        #expect(await code { try await engine.setPasscode(String(repeating: "9", count: 33), current: nil) } == "invalidRequest")
        try await engine.setPasscode("2468", current: nil)
        #expect(await code { try await engine.setPasscode("0000", current: "1111") } == "wrongPasscode")
        #expect(await code { try await engine.setPasscode(nil, current: nil) } == "wrongPasscode")
        try await engine.setPasscode("open sesame", current: "2468")
        try await engine.setDeviceLocked(true)
        #expect(await code { try await engine.unlockDevice(passcode: "2468") } == "wrongPasscode")
        try await engine.unlockDevice(passcode: "open sesame")
        try await engine.setPasscode(nil, current: "open sesame")
        #expect(await engine.lockState == (false, false))
    }

    @Test func afterFiveWrongPasscodesThePersonWaitsLongerEachTime() async throws {
        let clock = ManualDaemonClock()
        let engine = try await engine(at: try makeTestDirectory().appendingPathComponent("db.sqlite").path, clock: clock)
        try await engine.setPasscode("2468", current: nil)
        try await engine.setDeviceLocked(true)
        for _ in 1...6 { #expect(await code { try await engine.unlockDevice(passcode: "0000") } == "wrongPasscode") }
        // Six wrong: a minute's wait, in which even the right passcode is not checked.
        #expect(await code { try await engine.unlockDevice(passcode: "2468") } == "passcodeAttemptsExceeded")
        clock.advance(by: 59)
        #expect(await code { try await engine.unlockDevice(passcode: "2468") } == "passcodeAttemptsExceeded")
        clock.advance(by: 1)
        // The seventh wrong one: five minutes.
        #expect(await code { try await engine.unlockDevice(passcode: "0000") } == "wrongPasscode")
        clock.advance(by: 299)
        #expect(await code { try await engine.unlockDevice(passcode: "2468") } == "passcodeAttemptsExceeded")
        clock.advance(by: 1)
        try await engine.unlockDevice(passcode: "2468")
        #expect(await engine.lockState.isLocked == false)
    }

    @Test func presentersAreToldWhenTheDeviceLocksAndUnlocks() async throws {
        let engine = try await engine(at: try makeTestDirectory().appendingPathComponent("db.sqlite").path, clock: ManualDaemonClock())
        var events = await engine.watch().events.makeAsyncIterator()
        try await engine.setDeviceLocked(true)
        try await engine.setDeviceLocked(true)
        try await engine.unlockDevice(passcode: nil)
        #expect(await events.next() == .deviceLockChanged(locked: true))
        #expect(await events.next() == .deviceLockChanged(locked: false), "locking a locked device tells no one")
    }
}
