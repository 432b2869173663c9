package import Foundation
import Logging
package import NotificationCore

/// The device's settings, for every app: lock and passcode, location, Focus, Scheduled Summary and
/// time zone (``DeviceSettings``), each saved before any app is stepped with it.
extension DaemonEngine {
    /// The device moved: the apps with location triggers check them now (each step brings the new
    /// location); the others learn of it at their next step.
    package func updateLocation(_ coordinate: Coordinate) async throws {
        device.conditions.location = coordinate
        try await saveDeviceState()
        try await stepInTurns(try await store.appsWatchingLocation())
    }

    /// The device was locked or unlocked; each app learns of it at its next step, before anything else.
    /// The presenters are told. No passcode is asked: this is the administrator's call (`unotify device
    /// --unlock`); the person unlocks with ``unlockDevice(passcode:)``.
    package func setDeviceLocked(_ locked: Bool) async throws {
        let changed = device.conditions.isLocked != locked
        device.conditions.isLocked = locked
        try await saveDeviceState()
        if changed { publish(.deviceLockChanged(locked: locked)) }
    }

    /// The person turns a Focus on (or changes it), or off with `nil`. From the next notification on,
    /// those it does not let through arrive silenced; what is on screen stays.
    ///
    /// - Throws: `invalidRequest` for a Focus with no name, or one allowing an app twice.
    package func setFocus(_ focus: Focus?) async throws {
        if let focus {
            if let problem = DeviceSettings.problem(with: focus) { throw DaemonError(.invalidRequest, problem) }
        }
        let changed = device.conditions.focus != focus
        device.conditions.focus = focus
        try await saveDeviceState()
        if changed { publish(.focusChanged(focus)) }
    }

    /// The Focus that is on, if any.
    package var focus: Focus? { device.conditions.focus }

    /// The person turns the Scheduled Summary on, changes its times, or turns it off with `nil`. Every
    /// app showing something is stepped at once: what it holds moves to the summary it now waits for (a
    /// time already past delivers it now), or, with the summary off, is shown now.
    ///
    /// - Throws: `invalidRequest` for a summary with no time, more than 12, or a time given twice.
    package func setScheduledSummary(_ summary: ScheduledSummary?) async throws {
        if let problem = summary?.problem { throw DaemonError(.invalidRequest, problem) }
        let changed = device.conditions.summary != summary
        device.conditions.summary = summary
        try await saveDeviceState()
        guard changed else { return }
        publish(.summaryChanged(summary))
        try await stepInTurns(try await store.appsShowingNotifications())
    }

    /// The Scheduled Summary, if it is on.
    package var scheduledSummary: ScheduledSummary? { device.conditions.summary }

    /// Whether the device is locked, and whether it has a passcode.
    package var lockState: (isLocked: Bool, hasPasscode: Bool) {
        (device.conditions.isLocked, device.passcode != nil)
    }

    /// The person unlocks the device, with its passcode when it has one.
    ///
    /// - Throws: `wrongPasscode`, counted: after the sixth wrong one in a row the person waits, as on
    ///   iOS (1, 5, 15, then 60 minutes), and meanwhile gets `passcodeAttemptsExceeded`.
    package func unlockDevice(passcode candidate: String?) async throws {
        try await checkPasscode(candidate)
        try await setDeviceLocked(false)
    }

    /// The person sets, changes or removes (`new` nil) the device's passcode, giving the current one
    /// when there is one (checked and counted as an unlock is).
    package func setPasscode(_ new: String?, current: String?) async throws {
        // A new passcode that breaks the rules is refused before the current one is checked or counted.
        if let new { try DevicePasscode.validate(new) }
        try await checkPasscode(current)
        device.passcode = if let new { try await Self.keep(new) } else { nil }
        try await saveDeviceState()
    }

    /// Checks `candidate` against the passcode, if the device has one, off the engine (the key
    /// derivation is slow on purpose), and counts a wrong one.
    private func checkPasscode(_ candidate: String?) async throws(DaemonError) {
        guard let stored = device.passcode else { return }
        let now = clock.now
        if let refusal = device.attemptRefusal(at: now) { throw DaemonError(.passcodeAttemptsExceeded, refusal) }
        let matches = await Self.check(candidate ?? "", against: stored)
        // The passcode may have changed while it was checked: count against the one kept now.
        let before = device.passcode
        guard device.count(attemptMatched: matches, against: stored.salt, at: now) else {
            throw DaemonError(.wrongPasscode, "The passcode changed meanwhile.")
        }
        if device.passcode != before { try await saveDeviceState() }
        guard matches else { throw DaemonError(.wrongPasscode, "Wrong passcode.") }
    }

    @concurrent private static func check(_ candidate: String, against stored: DevicePasscode) async -> Bool {
        stored.matches(candidate)
    }

    @concurrent private static func keep(_ new: String) async throws(DaemonError) -> DevicePasscode {
        try DevicePasscode.make(new)
    }

    private func saveDeviceState() async throws(DaemonError) {
        try await store.saveDeviceState(device.saved)
    }

    /// The device's time zone: its calendar triggers and its Scheduled Summary follow it.
    package var timeZone: TimeZone { device.conditions.timeZone }

    /// The device moved to another time zone. Every app is stepped at once (each step brings the new
    /// zone), so that calendar triggers which follow the device are found at their new dates.
    package func changeTimeZone(_ newTimeZone: TimeZone) async throws {
        device.conditions.timeZone = newTimeZone
        try await saveDeviceState()
        publish(.timeZoneChanged(newTimeZone))
        try await stepInTurns(try await store.apps().map(\.bundleIdentifier))
    }
}
