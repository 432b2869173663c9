/// Whether the app is on screen, in the background, or not running at all.
package enum AppState: String, Sendable, Hashable, CaseIterable {
    case foreground
    case background
    case notRunning
}

/// How one delivered notification is shown to the person.
package struct Presentation: Sendable, Hashable, Codable {
    /// Shown as a banner (or alert) on screen.
    package var banner: Bool
    /// Kept in the notification center's list, so it is among the delivered notifications.
    package var list: Bool
    /// Shown on the lock screen.
    package var lockScreen: Bool
    /// Its sound plays.
    package var sound: Bool
    /// The app's badge becomes this number; `nil` leaves it alone.
    package var badge: Int?

    package init(banner: Bool = false, list: Bool = false, lockScreen: Bool = false, sound: Bool = false, badge: Int? = nil) {
        self.banner = banner
        self.list = list
        self.lockScreen = lockScreen
        self.sound = sound
        self.badge = badge
    }

    /// Nothing is shown, played or badged.
    package static let none = Presentation()

    /// Reaches the person at all: on screen, in the list or on the lock screen.
    package var isVisible: Bool { banner || list || lockScreen }

    /// Arrives without interrupting: no banner and no sound.
    package var isQuiet: Bool { !banner && !sound }

    /// Where and how the person is shown it, in words: "banner", "list", "lock screen", "sound", "badge 3".
    package var parts: [String] {
        var parts: [String] = []
        if banner { parts.append("banner") }
        if list { parts.append("list") }
        if lockScreen { parts.append("lock screen") }
        if sound { parts.append("sound") }
        if let badge { parts.append("badge \(badge)") }
        return parts
    }

    /// How the person was shown it, for the delivery log: "banner, list, sound".
    package var logDescription: String {
        (parts + (isQuiet && isVisible ? ["quietly"] : [])).joined(separator: ", ")
    }
}

/// A Focus the person turned on, as iOS's Do Not Disturb: a notification it does not let through arrives
/// silenced, in Notification Center and on the lock screen but with no banner and no sound. Critical
/// notifications always break through; time-sensitive ones when the Focus allows them and the app's
/// Time Sensitive setting is on; every notification of an app the Focus allows.
package struct Focus: Sendable, Hashable, Codable {
    /// What the person calls it: "Do Not Disturb", "Sleep", "Work"…
    package var name: String
    /// Whether time-sensitive notifications break through (iOS's "Time Sensitive Notifications" of a Focus).
    package var allowsTimeSensitive: Bool
    /// The apps whose notifications break through, by bundle identifier.
    package var allowedApps: [String]

    package init(name: String = "Do Not Disturb", allowsTimeSensitive: Bool = true, allowedApps: [String] = []) {
        self.name = name
        self.allowsTimeSensitive = allowsTimeSensitive
        self.allowedApps = allowedApps
    }

    private enum CodingKeys: String, CodingKey { case name, allowsTimeSensitive, allowedApps }

    /// Every field but `name` may be left out, as the initializer's defaults say.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decodeIfPresent(String.self, forKey: .name) ?? "Do Not Disturb"
        allowsTimeSensitive = try container.decodeIfPresent(Bool.self, forKey: .allowsTimeSensitive) ?? true
        allowedApps = try container.decodeIfPresent([String].self, forKey: .allowedApps) ?? []
    }

    /// The Focus as it applies to one app's notifications: none at all for an app it allows.
    package func applying(to bundleIdentifier: String) -> Focus? {
        allowedApps.contains(bundleIdentifier) ? nil : self
    }
}

/// Decides how a notification is presented, from the app's state, the person's settings and, in the
/// foreground, the app's own answer to `willPresent`.
///
/// The system enforces the person's settings in every case: an app in the foreground can ask for a
/// sound, but gets none if the person turned sounds off.
package enum PresentationPolicy {
    /// The presentation when the app is in the foreground and its delegate answered `options`
    /// (an empty set when it has no delegate, does not implement `willPresent`, or did not answer in time).
    package static func foreground(
        options: PresentationOptions,
        content: NotificationContent,
        settings: NotificationSettings
    ) -> Presentation {
        guard allowsDelivery(settings) else { return .none }
        if settings.authorizationStatus == .provisional {
            return provisional(options.contains(.list) || options.contains(.alert) || options.contains(.banner), settings)
        }
        let alertsAllowed = settings.alertSetting == .enabled && settings.alertStyle != .none
        return Presentation(
            banner: (options.contains(.banner) || options.contains(.alert)) && alertsAllowed,
            list: (options.contains(.list) || options.contains(.alert)) && settings.notificationCenterSetting == .enabled,
            lockScreen: false,
            sound: options.contains(.sound) && content.sound != nil && soundAllowed(content, settings),
            badge: options.contains(.badge) && settings.badgeSetting == .enabled ? content.badge : nil
        )
    }

    /// Whether a notification delivered with `presentation` shows on the lock screen now, under the app's
    /// current `settings`. As on iOS, what Notification Center keeps is on the lock screen too (one that
    /// came as a banner while the app was in the foreground included), for an app whose Lock Screen
    /// setting is on; turning the setting off takes the app's notifications off the lock screen.
    package static func showsOnLockScreen(_ presentation: Presentation, settings: NotificationSettings) -> Bool {
        settings.lockScreenSetting == .enabled && (presentation.lockScreen || presentation.list)
    }

    /// The presentation when the app is in the background or not running: the person's settings decide.
    package static func background(content: NotificationContent, settings: NotificationSettings) -> Presentation {
        guard allowsDelivery(settings) else { return .none }
        if settings.authorizationStatus == .provisional {
            return provisional(true, settings)
        }
        let passive = content.interruptionLevel == .passive
        return Presentation(
            banner: !passive && settings.alertSetting == .enabled && settings.alertStyle != .none,
            list: settings.notificationCenterSetting == .enabled,
            lockScreen: settings.lockScreenSetting == .enabled,
            sound: !passive && content.sound != nil && soundAllowed(content, settings),
            badge: settings.badgeSetting == .enabled ? content.badge : nil
        )
    }

    /// `presentation` under `focus`: unchanged for a notification the Focus lets through, otherwise
    /// silenced (no banner, no sound; still in the list, on the lock screen and on the badge).
    package static func underFocus(
        _ presentation: Presentation, _ focus: Focus?, content: NotificationContent, settings: NotificationSettings
    ) -> Presentation {
        guard let focus else { return presentation }
        switch content.interruptionLevel {
        case .critical:
            return presentation
        case .timeSensitive where focus.allowsTimeSensitive && settings.timeSensitiveSetting == .enabled:
            return presentation
        default:
            var silenced = presentation
            silenced.banner = false
            silenced.sound = false
            return silenced
        }
    }

    /// Whether notifications reach the person at all under these settings.
    package static func allowsDelivery(_ settings: NotificationSettings) -> Bool {
        switch settings.authorizationStatus {
        case .authorized, .provisional, .ephemeral: true
        case .denied, .notDetermined: false
        }
    }

    private static func soundAllowed(_ content: NotificationContent, _ settings: NotificationSettings) -> Bool {
        if content.sound?.isCritical == true || content.interruptionLevel == .critical {
            return settings.criticalAlertSetting == .enabled || settings.soundSetting == .enabled
        }
        return settings.soundSetting == .enabled
    }

    /// Provisional notifications go quietly to the list, and nowhere else.
    private static func provisional(_ listed: Bool, _ settings: NotificationSettings) -> Presentation {
        Presentation(list: listed && settings.notificationCenterSetting == .enabled)
    }
}
