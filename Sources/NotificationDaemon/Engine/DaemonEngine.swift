package import Foundation
internal import Crypto
package import Logging
package import CoreMetrics
package import NotificationCore
internal import Synchronization
internal import NotificationAttachmentStore

/// The notification system of a device, for every app on it: each app's ``NotificationCenterMachine``,
/// kept in a ``DaemonStore`` and saved after every step, with the apps' connections and the presenters.
///
/// An app is loaded when something concerns it (a call, a trigger due, a person's action) and kept in a
/// bounded cache; what is due is found through the store's index, so the daemon never needs every app
/// in memory. A step's new state is saved before anything is told about it: a crash at any moment
/// leaves the state before the step (nothing happened) or after it (and the step is not repeated).
///
/// What runs where: the steps themselves (the machine's pure logic, microseconds each) run on this
/// actor, so an app's steps are serial and always see the state its previous step left. Everything
/// that costs time runs off it, concurrently for different apps: reading an app from the store (on the
/// store's readers), encoding and writing the rows a batch of steps changed, and the sync that makes
/// them durable (on the store's writer, one transaction and one sync per batch, shared by every step
/// queued meanwhile). Each step writes only the rows it changed (see ``NotificationCenterMachine/Changes``).
///
/// A notification is shown at its time even when the store is busy: the scheduler steps an app a little
/// before its wake-up (``Configuration/firesAhead``), as of that wake-up, and saves the step at once;
/// what the step does (the banner, the app's `willPresent`) is carried out at the wake-up itself, and
/// the app's later steps are carried out after it, in order. In between, the notification already reads
/// as delivered, no longer pending, and a crash leaves it so (as after a crash between any step's save
/// and its effects).
package actor DaemonEngine {
    /// Configuration of the engine; the defaults are Apple's where Apple has one.
    package struct Configuration: Sendable {
        /// The rules and limits each app's notifications follow.
        package var machine = NotificationCenterMachine.Configuration()
        /// The device's calendar and time zone, for calendar triggers.
        package var calendar = Calendar(identifier: .gregorian)
        package var timeZone = TimeZone.current
        /// How much memory the apps' states kept in memory may take, in bytes, as
        /// ``DaemonEngine/estimatedMemory(of:)`` estimates it (connected apps are always kept): by
        /// default a sixteenth of the machine's memory, and at least 64 MiB. An app of 64 pending
        /// requests takes about 38 KB, a typical app of a few a seventh of that.
        package var cacheMemory = DaemonEngine.defaultCacheMemory
        /// How many apps' states are kept in memory at most, whatever their size; `nil` for no bound
        /// but ``cacheMemory``.
        package var cachedApps: Int? = nil
        /// Where attachment files are copied when a request is added; `nil` keeps the app's own files.
        package var attachmentStore: URL? = nil
        /// The daemon's own folder: no attachment may come from it, but for an app's own copies.
        package var privateFolder: URL? = nil
        /// How many events a presenter may fall behind before its stream ends with an overflow (it
        /// then reads what is on screen again; see ``DaemonEngine/watch()``).
        package var presenterBacklog = 10_000
        /// How long a replaced app connection has to confirm what it finished and let go before its
        /// successor is connected anyway.
        package var takeoverGrace: Duration = .seconds(2)
        /// How many service extensions run at once; the others wait their turn.
        package var serviceExtensionsAtOnce = 4
        /// The memory each service extension may use (`RLIMIT_DATA`), in bytes.
        package var serviceExtensionMemoryBytes: UInt64 = 512 * 1024 * 1024
        /// Whether something shows apps' content extensions (the web notification center): apps then
        /// read `supportsContentExtensions` as `true`.
        package var hostsContentExtensions = false
        /// Where the daemon's metrics go (``DaemonMetrics``); by default nowhere.
        package var metrics: any MetricsFactory = NOOPMetricsHandler.instance
        /// How long before an app's wake-up the scheduler steps it, in seconds: what falls due is
        /// decided and made durable ahead, and carried out (shown, handed to the app) at its time, so a
        /// busy store does not make it late. 0 (the default, for tests on a manual clock) steps at the
        /// time; the daemon uses ``defaultFiresAhead``.
        package var firesAhead: TimeInterval = 0
        /// The daemon's ``firesAhead``: above what a save takes under a heavy load (BENCHMARKS.md).
        package static let defaultFiresAhead: TimeInterval = 0.025
        /// How many of the earliest wake-ups the scheduler reads from the store at once (see
        /// ``UpcomingWakeUps``).
        package var wakeUpsReadAtOnce = 1024

        package init() {}
    }

    private let store: any DaemonStore
    private let clock: any DaemonClock
    private let configuration: Configuration
    /// How long a replaced app connection has to let go (``Configuration/takeoverGrace``).
    package nonisolated var takeoverGrace: Duration { configuration.takeoverGrace }
    private let logger: Logger
    private let launcher: @Sendable (AppLaunch) -> Void
    /// What the engine counts and measures.
    package nonisolated let metrics: DaemonMetrics
    /// The most triggers and deadlines one step of an app carries out.
    static let wakeUpsPerStep = 64
    /// Identifies this run of the daemon; an app saved by another run is resumed when loaded.
    package let bootID = UUID().uuidString

    /// The apps in memory.
    private var cache: AppCache
    /// The ``estimatedMemory(of:)`` of every app in the cache, together.
    var cachedBytes: Int { cache.bytes }
    /// How many apps the cache holds (for tests).
    var cachedAppCount: Int { cache.count }
    /// How many steps' saves wait for the next group commit (for tests).
    var queuedSaveCount: Int { commits.queued.count }
    /// What resuming an app loaded after a restart did, for its next step to carry out.
    private var resumeEffects: [String: [NotificationCenterMachine.Effect]] = [:]
    /// Reads of apps from the store under way, shared by the callers that wait for them.
    private var loads: [String: Load] = [:]
    /// The apps found quarantined in this run (``noteQuarantined(_:_:)``).
    private var quarantined: Set<String> = []
    /// Quarantines being written, waited for by a reset of the same app.
    private var quarantineWrites: [String: Task<Void, Never>] = [:]
    /// How many resets of each app have begun, and how many are under way: a read of an app that
    /// failed is a reason to quarantine it only if no reset was under way or began since it began.
    private var resetsBegun: [String: Int] = [:]
    private var resetsUnderway: [String: Int] = [:]
    /// Apps read ahead of their next wake-up, and when: they stay in the cache until they are
    /// stepped, or for a few read-ahead intervals (their wake-up may have moved meanwhile).
    private var readAhead: [String: Date] = [:]
    /// Whether a read-ahead is under way (one at a time).
    private var isReadingAhead = false
    /// The app each key belongs to, once looked up.
    private let keys = KeyCache()
    /// The steps' saves, written together (see ``makeDurable(_:)``).
    private var commits = GroupCommit<QueuedSave>()
    /// Callers waiting for a batch being written by another to end.
    private var progressWaiters: [CheckedContinuation<Void, Never>] = []
    /// How many steps of each app are not saved yet.
    private var unsavedSteps: [String: Int] = [:]
    /// The strings and extension registrations of the apps used lately (the store keeps them all).
    private var resources = AppResources()
    /// Runs the apps' service extensions.
    private let extensionRunner: ServiceExtensionRunner
    private var connections: [String: AppConnection] = [:]
    /// Replaced connections whose successors wait for them to let go.
    private var replacedConnections: [UUID: Release] = [:]
    /// The presenters' feeds.
    private let presenters: Presenters
    /// The apps' `requestAuthorization` calls, until they are answered.
    private var authorizationCalls = AuthorizationCalls()
    /// Those waiting for an app to settle (``waitUntilAnswered(_:)``), by app.
    private var answerWaiters: [String: [UUID: CheckedContinuation<Void, Never>]] = [:]
    /// The device's state, kept once for every app and brought to each app at its next step: a lock
    /// or a move does not load every app. Saved in the store, so it survives a restart; a device never
    /// changed starts unlocked, its location unknown, in the configured time zone.
    private var device: DeviceConditions
    /// The passcode that unlocks the device on the notification center's page, once the person set one.
    private var passcode: DevicePasscode?
    private let workSignal = WorkSignal()
    /// The apps that wake up first, kept with every save, so the scheduler reads no store to know
    /// what is due (see ``UpcomingWakeUps``).
    private var upcoming: UpcomingWakeUps
    /// While the store's wake-ups are read into `upcoming`: the wake-ups saved meanwhile, applied
    /// over what the read returns (its snapshot may be older than them).
    private var wakeUpsSavedDuringRead: [(String, Date?)]?
    /// When the scheduler's last round said it would next wake up (`distantFuture`: only when told):
    /// a save that brings an app's wake-up before it wakes the scheduler.
    private var scheduledWakeUp = Date.distantFuture
    /// What steps taken ahead of their time (``Configuration/firesAhead``) do, and every later step of
    /// the same app, waiting in order to be carried out at that time.
    private var held = HeldSteps()
    /// The highest device-link sequence whose push is durable here (delivered or dropped): the link
    /// acknowledges up to it, and a push sent again after a crash is not delivered twice.
    package private(set) var linkSequence: Int64 = 0
    /// Those told when delivery-log reports were saved: each link to the gateway, to send them up.
    private nonisolated let reportWatchers = ChangeSignal()

    /// A stream that yields when delivery-log reports were saved (once for several saved before it
    /// is read), until its reader stops: one per link to the gateway. A reader cancelled while it
    /// waits ends only its own stream, not the next link's.
    package nonisolated func deliveryReportsWritten() -> AsyncStream<Void> {
        reportWatchers.watch()
    }

    /// Creates an engine over `store`.
    ///
    /// - Parameter launcher: starts an app for what waits for it, with the app's launch command.
    package init(
        store: any DaemonStore,
        clock: any DaemonClock = SystemDaemonClock(),
        configuration: Configuration = Configuration(),
        logger: Logger = Logger(label: "unotify.daemon"),
        launcher: @escaping @Sendable (AppLaunch) -> Void = { _ in }
    ) async {
        self.store = store
        self.clock = clock
        self.configuration = configuration
        cache = AppCache(memory: configuration.cacheMemory, appsAtMost: configuration.cachedApps)
        presenters = Presenters(backlog: configuration.presenterBacklog)
        upcoming = UpcomingWakeUps(capacity: configuration.wakeUpsReadAtOnce)
        self.logger = logger
        self.launcher = launcher
        metrics = DaemonMetrics(factory: configuration.metrics)
        extensionRunner = ServiceExtensionRunner(
            limits: .init(running: max(1, configuration.serviceExtensionsAtOnce), memoryBytes: configuration.serviceExtensionMemoryBytes),
            logger: logger
        )
        var device = DeviceConditions(timeZone: configuration.timeZone)
        if let saved = try? await store.deviceState() {
            device.isLocked = saved.isLocked
            device.location = saved.location
            if let zone = saved.timeZoneIdentifier.flatMap(TimeZone.init(identifier:)) { device.timeZone = zone }
            passcode = saved.passcode
            device.focus = saved.focus
            device.summary = saved.summary
        }
        self.device = device
        linkSequence = (try? await store.linkSequence()) ?? 0
        if let folder = configuration.privateFolder { await LooseResourceFiles.moveIntoStore(from: folder, store, logger: logger) }
    }

    // MARK: - Apps and keys

    /// Registers an app and returns its key, which authenticates every call it makes.
    package func registerApp(_ bundleIdentifier: String, launchCommand: String? = nil) async throws(DaemonError) -> String {
        if let violation = RequestRules.violation(inBundleIdentifier: bundleIdentifier) { throw DaemonError(violation) }
        let key = Self.makeKey()
        let machine = NotificationCenterMachine(
            now: clock.now,
            calendar: configuration.calendar,
            timeZone: device.timeZone,
            appState: .notRunning,
            appReachable: false,
            configuration: configuration.machine
        )
        try await store.insert(StoredApp(
            bundleIdentifier: bundleIdentifier,
            keyHash: Self.hash(key),
            launchCommand: launchCommand,
            machine: machine,
            bootID: bootID
        ))
        // A new app has nothing due; one of the same name removed before may have had.
        noteWakeUp(bundleIdentifier, nil)
        logger.info("registered app", metadata: ["app": .string(bundleIdentifier)])
        return key
    }

    /// Issues a new key for an app; the old one stops working.
    package func renewKey(of bundleIdentifier: String) async throws(DaemonError) -> String {
        let key = Self.makeKey()
        try await store.replaceKey(of: bundleIdentifier, with: Self.hash(key))
        keys.forgetAll()
        return key
    }

    /// Removes an app with all its notifications.
    package func removeApp(_ bundleIdentifier: String) async throws(DaemonError) {
        try await store.delete(bundleIdentifier)
        noteWakeUp(bundleIdentifier, nil)
        resources.forget(bundleIdentifier)
        if let folder = extensionFolder(of: bundleIdentifier) { try? FileManager.default.removeItem(at: folder) }
        keys.forgetAll()
        forget(bundleIdentifier)
        held.drop(bundleIdentifier)
        // Nothing of it will ever be answered.
        resumeAnswerWaiters(of: bundleIdentifier)
        loads.removeValue(forKey: bundleIdentifier)
        connections.removeValue(forKey: bundleIdentifier)?.continuation.finish()
        if let folder = attachmentStore(of: bundleIdentifier)?.root {
            try? FileManager.default.removeItem(at: folder)
        }
    }

    // MARK: - The app's strings and extensions

    /// Sets the strings a push's `loc-key`, `title-loc-key` and `subtitle-loc-key` are looked up in, as
    /// iOS looks them up in the app's `Localizable.strings`; an empty table removes them. Kept in the
    /// store with the app (``AppResource``).
    package func setStrings(_ bundleIdentifier: String, _ table: [String: String]) async throws {
        _ = try await appState(bundleIdentifier)
        try await store.setResource(.strings, of: bundleIdentifier, to: table.isEmpty ? nil : AppResources.encode(table))
        resources.wrote(bundleIdentifier) { $0.strings = table }
    }

    /// Registers the app's service extension (`nil` removes it): from now on a push for the app marked
    /// `mutable-content` goes through it before it is shown. Kept in the store with the app.
    ///
    /// - Throws: `invalidRequest` for an executable that is not an absolute path or a time limit out of
    ///   bounds; `extensionNotExecutable` for a path that is not an executable file; `appNotFound`.
    package func setServiceExtension(_ bundleIdentifier: String, _ registration: ServiceExtensionRegistration?) async throws {
        _ = try await appState(bundleIdentifier)
        if let registration {
            try Self.checkExecutable(registration.executable, of: "service extension")
            let limits = ServiceExtension.shortestTimeLimit...ServiceExtension.longestTimeLimit
            guard limits.contains(registration.timeLimit) else {
                throw DaemonError(.invalidRequest, "A service extension's time limit is \(Int(limits.lowerBound)) to \(Int(limits.upperBound)) seconds; got \(registration.timeLimit).")
            }
        }
        try await store.setResource(.serviceExtension, of: bundleIdentifier, to: registration.map(AppResources.encode))
        resources.wrote(bundleIdentifier) { $0.serviceExtension = registration }
    }

    /// Registers the app's content extension (`nil` removes it): from now on its categories' notifications
    /// show its interface when the person expands them, where a surface hosts content extensions. Kept
    /// in the store with the app.
    ///
    /// - Throws: `invalidRequest` for an executable that is not an absolute path or attributes that
    ///   break a rule; `extensionNotExecutable` for a path that is not an executable file; `appNotFound`.
    package func setContentExtension(_ bundleIdentifier: String, _ registration: ContentExtensionRegistration?) async throws {
        _ = try await appState(bundleIdentifier)
        if let registration {
            try Self.checkExecutable(registration.executable, of: "content extension")
            if let violation = registration.attributes.violation { throw DaemonError(.invalidRequest, violation) }
        }
        try await store.setResource(.contentExtension, of: bundleIdentifier, to: registration.map(AppResources.encode))
        resources.wrote(bundleIdentifier) { $0.contentExtension = registration }
    }

    /// Whether something shows apps' content extensions: see ``Configuration/hostsContentExtensions``.
    package nonisolated var hostsContentExtensions: Bool { configuration.hostsContentExtensions }

    /// The app's content extension, if it has one (none when its resources cannot be read now).
    package func contentExtension(of bundleIdentifier: String) async -> ContentExtensionRegistration? {
        do {
            return try await resources(of: bundleIdentifier).contentExtension
        } catch {
            logger.error("could not read an app's content extension", metadata: ["app": .string(bundleIdentifier), "error": .string(error.message)])
            return nil
        }
    }

    /// The app's service extension, if it has one.
    package func serviceExtension(of bundleIdentifier: String) async throws(DaemonError) -> ServiceExtensionRegistration? {
        try await resources(of: bundleIdentifier).serviceExtension
    }

    /// The app's strings and extensions: known, or else read from the store (and then known).
    private func resources(of bundleIdentifier: String) async throws(DaemonError) -> ResourcesOfApp {
        if let known = resources[bundleIdentifier] { return known }
        let mark = resources.beginRead()
        let read = AppResources.decode(try await store.resources(of: bundleIdentifier), of: bundleIdentifier, logger: logger)
        resources.finishRead(bundleIdentifier, read, begunAt: mark)
        return read
    }

    /// A new folder for one open interface of the app's content extension, and its kept `Caches`.
    package func contentExtensionFolders(of bundleIdentifier: String) throws -> (run: URL, caches: URL) {
        do {
            return try extensionFolders(of: bundleIdentifier, run: "content-\(UUID().uuidString)")
        } catch {
            throw DaemonError(.extensionFailed, "The content extension's folder could not be made: \(error).")
        }
    }

    /// Makes a folder for one run of an app's extension (its `TMPDIR`, removed after it), and the
    /// extension's `Caches` (kept from run to run).
    private func extensionFolders(of bundleIdentifier: String, run name: String) throws -> (run: URL, caches: URL) {
        guard let folder = extensionFolder(of: bundleIdentifier) else {
            throw DaemonError(.invalidRequest, "\(bundleIdentifier) is not a bundle identifier.")
        }
        let run = folder.appendingPathComponent("tmp", isDirectory: true).appendingPathComponent(name, isDirectory: true)
        let caches = folder.appendingPathComponent("Caches", isDirectory: true)
        try FileManager.default.createDirectory(at: run, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try FileManager.default.createDirectory(at: caches, withIntermediateDirectories: true)
        return (run, caches)
    }

    private static func checkExecutable(_ executable: String, of kind: String) throws {
        guard executable.hasPrefix("/") else {
            throw DaemonError(.invalidRequest, "The \(kind)'s executable must be an absolute path; got \"\(executable)\".")
        }
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: executable, isDirectory: &isFolder), !isFolder.boolValue,
              FileManager.default.isExecutableFile(atPath: executable) else {
            throw DaemonError(.extensionNotExecutable, "\(executable) is not an executable file.")
        }
    }

    /// The extension's own folder: `Caches` (kept) and `tmp` (a folder per run, removed after it).
    private func extensionFolder(of bundleIdentifier: String) -> URL? {
        guard RequestRules.violation(inBundleIdentifier: bundleIdentifier) == nil else { return nil }
        let root = configuration.privateFolder ?? FileManager.default.temporaryDirectory.appendingPathComponent("unotify", isDirectory: true)
        return root.appendingPathComponent("extensions", isDirectory: true).appendingPathComponent(bundleIdentifier, isDirectory: true)
    }

    /// Starts the app's extension for the push of `ticket`; what it hands back is stepped into the
    /// app's machine by ``preparationFinished(_:ticket:result:run:)``. Its registration is known (the
    /// push's step has just read it) unless the app left the engine's memory meanwhile, or this is a
    /// restart resuming the preparation: then it is read first.
    private func startServiceExtension(_ app: String, ticket: UInt64, request: NotificationRequest) {
        if let known = resources[app] {
            runServiceExtension(known.serviceExtension, of: app, ticket: ticket, request: request)
            return
        }
        Task {
            do throws(DaemonError) {
                runServiceExtension(try await serviceExtension(of: app), of: app, ticket: ticket, request: request)
            } catch {
                await preparationFinished(app, ticket: ticket, result: .failure("its registration could not be read (\(error.message))"), run: nil)
            }
        }
    }

    private func runServiceExtension(_ registration: ServiceExtensionRegistration?, of app: String, ticket: UInt64, request: NotificationRequest) {
        let key = ServiceExtensionRunner.Key(app: app, ticket: ticket)
        guard let registration, extensionFolder(of: app) != nil else {
            Task { await preparationFinished(app, ticket: ticket, result: .failure("the app has no service extension now"), run: nil) }
            return
        }
        let run: URL, caches: URL
        do {
            (run, caches) = try extensionFolders(of: app, run: "\(ticket)-\(UUID().uuidString)")
        } catch {
            Task { await preparationFinished(app, ticket: ticket, result: .failure("its folder could not be made (\(error))"), run: nil) }
            return
        }
        extensionRunner.start(key, registration: registration, request: request, folder: run, caches: caches) { [weak self] result in
            Task { await self?.preparationFinished(app, ticket: ticket, result: result, run: run) }
        }
    }

    /// What an app's service extension handed back for the push of `ticket`: its attachments are
    /// checked and copied into the app's store (only files the extension wrote in its folder), and the
    /// machine shows the new content, or the original when anything is wrong.
    /// - Parameter run: the run's own folder, removed once its files are copied.
    private func preparationFinished(_ app: String, ticket: UInt64, result: ServiceExtensionResult, run: URL?) async {
        var content: NotificationContent?
        var failure: String?
        var copies: URL?
        let store = attachmentStore(of: app)
        switch result {
        case .content(let answer):
            content = answer
            if !answer.attachments.isEmpty, let store, let folder = extensionFolder(of: app) {
                let request = NotificationRequest(identifier: "prepared", content: answer, trigger: .push)
                do throws(DaemonError) {
                    let (stored, folderOfCopies) = try await Self.copyAttachments(of: request, into: store, from: folder)
                    content = stored.content
                    copies = folderOfCopies
                } catch {
                    content = nil
                    failure = "an attachment was refused: \(error.message)"
                }
            }
        case .failure(let reason):
            failure = reason
        }
        if let run { try? FileManager.default.removeItem(at: run) }
        do {
            let ended = try await step(app) { (machine: inout NotificationCenterMachine) throws(Never) in
                let effects = machine.finishPreparation(ticket: ticket, content: content, failure: failure)
                return (!effects.isEmpty, effects)
            }
            if !ended { store?.discard(copies) }
        } catch {
            store?.discard(copies)
            logger.error("could not keep what a service extension prepared", metadata: ["app": .string(app), "error": .string("\(error)")])
        }
    }

    /// Loads the apps whose service extension was preparing a push when the daemon stopped: loading
    /// resumes each (``NotificationCenterMachine/resume(at:)``), which starts its extension again once,
    /// or shows the push as it came if it was interrupted before.
    package func resumePreparations() async {
        do {
            try await stepInTurns(try await store.appsPreparingContent())
        } catch {
            logger.error("could not resume the service extensions that were running", metadata: ["error": .string("\(error)")])
        }
    }

    /// How many service extensions run now, and how many wait for their turn.
    package nonisolated var serviceExtensionRuns: (running: Int, waiting: Int) { extensionRunner.counts }

    /// Stops every service extension: the daemon is stopping. Each runs again, once, when the daemon
    /// next loads its app.
    package nonisolated func stopServiceExtensions() {
        extensionRunner.stopAll()
    }

    /// Every registered app, with its launch command, and why it is quarantined if it is.
    package func apps() async throws(DaemonError) -> [(bundleIdentifier: String, launchCommand: String?, quarantined: Quarantine?)] {
        try await store.apps()
    }

    // MARK: - Apps whose stored state cannot be read

    /// Quarantines an app whose stored state cannot be read, once per run: said in the log, and
    /// kept by the store, which leaves it out of every index from then on (nothing of it is due,
    /// listed or stepped). Every other app goes on; its calls get `appQuarantined`, and its pushes
    /// are dropped with that reason (``takePushes(_:)``).
    private func noteQuarantined(_ bundleIdentifier: String, _ error: DaemonError) async {
        guard quarantined.insert(bundleIdentifier).inserted else { return }
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
        quarantineWrites[bundleIdentifier] = write
        await write.value
        if quarantineWrites[bundleIdentifier] == write { quarantineWrites.removeValue(forKey: bundleIdentifier) }
    }

    /// Starts a quarantined app afresh, as if installed again with its key: its stored state is
    /// set aside in the store for inspection (`set_aside`), its notifications, settings and
    /// categories begin anew, and its strings and extensions stay. Returns how many stored parts
    /// were set aside.
    ///
    /// - Throws: `appNotFound`; `invalidRequest` for an app that is not quarantined.
    package func resetApp(_ bundleIdentifier: String) async throws(DaemonError) -> Int {
        resetsBegun[bundleIdentifier, default: 0] += 1
        resetsUnderway[bundleIdentifier, default: 0] += 1
        defer {
            resetsUnderway[bundleIdentifier, default: 1] -= 1
            if resetsUnderway[bundleIdentifier] == 0 { resetsUnderway.removeValue(forKey: bundleIdentifier) }
        }
        // A quarantine being written lands before the reset, never after it.
        await quarantineWrites[bundleIdentifier]?.value
        let machine = NotificationCenterMachine(
            now: clock.now, calendar: configuration.calendar, timeZone: device.timeZone, appState: .notRunning, appReachable: false,
            configuration: configuration.machine
        )
        let setAside = try await store.reset(
            StoredApp(bundleIdentifier: bundleIdentifier, keyHash: "", launchCommand: nil, machine: machine, bootID: bootID), at: clock.now
        )
        quarantined.remove(bundleIdentifier)
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

    /// How many resets of `bundleIdentifier` have begun, or `nil` while one is under way.
    private func readEpoch(of bundleIdentifier: String) -> Int? {
        resetsUnderway[bundleIdentifier] == nil ? resetsBegun[bundleIdentifier, default: 0] : nil
    }

    /// Whether `bundleIdentifier` can be read: `false` for an app quarantined (now or before).
    private func isReadable(_ bundleIdentifier: String) async throws -> Bool {
        do {
            try await load(bundleIdentifier)
            return true
        } catch let error as DaemonError where error.code == .appQuarantined {
            return false
        }
    }

    /// The app a key belongs to.
    ///
    /// Keys once found are remembered, so an app's calls cost no store read, no hash and no wait for
    /// the engine; renewing or removing any app's key forgets them all.
    ///
    /// - Throws: `unauthorized` for a key that belongs to no app.
    package nonisolated func authenticate(key: String) async throws(DaemonError) -> String {
        if let bundleIdentifier = keys.bundleIdentifier(forKey: key) { return bundleIdentifier }
        let generation = keys.generation
        guard let bundleIdentifier = try await store.bundleIdentifier(forKeyHash: Self.hash(key)) else {
            throw DaemonError(.unauthorized, "The key does not belong to any registered app.")
        }
        keys.remember(key, bundleIdentifier, ifStillAt: generation)
        return bundleIdentifier
    }

    /// A new random key: 32 bytes, base64url.
    package static func makeKey() -> String {
        let bytes = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }
        return bytes.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    package static func hash(_ key: String) -> String {
        hexadecimal(SHA256.hash(data: Data(key.utf8)))
    }

    // MARK: - Steps

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
    private func step<T, Failure: Error>(
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
    private func stepQueued<T, Failure: Error>(
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
        let (now, device) = (max(clock.now, time ?? .distantPast), device.applying(to: bundleIdentifier))
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
    private func queueCatchUp(_ bundleIdentifier: String, urgent: Bool = false, ahead time: Date? = nil) async throws -> UInt64 {
        try await stepQueued(bundleIdentifier, urgent: urgent, ahead: time) { (_: inout NotificationCenterMachine) throws(Never) in ((), []) }.1
    }

    /// Returns once the save of `ticket` is durable and the effects of its step (and of every earlier
    /// step of the same app) are carried out; throws when its save failed. Which saves are written
    /// together is ``GroupCommit``'s choice; the caller it hands a batch to writes it.
    private func makeDurable(_ ticket: UInt64) async throws {
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
                        answerWaiters.removeValue(forKey: entry.item.save.bundleIdentifier)?.values.forEach { $0.resume() }
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
    private func finish(_ item: QueuedSave) {
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

    private func resumeAnswerWaiters(of app: String) {
        answerWaiters.removeValue(forKey: app)?.values.forEach { $0.resume() }
    }

    /// Keeps `upcoming` as the store now is, after a durable change of an app's next wake-up, and
    /// wakes the scheduler when the app now wakes up before it would.
    private func noteWakeUp(_ app: String, _ wakeUp: Date?) {
        upcoming.note(app, wakeUp: wakeUp)
        wakeUpsSavedDuringRead?.append((app, wakeUp))
        if let wakeUp, wakeUp.addingTimeInterval(-configuration.firesAhead) < scheduledWakeUp { workSignal.signal() }
    }

    private func noteSaved(_ app: String) {
        guard let count = unsavedSteps[app] else { return }
        unsavedSteps[app] = count > 1 ? count - 1 : nil
    }

    /// The folder an app's attachment files are copied into, when the daemon copies them.
    private func attachmentStore(of bundleIdentifier: String) -> AttachmentStore? {
        // The identifier names a folder: one that is not a bundle identifier (stored before the rule
        // was enforced) names none, so nothing outside the store is ever touched.
        guard RequestRules.violation(inBundleIdentifier: bundleIdentifier) == nil else { return nil }
        return configuration.attachmentStore.map {
            AttachmentStore(root: $0.appendingPathComponent(bundleIdentifier, isDirectory: true), privateFolder: configuration.privateFolder)
        }
    }

    /// A non-throwing body's step.
    private func step(_ bundleIdentifier: String, _ body: (inout NotificationCenterMachine) -> [NotificationCenterMachine.Effect]) async throws {
        try await step(bundleIdentifier) { (machine: inout NotificationCenterMachine) throws(Never) in ((), body(&machine)) }
    }

    /// Reads an app's state. An app with nothing due (and not just resumed) is read as it is, without
    /// a write; otherwise a step brings it up to date (and saves it) first.
    private func read<T>(_ bundleIdentifier: String, _ body: (NotificationCenterMachine) -> T) async throws -> T {
        var machine = try await loaded(bundleIdentifier)
        if resumeEffects[bundleIdentifier] == nil, !(machine.nextWakeUpDate().map { $0 <= clock.now } ?? false) {
            return body(machine)
        }
        return try await step(bundleIdentifier) { (machine: inout NotificationCenterMachine) throws(Never) in (body(machine), []) }
    }

    /// The app's machine, from the cache or else from the store (and then kept in the cache). An app
    /// last saved by another run of the daemon is resumed first: its app is not running, and its missed
    /// repeats are skipped; the effects of that wait for the app's next step, which saves it.
    ///
    /// Concurrent callers for the same app share one read of the store.
    private func loaded(_ bundleIdentifier: String) async throws -> NotificationCenterMachine {
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
    private func load(_ bundleIdentifier: String, warming: Bool = false) async throws -> Bool {
        while true {
            if cache.markUsed(bundleIdentifier) { return true }
            let load: Load
            if let running = loads[bundleIdentifier] {
                load = running
            } else {
                guard !warming else { return false }
                let store = self.store
                load = Load(id: UUID(), resetEpoch: readEpoch(of: bundleIdentifier), task: Task {
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
                let current = load.resetEpoch != nil && load.resetEpoch == readEpoch(of: bundleIdentifier)
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
                let load = Load(id: UUID(), resetEpoch: readEpoch(of: bundleIdentifier), task: read)
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
    static let appsWarmedAtOnce = 64

    /// Drops an app from memory; it is read from the store when next needed (and resumed again if it
    /// was resumed and not saved since).
    @discardableResult
    private func forget(_ bundleIdentifier: String) -> CachedApp? {
        if !readAhead.isEmpty { readAhead.removeValue(forKey: bundleIdentifier) }
        if !resumeEffects.isEmpty { resumeEffects.removeValue(forKey: bundleIdentifier) }
        return cache.remove(bundleIdentifier)
    }

    /// Makes room in the cache when it is full, keeping `app` (about to be used); see ``AppCache``.
    private func trimCache(keeping app: String, afterGrowth: Bool = false) {
        let evicted = cache.trim(keeping: app, afterGrowth: afterGrowth) { app in
            // An app whose last step is not saved yet stays: the store does not have its state. So does
            // one whose steps wait for their time: carrying them out (a launch) reads its state.
            connections[app] != nil || unsavedSteps[app] != nil || readAhead[app] != nil || held.isHolding(app)
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

    /// Carries out a step's effects, each where ``NotificationCenterMachine/Effect/routes`` sends it.
    private func carryOut(_ effects: [NotificationCenterMachine.Effect], for app: String) {
        for route in effects.flatMap(\.routes) {
            switch route {
            case .app(.authorizationCompleted(let call, let granted)):
                authorizationCalls.complete(app: app, number: call, granted: granted)
            case .app(.willPresent(let ticket, let notification)):
                connections[app]?.continuation.yield(.willPresent(ticket: ticket, notification))
            case .app(.response(let ticket, let response)):
                connections[app]?.continuation.yield(.response(ticket: ticket, response))
            case .app(.openSettings(let notification)):
                connections[app]?.continuation.yield(.openSettings(notification))
            case .app(.remoteNotification(let ticket, let remote)):
                connections[app]?.continuation.yield(.remoteNotification(ticket: ticket, remote))
            case .person(let event):
                log(event, of: app)
                measure(event)
                publish(DaemonEvent(app, event))
                if case .badgeChanged(let badge) = event { connections[app]?.continuation.yield(.badge(badge)) }
            case .launch:
                if let cached = cache[app], let command = cached.launchCommand {
                    logger.info("launching app for what waits for it", metadata: ["app": .string(app)])
                    launcher(AppLaunch(command: command, bundleIdentifier: app, remoteNotification: cached.machine.launchRemoteNotification))
                }
            case .serviceExtension(.prepare(let ticket, let preparation)):
                startServiceExtension(app, ticket: ticket, request: preparation.request)
            case .serviceExtension(.timeWillExpire(let ticket)):
                extensionRunner.timeWillExpire(.init(app: app, ticket: ticket))
            case .serviceExtension(.stop(let ticket)):
                extensionRunner.stop(.init(app: app, ticket: ticket))
            }
        }
    }

    /// Logs what a person event says about an app's behaviour.
    private func log(_ event: PersonEvent, of app: String) {
        switch event {
        case .willPresentTimedOut(let notification):
            logger.notice("app did not answer willPresent in time", metadata: ["app": .string(app), "notification": .string(notification.request.identifier)])
        case .responseNotCompleted(let response):
            logger.warning("app did not confirm a response in time", metadata: ["app": .string(app), "notification": .string(response.notification.request.identifier)])
        case .discardedOverLimit(let request):
            logger.notice("pending request discarded over the limit", metadata: ["app": .string(app), "request": .string(request.identifier)])
        case .remoteNotificationNotCompleted(let remote):
            logger.warning("app did not call didReceiveRemoteNotification's completion handler in time", metadata: ["app": .string(app), "apns-id": .string(remote.identifier)])
        case .remoteNotificationHeld(let remote):
            logger.info("background push held for the app", metadata: ["app": .string(app), "apns-id": .string(remote.identifier)])
        case .contentPrepared(let request, let outcome) where outcome != .prepared:
            logger.notice("a push was shown as it came: its service extension's work did not end well", metadata: [
                "app": .string(app), "notification": .string(request.identifier), "outcome": .string(outcome.name),
                "reason": .string(outcome.reason ?? ""),
            ])
        case .summaryDelivered(let shown):
            logger.info("the Scheduled Summary came", metadata: ["app": .string(app), "notifications": .stringConvertible(shown.count)])
        case .authorizationPrompt, .settingsChanged, .presented, .badgeChanged, .appStateChanged, .responseDelivered, .remoteNotificationDelivered,
             .contentPreparing, .contentPrepared, .notificationsRemoved, .actedOn:
            break
        }
    }

    /// Counts and times what a person event says about notifications and pushes.
    private func measure(_ event: PersonEvent) {
        switch event {
        case .presented(let shown): metrics.presented(shown.notification, shown.presentation, at: clock.now)
        case .contentPreparing(let request): metrics.pushPreparing(uniqueID: request.pushUniqueID)
        case .contentPrepared(_, let outcome): metrics.extensionRan(outcome)
        case .remoteNotificationDelivered(let remote): metrics.handedToApp(uniqueID: remote.pushUniqueID, at: clock.now)
        default: break
        }
    }

    /// Sets the gauges that describe the daemon now (apps connected, extensions, what waits for
    /// apps and for the gateway); run before each exposition of its metrics.
    package func sampleMetrics() async {
        metrics.appsConnected.record(connections.count)
        let runs = extensionRunner.counts
        metrics.extensionsRunning.record(runs.running)
        metrics.extensionsWaiting.record(runs.waiting)
        if let waiting = try? await store.waitingCounts() {
            metrics.appMessagesWaiting.record(waiting.appMessages)
            metrics.deliveryReportsUnsent.record(waiting.deliveryReports)
        }
    }

    /// Tells every presenter (see ``Presenters``).
    private func publish(_ event: DaemonEvent) {
        presenters.publish(event)
    }

    // MARK: - The app's calls

    /// Asks the person to allow notifications (the first time), and returns the answer once given.
    package func requestAuthorization(_ bundleIdentifier: String, options: AuthorizationOptions) async throws -> Bool {
        let call = authorizationCalls.begin(bundleIdentifier)
        defer { authorizationCalls.end(call) }
        try await step(bundleIdentifier) { $0.requestAuthorization(options: options, call: call.number) }
        // Answered at once (already decided, or provisional), or later by the person.
        if let granted = authorizationCalls.takeAnswer(call) { return granted }
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Bool, any Error>) in
            authorizationCalls.wait(call, continuation)
        }
    }

    /// Replaces the app's categories.
    ///
    /// - Throws: `invalidRequest` naming the rule the categories break; nothing changes then.
    package func setCategories(_ bundleIdentifier: String, _ categories: [NotificationCategory]) async throws {
        do {
            try await step(bundleIdentifier) { (machine: inout NotificationCenterMachine) throws(RuleViolation) in
                try machine.setCategories(categories)
                return ((), [])
            }
        } catch let violation as RuleViolation {
            throw DaemonError(violation)
        }
    }

    package func categories(_ bundleIdentifier: String) async throws -> [NotificationCategory] {
        try await read(bundleIdentifier) { machine in machine.categories.values.sorted { $0.identifier < $1.identifier } }
    }

    package func settings(_ bundleIdentifier: String) async throws -> NotificationSettings {
        try await read(bundleIdentifier) { machine in machine.settings }
    }

    package func badge(_ bundleIdentifier: String) async throws -> Int {
        try await read(bundleIdentifier) { machine in machine.badge }
    }

    /// Adds a request.
    ///
    /// - Throws: a `DaemonError` with code `notification` and the `UNError` code when it is refused.
    package func add(_ bundleIdentifier: String, _ request: NotificationRequest) async throws {
        var stored = request
        var copies: URL? = nil
        let store = request.content.attachments.isEmpty ? nil : attachmentStore(of: bundleIdentifier)
        if let store {
            // A request with files is checked before any is copied, and the files are copied off the
            // engine's actor (a large video takes a while, and every other app's steps go on meanwhile);
            // the machine's `add` applies the same rules again, and a refused request's copies go.
            if let failure = RequestRules.failure(for: request) { throw DaemonError(failure) }
            guard PresentationPolicy.allowsDelivery(try await settings(bundleIdentifier)) else {
                throw DaemonError(NotificationFailure(.notificationsNotAllowed))
            }
            (stored, copies) = try await Self.copyAttachments(of: request, into: store)
        }
        do {
            try await step(bundleIdentifier) { (machine: inout NotificationCenterMachine) throws(NotificationFailure) in
                ((), try machine.add(stored))
            }
        } catch let failure as NotificationFailure {
            store?.discard(copies)
            throw DaemonError(failure)
        } catch {
            store?.discard(copies)
            throw error
        }
    }

    /// Checks and copies a request's attachment files into the app's folder, on a thread of the global
    /// executor rather than the engine's.
    @concurrent
    private nonisolated static func copyAttachments(
        of request: NotificationRequest, into store: AttachmentStore, from extensionFolder: URL? = nil
    ) async throws(DaemonError) -> (NotificationRequest, URL?) {
        do throws(NotificationFailure) {
            return try store.store(request, from: extensionFolder)
        } catch {
            throw DaemonError(error)
        }
    }

    // MARK: - Remote notifications

    /// The oldest delivery-log reports the gateway does not have yet (at most `limit`), and the number
    /// to confirm them by; nil when there are none.
    package func unsentDeliveryReports(limit: Int) async throws(DaemonError) -> (through: Int64, reports: [DeliveryLog.Report])? {
        try await store.deliveryReports(limit: limit)
    }

    /// The gateway recorded the reports up to `number`.
    package func forgetDeliveryReports(through number: Int64) async throws(DaemonError) {
        try await store.forgetDeliveryReports(through: number)
    }

    /// A push from the gateway's device link: delivered to its app's machine (shown as a local
    /// notification fires) once, however often the link sends it; returns once that is durable, when
    /// the link may acknowledge it. See ``receivePushes(_:)``.
    package func receivePush(_ push: DeviceLink.Push) async throws {
        try await receivePushes([push])
    }

    /// Pushes from the gateway's device link, as ``takePushes(_:)`` takes them; returns once they
    /// are durable across a power cut too, when the link may acknowledge them.
    package func receivePushes(_ pushes: [DeviceLink.Push]) async throws {
        try await takePushes(pushes)
        try await waitForTheDisk()
    }

    /// Pushes from the gateway's device link, in the link's order: each delivered to its app's machine
    /// once, however often the link sends it. Each is stepped at once and their saves share one commit
    /// (with whatever else is being saved); returns once that is written and what the steps do is
    /// carried out (an app in the foreground asked `willPresent`), safe from a crash of the process.
    /// The link acknowledges them (``linkSequence``) only after ``waitForTheDisk()``: the commit does
    /// not wait for the disk, so that the app is not asked a sync later (half a millisecond to a few
    /// here), nor the next pushes' commit kept waiting behind that sync; a power cut that undoes it
    /// undoes the step whole, and the gateway, not told, sends the push again. A push for an app not
    /// on this device, or whose payload cannot be read, is dropped (and acknowledged). Called by one
    /// link at a time, in its order.
    package func takePushes(_ pushes: [DeviceLink.Push]) async throws {
        var highest = linkSequence
        var taken: [(sequence: Int64, outcome: TakenPush)] = []
        func drop(_ push: DeviceLink.Push, because reason: String) {
            let report = push.uniqueID.map { DeliveryLog.Report(uniqueID: $0, stage: .notShown, at: clock.now, detail: reason) }
            taken.append((push.sequence, .dropped(report)))
        }
        for push in pushes where push.sequence > highest {
            highest = push.sequence
            let resources: ResourcesOfApp
            do {
                resources = try await self.resources(of: push.bundleIdentifier)
            } catch {
                // As a step that fails (below): what was taken before it is settled first.
                try? await settle(taken)
                throw error
            }
            switch APNs.payload(Array(push.payload.utf8), localize: resources.localizer) {
            case .success(let payload):
                do {
                    let serviceExtension = resources.serviceExtension?.serviceExtension
                    let ticket = try await stepQueued(push.bundleIdentifier, linkSequence: push.sequence, waitsForTheDisk: false) {
                        (machine: inout NotificationCenterMachine) throws(Never) in
                        ((), machine.receivePush(payload, apnsID: push.apnsID, collapseID: push.collapseID, pushType: push.pushType,
                                                 uniqueID: push.uniqueID, serviceExtension: serviceExtension))
                    }.1
                    taken.append((push.sequence, .stepped(ticket)))
                    // Before the step is carried out (once it is durable): its presentation is timed from here.
                    metrics.pushArrived(uniqueID: push.uniqueID, acceptedAt: Date(timeIntervalSince1970: push.receivedAt))
                } catch let error as DaemonError where error.code == .appNotFound {
                    logger.notice("a push for an app not on this device was dropped", metadata: ["app": .string(push.bundleIdentifier)])
                    metrics.dropped(because: "app_not_found")
                    drop(push, because: "the app is not on the device")
                } catch let error as DaemonError where error.code == .appQuarantined {
                    metrics.dropped(because: "app_quarantined")
                    drop(push, because: "the app's stored state cannot be read; it is quarantined until it is reset")
                } catch {
                    // The pushes taken before this one are settled whatever comes: known as received,
                    // they are not stepped again when the link sends them again, and the link can
                    // acknowledge them before it fails with this one.
                    try? await settle(taken)
                    throw error
                }
            case .failure(let error):
                logger.notice("a push whose payload cannot be read was dropped", metadata: ["app": .string(push.bundleIdentifier), "error": .string(error.description)])
                metrics.dropped(because: "unreadable_payload")
                drop(push, because: "its payload could not be read")
            }
        }
        try await settle(taken)
        linkSequence = max(linkSequence, highest)
    }

    /// What became of a push the link handed over.
    private enum TakenPush {
        /// Stepped into its app's machine: durable once its ticket is.
        case stepped(UInt64)
        /// Not for this device, or not readable: recorded as not shown (when the push has a unique
        /// identifier, with this report).
        case dropped(DeliveryLog.Report?)
    }

    /// Makes the pushes taken durable, in the link's order, and moves ``linkSequence`` past them; a
    /// push that cannot be made durable stops there (and is thrown), what came before it kept. The
    /// store keeps the highest sequence it is told of: a dropped push before a stepped one costs
    /// nothing more, one after it is recorded, with the drops' reports.
    private func settle(_ taken: [(sequence: Int64, outcome: TakenPush)]) async throws {
        var through: Int64?
        var reports: [DeliveryLog.Report] = []
        var droppedThrough: Int64?
        var failure: (any Error)?
        for (sequence, outcome) in taken {
            switch outcome {
            case .stepped(let ticket):
                do { try await makeDurable(ticket) } catch { failure = error }
            case .dropped(let report):
                if let report { reports.append(report) }
                droppedThrough = sequence
            }
            if failure != nil { break }
            through = sequence
        }
        if let droppedThrough {
            try await store.saveLinkSequence(droppedThrough, reports: reports)
            if !reports.isEmpty { reportWatchers.notify() }
        }
        if let through { linkSequence = max(linkSequence, through) }
        if let failure { throw failure }
    }

    /// Returns once everything saved before the call is durable across a power cut too, the steps
    /// that did not wait for the disk included (``takePushes(_:)``). Beside the writer: saves go on
    /// meanwhile.
    package nonisolated func waitForTheDisk() async throws(DaemonError) {
        try await store.waitForTheDisk()
    }

    /// A push handed to an app on this device directly, as `xcrun simctl push` does: the same
    /// delivery as a push from the gateway, with no device link involved.
    ///
    /// - Throws: `appNotFound`; `invalidRequest` for a payload that is not a JSON object or is over
    ///   4,096 bytes (Apple's limit for `simctl push` too).
    package func deliverPush(_ bundleIdentifier: String, payload: [UInt8], apnsID: String = UUID().uuidString, collapseID: String? = nil) async throws {
        guard payload.count <= APNs.PushType.alert.maximumPayloadBytes else {
            throw DaemonError(.invalidRequest, "The payload is \(payload.count) bytes; a push carries at most 4,096.")
        }
        let resources = try await resources(of: bundleIdentifier)
        let parsed: APNs.Payload
        switch APNs.payload(payload, localize: resources.localizer) {
        case .success(let value): parsed = value
        case .failure(let error): throw DaemonError(.invalidRequest, error.description)
        }
        if let collapseID, collapseID.utf8.count > 64 {
            throw DaemonError(.invalidRequest, "A collapse identifier is at most 64 bytes.")
        }
        if let collapseID, let violation = RequestRules.violation(inIdentifier: collapseID, what: "collapse identifier") {
            throw DaemonError(violation)
        }
        let serviceExtension = resources.serviceExtension?.serviceExtension
        try await step(bundleIdentifier) { (machine: inout NotificationCenterMachine) throws(Never) in
            ((), machine.receivePush(parsed, apnsID: apnsID, collapseID: collapseID, pushType: .alert, serviceExtension: serviceExtension))
        }
    }

    package func pendingRequests(_ bundleIdentifier: String) async throws -> [NotificationCenterMachine.PendingRequest] {
        try await read(bundleIdentifier) { machine in machine.pendingRequests }
    }

    /// Removes pending requests by identifier, or all of them for `nil`.
    package func removePendingRequests(_ bundleIdentifier: String, _ identifiers: [String]?) async throws {
        try await step(bundleIdentifier) { machine in
            if let identifiers { machine.removePendingRequests(identifiers) } else { machine.removeAllPendingRequests() }
            return []
        }
    }

    package func deliveredNotifications(_ bundleIdentifier: String) async throws -> [DeliveredNotification] {
        try await read(bundleIdentifier) { machine in machine.deliveredNotifications }
    }

    /// Removes delivered notifications by identifier, or all of them for `nil`.
    package func removeDeliveredNotifications(_ bundleIdentifier: String, _ identifiers: [String]?) async throws {
        try await step(bundleIdentifier) { machine in
            if let identifiers { machine.removeDeliveredNotifications(identifiers) } else { machine.removeAllDeliveredNotifications() }
        }
    }

    package func setBadgeCount(_ bundleIdentifier: String, _ count: Int) async throws {
        do {
            try await step(bundleIdentifier) { (machine: inout NotificationCenterMachine) throws(NotificationFailure) in
                ((), try machine.setBadgeCount(count))
            }
        } catch let failure as NotificationFailure {
            throw DaemonError(failure)
        }
    }

    // MARK: - The app's connection

    /// The app connected: from now on it receives its delegate calls on the returned stream, starting
    /// with everything that waited for it.
    ///
    /// An app runs as one process, as on iOS: a new connection takes over from the app's previous one.
    /// The previous connection is told it was replaced (``AppMessage/replaced``) and is given
    /// ``Configuration/takeoverGrace`` to confirm what it had finished and let go; only then is the new
    /// one connected, and what the previous one had not confirmed is handed to the new one, with the same
    /// tickets. A connection that is itself replaced while it waits gets only ``AppMessage/replaced``.
    package func connect(_ bundleIdentifier: String, state: AppState) async throws -> (id: UUID, messages: AsyncStream<AppMessage>) {
        let id = UUID()
        let (stream, continuation) = AsyncStream<AppMessage>.makeStream()
        var tookOver = false
        if let previous = connections.removeValue(forKey: bundleIdentifier) {
            tookOver = true
            previous.continuation.yield(.replaced)
            previous.continuation.finish()
            await waitForRelease(of: previous.id)
            // Another connection of the app came while this one waited: the newest one is the app.
            if connections[bundleIdentifier] != nil {
                continuation.yield(.replaced)
                continuation.finish()
                return (id, stream)
            }
        }
        connections[bundleIdentifier] = AppConnection(id: id, continuation: continuation)
        do {
            try await step(bundleIdentifier) { machine in
                (tookOver || machine.isAppReachable ? machine.setAppReachable(false, state: .notRunning) : [])
                    + machine.setAppReachable(true, state: state == .notRunning ? .background : state)
            }
        } catch {
            connections.removeValue(forKey: bundleIdentifier)
            continuation.finish()
            throw error
        }
        // The app learns its badge as it connects (`applicationIconBadgeNumber`; none means 0), then
        // of every change.
        if connections[bundleIdentifier]?.id == id, let badge = cache[bundleIdentifier]?.machine.badge, badge != 0 {
            continuation.yield(.badge(badge))
        }
        return (id, stream)
    }

    /// Waits until a replaced connection has let go (``disconnect(_:connection:)``), at most for the
    /// takeover grace: a connection that does not read is not waited for longer.
    private func waitForRelease(of connection: UUID) async {
        replacedConnections[connection] = .pending
        let grace = configuration.takeoverGrace
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    Task { await self.noteReleaseWaiter(connection, continuation) }
                }
            }
            group.addTask { try? await Task.sleep(for: grace) }
            _ = await group.next()
            group.cancelAll()
            // Whichever came first, nobody waits any more.
            if case .waiting(let waiter) = replacedConnections.removeValue(forKey: connection) { waiter.resume() }
        }
    }

    private func noteReleaseWaiter(_ connection: UUID, _ continuation: CheckedContinuation<Void, Never>) {
        switch replacedConnections[connection] {
        case .pending: replacedConnections[connection] = .waiting(continuation)
        case .released, .waiting, nil: continuation.resume()
        }
    }

    /// The connected app moved to the foreground or the background.
    package func updateState(_ bundleIdentifier: String, connection: UUID, _ state: AppState) async throws {
        guard connections[bundleIdentifier]?.id == connection, state != .notRunning else { return }
        try await step(bundleIdentifier) { $0.setAppState(state) }
    }

    /// The app's connection closed: it is not running until it connects again. A replaced connection
    /// closing lets its successor connect.
    package func disconnect(_ bundleIdentifier: String, connection: UUID) async throws {
        guard connections[bundleIdentifier]?.id == connection else {
            switch replacedConnections[connection] {
            case .waiting(let waiter):
                replacedConnections.removeValue(forKey: connection)
                waiter.resume()
            case .pending:
                replacedConnections[connection] = .released
            case .released, nil:
                break
            }
            return
        }
        connections.removeValue(forKey: bundleIdentifier)?.continuation.finish()
        try await step(bundleIdentifier) { $0.setAppReachable(false, state: .notRunning) }
    }

    /// The app's delegate answered `willPresent`. Saved without waiting for the disk (see
    /// ``AppSave/waitsForTheDisk``): a push shown to an app in the foreground took two synced commits,
    /// and the second, waited on by the next push's, was a third of the daemon's syncs.
    package func answerWillPresent(_ bundleIdentifier: String, ticket: UInt64, options: PresentationOptions?) async throws {
        try await step(bundleIdentifier, waitsForTheDisk: false) { (machine: inout NotificationCenterMachine) throws(Never) in
            ((), machine.answerWillPresent(ticket: ticket, options: options))
        }
    }

    /// The app's `didReceiveRemoteNotification` called its completion handler.
    package func completeRemoteNotification(_ bundleIdentifier: String, ticket: UInt64, result: BackgroundFetchResult) async throws {
        try await step(bundleIdentifier) { machine in
            if let remote = machine.completeRemoteNotification(ticket: ticket, result: result) {
                logger.debug("app finished with a background push", metadata: ["app": .string(bundleIdentifier), "apns-id": .string(remote.identifier), "result": .string("\(result)")])
            }
            return []
        }
    }

    /// The app's delegate finished with a response.
    package func completeResponse(_ bundleIdentifier: String, ticket: UInt64) async throws {
        try await step(bundleIdentifier) { machine in
            machine.completeResponse(ticket: ticket)
            return []
        }
    }

    /// Returns once the connected app has answered every `willPresent` question and confirmed every
    /// response handed to it (at once when nothing is open), or when the calling task is cancelled.
    /// For tools and tests that move the daemon's clock by hand and wait for the app's delegate.
    package func waitUntilAnswered(_ bundleIdentifier: String) async {
        // Its last step must also be durable and carried out (files released, calls answered): the cache
        // holds a step's state before its save is done.
        guard let machine = cache[bundleIdentifier]?.machine,
              machine.openTickets > 0 || unsavedSteps[bundleIdentifier] != nil || held.isHolding(bundleIdentifier) else { return }
        let id = UUID()
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                if Task.isCancelled {
                    continuation.resume()
                } else {
                    answerWaiters[bundleIdentifier, default: [:]][id] = continuation
                }
            }
        } onCancel: {
            Task { await self.stopWaitingForAnswers(id, of: bundleIdentifier) }
        }
    }

    private func stopWaitingForAnswers(_ id: UUID, of bundleIdentifier: String) {
        answerWaiters[bundleIdentifier]?.removeValue(forKey: id)?.resume()
    }

    /// Tells the app, when it is connected, that its device token changed; an app not running hears
    /// of it when it next registers (iOS apps register at every launch).
    package func deviceTokenChanged(_ bundleIdentifier: String, token: String, environment: APNs.Environment) {
        connections[bundleIdentifier]?.continuation.yield(.deviceToken(token: token, environment: environment))
    }

    /// Whether the app is in the foreground, in the background, or not running (not connected).
    package func appState(_ bundleIdentifier: String) async throws -> AppState {
        try await read(bundleIdentifier) { machine in machine.appState }
    }

    /// The state of each app connected now (an app not listed is not running).
    package func runningApps() async -> [String: AppState] {
        var states: [String: AppState] = [:]
        for bundleIdentifier in connections.keys {
            states[bundleIdentifier] = try? await appState(bundleIdentifier)
        }
        return states
    }

    // MARK: - The person

    /// A person's decision about an app's notifications, as `simctl privacy` offers.
    package enum AuthorizationDecision: String, Sendable, CaseIterable {
        case grant, deny, provisional, reset
    }

    /// Answers the app's authorization prompt if one is showing, or sets the app's authorization.
    package func authorize(_ bundleIdentifier: String, _ decision: AuthorizationDecision) async throws -> NotificationSettings {
        try await step(bundleIdentifier) { (machine: inout NotificationCenterMachine) throws(Never) in
            var effects: [NotificationCenterMachine.Effect]
            let asked = machine.promptedOptions
            switch decision {
            case .grant where asked != nil:
                effects = machine.answerAuthorizationPrompt(allow: true)
            case .deny where asked != nil:
                effects = machine.answerAuthorizationPrompt(allow: false)
            case .grant:
                effects = machine.changeSettings(.granting([.alert, .sound, .badge], status: .authorized))
            case .deny:
                effects = machine.changeSettings(.granting([], status: .denied))
            case .provisional:
                effects = machine.changeSettings(.granting([], status: .provisional))
            case .reset:
                effects = machine.changeSettings(.notDetermined)
            }
            return (machine.settings, effects)
        }
    }

    /// Changes an app's settings as the person does in the system's settings.
    package func changeSettings(_ bundleIdentifier: String, _ change: @Sendable (inout NotificationSettings) -> Void) async throws -> NotificationSettings {
        try await step(bundleIdentifier) { (machine: inout NotificationCenterMachine) throws(Never) in
            var settings = machine.settings
            change(&settings)
            let effects = machine.changeSettings(settings)
            return (machine.settings, effects)
        }
    }

    /// The person keeps an app's provisional notifications ("Keep…", then "Deliver Immediately"): the
    /// app is authorized, and its notifications go on arriving quietly, in Notification Center only (no
    /// banner, sound, badge or lock screen) until the person changes its settings, as on iOS. With
    /// `inSummary` ("Deliver in Scheduled Summary"), they also wait for the Scheduled Summary.
    ///
    /// - Throws: `invalidRequest` when the app's notifications are not provisional, or `inSummary` while
    ///   the Scheduled Summary is off.
    package func keepProvisionalNotifications(_ bundleIdentifier: String, inSummary: Bool = false) async throws -> NotificationSettings {
        guard try await settings(bundleIdentifier).authorizationStatus == .provisional else {
            throw DaemonError(.invalidRequest, "\(bundleIdentifier)'s notifications are not provisional: there is nothing to keep.")
        }
        guard !inSummary || device.summary != nil else {
            throw DaemonError(.invalidRequest, "The Scheduled Summary is off: turn it on before delivering \(bundleIdentifier)'s notifications in it.")
        }
        return try await changeSettings(bundleIdentifier) { settings in
            settings = .granting([], status: .authorized)
            settings.lockScreenSetting = .disabled
            if inSummary { settings.scheduledDeliverySetting = .enabled }
        }
    }

    /// The most background pushes per hour an app's budget may name.
    package static let backgroundPushesPerHourRange = 1...1_000_000

    /// Changes how many background pushes per hour may wake an app that is not in the foreground;
    /// `nil` for no limit. The new budget starts full; a push held for the app goes at once.
    package func setBackgroundPushesPerHour(_ bundleIdentifier: String, _ perHour: Int?) async throws -> Int? {
        if let perHour, !Self.backgroundPushesPerHourRange.contains(perHour) {
            let range = Self.backgroundPushesPerHourRange
            throw DaemonError(.invalidRequest, "A background push budget is \(range.lowerBound) to \(range.upperBound) pushes an hour, or null for no limit; got \(perHour).")
        }
        return try await step(bundleIdentifier) { (machine: inout NotificationCenterMachine) throws(Never) in
            let effects = machine.setBackgroundPushesPerHour(perHour)
            return (machine.configuration.backgroundPushesPerHour, effects)
        }
    }

    /// What the person sees of an app: every notification on screen, on the lock screen or in the list.
    package func visibleNotifications(_ bundleIdentifier: String) async throws -> [NotificationCenterMachine.VisibleNotification] {
        try await read(bundleIdentifier) { machine in machine.visibleNotifications }
    }

    /// The file of one attachment of a notification the person sees, for a surface to show; `nil` when
    /// the notification is not on screen, has no such attachment, or the file is not one of the
    /// daemon's own copies (a surface is never given a file from anywhere else).
    package func attachmentFile(_ bundleIdentifier: String, notification identifier: String, index: Int) async throws -> NotificationAttachment? {
        guard let store = attachmentStore(of: bundleIdentifier) else { return nil }
        let shown = try await visibleNotifications(bundleIdentifier).first { $0.notification.request.identifier == identifier }
        guard let attachments = shown?.notification.request.content.attachments, attachments.indices.contains(index) else { return nil }
        let attachment = attachments[index]
        return store.holds(attachment.url) ? attachment : nil
    }

    /// The person acts on one of an app's notifications.
    ///
    /// - Throws: a `DaemonError` with code `personAction` saying why the system refused.
    ///
    /// - Parameters:
    ///   - offeredActions: the actions shown, when a content extension replaced the category's.
    ///   - forwardingToApp: `false` when a content extension handled the action (`.dismiss`).
    package func respond(_ bundleIdentifier: String, to identifier: String, with action: PersonAction,
                         offeredActions: [NotificationAction]? = nil, forwardingToApp: Bool = true) async throws {
        do {
            try await step(bundleIdentifier) { (machine: inout NotificationCenterMachine) throws(PersonActionRejection) in
                ((), try machine.respond(to: identifier, with: action, offeredActions: offeredActions, forwardingToApp: forwardingToApp))
            }
        } catch let rejection as PersonActionRejection {
            throw DaemonError(rejection)
        }
    }

    /// The response a person's action would give the app, checked as ``respond(_:to:with:offeredActions:forwardingToApp:)``
    /// checks it, and nothing done: what the app's content extension is handed first.
    package func response(_ bundleIdentifier: String, to identifier: String, with action: PersonAction,
                          offeredActions: [NotificationAction]? = nil) async throws -> NotificationResponse? {
        let checked = try await read(bundleIdentifier) { machine in
            Result { () throws(PersonActionRejection) in try machine.response(to: identifier, with: action, offeredActions: offeredActions) }
        }
        do {
            return try checked.get()
        } catch {
            throw DaemonError(error)
        }
    }

    /// The person opens an app's notification settings, from one of its notifications or from the system.
    package func openAppSettings(_ bundleIdentifier: String, from identifier: String?) async throws {
        do {
            try await step(bundleIdentifier) { (machine: inout NotificationCenterMachine) throws(PersonActionRejection) in
                ((), try machine.openAppSettings(from: identifier))
            }
        } catch let rejection as PersonActionRejection {
            throw DaemonError(rejection)
        }
    }

    /// The device moved: the apps with location triggers check them now (each step brings the new
    /// location); the others learn of it at their next step.
    package func updateLocation(_ coordinate: Coordinate) async throws {
        device.location = coordinate
        try await saveDeviceState()
        try await stepInTurns(try await store.appsWatchingLocation())
    }

    /// The device was locked or unlocked; each app learns of it at its next step, before anything else.
    /// The presenters are told. No passcode is asked: this is the administrator's call (`unotify device
    /// --unlock`); the person unlocks with ``unlockDevice(passcode:)``.
    package func setDeviceLocked(_ locked: Bool) async throws {
        let changed = device.isLocked != locked
        device.isLocked = locked
        try await saveDeviceState()
        if changed { publish(.deviceLockChanged(locked: locked)) }
    }

    /// The person turns a Focus on (or changes it), or off with `nil`. From the next notification on,
    /// those it does not let through arrive silenced; what is on screen stays.
    ///
    /// - Throws: `invalidRequest` for a Focus with no name, or one allowing an app twice.
    package func setFocus(_ focus: Focus?) async throws {
        if let focus {
            guard !focus.name.trimmingCharacters(in: .whitespaces).isEmpty, focus.name.count <= 64 else {
                throw DaemonError(.invalidRequest, "A Focus needs a name of 1 to 64 characters, such as \"Do Not Disturb\".")
            }
            guard Set(focus.allowedApps).count == focus.allowedApps.count else {
                throw DaemonError(.invalidRequest, "allowedApps names an app more than once.")
            }
        }
        let changed = device.focus != focus
        device.focus = focus
        try await saveDeviceState()
        if changed { publish(.focusChanged(focus)) }
    }

    /// The Focus that is on, if any.
    package var focus: Focus? { device.focus }

    /// The person turns the Scheduled Summary on, changes its times, or turns it off with `nil`. Every
    /// app showing something is stepped at once: what it holds moves to the summary it now waits for (a
    /// time already past delivers it now), or, with the summary off, is shown now.
    ///
    /// - Throws: `invalidRequest` for a summary with no time, more than 12, or a time given twice.
    package func setScheduledSummary(_ summary: ScheduledSummary?) async throws {
        if let problem = summary?.problem { throw DaemonError(.invalidRequest, problem) }
        let changed = device.summary != summary
        device.summary = summary
        try await saveDeviceState()
        guard changed else { return }
        publish(.summaryChanged(summary))
        try await stepInTurns(try await store.appsShowingNotifications())
    }

    /// The Scheduled Summary, if it is on.
    package var scheduledSummary: ScheduledSummary? { device.summary }

    /// Whether the device is locked, and whether it has a passcode.
    package var lockState: (isLocked: Bool, hasPasscode: Bool) {
        (device.isLocked, passcode != nil)
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
        passcode = if let new { try await Self.keep(new) } else { nil }
        try await saveDeviceState()
    }

    /// Checks `candidate` against the passcode, if the device has one, off the engine (the key
    /// derivation is slow on purpose), and counts a wrong one.
    private func checkPasscode(_ candidate: String?) async throws(DaemonError) {
        guard let stored = passcode else { return }
        let now = clock.now
        if let retryAfter = stored.retryAfter, now < retryAfter {
            let minutes = Int((retryAfter.timeIntervalSince(now) / 60).rounded(.up))
            throw DaemonError(.passcodeAttemptsExceeded, "Too many wrong passcodes: try again in \(minutes) minute\(minutes == 1 ? "" : "s").")
        }
        let matches = await Self.check(candidate ?? "", against: stored)
        // The passcode may have changed while it was checked: count against the one kept now.
        guard var kept = passcode, kept.salt == stored.salt else { throw DaemonError(.wrongPasscode, "The passcode changed meanwhile.") }
        if matches {
            kept.failures = 0
            kept.retryAfter = nil
        } else {
            kept.failures += 1
            let wait = DevicePasscode.wait(after: kept.failures)
            kept.retryAfter = wait > 0 ? now.addingTimeInterval(wait) : nil
        }
        if kept != passcode {
            passcode = kept
            try await saveDeviceState()
        }
        guard matches else { throw DaemonError(.wrongPasscode, "Wrong passcode.") }
    }

    @concurrent private static func check(_ candidate: String, against stored: DevicePasscode) async -> Bool {
        stored.matches(candidate)
    }

    @concurrent private static func keep(_ new: String) async throws(DaemonError) -> DevicePasscode {
        try DevicePasscode.make(new)
    }

    private func saveDeviceState() async throws(DaemonError) {
        try await store.saveDeviceState(DeviceState(
            isLocked: device.isLocked, location: device.location, timeZoneIdentifier: device.timeZone.identifier, passcode: passcode,
            focus: device.focus, summary: device.summary
        ))
    }

    /// Steps each of `apps` once, a few at a time, letting the engine's other callers in between: a
    /// change that concerns every app does not hold up the app that is adding a request meanwhile.
    private func stepInTurns(_ apps: [String]) async throws {
        for chunk in stride(from: 0, to: apps.count, by: 16).map({ apps[$0..<min($0 + 16, apps.count)] }) {
            var tickets: [UInt64] = []
            for app in chunk where try await isReadable(app) { tickets.append(try await queueCatchUp(app)) }
            for ticket in tickets { try await makeDurable(ticket) }
        }
    }

    /// The apps with a notification the person can see, but those quarantined.
    package func appsShowingNotifications() async throws -> [String] {
        var apps: [String] = []
        for app in try await store.appsShowingNotifications() where try await isReadable(app) { apps.append(app) }
        return apps
    }

    /// The device's time zone: its calendar triggers and its Scheduled Summary follow it.
    package var timeZone: TimeZone { device.timeZone }

    /// The device moved to another time zone. Every app is stepped at once (each step brings the new
    /// zone), so that calendar triggers which follow the device are found at their new dates.
    package func changeTimeZone(_ newTimeZone: TimeZone) async throws {
        device.timeZone = newTimeZone
        try await saveDeviceState()
        publish(.timeZoneChanged(newTimeZone))
        try await stepInTurns(try await store.apps().map(\.bundleIdentifier))
    }

    /// The authorization prompts on screen: each app asking, with what it asks for.
    package func authorizationPrompts() async throws -> [(bundleIdentifier: String, options: AuthorizationOptions)] {
        var prompts: [(bundleIdentifier: String, options: AuthorizationOptions)] = []
        for app in try await appsShowingNotifications() {
            if let options = try await read(app, { machine in machine.promptedOptions }) { prompts.append((app, options)) }
        }
        return prompts
    }

    /// Starts a presenter's view of events (see ``Presenters``).
    package func watch() -> Watch {
        presenters.watch()
    }

    // MARK: - Time

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
    static let readAheadInterval: TimeInterval = 1

    /// How many apps one round of the scheduler steps at most.
    static let appsPerRound = 256
    /// How long an app whose step failed waits before it is tried again, in seconds.
    static let retryDelay: TimeInterval = 60

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

/// A step's save waiting for the next group commit, and what to do once it is durable.
private struct QueuedSave: GroupCommitItem {
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

/// An app to start for what waits for it (a response, a background push, its settings).
package struct AppLaunch: Sendable, Equatable {
    /// The app's launch command, run by `/bin/sh -c`.
    package var command: String
    package var bundleIdentifier: String
    /// The payload of the push the app is started for, if it is one (``NotificationCenterMachine/launchRemoteNotification``).
    package var remoteNotification: [String: PropertyListValue]?
}

/// A read of an app from the store.
private struct Load {
    let id: UUID
    /// How many resets of the app had begun when the read began; `nil` if one was under way
    /// (``DaemonEngine/readEpoch(of:)``).
    let resetEpoch: Int?
    /// The apps read (several when the cache's warm-up read them together), by bundle identifier.
    let task: Task<[String: Result<StoredApp, DaemonError>], any Error>
}

/// An app's open event stream.
private struct AppConnection {
    let id: UUID
    let continuation: AsyncStream<AppMessage>.Continuation
}

/// Where a replaced connection is in letting go.
private enum Release {
    /// Its successor is about to wait.
    case pending
    /// Its successor waits.
    case waiting(CheckedContinuation<Void, Never>)
    /// It let go before its successor waited.
    case released
}

