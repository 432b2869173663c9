public import Foundation
internal import NotificationCore

/// The error domain of User Notifications errors.
public let UNErrorDomain: String = "UNErrorDomain"

/// An error from the User Notifications framework, with Apple's domain and codes.
///
/// Match it as with Apple's framework:
///
/// ```swift
/// do {
///     try await center.add(request)
/// } catch UNError.notificationsNotAllowed {
///     // ask for authorization first
/// }
/// ```
public struct UNError: CustomNSError, Hashable, Error, Sendable {
    /// The codes of User Notifications errors; the raw values are Apple's.
    public enum Code: Int, Sendable, Hashable, Equatable {
        /// Notifications aren't allowed for the app.
        case notificationsNotAllowed = 1
        /// The URL of an attachment is not a readable local file.
        case attachmentInvalidURL = 100
        /// The file type of an attachment isn't supported.
        case attachmentUnrecognizedType = 101
        /// An attachment is too large for its type.
        case attachmentInvalidFileSize = 102
        /// An attachment's file isn't in the system's data store.
        case attachmentNotInDataStore = 103
        /// An attachment's file couldn't be moved into the system's data store.
        case attachmentMoveIntoDataStoreFailed = 104
        /// An attachment's file is corrupt.
        case attachmentCorrupt = 105
        /// The notification has no date to fire at, but should.
        case notificationInvalidNoDate = 1400
        /// The notification has no content.
        case notificationInvalidNoContent = 1401
        /// The object may not provide notification content.
        case contentProvidingObjectNotAllowed = 1500
        /// The provided content is invalid.
        case contentProvidingInvalid = 1501
        /// The badge count is invalid.
        case badgeInputInvalid = 1600
    }

    /// The error's code.
    public let code: Code
    private let description: String

    /// Creates an error with a code and, optionally, a user-info dictionary whose
    /// `NSLocalizedDescriptionKey` becomes the error's description.
    public init(_ code: Code, userInfo: [String: Any] = [:]) {
        self.code = code
        self.description = (userInfo[NSLocalizedDescriptionKey] as? String)
            ?? NotificationErrorCode(rawValue: code.rawValue)?.message
            ?? "User Notifications error \(code.rawValue)."
    }

    init(_ failure: NotificationFailure) {
        self.init(Code(rawValue: failure.code.rawValue)!, userInfo: [NSLocalizedDescriptionKey: failure.message])
    }

    /// The domain of these errors, `UNErrorDomain`.
    public static var errorDomain: String { UNErrorDomain }
    /// The code's raw value.
    public var errorCode: Int { code.rawValue }
    /// The error's user info; its `NSLocalizedDescriptionKey` says what went wrong.
    public var errorUserInfo: [String: Any] { [NSLocalizedDescriptionKey: description] }
    /// What went wrong, in a sentence.
    public var localizedDescription: String { description }

    public static func == (lhs: UNError, rhs: UNError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    public static var notificationsNotAllowed: Code { .notificationsNotAllowed }
    public static var attachmentInvalidURL: Code { .attachmentInvalidURL }
    public static var attachmentUnrecognizedType: Code { .attachmentUnrecognizedType }
    public static var attachmentInvalidFileSize: Code { .attachmentInvalidFileSize }
    public static var attachmentNotInDataStore: Code { .attachmentNotInDataStore }
    public static var attachmentMoveIntoDataStoreFailed: Code { .attachmentMoveIntoDataStoreFailed }
    public static var attachmentCorrupt: Code { .attachmentCorrupt }
    public static var notificationInvalidNoDate: Code { .notificationInvalidNoDate }
    public static var notificationInvalidNoContent: Code { .notificationInvalidNoContent }
    public static var contentProvidingObjectNotAllowed: Code { .contentProvidingObjectNotAllowed }
    public static var contentProvidingInvalid: Code { .contentProvidingInvalid }
    public static var badgeInputInvalid: Code { .badgeInputInvalid }
}

extension UNError.Code {
    /// Matches an error against a code, for `catch UNError.notificationsNotAllowed`.
    public static func ~= (match: UNError.Code, error: any Error) -> Bool {
        (error as? UNError)?.code == match
    }
}
