import Foundation
import Logging
package import NotificationCore

/// Apps read into the engine's memory: one read shared by concurrent callers, resumed after a
/// restart, warmed at start, and let go within the cache's bounds (``AppCache``).
extension DaemonEngine {
    /// The app's machine, from the cache or else from the store (and then kept in the cache). An app
    /// last saved by another run of the daemon is resumed first: its app is not running, and its missed
    /// repeats are skipped; the effects of that wait for the app's next step, which saves it.
    ///
    /// Concurrent callers for the same app share one read of the store.
    func loaded(_ bundleIdentifier: String) async throws -> NotificationCenterMachine {
        try await load(bundleIdentifier)
        guard let app = cache[bundleIdentifier] else { preconditionFailure("an app just loaded is in the cache") }
        return app.machine
    }

    /// Makes sure an app's machine is in the cache (see ``loaded(_:)``), without copying it out: a
    /// step changes it in place.
    ///
    /// `warming` (``warmCache()``): only an app whose read the warm-up started, and only into room the
    /// cache has (nothing leaves for it). Returns whether the app is in the cache.
    @discardableResult
    func load(_ bundleIdentifier: String, warming: Bool = false) async throws -> Bool {
        while true {
            if cache.markUsed(bundleIdentifier) { return true }
            let load: Load
            if let running = loads[bundleIdentifier] {
                load = running
            } else {
                guard !warming else { return false }
                let store = self.store
                load = Load(id: UUID(), resetEpoch: quarantines.readEpoch(of: bundleIdentifier), task: Task {
                    do {
                        return try await store.app(bundleIdentifier).map { [bundleIdentifier: .success($0)] } ?? [:]
                    } catch let error as DaemonError where error.code == .appQuarantined {
                        return [bundleIdentifier: .failure(error)]
                    }
                })
                loads[bundleIdentifier] = load
            }
            let stored: StoredApp?
            do {
                stored = try await load.task.value[bundleIdentifier]?.get()
            } catch {
                if loads[bundleIdentifier]?.id == load.id { loads.removeValue(forKey: bundleIdentifier) }
                // A read begun before or during a reset saw the state the reset sets aside: the app was
                // quarantined then, and is not to be quarantined again for it.
                let current = load.resetEpoch != nil && load.resetEpoch == quarantines.readEpoch(of: bundleIdentifier)
                if current, let error = error as? DaemonError, error.code == .appQuarantined { await noteQuarantined(bundleIdentifier, error) }
                throw error
            }
            // Another caller installed it meanwhile, or the app was removed meanwhile (look again).
            if cache[bundleIdentifier] != nil || loads[bundleIdentifier]?.id != load.id { continue }
            loads.removeValue(forKey: bundleIdentifier)
            guard let stored else {
                // Removed since the warm-up listed it: nothing to warm, and the rest of its read goes on.
                if warming { return false }
                throw DaemonError(.appNotFound, "No app is registered as \(bundleIdentifier). Register it with `unotify apps add \(bundleIdentifier)`.")
            }
            if warming, !cache.hasRoomToWarm(Self.estimatedMemory(of: stored.machine)) { return false }
            var machine = stored.machine
            machine.startRecordingChanges()
            if stored.bootID != bootID {
                resumeEffects[bundleIdentifier] = machine.resume(at: clock.now)
                logger.debug("resumed app after restart", metadata: ["app": .string(bundleIdentifier)])
            }
            trimCache(keeping: bundleIdentifier)
            cache.insert(bundleIdentifier, machine: machine, launchCommand: stored.launchCommand)
            return true
        }
    }

    /// Reads every stored app into the cache, in order and a few at a time, for as long as it fills
    /// at most three quarters of the cache's bounds: the first call for each app after a start then
    /// finds it in memory. One read of the store serves ``appsWarmedAtOnce`` apps, where the first call
    /// of each app would read it alone (a hand-off to a reader and back, and a transaction, per app):
    /// at a million pending requests, a daemon just started served a third as many adds per second as
    /// one whose apps were all in memory (BENCHMARKS.md). Apps being read for a call are left to that
    /// read; a call for an app being warmed waits for the warm-up's read. Run at a low priority: calls
    /// and the scheduler go first. Ends early when its task is cancelled.
    package func warmCache() async {
        guard let apps = try? await store.apps().filter({ $0.quarantined == nil }) else { return }
        let started = ContinuousClock.now
        var warmed = 0
        var next = 0
        warming: while next < apps.count, !Task.isCancelled, cache.hasRoomToWarm(0) {
            let identifiers = apps[next..<min(next + Self.appsWarmedAtOnce, apps.count)]
                .map(\.bundleIdentifier).filter { cache[$0] == nil && loads[$0] == nil }
            next += Self.appsWarmedAtOnce
            guard !identifiers.isEmpty else { continue }
            let store = self.store
            let read = Task { try await store.apps(identifiers) }
            let reads = identifiers.map { bundleIdentifier in
                let load = Load(id: UUID(), resetEpoch: quarantines.readEpoch(of: bundleIdentifier), task: read)
                loads[bundleIdentifier] = load
                return (bundleIdentifier, load.id)
            }
            defer {
                // Reads the warm-up started and nobody took (no room, or a failed read).
                for (bundleIdentifier, id) in reads where loads[bundleIdentifier]?.id == id { loads.removeValue(forKey: bundleIdentifier) }
            }
            for bundleIdentifier in identifiers {
                do {
                    guard try await load(bundleIdentifier, warming: true) else {
                        if !cache.hasRoomToWarm(0) { break warming }
                        continue
                    }
                    warmed += 1
                } catch let error as DaemonError where error.code == .appQuarantined {
                    // That app alone: quarantined (``noteQuarantined(_:_:)``), the others of its read go on.
                    continue
                } catch {
                    logger.debug("could not warm the cache", metadata: ["error": .string("\(error)")])
                    continue warming
                }
            }
        }
        logger.debug("warmed the cache", metadata: [
            "apps": .stringConvertible(warmed), "of": .stringConvertible(apps.count), "took": .stringConvertible(ContinuousClock.now - started),
        ])
    }

    /// How many apps one read of the cache's warm-up brings.
    private static let appsWarmedAtOnce = 64

    /// Drops an app from memory; it is read from the store when next needed (and resumed again if it
    /// was resumed and not saved since).
    @discardableResult
    func forget(_ bundleIdentifier: String) -> CachedApp? {
        if !readAhead.isEmpty { readAhead.removeValue(forKey: bundleIdentifier) }
        if !resumeEffects.isEmpty { resumeEffects.removeValue(forKey: bundleIdentifier) }
        return cache.remove(bundleIdentifier)
    }

    /// Makes room in the cache when it is full, keeping `app` (about to be used); see ``AppCache``.
    func trimCache(keeping app: String, afterGrowth: Bool = false) {
        let evicted = cache.trim(keeping: app, afterGrowth: afterGrowth) { app in
            // An app whose last step is not saved yet stays: the store does not have its state. So does
            // one whose steps wait for their time: carrying them out (a launch) reads its state.
            connections.isConnected(app) || unsavedSteps[app] != nil || readAhead[app] != nil || held.isHolding(app)
        }
        guard !evicted.isEmpty else { return }
        if !resumeEffects.isEmpty { for (app, _) in evicted { resumeEffects.removeValue(forKey: app) } }
        // Freeing an app's requests takes a while (a fifth of a load's cost): off the engine's actor,
        // which every call waits for.
        Task.detached { withExtendedLifetime(evicted) {} }
    }

    /// How many apps are read ahead of their wake-up at most (or a quarter of ``Configuration/cachedApps``).
    static let appsReadAheadAtMost = 2048

    /// The cache's default bound: a sixteenth of the machine's memory, at least 64 MiB.
    package static var defaultCacheMemory: Int {
        max(64 << 20, Int(clamping: ProcessInfo.processInfo.physicalMemory / 16))
    }

    /// What an app's state takes in the daemon's memory, estimated from how many rows it holds:
    /// measured at a million pending requests (BENCHMARKS.md), an app of 64 pending requests and
    /// nothing shown took about 38 KB of the daemon's resident set, allocator's slack included. A
    /// notification shown holds its content decoded, its category's actions and more: counted as
    /// four requests; so is a response waiting for the app.
    package static func estimatedMemory(of machine: NotificationCenterMachine) -> Int {
        let rows = machine.rowCounts
        return 4096 + 540 * rows.pending + 2160 * (rows.visible + rows.queued)
    }
}

/// A read of an app from the store.
struct Load {
    let id: UUID
    /// How many resets of the app had begun when the read began; `nil` if one was under way
    /// (``Quarantines/readEpoch(of:)``).
    let resetEpoch: Int?
    /// The apps read (several when the cache's warm-up read them together), by bundle identifier.
    let task: Task<[String: Result<StoredApp, DaemonError>], any Error>
}
