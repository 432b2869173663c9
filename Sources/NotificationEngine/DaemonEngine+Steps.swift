import Foundation
import Logging
import NotificationAttachmentStore
import NotificationCore

/// How an app is stepped: its machine changed in the cache, the save queued for the group commit,
/// and what the step does carried out once the save is durable (at once, or at its time).
extension DaemonEngine {
    /// Runs one step for an app: loads it, brings it up to the current time, applies `body`, and
    /// returns once the new state is durable and the step's effects are carried out. When `body`
    /// throws, nothing is saved and nothing happens.
    ///
    /// Saves are group-committed: the steps of concurrent callers (of any apps) queue their saves, and
    /// one of them writes all that is queued in one transaction while the others wait; then the
    /// effects of each step are carried out, in the order of the steps. Nothing is told about a step
    /// before it is durable, so a crash at any moment leaves the state before a step or after it.
    /// (Durable across a power cut too unless `waitsForTheDisk` is false: see
    /// ``AppSave/waitsForTheDisk`` for the steps that need not be.)
    func step<T, Failure: Error>(
        _ bundleIdentifier: String,
        linkSequence: Int64? = nil,
        waitsForTheDisk: Bool = true,
        _ body: (inout NotificationCenterMachine) throws(Failure) -> (T, [NotificationCenterMachine.Effect])
    ) async throws -> T {
        let (value, ticket) = try await stepQueued(bundleIdentifier, linkSequence: linkSequence, waitsForTheDisk: waitsForTheDisk, body)
        try await makeDurable(ticket)
        return value
    }

    /// Runs one step in memory and queues its save; returns the step's value and the ticket that
    /// ``makeDurable(_:)`` waits for. The engine's cache holds the new state at once, so the next step
    /// of the app starts from it (its save is queued after this one, and cannot be durable without it).
    func stepQueued<T, Failure: Error>(
        _ bundleIdentifier: String,
        linkSequence: Int64? = nil,
        waitsForTheDisk: Bool = true,
        urgent: Bool = false,
        ahead time: Date? = nil,
        _ body: (inout NotificationCenterMachine) throws(Failure) -> (T, [NotificationCenterMachine.Effect])
    ) async throws -> (T, UInt64) {
        // The only suspension: from here on the step runs to its end without letting another in.
        try await load(bundleIdentifier)
        if !readAhead.isEmpty { readAhead.removeValue(forKey: bundleIdentifier) }
        let pending = resumeEffects.isEmpty ? [] : resumeEffects[bundleIdentifier] ?? []
        let (now, device) = (max(clock.now, time ?? .distantPast), device.conditions.applying(to: bundleIdentifier))
        let showAt = time.flatMap { $0 > clock.now ? $0 : nil }
        // Bounded: an app with more due than this at once is caught up by the scheduler over several
        // steps, taking turns with every other app that has something due.
        let step = withCachedMachine(of: bundleIdentifier) { machine in
            machine.step(at: now, device: device, pending: pending, atMost: Self.wakeUpsPerStep, body)
        }
        switch step.result {
        case .success(let value):
            // A step that caught up on something (a notification fell due) waits for the disk whatever
            // its body did.
            return (value, queueSave(for: bundleIdentifier, effects: step.effects, linkSequence: linkSequence,
                                     waitsForTheDisk: waitsForTheDisk || step.caughtUp, urgent: urgent, showAt: showAt))
        case .failure(let error):
            // The body changed nothing; what catching up did is saved, and carried out, before the
            // caller hears of the failure.
            if step.changed {
                let ticket = queueSave(for: bundleIdentifier, effects: step.effects, urgent: urgent, showAt: showAt)
                try? await makeDurable(ticket)
            }
            throw error
        }
    }

    /// Changes an app's machine in place, in the cache (where ``loaded(_:)`` has just put it).
    private func withCachedMachine<T>(of bundleIdentifier: String, _ body: (inout NotificationCenterMachine) -> T) -> T {
        let (result, grewPastBound) = cache.change(bundleIdentifier, body)
        // An app that grew past the bound makes room by others leaving, as a load does.
        if grewPastBound { trimCache(keeping: bundleIdentifier, afterGrowth: true) }
        return result
    }

    /// Queues the save of the step an app's machine in the cache has just taken (its changes, the
    /// files it no longer refers to); returns the ticket that ``makeDurable(_:)`` waits for.
    private func queueSave(
        for bundleIdentifier: String,
        effects: [NotificationCenterMachine.Effect],
        linkSequence: Int64? = nil,
        waitsForTheDisk: Bool = true,
        urgent: Bool = false,
        showAt: Date? = nil
    ) -> UInt64 {
        var (save, unusedFiles, isSettled) = withCachedMachine(of: bundleIdentifier) { machine in
            (AppSave(bundleIdentifier: bundleIdentifier, machine: &machine), machine.takeUnreferencedAttachments(), machine.openTickets == 0)
        }
        cache.decideRecord(of: &save)
        save.linkSequence = linkSequence
        save.waitsForTheDisk = waitsForTheDisk
        let ticket = commits.enqueue(QueuedSave(save: save, effects: effects, unusedFiles: unusedFiles, isSettled: isSettled, isUrgent: urgent, showAt: showAt))
        unsavedSteps[bundleIdentifier, default: 0] += 1
        if !resumeEffects.isEmpty { resumeEffects.removeValue(forKey: bundleIdentifier) }
        return ticket
    }

    /// Queues a step that only brings an app up to date (fires what is due, applies the device's
    /// state); returns its ticket. An urgent step's save is written ahead of the others queued. A step
    /// `ahead` brings the app to that time, and what it does is carried out then.
    func queueCatchUp(_ bundleIdentifier: String, urgent: Bool = false, ahead time: Date? = nil) async throws -> UInt64 {
        try await stepQueued(bundleIdentifier, urgent: urgent, ahead: time) { (_: inout NotificationCenterMachine) throws(Never) in ((), []) }.1
    }

    /// Returns once the save of `ticket` is durable and the effects of its step (and of every earlier
    /// step of the same app) are carried out; throws when its save failed. Which saves are written
    /// together is ``GroupCommit``'s choice; the caller it hands a batch to writes it.
    func makeDurable(_ ticket: UInt64) async throws {
        while true {
            switch commits.next(for: ticket) {
            case .resolved(let failure):
                if let failure { throw failure }
                return
            case .wait:
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in progressWaiters.append(continuation) }
            case .write(let batch):
                do {
                    try await store.save(batch.map(\.item.save), bootID: bootID)
                    if batch.contains(where: { !$0.item.save.deliveryReports.isEmpty }) { reportWatchers.notify() }
                    for entry in batch { finish(entry.item) }
                    commits.written(batch)
                } catch {
                    // What the store's index holds is no longer known for sure: the scheduler's next round
                    // reads it again (not at once: a store that fails every save would keep it spinning).
                    upcoming.forgetAll()
                    // The states queued after this batch were built on the states just lost: none is kept.
                    let lost = commits.failed(batch, error)
                    logger.error("could not save", metadata: ["steps": .stringConvertible(lost.count), "error": .string("\(error)")])
                    for entry in lost {
                        forget(entry.item.save.bundleIdentifier)
                        noteSaved(entry.item.save.bundleIdentifier)
                        // Whoever waits for the app to settle hears of it now: nothing more of it is under way.
                        answerWaiters.resumeAll(of: entry.item.save.bundleIdentifier)
                    }
                }
                let waiters = progressWaiters
                progressWaiters.removeAll()
                waiters.forEach { $0.resume() }
            }
        }
    }

    /// The apps whose steps wait for the next write, in order (for tests).
    var queuedSaveApps: [String] { commits.queued.map(\.item.save.bundleIdentifier) }

    /// Carries out what a step does once its save is durable.
    func finish(_ item: QueuedSave) {
        let app = item.save.bundleIdentifier
        noteSaved(app)
        noteWakeUp(app, item.save.nextWakeUp)
        // Only once the state that no longer refers to them is saved: a crash before this line leaves
        // a stray file behind, never a notification without its file.
        if !item.unusedFiles.isEmpty { attachmentStore(of: app)?.release(item.unusedFiles) }
        if let showAt = item.showAt, showAt > clock.now {
            held.hold(app, item.effects, isSettled: item.isSettled, until: showAt)
            // The alarm's action runs on the clock's thread; the effects are carried out on the actor.
            _ = self.clock.alarm(at: showAt) { Task(priority: .high) { await self.carryOutHeld(of: app, through: showAt) } }
        } else if !held.holdBehind(app, item.effects, isSettled: item.isSettled) {
            // Nothing of the app waits for its time: carried out now (else after what waits, in order).
            carryOut(item.effects, for: app)
            if item.isSettled, unsavedSteps[app] == nil { resumeAnswerWaiters(of: app) }
        }
    }

    /// Carries out everything held for its time, at once: the daemon is stopping, and what is durable
    /// is better shown a few milliseconds early than not at all.
    package func carryOutEverythingHeld() {
        for app in held.apps { carryOutHeld(of: app, through: .distantFuture) }
    }

    /// Carries out, in order, what an app's steps taken ahead of their time do once that time has come,
    /// and what its later steps did meanwhile. `time` has come, whatever the wall clock says (the
    /// alarm that calls this follows the monotonic clock).
    private func carryOutHeld(of app: String, through time: Date) {
        let now = max(clock.now, time)
        while let step = held.takeNext(of: app, through: now) {
            carryOut(step.effects, for: app)
            if !held.isHolding(app), step.isSettled, unsavedSteps[app] == nil { resumeAnswerWaiters(of: app) }
        }
    }

    func resumeAnswerWaiters(of app: String) {
        answerWaiters.resumeAll(of: app)
    }

    /// Keeps `upcoming` as the store now is, after a durable change of an app's next wake-up, and
    /// wakes the scheduler when the app now wakes up before it would.
    func noteWakeUp(_ app: String, _ wakeUp: Date?) {
        upcoming.note(app, wakeUp: wakeUp)
        wakeUpsSavedDuringRead?.append((app, wakeUp))
        if let wakeUp, wakeUp.addingTimeInterval(-configuration.firesAhead) < scheduledWakeUp { workSignal.signal() }
    }

    private func noteSaved(_ app: String) {
        guard let count = unsavedSteps[app] else { return }
        unsavedSteps[app] = count > 1 ? count - 1 : nil
    }

    /// The folder an app's attachment files are copied into, when the daemon copies them.
    func attachmentStore(of bundleIdentifier: String) -> AttachmentStore? {
        // The identifier names a folder: one that is not a bundle identifier (stored before the rule
        // was enforced) names none, so nothing outside the store is ever touched.
        guard RequestRules.violation(inBundleIdentifier: bundleIdentifier) == nil else { return nil }
        return configuration.attachmentStore.map { store in
            let root = configuration.attachmentFolderPerApp ? store.appendingPathComponent(bundleIdentifier, isDirectory: true) : store
            return AttachmentStore(root: root, privateFolder: configuration.privateFolder)
        }
    }

    /// A non-throwing body's step.
    func step(_ bundleIdentifier: String, _ body: (inout NotificationCenterMachine) -> [NotificationCenterMachine.Effect]) async throws {
        try await step(bundleIdentifier) { (machine: inout NotificationCenterMachine) throws(Never) in ((), body(&machine)) }
    }

    /// Reads an app's state. An app with nothing due (and not just resumed) is read as it is, without
    /// a write; otherwise a step brings it up to date (and saves it) first.
    func read<T>(_ bundleIdentifier: String, _ body: (NotificationCenterMachine) -> T) async throws -> T {
        var machine = try await loaded(bundleIdentifier)
        if resumeEffects[bundleIdentifier] == nil, !(machine.nextWakeUpDate().map { $0 <= clock.now } ?? false) {
            return body(machine)
        }
        return try await step(bundleIdentifier) { (machine: inout NotificationCenterMachine) throws(Never) in (body(machine), []) }
    }

    /// Steps each of `apps` once, a few at a time, letting the engine's other callers in between: a
    /// change that concerns every app does not hold up the app that is adding a request meanwhile.
    func stepInTurns(_ apps: [String]) async throws {
        for chunk in stride(from: 0, to: apps.count, by: 16).map({ apps[$0..<min($0 + 16, apps.count)] }) {
            var tickets: [UInt64] = []
            for app in chunk where try await isReadable(app) { tickets.append(try await queueCatchUp(app)) }
            for ticket in tickets { try await makeDurable(ticket) }
        }
    }
}

/// A step's save waiting for the next group commit, and what to do once it is durable.
struct QueuedSave: GroupCommitItem {
    let save: AppSave
    let effects: [NotificationCenterMachine.Effect]
    let unusedFiles: [URL]
    /// Whether the app had answered every `willPresent` question and confirmed every response.
    let isSettled: Bool
    /// Whether it is the scheduler's, written ahead of the others queued.
    let isUrgent: Bool
    /// For a step taken ahead of its time: that time, when what it does is carried out.
    let showAt: Date?

    var app: String { save.bundleIdentifier }
    var namesLinkSequence: Bool { save.linkSequence != nil }
}
