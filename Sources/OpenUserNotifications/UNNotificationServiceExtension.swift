public import Foundation

/// The base class of a notification service extension, which changes a push notification's content
/// before it is shown (decrypting it, downloading an attachment, …).
///
/// Subclass it and override both methods. The system calls `didReceive(_:withContentHandler:)` for a
/// push with `mutable-content` set; call the content handler with the new content within the time
/// budget. When time runs out the system calls `serviceExtensionTimeWillExpire()`: deliver your best
/// attempt then, or the original content is shown.
///
/// ```swift
/// class NotificationService: UNNotificationServiceExtension {
///     override func didReceive(_ request: UNNotificationRequest,
///                              withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void) {
///         let content = request.content.mutableCopy() as! UNMutableNotificationContent
///         content.title += " [modified]"
///         contentHandler(content)
///     }
/// }
/// ```
open class UNNotificationServiceExtension: NSObject {
    /// Creates the extension; the system makes one per notification.
    public override init() {
        super.init()
    }

    /// Receives the push's request; call `contentHandler` once with the content to show.
    /// The default implementation delivers the content unchanged.
    open func didReceive(_ request: UNNotificationRequest, withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void) {
        contentHandler(request.content)
    }

    /// Time is nearly up: call the content handler now with your best attempt.
    /// The default implementation does nothing, so the original content is shown.
    open func serviceExtensionTimeWillExpire() {}
}
