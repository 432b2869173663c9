internal import DequeModule
import NotificationCore
import Foundation

/// The apps' machines the engine keeps in memory, within a bound of memory (as
/// ``DaemonEngine/estimatedMemory(of:)`` estimates it) and, if set, of count; what leaves is read from
/// the store again when next needed. A step changes an app's machine in place, in its slot here:
/// taking it out and putting it back cost two hash-table updates per call, a tenth of the engine's
/// time under load.
///
/// Apps leave a full cache a few at a time, not half the cache at once: freeing thousands of apps'
/// requests in one go held the engine for tens of milliseconds, and every call waited. They leave in
/// the order they were loaded, an app used since it was last looked at going round once more (the
/// "clock" of page caches). Taking the first apps of the hash table's own order instead, as an earlier
/// version did, packed the remaining keys together and made every lookup in the cache probe long runs
/// of them: a tenth of the engine's time at a million pending.
struct AppCache {
    /// How much memory the apps may take, in bytes.
    let memory: Int
    /// How many apps it holds at most, whatever their size (`.max`: no bound but ``memory``).
    let appsAtMost: Int

    private var apps: [String: CachedApp] = [:]
    /// The ``DaemonEngine/estimatedMemory(of:)`` of every app held, together.
    private(set) var bytes = 0
    /// The order apps leave in. Entries of apps since forgotten are skipped when they come up.
    private var evictionOrder = Deque<EvictionEntry>()
    /// Numbers each load, to tell an app's entry in `evictionOrder` from an earlier one.
    private var loadCount: UInt64 = 0
    /// Whether the last trim ended over the bound with every app left bound to stay.
    private var cannotShrink = false

    /// How many apps leave a full cache together.
    static let appsEvictedAtOnce = 16

    init(memory: Int, appsAtMost: Int?) {
        self.memory = memory
        self.appsAtMost = appsAtMost ?? .max
    }

    var count: Int { apps.count }

    subscript(app: String) -> CachedApp? { apps[app] }

    /// Marks an app used (it goes round once more before it leaves); returns whether it is held.
    mutating func markUsed(_ app: String) -> Bool {
        // In place, one lookup: copying the entry out retains (and then releases) every part of the machine.
        (apps[app]?.recentlyUsed = true) != nil
    }

    /// Holds an app just read from the store. Call ``trim(keeping:afterGrowth:mustStay:)`` first.
    mutating func insert(_ app: String, machine: NotificationCenterMachine, launchCommand: String?) {
        loadCount += 1
        let size = DaemonEngine.estimatedMemory(of: machine)
        bytes += size
        apps[app] = CachedApp(machine: machine, launchCommand: launchCommand, load: loadCount, estimatedBytes: size)
        evictionOrder.append(EvictionEntry(app: app, load: loadCount))
        if evictionOrder.count > 2 * apps.count + 1024 {
            // Mostly apps forgotten since (removed, or dropped after a failed save): keep the others.
            evictionOrder.removeAll { apps[$0.app]?.load != $0.load }
        }
    }

    /// Changes a held app's machine in place; returns what `body` returns and whether the cache is
    /// now over its memory bound because the app grew.
    mutating func change<T>(_ app: String, _ body: (inout NotificationCenterMachine) -> T) -> (T, grewPastBound: Bool) {
        guard apps[app] != nil else { preconditionFailure("an app just loaded is in the cache") }
        let (result, growth) = apps[app]!.change(body)
        bytes += growth
        return (result, growth > 0 && bytes > memory)
    }

    /// Decides whether `save`, of a held app's step, writes its record (``CachedApp/decideRecord(of:)``).
    mutating func decideRecord(of save: inout AppSave) {
        apps[save.bundleIdentifier]!.decideRecord(of: &save)
    }

    /// Forgets what a held app's record in the store holds: its next save writes the record.
    mutating func forgetRecord(of app: String) {
        apps[app]?.record = nil
    }

    @discardableResult
    mutating func remove(_ app: String) -> CachedApp? {
        guard let removed = apps.removeValue(forKey: app) else { return nil }
        bytes -= removed.estimatedBytes
        return removed
    }

    /// Whether the cache's warm-up may add an app of `size` bytes: it fills three quarters at most.
    func hasRoomToWarm(_ size: Int) -> Bool {
        apps.count < appsAtMost - appsAtMost / 4 && bytes + size <= memory - memory / 4
    }

    /// Makes room when the cache is full, keeping `app` (about to be used) and every app `mustStay`
    /// names; returns the apps that left, for the caller to free off its actor (freeing an app's
    /// requests takes a fifth of a load's cost).
    ///
    /// After a step that grew an app (`afterGrowth`), it does not look again while the last look found
    /// every app left bound to stay: a load looks again.
    mutating func trim(keeping app: String, afterGrowth: Bool = false, mustStay: (String) -> Bool) -> [(app: String, cached: CachedApp)] {
        guard apps.count >= appsAtMost || bytes >= memory else { return [] }
        if afterGrowth, cannotShrink { return [] }
        var leaving = appsAtMost == .max ? 0 : max(0, apps.count - max(0, appsAtMost - Self.appsEvictedAtOnce))
        // Down to a little under the bound, so that the next loads do not each evict an app.
        let byteTarget = memory - memory / 64
        // Every entry is looked at once at most: when all of them must stay, the cache grows past its
        // bound for now, and shrinks again on a later load.
        var looked = 0
        let entries = evictionOrder.count
        var evicted: [(app: String, cached: CachedApp)] = []
        evicted.reserveCapacity(leaving)
        while leaving > 0 || bytes > byteTarget, looked < entries, let entry = evictionOrder.popFirst() {
            looked += 1
            guard let cached = apps[entry.app], cached.load == entry.load else { continue }
            if entry.app == app || cached.recentlyUsed || mustStay(entry.app) {
                if cached.recentlyUsed { apps[entry.app]!.recentlyUsed = false }
                evictionOrder.append(entry)
                continue
            }
            if let removed = remove(entry.app) { evicted.append((entry.app, removed)) }
            leaving -= 1
        }
        cannotShrink = looked >= entries && bytes > memory
        return evicted
    }
}

/// An app in the engine's memory.
struct CachedApp: Sendable {
    var machine: NotificationCenterMachine
    /// What starts the app for a response waiting for it.
    let launchCommand: String?
    /// Which load into the cache this is (see ``AppCache``).
    let load: UInt64
    /// ``DaemonEngine/estimatedMemory(of:)`` of the machine as it now is.
    var estimatedBytes: Int
    /// Whether the app was used since the cache last looked at it for eviction.
    var recentlyUsed = false
    /// The app's record in the store as the saves queued so far leave it; nil when not known (until
    /// the first save after a load writes it).
    var record: SavedRecord?

    /// What an app's record in the store holds besides its core and categories.
    struct SavedRecord: Equatable {
        var now: Date
        var reservedSequence: UInt64
        var nextWakeUp: Date?
        var watchesLocation: Bool
        var showsNotifications: Bool
        var preparesContent: Bool
    }

    /// Numbers reserved at once in an app's record: a step that gives out a number within the
    /// reservation need not write the record (a load numbers on from the reservation, past any
    /// number given out).
    static let sequenceReservation: UInt64 = 1024
    /// How far behind its machine's clock an app's record may stay. The stored clock only keeps a
    /// loaded machine's time from going back when the system's clock did.
    static let recordClockLag: TimeInterval = 60

    /// Decides whether `save` writes the app's record: only when it changes something the record holds
    /// (its next wake-up, what is indexed, its core or categories), when its machine has given out the
    /// numbers the record reserved, or when the record's clock would lag by more than ``recordClockLag``.
    /// Most adds change none of it: they write their request's row alone.
    mutating func decideRecord(of save: inout AppSave) {
        let changes = save.changes
        if let record, changes.core == nil, changes.categories == nil, changes.nextSequence <= record.reservedSequence,
           changes.now.timeIntervalSince(record.now) < Self.recordClockLag, save.nextWakeUp == record.nextWakeUp,
           save.watchesLocation == record.watchesLocation, save.showsNotifications == record.showsNotifications,
           save.preparesContent == record.preparesContent {
            save.writesAppRecord = false
            save.reservedSequence = record.reservedSequence
            return
        }
        save.writesAppRecord = true
        save.reservedSequence = changes.nextSequence + Self.sequenceReservation
        record = SavedRecord(
            now: changes.now, reservedSequence: save.reservedSequence, nextWakeUp: save.nextWakeUp, watchesLocation: save.watchesLocation,
            showsNotifications: save.showsNotifications, preparesContent: save.preparesContent
        )
    }

    /// Changes the machine in place; returns what `body` returns and how much the estimate grew.
    mutating func change<T>(_ body: (inout NotificationCenterMachine) -> T) -> (T, Int) {
        let result = body(&machine)
        let bytes = DaemonEngine.estimatedMemory(of: machine)
        defer { estimatedBytes = bytes }
        return (result, bytes - estimatedBytes)
    }
}

/// An app's place in the order apps leave the cache (see ``AppCache``).
private struct EvictionEntry {
    let app: String
    /// Which load of the app it is: an entry of an earlier load is stale.
    let load: UInt64
}
