import Foundation
import NotificationCore

/// The device's settings, kept once for every app and brought to each app at its next step (a lock or
/// a move does not load every app): whether it is locked and its passcode, where it is, its Focus, its
/// Scheduled Summary and its time zone. A value with no I/O: the engine saves ``saved`` before any app
/// is stepped with a change, so it survives a restart; a device never changed starts unlocked, its
/// location unknown, in the configured time zone.
struct DeviceSettings: Sendable, Equatable {
    /// What each app's machine is given at its step.
    var conditions: DeviceConditions
    /// The passcode that unlocks the device on the notification center's page, once the person set one.
    var passcode: DevicePasscode?

    init(timeZone: TimeZone, saved: DeviceState?) {
        conditions = DeviceConditions(timeZone: timeZone)
        guard let saved else { return }
        conditions.isLocked = saved.isLocked
        conditions.location = saved.location
        if let zone = saved.timeZoneIdentifier.flatMap(TimeZone.init(identifier:)) { conditions.timeZone = zone }
        conditions.focus = saved.focus
        conditions.summary = saved.summary
        passcode = saved.passcode
    }

    /// The settings as the store keeps them.
    var saved: DeviceState {
        DeviceState(
            isLocked: conditions.isLocked, location: conditions.location, timeZoneIdentifier: conditions.timeZone.identifier,
            passcode: passcode, focus: conditions.focus, summary: conditions.summary
        )
    }

    /// Why the person cannot turn on `focus`, if they cannot.
    static func problem(with focus: Focus) -> String? {
        guard !focus.name.trimmingCharacters(in: .whitespaces).isEmpty, focus.name.count <= 64 else {
            return "A Focus needs a name of 1 to 64 characters, such as \"Do Not Disturb\"."
        }
        guard Set(focus.allowedApps).count == focus.allowedApps.count else {
            return "allowedApps names an app more than once."
        }
        return nil
    }

    /// Why an unlock cannot be tried at `now` (too many wrong passcodes lately), if it cannot.
    func attemptRefusal(at now: Date) -> String? {
        guard let retryAfter = passcode?.retryAfter, now < retryAfter else { return nil }
        let minutes = Int((retryAfter.timeIntervalSince(now) / 60).rounded(.up))
        return "Too many wrong passcodes: try again in \(minutes) minute\(minutes == 1 ? "" : "s")."
    }

    /// Counts an attempt checked against the passcode whose salt is `salt`: a right one clears the
    /// count, a wrong one adds to it and may make the person wait (``DevicePasscode/wait(after:)``).
    /// Returns `false` when the passcode changed while the attempt was checked (nothing is counted).
    mutating func count(attemptMatched matched: Bool, against salt: Data, at now: Date) -> Bool {
        guard var kept = passcode, kept.salt == salt else { return false }
        if matched {
            kept.failures = 0
            kept.retryAfter = nil
        } else {
            kept.failures += 1
            let wait = DevicePasscode.wait(after: kept.failures)
            kept.retryAfter = wait > 0 ? now.addingTimeInterval(wait) : nil
        }
        passcode = kept
        return true
    }
}
