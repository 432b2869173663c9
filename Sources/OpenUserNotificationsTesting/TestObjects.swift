public import Foundation
public import OpenUserNotifications
internal import NotificationCore

// Apple's framework gives no public way to create the objects below, which makes code that receives
// them hard to unit-test. These factories create them for tests.

extension UNNotification {
    /// A delivered notification for `request`, delivered at `date`.
    ///
    /// - Precondition: the request's `userInfo` holds only property-list types.
    public static func makeForTesting(request: UNNotificationRequest, date: Date = Date()) -> UNNotification {
        UNNotification(DeliveredNotification(request: request.testValue, date: date))
    }
}

extension UNNotificationResponse {
    /// A response in which the person picked `actionIdentifier` (by default, opened the notification).
    public static func makeForTesting(
        notification: UNNotification,
        actionIdentifier: String = UNNotificationDefaultActionIdentifier
    ) -> UNNotificationResponse {
        make(NotificationResponse(notification: notification.value, actionIdentifier: actionIdentifier))
    }
}

extension UNTextInputNotificationResponse {
    /// A response in which the person typed `userText` into the text-input action `actionIdentifier`.
    public static func makeForTesting(
        notification: UNNotification,
        actionIdentifier: String,
        userText: String
    ) -> UNTextInputNotificationResponse {
        make(NotificationResponse(notification: notification.value, actionIdentifier: actionIdentifier, userText: userText))
            as! UNTextInputNotificationResponse
    }
}

extension UNNotificationSettings {
    /// Settings as they are after the person answered a request for `options`: every requested kind
    /// enabled when `authorizationStatus` is `.authorized`, the list only when `.provisional`, nothing
    /// when `.denied`; then adjusted by `edit`.
    public static func makeForTesting(
        authorizationStatus: UNAuthorizationStatus,
        options: UNAuthorizationOptions = [.alert, .sound, .badge],
        edit: (inout NotificationSettingsEditor) -> Void = { _ in }
    ) -> UNNotificationSettings {
        let status = AuthorizationStatus(rawValue: authorizationStatus.rawValue)!
        var editor = NotificationSettingsEditor(
            status == .notDetermined ? .notDetermined : .granting(AuthorizationOptions(rawValue: options.rawValue), status: status)
        )
        edit(&editor)
        return UNNotificationSettings(value: editor.value)
    }
}

extension UNNotificationRequest {
    var testValue: NotificationRequest {
        guard let value = coreValue else {
            preconditionFailure("UNNotificationRequest \"\(identifier)\": userInfo must contain only property-list types")
        }
        return value
    }
}
