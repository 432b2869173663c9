/// The identifiers Apple reserves for responses that are not one of the app's own actions.
package enum SystemActionIdentifier {
    /// The person opened the app from the notification.
    package static let `default` = "com.apple.UNNotificationDefaultActionIdentifier"
    /// The person dismissed the notification.
    package static let dismiss = "com.apple.UNNotificationDismissActionIdentifier"
}

/// What a person did with a delivered notification; the value behind `UNNotificationResponse`.
package struct NotificationResponse: Sendable, Hashable, Codable {
    package var notification: DeliveredNotification
    package var actionIdentifier: String
    /// The reply typed into a text-input action; `nil` for every other response.
    package var userText: String?

    package init(notification: DeliveredNotification, actionIdentifier: String, userText: String? = nil) {
        self.notification = notification
        self.actionIdentifier = actionIdentifier
        self.userText = userText
    }
}

/// Something a person does with a notification they can see.
package enum PersonAction: Sendable, Hashable {
    /// Taps the notification itself, which opens the app.
    case open
    /// Picks one of the notification's action buttons.
    case action(String)
    /// Types `text` into a text-input action and sends it.
    case reply(String, text: String)
    /// Swipes the notification away.
    case dismiss

    /// The action identifier of the response it gives: Apple's default action for `open`, its dismiss
    /// action for `dismiss`, otherwise the action's own.
    package var actionIdentifier: String {
        switch self {
        case .open: SystemActionIdentifier.default
        case .dismiss: SystemActionIdentifier.dismiss
        case .action(let identifier), .reply(let identifier, _): identifier
        }
    }
}

/// Why the system refused something a person tried to do with a notification.
package enum PersonActionRejection: Error, Sendable, Hashable, CustomStringConvertible {
    /// No notification with this identifier is on screen or in the list.
    case notificationNotFound(String)
    /// The notification's category has no action with this identifier.
    case unknownAction(String)
    /// The action takes typed text: reply to it instead of picking it.
    case textInputRequired(String)
    /// The action is a plain button: it takes no text.
    case textInputNotAccepted(String)
    /// The action needs the device unlocked first.
    case deviceLocked(String)
    /// The app did not ask for `providesAppNotificationSettings`, so there is no in-app settings button.
    case appSettingsNotProvided

    package var description: String {
        switch self {
        case .notificationNotFound(let id): "No delivered notification has the identifier \"\(id)\"."
        case .unknownAction(let id): "The notification's category has no action \"\(id)\"."
        case .textInputRequired(let id): "The action \"\(id)\" takes typed text; reply to it with text."
        case .textInputNotAccepted(let id): "The action \"\(id)\" is a button and takes no text."
        case .deviceLocked(let id): "The action \"\(id)\" needs the device to be unlocked first."
        case .appSettingsNotProvided: "The app did not request providesAppNotificationSettings, so it has no in-app settings."
        }
    }
}
