public import Foundation
public import OpenUserNotifications
internal import NotificationCore
internal import NotificationEngine

/// A complete notification system for tests: a device with its own clock, a simulated person, the app's
/// state, and a history of everything the app's delegate received.
///
/// Code under test keeps calling `UNUserNotificationCenter.current()`: inside ``run(_:)`` it gets this
/// harness's center, so tests running in parallel never share a center.
///
/// ```swift
/// let harness = NotificationTestHarness()
/// try await harness.run { center in
///     harness.person.willAnswerAuthorization(allow: true)
///     _ = try await center.requestAuthorization(options: [.alert, .sound])
///     try await center.add(request)               // a 5-second trigger
///     await harness.clock.advance(by: 5)
///     #expect(harness.history.willPresentQuestions.map(\.request.identifier) == ["hello"])
/// }
/// ```
public final class NotificationTestHarness: Sendable {
    /// The device's clock: advance it to make triggers fire.
    public let clock: ManualClock
    /// The person using the device: answers prompts, taps, replies, changes settings, moves around.
    public let person: SimulatedPerson
    /// The app under test: in the foreground, in the background or not running.
    public let app: SimulatedApp
    /// Everything that happened, in order.
    public let history: NotificationHistory
    let system: InProcessNotificationSystem

    /// Creates a harness.
    ///
    /// - Parameters:
    ///   - clock: the device's clock; a fresh ``ManualClock`` by default.
    ///   - calendar: the device's calendar, for calendar triggers; Gregorian by default.
    ///   - timeZone: the device's time zone; UTC by default.
    ///   - appState: the app's state at the start; in the foreground by default, as when a test runs.
    ///   - pendingRequestLimit: how many dated requests may be pending; Apple's 64 by default, `nil`
    ///     for no limit.
    ///   - willPresentTimeout: how long, on the device's clock, the delegate has to answer `willPresent`.
    ///   - responseTimeout: how long, on the device's clock, the delegate has to finish `didReceive`.
    ///   - backgroundPushesPerHour: how many background pushes per hour may wake the app when it is not
    ///     in the foreground (3 by default, as Apple advises); `nil` for no limit.
    ///   - delegateGrace: how long, in real time, advancing the clock waits for the delegate to answer
    ///     before time moves on.
    ///   - attachmentStore: the folder attachment files are copied into; by default a fresh temporary
    ///     folder, deleted with the harness.
    public init(
        clock: ManualClock = ManualClock(),
        calendar: Calendar = Calendar(identifier: .gregorian),
        timeZone: TimeZone = TimeZone(identifier: "UTC")!,
        appState: SimulatedAppState = .foreground,
        pendingRequestLimit: Int? = 64,
        willPresentTimeout: TimeInterval = 5,
        responseTimeout: TimeInterval = 30,
        backgroundPushesPerHour: Int? = 3,
        delegateGrace: Duration = .seconds(2),
        attachmentStore: URL? = nil
    ) {
        var configuration = InProcessNotificationSystem.Configuration()
        configuration.calendar = calendar
        configuration.timeZone = timeZone
        configuration.appState = AppState(rawValue: appState.rawValue)!
        configuration.machine.pendingRequestLimit = pendingRequestLimit
        configuration.machine.willPresentTimeout = willPresentTimeout
        configuration.machine.responseTimeout = responseTimeout
        configuration.machine.backgroundPushesPerHour = backgroundPushesPerHour
        configuration.attachmentStore = attachmentStore
        let history = NotificationHistory()
        let answerer = PromptAnswers()
        let system = InProcessNotificationSystem(
            configuration: configuration,
            clock: clock,
            answerer: answerer,
            observer: { event in
                if let recorded = NotificationEvent(event) { history.record(recorded) }
            }
        )
        clock.drive(system, grace: delegateGrace)
        self.clock = clock
        self.history = history
        self.system = system
        self.person = SimulatedPerson(system: system, answers: answerer)
        self.app = SimulatedApp(system: system)
    }

    /// A harness made its own temporary folder for attachment files unless given one: it goes with
    /// the harness, so that a test suite does not leave a folder behind for every test.
    deinit {
        system.removeTemporaryAttachmentFolder()
        // The center and the system hold each other: without this, neither would ever be freed.
        system.releaseCenter()
    }

    /// The app's notification center in this harness.
    public var center: UNUserNotificationCenter { system.center }

    /// Runs `body` with this harness's center as `UNUserNotificationCenter.current()`, for the body and
    /// every task it creates.
    public func run<T>(_ body: (UNUserNotificationCenter) async throws -> T) async rethrows -> T {
        let center = system.center
        return try await UNUserNotificationCenter.withCenter(center) { try await body(center) }
    }

    /// Waits until every callback has run and every delegate question has been answered, or `timeout`
    /// has passed in real time. Advancing the clock does this already.
    ///
    /// - Returns: whether everything settled in time.
    @discardableResult
    public func settle(timeout: Duration = .seconds(2)) async -> Bool {
        await system.waitUntilSettled(timeout: timeout)
    }

    /// The app's badge.
    public var badge: Int { system.badgeCount }

    /// The app's device token (hexadecimal, as a provider sends it), once the app registered for
    /// remote notifications with `UIApplication.shared.registerForRemoteNotifications()`.
    public var deviceToken: String? { system.deviceToken }

    /// Gives the app a new device token, as when the person restores their iPhone from a backup: the
    /// old token no longer reaches the app, and the app delegate's
    /// `application(_:didRegisterForRemoteNotificationsWithDeviceToken:)` runs again with the new one,
    /// so an app's code that sends its token to its server can be tested.
    ///
    /// - Returns: the new token, or `nil` when the app has not registered for remote notifications.
    @discardableResult
    public func renewDeviceToken() -> String? { system.renewDeviceToken() }

    /// A push reaches the device for the app, as the push service hands it over: an alert is shown as
    /// the app's settings and delegate decide, a background push (`content-available: 1`) or VoIP push
    /// reaches the app delegate's `didReceiveRemoteNotification`.
    ///
    /// ```swift
    /// try await harness.receivePush(#"{"aps":{"alert":{"title":"Game Request","body":"Bob wants to play poker"}}}"#)
    /// ```
    ///
    /// - Parameters:
    ///   - payload: the JSON payload, as a provider sends it.
    ///   - pushType: the `apns-push-type` it was sent with: `alert`, `background` or `voip`.
    ///   - apnsID: its `apns-id`; a new UUID by default.
    ///   - collapseID: its `apns-collapse-id`, which becomes the request's identifier.
    /// - Throws: ``PushPayloadError`` when the payload is not a JSON object.
    public func receivePush(_ payload: String, pushType: String = "alert", apnsID: String = UUID().uuidString.lowercased(), collapseID: String? = nil) async throws {
        guard let type = APNs.PushType(rawValue: pushType) else {
            throw PushPayloadError(description: "\"\(pushType)\" is not an apns-push-type.")
        }
        do {
            try await system.receivePush(Array(payload.utf8), pushType: type, apnsID: apnsID, collapseID: collapseID)
        } catch {
            throw PushPayloadError(description: error.message)
        }
    }

    /// The broadcast channels the app subscribed to with
    /// `UIApplication.shared.subscribeToBroadcastChannel(_:)`.
    public var subscribedChannels: Set<String> { system.subscribedChannels }

    /// A message a provider sent to a broadcast channel: it reaches the app, as ``receivePush(_:pushType:apnsID:collapseID:)``
    /// does, if the app subscribed to the channel; returns whether it did.
    @discardableResult
    public func receiveBroadcast(_ payload: String, onChannel channelID: String, apnsID: String = UUID().uuidString.lowercased()) async throws -> Bool {
        guard subscribedChannels.contains(channelID) else { return false }
        try await receivePush(payload, apnsID: apnsID)
        return true
    }

    /// What the person sees now: every notification on screen, on the lock screen or in the list,
    /// oldest first.
    public var visibleNotifications: [VisibleNotification] {
        get async { await system.visibleNotifications.map(VisibleNotification.init) }
    }
}

/// Why a push's payload cannot be delivered.
public struct PushPayloadError: Error, Sendable, CustomStringConvertible {
    public var description: String
}

/// A notification as the person sees it.
public struct VisibleNotification: Sendable {
    /// The notification.
    public var notification: UNNotification
    /// How it is shown.
    public var presentation: NotificationPresentation
    /// The action buttons it shows: its category's actions when it was presented.
    public var actions: [UNNotificationAction]
    /// Whether it waits for the Scheduled Summary: delivered, quietly, but not yet shown to the person.
    public var isHeldForSummary: Bool
    /// The Scheduled Summary it waits for or came in; `nil` when it was shown at once.
    public var summaryDate: Date?

    init(_ value: NotificationCenterMachine.VisibleNotification) {
        notification = UNNotification(value.notification)
        presentation = NotificationPresentation(value.presentation)
        actions = value.actions.map(UNNotificationAction.make)
        isHeldForSummary = value.summary?.held ?? false
        summaryDate = value.summary?.date
    }
}

extension NotificationPresentation {
    init(_ value: Presentation) {
        self.init(banner: value.banner, list: value.list, lockScreen: value.lockScreen, sound: value.sound, badge: value.badge)
    }
}

extension NotificationEvent {
    /// The public event for what the in-process system reported; `nil` for internal bookkeeping.
    init?(_ event: InProcessEvent) {
        switch event {
        case .willPresentAnswered(let notification, let options):
            self = .willPresentAnswered(UNNotification(notification), options.map { UNNotificationPresentationOptions(rawValue: $0.rawValue) })
        case .responseCompleted(let response):
            self = .didReceiveCompleted(UNNotificationResponse.make(response))
        case .remoteNotificationCompleted(let remote, let result):
            self = .didReceiveRemoteNotificationCompleted(identifier: remote.identifier, fetchResult: result.rawValue)
        case .effect(let effect):
            switch effect {
            case .promptForAuthorization(let options):
                self = .authorizationPromptShown(UNAuthorizationOptions(rawValue: options.rawValue))
            case .authorizationCompleted(_, let granted):
                self = .authorizationCompleted(granted: granted)
            case .settingsChanged(let settings):
                self = .settingsChanged(UNNotificationSettings(value: settings))
            case .askWillPresent(_, let notification):
                self = .willPresent(UNNotification(notification))
            case .presented(let shown):
                self = .presented(UNNotification(shown.notification), NotificationPresentation(shown.presentation))
            case .badgeChanged(let badge):
                self = .badgeChanged(badge)
            case .deliverResponse(_, let response):
                self = .didReceive(UNNotificationResponse.make(response))
            case .openSettings(let notification):
                self = .openSettings(notification.map(UNNotification.init))
            case .appStateChanged(let state):
                self = .appStateChanged(SimulatedAppState(rawValue: state.rawValue)!)
            case .willPresentTimedOut(_, let notification):
                self = .willPresentTimedOut(UNNotification(notification))
            case .responseTimedOut(_, let response):
                self = .didReceiveNotCompleted(UNNotificationResponse.make(response))
            case .discardedOverLimit(let request):
                self = .discardedOverLimit(UNNotificationRequest(request))
            case .launchApp:
                // The app of an in-process system is the process itself: always reachable.
                return nil
            case .deliverRemoteNotification(_, let remote):
                self = .didReceiveRemoteNotification(identifier: remote.identifier)
            case .remoteNotificationHeld(let remote):
                self = .remoteNotificationHeld(identifier: remote.identifier)
            case .remoteNotificationTimedOut(_, let remote):
                self = .didReceiveRemoteNotificationNotCompleted(identifier: remote.identifier)
            case .summaryDelivered(let shown):
                self = .summaryDelivered(shown.map { UNNotification($0.notification) })
            case .notificationsRemoved:
                // What the app removed itself: the app's own call, not something that happened to it.
                return nil
            case .personActed:
                // The test's own action on the notification: what the app hears of it is the response.
                return nil
            case .prepareContent, .preparationTimeWillExpire, .preparationEnded:
                // The in-process system runs no service extension.
                return nil
            }
        }
    }
}
