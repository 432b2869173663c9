public import Foundation
package import NotificationCore

/// The action identifier of a response in which the person opened the app from the notification.
public let UNNotificationDefaultActionIdentifier: String = SystemActionIdentifier.default
/// The action identifier of a response in which the person dismissed the notification.
public let UNNotificationDismissActionIdentifier: String = SystemActionIdentifier.dismiss

/// What the person did with a delivered notification: opened it, dismissed it or picked an action.
/// The app's delegate receives it in `userNotificationCenter(_:didReceive:withCompletionHandler:)`.
open class UNNotificationResponse: NSObject, NSCopying, NSSecureCoding, @unchecked Sendable {
    // Sendable: every stored property is immutable and itself Sendable.
    /// The notification the person acted on.
    public let notification: UNNotification
    /// The identifier of the action the person picked, or one of the system identifiers.
    public let actionIdentifier: String
    package let value: NotificationResponse

    init(_ value: NotificationResponse) {
        self.value = value
        self.notification = UNNotification(value.notification)
        self.actionIdentifier = value.actionIdentifier
        super.init()
    }

    /// The public response for a stored one: a text-input response when it carries typed text.
    package static func make(_ value: NotificationResponse) -> UNNotificationResponse {
        value.userText == nil ? UNNotificationResponse(value) : UNTextInputNotificationResponse(value)
    }

    /// Archives of this class can be read back safely.
    public class var supportsSecureCoding: Bool { true }

    /// Archives the response.
    open func encode(with coder: NSCoder) {
        SecureCoding.encode(value, with: coder)
    }

    /// Reads an archived response; `nil` when the archive is not one.
    public required convenience init?(coder: NSCoder) {
        guard let value = SecureCoding.decode(NotificationResponse.self, from: coder) else { return nil }
        self.init(value)
    }

    open func copy(with zone: NSZone? = nil) -> Any { self }

    open override func isEqual(_ object: Any?) -> Bool { (object as? UNNotificationResponse)?.value == value }

    open override var hash: Int { value.hashValue }
}

/// A response to a text-input action, carrying what the person typed.
open class UNTextInputNotificationResponse: UNNotificationResponse, @unchecked Sendable {
    // Sendable: inherits only immutable state.
    /// The text the person typed.
    open var userText: String { value.userText ?? "" }
}
