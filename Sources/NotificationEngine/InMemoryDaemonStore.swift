package import Foundation
package import NotificationCore
import Synchronization

/// A ``DaemonStore`` that keeps everything in memory, for an engine whose notifications live no longer
/// than its process: the system inside an app's own process, and tests of the engine.
///
/// It keeps what a durable store keeps, as values: each app's record and its rows (pending, shown,
/// waiting for the app), written row by row as each step's ``NotificationCenterMachine/Changes``
/// say, so a load gives back the machine a durable store would. Every method is atomic (one lock);
/// nothing waits for a disk. `DaemonStoreConformanceTests` runs against it as against the others.
package final class InMemoryDaemonStore: DaemonStore {
    /// An app as kept: its registration, its machine's record and rows, and what is indexed about it.
    private struct Record {
        var keyHash: String
        var launchCommand: String?
        var bootID: String
        var now: Date
        var nextSequence: UInt64
        var core: NotificationCenterMachine.Core
        var categories: [NotificationCategory]
        var pending: [String: NotificationCenterMachine.PendingRequest] = [:]
        var visible: [String: NotificationCenterMachine.VisibleRow] = [:]
        var queued: [Int64: NotificationCenterMachine.QueuedRow] = [:]
        var nextWakeUp: Date?
        var watchesLocation: Bool
        var showsNotifications: Bool
        var preparesContent = false
        var quarantine: Quarantine?
        var resources: [AppResource: Data] = [:]

        /// A new app's record, with every row of its machine.
        init(_ app: StoredApp) {
            var machine = app.machine
            let whole = machine.takeWhole()
            guard let core = whole.core else { preconditionFailure("a whole machine always has its core") }
            keyHash = app.keyHash
            launchCommand = app.launchCommand
            bootID = app.bootID
            now = whole.now
            nextSequence = whole.nextSequence
            self.core = core
            categories = whole.categories ?? []
            nextWakeUp = machine.nextWakeUpDate()
            watchesLocation = machine.watchesLocation
            showsNotifications = machine.showsSomethingToThePerson
            write(whole)
        }

        /// Applies one step's save: its record, when it writes it, then its rows.
        mutating func apply(_ save: AppSave, bootID: String) {
            if save.writesAppRecord {
                now = save.changes.now
                nextSequence = save.reservedSequence
                nextWakeUp = save.nextWakeUp
                self.bootID = bootID
                watchesLocation = save.watchesLocation
                showsNotifications = save.showsNotifications
                preparesContent = save.preparesContent
            }
            write(save.changes)
        }

        /// Writes the rows in `changes`: removed ones first, then the written ones over what was there.
        mutating func write(_ changes: NotificationCenterMachine.Changes) {
            if let changed = changes.core { core = changed }
            if let changed = changes.categories { categories = changed }
            for identifier in changes.removedPending { pending.removeValue(forKey: identifier) }
            for entry in changes.pending { pending[entry.request.identifier] = entry }
            for identifier in changes.removedVisible { visible.removeValue(forKey: identifier) }
            for row in changes.visible { visible[row.shown.notification.request.identifier] = row }
            for position in changes.removedQueued { queued.removeValue(forKey: position) }
            for row in changes.queued { queued[row.position] = row }
        }

        /// The machine as last saved.
        var machine: NotificationCenterMachine {
            NotificationCenterMachine(
                now: now, nextSequence: nextSequence, core: core, categories: categories,
                pending: Array(pending.values), visible: Array(visible.values), queued: Array(queued.values)
            )
        }

        /// Leaves every index: nothing of the app is due, shown, watched or prepared.
        mutating func leaveIndexes() {
            nextWakeUp = nil
            watchesLocation = false
            showsNotifications = false
            preparesContent = false
        }
    }

    private struct State {
        var apps: [String: Record] = [:]
        /// How many parts of each app were set aside by resets.
        var setAside: [String: Int] = [:]
        var device: DeviceState?
        var linkSequence: Int64 = 0
        /// The delivery-log reports not yet forgotten, oldest first, each with its number.
        var reports: [(number: Int64, report: DeliveryLog.Report)] = []
        var lastReportNumber: Int64 = 0

        mutating func record(_ reports: [DeliveryLog.Report]) {
            guard !reports.isEmpty else { return }
            for report in reports {
                lastReportNumber += 1
                self.reports.append((lastReportNumber, report))
            }
            // Bounded while the gateway is out of reach: the oldest go first.
            let excess = self.reports.count - Int(deliveryReportLimit)
            if excess > 0 { self.reports.removeFirst(excess) }
        }

        mutating func recordLinkSequence(_ sequence: Int64) {
            linkSequence = max(linkSequence, sequence)
        }

        func registered(_ bundleIdentifier: String) throws(DaemonError) -> Record {
            guard let record = apps[bundleIdentifier] else { throw DaemonError(.appNotFound, "No app is registered as \(bundleIdentifier).") }
            return record
        }

        /// The apps for which `isIndexed` holds, by bundle identifier.
        func apps(where isIndexed: (Record) -> Bool) -> [String] {
            apps.filter { isIndexed($0.value) }.keys.sorted()
        }

        /// The apps with a wake-up, soonest first (by bundle identifier for the same date).
        var wakeUps: [(bundleIdentifier: String, date: Date)] {
            apps.compactMap { entry in entry.value.nextWakeUp.map { (bundleIdentifier: entry.key, date: $0) } }
                .sorted { ($0.date, $0.bundleIdentifier) < ($1.date, $1.bundleIdentifier) }
        }
    }

    private let state = Mutex(State())

    /// An empty store.
    package init() {}

    package func insert(_ app: StoredApp) async throws(DaemonError) {
        try state.withLock { (state: inout State) throws(DaemonError) in
            guard state.apps[app.bundleIdentifier] == nil else {
                throw DaemonError(.appAlreadyRegistered, "An app with the bundle identifier \(app.bundleIdentifier) is already registered.")
            }
            state.apps[app.bundleIdentifier] = Record(app)
        }
    }

    package func app(_ bundleIdentifier: String) async throws(DaemonError) -> StoredApp? {
        try await apps([bundleIdentifier])[bundleIdentifier]?.get()
    }

    package func apps(_ bundleIdentifiers: [String]) async throws(DaemonError) -> [String: Result<StoredApp, DaemonError>] {
        let records = state.withLock { state in bundleIdentifiers.compactMap { name in state.apps[name].map { (name, $0) } } }
        var apps: [String: Result<StoredApp, DaemonError>] = [:]
        for (name, record) in records {
            if let quarantine = record.quarantine {
                apps[name] = .failure(.quarantined(name, because: quarantine.reason))
            } else {
                apps[name] = .success(StoredApp(bundleIdentifier: name, keyHash: record.keyHash, launchCommand: record.launchCommand,
                                                machine: record.machine, bootID: record.bootID))
            }
        }
        return apps
    }

    package func bundleIdentifier(forKeyHash keyHash: String) async throws(DaemonError) -> String? {
        state.withLock { state in state.apps.first { $0.value.keyHash == keyHash }?.key }
    }

    package func save(_ saves: [AppSave], bootID: String) async throws(DaemonError) {
        state.withLock { state in
            // Each record changed where it is kept: a copy taken out would copy its tables whole.
            // An app removed meanwhile has no record to change, and no rows to write.
            for save in saves { state.apps[save.bundleIdentifier]?.apply(save, bootID: bootID) }
            state.record(saves.flatMap(\.deliveryReports))
            if let sequence = saves.compactMap(\.linkSequence).max() { state.recordLinkSequence(sequence) }
        }
    }

    /// Nothing here waits for a disk.
    package func waitForTheDisk() async throws(DaemonError) {}

    package func resources(of bundleIdentifier: String) async throws(DaemonError) -> [AppResource: Data] {
        state.withLock { $0.apps[bundleIdentifier]?.resources ?? [:] }
    }

    package func setResource(_ resource: AppResource, of bundleIdentifier: String, to value: Data?) async throws(DaemonError) {
        try state.withLock { (state: inout State) throws(DaemonError) in
            _ = try state.registered(bundleIdentifier)
            state.apps[bundleIdentifier]?.resources[resource] = value
        }
    }

    package func replaceKey(of bundleIdentifier: String, with keyHash: String) async throws(DaemonError) {
        try state.withLock { (state: inout State) throws(DaemonError) in
            _ = try state.registered(bundleIdentifier)
            state.apps[bundleIdentifier]?.keyHash = keyHash
        }
    }

    package func delete(_ bundleIdentifier: String) async throws(DaemonError) {
        try state.withLock { (state: inout State) throws(DaemonError) in
            _ = try state.registered(bundleIdentifier)
            state.apps.removeValue(forKey: bundleIdentifier)
            state.setAside.removeValue(forKey: bundleIdentifier)
        }
    }

    package func apps() async throws(DaemonError) -> [(bundleIdentifier: String, launchCommand: String?, quarantined: Quarantine?)] {
        state.withLock { state in
            state.apps.keys.sorted().map { name in
                let record = state.apps[name]!
                return (bundleIdentifier: name, launchCommand: record.launchCommand, quarantined: record.quarantine)
            }
        }
    }

    package func quarantine(_ bundleIdentifier: String, reason: String, at date: Date) async throws(DaemonError) {
        state.withLock { state in
            guard state.apps[bundleIdentifier] != nil, state.apps[bundleIdentifier]?.quarantine == nil else { return }
            state.apps[bundleIdentifier]?.quarantine = Quarantine(reason: reason, since: date)
            state.apps[bundleIdentifier]?.leaveIndexes()
        }
    }

    package func reset(_ app: StoredApp, at date: Date) async throws(DaemonError) -> Int {
        try state.withLock { (state: inout State) throws(DaemonError) -> Int in
            let bundleIdentifier = app.bundleIdentifier
            let old = try state.registered(bundleIdentifier)
            guard old.quarantine != nil else {
                throw DaemonError(.invalidRequest, "\(bundleIdentifier) is not quarantined: its state can be read, and is kept.")
            }
            // Its core, its categories, and each of its rows.
            let parts = 2 + old.pending.count + old.visible.count + old.queued.count
            state.setAside[bundleIdentifier, default: 0] += parts
            var fresh = Record(app)
            fresh.keyHash = old.keyHash
            fresh.launchCommand = old.launchCommand
            fresh.resources = old.resources
            state.apps[bundleIdentifier] = fresh
            return parts
        }
    }

    package func appsDue(by date: Date, limit: Int) async throws(DaemonError) -> [String] {
        state.withLock { state in state.wakeUps.prefix { $0.date <= date }.prefix(limit).map(\.bundleIdentifier) }
    }

    package func appsWatchingLocation() async throws(DaemonError) -> [String] {
        state.withLock { $0.apps(where: \.watchesLocation) }
    }

    package func appsShowingNotifications() async throws(DaemonError) -> [String] {
        state.withLock { $0.apps(where: \.showsNotifications) }
    }

    package func appsPreparingContent() async throws(DaemonError) -> [String] {
        state.withLock { $0.apps(where: \.preparesContent) }
    }

    package func postponeWakeUp(of bundleIdentifier: String, to date: Date) async throws(DaemonError) {
        state.withLock { $0.apps[bundleIdentifier]?.nextWakeUp = date }
    }

    package func deviceState() async throws(DaemonError) -> DeviceState? {
        state.withLock { $0.device }
    }

    package func saveDeviceState(_ device: DeviceState) async throws(DaemonError) {
        state.withLock { $0.device = device }
    }

    package func earliestWakeUp() async throws(DaemonError) -> Date? {
        state.withLock { state in state.apps.values.compactMap(\.nextWakeUp).min() }
    }

    package func earliestWakeUps(limit: Int) async throws(DaemonError) -> [(bundleIdentifier: String, date: Date)] {
        state.withLock { Array($0.wakeUps.prefix(limit)) }
    }

    package func linkSequence() async throws(DaemonError) -> Int64 {
        state.withLock { $0.linkSequence }
    }

    package func saveLinkSequence(_ sequence: Int64, reports: [DeliveryLog.Report]) async throws(DaemonError) {
        state.withLock { state in
            state.record(reports)
            state.recordLinkSequence(sequence)
        }
    }

    package func deliveryReports(limit: Int) async throws(DaemonError) -> (through: Int64, reports: [DeliveryLog.Report])? {
        state.withLock { state in
            let oldest = state.reports.prefix(limit)
            guard let last = oldest.last else { return nil }
            return (last.number, oldest.map(\.report))
        }
    }

    package func forgetDeliveryReports(through number: Int64) async throws(DaemonError) {
        state.withLock { $0.reports.removeAll { $0.number <= number } }
    }

    package func waitingCounts() async throws(DaemonError) -> (appMessages: Int, deliveryReports: Int) {
        state.withLock { state in (state.apps.values.reduce(0) { $0 + $1.queued.count }, state.reports.count) }
    }
}
