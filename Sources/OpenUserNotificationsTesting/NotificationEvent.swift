public import OpenUserNotifications

/// Whether the app is on screen, in the background, or not running.
public enum SimulatedAppState: String, Sendable, Hashable, CaseIterable {
    case foreground
    case background
    case notRunning
}

/// How a notification reached the person.
public struct NotificationPresentation: Sendable, Hashable, CustomStringConvertible {
    /// Shown as a banner.
    public var banner: Bool
    /// Kept in the notification center's list.
    public var list: Bool
    /// Shown on the lock screen.
    public var lockScreen: Bool
    /// Its sound played.
    public var sound: Bool
    /// The badge it set, if it set one.
    public var badge: Int?

    public init(banner: Bool = false, list: Bool = false, lockScreen: Bool = false, sound: Bool = false, badge: Int? = nil) {
        self.banner = banner
        self.list = list
        self.lockScreen = lockScreen
        self.sound = sound
        self.badge = badge
    }

    /// Nothing shown, played or badged.
    public static let none = NotificationPresentation()

    /// Arrived without a banner or a sound.
    public var isQuiet: Bool { !banner && !sound }

    public var description: String {
        var parts: [String] = []
        if banner { parts.append("banner") }
        if list { parts.append("list") }
        if lockScreen { parts.append("lockScreen") }
        if sound { parts.append("sound") }
        if let badge { parts.append("badge=\(badge)") }
        return parts.isEmpty ? "none" : parts.joined(separator: "+")
    }
}

/// One thing that happened between the notification system, the person and the app, as recorded in a
/// ``NotificationHistory``.
public enum NotificationEvent: Sendable, CustomStringConvertible {
    /// The system asked the person to allow notifications with these options.
    case authorizationPromptShown(UNAuthorizationOptions)
    /// A `requestAuthorization` call returned.
    case authorizationCompleted(granted: Bool)
    /// The app's notification settings changed.
    case settingsChanged(UNNotificationSettings)
    /// A notification arrived while the app was in the foreground, so the system asks the app's delegate
    /// `willPresent`. With no delegate set, the next event for it is `willPresentAnswered(_, nil)`.
    case willPresent(UNNotification)
    /// The delegate answered `willPresent`; `nil` when the app had no delegate.
    case willPresentAnswered(UNNotification, UNNotificationPresentationOptions?)
    /// The delegate did not answer `willPresent` in time, so nothing was presented.
    case willPresentTimedOut(UNNotification)
    /// A notification was presented to the person (or, with `.none`, suppressed).
    case presented(UNNotification, NotificationPresentation)
    /// The app's badge changed.
    case badgeChanged(Int)
    /// The app's delegate received a response.
    case didReceive(UNNotificationResponse)
    /// The delegate called `didReceive`'s completion handler.
    case didReceiveCompleted(UNNotificationResponse)
    /// The delegate did not call `didReceive`'s completion handler in time.
    case didReceiveNotCompleted(UNNotificationResponse)
    /// The app's delegate was told to open its notification settings.
    case openSettings(UNNotification?)
    /// The app moved to the foreground or background, or stopped.
    case appStateChanged(SimulatedAppState)
    /// A pending request was discarded because more than the limit were pending.
    case discardedOverLimit(UNNotificationRequest)
    /// A background or VoIP push was handed to the app delegate's `didReceiveRemoteNotification`;
    /// `identifier` is its `apns-id`.
    case didReceiveRemoteNotification(identifier: String)
    /// The app called `didReceiveRemoteNotification`'s completion handler with this
    /// `UIBackgroundFetchResult` (its raw value: 0 new data, 1 no data, 2 failed).
    case didReceiveRemoteNotificationCompleted(identifier: String, fetchResult: UInt)
    /// The app did not call `didReceiveRemoteNotification`'s completion handler in time.
    case didReceiveRemoteNotificationNotCompleted(identifier: String)
    /// A background push waits for the app: over its background budget, or the app is not running.
    case remoteNotificationHeld(identifier: String)
    /// The Scheduled Summary came: these notifications, held for it, are now shown, in the order they arrived.
    case summaryDelivered([UNNotification])

    public var description: String {
        switch self {
        case .authorizationPromptShown(let options): "authorizationPromptShown(\(options.rawValue))"
        case .authorizationCompleted(let granted): "authorizationCompleted(granted: \(granted))"
        case .settingsChanged(let settings): "settingsChanged(\(settings.authorizationStatus))"
        case .willPresent(let n): "willPresent(\(n.request.identifier))"
        case .willPresentAnswered(let n, let options): "willPresentAnswered(\(n.request.identifier), \(options.map { String($0.rawValue) } ?? "no delegate"))"
        case .willPresentTimedOut(let n): "willPresentTimedOut(\(n.request.identifier))"
        case .presented(let n, let presentation): "presented(\(n.request.identifier), \(presentation))"
        case .badgeChanged(let badge): "badgeChanged(\(badge))"
        case .didReceive(let r): "didReceive(\(r.notification.request.identifier), \(r.actionIdentifier))"
        case .didReceiveCompleted(let r): "didReceiveCompleted(\(r.notification.request.identifier), \(r.actionIdentifier))"
        case .didReceiveNotCompleted(let r): "didReceiveNotCompleted(\(r.notification.request.identifier), \(r.actionIdentifier))"
        case .openSettings(let n): "openSettings(\(n?.request.identifier ?? "nil"))"
        case .appStateChanged(let state): "appStateChanged(\(state))"
        case .discardedOverLimit(let r): "discardedOverLimit(\(r.identifier))"
        case .didReceiveRemoteNotification(let identifier): "didReceiveRemoteNotification(\(identifier))"
        case .didReceiveRemoteNotificationCompleted(let identifier, let result): "didReceiveRemoteNotificationCompleted(\(identifier), \(result))"
        case .didReceiveRemoteNotificationNotCompleted(let identifier): "didReceiveRemoteNotificationNotCompleted(\(identifier))"
        case .remoteNotificationHeld(let identifier): "remoteNotificationHeld(\(identifier))"
        case .summaryDelivered(let notifications): "summaryDelivered(\(notifications.map(\.request.identifier).joined(separator: ", ")))"
        }
    }
}
