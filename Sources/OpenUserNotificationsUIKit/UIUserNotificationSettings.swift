#if !canImport(UIKit)
public import Foundation
internal import OpenUserNotifications

// The iOS 8 notification API, as UIKit still ships it (deprecated since iOS 10): the types an app
// registers with `registerUserNotificationSettings(_:)`, mapped onto the UserNotifications system as
// Apple maps them.

/// What the app may do to get the person's attention.
@available(*, deprecated, message: "Use UserNotifications Framework's UNAuthorizationOptions")
public struct UIUserNotificationType: OptionSet, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// The app may badge its icon.
    public static let badge = UIUserNotificationType(rawValue: 1 << 0)
    /// The app may play sounds.
    public static let sound = UIUserNotificationType(rawValue: 1 << 1)
    /// The app may show alerts.
    public static let alert = UIUserNotificationType(rawValue: 1 << 2)
}

/// Whether an action brings the app to the foreground or runs it in the background.
@available(*, deprecated, message: "Use UserNotifications Framework's UNNotificationActionOptions")
public enum UIUserNotificationActivationMode: UInt, Sendable {
    /// The app comes to the foreground.
    case foreground = 0
    /// The app handles the action in the background.
    case background = 1
}

/// Where a notification's actions are shown: the alert (up to four) or a banner and the lock screen (up to two).
@available(*, deprecated, message: "Use UserNotifications Framework's -[UNNotificationCategory actions] or -[UNNotificationCategory minimalActions]")
public enum UIUserNotificationActionContext: UInt, Sendable {
    /// An alert: up to four actions, top to bottom.
    case `default` = 0
    /// A banner or the lock screen: up to two actions.
    case minimal = 1
}

/// Whether an action is a button or asks for typed text (iOS 9).
@available(*, deprecated, message: "Use UserNotifications Framework's UNNotificationAction or UNTextInputNotificationAction")
public enum UIUserNotificationActionBehavior: UInt, Sendable {
    /// A button.
    case `default` = 0
    /// A button that asks for a typed reply.
    case textInput = 1
}

/// The `parameters` key of a text-input action's send button title.
@available(*, deprecated, message: "Use UserNotifications Framework's -[UNTextInputNotificationAction textInputButtonTitle]")
public let UIUserNotificationTextInputActionButtonTitleKey = "UIUserNotificationTextInputActionButtonTitleKey"

/// The `responseInfo` key of the text the person typed.
@available(*, deprecated, message: "Use UserNotifications Framework's -[UNTextInputNotificationResponse userText]")
public let UIUserNotificationActionResponseTypedTextKey = "UIUserNotificationActionResponseTypedTextKey"

/// What the app registers: the kinds of attention it asks for, and its categories.
@available(*, deprecated, message: "Use UserNotifications Framework's UNNotificationSettings")
open class UIUserNotificationSettings: NSObject, @unchecked Sendable {
    // Sendable: every stored property is immutable.
    /// The kinds of attention asked for; in `currentUserNotificationSettings`, those the person allows.
    open private(set) var types: UIUserNotificationType
    /// The app's categories.
    open private(set) var categories: Set<UIUserNotificationCategory>?

    /// Settings to register with `UIApplication.registerUserNotificationSettings(_:)`.
    public init(types: UIUserNotificationType, categories: Set<UIUserNotificationCategory>?) {
        self.types = types
        self.categories = categories
        super.init()
    }

    @available(*, deprecated, message: "Use UserNotifications Framework's UNNotificationSettings")
    public convenience override init() {
        self.init(types: [], categories: nil)
    }

    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? UIUserNotificationSettings else { return false }
        return types == other.types && categories == other.categories
    }

    open override var hash: Int { Int(types.rawValue) }
}

/// A button on a notification, as iOS 8 declares it.
@available(*, deprecated, message: "Use UserNotifications Framework's UNNotificationAction")
open class UIUserNotificationAction: NSObject, NSCopying, NSMutableCopying, @unchecked Sendable {
    // Sendable: every field lives behind `fields`' lock.
    struct Fields {
        var identifier: String?
        var title: String?
        var behavior: UIUserNotificationActionBehavior = .default
        var parameters: [AnyHashable: Any] = [:]
        var activationMode: UIUserNotificationActivationMode = .foreground
        var isAuthenticationRequired = false
        var isDestructive = false
    }

    let fields: LockedValue<Fields>

    public override init() {
        fields = LockedValue(Fields())
        super.init()
    }

    init(fields: Fields) {
        self.fields = LockedValue(fields)
        super.init()
    }

    /// What the app's handler receives when the person presses it.
    open var identifier: String? { fields.withLock { $0.identifier } }
    /// The button's title.
    open var title: String? { fields.withLock { $0.title } }
    /// A button, or a button that asks for typed text.
    open var behavior: UIUserNotificationActionBehavior { fields.withLock { $0.behavior } }
    /// For text input: `UIUserNotificationTextInputActionButtonTitleKey`, the send button's title.
    open var parameters: [AnyHashable: Any] { fields.withLock { $0.parameters } }
    /// Whether pressing it brings the app to the foreground.
    open var activationMode: UIUserNotificationActivationMode { fields.withLock { $0.activationMode } }
    /// Whether the device must be unlocked first (always so for foreground actions).
    open var isAuthenticationRequired: Bool { fields.withLock { $0.isAuthenticationRequired } }
    /// Whether it is shown in red, as an action that destroys something.
    open var isDestructive: Bool { fields.withLock { $0.isDestructive } }

    open func copy(with zone: NSZone? = nil) -> Any {
        UIUserNotificationAction(fields: fields.withLock { $0 })
    }

    open func mutableCopy(with zone: NSZone? = nil) -> Any {
        UIMutableUserNotificationAction(fields: fields.withLock { $0 })
    }

    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? UIUserNotificationAction else { return false }
        let (mine, theirs) = (fields.withLock { $0 }, other.fields.withLock { $0 })
        return mine.identifier == theirs.identifier && mine.title == theirs.title && mine.behavior == theirs.behavior
            && mine.activationMode == theirs.activationMode && mine.isAuthenticationRequired == theirs.isAuthenticationRequired
            && mine.isDestructive == theirs.isDestructive
            && (mine.parameters[UIUserNotificationTextInputActionButtonTitleKey] as? String)
                == (theirs.parameters[UIUserNotificationTextInputActionButtonTitleKey] as? String)
    }

    open override var hash: Int { identifier?.hashValue ?? 0 }
}

/// An action the app builds: set its properties, then put it in a category.
@available(*, deprecated, message: "Use UserNotifications Framework's UNNotificationAction")
open class UIMutableUserNotificationAction: UIUserNotificationAction, @unchecked Sendable {
    // Sendable: every field lives behind the inherited lock.
    open override var identifier: String? {
        get { super.identifier }
        set { fields.withLock { $0.identifier = newValue } }
    }
    open override var title: String? {
        get { super.title }
        set { fields.withLock { $0.title = newValue } }
    }
    open override var behavior: UIUserNotificationActionBehavior {
        get { super.behavior }
        set { fields.withLock { $0.behavior = newValue } }
    }
    open override var parameters: [AnyHashable: Any] {
        get { super.parameters }
        set { fields.withLock { $0.parameters = newValue } }
    }
    open override var activationMode: UIUserNotificationActivationMode {
        get { super.activationMode }
        set { fields.withLock { $0.activationMode = newValue } }
    }
    open override var isAuthenticationRequired: Bool {
        get { super.isAuthenticationRequired }
        set { fields.withLock { $0.isAuthenticationRequired = newValue } }
    }
    open override var isDestructive: Bool {
        get { super.isDestructive }
        set { fields.withLock { $0.isDestructive = newValue } }
    }
}

/// A kind of notification with its actions for each context, as iOS 8 declares it.
@available(*, deprecated, message: "Use UserNotifications Framework's UNNotificationCategory")
open class UIUserNotificationCategory: NSObject, NSCopying, NSMutableCopying, @unchecked Sendable {
    // Sendable: every field lives behind `fields`' lock.
    struct Fields {
        var identifier: String?
        var actions: [UIUserNotificationActionContext: [UIUserNotificationAction]] = [:]
    }

    let fields: LockedValue<Fields>

    public override init() {
        fields = LockedValue(Fields())
        super.init()
    }

    init(fields: Fields) {
        self.fields = LockedValue(fields)
        super.init()
    }

    /// The name a notification's `category` (or a push's `"category"`) gives.
    open var identifier: String? { fields.withLock { $0.identifier } }

    /// The actions set for `context`, as they were set (the system shows at most four in the default
    /// context and two in the minimal one).
    open func actions(for context: UIUserNotificationActionContext) -> [UIUserNotificationAction]? {
        fields.withLock { $0.actions[context] }
    }

    open func copy(with zone: NSZone? = nil) -> Any {
        UIUserNotificationCategory(fields: fields.withLock { $0 })
    }

    open func mutableCopy(with zone: NSZone? = nil) -> Any {
        UIMutableUserNotificationCategory(fields: fields.withLock { $0 })
    }

    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? UIUserNotificationCategory else { return false }
        let (mine, theirs) = (fields.withLock { $0 }, other.fields.withLock { $0 })
        return mine.identifier == theirs.identifier && mine.actions == theirs.actions
    }

    open override var hash: Int { identifier?.hashValue ?? 0 }
}

/// A category the app builds: name it, then set its actions for each context.
@available(*, deprecated, message: "Use UserNotifications Framework's UNNotificationCategory")
open class UIMutableUserNotificationCategory: UIUserNotificationCategory, @unchecked Sendable {
    // Sendable: every field lives behind the inherited lock.
    open override var identifier: String? {
        get { super.identifier }
        set { fields.withLock { $0.identifier = newValue } }
    }

    /// Sets the actions shown in `context`: up to four in an alert (top to bottom), two on a banner or
    /// the lock screen (the first on the right).
    open func setActions(_ actions: [UIUserNotificationAction]?, for context: UIUserNotificationActionContext) {
        // The category keeps its own copies, as UIKit's does.
        let copies = actions?.map { $0.copy() as! UIUserNotificationAction }
        fields.withLock { $0.actions[context] = copies }
    }
}

// MARK: - Mapped onto UserNotifications

@available(*, deprecated, message: "The mapping of iOS 8's API onto UserNotifications")
extension UIUserNotificationType {
    /// The authorization the types ask for.
    var authorizationOptions: UNAuthorizationOptions {
        var options: UNAuthorizationOptions = []
        if contains(.badge) { options.insert(.badge) }
        if contains(.sound) { options.insert(.sound) }
        if contains(.alert) { options.insert(.alert) }
        return options
    }
}

@available(*, deprecated, message: "The mapping of iOS 8's API onto UserNotifications")
extension UIUserNotificationAction {
    /// The action as UserNotifications declares it: a foreground activation, destruction and
    /// authentication as its options, typed text as a text-input action.
    var notificationAction: UNNotificationAction {
        let fields = self.fields.withLock { $0 }
        var options: UNNotificationActionOptions = []
        if fields.activationMode == .foreground { options.insert(.foreground) }
        if fields.isDestructive { options.insert(.destructive) }
        if fields.isAuthenticationRequired { options.insert(.authenticationRequired) }
        let identifier = fields.identifier ?? ""
        let title = fields.title ?? ""
        guard fields.behavior == .textInput else {
            return UNNotificationAction(identifier: identifier, title: title, options: options)
        }
        let button = fields.parameters[UIUserNotificationTextInputActionButtonTitleKey] as? String ?? "Send"
        return UNTextInputNotificationAction(identifier: identifier, title: title, options: options, textInputButtonTitle: button, textInputPlaceholder: "")
    }
}

@available(*, deprecated, message: "The mapping of iOS 8's API onto UserNotifications")
extension UIUserNotificationCategory {
    /// The category as UserNotifications declares it. A banner shows a category's first two actions,
    /// so the minimal context's actions (at most two, in their order) come first, then the rest of the
    /// default context's (at most four in all); without a minimal context, a banner shows the first two
    /// of the default context, as iOS 8 does.
    var notificationCategory: UNNotificationCategory {
        let minimal = Array((actions(for: .minimal) ?? []).prefix(UIUserNotificationActionContext.minimal.actionLimit))
        let standard = Array((actions(for: .default) ?? []).prefix(UIUserNotificationActionContext.default.actionLimit))
        var ordered = minimal
        for action in standard where !ordered.contains(where: { $0.identifier == action.identifier }) {
            ordered.append(action)
        }
        return UNNotificationCategory(identifier: identifier ?? "", actions: Array(ordered.prefix(UIUserNotificationActionContext.default.actionLimit)).map(\.notificationAction),
                                      intentIdentifiers: [], options: [])
    }
}

@available(*, deprecated, message: "The mapping of iOS 8's API onto UserNotifications")
extension UIUserNotificationActionContext {
    /// At most this many actions show in the context: two on a banner, four in an alert.
    var actionLimit: Int { self == .minimal ? 2 : 4 }
}
#endif
