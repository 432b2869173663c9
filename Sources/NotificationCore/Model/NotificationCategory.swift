/// Options of an action button; the raw values are Apple's `UNNotificationActionOptions`.
package struct ActionOptions: OptionSet, Sendable, Hashable {
    package var rawValue: UInt
    package init(rawValue: UInt) { self.rawValue = rawValue }

    package static let authenticationRequired = ActionOptions(rawValue: 1 << 0)
    package static let destructive = ActionOptions(rawValue: 1 << 1)
    package static let foreground = ActionOptions(rawValue: 1 << 2)
}

/// Options of a category; the raw values are Apple's `UNNotificationCategoryOptions`.
package struct CategoryOptions: OptionSet, Sendable, Hashable {
    package var rawValue: UInt
    package init(rawValue: UInt) { self.rawValue = rawValue }

    package static let customDismissAction = CategoryOptions(rawValue: 1 << 0)
    package static let allowInCarPlay = CategoryOptions(rawValue: 1 << 1)
    package static let hiddenPreviewsShowTitle = CategoryOptions(rawValue: 1 << 2)
    package static let hiddenPreviewsShowSubtitle = CategoryOptions(rawValue: 1 << 3)
    package static let allowAnnouncement = CategoryOptions(rawValue: 1 << 4)
}

/// An image shown beside an action's title.
package enum ActionIcon: Sendable, Hashable {
    case template(String)
    case system(String)
}

/// One button a person can pick on a notification, or a reply field.
package struct NotificationAction: Sendable, Hashable, Codable {
    /// The reply field of a text-input action.
    package struct TextInput: Sendable, Hashable, Codable {
        package var buttonTitle: String
        package var placeholder: String

        package init(buttonTitle: String, placeholder: String) {
            self.buttonTitle = buttonTitle
            self.placeholder = placeholder
        }
    }

    package var identifier: String
    package var title: String
    package var options: ActionOptions
    package var icon: ActionIcon?
    /// Present on text-input actions only.
    package var textInput: TextInput?

    package init(identifier: String, title: String, options: ActionOptions = [], icon: ActionIcon? = nil, textInput: TextInput? = nil) {
        self.identifier = identifier
        self.title = title
        self.options = options
        self.icon = icon
        self.textInput = textInput
    }
}

/// A kind of notification an app declares, with the actions shown on it.
package struct NotificationCategory: Sendable, Hashable, Codable {
    package var identifier: String
    package var actions: [NotificationAction]
    package var intentIdentifiers: [String]
    package var hiddenPreviewsBodyPlaceholder: String
    package var categorySummaryFormat: String
    package var options: CategoryOptions

    package init(
        identifier: String,
        actions: [NotificationAction],
        intentIdentifiers: [String] = [],
        hiddenPreviewsBodyPlaceholder: String = "",
        categorySummaryFormat: String = "",
        options: CategoryOptions = []
    ) {
        self.identifier = identifier
        self.actions = actions
        self.intentIdentifiers = intentIdentifiers
        self.hiddenPreviewsBodyPlaceholder = hiddenPreviewsBodyPlaceholder
        self.categorySummaryFormat = categorySummaryFormat
        self.options = options
    }
}
