#if canImport(UserNotificationsUI)
// On Apple's platforms the extension uses UserNotificationsUI itself.
@_exported public import UserNotificationsUI
#else
public import Foundation
public import OpenUserNotifications
public import OpenUserNotificationsUIKit

/// The kind of media play/pause button the system draws over a content extension's interface.
public enum UNNotificationContentExtensionMediaPlayPauseButtonType: UInt, Sendable {
    /// No button.
    case none = 0
    /// A standard button, drawn inside the interface.
    case `default` = 1
    /// A button drawn over the media, which fades while it plays.
    case overlay = 2
}

/// What happens after a content extension handled the action the person chose.
public enum UNNotificationContentExtensionResponseOption: UInt, Sendable {
    /// The interface stays; the extension handled the action, and the app hears nothing.
    case doNotDismiss = 0
    /// The interface closes; the extension handled the action, and the app hears nothing.
    case dismiss = 1
    /// The interface closes, and the response goes to the app's delegate as if there were no extension.
    case dismissAndForwardAction = 2
}

/// The view controller of a notification content extension: the custom interface of its categories'
/// expanded notifications.
///
/// Written as on iOS, with one addition for Linux: the interface is HTML, which the controller gives
/// by conforming to ``NotificationContentHTML``; the system reads it again after each call into the
/// extension. Its `main.swift` is one line:
///
/// ```swift
/// import OpenUserNotificationsUI
///
/// NotificationContentExtensionHost.run(NotificationViewController())
/// ```
///
/// `Docs/content-extensions.md` describes the Info.plist keys, how the daemon runs the extension, and
/// what the web notification center shows.
@MainActor
public protocol UNNotificationContentExtension: NSObjectProtocol {
    /// The notification to draw: called once when the person expands it.
    func didReceive(_ notification: UNNotification)
    /// The person chose one of the notification's actions; `completion` says what happens next. If the
    /// extension does not implement it, the response goes to the app (`.dismissAndForwardAction`).
    func didReceive(_ response: UNNotificationResponse, completionHandler completion: @escaping (UNNotificationContentExtensionResponseOption) -> Void)
    /// The media button to draw; `.none` unless the extension says otherwise.
    var mediaPlayPauseButtonType: UNNotificationContentExtensionMediaPlayPauseButtonType { get }
    /// Where the media button sits in the interface, in points from its top left.
    var mediaPlayPauseButtonFrame: CGRect { get }
    /// The media button's color.
    var mediaPlayPauseButtonTintColor: UIColor { get }
    /// The person pressed play.
    func mediaPlay()
    /// The person pressed pause.
    func mediaPause()
}

extension UNNotificationContentExtension {
    public func didReceive(_ response: UNNotificationResponse, completionHandler completion: @escaping (UNNotificationContentExtensionResponseOption) -> Void) {
        completion(.dismissAndForwardAction)
    }

    public var mediaPlayPauseButtonType: UNNotificationContentExtensionMediaPlayPauseButtonType { .none }
    public var mediaPlayPauseButtonFrame: CGRect { .zero }
    public var mediaPlayPauseButtonTintColor: UIColor { .white }
    public func mediaPlay() {}
    public func mediaPause() {}
}

/// How a content extension's interface is written on Linux, where there are no views: an HTML
/// document (or a fragment of one), shown in a sandboxed frame of the expanded notification.
///
/// The frame runs no scripts and reaches nothing outside it. Styles go in a `<style>` element or
/// `style` attributes. Images and media come from `data:` URLs or from the notification's own
/// attachments, written as the attachment's `url` (`attachment.url.absoluteString`), which the system
/// serves to the frame.
@MainActor
public protocol NotificationContentHTML: AnyObject {
    /// The interface as it is now.
    var html: String { get }
}

/// What the system behind an extension context does with the extension's calls.
@MainActor
package protocol NotificationExtensionContextHost: AnyObject {
    var notificationActions: [UNNotificationAction] { get set }
    func performNotificationDefaultAction()
    func dismissNotificationContentExtension()
    func mediaPlayingStarted()
    func mediaPlayingPaused()
}

extension NSExtensionContext {
    @MainActor
    private var notificationHost: (any NotificationExtensionContextHost)? { host as? any NotificationExtensionContextHost }

    /// The actions the expanded notification shows; setting them replaces the category's while the
    /// interface is open.
    @MainActor
    public var notificationActions: [UNNotificationAction] {
        get { notificationHost?.notificationActions ?? [] }
        set { notificationHost?.notificationActions = newValue }
    }

    /// Opens the app as tapping the notification does: its delegate receives the default action.
    @MainActor
    public func performNotificationDefaultAction() {
        notificationHost?.performNotificationDefaultAction()
    }

    /// Closes the expanded notification's interface.
    @MainActor
    public func dismissNotificationContentExtension() {
        notificationHost?.dismissNotificationContentExtension()
    }

    /// The extension's media started playing on its own: the media button shows it.
    @MainActor
    public func mediaPlayingStarted() {
        notificationHost?.mediaPlayingStarted()
    }

    /// The extension's media paused on its own: the media button shows it.
    @MainActor
    public func mediaPlayingPaused() {
        notificationHost?.mediaPlayingPaused()
    }
}
#endif
