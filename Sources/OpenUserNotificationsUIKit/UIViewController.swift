#if !canImport(UIKit)
public import Foundation

/// A view controller, as far as an app extension's interface needs one: its title, the size it would
/// like, and its extension context.
///
/// There are no views on Linux: a notification content extension draws its interface as HTML (see
/// `NotificationContentHTML` in OpenUserNotificationsUI), and the system reads the controller's
/// ``title`` and ``preferredContentSize`` beside it.
@MainActor
open class UIViewController: UIResponder {
    /// The controller's title: the notification's title when the content extension overrides the
    /// default title (`UNNotificationExtensionOverridesDefaultTitle`).
    open var title: String?
    /// The size the interface would like; its height over its width replaces the extension's initial
    /// content size ratio once it is not zero.
    open var preferredContentSize: CGSize = .zero
    /// The context of the app extension this controller is the interface of; `nil` outside one.
    open var extensionContext: NSExtensionContext? { hostedContext }

    /// Set by the extension's host before ``viewDidLoad()``.
    package var hostedContext: NSExtensionContext?

    /// Called once, before the controller is used; override it to set the interface up.
    open func viewDidLoad() {}
}

/// The context an app extension runs in: how it talks to the system that hosts it.
///
/// Notification content extensions use its notification members (in OpenUserNotificationsUI).
open class NSExtensionContext: NSObject {
    /// The system's end: what the extension's calls reach. Set by the extension's host.
    package var host: AnyObject?

    package init(host: AnyObject?) {
        self.host = host
        super.init()
    }
}

/// A color, as far as notification interfaces need one: the tint of a content extension's media
/// button.
open class UIColor: NSObject, @unchecked Sendable {
    // Sendable: immutable.
    /// Red, green, blue and alpha, each 0 to 1.
    package let components: (red: CGFloat, green: CGFloat, blue: CGFloat, alpha: CGFloat)

    public init(red: CGFloat, green: CGFloat, blue: CGFloat, alpha: CGFloat) {
        func clamped(_ value: CGFloat) -> CGFloat { Swift.min(1, Swift.max(0, value)) }
        components = (clamped(red), clamped(green), clamped(blue), clamped(alpha))
        super.init()
    }

    public convenience init(white: CGFloat, alpha: CGFloat) {
        self.init(red: white, green: white, blue: white, alpha: alpha)
    }

    open class var white: UIColor { UIColor(white: 1, alpha: 1) }
    open class var black: UIColor { UIColor(white: 0, alpha: 1) }
    open class var clear: UIColor { UIColor(white: 0, alpha: 0) }
    open class var systemBlue: UIColor { UIColor(red: 0, green: 122.0 / 255, blue: 1, alpha: 1) }
    open class var systemRed: UIColor { UIColor(red: 1, green: 59.0 / 255, blue: 48.0 / 255, alpha: 1) }

    /// The color as CSS writes it.
    package var css: String {
        let (red, green, blue, alpha) = components
        func byte(_ value: CGFloat) -> Int { Int((value * 255).rounded()) }
        return "rgba(\(byte(red)), \(byte(green)), \(byte(blue)), \(Double(alpha)))"
    }
}
#endif
