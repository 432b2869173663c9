public import Foundation
package import NotificationCore

/// A request to deliver a notification: what it shows, when it fires, and an identifier to update or
/// remove it by.
///
/// ```swift
/// let request = UNNotificationRequest(identifier: "daily-report", content: content, trigger: trigger)
/// try await UNUserNotificationCenter.current().add(request)
/// ```
open class UNNotificationRequest: NSObject, NSCopying, NSSecureCoding, @unchecked Sendable {
    // Sendable: every stored property is immutable and itself Sendable.
    /// The request's identifier: adding another request with the same one replaces this one.
    public let identifier: String
    /// What the notification shows. The request keeps its own copy.
    public let content: UNNotificationContent
    /// When it fires; `nil` delivers it right away.
    public let trigger: UNNotificationTrigger?

    /// A request with a copy of `content`, fired by `trigger` (or at once when it is `nil`).
    public convenience init(identifier: String, content: UNNotificationContent, trigger: UNNotificationTrigger?) {
        self.init(identifier: identifier, copiedContent: content.copy() as! UNNotificationContent, trigger: trigger)
    }

    init(identifier: String, copiedContent: UNNotificationContent, trigger: UNNotificationTrigger?) {
        self.identifier = identifier
        self.content = copiedContent
        self.trigger = trigger
        super.init()
    }

    package convenience init(_ request: NotificationRequest, scheduledFireDate: Date? = nil) {
        self.init(
            identifier: request.identifier,
            copiedContent: UNNotificationContent(request.content),
            trigger: request.trigger.map { UNNotificationTrigger.make($0, scheduledFireDate: scheduledFireDate) }
        )
    }

    /// Archives of this class can be read back safely.
    public class var supportsSecureCoding: Bool { true }

    /// Archives the request.
    open func encode(with coder: NSCoder) {
        if let value = coreValue { SecureCoding.encode(value, with: coder) }
    }

    /// Reads an archived request; `nil` when the archive is not one.
    public required convenience init?(coder: NSCoder) {
        guard let value = SecureCoding.decode(NotificationRequest.self, from: coder) else { return nil }
        self.init(value)
    }

    /// The request as the system keeps it, or `nil` when its `userInfo` is not a property list.
    package var coreValue: NotificationRequest? {
        content.coreValue.map { NotificationRequest(identifier: identifier, content: $0, trigger: trigger?.value) }
    }

    open func copy(with zone: NSZone? = nil) -> Any { self }

    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? UNNotificationRequest else { return false }
        return other.identifier == identifier && other.content.isEqual(content) && other.trigger == trigger
    }

    open override var hash: Int { identifier.hashValue }
}

/// A notification the system delivered. Apps receive these; they never create them.
open class UNNotification: NSObject, NSCopying, NSSecureCoding, @unchecked Sendable {
    // Sendable: every stored property is immutable and itself Sendable.
    /// When the notification was delivered.
    public let date: Date
    /// The request that produced it.
    public let request: UNNotificationRequest
    package let value: DeliveredNotification

    package init(_ value: DeliveredNotification) {
        self.value = value
        self.date = value.date
        self.request = UNNotificationRequest(value.request)
        super.init()
    }

    /// Archives of this class can be read back safely.
    public class var supportsSecureCoding: Bool { true }

    /// Archives the notification.
    open func encode(with coder: NSCoder) {
        SecureCoding.encode(value, with: coder)
    }

    /// Reads an archived notification; `nil` when the archive is not one.
    public required convenience init?(coder: NSCoder) {
        guard let value = SecureCoding.decode(DeliveredNotification.self, from: coder) else { return nil }
        self.init(value)
    }

    open func copy(with zone: NSZone? = nil) -> Any { self }

    open override func isEqual(_ object: Any?) -> Bool {
        (object as? UNNotification)?.value == value
    }

    open override var hash: Int { value.hashValue }
}
