public import Foundation
package import NotificationCore

/// The fields of a notification's content, as the public API presents them.
struct ContentFields {
    var title = ""
    var subtitle = ""
    var body = ""
    var attachments: [UNNotificationAttachment] = []
    var badge: NSNumber? = nil
    var sound: UNNotificationSound? = nil
    var launchImageName = ""
    var userInfo: [AnyHashable: Any] = [:]
    var categoryIdentifier = ""
    var threadIdentifier = ""
    var summaryArgument = ""
    var summaryArgumentCount = 1
    var targetContentIdentifier: String? = nil
    var interruptionLevel: UNNotificationInterruptionLevel = .active
    var relevanceScore: Double = 0
    var filterCriteria: String? = nil
}

/// What a notification shows: its text, sound, badge, attachments and data.
///
/// Read it from delivered notifications and pending requests. To make content for a request, create a
/// ``UNMutableNotificationContent``; `mutableCopy()` turns any content into an editable copy:
///
/// ```swift
/// let content = request.content.mutableCopy() as! UNMutableNotificationContent
/// content.body += " (edited)"
/// ```
open class UNNotificationContent: NSObject, NSCopying, NSMutableCopying, NSSecureCoding, @unchecked Sendable {
    // Sendable: every field lives behind `fields`' lock, so the mutable subclass can be shared too.
    let fields: LockedValue<ContentFields>

    /// Creates empty content. Apple asks apps to create ``UNMutableNotificationContent`` instead.
    public override init() {
        fields = LockedValue(ContentFields())
        super.init()
    }

    init(fields: ContentFields) {
        self.fields = LockedValue(fields)
        super.init()
    }

    /// The title.
    open var title: String { fields.withLock { $0.title } }
    /// The subtitle.
    open var subtitle: String { fields.withLock { $0.subtitle } }
    /// The body text.
    open var body: String { fields.withLock { $0.body } }
    /// Images, sounds or movies shown with the notification.
    open var attachments: [UNNotificationAttachment] { fields.withLock { $0.attachments } }
    /// The badge to show on the app: `nil` leaves it unchanged, 0 removes it.
    open var badge: NSNumber? { fields.withLock { $0.badge } }
    /// The sound to play, or `nil` for none.
    open var sound: UNNotificationSound? { fields.withLock { $0.sound } }
    /// The launch image to show when the notification opens the app.
    open var launchImageName: String { fields.withLock { $0.launchImageName } }
    /// The app's own data; keys and values must be property-list types.
    open var userInfo: [AnyHashable: Any] { fields.withLock { $0.userInfo } }
    /// The registered category whose actions the notification shows.
    open var categoryIdentifier: String { fields.withLock { $0.categoryIdentifier } }
    /// Groups related notifications together.
    open var threadIdentifier: String { fields.withLock { $0.threadIdentifier } }
    /// Ignored since iOS 15; kept for source compatibility.
    @available(*, deprecated, message: "This property is ignored.")
    open var summaryArgument: String { fields.withLock { $0.summaryArgument } }
    /// Ignored since iOS 15; kept for source compatibility.
    @available(*, deprecated, message: "This property is ignored.")
    open var summaryArgumentCount: Int { fields.withLock { $0.summaryArgumentCount } }
    /// Which scene or window the notification opens.
    open var targetContentIdentifier: String? { fields.withLock { $0.targetContentIdentifier } }
    /// How strongly the notification interrupts.
    open var interruptionLevel: UNNotificationInterruptionLevel { fields.withLock { $0.interruptionLevel } }
    /// How relevant the notification is among the app's, from 0 to 1, for summaries.
    open var relevanceScore: Double { fields.withLock { $0.relevanceScore } }
    /// The Focus filter criteria the notification matches.
    open var filterCriteria: String? { fields.withLock { $0.filterCriteria } }

    /// Returns this content updated by a content provider, such as a communication intent.
    ///
    /// - Throws: `UNError.contentProvidingObjectNotAllowed`: no provider type is supported yet on this
    ///   platform (SiriKit intents do not exist here); see COMPATIBILITY.md.
    open func updating(from provider: any UNNotificationContentProviding) throws -> UNNotificationContent {
        throw UNError(NotificationFailure(.contentProvidingObjectNotAllowed, detail: "\(type(of: provider)) cannot provide content here."))
    }

    /// Archives of this class can be read back safely.
    public class var supportsSecureCoding: Bool { true }

    /// Archives the content.
    open func encode(with coder: NSCoder) {
        if let value = coreValue { SecureCoding.encode(value, with: coder) }
    }

    /// Reads an archived content; `nil` when the archive is not one.
    public required convenience init?(coder: NSCoder) {
        guard let value = SecureCoding.decode(NotificationContent.self, from: coder) else { return nil }
        self.init(value)
    }

    /// An immutable copy.
    open func copy(with zone: NSZone? = nil) -> Any {
        UNNotificationContent(fields: fields.withLock { $0 })
    }

    /// An editable copy.
    open func mutableCopy(with zone: NSZone? = nil) -> Any {
        UNMutableNotificationContent(fields: fields.withLock { $0 })
    }

    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? UNNotificationContent else { return false }
        return other === self || other.coreValue == coreValue
    }

    open override var hash: Int { coreValue?.hashValue ?? title.hashValue }

    /// The content as the system keeps it, or `nil` when `userInfo` holds something that is not a
    /// property-list type.
    package var coreValue: NotificationContent? {
        let fields = fields.withLock { $0 }
        guard let userInfo = PropertyListValue.dictionary(from: fields.userInfo) else { return nil }
        var content = NotificationContent()
        content.title = fields.title
        content.subtitle = fields.subtitle
        content.body = fields.body
        content.attachments = fields.attachments.map(\.value)
        content.badge = fields.badge?.intValue
        content.sound = fields.sound?.value
        content.launchImageName = fields.launchImageName
        content.userInfo = userInfo
        content.categoryIdentifier = fields.categoryIdentifier
        content.threadIdentifier = fields.threadIdentifier
        content.summaryArgument = fields.summaryArgument
        content.summaryArgumentCount = fields.summaryArgumentCount
        content.targetContentIdentifier = fields.targetContentIdentifier
        content.interruptionLevel = InterruptionLevel(rawValue: fields.interruptionLevel.rawValue)!
        content.relevanceScore = fields.relevanceScore
        content.filterCriteria = fields.filterCriteria
        return content
    }

    package convenience init(_ content: NotificationContent) {
        var fields = ContentFields()
        fields.title = content.title
        fields.subtitle = content.subtitle
        fields.body = content.body
        fields.attachments = content.attachments.map { UNNotificationAttachment(value: $0) }
        fields.badge = content.badge.map { NSNumber(value: $0) }
        fields.sound = content.sound.map { UNNotificationSound(value: $0) }
        fields.launchImageName = content.launchImageName
        fields.userInfo = PropertyListValue.userInfo(from: content.userInfo)
        fields.categoryIdentifier = content.categoryIdentifier
        fields.threadIdentifier = content.threadIdentifier
        fields.summaryArgument = content.summaryArgument
        fields.summaryArgumentCount = content.summaryArgumentCount
        fields.targetContentIdentifier = content.targetContentIdentifier
        fields.interruptionLevel = UNNotificationInterruptionLevel(rawValue: content.interruptionLevel.rawValue)!
        fields.relevanceScore = content.relevanceScore
        fields.filterCriteria = content.filterCriteria
        self.init(fields: fields)
    }
}

/// Editable notification content, for the requests an app schedules.
///
/// ```swift
/// let content = UNMutableNotificationContent()
/// content.title = "Daily reminder"
/// content.body = "Write the report!"
/// content.sound = .default
/// content.categoryIdentifier = "TODO_CATEGORY"
/// ```
open class UNMutableNotificationContent: UNNotificationContent, @unchecked Sendable {
    // Sendable: every field lives behind the inherited lock.
    public override init() { super.init() }

    override init(fields: ContentFields) { super.init(fields: fields) }

    open override var title: String {
        get { super.title }
        set { fields.withLock { $0.title = newValue } }
    }
    open override var subtitle: String {
        get { super.subtitle }
        set { fields.withLock { $0.subtitle = newValue } }
    }
    open override var body: String {
        get { super.body }
        set { fields.withLock { $0.body = newValue } }
    }
    open override var attachments: [UNNotificationAttachment] {
        get { super.attachments }
        set { fields.withLock { $0.attachments = newValue } }
    }
    open override var badge: NSNumber? {
        get { super.badge }
        set { fields.withLock { $0.badge = newValue } }
    }
    open override var sound: UNNotificationSound? {
        get { super.sound }
        set { fields.withLock { $0.sound = newValue } }
    }
    open override var launchImageName: String {
        get { super.launchImageName }
        set { fields.withLock { $0.launchImageName = newValue } }
    }
    open override var userInfo: [AnyHashable: Any] {
        get { super.userInfo }
        set { fields.withLock { $0.userInfo = newValue } }
    }
    open override var categoryIdentifier: String {
        get { super.categoryIdentifier }
        set { fields.withLock { $0.categoryIdentifier = newValue } }
    }
    open override var threadIdentifier: String {
        get { super.threadIdentifier }
        set { fields.withLock { $0.threadIdentifier = newValue } }
    }
    @available(*, deprecated, message: "This property is ignored.")
    open override var summaryArgument: String {
        get { fields.withLock { $0.summaryArgument } }
        set { fields.withLock { $0.summaryArgument = newValue } }
    }
    @available(*, deprecated, message: "This property is ignored.")
    open override var summaryArgumentCount: Int {
        get { fields.withLock { $0.summaryArgumentCount } }
        set { fields.withLock { $0.summaryArgumentCount = newValue } }
    }
    open override var targetContentIdentifier: String? {
        get { super.targetContentIdentifier }
        set { fields.withLock { $0.targetContentIdentifier = newValue } }
    }
    open override var interruptionLevel: UNNotificationInterruptionLevel {
        get { super.interruptionLevel }
        set { fields.withLock { $0.interruptionLevel = newValue } }
    }
    open override var relevanceScore: Double {
        get { super.relevanceScore }
        set { fields.withLock { $0.relevanceScore = newValue } }
    }
    open override var filterCriteria: String? {
        get { super.filterCriteria }
        set { fields.withLock { $0.filterCriteria = newValue } }
    }
}

/// An object that can provide notification content, such as a communication intent.
public protocol UNNotificationContentProviding: NSObjectProtocol {}

extension NSString {
    /// A localized string for a notification, looked up in the main bundle's strings and formatted with
    /// `arguments`.
    ///
    /// Apple defers the lookup until the notification is shown; here it happens at once.
    public class func localizedUserNotificationString(forKey key: String, arguments: [Any]?) -> String {
        let format = Bundle.main.localizedString(forKey: key, value: key, table: nil)
        guard let arguments, !arguments.isEmpty else { return format }
        return String(format: format, arguments: arguments.map { ($0 as? any CVarArg) ?? String(describing: $0) })
    }
}
