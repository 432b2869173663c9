package import Foundation
package import NotificationCore

/// What the daemon tells a connected app: the delegate calls of `UNUserNotificationCenterDelegate`.
package enum AppMessage: Sendable, Hashable {
    /// A notification arrived while the app is in the foreground: answer with its presentation options.
    case willPresent(ticket: UInt64, DeliveredNotification)
    /// The person acted on a notification: confirm when the delegate is done.
    case response(ticket: UInt64, NotificationResponse)
    /// The person asked for the app's own notification settings.
    case openSettings(DeliveredNotification?)
    /// A background or VoIP push for the app delegate's `didReceiveRemoteNotification`: confirm when
    /// its completion handler is called.
    case remoteNotification(ticket: UInt64, RemoteNotification)
    /// The app's device token changed: its delegate hears the new one, if the app registered.
    case deviceToken(token: String, environment: APNs.Environment)
    /// The app's badge, when the app connects and whenever it changes.
    case badge(Int)
    /// Another connection of the app took over: this one receives nothing more, and should confirm
    /// what it finished, then let go.
    case replaced
}

/// What the daemon tells the presenters (`unotify watch`, the web notification center): what a person
/// sees and what happens to it.
package enum DaemonEvent: Sendable, Hashable {
    /// A notification reached the person (or was suppressed, with an empty presentation).
    case presented(bundleIdentifier: String, NotificationCenterMachine.VisibleNotification)
    /// An app asks the person to allow notifications.
    case authorizationPrompt(bundleIdentifier: String, AuthorizationOptions)
    /// An app's settings changed (after a prompt was answered, or the person changed them).
    case settingsChanged(bundleIdentifier: String, NotificationSettings)
    /// An app's badge changed.
    case badgeChanged(bundleIdentifier: String, Int)
    /// An app connected, went to the background or foreground, or stopped.
    case appStateChanged(bundleIdentifier: String, AppState)
    /// A response was handed to an app.
    case responseDelivered(bundleIdentifier: String, NotificationResponse)
    /// An app did not confirm a response in time.
    case responseNotCompleted(bundleIdentifier: String, NotificationResponse)
    /// An app did not answer `willPresent` in time.
    case willPresentTimedOut(bundleIdentifier: String, DeliveredNotification)
    /// A pending request was discarded over the limit.
    case discardedOverLimit(bundleIdentifier: String, NotificationRequest)
    /// A background or VoIP push was handed to an app.
    case remoteNotificationDelivered(bundleIdentifier: String, RemoteNotification)
    /// A background push waits for its app: not running, or over its background budget.
    case remoteNotificationHeld(bundleIdentifier: String, RemoteNotification)
    /// An app did not call `didReceiveRemoteNotification`'s completion handler in time.
    case remoteNotificationNotCompleted(bundleIdentifier: String, RemoteNotification)
    /// A push went to its app's service extension; nothing is shown until it is prepared.
    case contentPreparing(bundleIdentifier: String, NotificationRequest)
    /// The service extension's work on a push ended (prepared, timed out, failed, interrupted).
    case contentPrepared(bundleIdentifier: String, NotificationRequest, PreparationOutcome)
    /// An app removed delivered notifications.
    case notificationsRemoved(bundleIdentifier: String, [String])
    /// The person acted on one of an app's notifications, on any surface: it left the screen.
    case actedOn(bundleIdentifier: String, identifier: String, actionIdentifier: String)
    /// The device was locked or unlocked.
    case deviceLockChanged(locked: Bool)
    /// The person turned a Focus on, changed it, or turned it off (`nil`).
    case focusChanged(Focus?)
    /// The person turned the Scheduled Summary on, changed its times, or turned it off (`nil`).
    case summaryChanged(ScheduledSummary?)
    /// The device moved to another time zone.
    case timeZoneChanged(TimeZone)
    /// The Scheduled Summary came with these notifications of the app, held for it until now.
    case summaryDelivered(bundleIdentifier: String, [NotificationCenterMachine.VisibleNotification])
}

extension DaemonEvent {
    /// What the presenters are told of an app's person event.
    package init(_ bundleIdentifier: String, _ event: PersonEvent) {
        switch event {
        case .authorizationPrompt(let options): self = .authorizationPrompt(bundleIdentifier: bundleIdentifier, options)
        case .settingsChanged(let settings): self = .settingsChanged(bundleIdentifier: bundleIdentifier, settings)
        case .presented(let shown): self = .presented(bundleIdentifier: bundleIdentifier, shown)
        case .badgeChanged(let badge): self = .badgeChanged(bundleIdentifier: bundleIdentifier, badge)
        case .appStateChanged(let state): self = .appStateChanged(bundleIdentifier: bundleIdentifier, state)
        case .responseDelivered(let response): self = .responseDelivered(bundleIdentifier: bundleIdentifier, response)
        case .responseNotCompleted(let response): self = .responseNotCompleted(bundleIdentifier: bundleIdentifier, response)
        case .willPresentTimedOut(let notification): self = .willPresentTimedOut(bundleIdentifier: bundleIdentifier, notification)
        case .discardedOverLimit(let request): self = .discardedOverLimit(bundleIdentifier: bundleIdentifier, request)
        case .notificationsRemoved(let identifiers): self = .notificationsRemoved(bundleIdentifier: bundleIdentifier, identifiers)
        case .actedOn(let identifier, let actionIdentifier):
            self = .actedOn(bundleIdentifier: bundleIdentifier, identifier: identifier, actionIdentifier: actionIdentifier)
        case .remoteNotificationDelivered(let remote): self = .remoteNotificationDelivered(bundleIdentifier: bundleIdentifier, remote)
        case .remoteNotificationHeld(let remote): self = .remoteNotificationHeld(bundleIdentifier: bundleIdentifier, remote)
        case .remoteNotificationNotCompleted(let remote): self = .remoteNotificationNotCompleted(bundleIdentifier: bundleIdentifier, remote)
        case .contentPreparing(let request): self = .contentPreparing(bundleIdentifier: bundleIdentifier, request)
        case .contentPrepared(let request, let outcome): self = .contentPrepared(bundleIdentifier: bundleIdentifier, request, outcome)
        case .summaryDelivered(let shown): self = .summaryDelivered(bundleIdentifier: bundleIdentifier, shown)
        }
    }
}
