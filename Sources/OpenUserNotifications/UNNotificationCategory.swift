public import Foundation
internal import NotificationCore

/// How notifications of a category behave.
public struct UNNotificationCategoryOptions: OptionSet, Sendable, Hashable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// Report dismissals to the delegate with `UNNotificationDismissActionIdentifier`.
    public static let customDismissAction = UNNotificationCategoryOptions(rawValue: 1 << 0)
    /// Show the category's notifications in CarPlay.
    public static let allowInCarPlay = UNNotificationCategoryOptions(rawValue: 1 << 1)
    /// Show the title when previews are hidden.
    public static let hiddenPreviewsShowTitle = UNNotificationCategoryOptions(rawValue: 1 << 2)
    /// Show the subtitle when previews are hidden.
    public static let hiddenPreviewsShowSubtitle = UNNotificationCategoryOptions(rawValue: 1 << 3)
    /// Let Siri announce the category's notifications.
    public static let allowAnnouncement = UNNotificationCategoryOptions(rawValue: 1 << 4)
}

/// A kind of notification the app declares, with the actions its notifications show.
///
/// Register every category at once with `setNotificationCategories(_:)`; a request names its category
/// in `content.categoryIdentifier`.
///
/// ```swift
/// let category = UNNotificationCategory(identifier: "TODO_CATEGORY", actions: [done, reply],
///                                       intentIdentifiers: [], options: [.customDismissAction])
/// UNUserNotificationCenter.current().setNotificationCategories([category])
/// ```
open class UNNotificationCategory: NSObject, NSCopying, NSSecureCoding, @unchecked Sendable {
    // Sendable: every stored property is an immutable value.
    let value: NotificationCategory

    init(value: NotificationCategory) {
        self.value = value
        super.init()
    }

    /// A category with its actions; `identifier` must be unique among the app's categories.
    public convenience init(
        identifier: String,
        actions: [UNNotificationAction],
        intentIdentifiers: [String],
        options: UNNotificationCategoryOptions = []
    ) {
        self.init(identifier: identifier, actions: actions, intentIdentifiers: intentIdentifiers,
                  hiddenPreviewsBodyPlaceholder: nil, categorySummaryFormat: nil, options: options)
    }

    /// A category with a placeholder body shown when previews are hidden.
    public convenience init(
        identifier: String,
        actions: [UNNotificationAction],
        intentIdentifiers: [String],
        hiddenPreviewsBodyPlaceholder: String,
        options: UNNotificationCategoryOptions = []
    ) {
        self.init(identifier: identifier, actions: actions, intentIdentifiers: intentIdentifiers,
                  hiddenPreviewsBodyPlaceholder: hiddenPreviewsBodyPlaceholder, categorySummaryFormat: nil, options: options)
    }

    /// A category with a hidden-previews placeholder and a summary format such as "%u new messages".
    public convenience init(
        identifier: String,
        actions: [UNNotificationAction],
        intentIdentifiers: [String],
        hiddenPreviewsBodyPlaceholder: String?,
        categorySummaryFormat: String?,
        options: UNNotificationCategoryOptions = []
    ) {
        self.init(value: NotificationCategory(
            identifier: identifier,
            actions: actions.map(\.value),
            intentIdentifiers: intentIdentifiers,
            hiddenPreviewsBodyPlaceholder: hiddenPreviewsBodyPlaceholder ?? "",
            categorySummaryFormat: categorySummaryFormat ?? "",
            options: CategoryOptions(rawValue: options.rawValue)
        ))
    }

    /// The category's identifier.
    open var identifier: String { value.identifier }
    /// The actions, in the order they are shown.
    open var actions: [UNNotificationAction] { value.actions.map(UNNotificationAction.make) }
    /// The SiriKit intents the category relates to.
    open var intentIdentifiers: [String] { value.intentIdentifiers }
    /// How the category's notifications behave.
    open var options: UNNotificationCategoryOptions { UNNotificationCategoryOptions(rawValue: value.options.rawValue) }
    /// The body shown when previews are hidden; `%u` stands for the number of notifications in the thread.
    open var hiddenPreviewsBodyPlaceholder: String { value.hiddenPreviewsBodyPlaceholder }
    /// The format of the category's summary, such as "%u new messages from %@".
    open var categorySummaryFormat: String { value.categorySummaryFormat }

    /// Archives of this class can be read back safely.
    public class var supportsSecureCoding: Bool { true }

    /// Archives the category.
    open func encode(with coder: NSCoder) {
        SecureCoding.encode(value, with: coder)
    }

    /// Reads an archived category; `nil` when the archive is not one.
    public required convenience init?(coder: NSCoder) {
        guard let value = SecureCoding.decode(NotificationCategory.self, from: coder) else { return nil }
        self.init(value: value)
    }

    open func copy(with zone: NSZone? = nil) -> Any { self }

    open override func isEqual(_ object: Any?) -> Bool { (object as? UNNotificationCategory)?.value == value }

    open override var hash: Int { value.hashValue }
}
