import Foundation
import Logging
import NotificationCore

/// Apps whose stored state cannot be read: quarantined alone while every other app goes on, and
/// reset on the administrator's word.
extension DaemonEngine {
    /// Quarantines an app whose stored state cannot be read, once per run: said in the log, and
    /// kept by the store, which leaves it out of every index from then on (nothing of it is due,
    /// listed or stepped). Every other app goes on; its calls get `appQuarantined`, and its pushes
    /// are dropped with that reason (``takePushes(_:)``).
    func noteQuarantined(_ bundleIdentifier: String, _ error: DaemonError) async {
        guard quarantines.note(bundleIdentifier) else { return }
        logger.error("an app's stored state cannot be read; the app is quarantined", metadata: [
            "app": .string(bundleIdentifier), "error": .string(error.message),
        ])
        metrics.quarantined()
        noteWakeUp(bundleIdentifier, nil)
        let (store, logger, now) = (self.store, self.logger, clock.now)
        let write = Task {
            do {
                try await store.quarantine(bundleIdentifier, reason: error.message, at: now)
            } catch {
                logger.error("could not record an app's quarantine", metadata: ["app": .string(bundleIdentifier), "error": .string("\(error)")])
            }
        }
        quarantines.writing(bundleIdentifier, write)
        await write.value
        quarantines.written(bundleIdentifier, write)
    }

    /// Starts a quarantined app afresh, as if installed again with its key: its stored state is
    /// set aside in the store for inspection (`set_aside`), its notifications, settings and
    /// categories begin anew, and its strings and extensions stay. Returns how many stored parts
    /// were set aside.
    ///
    /// - Throws: `appNotFound`; `invalidRequest` for an app that is not quarantined.
    package func resetApp(_ bundleIdentifier: String) async throws(DaemonError) -> Int {
        quarantines.beginReset(bundleIdentifier)
        defer { quarantines.endReset(bundleIdentifier) }
        // A quarantine being written lands before the reset, never after it.
        await quarantines.write(of: bundleIdentifier)?.value
        let machine = NotificationCenterMachine(
            now: clock.now, calendar: configuration.calendar, timeZone: device.conditions.timeZone, appState: .notRunning, appReachable: false,
            configuration: configuration.machine
        )
        let setAside = try await store.reset(
            StoredApp(bundleIdentifier: bundleIdentifier, keyHash: "", launchCommand: nil, machine: machine, bootID: bootID), at: clock.now
        )
        quarantines.lift(bundleIdentifier)
        forget(bundleIdentifier)
        held.drop(bundleIdentifier)
        resumeAnswerWaiters(of: bundleIdentifier)
        loads.removeValue(forKey: bundleIdentifier)
        noteWakeUp(bundleIdentifier, nil)
        logger.notice("reset a quarantined app; its stored state is set aside", metadata: [
            "app": .string(bundleIdentifier), "parts": .stringConvertible(setAside),
        ])
        return setAside
    }

    /// Whether `bundleIdentifier` can be read: `false` for an app quarantined (now or before).
    func isReadable(_ bundleIdentifier: String) async throws -> Bool {
        do {
            try await load(bundleIdentifier)
            return true
        } catch let error as DaemonError where error.code == .appQuarantined {
            return false
        }
    }
}
