/// The kinds of interruption an app asks the person to allow.
public struct UNAuthorizationOptions: OptionSet, Sendable, Hashable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// Updating the app's badge.
    public static let badge = UNAuthorizationOptions(rawValue: 1 << 0)
    /// Playing sounds.
    public static let sound = UNAuthorizationOptions(rawValue: 1 << 1)
    /// Showing alerts.
    public static let alert = UNAuthorizationOptions(rawValue: 1 << 2)
    /// Showing notifications in CarPlay.
    public static let carPlay = UNAuthorizationOptions(rawValue: 1 << 3)
    /// Playing sounds for critical alerts, which ignore the mute switch and Do Not Disturb.
    public static let criticalAlert = UNAuthorizationOptions(rawValue: 1 << 4)
    /// A button in the notification settings that opens the app's own notification settings.
    public static let providesAppNotificationSettings = UNAuthorizationOptions(rawValue: 1 << 5)
    /// Delivering quietly to the notification center without asking first.
    public static let provisional = UNAuthorizationOptions(rawValue: 1 << 6)
    /// Siri reading notifications aloud.
    @available(*, deprecated, message: "Announcement authorization is always included")
    public static let announcement = UNAuthorizationOptions(rawValue: 1 << 7)
    /// Time-sensitive notifications.
    @available(*, deprecated, message: "Use time-sensitive entitlement")
    public static let timeSensitive = UNAuthorizationOptions(rawValue: 1 << 8)
}

/// Whether the app may deliver notifications.
public enum UNAuthorizationStatus: Int, Sendable, Hashable {
    /// The person has not been asked yet.
    case notDetermined = 0
    /// The person refused notifications.
    case denied = 1
    /// The person allowed notifications.
    case authorized = 2
    /// The app may deliver quiet notifications until the person decides.
    case provisional = 3
    /// The app may deliver notifications for a limited time.
    case ephemeral = 4
}

/// The state of one notification setting.
public enum UNNotificationSetting: Int, Sendable, Hashable {
    /// The app does not support this setting.
    case notSupported = 0
    /// The setting is off.
    case disabled = 1
    /// The setting is on.
    case enabled = 2
}

/// How alerts are shown when the device is unlocked.
public enum UNAlertStyle: Int, Sendable, Hashable {
    /// No alerts.
    case none = 0
    /// Banners that disappear on their own.
    case banner = 1
    /// Alerts that stay until the person acts.
    case alert = 2
}

/// When notification previews are shown.
public enum UNShowPreviewsSetting: Int, Sendable, Hashable {
    /// Always.
    case always = 0
    /// Only when the device is unlocked.
    case whenAuthenticated = 1
    /// Never.
    case never = 2
}

/// How an app in the foreground asks for a notification to be presented.
public struct UNNotificationPresentationOptions: OptionSet, Sendable, Hashable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// Apply the notification's badge.
    public static let badge = UNNotificationPresentationOptions(rawValue: 1 << 0)
    /// Play the notification's sound.
    public static let sound = UNNotificationPresentationOptions(rawValue: 1 << 1)
    /// Show the notification as an alert (a banner and in the list).
    @available(*, deprecated, message: "Use [.list, .banner] instead.")
    public static let alert = UNNotificationPresentationOptions(rawValue: 1 << 2)
    /// Keep the notification in the notification center's list.
    public static let list = UNNotificationPresentationOptions(rawValue: 1 << 3)
    /// Show the notification as a banner.
    public static let banner = UNNotificationPresentationOptions(rawValue: 1 << 4)
}

/// How strongly a notification asks for attention.
public enum UNNotificationInterruptionLevel: UInt, Sendable, Hashable {
    /// Added to the list without lighting the screen or playing a sound.
    case passive = 0
    /// Presented at once, lighting the screen and possibly playing a sound.
    case active = 1
    /// Presented at once and breaks through Focus and scheduled summaries.
    case timeSensitive = 2
    /// Presented at once, and its sound ignores the mute switch.
    case critical = 3
}
