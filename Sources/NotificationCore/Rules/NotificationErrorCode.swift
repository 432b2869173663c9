/// The reasons a notification call fails; each maps one-to-one to an Apple `UNError.Code`.
package enum NotificationErrorCode: Int, Sendable, Hashable, CaseIterable {
    case notificationsNotAllowed = 1
    case attachmentInvalidURL = 100
    case attachmentUnrecognizedType = 101
    case attachmentInvalidFileSize = 102
    case attachmentNotInDataStore = 103
    case attachmentMoveIntoDataStoreFailed = 104
    case attachmentCorrupt = 105
    case notificationInvalidNoDate = 1400
    case notificationInvalidNoContent = 1401
    case contentProvidingObjectNotAllowed = 1500
    case contentProvidingInvalid = 1501
    case badgeInputInvalid = 1600

    /// A sentence for a person reading the error: what went wrong.
    package var message: String {
        switch self {
        case .notificationsNotAllowed: "Notifications are not allowed for this application."
        case .attachmentInvalidURL: "The attachment's URL is not a readable local file."
        case .attachmentUnrecognizedType: "The attachment's file type is not supported."
        case .attachmentInvalidFileSize: "The attachment is larger than its type allows."
        case .attachmentNotInDataStore: "The attachment's file is no longer in the notification data store."
        case .attachmentMoveIntoDataStoreFailed: "The attachment could not be copied into the notification data store."
        case .attachmentCorrupt: "The attachment's contents do not match its file type."
        case .notificationInvalidNoDate: "The notification's trigger never produces a date to fire at."
        case .notificationInvalidNoContent: "The notification has no content to show, play or badge."
        case .contentProvidingObjectNotAllowed: "This object cannot provide notification content."
        case .contentProvidingInvalid: "The content provider's content is invalid."
        case .badgeInputInvalid: "The badge count must be zero or more."
        }
    }
}

/// A failed notification call: the code and, where it helps, what exactly was wrong.
package struct NotificationFailure: Error, Sendable, Hashable {
    package var code: NotificationErrorCode
    package var detail: String?
    /// The rule the request broke, when it broke one of ``RequestRules``: Apple has no `UNError` code
    /// for these, so ``code`` is the nearest one, and this says exactly what was wrong.
    package var violation: RuleViolation?

    package init(_ code: NotificationErrorCode, detail: String? = nil) {
        self.code = code
        self.detail = detail
    }

    /// A request that breaks a rule: reported with Apple's code for it, or the nearest one: invalid
    /// date for a trigger and invalid content for the rest.
    package init(_ violation: RuleViolation, isTrigger: Bool) {
        self.init(violation.errorCode ?? (isTrigger ? .notificationInvalidNoDate : .notificationInvalidNoContent), detail: violation.message)
        self.violation = violation
    }

    package var message: String {
        if let detail { "\(code.message) \(detail)" } else { code.message }
    }
}
