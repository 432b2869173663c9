package import Foundation
package import Logging
package import CoreMetrics
package import NotificationCore
import Synchronization

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
///
/// This file holds the engine's configuration and state; what it does is in the files beside it, one
/// concern each: `+Steps` (a step, its save and what it does), `+Cache` (apps in memory), `+Scheduler`,
/// `+Apps` (registry, keys, strings and extensions), `+Quarantine`, `+AppCalls` and `+Connections`
/// (what an app does), `+Pushes`, `+Person` and `+Device` (what the person does), `+Effects` and
/// `+ServiceExtensions` (what steps do). The parts with state of their own are values in files named
/// after them (``AppCache``, ``GroupCommit``, ``HeldSteps``, ``AppConnections``, ``DeviceSettings``…).
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
        /// Whether each app's copies are in a folder of its own in ``attachmentStore`` (named after its
        /// bundle identifier), or in the store itself: for an engine of one app, the process's own.
        package var attachmentFolderPerApp = true
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
        /// Told of each effect of every app's steps, in order, on the engine, as it is carried out:
        /// for the system inside an app's own process, whose test harness records what happened.
        package var effectObserver: (@Sendable (_ app: String, NotificationCenterMachine.Effect) -> Void)? = nil

        package init() {}
    }

    let store: any DaemonStore
    let clock: any NotificationClock

    /// The device's time now, on its clock (a manual one in tests).
    package nonisolated var now: Date { clock.now }

    /// How apps are shown, as last found (``shownIdentity(of:)``), each for half a minute: surfaces ask at
    /// every event, and the answer reads the machine's desktop entries.
    let shownIdentities = Mutex(ShownIdentities())
    let configuration: Configuration
    /// How long a replaced app connection has to let go (``Configuration/takeoverGrace``).
    package nonisolated var takeoverGrace: Duration { configuration.takeoverGrace }
    let logger: Logger
    /// What the engine counts and measures.
    package nonisolated let metrics: DaemonMetrics
    /// Identifies this run of the daemon; an app saved by another run is resumed when loaded.
    package let bootID = UUID().uuidString

    // The engine's state, in parts, each changed only on this actor. Beside each, the file whose
    // code changes it.

    // Steps (DaemonEngine+Steps).
    /// The most triggers and deadlines one step of an app carries out.
    static let wakeUpsPerStep = 64
    /// The steps' saves, written together (see ``makeDurable(_:)``).
    var commits = GroupCommit<QueuedSave>()
    /// How many steps' saves wait for the next group commit (for tests).
    var queuedSaveCount: Int { commits.queued.count }
    /// Callers waiting for a batch being written by another to end.
    var progressWaiters: [CheckedContinuation<Void, Never>] = []
    /// How many steps of each app are not saved yet.
    var unsavedSteps: [String: Int] = [:]
    /// What steps taken ahead of their time (``Configuration/firesAhead``) do, and every later step of
    /// the same app, waiting in order to be carried out at that time.
    var held = HeldSteps()

    // The apps in memory (DaemonEngine+Cache).
    var cache: AppCache
    /// The ``estimatedMemory(of:)`` of every app in the cache, together.
    var cachedBytes: Int { cache.bytes }
    /// How many apps the cache holds (for tests).
    var cachedAppCount: Int { cache.count }
    /// Reads of apps from the store under way, shared by the callers that wait for them.
    var loads: [String: Load] = [:]
    /// What resuming an app loaded after a restart did, for its next step to carry out.
    var resumeEffects: [String: [NotificationCenterMachine.Effect]] = [:]

    // The scheduler (DaemonEngine+Scheduler).
    /// Wakes the scheduler when a save brings a wake-up before the one it waits for.
    let workSignal = WorkSignal()
    /// The apps that wake up first, kept with every save, so the scheduler reads no store to know
    /// what is due (see ``UpcomingWakeUps``).
    var upcoming: UpcomingWakeUps
    /// While the store's wake-ups are read into `upcoming`: the wake-ups saved meanwhile, applied
    /// over what the read returns (its snapshot may be older than them).
    var wakeUpsSavedDuringRead: [(String, Date?)]?
    /// When the scheduler's last round said it would next wake up (`distantFuture`: only when told):
    /// a save that brings an app's wake-up before it wakes the scheduler.
    var scheduledWakeUp = Date.distantFuture
    /// Apps read ahead of their next wake-up, and when: they stay in the cache until they are
    /// stepped, or for a few read-ahead intervals (their wake-up may have moved meanwhile).
    var readAhead: [String: Date] = [:]
    /// Whether a read-ahead is under way (one at a time).
    var isReadingAhead = false

    // The apps (DaemonEngine+Apps, +Quarantine).
    /// The app each key belongs to, once looked up.
    let keys = KeyCache()
    /// The strings and extension registrations of the apps used lately (the store keeps them all).
    var resources = AppResources()
    /// The apps found quarantined in this run, and resets under way (``Quarantines``).
    var quarantines = Quarantines()

    // The apps' connections and calls (DaemonEngine+Connections, +AppCalls).
    /// The apps' connections, and takeovers under way.
    var connections = AppConnections()
    /// Those waiting for an app to settle (``waitUntilAnswered(_:)``), by app.
    var answerWaiters = AnswerWaiters()
    /// The apps' `requestAuthorization` calls, until they are answered.
    var authorizationCalls = AuthorizationCalls()

    // What steps do, carried out (DaemonEngine+Effects, +ServiceExtensions).
    /// The presenters' feeds.
    let presenters: Presenters
    /// Starts an app for what waits for it.
    let launcher: @Sendable (AppLaunch) -> Void
    /// Runs the apps' service extensions.
    let extensionRunner: ServiceExtensionRunner

    // The device (DaemonEngine+Device).
    /// The device's settings (``DeviceSettings``).
    var device: DeviceSettings

    // Pushes (DaemonEngine+Pushes).
    /// The highest device-link sequence whose push is durable here (delivered or dropped): the link
    /// acknowledges up to it, and a push sent again after a crash is not delivered twice.
    package internal(set) var linkSequence: Int64 = 0
    /// Those told when delivery-log reports were saved: each link to the gateway, to send them up.
    nonisolated let reportWatchers = ChangeSignal()

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
        clock: any NotificationClock = SystemClock(),
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
        device = DeviceSettings(timeZone: configuration.timeZone, saved: try? await store.deviceState())
        linkSequence = (try? await store.linkSequence()) ?? 0
        if let folder = configuration.privateFolder { await LooseResourceFiles.moveIntoStore(from: folder, store, logger: logger) }
    }
}

