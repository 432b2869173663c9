public import Foundation
package import NotificationCore

/// How an action behaves when the person picks it.
public struct UNNotificationActionOptions: OptionSet, Sendable, Hashable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// The action can be performed only on an unlocked device.
    public static let authenticationRequired = UNNotificationActionOptions(rawValue: 1 << 0)
    /// The action is destructive and is highlighted as such.
    public static let destructive = UNNotificationActionOptions(rawValue: 1 << 1)
    /// The action brings the app to the foreground, unlocking the device first if needed.
    public static let foreground = UNNotificationActionOptions(rawValue: 1 << 2)
}

/// An image shown beside an action's title.
open class UNNotificationActionIcon: NSObject, NSCopying, NSSecureCoding, @unchecked Sendable {
    // Sendable: every stored property is an immutable value.
    let value: ActionIcon

    init(value: ActionIcon) {
        self.value = value
        super.init()
    }

    /// An icon from a template image in the app's bundle.
    public convenience init(templateImageName: String) {
        self.init(value: .template(templateImageName))
    }

    /// An icon from a system symbol.
    public convenience init(systemImageName: String) {
        self.init(value: .system(systemImageName))
    }

    /// Archives of this class can be read back safely.
    public class var supportsSecureCoding: Bool { true }

    /// Archives the icon.
    open func encode(with coder: NSCoder) {
        SecureCoding.encode(value, with: coder)
    }

    /// Reads an archived icon; `nil` when the archive is not one.
    public required convenience init?(coder: NSCoder) {
        guard let value = SecureCoding.decode(ActionIcon.self, from: coder) else { return nil }
        self.init(value: value)
    }

    open func copy(with zone: NSZone? = nil) -> Any { self }

    open override func isEqual(_ object: Any?) -> Bool { (object as? UNNotificationActionIcon)?.value == value }

    open override var hash: Int { value.hashValue }
}

/// A button shown on notifications of a category.
///
/// ```swift
/// let done = UNNotificationAction(identifier: "MARK_DONE", title: "Done", options: [.authenticationRequired])
/// ```
open class UNNotificationAction: NSObject, NSCopying, NSSecureCoding, @unchecked Sendable {
    // Sendable: every stored property is an immutable value.
    package let value: NotificationAction

    init(value: NotificationAction) {
        self.value = value
        super.init()
    }

    /// An action with a title; its identifier comes back in the response when the person picks it.
    public convenience init(identifier: String, title: String, options: UNNotificationActionOptions = []) {
        self.init(value: NotificationAction(identifier: identifier, title: title, options: ActionOptions(rawValue: options.rawValue)))
    }

    /// An action with a title and an icon.
    public convenience init(identifier: String, title: String, options: UNNotificationActionOptions = [], icon: UNNotificationActionIcon?) {
        self.init(value: NotificationAction(
            identifier: identifier,
            title: title,
            options: ActionOptions(rawValue: options.rawValue),
            icon: icon?.value
        ))
    }

    /// The identifier the app receives when the person picks the action.
    open var identifier: String { value.identifier }
    /// The button's title.
    open var title: String { value.title }
    /// How the action behaves.
    open var options: UNNotificationActionOptions { UNNotificationActionOptions(rawValue: value.options.rawValue) }
    /// The button's icon.
    open var icon: UNNotificationActionIcon? { value.icon.map { UNNotificationActionIcon(value: $0) } }

    /// Archives of this class can be read back safely.
    public class var supportsSecureCoding: Bool { true }

    /// Archives the action.
    open func encode(with coder: NSCoder) {
        SecureCoding.encode(value, with: coder)
    }

    /// Reads an archived action; `nil` when the archive is not one.
    public required convenience init?(coder: NSCoder) {
        guard let value = SecureCoding.decode(NotificationAction.self, from: coder) else { return nil }
        self.init(value: value)
    }

    open func copy(with zone: NSZone? = nil) -> Any { self }

    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? UNNotificationAction else { return false }
        return type(of: other) == type(of: self) && other.value == value
    }

    open override var hash: Int { value.hashValue }

    /// The matching public action for a stored one.
    package static func make(_ value: NotificationAction) -> UNNotificationAction {
        value.textInput == nil ? UNNotificationAction(value: value) : UNTextInputNotificationAction(value: value)
    }
}

/// An action that lets the person type a reply, which the app receives as a
/// ``UNTextInputNotificationResponse``.
///
/// ```swift
/// let reply = UNTextInputNotificationAction(
///     identifier: "action.input", title: "Reply", options: [.foreground],
///     textInputButtonTitle: "Send", textInputPlaceholder: "What do you want to say?")
/// ```
open class UNTextInputNotificationAction: UNNotificationAction, @unchecked Sendable {
    // Sendable: inherits only immutable state.

    override init(value: NotificationAction) {
        var value = value
        if value.textInput == nil { value.textInput = .init(buttonTitle: "", placeholder: "") }
        super.init(value: value)
    }

    /// A text-input action with its send button's title and the reply field's placeholder.
    public convenience init(
        identifier: String,
        title: String,
        options: UNNotificationActionOptions = [],
        textInputButtonTitle: String,
        textInputPlaceholder: String
    ) {
        self.init(value: NotificationAction(
            identifier: identifier,
            title: title,
            options: ActionOptions(rawValue: options.rawValue),
            textInput: .init(buttonTitle: textInputButtonTitle, placeholder: textInputPlaceholder)
        ))
    }

    /// A text-input action with an icon, its send button's title and the reply field's placeholder.
    public convenience init(
        identifier: String,
        title: String,
        options: UNNotificationActionOptions = [],
        icon: UNNotificationActionIcon?,
        textInputButtonTitle: String,
        textInputPlaceholder: String
    ) {
        self.init(value: NotificationAction(
            identifier: identifier,
            title: title,
            options: ActionOptions(rawValue: options.rawValue),
            icon: icon?.value,
            textInput: .init(buttonTitle: textInputButtonTitle, placeholder: textInputPlaceholder)
        ))
    }

    /// The title of the button that sends the reply.
    open var textInputButtonTitle: String { value.textInput?.buttonTitle ?? "" }
    /// The placeholder shown in the empty reply field.
    open var textInputPlaceholder: String { value.textInput?.placeholder ?? "" }
}
