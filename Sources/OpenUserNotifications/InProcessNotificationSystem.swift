package import NotificationCore
internal import NotificationAttachmentStore
internal import Dispatch
internal import Synchronization

/// Who answers the authorization prompt of an in-process system.
package protocol NotificationPromptAnswerer: Sendable {
    /// The prompt is on screen; answer it now or later with `system.answerAuthorizationPrompt(allow:)`.
    func authorizationPromptShown(options: AuthorizationOptions, system: InProcessNotificationSystem)
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

/// The notification system inside the app's own process: the state machine of
/// ``NotificationCenterMachine`` with a clock, a person who answers prompts, and the app's delegate.
///
/// Everything the machine decides is carried out in order on one serial queue: completion handlers,
/// delegate calls, prompts and observer events.
package final class InProcessNotificationSystem: NotificationBackend, Sendable {
    /// Configuration of an in-process system.
    package struct Configuration: Sendable {
        /// The rules and limits of the state machine.
        package var machine = NotificationCenterMachine.Configuration()
        package var calendar = Calendar.current
        package var timeZone = TimeZone.current
        /// The app's state when the system starts.
        package var appState: AppState = .foreground
        /// The folder attachment files are copied into; a fresh temporary folder by default.
        package var attachmentStore: URL? = nil

        package init() {}
    }

    private struct Shell {
        var machine: NotificationCenterMachine
        var authorizationCalls: [UInt64: @Sendable (Bool) -> Void] = [:]
        var nextCall: UInt64 = 0
        var queuedJobs = 0
        var settleWaiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter: UInt64 = 0
        /// The app's device token, once it registered for remote notifications.
        var deviceToken: String?
        /// The broadcast channels the app subscribed to.
        var channels: Set<String> = []
        /// The alarm that wakes the system when something falls due, and the number of the arrangement
        /// that set it: a later arrangement always wins (see ``rearmWakeUp()``).
        var wakeUp: ClockAlarm?
        var wakeUpArranged: UInt64 = 0
        var wakeUpSet: UInt64 = 0
        var isSettled: Bool { queuedJobs == 0 && machine.openTickets == 0 }
    }

    private let shell: Mutex<Shell>
    private let queue = DispatchQueue(label: "OpenUserNotifications.in-process-system")
    private let clock: any NotificationClock
    private let answerer: any NotificationPromptAnswerer
    private let observer: (@Sendable (InProcessEvent) -> Void)?
    private let attachments: AttachmentStore
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
        self.answerer = answerer
        self.observer = observer
        self.attachments = AttachmentStore(root: configuration.attachmentStore
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("OpenUserNotifications-\(UUID().uuidString)"))
        attachmentFolderIsTemporary = configuration.attachmentStore == nil
        self.shell = Mutex(Shell(machine: NotificationCenterMachine(
            now: clock.now,
            calendar: configuration.calendar,
            timeZone: configuration.timeZone,
            appState: configuration.appState,
            configuration: configuration.machine
        )))
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
        try? FileManager.default.removeItem(at: attachments.root)
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
        shell.withLock { NotificationEnvironment(now: clock.now, calendar: $0.machine.calendar, timeZone: $0.machine.timeZone) }
    }

    // MARK: - Running the machine

    /// Changes the shell under the lock, then deletes the attachment files the change left unreferenced.
    private func mutate<T: Sendable>(_ body: (inout Shell) -> T) -> T {
        let (value, unusedFiles) = shell.withLock { shell in
            let value = body(&shell)
            return (value, shell.machine.takeUnreferencedAttachments())
        }
        attachments.release(unusedFiles)
        return value
    }

    /// Runs one step of the machine (``NotificationCenterMachine/step(at:device:pending:atMost:_:)``:
    /// what fell due by now, then `body`) under the lock, and queues its effects, in order, before the
    /// lock is released: so effects from steps on different threads are still carried out in step
    /// order. When `body` refuses, only what catching up did is carried out. Then the next wake-up is
    /// arranged.
    @discardableResult
    private func step<Value: Sendable, Failure: Error>(
        _ body: (inout NotificationCenterMachine) throws(Failure) -> (Value, [NotificationCenterMachine.Effect])
    ) throws(Failure) -> Value {
        let now = clock.now
        let result: Result<Value, Failure> = mutate { shell in
            let step = shell.machine.step(at: now, body)
            for effect in step.effects { schedule(effect, in: &shell) }
            return step.result
        }
        rearmWakeUp()
        return try result.get()
    }

    /// A step whose body only returns effects.
    private func step(_ body: (inout NotificationCenterMachine) -> [NotificationCenterMachine.Effect]) {
        step { (machine: inout NotificationCenterMachine) throws(Never) in ((), body(&machine)) }
    }

    /// Processes everything due by the time source's current time, then arranges the next wake-up.
    package func catchUp() {
        step { _ in [] }
    }

    /// Sets the alarm for the next date the machine has something to do, in place of the one before.
    ///
    /// Steps on different threads (the app's calls, the answer to the prompt from the answerer's queue)
    /// each arrange a wake-up: the one arranged last read the machine last, so its alarm is kept and an
    /// earlier one set after it is cancelled, or it would cancel the alarm of a trigger added meanwhile.
    /// The alarm is set outside the lock: a clock may call it at once when its date has come.
    private func rearmWakeUp() {
        let (date, arrangement) = shell.withLock { shell in
            shell.wakeUpArranged += 1
            return (shell.machine.nextWakeUpDate(), shell.wakeUpArranged)
        }
        let alarm = date.map { clock.alarm(at: $0) { [weak self] in self?.catchUp() } }
        let replaced = shell.withLock { shell -> ClockAlarm? in
            guard arrangement > shell.wakeUpSet else { return alarm }
            shell.wakeUpSet = arrangement
            defer { shell.wakeUp = alarm }
            return shell.wakeUp
        }
        replaced?.cancel()
    }

    /// The earliest date the system has something to do.
    package func nextWakeUpDate() -> Date? {
        shell.withLock { $0.machine.nextWakeUpDate() }
    }

    /// Queues a job: a completion handler, a delegate call or an observer event. While it runs,
    /// `UNUserNotificationCenter.current()` is this system's center, as it is for the code that made
    /// the call, so an app calling `current()` from a callback stays with this system.
    private func enqueue(_ job: @escaping @Sendable () -> Void, in shell: inout Shell) {
        shell.queuedJobs += 1
        queue.async { [self] in
            UNUserNotificationCenter.withBound(center) { job() }
            finishJob()
        }
    }

    private func finishJob() {
        let waiters = shell.withLock { shell -> [CheckedContinuation<Void, Never>] in
            shell.queuedJobs -= 1
            return takeSettledWaiters(&shell)
        }
        waiters.forEach { $0.resume() }
    }

    private func takeSettledWaiters(_ shell: inout Shell) -> [CheckedContinuation<Void, Never>] {
        guard shell.isSettled, !shell.settleWaiters.isEmpty else { return [] }
        defer { shell.settleWaiters.removeAll() }
        return Array(shell.settleWaiters.values)
    }

    /// Waits until every queued callback ran and every delegate question was answered or timed out,
    /// or until `timeout` passes.
    ///
    /// - Returns: whether the system settled in time.
    @discardableResult
    package func waitUntilSettled(timeout: Duration) async -> Bool {
        if shell.withLock({ $0.isSettled }) { return true }
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
        let id = shell.withLock { shell -> UInt64 in
            defer { shell.nextWaiter += 1 }
            return shell.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = shell.withLock { shell -> Bool in
                    if shell.isSettled || Task.isCancelled { return true }
                    shell.settleWaiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            shell.withLock { $0.settleWaiters.removeValue(forKey: id) }?.resume()
        }
    }

    /// Queues what the shell does for one effect of the machine: tells the observer, then carries out
    /// each of its ``NotificationCenterMachine/Effect/routes``.
    private func schedule(_ effect: NotificationCenterMachine.Effect, in shell: inout Shell) {
        let observer = self.observer
        var jobs: [@Sendable () -> Void] = [{ observer?(.effect(effect)) }]
        for route in effect.routes {
            switch route {
            case .authorizationCompleted(let call, let granted):
                let completion = shell.authorizationCalls.removeValue(forKey: call)
                jobs.append { completion?(granted) }
            case .app(let call):
                jobs.append { [self] in
                    let center = self.center
                    let outcome = center.hand(call) { [weak self] reply in self?.take(reply, to: call) }
                    // This process is the app, and it has set no delegate: a response is finished at
                    // once (nothing would ever hear it), the settings request goes unheard.
                    if outcome == .needsDelegate, case .response(let ticket, let response) = call {
                        completeResponse(ticket: ticket, response)
                    }
                }
            case .person(.authorizationPrompt(let options)):
                jobs.append { [self] in answerer.authorizationPromptShown(options: options, system: self) }
            case .person(.settingsChanged), .person(.presented), .person(.badgeChanged), .person(.appStateChanged),
                 .person(.responseDelivered), .person(.responseNotCompleted), .person(.willPresentTimedOut),
                 .person(.discardedOverLimit), .person(.remoteNotificationDelivered), .person(.remoteNotificationHeld),
                 .person(.remoteNotificationNotCompleted), .person(.contentPreparing), .person(.contentPrepared), .person(.notificationsRemoved),
                 .person(.actedOn), .person(.summaryDelivered):
                // The observer (a test's history, a presenter) shows these.
                break
            case .launch:
                // The app is this process: it is running.
                break
            case .serviceExtension:
                // This system hands the machine no service extension, so none is asked of it.
                break
            }
        }
        let all = jobs
        enqueue({ all.forEach { $0() } }, in: &shell)
    }

    /// The app's answer to a call its delegates were handed, as the daemon would read it.
    private func take(_ reply: LocalAPI.AppReply, to call: AppCall) {
        switch (reply, call) {
        case (.willPresentAnswer(let ticket, let options), .willPresent(_, let notification)):
            answerWillPresent(ticket: ticket, notification, options: options.map(PresentationOptions.init(rawValue:)))
        case (.responseCompleted(let ticket), .response(_, let response)):
            completeResponse(ticket: ticket, response)
        case (.remoteNotificationCompleted(let ticket, let result), .remoteNotification):
            completeRemoteNotification(ticket: ticket, result: result)
        default:
            // ``UNUserNotificationCenter/hand(_:reply:)`` answers each call with its own reply.
            break
        }
    }

    private func answerWillPresent(ticket: UInt64, _ notification: DeliveredNotification, options: PresentationOptions?) {
        let waiters = mutate { shell -> [CheckedContinuation<Void, Never>] in
            let effects = shell.machine.answerWillPresent(ticket: ticket, options: options)
            guard !effects.isEmpty else { return [] }
            let observer = self.observer
            enqueue({ observer?(.willPresentAnswered(notification, options)) }, in: &shell)
            for effect in effects { schedule(effect, in: &shell) }
            return takeSettledWaiters(&shell)
        }
        waiters.forEach { $0.resume() }
    }

    private func completeResponse(ticket: UInt64, _ response: NotificationResponse) {
        let waiters = mutate { shell -> [CheckedContinuation<Void, Never>] in
            let wasOpen = shell.machine.openTickets
            shell.machine.completeResponse(ticket: ticket)
            guard shell.machine.openTickets < wasOpen else { return [] }
            let observer = self.observer
            enqueue({ observer?(.responseCompleted(response)) }, in: &shell)
            return takeSettledWaiters(&shell)
        }
        waiters.forEach { $0.resume() }
    }

    private func completeRemoteNotification(ticket: UInt64, result: BackgroundFetchResult) {
        let waiters = mutate { shell -> [CheckedContinuation<Void, Never>] in
            guard let remote = shell.machine.completeRemoteNotification(ticket: ticket) else { return [] }
            let observer = self.observer
            enqueue({ observer?(.remoteNotificationCompleted(remote, result)) }, in: &shell)
            return takeSettledWaiters(&shell)
        }
        waiters.forEach { $0.resume() }
    }

    // MARK: - The app's calls

    package func requestAuthorization(options: AuthorizationOptions, completion: @escaping @Sendable (Bool) -> Void) {
        let now = clock.now
        mutate { shell in
            // The completion is known before the step runs: the step may answer it at once.
            let call = shell.nextCall
            shell.nextCall += 1
            shell.authorizationCalls[call] = completion
            let step = shell.machine.step(at: now) { (machine: inout NotificationCenterMachine) throws(Never) in
                ((), machine.requestAuthorization(options: options, call: call))
            }
            for effect in step.effects { schedule(effect, in: &shell) }
        }
        rearmWakeUp()
    }

    package func setCategories(_ categories: [NotificationCategory]) {
        // Apple's call has no error: categories that break the system's rules are ignored.
        try? step { (machine: inout NotificationCenterMachine) throws(RuleViolation) in
            try machine.setCategories(categories)
            return ((), [])
        }
    }

    package func categories(completion: @escaping @Sendable ([NotificationCategory]) -> Void) {
        let categories = shell.withLock { Array($0.machine.categories.values) }
        reply { completion(categories) }
    }

    package func settings(completion: @escaping @Sendable (NotificationSettings) -> Void) {
        let settings = shell.withLock { $0.machine.settings }
        reply { completion(settings) }
    }

    package func add(_ request: NotificationRequest, completion: @escaping @Sendable (NotificationFailure?) -> Void) {
        let failure: NotificationFailure?
        do throws(NotificationFailure) {
            // Authorization is checked before any file is copied (the store checks the files
            // themselves); the step checks everything again.
            guard shell.withLock({ PresentationPolicy.allowsDelivery($0.machine.settings) }) else {
                throw NotificationFailure(.notificationsNotAllowed)
            }
            let (stored, copies) = try attachments.store(request)
            do throws(NotificationFailure) {
                try step { machine throws(NotificationFailure) in ((), try machine.add(stored)) }
            } catch {
                attachments.discard(copies)
                throw error
            }
            failure = nil
        } catch {
            failure = error
        }
        reply { completion(failure) }
    }

    package func pendingRequests(completion: @escaping @Sendable ([LocalAPI.PendingRequest]) -> Void) {
        let pending = step { machine in
            (machine.pendingRequests.map { LocalAPI.PendingRequest(request: $0.request, nextFireDate: $0.nextFireDate) }, [])
        }
        reply { completion(pending) }
    }

    package func removePendingRequests(_ identifiers: [String]?) {
        step { machine in
            if let identifiers {
                machine.removePendingRequests(identifiers)
            } else {
                machine.removeAllPendingRequests()
            }
            return []
        }
    }

    package func deliveredNotifications(completion: @escaping @Sendable ([DeliveredNotification]) -> Void) {
        let delivered = step { machine in (machine.deliveredNotifications, []) }
        reply { completion(delivered) }
    }

    package func removeDeliveredNotifications(_ identifiers: [String]?) {
        step { machine in
            if let identifiers { machine.removeDeliveredNotifications(identifiers) } else { machine.removeAllDeliveredNotifications() }
        }
    }

    package func setBadgeCount(_ count: Int, completion: @escaping @Sendable (NotificationFailure?) -> Void) {
        let failure: NotificationFailure?
        do throws(NotificationFailure) {
            try step { machine throws(NotificationFailure) in ((), try machine.setBadgeCount(count)) }
            failure = nil
        } catch {
            failure = error
        }
        reply { completion(failure) }
    }

    package func registerForRemoteNotifications(completion: @escaping @Sendable (Result<String, RemoteRegistrationFailure>) -> Void) {
        let token = shell.withLock { shell in
            if shell.deviceToken == nil { shell.deviceToken = randomHex(bytes: 32) }
            return shell.deviceToken!
        }
        reply { completion(.success(token)) }
    }

    /// Gives the registered app a new device token, as when an iPhone is restored from a backup: the
    /// app delegate hears it in `didRegisterForRemoteNotificationsWithDeviceToken`. Returns the new
    /// token, or `nil` when the app is not registered for remote notifications.
    package func renewDeviceToken() -> String? {
        let token = shell.withLock { shell -> String? in
            guard shell.deviceToken != nil else { return nil }
            shell.deviceToken = randomHex(bytes: 32)
            return shell.deviceToken
        }
        if let token { RemoteNotificationInbox.deviceTokenChanged(token) }
        return token
    }

    package func unregisterForRemoteNotifications(completion: @escaping @Sendable (RemoteRegistrationFailure?) -> Void) {
        shell.withLock { $0.deviceToken = nil }
        reply { completion(nil) }
    }

    package func setSubscribed(_ subscribed: Bool, toChannel channelID: String, completion: @escaping @Sendable (RemoteRegistrationFailure?) -> Void) {
        shell.withLock { shell in
            if subscribed { shell.channels.insert(channelID) } else { shell.channels.remove(channelID) }
        }
        reply { completion(nil) }
    }

    /// The broadcast channels the app subscribed to.
    package var subscribedChannels: Set<String> { shell.withLock { $0.channels } }

    package var appState: AppState { inspect(\.appState) }

    package var badgeCount: Int { inspect(\.badge) }

    /// The app's device token, if it registered for remote notifications and has not unregistered.
    package var deviceToken: String? {
        shell.withLock { $0.deviceToken }
    }

    /// A push reaches the app, as the device's push service hands it over: shown as a notification if
    /// it has something for the person, handed to the app delegate if it is a background or VoIP push.
    ///
    /// - Throws: the payload's error when it is not a JSON object Apple would accept.
    package func receivePush(_ payload: [UInt8], pushType: APNs.PushType = .alert, apnsID: String = UUID().uuidString, collapseID: String? = nil) throws(APNs.PayloadError) {
        let parsed = try APNs.payload(payload).get()
        step { $0.receivePush(parsed, apnsID: apnsID, collapseID: collapseID, pushType: pushType) }
    }

    /// Runs a completion handler on the system's queue, after everything queued before it.
    private func reply(_ job: @escaping @Sendable () -> Void) {
        shell.withLock { enqueue(job, in: &$0) }
    }

    // MARK: - The person and the device

    /// Whether the authorization prompt is waiting for an answer, and for which options.
    package var promptedOptions: AuthorizationOptions? {
        shell.withLock { $0.machine.promptedOptions }
    }

    /// The person answers the authorization prompt.
    package func answerAuthorizationPrompt(allow: Bool) {
        step { $0.answerAuthorizationPrompt(allow: allow) }
    }

    /// The person acts on a notification they can see.
    package func respond(to identifier: String, with action: PersonAction) throws(PersonActionRejection) {
        try step { machine throws(PersonActionRejection) in ((), try machine.respond(to: identifier, with: action)) }
    }

    /// The person opens the app's notification settings.
    package func openAppSettings(from identifier: String?) throws(PersonActionRejection) {
        try step { machine throws(PersonActionRejection) in ((), try machine.openAppSettings(from: identifier)) }
    }

    /// Reads the machine under the lock, for observers and tests.
    package func inspect<T: Sendable>(_ body: (NotificationCenterMachine) -> T) -> T {
        shell.withLock { body($0.machine) }
    }

    /// Changes the machine (settings, app state, location, time zone…) and carries out the effects.
    package func update(_ body: (inout NotificationCenterMachine) -> [NotificationCenterMachine.Effect]) {
        step(body)
    }
}

/// Allows notifications whenever the prompt is shown.
package struct AllowingPromptAnswerer: NotificationPromptAnswerer {
    package init() {}

    package func authorizationPromptShown(options: AuthorizationOptions, system: InProcessNotificationSystem) {
        system.answerAuthorizationPrompt(allow: true)
    }
}
