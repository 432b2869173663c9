package import Foundation

/// One app's notifications as the system keeps them, as a pure state machine.
///
/// Every input (an app's call, a person's action, the passing of time, a location update) is a method
/// that changes the state and returns the effects the caller must carry out, in order: prompt the person,
/// ask the app's delegate, show a notification, hand over a response. The machine itself does no I/O and
/// reads no clock; the shell around it passes the time in and performs the effects. A method that
/// throws has changed nothing: it checks everything before it changes anything.
package struct NotificationCenterMachine: Sendable, Codable {
    /// Limits and deadlines; the defaults are Apple's where Apple has one.
    package struct Configuration: Sendable, Hashable, Codable {
        /// How many requests with a date may be pending at once; `nil` for no limit. Apple keeps 64.
        package var pendingRequestLimit: Int? = 64
        /// How many notifications the person can see of one app at once (on screen, on the lock screen,
        /// in the list); past it the oldest leaves, as older notifications leave iOS's list. `nil` for no
        /// limit. Apple gives no figure; 100 is far more than a person reads of one app, and keeps a
        /// chatty app's stored state bounded.
        package var visibleLimit: Int? = 100
        /// How long the app's delegate has to answer `willPresent` before nothing is presented.
        package var willPresentTimeout: TimeInterval = 5
        /// How long the app's delegate has to call `didReceive`'s completion handler before it is reported.
        package var responseTimeout: TimeInterval = 30
        /// How long the app's handler has to call `didReceiveRemoteNotification`'s completion handler
        /// before it is reported; Apple gives 30 seconds.
        package var remoteNotificationTimeout: TimeInterval = 30
        /// How many background pushes per hour may wake the app when it is not in the foreground (see
        /// ``BackgroundPushBudget``); `nil` for no limit, as when Xcode runs an app.
        package var backgroundPushesPerHour: Int? = 3

        package init() {}

        private enum CodingKeys: String, CodingKey {
            case pendingRequestLimit, visibleLimit, willPresentTimeout, responseTimeout
            case remoteNotificationTimeout, backgroundPushesPerHour
        }

        /// A state stored before a limit existed gets its default; `null` stored means no limit.
        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            pendingRequestLimit = try container.decodeIfPresent(Int.self, forKey: .pendingRequestLimit)
            if container.contains(.visibleLimit) { visibleLimit = try container.decodeIfPresent(Int.self, forKey: .visibleLimit) }
            willPresentTimeout = try container.decodeIfPresent(TimeInterval.self, forKey: .willPresentTimeout) ?? willPresentTimeout
            responseTimeout = try container.decodeIfPresent(TimeInterval.self, forKey: .responseTimeout) ?? responseTimeout
            remoteNotificationTimeout = try container.decodeIfPresent(TimeInterval.self, forKey: .remoteNotificationTimeout) ?? remoteNotificationTimeout
            if container.contains(.backgroundPushesPerHour) {
                backgroundPushesPerHour = try container.decodeIfPresent(Int.self, forKey: .backgroundPushesPerHour)
            }
        }

        package func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(pendingRequestLimit, forKey: .pendingRequestLimit)
            try container.encode(visibleLimit, forKey: .visibleLimit)
            try container.encode(willPresentTimeout, forKey: .willPresentTimeout)
            try container.encode(responseTimeout, forKey: .responseTimeout)
            try container.encode(remoteNotificationTimeout, forKey: .remoteNotificationTimeout)
            try container.encode(backgroundPushesPerHour, forKey: .backgroundPushesPerHour)
        }
    }

    /// A request waiting for its trigger.
    package struct PendingRequest: Sendable, Hashable, Codable {
        package var request: NotificationRequest
        /// When it fires next; `nil` for location triggers and for calendar components that never match.
        package var nextFireDate: Date?
        /// For location triggers: whether the device was inside the region at the last location update.
        package var insideRegion: Bool?
        /// Its place in the order requests were added.
        package internal(set) var sequence: UInt64

        package init(request: NotificationRequest, nextFireDate: Date?, insideRegion: Bool?, sequence: UInt64) {
            self.request = request
            self.nextFireDate = nextFireDate
            self.insideRegion = insideRegion
            self.sequence = sequence
        }
    }

    /// A notification the person can see: on screen, on the lock screen or in the list.
    package struct VisibleNotification: Sendable, Hashable, Codable {
        package var notification: DeliveredNotification
        package var presentation: Presentation
        /// The actions of its category when it was presented: what the person can pick.
        package var actions: [NotificationAction]
        package var categoryOptions: CategoryOptions
        /// Its category's `hiddenPreviewsBodyPlaceholder` when it was presented, if it has one: shown in
        /// place of the body when previews are hidden (`%u` becomes the number in its thread).
        package var hiddenPreviewsBodyPlaceholder: String?
        /// Its category's `categorySummaryFormat` when it was presented, if it has one: the summary of a
        /// thread's stack (`%u` the number of notifications, `%@` their summary arguments).
        package var categorySummaryFormat: String?
        /// The Scheduled Summary it waits for or came in; `nil` when it was delivered at once.
        package var summary: SummaryPlacement? = nil

        package init(
            notification: DeliveredNotification, presentation: Presentation, actions: [NotificationAction], categoryOptions: CategoryOptions,
            hiddenPreviewsBodyPlaceholder: String? = nil, categorySummaryFormat: String? = nil, summary: SummaryPlacement? = nil
        ) {
            self.notification = notification
            self.presentation = presentation
            self.actions = actions
            self.categoryOptions = categoryOptions
            self.hiddenPreviewsBodyPlaceholder = hiddenPreviewsBodyPlaceholder
            self.categorySummaryFormat = categorySummaryFormat
            self.summary = summary
        }
    }

    /// Something the shell must do, in the order given.
    package enum Effect: Sendable, Hashable {
        /// Show the person the authorization prompt for these options.
        case promptForAuthorization(AuthorizationOptions)
        /// Finish the app's `requestAuthorization` call `call`.
        case authorizationCompleted(call: UInt64, granted: Bool)
        /// The person's settings for the app changed.
        case settingsChanged(NotificationSettings)
        /// Ask the app's delegate `willPresent`; answer with ``NotificationCenterMachine/answerWillPresent(ticket:options:)``.
        case askWillPresent(ticket: UInt64, DeliveredNotification)
        /// A notification reached the person (or, with an empty presentation, was suppressed).
        case presented(VisibleNotification)
        /// The app's badge changed.
        case badgeChanged(Int)
        /// Hand a response to the app's delegate; confirm with ``NotificationCenterMachine/completeResponse(ticket:)``.
        case deliverResponse(ticket: UInt64, NotificationResponse)
        /// Tell the app's delegate the person opened its notification settings.
        case openSettings(DeliveredNotification?)
        /// The app moved to the foreground, the background, or stopped.
        case appStateChanged(AppState)
        /// The delegate did not answer `willPresent` in time; nothing was presented.
        case willPresentTimedOut(ticket: UInt64, DeliveredNotification)
        /// The delegate did not call `didReceive`'s completion handler in time.
        case responseTimedOut(ticket: UInt64, NotificationResponse)
        /// A pending request was dropped because more than the limit were pending.
        case discardedOverLimit(NotificationRequest)
        /// The app removed these delivered notifications: they left the screen and the list.
        case notificationsRemoved([String])
        /// The person acted on a notification (`actionIdentifier` as in the response: Apple's default or
        /// dismiss identifier, or the action's): it left the screen and the list, on every surface,
        /// whether or not the app hears of it.
        case personActed(identifier: String, actionIdentifier: String)
        /// The Scheduled Summary came: these notifications, held for it, are now shown (in the order they arrived).
        case summaryDelivered([VisibleNotification])
        /// The app must be started (in this state) to receive what the person did; it is kept until then.
        case launchApp(AppState)
        /// Hand a background or VoIP push to the app's `didReceiveRemoteNotification`; it confirms
        /// with ``NotificationCenterMachine/completeRemoteNotification(ticket:)``.
        case deliverRemoteNotification(ticket: UInt64, RemoteNotification)
        /// A background push waits: the app is not reachable, or its budget is spent for now.
        case remoteNotificationHeld(RemoteNotification)
        /// The app did not call the completion handler of `didReceiveRemoteNotification` in time.
        case remoteNotificationTimedOut(ticket: UInt64, RemoteNotification)
        /// Start the app's service extension for a push (its request, with the original content) and
        /// hand back what it makes with ``NotificationCenterMachine/finishPreparation(ticket:content:failure:)``.
        case prepareContent(ticket: UInt64, ContentPreparation)
        /// Tell the running extension its time is nearly up (`serviceExtensionTimeWillExpire()`).
        case preparationTimeWillExpire(ticket: UInt64)
        /// The preparation ended: stop the extension if it still runs. What the person is shown follows.
        case preparationEnded(ticket: UInt64, ContentPreparation, PreparationOutcome)
    }

    /// Something for the app that waits until the app is reachable.
    package enum QueuedForApp: Sendable, Hashable, Codable {
        case response(ticket: UInt64, NotificationResponse)
        case openSettings(DeliveredNotification?)
    }

    /// What the machine waits for: a trigger's date or a delegate's deadline.
    enum WakeUp: Hashable, Sendable, Codable {
        case request(String)
        case willPresentDeadline(UInt64)
        case responseDeadline(UInt64)
        case remoteNotificationDeadline(UInt64)
        /// The held background push may be handed over: the budget has refilled.
        case heldRemoteNotification
        /// A service extension's time is nearly up, and up.
        case preparationWarning(UInt64)
        case preparationDeadline(UInt64)
        /// The Scheduled Summary that the earliest held notification waits for comes.
        case summaryDelivery
    }

    package internal(set) var configuration: Configuration
    /// The device's calendar, for calendar triggers that do not name one.
    package internal(set) var calendar: Calendar
    /// The device's time zone, for calendar triggers that do not name one.
    package internal(set) var timeZone: TimeZone
    package internal(set) var now: Date
    package internal(set) var settings: NotificationSettings = .notDetermined
    package internal(set) var categories: [String: NotificationCategory] = [:] {
        didSet { categoriesChanged = isRecordingChanges }
    }
    package internal(set) var badge: Int = 0
    package internal(set) var appState: AppState
    package internal(set) var location: Coordinate?
    package internal(set) var isDeviceLocked = false
    /// The Focus on now, as it applies to this app (`nil` when none is on, or it allows the app). Not
    /// part of the saved state: a system brings it to every step (``DeviceConditions``) or holds it itself.
    package internal(set) var focus: Focus?
    /// The person's Scheduled Summary, if it is on; it holds this app's notifications only when the app's
    /// `scheduledDeliverySetting` is on. Not saved either: a system brings it to every step or holds it.
    package internal(set) var scheduledSummary: ScheduledSummary?
    /// Whether the app can be called right now. In-process the app always can; the daemon's apps only
    /// while they are connected. Responses for an unreachable app are kept, in order, until it is.
    package internal(set) var isAppReachable: Bool

    // Internal rather than private: the machine's record (`NotificationCenterMachine+Record.swift`)
    // reads and restores them.
    var pending = Journaled<String, PendingRequest>()
    var visible = Journaled<String, VisibleNotification>()
    var visibleOrder: [String: UInt64] = [:]
    var wakeUps = TriggerQueue<WakeUp>()
    var promptCalls: [UInt64]? = nil
    var promptOptions: AuthorizationOptions = []
    var awaitingPresentation: [UInt64: DeliveredNotification] = [:]
    var awaitingResponse: [UInt64: NotificationResponse] = [:]
    /// Background and VoIP pushes handed to the app, not yet confirmed.
    var awaitingRemoteNotification: [UInt64: RemoteNotification] = [:]
    /// The newest background push that waits for the app (iOS, too, holds only the newest).
    package internal(set) var heldRemoteNotification: RemoteNotification?
    /// Pushes whose content the app's service extension is preparing, by ticket.
    package internal(set) var preparing: [UInt64: ContentPreparation] = [:]

    /// The push an app started now is launched for, as iOS gives it in the launch options
    /// (`UIApplication.LaunchOptionsKey.remoteNotification`): the payload of the latest notification
    /// from a push that a response waiting for the app answers, or else of the background push held
    /// for it.
    package var launchRemoteNotification: [String: PropertyListValue]? {
        for case .response(_, let response) in queuedForApp.items.reversed() where response.notification.request.trigger == .push {
            return response.notification.request.content.userInfo
        }
        return heldRemoteNotification?.userInfo
    }
    /// What is left of the app's background push budget; created at its first background push.
    var backgroundBudget: BackgroundPushBudget?
    var queuedForApp = QueueForApp()
    var nextSequence: UInt64 = 0
    /// Whether the machine notes which rows each step changes, for a store (see ``takeChanges()``).
    var isRecordingChanges = false
    var categoriesChanged = false
    /// The core as last taken for a store: a step writes it only when it differs.
    var recordedCore: Core?
    /// Attachment files of requests and notifications that left the machine since the shell last took
    /// them; some may still be referenced by others (a repeating request and its deliveries share files).
    var releasedAttachments: Set<URL> = []
    /// Stages of pushes that came through a gateway, for its delivery log, since the last
    /// ``takeDeliveryReports()``; not part of the saved state (the shell saves them with the step).
    var deliveryReports: [DeliveryLog.Report] = []

    private enum CodingKeys: String, CodingKey {
        case configuration, calendar, timeZone, now, settings, categories, badge, appState, location
        case isDeviceLocked, isAppReachable, pending, visible, visibleOrder, wakeUps, promptCalls, promptOptions
        case awaitingPresentation, awaitingResponse, queuedForApp, nextSequence
    }

    package init(
        now: Date,
        calendar: Calendar,
        timeZone: TimeZone,
        appState: AppState = .foreground,
        appReachable: Bool = true,
        configuration: Configuration = Configuration()
    ) {
        self.now = now
        self.calendar = calendar
        self.timeZone = timeZone
        self.appState = appState
        self.isAppReachable = appReachable
        self.configuration = configuration
        locationRequestCount = 0
    }

    private mutating func takeSequence() -> UInt64 {
        defer { nextSequence += 1 }
        return nextSequence
    }

    // MARK: - Authorization

    /// The app asks for authorization; `call` identifies the call to finish.
    ///
    /// The first explicit request prompts the person, and later ones return the stored answer without
    /// asking. A provisional request is granted at once, quietly. A later explicit request while
    /// provisional prompts the person for full authorization.
    package mutating func requestAuthorization(options: AuthorizationOptions, call: UInt64) -> [Effect] {
        switch settings.authorizationStatus {
        case .notDetermined where options.contains(.provisional):
            settings = .granting(options, status: .provisional)
            return [.settingsChanged(settings), .authorizationCompleted(call: call, granted: true)]
        case .notDetermined:
            return showPrompt(options: options, call: call)
        case .provisional where !options.contains(.provisional):
            return showPrompt(options: options, call: call)
        case .provisional, .authorized, .ephemeral:
            return [.authorizationCompleted(call: call, granted: true)]
        case .denied:
            return [.authorizationCompleted(call: call, granted: false)]
        }
    }

    private mutating func showPrompt(options: AuthorizationOptions, call: UInt64) -> [Effect] {
            if promptCalls != nil {
                promptCalls!.append(call)
                return []
            }
            promptCalls = [call]
            promptOptions = options
            return [.promptForAuthorization(options)]
    }

    /// Whether the authorization prompt is on screen, waiting for the person.
    package var isAuthorizationPromptShown: Bool { promptCalls != nil }

    /// The options the prompt on screen asks for.
    package var promptedOptions: AuthorizationOptions? { promptCalls == nil ? nil : promptOptions }

    /// The person answers the authorization prompt.
    package mutating func answerAuthorizationPrompt(allow: Bool) -> [Effect] {
        guard let calls = promptCalls else { return [] }
        promptCalls = nil
        settings = .granting(promptOptions, status: allow ? .authorized : .denied)
        return [.settingsChanged(settings)] + calls.map { .authorizationCompleted(call: $0, granted: allow) }
    }

    /// The person changes the app's notification settings (or an administrator resets them).
    package mutating func changeSettings(_ newSettings: NotificationSettings) -> [Effect] {
        guard newSettings != settings else { return [] }
        settings = newSettings
        // An app taken out of the summary (or no longer authorized) shows what it held for it at once.
        return [.settingsChanged(settings)] + placeHeldNotifications()
    }

    // MARK: - Categories

    /// Replaces every registered category with `newCategories`, effective for the next presentation.
    ///
    /// - Throws: the rule the categories break (``RequestRules``); nothing changes then.
    package mutating func setCategories(_ newCategories: [NotificationCategory]) throws(RuleViolation) {
        if let violation = RequestRules.violation(in: newCategories) { throw violation }
        categories = Dictionary(newCategories.map { ($0.identifier, $0) }, uniquingKeysWith: { _, last in last })
    }

    // MARK: - Requests

    /// The app adds a request: it replaces any pending request with the same identifier, and fires at
    /// once when it has no trigger.
    ///
    /// - Throws: a failure with a ``RuleViolation`` for a request that breaks ``RequestRules``;
    ///   `notificationsNotAllowed` unless the app is authorized (or provisional);
    ///   `notificationInvalidNoContent` for content with nothing to show, play or badge;
    ///   `notificationInvalidNoDate` for a calendar trigger whose components never match.
    package mutating func add(_ request: NotificationRequest) throws(NotificationFailure) -> [Effect] {
        if let failure = RequestRules.failure(for: request) { throw failure }
        // Only the push service names a push: an app cannot write into another push's delivery log.
        var request = request
        request.pushUniqueID = nil
        guard PresentationPolicy.allowsDelivery(settings) else {
            throw NotificationFailure(.notificationsNotAllowed)
        }
        guard !request.content.isEmpty else {
            throw NotificationFailure(.notificationInvalidNoContent)
        }
        var nextFireDate: Date? = nil
        var insideRegion: Bool? = nil
        switch request.trigger {
        case nil, .push:
            removePending(request.identifier)
            return fire(request, at: now)
        case .timeInterval, .calendar:
            nextFireDate = TriggerRules.firstFireDate(of: request.trigger!, scheduledAt: now, calendar: calendar, timeZone: timeZone)
            guard nextFireDate != nil else {
                throw NotificationFailure(.notificationInvalidNoDate, detail: "No date matches the trigger's date components.")
            }
        case .location(let region, _):
            insideRegion = location.map(region.contains) ?? false
        }
        removePending(request.identifier)
        if Self.waitsForARegion(request) { locationRequestCount? += 1 }
        pending[request.identifier] = PendingRequest(
            request: request,
            nextFireDate: nextFireDate,
            insideRegion: insideRegion,
            sequence: takeSequence()
        )
        if let nextFireDate {
            wakeUps.schedule(.request(request.identifier), at: nextFireDate)
        }
        return enforcePendingLimit()
    }

    /// Keeps the soonest-firing requests within the limit (a repeating request counts once) and discards
    /// the rest, latest-firing first; among requests firing at the same time the newest goes first.
    private mutating func enforcePendingLimit() -> [Effect] {
        guard let limit = configuration.pendingRequestLimit, pending.count > limit else { return [] }
        // Counted before anything is copied: almost every add stays within the limit.
        var datedCount = 0
        for (_, entry) in pending.elements where entry.nextFireDate != nil { datedCount += 1 }
        guard datedCount > limit else { return [] }
        let dated = pending.values.filter { $0.nextFireDate != nil }
        let overflow = dated.sorted {
            ($0.nextFireDate!, $0.sequence) > ($1.nextFireDate!, $1.sequence)
        }.prefix(dated.count - limit)
        return overflow.map { entry in
            removePending(entry.request.identifier)
            return .discardedOverLimit(entry.request)
        }
    }

    /// The requests waiting for their triggers, in the order they were added.
    package var pendingRequests: [PendingRequest] {
        pending.values.sorted { $0.sequence < $1.sequence }
    }

    /// Removes pending requests; identifiers that are not pending are ignored.
    package mutating func removePendingRequests(_ identifiers: [String]) {
        identifiers.forEach { removePending($0) }
    }

    package mutating func removeAllPendingRequests() {
        for (identifier, entry) in pending.elements {
            wakeUps.remove(.request(identifier))
            release(entry.request)
        }
        pending.removeAll()
        locationRequestCount = 0
    }

    private mutating func removePending(_ identifier: String) {
        if let entry = pending.removeValue(forKey: identifier) {
            if Self.waitsForARegion(entry.request) { locationRequestCount? -= 1 }
            wakeUps.remove(.request(identifier))
            release(entry.request)
        }
    }

    // MARK: - Delivered

    /// The notifications in the notification center's list, oldest first. As on Apple's platforms,
    /// notifications fired by a location trigger are not listed (they can still be removed).
    package var deliveredNotifications: [DeliveredNotification] {
        visible.values
            .filter { shown in
                guard shown.presentation.list else { return false }
                if case .location? = shown.notification.request.trigger { return false }
                return true
            }
            .sorted { visibleOrder[$0.notification.request.identifier]! < visibleOrder[$1.notification.request.identifier]! }
            .map(\.notification)
    }

    /// Every notification the person can currently see or act on, oldest first.
    package var visibleNotifications: [VisibleNotification] {
        visible.values.sorted {
            visibleOrder[$0.notification.request.identifier]! < visibleOrder[$1.notification.request.identifier]!
        }
    }

    @discardableResult
    package mutating func removeDeliveredNotifications(_ identifiers: [String]) -> [Effect] {
        var removed: [String] = []
        for identifier in identifiers {
            if let shown = removeVisible(identifier) {
                report(shown.notification.request, .removed, "removed by the app")
                removed.append(identifier)
            }
        }
        return removed.isEmpty ? [] : [.notificationsRemoved(removed)]
    }

    @discardableResult
    package mutating func removeAllDeliveredNotifications() -> [Effect] {
        let removed = visibleOrder.sorted { $0.value < $1.value }.map(\.key)
        for shown in visible.values {
            report(shown.notification.request, .removed, "removed by the app")
            release(shown.notification.request)
        }
        visible.removeAll()
        visibleOrder.removeAll()
        return removed.isEmpty ? [] : [.notificationsRemoved(removed)]
    }

    /// Takes a notification off the screen and out of the list; returns it, if it was there.
    @discardableResult
    private mutating func removeVisible(_ identifier: String) -> VisibleNotification? {
        visibleOrder.removeValue(forKey: identifier)
        guard let shown = visible.removeValue(forKey: identifier) else { return nil }
        release(shown.notification.request)
        return shown
    }

    // MARK: - Badge

    /// The app sets its badge; 0 removes it.
    ///
    /// - Throws: `badgeInputInvalid` for a negative count; `notificationsNotAllowed` when the person has
    ///   not allowed badges.
    package mutating func setBadgeCount(_ count: Int) throws(NotificationFailure) -> [Effect] {
        guard count >= 0 else { throw NotificationFailure(.badgeInputInvalid, detail: "Got \(count).") }
        guard settings.badgeSetting == .enabled else { throw NotificationFailure(.notificationsNotAllowed, detail: "Badges are not allowed.") }
        guard count != badge else { return [] }
        badge = count
        return [.badgeChanged(count)]
    }

    // MARK: - Time

    /// The earliest date at which ``advance(to:)`` has something to do.
    package mutating func nextWakeUpDate() -> Date? {
        wakeUps.nextDate()
    }

    /// Moves time forward to `date` and carries out the first thing due by then: a trigger firing or a
    /// deadline passing. Returns `nil` when nothing is due; call it again until it does, so that the
    /// effects of each step are carried out before the next step happens.
    package mutating func advance(to date: Date) -> [Effect]? {
        guard let (wakeUp, dueDate) = wakeUps.popDue(at: date) else {
            now = max(now, date)
            return nil
        }
        now = max(now, dueDate)
        switch wakeUp {
        case .request(let identifier):
            return fireScheduled(identifier, dueAt: dueDate)
        case .willPresentDeadline(let ticket):
            guard let notification = awaitingPresentation.removeValue(forKey: ticket) else { return [] }
            return [.willPresentTimedOut(ticket: ticket, notification)]
                + present(notification, .none, unseenBecause: "the app in the foreground did not answer willPresent in time")
        case .responseDeadline(let ticket):
            guard let response = awaitingResponse.removeValue(forKey: ticket) else { return [] }
            release(response.notification.request)
            return [.responseTimedOut(ticket: ticket, response)]
        case .remoteNotificationDeadline(let ticket):
            guard let remote = awaitingRemoteNotification.removeValue(forKey: ticket) else { return [] }
            return [.remoteNotificationTimedOut(ticket: ticket, remote)]
        case .heldRemoteNotification:
            return releaseHeldRemoteNotification()
        case .preparationWarning(let ticket):
            guard preparing[ticket] != nil else { return [] }
            preparing[ticket]?.warned = true
            return [.preparationTimeWillExpire(ticket: ticket)]
        case .preparationDeadline(let ticket):
            guard let preparation = preparing[ticket] else { return [] }
            return endPreparation(ticket, .timedOut, showing: preparation.request)
        case .summaryDelivery:
            return deliverSummary(dueAt: dueDate)
        }
    }

    /// Brings the machine up to `date`: carries out, in order, at most `limit` of the triggers and
    /// deadlines that fell due by then. Every system catches up through this before it applies an
    /// input, so that what fell due happens first.
    ///
    /// - Returns: the effects, in order, and how many wake-ups were carried out (fewer than `limit`
    ///   means nothing more is due by `date`).
    package mutating func catchUp(to date: Date, atMost limit: Int = .max) -> (effects: [Effect], wakeUps: Int) {
        var effects: [Effect] = []
        var wakeUps = 0
        while wakeUps < limit, let due = advance(to: date) {
            effects += due
            wakeUps += 1
        }
        return (effects, wakeUps)
    }

    /// Changes the device's time zone: calendar triggers that do not name a zone follow the device, and
    /// so do the Scheduled Summary's times.
    package mutating func changeTimeZone(_ newTimeZone: TimeZone) -> [Effect] {
        timeZone = newTimeZone
        for (identifier, entry) in pending.elements {
            guard case .calendar(let components, _)? = entry.request.trigger, components.timeZone == nil else { continue }
            let next = TriggerRules.nextDate(matching: components, after: now, calendar: calendar, timeZone: timeZone)
            pending[identifier]?.nextFireDate = next
            if let next { wakeUps.schedule(.request(identifier), at: next) } else { wakeUps.remove(.request(identifier)) }
        }
        // The summary's times are on the device's clock: what waits for one waits for it in the new zone.
        return placeHeldNotifications()
    }

    private mutating func fireScheduled(_ identifier: String, dueAt dueDate: Date) -> [Effect] {
        guard var entry = pending[identifier] else { return [] }
        let request = entry.request
        // A repeat always moves time forward: a trigger that would fire again at the same moment (only
        // a state stored before the rules were enforced can hold one) fires this once and stops.
        if let trigger = request.trigger,
           let next = TriggerRules.fireDate(of: trigger, after: dueDate, calendar: calendar, timeZone: timeZone),
           next > dueDate, RequestRules.violation(in: trigger) == nil {
            entry.nextFireDate = next
            pending[identifier] = entry
            wakeUps.schedule(.request(identifier), at: next)
        } else {
            pending.removeValue(forKey: identifier)
            if Self.waitsForARegion(request) { locationRequestCount? -= 1 }
            release(request)
        }
        return fire(request, at: dueDate)
    }

    // MARK: - Location

    /// The device moved: location triggers whose region was entered or left fire.
    package mutating func updateLocation(_ coordinate: Coordinate) -> [Effect] {
        location = coordinate
        var effects: [Effect] = []
        for entry in pendingRequests {
            guard case .location(let region, let repeats)? = entry.request.trigger else { continue }
            let wasInside = entry.insideRegion ?? false
            let isInside = region.contains(coordinate)
            pending[entry.request.identifier]?.insideRegion = isInside
            let crossed = (!wasInside && isInside && region.notifyOnEntry) || (wasInside && !isInside && region.notifyOnExit)
            guard crossed else { continue }
            if !repeats { removePending(entry.request.identifier) }
            effects += fire(entry.request, at: now)
        }
        return effects
    }

    // MARK: - Remote notifications

    /// A remote notification arrived for the app (the request ``APNs/request(for:apnsID:collapseID:)``
    /// made of a push): it is shown as a local one fires, through `willPresent` when the app is in the
    /// foreground, if the app may show notifications. Never refused: the provider was answered when
    /// the gateway stored it; a push the app may not show is simply not shown, as on iOS.
    ///
    /// A request with the same identifier (a push's collapse identifier) is replaced, pending or shown.
    /// A push for the app itself (`remote`: a background or VoIP push) is also handed to the app's
    /// `didReceiveRemoteNotification`, whether or not the person may see anything.
    ///
    /// A push marked `mutable-content` goes first through the app's service extension, when it has one
    /// (`serviceExtension`) and the push has something for the person the app may show, as on iOS:
    /// nothing is shown until the extension hands back the content (``finishPreparation(ticket:content:failure:)``)
    /// or its time is up.
    package mutating func receivePush(
        _ request: NotificationRequest, wakingApp remote: RemoteNotification? = nil,
        isMutable: Bool = false, serviceExtension: ServiceExtension? = nil
    ) -> [Effect] {
        removePending(request.identifier)
        var effects: [Effect] = []
        // A push with nothing for the person (a background push) reaches only the app.
        if !request.content.isEmpty {
            if isMutable, let serviceExtension, PresentationPolicy.allowsDelivery(settings) {
                effects += startPreparation(ContentPreparation(request: request, serviceExtension: serviceExtension, started: now))
            } else {
                effects += fire(request, at: now)
            }
        }
        if let remote { effects += wakeApp(with: remote) }
        return effects
    }

    /// A push as the device's push service hands it over, read from its payload: the request it makes
    /// (nothing for the person when it is a VoIP push, as PushKit's never show anything), and what it
    /// hands to the app itself (see ``receivePush(_:wakingApp:)``). Every system receives pushes here.
    ///
    /// `uniqueID` is the push's `apns-unique-id` when a gateway sent it: its stages on the device are
    /// then reported for the gateway's delivery log (``takeDeliveryReports()``).
    package mutating func receivePush(
        _ payload: APNs.Payload, apnsID: String, collapseID: String?, pushType: APNs.PushType,
        uniqueID: String? = nil, serviceExtension: ServiceExtension? = nil
    ) -> [Effect] {
        var request = APNs.request(for: payload, apnsID: apnsID, collapseID: collapseID)
        request.pushUniqueID = uniqueID
        if pushType == .voip { request.content = NotificationContent() }
        var remote = APNs.remoteNotification(for: payload, apnsID: apnsID, pushType: pushType)
        remote?.pushUniqueID = uniqueID
        return receivePush(request, wakingApp: remote, isMutable: payload.isMutableContent && pushType == .alert, serviceExtension: serviceExtension)
    }

    // MARK: - Service extensions

    private mutating func startPreparation(_ preparation: ContentPreparation) -> [Effect] {
        let ticket = takeSequence()
        // A newer push with the same identifier replaces one still being prepared, as it would replace
        // the shown notification: the older one's extension is stopped and it is never shown.
        var effects: [Effect] = []
        for (older, earlier) in preparing where earlier.request.identifier == preparation.request.identifier {
            effects += endPreparation(older, .failed("replaced by a newer push with the same identifier"), showing: nil)
        }
        preparing[ticket] = preparation
        scheduleWakeUps(ofPreparation: ticket)
        report(preparation.request, .preparing, "service extension started")
        return effects + [.prepareContent(ticket: ticket, preparation)]
    }

    /// Schedules when the preparation of `ticket` is warned (unless it was) and when its time is up.
    mutating func scheduleWakeUps(ofPreparation ticket: UInt64) {
        guard let preparation = preparing[ticket] else { return }
        if !preparation.warned { wakeUps.schedule(.preparationWarning(ticket), at: preparation.warningDate) }
        wakeUps.schedule(.preparationDeadline(ticket), at: preparation.deadline)
    }

    /// The app's service extension handed back the content for a push (`content`), or failed (`nil`,
    /// with the reason in `failure`): the new content is shown, or else the original. An answer for a
    /// preparation that ended already (its time was up) changes nothing and returns no effects.
    ///
    /// The content keeps the push's identifier and trigger; content that breaks a rule is not shown,
    /// the original is.
    package mutating func finishPreparation(ticket: UInt64, content: NotificationContent?, failure: String? = nil) -> [Effect] {
        guard let preparation = preparing[ticket] else { return [] }
        guard let content else {
            return endPreparation(ticket, .failed(failure ?? "the extension handed back nothing"), showing: preparation.request)
        }
        if let violation = RequestRules.violation(in: content) {
            return endPreparation(ticket, .failed("its content breaks a rule: \(violation.message)"), showing: preparation.request)
        }
        var prepared = preparation.request
        prepared.content = content
        return endPreparation(ticket, .prepared, showing: prepared)
    }

    /// Ends a preparation, showing `request` (the prepared one or the original), if any.
    private mutating func endPreparation(_ ticket: UInt64, _ outcome: PreparationOutcome, showing request: NotificationRequest?) -> [Effect] {
        guard let preparation = preparing.removeValue(forKey: ticket) else { return [] }
        wakeUps.remove(.preparationWarning(ticket))
        wakeUps.remove(.preparationDeadline(ticket))
        if request != preparation.request { release(preparation.request) }
        report(preparation.request, .prepared, outcome.reason.map { "\(outcome.name): \($0)" } ?? outcome.name)
        var effects: [Effect] = [.preparationEnded(ticket: ticket, preparation, outcome)]
        if let request { effects += fire(request, at: now) }
        return effects
    }

    /// Hands a push for the app to it, as iOS does: at once to an app in the foreground and for a VoIP
    /// push; otherwise within the app's background budget, starting the app if it is not running. What
    /// cannot go now is held, the newest replacing an older one, until the app is reachable and the
    /// budget allows (or the app comes to the foreground).
    private mutating func wakeApp(with remote: RemoteNotification) -> [Effect] {
        if let older = heldRemoteNotification { report(older, .removed, "replaced by a newer push for the app while held") }
        heldRemoteNotification = remote
        wakeUps.remove(.heldRemoteNotification)
        let effects = releaseHeldRemoteNotification()
        guard heldRemoteNotification == nil else {
            report(remote, .heldForApp, isAppReachable ? "the app's background budget is spent" : "the app is not running")
            return [.remoteNotificationHeld(remote)] + effects
        }
        return effects
    }

    /// Hands the held background push to the app if it can go now; else starts the app for it, or
    /// waits for the budget.
    private mutating func releaseHeldRemoteNotification() -> [Effect] {
        guard let held = heldRemoteNotification else { return [] }
        let unthrottled = held.isVoIP || (isAppReachable && appState == .foreground) || configuration.backgroundPushesPerHour == nil
        if isAppReachable {
            guard unthrottled || spendBackgroundPush() else { return waitForBackgroundBudget() }
            heldRemoteNotification = nil
            wakeUps.remove(.heldRemoteNotification)
            let ticket = takeSequence()
            awaitingRemoteNotification[ticket] = held
            wakeUps.schedule(.remoteNotificationDeadline(ticket), at: now.addingTimeInterval(configuration.remoteNotificationTimeout))
            report(held, .handedToApp)
            return [.deliverRemoteNotification(ticket: ticket, held)]
        }
        // The budget is spent when the push is handed over, once the started app connects.
        guard unthrottled || backgroundBudget(at: now).allows(at: now) else { return waitForBackgroundBudget() }
        return [.launchApp(.background)]
    }

    /// Changes how many background pushes per hour may wake the app when it is not in the foreground;
    /// `nil` for no limit. The new budget starts full, so the push held for the app goes at once.
    ///
    /// iOS has no such call: its budget is the system's own. Developers testing background pushes need
    /// one, as Xcode gives them by not throttling an app it runs.
    package mutating func setBackgroundPushesPerHour(_ perHour: Int?) -> [Effect] {
        let perHour = perHour.map { max(1, $0) }
        guard perHour != configuration.backgroundPushesPerHour else { return [] }
        configuration.backgroundPushesPerHour = perHour
        backgroundBudget = nil
        wakeUps.remove(.heldRemoteNotification)
        return releaseHeldRemoteNotification()
    }

    private mutating func waitForBackgroundBudget() -> [Effect] {
        wakeUps.schedule(.heldRemoteNotification, at: backgroundBudget(at: now).nextAllowedDate(after: now))
        return []
    }

    private mutating func backgroundBudget(at date: Date) -> BackgroundPushBudget {
        var budget = backgroundBudget ?? BackgroundPushBudget(perHour: configuration.backgroundPushesPerHour ?? 1, at: date)
        if let perHour = configuration.backgroundPushesPerHour { budget.perHour = max(1, perHour) }
        backgroundBudget = budget
        return budget
    }

    private mutating func spendBackgroundPush() -> Bool {
        var budget = backgroundBudget(at: now)
        defer { backgroundBudget = budget }
        return budget.spend(at: now)
    }

    /// The app's handler called `didReceiveRemoteNotification`'s completion handler.
    ///
    /// - Returns: the push it confirmed, or `nil` if the ticket was not open (confirmed already, or
    ///   timed out).
    @discardableResult
    package mutating func completeRemoteNotification(ticket: UInt64, result: BackgroundFetchResult? = nil) -> RemoteNotification? {
        guard let remote = awaitingRemoteNotification.removeValue(forKey: ticket) else { return nil }
        wakeUps.remove(.remoteNotificationDeadline(ticket))
        report(remote, .completedByApp, result.map { "\($0)" })
        return remote
    }

    // MARK: - Delivery

    private mutating func fire(_ request: NotificationRequest, at date: Date) -> [Effect] {
        let notification = DeliveredNotification(request: request, date: date)
        guard PresentationPolicy.allowsDelivery(settings) else {
            report(request, .notShown, "the app is not authorized (\(settings.authorizationStatus))")
            return []
        }
        // A locked device has no app in the foreground, as on iOS: the person's settings decide.
        if appState == .foreground && isAppReachable && !isDeviceLocked {
            let ticket = takeSequence()
            awaitingPresentation[ticket] = notification
            wakeUps.schedule(.willPresentDeadline(ticket), at: date.addingTimeInterval(configuration.willPresentTimeout))
            return [.askWillPresent(ticket: ticket, notification)]
        }
        return present(notification, PresentationPolicy.background(content: request.content, settings: settings),
                       unseenBecause: Self.turnedOff)
    }

    /// Why a notification the app did not decide on is not shown.
    private static let turnedOff = "its alerts, list and lock screen are turned off in settings"


    /// The app's delegate answered `willPresent`; `nil` options mean it does not implement the method.
    package mutating func answerWillPresent(ticket: UInt64, options: PresentationOptions?) -> [Effect] {
        guard let notification = awaitingPresentation.removeValue(forKey: ticket) else { return [] }
        wakeUps.remove(.willPresentDeadline(ticket))
        let presentation = PresentationPolicy.foreground(
            options: options ?? [],
            content: notification.request.content,
            settings: settings
        )
        return present(notification, presentation,
                       unseenBecause: options?.isEmpty == false ? Self.turnedOff : "the app in the foreground chose not to show it")
    }

    /// Shows the notification as `presentation` says; `unseenBecause` is why the person does not see
    /// it when nothing of it is visible, for the delivery log.
    private mutating func present(_ notification: DeliveredNotification, _ decided: Presentation, unseenBecause: String) -> [Effect] {
        var presentation = PresentationPolicy.underFocus(decided, focus, content: notification.request.content, settings: settings)
        var summary: SummaryPlacement? = nil
        if presentation.isVisible, let date = summaryDate(holding: notification) {
            summary = SummaryPlacement(date: date, held: true, whenShown: PresentationPolicy.shownAfterSummary(presentation))
            presentation = PresentationPolicy.heldForSummary(presentation)
        }
        let identifier = notification.request.identifier
        let category = categories[notification.request.content.categoryIdentifier]
        let shown = VisibleNotification(
            notification: notification,
            presentation: presentation,
            actions: category?.actions ?? [],
            categoryOptions: category?.options ?? [],
            hiddenPreviewsBodyPlaceholder: category.flatMap { $0.hiddenPreviewsBodyPlaceholder.isEmpty ? nil : $0.hiddenPreviewsBodyPlaceholder },
            categorySummaryFormat: category.flatMap { $0.categorySummaryFormat.isEmpty ? nil : $0.categorySummaryFormat },
            summary: summary
        )
        if let replaced = removeVisible(identifier) {
            report(replaced.notification.request, .removed, "replaced by a newer notification with the same identifier")
        }
        var effects: [Effect] = [.presented(shown)]
        if presentation.isVisible {
            visible[identifier] = shown
            visibleOrder[identifier] = takeSequence()
            if let summary {
                report(notification.request, .presented, "held for the Scheduled Summary of \(summary.date.formatted(.iso8601))")
                scheduleSummaryDelivery()
            } else {
                report(notification.request, .presented, presentation.logDescription)
            }
            if let limit = configuration.visibleLimit, visible.count > limit,
               let oldest = visibleOrder.min(by: { $0.value < $1.value })?.key,
               let dropped = removeVisible(oldest) {
                report(dropped.notification.request, .removed, "the list was full (\(limit) notifications)")
                // The presenters drop it too.
                effects.append(.notificationsRemoved([oldest]))
            }
        } else {
            report(notification.request, .notShown, unseenBecause)
            release(notification.request)
        }
        if let newBadge = presentation.badge, newBadge != badge {
            badge = newBadge
            effects.append(.badgeChanged(newBadge))
        }
        return effects
    }

    // MARK: - App state

    /// The app moved to the foreground or background, or stopped running.
    package mutating func setAppState(_ state: AppState) -> [Effect] {
        guard state != appState else { return [] }
        appState = state
        // An app that comes to the foreground gets its held background push at once.
        let released = state == .foreground && isAppReachable ? releaseHeldRemoteNotification() : []
        return [.appStateChanged(state)] + released
    }

    /// Locks or unlocks the device.
    package mutating func setDeviceLocked(_ locked: Bool) {
        isDeviceLocked = locked
    }

    /// Turns a Focus on (as it applies to this app), or off with `nil`; what is already shown stays.
    package mutating func setFocus(_ focus: Focus?) {
        self.focus = focus
    }

    // MARK: - Scheduled Summary

    /// Turns the Scheduled Summary on, changes its times, or turns it off with `nil`. What is held waits
    /// for the first summary after it arrived at the new times (a summary that is past comes at once);
    /// with the summary off, it is shown now, as an ordinary notification.
    package mutating func setScheduledSummary(_ summary: ScheduledSummary?) -> [Effect] {
        guard summary != scheduledSummary else { return [] }
        scheduledSummary = summary
        return placeHeldNotifications()
    }

    /// The summary a notification arriving now waits for, if the summary holds it.
    private func summaryDate(holding notification: DeliveredNotification) -> Date? {
        guard let scheduledSummary, ScheduledSummary.holds(notification.request.content, settings: settings) else { return nil }
        return scheduledSummary.nextDelivery(after: now, calendar: calendar, timeZone: timeZone)
    }

    /// Moves each held notification to the summary it waits for under the summary's times, the device's
    /// time zone and the app's settings (the first summary after it arrived); shows those the summary no
    /// longer holds at once, as ordinary notifications (quietly, as decided when they arrived).
    private mutating func placeHeldNotifications() -> [Effect] {
        var released: [String] = []
        for (identifier, shown) in visible.elements where shown.summary?.held == true {
            let date = scheduledSummary.flatMap { summary in
                ScheduledSummary.holds(shown.notification.request.content, settings: settings)
                    ? summary.nextDelivery(after: shown.notification.date, calendar: calendar, timeZone: timeZone) : nil
            }
            if let date {
                if date != shown.summary?.date { visible[identifier]?.summary?.date = date }
            } else {
                released.append(identifier)
            }
        }
        let effects = showHeld(released, inSummaryOf: nil).map(Effect.presented)
        scheduleSummaryDelivery()
        return effects
    }

    /// The summary due at `date` comes: what was held for it (or for an earlier one) is shown.
    private mutating func deliverSummary(dueAt date: Date) -> [Effect] {
        let due = visible.elements.filter { $0.1.summary.map { $0.held && $0.date <= date } ?? false }.map { $0.0 }
        let delivered = showHeld(due, inSummaryOf: date)
        scheduleSummaryDelivery()
        return delivered.isEmpty ? [] : [.summaryDelivered(delivered)]
    }

    /// Shows held notifications as their summary decided, in the order they arrived: as delivered in the
    /// summary of `date`, or, with `nil`, as ordinary notifications no summary holds any more.
    private mutating func showHeld(_ identifiers: [String], inSummaryOf date: Date?) -> [VisibleNotification] {
        var shownNow: [VisibleNotification] = []
        for identifier in identifiers.sorted(by: { visibleOrder[$0, default: 0] < visibleOrder[$1, default: 0] }) {
            guard var shown = visible[identifier], var placement = shown.summary else { continue }
            placement.date = date ?? placement.date
            placement.held = false
            shown.summary = date == nil ? nil : placement
            shown.presentation = placement.whenShown
            visible[identifier] = shown
            shownNow.append(shown)
        }
        return shownNow
    }

    /// Wakes the machine when the earliest held notification's summary comes.
    mutating func scheduleSummaryDelivery() {
        let next = visible.values.compactMap { $0.summary?.held == true ? $0.summary?.date : nil }.min()
        if let next { wakeUps.schedule(.summaryDelivery, at: next) } else { wakeUps.remove(.summaryDelivery) }
    }

    // MARK: - Responses

    /// The person acts on a notification they can see; the app receives the response.
    ///
    /// Opening the notification or picking a `.foreground` action brings the app to the foreground; any
    /// other response launches a stopped app in the background. A dismissal reaches the app only if the
    /// notification's category has `.customDismissAction`. The notification leaves the screen and the list.
    ///
    /// - Parameters:
    ///   - offeredActions: the actions the person chose among, when a content extension replaced the
    ///     category's (`notificationActions`).
    ///   - forwardingToApp: `false` when a content extension handled the action and answered `.dismiss`:
    ///     the notification goes, and the app hears nothing.
    package mutating func respond(to identifier: String, with action: PersonAction, offeredActions: [NotificationAction]? = nil,
                                  forwardingToApp: Bool = true) throws(PersonActionRejection) -> [Effect] {
        let (shown, decided, targetState) = try decide(action, on: identifier, offeredActions: offeredActions)
        let response = forwardingToApp ? decided : nil
        removeVisible(identifier)
        let acted: [Effect] = [.personActed(identifier: identifier, actionIdentifier: action.actionIdentifier)]
        switch action {
        case .open: report(shown.notification.request, .opened)
        case .action(let actionIdentifier): report(shown.notification.request, .action, actionIdentifier)
        case .reply(let actionIdentifier, _): report(shown.notification.request, .replied, actionIdentifier)
        case .dismiss: report(shown.notification.request, .dismissed)
        }
        guard let response else { return acted }
        let ticket = takeSequence()
        guard isAppReachable else {
            queuedForApp.append(.response(ticket: ticket, response))
            return acted + [.launchApp(targetState)]
        }
        return acted + setAppState(targetState) + deliver(response, ticket: ticket)
    }

    /// The response the person's action would give, checked as ``respond(to:with:offeredActions:forwardingToApp:)``
    /// checks it, without doing it: what a content extension is handed before the app is.
    package func response(to identifier: String, with action: PersonAction,
                          offeredActions: [NotificationAction]? = nil) throws(PersonActionRejection) -> NotificationResponse? {
        try decide(action, on: identifier, offeredActions: offeredActions).response
    }

    private func decide(_ action: PersonAction, on identifier: String, offeredActions: [NotificationAction]?)
        throws(PersonActionRejection) -> (shown: VisibleNotification, response: NotificationResponse?, targetState: AppState) {
        // What waits for the summary is not seen yet, unless the person shows the next summary early.
        guard let shown = visible[identifier], shown.summary?.held != true || scheduledSummary?.showsNextSummary == true else {
            throw .notificationNotFound(identifier)
        }
        let response: NotificationResponse?
        var targetState: AppState = appState == .notRunning ? .background : appState
        switch action {
        case .open:
            guard !isDeviceLocked else { throw .deviceLocked(SystemActionIdentifier.default) }
            response = NotificationResponse(notification: shown.notification, actionIdentifier: SystemActionIdentifier.default)
            targetState = .foreground
        case .action(let actionIdentifier), .reply(let actionIdentifier, _):
            guard let chosen = (offeredActions ?? shown.actions).first(where: { $0.identifier == actionIdentifier }) else {
                throw .unknownAction(actionIdentifier)
            }
            var userText: String? = nil
            if case .reply(_, let text) = action {
                guard chosen.textInput != nil else { throw .textInputNotAccepted(actionIdentifier) }
                userText = text
            } else if chosen.textInput != nil {
                throw .textInputRequired(actionIdentifier)
            }
            let needsUnlock = chosen.options.contains(.authenticationRequired) || chosen.options.contains(.foreground)
            guard !(needsUnlock && isDeviceLocked) else { throw .deviceLocked(actionIdentifier) }
            if chosen.options.contains(.foreground) { targetState = .foreground }
            response = NotificationResponse(notification: shown.notification, actionIdentifier: actionIdentifier, userText: userText)
        case .dismiss:
            response = shown.categoryOptions.contains(.customDismissAction)
                ? NotificationResponse(notification: shown.notification, actionIdentifier: SystemActionIdentifier.dismiss)
                : nil
        }
        return (shown, response, targetState)
    }

    private mutating func deliver(_ response: NotificationResponse, ticket: UInt64) -> [Effect] {
        awaitingResponse[ticket] = response
        wakeUps.schedule(.responseDeadline(ticket), at: now.addingTimeInterval(configuration.responseTimeout))
        return [.deliverResponse(ticket: ticket, response)]
    }

    /// The app connected (in `state`) or went away.
    ///
    /// When it connects, everything kept for it is handed over in order. When it goes away, a
    /// `willPresent` question it had not answered is settled as for an app in the background, and a
    /// response it had not confirmed is kept to be handed over again when it is back.
    package mutating func setAppReachable(_ reachable: Bool, state: AppState) -> [Effect] {
        isAppReachable = reachable
        var effects = setAppState(reachable ? state : .notRunning)
        if reachable {
            for item in queuedForApp.removeAll() {
                switch item {
                case .response(let ticket, let response): effects += deliver(response, ticket: ticket)
                case .openSettings(let notification): effects.append(.openSettings(notification))
                }
            }
            return effects + releaseHeldRemoteNotification()
        }
        // A background push the app had not confirmed is held again (unless a newer one waits): the
        // app may have gone before it saw it.
        if let newest = awaitingRemoteNotification.max(by: { $0.key < $1.key }), heldRemoteNotification == nil {
            heldRemoteNotification = newest.value
        }
        for ticket in awaitingRemoteNotification.keys { wakeUps.remove(.remoteNotificationDeadline(ticket)) }
        awaitingRemoteNotification.removeAll()
        let unconfirmed = awaitingResponse.sorted { $0.key < $1.key }
        awaitingResponse.removeAll()
        for (ticket, _) in unconfirmed { wakeUps.remove(.responseDeadline(ticket)) }
        queuedForApp.prepend(unconfirmed.map { .response(ticket: $0.key, $0.value) })
        for (ticket, notification) in awaitingPresentation.sorted(by: { $0.key < $1.key }) {
            awaitingPresentation.removeValue(forKey: ticket)
            wakeUps.remove(.willPresentDeadline(ticket))
            effects += present(notification, PresentationPolicy.background(content: notification.request.content, settings: settings),
                               unseenBecause: Self.turnedOff)
        }
        return effects
    }

    /// Picks up after the system was down until `date`: the app is not running, and repeating triggers
    /// that fell due meanwhile move on to their next date after `date` without firing for the missed
    /// ones. One-shot triggers that fell due still fire once, at the next ``advance(to:)``.
    package mutating func resume(at date: Date) -> [Effect] {
        // A trigger that breaks the rules can only come from a state stored before they were enforced:
        // its request is dropped rather than allowed to flood the system. (Only triggers are checked:
        // they are what could flood, and reading them does not decode every request's content.)
        for (identifier, entry) in pending.elements where entry.request.trigger.map({ RequestRules.violation(in: $0) != nil }) ?? false {
            removePending(identifier)
        }
        for (identifier, entry) in pending.elements {
            guard let trigger = entry.request.trigger, trigger.repeats, let due = entry.nextFireDate, due <= date else { continue }
            var next: Date? = due
            while let candidate = next, candidate <= date {
                next = TriggerRules.fireDate(of: trigger, after: candidate, calendar: calendar, timeZone: timeZone)
                if case .timeInterval(let interval, _) = trigger, let stepped = next, stepped <= date {
                    // Jump over whole missed intervals at once.
                    let missed = (date.timeIntervalSince(stepped) / interval).rounded(.down)
                    next = stepped.addingTimeInterval(missed * interval)
                }
            }
            pending[identifier]?.nextFireDate = next
            if let next { wakeUps.schedule(.request(identifier), at: next) } else { wakeUps.remove(.request(identifier)) }
        }
        return setAppReachable(false, state: .notRunning) + resumePreparations(at: date)
    }

    /// Preparations the system stopped in the middle of: each extension is started again once, with
    /// its whole time; one interrupted a second time shows the original.
    private mutating func resumePreparations(at date: Date) -> [Effect] {
        var effects: [Effect] = []
        for ticket in preparing.keys.sorted() {
            guard var preparation = preparing[ticket] else { continue }
            guard preparation.attempts < ContentPreparation.maximumAttempts else {
                effects += endPreparation(ticket, .interrupted, showing: preparation.request)
                continue
            }
            preparation.attempts += 1
            preparation.started = max(date, now)
            preparation.warned = false
            preparing[ticket] = preparation
            scheduleWakeUps(ofPreparation: ticket)
            effects.append(.prepareContent(ticket: ticket, preparation))
        }
        return effects
    }

    /// The app's delegate called `didReceive`'s completion handler.
    package mutating func completeResponse(ticket: UInt64) {
        if let response = awaitingResponse.removeValue(forKey: ticket) {
            wakeUps.remove(.responseDeadline(ticket))
            release(response.notification.request)
        }
    }

    /// The person opens the app's own notification settings, from a notification or from the system's
    /// settings (`nil`). The app comes to the foreground.
    package mutating func openAppSettings(from identifier: String?) throws(PersonActionRejection) -> [Effect] {
        guard settings.providesAppNotificationSettings else { throw .appSettingsNotProvided }
        var notification: DeliveredNotification? = nil
        if let identifier {
            guard let shown = visible[identifier] else { throw .notificationNotFound(identifier) }
            notification = shown.notification
        }
        guard isAppReachable else {
            queuedForApp.append(.openSettings(notification))
            return [.launchApp(.foreground)]
        }
        return setAppState(.foreground) + [.openSettings(notification)]
    }

    /// Deadline tickets still open: `willPresent` questions, responses and pushes for the app not yet
    /// confirmed.
    package var openTickets: Int { awaitingPresentation.count + awaitingResponse.count + awaitingRemoteNotification.count }

    /// Responses and settings requests waiting for the app to be reachable.
    package var queuedForAppCount: Int { queuedForApp.count }

    /// Whether a pending request waits for the device to enter or leave a region: only such apps need
    /// to hear of every move at once.
    package var watchesLocation: Bool {
        if let count = locationRequestCount { return count > 0 }
        return pending.values.contains { Self.waitsForARegion($0.request) }
    }

    /// How many pending requests wait for a region, kept as each is added or removed: a store asks
    /// ``watchesLocation`` at every step, and a scan of the requests made each step's cost grow with
    /// them. `nil` in a machine decoded whole (the store's format before v4), which scans instead.
    var locationRequestCount: Int?

    /// Whether `request` waits for the device to enter or leave a region.
    static func waitsForARegion(_ request: NotificationRequest) -> Bool {
        if case .location? = request.trigger { true } else { false }
    }

    /// Whether the person can see anything of the app's: one of its notifications, or its
    /// authorization prompt.
    package var showsSomethingToThePerson: Bool { !visible.isEmpty || promptCalls != nil }

    // MARK: - Delivery log

    /// Notes a stage of a push that came through a gateway; nothing for any other request.
    private mutating func report(_ request: NotificationRequest, _ stage: DeliveryLog.Stage, _ detail: String? = nil) {
        guard let uniqueID = request.pushUniqueID else { return }
        deliveryReports.append(DeliveryLog.Report(uniqueID: uniqueID, stage: stage, at: now, detail: detail))
    }

    private mutating func report(_ remote: RemoteNotification, _ stage: DeliveryLog.Stage, _ detail: String? = nil) {
        guard let uniqueID = remote.pushUniqueID else { return }
        deliveryReports.append(DeliveryLog.Report(uniqueID: uniqueID, stage: stage, at: now, detail: detail))
    }

    /// The stages noted since the last call, in order, for the gateway's delivery log: the shell saves
    /// them with the step that made them and sends them up its link.
    package mutating func takeDeliveryReports() -> [DeliveryLog.Report] {
        guard !deliveryReports.isEmpty else { return [] }
        defer { deliveryReports.removeAll() }
        return deliveryReports
    }

    // MARK: - Attachment files

    /// Notes that `request` left the machine: its attachment files may no longer be needed.
    private mutating func release(_ request: NotificationRequest) {
        for url in request.attachmentURLs { releasedAttachments.insert(url) }
    }

    /// The attachment files that nothing in the machine refers to any more, since the last call: the
    /// shell deletes them from its store once the machine's new state is safe. Costs nothing for an app
    /// without attachments.
    package mutating func takeUnreferencedAttachments() -> [URL] {
        guard !releasedAttachments.isEmpty else { return [] }
        defer { releasedAttachments.removeAll() }
        var referenced = Set<URL>()
        func note(_ request: NotificationRequest) {
            for url in request.attachmentURLs { referenced.insert(url) }
        }
        for entry in pending.values { note(entry.request) }
        for shown in visible.values { note(shown.notification.request) }
        for notification in awaitingPresentation.values { note(notification.request) }
        for preparation in preparing.values { note(preparation.request) }
        for response in awaitingResponse.values { note(response.notification.request) }
        for item in queuedForApp.items {
            switch item {
            case .response(_, let response): note(response.notification.request)
            case .openSettings(let notification): notification.map { note($0.request) }
            }
        }
        return releasedAttachments.subtracting(referenced).sorted { $0.path < $1.path }
    }
}
