public import Foundation
package import NotificationCore

/// The person's notification settings for the app, as read by `getNotificationSettings`.
///
/// The system enforces these settings whatever the app does: an app whose sounds are turned off plays
/// none. There is no public initializer, as with Apple's framework; tests build one with
/// `OpenUserNotificationsTesting`.
open class UNNotificationSettings: NSObject, NSCopying, NSSecureCoding, @unchecked Sendable {
    // Sendable: every stored property is an immutable value.
    let value: NotificationSettings

    package init(value: NotificationSettings) {
        self.value = value
        super.init()
    }

    /// Whether the app may deliver notifications.
    open var authorizationStatus: UNAuthorizationStatus { UNAuthorizationStatus(rawValue: value.authorizationStatus.rawValue)! }
    /// Whether notifications may play sounds.
    open var soundSetting: UNNotificationSetting { .init(value.soundSetting) }
    /// Whether notifications may badge the app.
    open var badgeSetting: UNNotificationSetting { .init(value.badgeSetting) }
    /// Whether notifications may show alerts.
    open var alertSetting: UNNotificationSetting { .init(value.alertSetting) }
    /// Whether notifications appear in the notification center.
    open var notificationCenterSetting: UNNotificationSetting { .init(value.notificationCenterSetting) }
    /// Whether notifications appear on the lock screen.
    open var lockScreenSetting: UNNotificationSetting { .init(value.lockScreenSetting) }
    /// Whether notifications appear in CarPlay.
    open var carPlaySetting: UNNotificationSetting { .init(value.carPlaySetting) }
    /// How alerts look.
    open var alertStyle: UNAlertStyle { UNAlertStyle(rawValue: value.alertStyle.rawValue)! }
    /// When previews show.
    open var showPreviewsSetting: UNShowPreviewsSetting { UNShowPreviewsSetting(rawValue: value.showPreviewsSetting.rawValue)! }
    /// Whether critical alerts may play.
    open var criticalAlertSetting: UNNotificationSetting { .init(value.criticalAlertSetting) }
    /// Whether the system shows a button for the app's own notification settings.
    open var providesAppNotificationSettings: Bool { value.providesAppNotificationSettings }
    /// Whether Siri may announce notifications.
    open var announcementSetting: UNNotificationSetting { .init(value.announcementSetting) }
    /// Whether time-sensitive notifications may break through.
    open var timeSensitiveSetting: UNNotificationSetting { .init(value.timeSensitiveSetting) }
    /// Whether notifications are held for a scheduled summary.
    open var scheduledDeliverySetting: UNNotificationSetting { .init(value.scheduledDeliverySetting) }
    /// Whether direct messages may break through Focus.
    open var directMessagesSetting: UNNotificationSetting { .init(value.directMessagesSetting) }

    /// Archives of this class can be read back safely.
    public class var supportsSecureCoding: Bool { true }

    /// Archives the settings.
    open func encode(with coder: NSCoder) {
        SecureCoding.encode(value, with: coder)
    }

    /// Reads an archived settings; `nil` when the archive is not one.
    public required convenience init?(coder: NSCoder) {
        guard let value = SecureCoding.decode(NotificationSettings.self, from: coder) else { return nil }
        self.init(value: value)
    }

    open func copy(with zone: NSZone? = nil) -> Any { self }

    open override func isEqual(_ object: Any?) -> Bool {
        (object as? UNNotificationSettings)?.value == value
    }

    open override var hash: Int { value.hashValue }
}

extension UNNotificationSetting {
    init(_ value: SettingValue) { self.init(rawValue: value.rawValue)! }
}
