package import Foundation
package import NotificationCore

/// An app as the daemon keeps it.
package struct StoredApp: Sendable {
    package var bundleIdentifier: String
    /// The SHA-256 of the app's key, hex-encoded; the key itself is never stored.
    package var keyHash: String
    /// A shell command the daemon runs to start the app when a response is waiting for it.
    package var launchCommand: String?
    /// Everything about the app's notifications: authorization, settings, categories, pending,
    /// delivered, badge and the responses waiting for it.
    package var machine: NotificationCenterMachine
    /// The run of the daemon that last saved the app; a different one means the daemon restarted since.
    package var bootID: String

    package init(bundleIdentifier: String, keyHash: String, launchCommand: String?, machine: NotificationCenterMachine, bootID: String) {
        self.bundleIdentifier = bundleIdentifier
        self.keyHash = keyHash
        self.launchCommand = launchCommand
        self.machine = machine
        self.bootID = bootID
    }
}

/// The device's own state, kept once for every app: whether it is locked, where it is, its time
/// zone (which the person may have changed with `unotify device --time-zone`), and its passcode.
package struct DeviceState: Sendable, Hashable {
    package var isLocked: Bool
    package var location: Coordinate?
    package var timeZoneIdentifier: String?
    /// The passcode that unlocks the device on the notification center's page, once the person set one.
    package var passcode: DevicePasscode?
    /// The Focus the person turned on, if any.
    package var focus: Focus?
    /// The Scheduled Summary, if the person turned it on.
    package var summary: ScheduledSummary?

    package init(
        isLocked: Bool = false, location: Coordinate? = nil, timeZoneIdentifier: String? = nil, passcode: DevicePasscode? = nil, focus: Focus? = nil,
        summary: ScheduledSummary? = nil
    ) {
        self.isLocked = isLocked
        self.location = location
        self.timeZoneIdentifier = timeZoneIdentifier
        self.passcode = passcode
        self.focus = focus
        self.summary = summary
    }
}

/// What an app brings with it beside its notifications, each kept by the store as the JSON the
/// daemon was given: its strings (a push's `loc-key` looked up in them) and its extensions'
/// registrations. They belong to the app's registration: removing the app removes them, resetting a
/// quarantined app keeps them.
package enum AppResource: String, Sendable, CaseIterable {
    /// The table a push's `loc-key`, `title-loc-key` and `subtitle-loc-key` are looked up in.
    case strings
    /// The service extension a `mutable-content` push goes through.
    case serviceExtension
    /// The content extension that draws the app's categories' notifications when expanded.
    case contentExtension
    /// The app's display name and icon (``AppIdentity``).
    case identity
}

/// What one step of an app changed, to save: the rows it wrote, and what the store indexes about the app.
package struct AppSave: Sendable {
    package var bundleIdentifier: String
    package var changes: NotificationCenterMachine.Changes
    /// When the app next has something due.
    package var nextWakeUp: Date?
    /// Whether a pending request waits for the device to enter or leave a region.
    package var watchesLocation: Bool
    /// Whether the person can see one of the app's notifications or its authorization prompt.
    package var showsNotifications: Bool
    /// Whether the app's service extension is preparing one of its pushes.
    package var preparesContent = false
    /// For the step that received a push from the gateway, the push's sequence on the device link:
    /// saved with the step, so that a push is delivered once however the daemon stops.
    package var linkSequence: Int64?
    /// Stages of pushes from the gateway that the step noted, for its delivery log: saved with the
    /// step, sent up the link later (``DaemonStore/deliveryReports(limit:)``).
    package var deliveryReports: [DeliveryLog.Report] = []
    /// Whether the app's own record is written: its clock, its sequence, its next wake-up and what is
    /// indexed about it (its core and categories are written whenever they changed). When not, the
    /// record stays as the last save that wrote it left it, and only the step's rows are written.
    package var writesAppRecord = true
    /// Whether the save must be on the disk before the step's effects (a power cut must not undo
    /// it). A step that only takes an app's answer to `willPresent` need not: a power cut that undoes
    /// it leaves the question open, and the app is asked again; a crash of the process undoes nothing
    /// written. Nor need a push received from the gateway: the link acknowledges it only once
    /// ``DaemonStore/waitForTheDisk()`` returns, so the gateway sends again what a power cut undid.
    /// A batch is synced when any of its saves must be.
    package var waitsForTheDisk = true
    /// The sequence the app's record keeps, from which a load numbers on: at least every number the
    /// machine gave out, so none is given out twice (``NotificationCenterMachine/Changes/nextSequence``
    /// unless the caller reserves more at once).
    package var reservedSequence: UInt64

    package init(bundleIdentifier: String, changes: NotificationCenterMachine.Changes, nextWakeUp: Date?, watchesLocation: Bool, showsNotifications: Bool) {
        self.bundleIdentifier = bundleIdentifier
        self.changes = changes
        self.reservedSequence = changes.nextSequence
        self.nextWakeUp = nextWakeUp
        self.watchesLocation = watchesLocation
        self.showsNotifications = showsNotifications
    }

    /// The save of a step that left `machine` as it is, taking the changes it noted.
    package init(bundleIdentifier: String, machine: inout NotificationCenterMachine) {
        self.bundleIdentifier = bundleIdentifier
        self.changes = machine.takeChanges()
        self.reservedSequence = changes.nextSequence
        self.nextWakeUp = machine.nextWakeUpDate()
        self.watchesLocation = machine.watchesLocation
        self.showsNotifications = machine.showsSomethingToThePerson
        self.preparesContent = !machine.preparing.isEmpty
        self.deliveryReports = machine.takeDeliveryReports()
    }
}

/// Where the daemon keeps every app's state. Every method is atomic: it happens completely or not at
/// all. Every method is `async`: an implementation does its I/O off the caller's thread (the SQLite
/// store on GRDB's queues; a networked one on its event loop). `DaemonStoreConformanceTests` is what
/// any implementation must pass.
package protocol DaemonStore: Sendable {
    /// Registers a new app. Throws `appAlreadyRegistered` if the bundle identifier is taken.
    func insert(_ app: StoredApp) async throws(DaemonError)
    /// The app with this bundle identifier, if registered. Throws `appQuarantined` for an app whose
    /// stored state cannot be read (see ``apps(_:)``).
    func app(_ bundleIdentifier: String) async throws(DaemonError) -> StoredApp?
    /// The apps with these bundle identifiers that are registered, read together (in one transaction
    /// where the store has them). An app whose stored state cannot be read (it does not decode, or
    /// was quarantined: ``quarantine(_:reason:at:)``) is there as an `appQuarantined` failure, and
    /// fails no other app of the read.
    func apps(_ bundleIdentifiers: [String]) async throws(DaemonError) -> [String: Result<StoredApp, DaemonError>]
    /// The bundle identifier of the app whose key hashes to `keyHash`.
    func bundleIdentifier(forKeyHash keyHash: String) async throws(DaemonError) -> String?
    /// Saves what several steps changed, in one transaction and in order (each step's changes apply
    /// over the ones before it): all of them or none. A save for an app that is no longer registered
    /// is skipped. A load gives the machine the clock and sequence of the last save that wrote the
    /// app's record (``AppSave/writesAppRecord``), the sequence as ``AppSave/reservedSequence``.
    /// Durable across a power cut when any of them ``AppSave/waitsForTheDisk``, across a crash always.
    func save(_ saves: [AppSave], bootID: String) async throws(DaemonError)
    /// Returns once every save made before the call is durable across a power cut too, those that
    /// did not wait for the disk included.
    func waitForTheDisk() async throws(DaemonError)
    /// An app's resources, each as last set (an app with none, or not registered, has none).
    func resources(of bundleIdentifier: String) async throws(DaemonError) -> [AppResource: Data]
    /// Sets one of an app's resources, or removes it for `nil`. Throws `appNotFound` for an app that
    /// is not registered.
    func setResource(_ resource: AppResource, of bundleIdentifier: String, to value: Data?) async throws(DaemonError)
    /// Changes an app's key.
    func replaceKey(of bundleIdentifier: String, with keyHash: String) async throws(DaemonError)
    /// Removes an app and everything about it, its resources included.
    func delete(_ bundleIdentifier: String) async throws(DaemonError)
    /// Every registered app's bundle identifier and launch command, by bundle identifier, and why it
    /// is quarantined, if it is.
    func apps() async throws(DaemonError) -> [(bundleIdentifier: String, launchCommand: String?, quarantined: Quarantine?)]
    /// Quarantines an app whose stored state cannot be read: it leaves every index (nothing of it is
    /// due, shown, watched or prepared), and reading it throws `appQuarantined` with `reason` until
    /// it is reset. Its rows stay as they are, for inspection. Quarantining it again changes nothing.
    func quarantine(_ bundleIdentifier: String, reason: String, at date: Date) async throws(DaemonError)
    /// Starts a quarantined app afresh with `app`'s machine, keeping its key and launch command: its
    /// stored state is copied aside (the `set_aside` table), then replaced, in one transaction; its
    /// resources stay.
    /// Returns how many stored parts were set aside. Throws `appNotFound`, or `invalidRequest` for an
    /// app that is not quarantined.
    func reset(_ app: StoredApp, at date: Date) async throws(DaemonError) -> Int
    /// The apps with something due at or before `date`, soonest first, at most `limit` of them.
    func appsDue(by date: Date, limit: Int) async throws(DaemonError) -> [String]
    /// The apps with a pending location trigger (and any not saved since that was recorded).
    func appsWatchingLocation() async throws(DaemonError) -> [String]
    /// The apps with a notification or an authorization prompt the person can see (and any not saved
    /// since that was recorded).
    func appsShowingNotifications() async throws(DaemonError) -> [String]
    /// The apps whose service extension was preparing a push when last saved: a restarted daemon
    /// starts those again at once.
    func appsPreparingContent() async throws(DaemonError) -> [String]
    /// Moves an app's next wake-up to `date`, leaving its state as it is: for an app whose step failed.
    func postponeWakeUp(of bundleIdentifier: String, to date: Date) async throws(DaemonError)
    /// The device's state as last saved, or `nil` if it never was.
    func deviceState() async throws(DaemonError) -> DeviceState?
    /// Saves the device's state.
    func saveDeviceState(_ state: DeviceState) async throws(DaemonError)
    /// The earliest time any app has something due.
    func earliestWakeUp() async throws(DaemonError) -> Date?
    /// The apps with something due, each with its next wake-up, soonest first, at most `limit` of them.
    func earliestWakeUps(limit: Int) async throws(DaemonError) -> [(bundleIdentifier: String, date: Date)]
    /// The highest device-link sequence received durably: by a saved step (``AppSave/linkSequence``)
    /// or by ``saveLinkSequence(_:)``; 0 if none.
    func linkSequence() async throws(DaemonError) -> Int64
    /// Records a push received and dropped (for an app not on the device, or unreadable), with the
    /// delivery-log reports that say so.
    func saveLinkSequence(_ sequence: Int64, reports: [DeliveryLog.Report]) async throws(DaemonError)
    /// The oldest delivery-log reports not yet forgotten, at most `limit`, and the number of the last
    /// (numbers increase in the order reports were saved); nil when there are none. At most
    /// ``deliveryReportLimit`` are kept: beyond that, the oldest are forgotten unsent.
    func deliveryReports(limit: Int) async throws(DaemonError) -> (through: Int64, reports: [DeliveryLog.Report])?
    /// Forgets the reports numbered up to `number`: the gateway has them. It need not wait for the
    /// disk: reports back after a power cut are sent again, and the gateway skips those it has.
    func forgetDeliveryReports(through number: Int64) async throws(DaemonError)
    /// How much waits: items kept in apps' queues for them (responses, background pushes), and
    /// delivery-log reports not yet forgotten.
    func waitingCounts() async throws(DaemonError) -> (appMessages: Int, deliveryReports: Int)
}

/// The most delivery-log reports a daemon keeps while its gateway is out of reach.
package let deliveryReportLimit: Int64 = 100_000

/// Why an app is quarantined, and since when.
package struct Quarantine: Sendable, Hashable {
    /// What could not be read.
    package var reason: String
    package var since: Date

    package init(reason: String, since: Date) {
        self.reason = reason
        self.since = since
    }
}
