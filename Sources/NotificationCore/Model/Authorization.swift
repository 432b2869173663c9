/// What an app asks the person to allow; the raw values are Apple's `UNAuthorizationOptions`.
package struct AuthorizationOptions: OptionSet, Sendable, Hashable {
    package var rawValue: UInt
    package init(rawValue: UInt) { self.rawValue = rawValue }

    package static let badge = AuthorizationOptions(rawValue: 1 << 0)
    package static let sound = AuthorizationOptions(rawValue: 1 << 1)
    package static let alert = AuthorizationOptions(rawValue: 1 << 2)
    package static let carPlay = AuthorizationOptions(rawValue: 1 << 3)
    package static let criticalAlert = AuthorizationOptions(rawValue: 1 << 4)
    package static let providesAppNotificationSettings = AuthorizationOptions(rawValue: 1 << 5)
    package static let provisional = AuthorizationOptions(rawValue: 1 << 6)
    package static let announcement = AuthorizationOptions(rawValue: 1 << 7)
    package static let timeSensitive = AuthorizationOptions(rawValue: 1 << 8)
}

/// Whether the app may notify; the raw values are Apple's `UNAuthorizationStatus`.
package enum AuthorizationStatus: Int, Sendable, Hashable, CaseIterable {
    case notDetermined = 0
    case denied = 1
    case authorized = 2
    case provisional = 3
    case ephemeral = 4
}

/// One switch in the person's settings for an app; Apple's `UNNotificationSetting`.
package enum SettingValue: Int, Sendable, Hashable, CaseIterable {
    case notSupported = 0
    case disabled = 1
    case enabled = 2
}

/// How alerts look; Apple's `UNAlertStyle`.
package enum AlertStyle: Int, Sendable, Hashable, CaseIterable {
    case none = 0
    case banner = 1
    case alert = 2
}

/// When previews show; Apple's `UNShowPreviewsSetting`.
package enum ShowPreviews: Int, Sendable, Hashable, CaseIterable {
    case always = 0
    case whenAuthenticated = 1
    case never = 2
}

/// Everything the person decided about one app's notifications; the value behind `UNNotificationSettings`.
package struct NotificationSettings: Sendable, Hashable, Codable {
    package var authorizationStatus: AuthorizationStatus
    package var soundSetting: SettingValue
    package var badgeSetting: SettingValue
    package var alertSetting: SettingValue
    package var notificationCenterSetting: SettingValue
    package var lockScreenSetting: SettingValue
    package var carPlaySetting: SettingValue
    package var alertStyle: AlertStyle
    package var showPreviewsSetting: ShowPreviews
    package var criticalAlertSetting: SettingValue
    package var providesAppNotificationSettings: Bool
    package var announcementSetting: SettingValue
    package var timeSensitiveSetting: SettingValue
    package var scheduledDeliverySetting: SettingValue
    package var directMessagesSetting: SettingValue

    package init(
        authorizationStatus: AuthorizationStatus,
        soundSetting: SettingValue,
        badgeSetting: SettingValue,
        alertSetting: SettingValue,
        notificationCenterSetting: SettingValue,
        lockScreenSetting: SettingValue,
        carPlaySetting: SettingValue,
        alertStyle: AlertStyle,
        showPreviewsSetting: ShowPreviews,
        criticalAlertSetting: SettingValue,
        providesAppNotificationSettings: Bool,
        announcementSetting: SettingValue,
        timeSensitiveSetting: SettingValue,
        scheduledDeliverySetting: SettingValue,
        directMessagesSetting: SettingValue
    ) {
        self.authorizationStatus = authorizationStatus
        self.soundSetting = soundSetting
        self.badgeSetting = badgeSetting
        self.alertSetting = alertSetting
        self.notificationCenterSetting = notificationCenterSetting
        self.lockScreenSetting = lockScreenSetting
        self.carPlaySetting = carPlaySetting
        self.alertStyle = alertStyle
        self.showPreviewsSetting = showPreviewsSetting
        self.criticalAlertSetting = criticalAlertSetting
        self.providesAppNotificationSettings = providesAppNotificationSettings
        self.announcementSetting = announcementSetting
        self.timeSensitiveSetting = timeSensitiveSetting
        self.scheduledDeliverySetting = scheduledDeliverySetting
        self.directMessagesSetting = directMessagesSetting
    }

    /// Before the app has asked: nothing is supported yet.
    package static let notDetermined = NotificationSettings(
        authorizationStatus: .notDetermined,
        soundSetting: .notSupported, badgeSetting: .notSupported, alertSetting: .notSupported,
        notificationCenterSetting: .notSupported, lockScreenSetting: .notSupported, carPlaySetting: .notSupported,
        alertStyle: .none, showPreviewsSetting: .whenAuthenticated, criticalAlertSetting: .notSupported,
        providesAppNotificationSettings: false, announcementSetting: .notSupported,
        timeSensitiveSetting: .notSupported, scheduledDeliverySetting: .notSupported,
        directMessagesSetting: .notSupported
    )

    /// The settings that follow from the person's answer to a request for `options`.
    ///
    /// - An allowed request enables exactly the requested kinds of interruption, plus the notification
    ///   center and lock screen, with banners as the alert style when alerts were requested.
    /// - A provisional grant enables the notification center only: notifications arrive quietly.
    /// - A denial disables everything.
    package static func granting(_ options: AuthorizationOptions, status: AuthorizationStatus) -> NotificationSettings {
        func setting(_ option: AuthorizationOptions) -> SettingValue {
            status == .authorized && options.contains(option) ? .enabled : .disabled
        }
        let anyAllowed = status == .authorized || status == .provisional || status == .ephemeral
        return NotificationSettings(
            authorizationStatus: status,
            soundSetting: setting(.sound),
            badgeSetting: setting(.badge),
            alertSetting: setting(.alert),
            notificationCenterSetting: anyAllowed ? .enabled : .disabled,
            lockScreenSetting: status == .authorized ? .enabled : .disabled,
            carPlaySetting: setting(.carPlay),
            alertStyle: status == .authorized && options.contains(.alert) ? .banner : .none,
            showPreviewsSetting: .whenAuthenticated,
            criticalAlertSetting: setting(.criticalAlert),
            providesAppNotificationSettings: anyAllowed && options.contains(.providesAppNotificationSettings),
            announcementSetting: setting(.announcement),
            timeSensitiveSetting: setting(.timeSensitive),
            scheduledDeliverySetting: .disabled,
            directMessagesSetting: .notSupported
        )
    }
}

/// The presentation an app's `willPresent` asks for; the raw values are Apple's.
package struct PresentationOptions: OptionSet, Sendable, Hashable {
    package var rawValue: UInt
    package init(rawValue: UInt) { self.rawValue = rawValue }

    package static let badge = PresentationOptions(rawValue: 1 << 0)
    package static let sound = PresentationOptions(rawValue: 1 << 1)
    package static let alert = PresentationOptions(rawValue: 1 << 2)
    package static let list = PresentationOptions(rawValue: 1 << 3)
    package static let banner = PresentationOptions(rawValue: 1 << 4)
}
