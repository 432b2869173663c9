import Foundation
package import NotificationCore
package import NotificationEngine
internal import Dispatch
internal import Logging
internal import Synchronization

/// Who answers the authorization prompt of an in-process system.
package protocol NotificationPromptAnswerer: Sendable {
    /// The prompt for `options` is on screen: the person's answer now, or `nil` to leave it there
    /// until ``InProcessNotificationSystem/answerAuthorizationPrompt(allow:)`` answers it.
    func answer(toPromptFor options: AuthorizationOptions) -> Bool?
}

/// What an in-process system reports to observers, such as a test harness's history.
package enum InProcessEvent: Sendable {
    /// The system carried out this effect.
    case effect(NotificationCenterMachine.Effect)
    /// The delegate answered `willPresent` (`nil`: there was no delegate).
    case willPresentAnswered(DeliveredNotification, PresentationOptions?)
    /// The delegate called `didReceive`'s completion handler.
    case responseCompleted(NotificationResponse)
    /// The app delegate called `didReceiveRemoteNotification`'s completion handler.
    case remoteNotificationCompleted(RemoteNotification, BackgroundFetchResult)
}

/// The notification system inside the app's own process: the daemon's engine (``DaemonEngine``) over
/// an ``InMemoryDaemonStore``, with one app, the process itself, connected to it for as long as the
/// system lives. The same engine steps the same machine, carries out the same effects and hands the
/// app's delegates the same calls (``UNUserNotificationCenter/hand(_:reply:)``) as the daemon does;
/// what differs is only where the state is kept and how the app is reached.
///
/// The app's calls reach the engine one after the other, in the order they were made, as Apple's
/// center takes them. The delegate calls and the calls' completion handlers run in order on one serial
/// queue: a call's handler after the delegate calls its step made.
package final class InProcessNotificationSystem: NotificationBackend, Sendable {
    /// Configuration of an in-process system.
    package struct Configuration: Sendable {
        /// The rules and limits of the state machine.
        package var machine = NotificationCenterMachine.Configuration()
        package var calendar = Calendar.current
        package var timeZone = TimeZone.current
        /// The app's state when the system starts.
        package var appState: AppState = .foreground
        /// The folder attachment files are copied into, one folder per request; a fresh
        /// temporary folder by default.
        package var attachmentStore: URL? = nil

        package init() {}
    }

    /// The bundle identifier of the one app of an in-process system: the process itself.
    package static let app = "local.app"

    /// The engine, once made, and the app's connection to it.
    private struct Running: Sendable {
        let engine: DaemonEngine
        let connection: UUID
    }

    private let state: SharedState
    private let running: Task<Running, Never>
    /// The app's calls, made one after the other in the order they were queued.
    private let operations: AsyncStream<@Sendable () async -> Void>.Continuation
    /// The scheduler's rounds, on a clock whose alarms go off.
    private let scheduler: Task<Void, Never>?
    private let delegateQueue = DispatchQueue(label: "OpenUserNotifications.in-process-system")
    private let clock: any NotificationClock
    private let calendar: Calendar
    private let attachmentRoot: URL
    /// Whether the attachment folder is a temporary one this system made (no folder was configured).
    private let attachmentFolderIsTemporary: Bool
    private let centerBox = Mutex<UNUserNotificationCenter?>(nil)

    /// Creates a system. Use ``center`` to talk to it as an app does.
    package init(
        configuration: Configuration = Configuration(),
        clock: any NotificationClock,
        answerer: any NotificationPromptAnswerer,
        observer: (@Sendable (InProcessEvent) -> Void)? = nil
    ) {
        self.clock = clock
        calendar = configuration.calendar
        attachmentRoot = configuration.attachmentStore
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("OpenUserNotifications-\(UUID().uuidString)")
        attachmentFolderIsTemporary = configuration.attachmentStore == nil
        let state = SharedState(SystemState(appState: configuration.appState, timeZone: configuration.timeZone, observer: observer, answerer: answerer))
        self.state = state
        let (queued, operations) = AsyncStream<@Sendable () async -> Void>.makeStream()
        self.operations = operations
        // The app's calls run one after the other, in the order the app made them: this task lives as
        // long as the system, and ends when its queue is finished.
        Task { for await operation in queued { await operation() } }

        let link = SystemLink()
        var engineConfiguration = DaemonEngine.Configuration()
        engineConfiguration.machine = configuration.machine
        engineConfiguration.calendar = configuration.calendar
        engineConfiguration.timeZone = configuration.timeZone
        engineConfiguration.attachmentStore = attachmentRoot
        engineConfiguration.attachmentFolderPerApp = false
        engineConfiguration.effectObserver = { app, effect in link.system?.observe(effect) }
        let startingState = configuration.appState
        let clockOfEngine = clock
        running = Task {
            let engine = await DaemonEngine(
                store: InMemoryDaemonStore(), clock: clockOfEngine, configuration: engineConfiguration,
                logger: Logger(label: "OpenUserNotifications.in-process-system", factory: { _ in SwiftLogNoOpLogHandler() })
            )
            do {
                _ = try await engine.registerApp(Self.app)
                let connection = try await engine.connect(
                    Self.app, state: startingState == .notRunning ? .background : startingState,
                    deliver: { event in link.system?.deliver(event) }, finish: {}
                )
                if startingState == .notRunning { try await engine.setState(of: Self.app, connection: connection, .notRunning) }
                // From now on, what the engine does is the app's story.
                state.withLock { $0.isReporting = true }
                return Running(engine: engine, connection: connection)
            } catch {
                // An engine over a fresh store in memory registers and connects its one app.
                preconditionFailure("the in-process system could not start: \(error)")
            }
        }
        if clock.alarmsGoOff {
            scheduler = Task { [running] in
                let engine = await running.value.engine
                while !Task.isCancelled {
                    let next = await engine.processDue()
                    await engine.waitForWork(until: next)
                }
            }
        } else {
            scheduler = nil
        }
        link.system = self
    }

    deinit {
        operations.finish()
        scheduler?.cancel()
    }

    /// The process's own system when no other is bound: the wall clock, and a person who allows
    /// notifications when asked (there is no one to ask in a process without a notification UI).
    package static let processDefault: InProcessNotificationSystem = InProcessNotificationSystem(
        clock: SystemClock(),
        answerer: AllowingPromptAnswerer()
    )

    /// Deletes the temporary folder this system copied attachment files into (none when a folder was
    /// configured: that one is its owner's), for a system whose notifications no one will read again.
    package func removeTemporaryAttachmentFolder() {
        guard attachmentFolderIsTemporary else { return }
        try? FileManager.default.removeItem(at: attachmentRoot)
    }

    /// Lets go of the app's center, for a system whose owner is gone: the center holds the system (its
    /// backend), so until then neither is ever freed.
    package func releaseCenter() {
        _ = centerBox.withLock { $0.take() }
    }

    /// The app's center for this system.
    package var center: UNUserNotificationCenter {
        if let center = centerBox.withLock({ $0 }) { return center }
        let center = UNUserNotificationCenter(backend: self)
        return centerBox.withLock { existing in
            if let existing { return existing }
            existing = center
            return center
        }
    }

    package func attach(_ center: UNUserNotificationCenter) {
        centerBox.withLock { existing in
            if existing == nil { existing = center }
        }
    }

    package var environment: NotificationEnvironment {
        NotificationEnvironment(now: clock.now, calendar: calendar, timeZone: state.withLock { $0.timeZone })
    }

    // MARK: - The engine's side

    /// Runs `body` with the engine after every call queued before it, as one job.
    private func perform(_ body: @escaping @Sendable (DaemonEngine, UUID) async -> Void) {
        state.withLock { $0.jobs += 1 }
        let running = self.running
        let operation: @Sendable () async -> Void = { [state] in
            let started = await running.value
            await body(started.engine, started.connection)
            state.finishJob()
        }
        if case .terminated = operations.yield(operation) {
            // The system is going away: no order to keep, but the call still gets its answer.
            Task { await operation() }
        }
    }

    /// Runs a completion handler on the system's queue, after the delegate calls the engine handed
    /// over before it, with this system's center as `current()`.
    private func reply(_ job: @escaping @Sendable () -> Void) {
        state.withLock { $0.jobs += 1 }
        delegateQueue.async { [self] in
            UNUserNotificationCenter.withBound(center) { job() }
            state.finishJob()
        }
    }

    /// The engine, once it is running.
    private var engine: DaemonEngine {
        get async { await running.value.engine }
    }

    /// Told of each effect of the app's steps, in order, on the engine: the observer hears it, and
    /// the system notes what it keeps beside the engine (the app's state and badge, the questions
    /// open to its delegates) and answers the prompt when the person already decided.
    private func observe(_ effect: NotificationCenterMachine.Effect) {
        let (observer, answer) = state.withLock { state -> ((@Sendable (InProcessEvent) -> Void)?, Bool?) in
            state.note(effect)
            guard state.isReporting else { return (nil, nil) }
            if case .promptForAuthorization(let options) = effect { return (state.observer, state.answerer.answer(toPromptFor: options)) }
            return (state.observer, nil)
        }
        observer?(.effect(effect))
        if let answer { answerAuthorizationPrompt(allow: answer) }
    }

    /// An event of the app's connection, on the engine: a call is handed to the delegates on the
    /// system's queue, in order, each as one job.
    private func deliver(_ event: LocalAPI.AppEvent) {
        guard case .call(let call) = event else {
            // The badge is noted from the effect that changed it; the app's one connection is never replaced.
            return
        }
        state.withLock { $0.jobs += 1 }
        delegateQueue.async { [self] in
            let center = self.center
            let outcome = center.hand(call) { [weak self] reply in self?.take(reply, to: call) }
            // This process is the app, and it has set no delegate: a response is finished at once
            // (nothing would ever hear it), the settings request goes unheard.
            if outcome == .needsDelegate, case .response(let ticket, _) = call {
                take(.responseCompleted(ticket: ticket), to: call)
            }
            state.finishJob()
        }
    }

    /// The app's answer to a call its delegates were handed: reported (when the question was still
    /// open), then stepped in after the calls made before it.
    private func take(_ reply: LocalAPI.AppReply, to call: AppCall) {
        let (observer, event) = state.withLock { state -> ((@Sendable (InProcessEvent) -> Void)?, InProcessEvent?) in
            (state.observer, state.answered(reply, to: call))
        }
        if let event { observer?(event) }
        switch reply {
        case .willPresentAnswer(let ticket, let options):
            perform { engine, _ in try? await engine.answerWillPresent(Self.app, ticket: ticket, options: options.map(PresentationOptions.init(rawValue:))) }
        case .responseCompleted(let ticket):
            perform { engine, _ in try? await engine.completeResponse(Self.app, ticket: ticket) }
        case .remoteNotificationCompleted(let ticket, let result):
            perform { engine, _ in try? await engine.completeRemoteNotification(Self.app, ticket: ticket, result: result) }
        case .state, .released:
            // Not answers: ``UNUserNotificationCenter/hand(_:reply:)`` gives none of these.
            break
        }
    }

    // MARK: - Time

    /// Processes everything due by the clock's current time.
    package func catchUp() async {
        await engine.processDue()
    }

    /// The earliest date the system has something to do (what is due by now is done first).
    package func nextWakeUpDate() async -> Date? {
        await engine.processDue()
    }

    /// Waits until every call made so far reached the engine, every delegate call ran and every
    /// delegate question was answered or timed out, or until `timeout` passes.
    ///
    /// - Returns: whether the system settled in time.
    @discardableResult
    package func waitUntilSettled(timeout: Duration) async -> Bool {
        // Settled already, as after most steps: no task to wait in, and no timer.
        if state.withLock({ $0.jobs == 0 }), await engine.isAnswered(Self.app), state.withLock({ $0.jobs == 0 }) { return true }
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask { await self.settled(); return true }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return false
            }
            let first = await group.next()!
            group.cancelAll()
            return first
        }
    }

    private func settled() async {
        let engine = await self.engine
        while !Task.isCancelled {
            await jobsDone()
            // Its last step durable and carried out, and nothing asked of the app left open.
            await engine.waitUntilAnswered(Self.app)
            if state.withLock({ $0.jobs == 0 }) { return }
        }
    }

    /// Returns once no job is queued or running (or when the task is cancelled).
    private func jobsDone() async {
        let id = state.withLock { state -> UInt64 in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.jobs == 0 || Task.isCancelled { return true }
                    state.jobWaiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.jobWaiters.removeValue(forKey: id) }?.resume()
        }
    }

    // MARK: - The app's calls

    package func requestAuthorization(options: AuthorizationOptions, completion: @escaping @Sendable (Bool) -> Void) {
        // The app's next calls go on once the request is among its steps; the answer comes when the
        // person gives it.
        perform { engine, _ in
            await withCheckedContinuation { (asked: CheckedContinuation<Void, Never>) in
                let once = Mutex(Optional(asked))
                // Waits for the person as long as they take (the engine ends the call if the app goes).
                Task {
                    let granted = (try? await engine.requestAuthorization(Self.app, options: options) {
                        once.withLock { $0.take() }?.resume()
                    }) ?? false
                    once.withLock { $0.take() }?.resume()
                    self.reply { completion(granted) }
                }
            }
        }
    }

    package func setCategories(_ categories: [NotificationCategory]) {
        // Apple's call has no error: categories that break the system's rules are ignored.
        perform { engine, _ in try? await engine.setCategories(Self.app, categories) }
    }

    package func categories(completion: @escaping @Sendable ([NotificationCategory]) -> Void) {
        perform { engine, _ in
            let categories = (try? await engine.categories(Self.app)) ?? []
            self.reply { completion(categories) }
        }
    }

    package func settings(completion: @escaping @Sendable (NotificationSettings) -> Void) {
        perform { engine, _ in
            let settings = (try? await engine.settings(Self.app)) ?? .notDetermined
            self.reply { completion(settings) }
        }
    }

    package func add(_ request: NotificationRequest, completion: @escaping @Sendable (NotificationFailure?) -> Void) {
        perform { engine, _ in
            do {
                try await engine.add(Self.app, request)
                self.reply { completion(nil) }
            } catch {
                self.reply { completion(Self.failure(error)) }
            }
        }
    }

    package func pendingRequests(completion: @escaping @Sendable ([LocalAPI.PendingRequest]) -> Void) {
        perform { engine, _ in
            let pending = (try? await engine.pendingRequests(Self.app)) ?? []
            self.reply { completion(pending.map { LocalAPI.PendingRequest(request: $0.request, nextFireDate: $0.nextFireDate) }) }
        }
    }

    package func removePendingRequests(_ identifiers: [String]?) {
        perform { engine, _ in try? await engine.removePendingRequests(Self.app, identifiers) }
    }

    package func deliveredNotifications(completion: @escaping @Sendable ([DeliveredNotification]) -> Void) {
        perform { engine, _ in
            let delivered = (try? await engine.deliveredNotifications(Self.app)) ?? []
            self.reply { completion(delivered) }
        }
    }

    package func removeDeliveredNotifications(_ identifiers: [String]?) {
        perform { engine, _ in try? await engine.removeDeliveredNotifications(Self.app, identifiers) }
    }

    package func setBadgeCount(_ count: Int, completion: @escaping @Sendable (NotificationFailure?) -> Void) {
        perform { engine, _ in
            do {
                try await engine.setBadgeCount(Self.app, count)
                self.reply { completion(nil) }
            } catch {
                self.reply { completion(Self.failure(error)) }
            }
        }
    }

    /// The refusal the engine's error carries, with its `UNError` code.
    private static func failure(_ error: any Error) -> NotificationFailure {
        if let error = error as? DaemonError, let failure = error.notificationFailure { return failure }
        return NotificationFailure(.notificationsNotAllowed, detail: "\(error)")
    }

    package func registerForRemoteNotifications(completion: @escaping @Sendable (Result<String, RemoteRegistrationFailure>) -> Void) {
        let token = state.withLock { state in
            if state.deviceToken == nil { state.deviceToken = randomHex(bytes: 32) }
            return state.deviceToken!
        }
        perform { _, _ in self.reply { completion(.success(token)) } }
    }

    /// Gives the registered app a new device token, as when an iPhone is restored from a backup: the
    /// app delegate hears it in `didRegisterForRemoteNotificationsWithDeviceToken`. Returns the new
    /// token, or `nil` when the app is not registered for remote notifications.
    package func renewDeviceToken() -> String? {
        let token = state.withLock { state -> String? in
            guard state.deviceToken != nil else { return nil }
            state.deviceToken = randomHex(bytes: 32)
            return state.deviceToken
        }
        if let token { RemoteNotificationInbox.deviceTokenChanged(token) }
        return token
    }

    package func unregisterForRemoteNotifications(completion: @escaping @Sendable (RemoteRegistrationFailure?) -> Void) {
        state.withLock { $0.deviceToken = nil }
        perform { _, _ in self.reply { completion(nil) } }
    }

    package func setSubscribed(_ subscribed: Bool, toChannel channelID: String, completion: @escaping @Sendable (RemoteRegistrationFailure?) -> Void) {
        state.withLock { state in
            if subscribed { state.channels.insert(channelID) } else { state.channels.remove(channelID) }
        }
        perform { _, _ in self.reply { completion(nil) } }
    }

    /// The broadcast channels the app subscribed to.
    package var subscribedChannels: Set<String> { state.withLock { $0.channels } }

    /// The app's state, as the engine's last step left it.
    package var appState: AppState { state.withLock { $0.appState } }

    /// The app's badge, as the engine's last step left it.
    package var badgeCount: Int { state.withLock { $0.badge } }

    /// The app's device token, if it registered for remote notifications and has not unregistered.
    package var deviceToken: String? {
        state.withLock { $0.deviceToken }
    }

    /// A push reaches the app, as the device's push service hands it over: shown as a notification if
    /// it has something for the person, handed to the app delegate if it is a background or VoIP push.
    ///
    /// - Throws: the engine's `invalidRequest` when the payload is not a JSON object Apple would accept.
    package func receivePush(_ payload: [UInt8], pushType: APNs.PushType = .alert, apnsID: String = UUID().uuidString, collapseID: String? = nil) async throws(DaemonError) {
        try await throwing { engine, _ in try await engine.deliverPush(Self.app, payload: payload, pushType: pushType, apnsID: apnsID, collapseID: collapseID) }
    }

    /// Runs `body` with the engine after every call queued before it, and gives back what it returns
    /// or throws.
    private func throwing<T: Sendable>(_ body: @escaping @Sendable (DaemonEngine, UUID) async throws -> T) async throws(DaemonError) -> T {
        let result: Result<T, DaemonError> = await withCheckedContinuation { continuation in
            perform { engine, connection in
                do {
                    let value = try await body(engine, connection)
                    self.reply { continuation.resume(returning: .success(value)) }
                } catch let error as DaemonError {
                    self.reply { continuation.resume(returning: .failure(error)) }
                } catch {
                    self.reply { continuation.resume(returning: .failure(DaemonError(.invalidRequest, "\(error)"))) }
                }
            }
        }
        return try result.get()
    }

    /// Runs `body` with the engine after every call queued before it; what fails is not told.
    private func quietly<T: Sendable>(_ body: @escaping @Sendable (DaemonEngine, UUID) async throws -> T) async -> T? {
        try? await throwing(body)
    }

    // MARK: - The person and the device

    /// Whether the authorization prompt is waiting for an answer, and for which options.
    package var promptedOptions: AuthorizationOptions? {
        get async { await quietly { engine, _ in try await engine.promptedOptions(Self.app) } ?? nil }
    }

    /// The person answers the authorization prompt, if one is on screen once the app's calls made
    /// before (which may show it) are taken; with none, nothing changes.
    package func answerAuthorizationPrompt(allow: Bool) {
        perform { engine, _ in
            guard (try? await engine.promptedOptions(Self.app)) != nil else { return }
            _ = try? await engine.authorize(Self.app, allow ? .grant : .deny)
        }
    }

    /// The person acts on a notification they can see.
    package func respond(to identifier: String, with action: PersonAction) async throws(PersonActionRejection) {
        try await rejecting { engine, _ in try await engine.respond(Self.app, to: identifier, with: action) }
    }

    /// The person opens the app's notification settings.
    package func openAppSettings(from identifier: String?) async throws(PersonActionRejection) {
        try await rejecting { engine, _ in try await engine.openAppSettings(Self.app, from: identifier) }
    }

    private func rejecting(_ body: @escaping @Sendable (DaemonEngine, UUID) async throws -> Void) async throws(PersonActionRejection) {
        do throws(DaemonError) {
            try await throwing(body)
        } catch {
            if let rejection = error.personRejection { throw rejection }
            preconditionFailure("the engine refused a person's action with \(error)")
        }
    }

    /// The app's settings, as the person sees them.
    package var settings: NotificationSettings {
        get async { await quietly { engine, _ in try await engine.settings(Self.app) } ?? .notDetermined }
    }

    /// The person changes the app's settings.
    package func changeSettings(_ change: @escaping @Sendable (inout NotificationSettings) -> Void) async {
        _ = await quietly { engine, _ in try await engine.changeSettings(Self.app, change) }
    }

    /// The notifications the person sees now, oldest first.
    package var visibleNotifications: [NotificationCenterMachine.VisibleNotification] {
        get async { await quietly { engine, _ in try await engine.visibleNotifications(Self.app) } ?? [] }
    }

    /// The person locks or unlocks the device.
    package func setDeviceLocked(_ locked: Bool) async {
        _ = await quietly { engine, _ in try await engine.setDeviceLocked(locked) }
    }

    /// The person turns a Focus on, or off with `nil`.
    package func setFocus(_ focus: Focus?) async {
        _ = await quietly { engine, _ in try await engine.setFocus(focus) }
    }

    /// The person turns the Scheduled Summary on at its times, or off with `nil`.
    package func setScheduledSummary(_ summary: ScheduledSummary?) async {
        _ = await quietly { engine, _ in try await engine.setScheduledSummary(summary) }
    }

    /// The device moves.
    package func updateLocation(_ coordinate: Coordinate) async {
        _ = await quietly { engine, _ in try await engine.updateLocation(coordinate) }
    }

    /// The person changes the device's time zone.
    package func changeTimeZone(_ timeZone: TimeZone) async {
        state.withLock { $0.timeZone = timeZone }
        _ = await quietly { engine, _ in try await engine.changeTimeZone(timeZone) }
    }

    /// The app moves to the foreground or the background, or stops (`notRunning`): the process is the
    /// app, so what reaches it later starts it again.
    package func setAppState(_ appState: AppState) async {
        _ = await quietly { engine, connection in try await engine.setState(of: Self.app, connection: connection, appState) }
    }
}

/// What an in-process system keeps beside its engine, under one lock: the jobs under way, the app's
/// state and badge as the engine's steps left them, the delegates' open questions, the app's remote
/// registration, and who hears and answers.
private struct SystemState {
    var jobs = 0
    var jobWaiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
    var nextWaiter: UInt64 = 0
    var appState: AppState
    var badge = 0
    var timeZone: TimeZone
    /// The app's device token, once it registered for remote notifications.
    var deviceToken: String?
    /// The broadcast channels the app subscribed to.
    var channels: Set<String> = []
    /// The questions handed to the delegates and not yet answered nor timed out, by ticket.
    var openWillPresent: [UInt64: DeliveredNotification] = [:]
    var openResponses: [UInt64: NotificationResponse] = [:]
    var openRemoteNotifications: [UInt64: RemoteNotification] = [:]
    /// Whether the engine's effects are told: not while the system sets its app up.
    var isReporting = false
    let observer: (@Sendable (InProcessEvent) -> Void)?
    let answerer: any NotificationPromptAnswerer

    init(appState: AppState, timeZone: TimeZone, observer: (@Sendable (InProcessEvent) -> Void)?, answerer: any NotificationPromptAnswerer) {
        self.appState = appState
        self.timeZone = timeZone
        self.observer = observer
        self.answerer = answerer
    }

    /// Notes what an effect changes of what the system keeps.
    mutating func note(_ effect: NotificationCenterMachine.Effect) {
        switch effect {
        case .appStateChanged(let state): appState = state
        case .badgeChanged(let count): badge = count
        case .askWillPresent(let ticket, let notification): openWillPresent[ticket] = notification
        case .willPresentTimedOut(let ticket, _): openWillPresent.removeValue(forKey: ticket)
        case .deliverResponse(let ticket, let response): openResponses[ticket] = response
        case .responseTimedOut(let ticket, _): openResponses.removeValue(forKey: ticket)
        case .deliverRemoteNotification(let ticket, let remote): openRemoteNotifications[ticket] = remote
        case .remoteNotificationTimedOut(let ticket, _): openRemoteNotifications.removeValue(forKey: ticket)
        default: break
        }
    }

    /// What the app's answer reports, if its question was still open.
    mutating func answered(_ reply: LocalAPI.AppReply, to call: AppCall) -> InProcessEvent? {
        switch reply {
        case .willPresentAnswer(let ticket, let options):
            return openWillPresent.removeValue(forKey: ticket).map { .willPresentAnswered($0, options.map(PresentationOptions.init(rawValue:))) }
        case .responseCompleted(let ticket):
            return openResponses.removeValue(forKey: ticket).map { .responseCompleted($0) }
        case .remoteNotificationCompleted(let ticket, let result):
            return openRemoteNotifications.removeValue(forKey: ticket).map { .remoteNotificationCompleted($0, result) }
        case .state, .released:
            return nil
        }
    }
}

/// The ``SystemState`` of a system, shared with the tasks and callbacks that change it.
private final class SharedState: Sendable {
    private let mutex: Mutex<SystemState>

    init(_ state: SystemState) {
        mutex = Mutex(state)
    }

    func withLock<T>(_ body: (inout SystemState) throws -> T) rethrows -> T {
        try mutex.withLock { try body(&$0) }
    }

    /// A job ended: those waiting for none to be left go on when it was the last.
    func finishJob() {
        let waiters = withLock { state -> [CheckedContinuation<Void, Never>] in
            state.jobs -= 1
            guard state.jobs == 0 else { return [] }
            defer { state.jobWaiters.removeAll() }
            return Array(state.jobWaiters.values)
        }
        waiters.forEach { $0.resume() }
    }
}

/// The system as its engine's callbacks reach it: weakly, as the system owns the engine.
private final class SystemLink: Sendable {
    private let box = Mutex<WeakSystem>(WeakSystem())

    var system: InProcessNotificationSystem? {
        get { box.withLock { $0.system } }
        set { box.withLock { $0.system = newValue } }
    }

    private struct WeakSystem {
        weak var system: InProcessNotificationSystem?
    }
}

/// Allows notifications whenever the prompt is shown.
package struct AllowingPromptAnswerer: NotificationPromptAnswerer {
    package init() {}

    package func answer(toPromptFor options: AuthorizationOptions) -> Bool? { true }
}
