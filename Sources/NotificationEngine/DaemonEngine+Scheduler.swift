package import Foundation
import Logging
import NotificationCore

/// The scheduler's side of the engine: each round steps the apps with something due (a little ahead
/// of it), and says when to look again; ``SchedulerService`` runs the rounds.
extension DaemonEngine {
    /// Processes the apps with something due by now, one bounded step each, and returns when
    /// something is next due: now or earlier when more is due (the scheduler calls again at once).
    ///
    /// One call does a bounded amount of work, so the engine's other callers (apps, the person, the
    /// presenters) take turns with the scheduler however much is due. An app whose step fails is
    /// retried a minute later rather than at once, so it cannot keep the scheduler spinning.
    @discardableResult
    package func processDue() async -> Date? {
        let next = await processDueRound()?.addingTimeInterval(-configuration.firesAhead)
        // Known only from the store's wake-ups kept up to date: until then, every saved wake-up wakes it.
        scheduledWakeUp = upcoming.horizon == nil ? .distantFuture : next ?? .distantFuture
        return next
    }

    private func processDueRound() async -> Date? {
        let now = clock.now
        // Apps are stepped up to `firesAhead` before their wake-up, each brought to that wake-up.
        let horizon = now.addingTimeInterval(configuration.firesAhead)
        let due: [(bundleIdentifier: String, wakeUp: Date?)]
        do {
            if let known = upcoming.dueWakeUps(by: horizon, limit: Self.appsPerRound) {
                due = known.map { ($0.bundleIdentifier, $0.date) }
            } else {
                due = try await readWakeUps(dueBy: horizon, now: now)
            }
        } catch {
            logger.error("could not read what is due", metadata: ["error": .string("\(error)")])
            return now.addingTimeInterval(Self.retryDelay)
        }
        // Every due app's step is queued, and their saves share one commit, written ahead of the
        // other calls' saves queued meanwhile.
        var tickets: [UInt64] = []
        for (bundleIdentifier, wakeUp) in due {
            do {
                tickets.append(try await queueCatchUp(bundleIdentifier, urgent: true, ahead: wakeUp.flatMap { $0 > now ? $0 : nil }))
            } catch let error as DaemonError where error.code == .appNotFound || error.code == .appQuarantined {
                // Removed since its wake-up was read, or quarantined: nothing of it is due.
                noteWakeUp(bundleIdentifier, nil)
            } catch {
                logger.error("could not process an app", metadata: ["app": .string(bundleIdentifier), "error": .string("\(error)")])
                let retry = now.addingTimeInterval(Self.retryDelay)
                // The record changes behind the cached app's back: its next save writes it whole again.
                cache.forgetRecord(of: bundleIdentifier)
                if (try? await store.postponeWakeUp(of: bundleIdentifier, to: retry)) != nil { noteWakeUp(bundleIdentifier, retry) }
            }
        }
        do {
            for ticket in tickets { try await makeDurable(ticket) }
        } catch {
            return now.addingTimeInterval(Self.retryDelay)
        }
        let next: Date?
        switch upcoming.next {
        case .at(let date): next = date
        case .unknown: next = try? await store.earliestWakeUp()
        }
        if let next, next.timeIntervalSince(now) < Self.readAheadInterval { startReadingAhead(from: now) }
        return next
    }

    /// Reads the store's earliest wake-ups into `upcoming`, and returns the apps due by `horizon`
    /// with their wake-ups, or when `upcoming` cannot say, the apps due by `now` (with none: stepped
    /// at once).
    private func readWakeUps(dueBy horizon: Date, now: Date) async throws -> [(bundleIdentifier: String, wakeUp: Date?)] {
        func dueNow() async throws -> [(bundleIdentifier: String, wakeUp: Date?)] {
            try await store.appsDue(by: now, limit: Self.appsPerRound).map { ($0, nil) }
        }
        // One read at a time; a caller that comes meanwhile asks the store.
        guard wakeUpsSavedDuringRead == nil else { return try await dueNow() }
        wakeUpsSavedDuringRead = []
        let earliest: [(bundleIdentifier: String, date: Date)]
        do {
            earliest = try await store.earliestWakeUps(limit: upcoming.capacity)
        } catch {
            wakeUpsSavedDuringRead = nil
            throw error
        }
        upcoming.load(earliest)
        for (app, wakeUp) in wakeUpsSavedDuringRead ?? [] { upcoming.note(app, wakeUp: wakeUp) }
        wakeUpsSavedDuringRead = nil
        if let due = upcoming.dueWakeUps(by: horizon, limit: Self.appsPerRound) { return due.map { ($0.bundleIdentifier, $0.date) } }
        // More apps wake up by the horizon, or at one time, than one read holds: the rows just read,
        // soonest first, are the first due (a save meanwhile only makes a step find less to do).
        return earliest.lazy.filter { $0.date <= horizon }.prefix(Self.appsPerRound).map { ($0.bundleIdentifier, $0.date) }
    }

    /// Reads the apps due within ``readAheadInterval`` into the cache, off the scheduler's path, so
    /// that firing them waits for no read of the store (behind every other app's read, under load).
    private func startReadingAhead(from now: Date) {
        guard !isReadingAhead else { return }
        isReadingAhead = true
        let stale = now.addingTimeInterval(-10 * Self.readAheadInterval)
        readAhead = readAhead.filter { $0.value > stale }
        Task(priority: .high) {
            defer { self.isReadingAhead = false }
            let soon = now.addingTimeInterval(Self.readAheadInterval)
            var due = upcoming.due(by: soon, limit: Self.appsPerRound)
            if due == nil { due = try? await store.appsDue(by: soon, limit: Self.appsPerRound) }
            guard let due else { return }
            // Never more than a quarter of a cache bounded by count, nor more than `appsReadAheadAtMost`:
            // the rest stays for the apps in use.
            let limit = min((configuration.cachedApps ?? .max) / 4, Self.appsReadAheadAtMost)
            for bundleIdentifier in due where cache[bundleIdentifier] == nil && readAhead.count < limit {
                guard (try? await load(bundleIdentifier)) != nil else { continue }
                readAhead[bundleIdentifier] = now
            }
        }
    }

    /// How far ahead of their wake-up apps are read into the cache, in seconds.
    private static let readAheadInterval: TimeInterval = 1

    /// How many apps one round of the scheduler steps at most.
    private static let appsPerRound = 256
    /// How long an app whose step failed waits before it is tried again, in seconds.
    private static let retryDelay: TimeInterval = 60

    /// Waits until `deadline`, or until a step may have changed what is due next.
    package nonisolated func waitForWork(until deadline: Date?) async {
        let signal = workSignal
        // The alarm signals as a step would: one continuation to resume, whichever comes first. An
        // alarm going off after a step's signal leaves a signal for the next wait, which then looks
        // once more for nothing.
        // At most a minute: the alarm follows the monotonic clock, so the scheduler looks at the wall
        // clock again after a suspend or a change of the system's time.
        let alarm = deadline.map { clock.alarm(at: min($0, clock.now.addingTimeInterval(60))) { signal.signal() } }
        await signal.wait()
        alarm?.cancel()
    }
}
