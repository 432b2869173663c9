#if !canImport(UIKit)
public import Foundation
internal import NotificationCore
public import OpenUserNotifications

/// The sound name that plays the system's default sound.
@available(*, deprecated, message: "Use UserNotifications Framework's +[UNNotificationSound defaultSound]")
public let UILocalNotificationDefaultSoundName = "UILocalNotificationDefaultSoundName"

/// A notification the app schedules itself, as iOS 8 declares it: what to show and when (a date, a
/// repeat interval, or a region).
///
/// Scheduled with `UIApplication.scheduleLocalNotification(_:)`, it becomes a `UNNotificationRequest`
/// with the matching trigger: a calendar trigger on the date's wall-clock time in `timeZone`, or in GMT
/// for a date with no time zone (an absolute time, as iOS reads it), repeating on the components
/// `repeatInterval` keeps; or a location trigger for `region`.
@available(*, deprecated, message: "Use UserNotifications Framework's UNNotificationRequest")
open class UILocalNotification: NSObject, NSCopying, @unchecked Sendable {
    // Sendable: every field lives behind `fields`' lock.
    struct Fields {
        /// The request's identifier: one per notification, kept by its copies.
        var requestIdentifier = UUID().uuidString
        var fireDate: Date?
        var timeZone: TimeZone?
        var repeatInterval: NSCalendar.Unit = []
        var repeatCalendar: Calendar?
        var region: CLRegion?
        var regionTriggersOnce = true
        var alertBody: String?
        var hasAction = true
        var alertAction: String?
        var alertLaunchImage: String?
        var alertTitle: String?
        var soundName: String?
        var applicationIconBadgeNumber = 0
        var userInfo: [AnyHashable: Any]?
        var category: String?
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

    /// When it fires; nil with no region: at once.
    open var fireDate: Date? {
        get { fields.withLock { $0.fireDate } }
        set { fields.withLock { $0.fireDate = newValue } }
    }
    /// The time zone `fireDate` is read in as a wall-clock time; nil for an absolute time, unaffected
    /// by time-zone changes.
    open var timeZone: TimeZone? {
        get { fields.withLock { $0.timeZone } }
        set { fields.withLock { $0.timeZone = newValue } }
    }
    /// How often it repeats: `.minute`, `.hour`, `.day`, `.weekday`, `.weekOfYear`, `.month`, `.year`
    /// or `.era`; empty for once.
    open var repeatInterval: NSCalendar.Unit {
        get { fields.withLock { $0.repeatInterval } }
        set { fields.withLock { $0.repeatInterval = newValue } }
    }
    /// The calendar the repeat interval counts in; nil for the current calendar.
    open var repeatCalendar: Calendar? {
        get { fields.withLock { $0.repeatCalendar } }
        set { fields.withLock { $0.repeatCalendar = newValue } }
    }
    /// A region whose crossing fires it, instead of a date.
    open var region: CLRegion? {
        get { fields.withLock { $0.region } }
        set { fields.withLock { $0.region = newValue } }
    }
    /// Whether the region fires it once only (the default), or at every crossing.
    open var regionTriggersOnce: Bool {
        get { fields.withLock { $0.regionTriggersOnce } }
        set { fields.withLock { $0.regionTriggersOnce = newValue } }
    }
    /// The text shown.
    open var alertBody: String? {
        get { fields.withLock { $0.alertBody } }
        set { fields.withLock { $0.alertBody = newValue } }
    }
    /// Whether the alert has an action button and the lock screen a slider to open the app.
    open var hasAction: Bool {
        get { fields.withLock { $0.hasAction } }
        set { fields.withLock { $0.hasAction = newValue } }
    }
    /// The title of that button or slider ("View" unless given).
    open var alertAction: String? {
        get { fields.withLock { $0.alertAction } }
        set { fields.withLock { $0.alertAction = newValue } }
    }
    /// The launch image shown when the app opens from it.
    open var alertLaunchImage: String? {
        get { fields.withLock { $0.alertLaunchImage } }
        set { fields.withLock { $0.alertLaunchImage = newValue } }
    }
    /// A short title above the text (iOS 8.2).
    open var alertTitle: String? {
        get { fields.withLock { $0.alertTitle } }
        set { fields.withLock { $0.alertTitle = newValue } }
    }
    /// A sound file's name, or `UILocalNotificationDefaultSoundName`; nil for no sound.
    open var soundName: String? {
        get { fields.withLock { $0.soundName } }
        set { fields.withLock { $0.soundName = newValue } }
    }
    /// The badge the app's icon shows when it fires; 0 leaves the badge alone.
    open var applicationIconBadgeNumber: Int {
        get { fields.withLock { $0.applicationIconBadgeNumber } }
        set { fields.withLock { $0.applicationIconBadgeNumber = newValue } }
    }
    /// The app's own information, handed back with it.
    open var userInfo: [AnyHashable: Any]? {
        get { fields.withLock { $0.userInfo } }
        set { fields.withLock { $0.userInfo = newValue } }
    }
    /// The identifier of the category whose actions it shows (iOS 8).
    open var category: String? {
        get { fields.withLock { $0.category } }
        set { fields.withLock { $0.category = newValue } }
    }

    open func copy(with zone: NSZone? = nil) -> Any {
        UILocalNotification(fields: fields.withLock { $0 })
    }

    /// A notification and its copies are the same notification: cancelling one cancels it.
    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? UILocalNotification else { return false }
        return requestIdentifier == other.requestIdentifier
    }

    open override var hash: Int { requestIdentifier.hashValue }

    var requestIdentifier: String { fields.withLock { $0.requestIdentifier } }
}

// MARK: - Mapped onto UserNotifications

@available(*, deprecated, message: "The mapping of iOS 8's API onto UserNotifications")
extension UILocalNotification {
    /// The request it becomes; `immediately` leaves the trigger out (`presentLocalNotificationNow`).
    func request(immediately: Bool = false) -> UNNotificationRequest {
        let fields = self.fields.withLock { $0 }
        let content = UNMutableNotificationContent()
        content.title = fields.alertTitle ?? ""
        content.body = fields.alertBody ?? ""
        content.launchImageName = fields.alertLaunchImage ?? ""
        content.categoryIdentifier = fields.category ?? ""
        if fields.applicationIconBadgeNumber != 0 { content.badge = NSNumber(value: fields.applicationIconBadgeNumber) }
        if let sound = fields.soundName {
            content.sound = sound == UILocalNotificationDefaultSoundName ? .default : UNNotificationSound(named: UNNotificationSoundName(sound))
        }
        content.userInfo = fields.userInfo ?? [:]
        return UNNotificationRequest(identifier: fields.requestIdentifier, content: content, trigger: immediately ? nil : Self.trigger(fields))
    }

    /// The zone a date with no time zone is read in: GMT, an absolute time that no change of the
    /// device's time zone moves.
    static let absoluteTime = TimeZone(identifier: "GMT")!

    /// The trigger of its date, repeat interval or region; nil to deliver at once. The date's components
    /// carry their time zone (GMT for none), so that the trigger keeps the meaning iOS gives it: a
    /// wall-clock time in that zone, or an absolute time.
    static func trigger(_ fields: Fields) -> UNNotificationTrigger? {
        if let region = fields.region {
            return UNLocationNotificationTrigger(region: region, repeats: !fields.regionTriggersOnce)
        }
        guard let fireDate = fields.fireDate else { return nil }
        var calendar = fields.repeatCalendar ?? Calendar(identifier: .gregorian)
        calendar.timeZone = fields.timeZone ?? absoluteTime
        let kept: Set<Calendar.Component>
        switch fields.repeatInterval {
        case []: kept = [.year, .month, .day, .hour, .minute, .second]
        case .minute: kept = [.second]
        case .hour: kept = [.minute, .second]
        case .day: kept = [.hour, .minute, .second]
        case .weekday, .weekOfYear, .weekOfMonth: kept = [.weekday, .hour, .minute, .second]
        case .month: kept = [.day, .hour, .minute, .second]
        case .year, .era: kept = [.month, .day, .hour, .minute, .second]
        default: kept = [.hour, .minute, .second]
        }
        var components = calendar.dateComponents(kept, from: fireDate)
        components.timeZone = calendar.timeZone
        return UNCalendarNotificationTrigger(dateMatching: components, repeats: !fields.repeatInterval.isEmpty)
    }

    /// The local notification a pending request stands for, as `scheduledLocalNotifications` lists it.
    convenience init(_ request: UNNotificationRequest, scheduled: Date?) {
        var fields = Fields()
        fields.requestIdentifier = request.identifier
        let content = request.content
        fields.alertTitle = content.title.isEmpty ? nil : content.title
        fields.alertBody = content.body.isEmpty ? nil : content.body
        fields.alertLaunchImage = content.launchImageName.isEmpty ? nil : content.launchImageName
        fields.category = content.categoryIdentifier.isEmpty ? nil : content.categoryIdentifier
        fields.applicationIconBadgeNumber = content.badge?.intValue ?? 0
        fields.userInfo = content.userInfo.isEmpty ? nil : content.userInfo
        if let sound = content.sound {
            fields.soundName = sound.soundName ?? UILocalNotificationDefaultSoundName
        }
        switch request.trigger {
        case let location as UNLocationNotificationTrigger:
            fields.region = location.region
            fields.regionTriggersOnce = !location.repeats
        case let calendar as UNCalendarNotificationTrigger:
            fields.fireDate = scheduled ?? calendar.nextTriggerDate()
            fields.timeZone = calendar.dateComponents.timeZone == Self.absoluteTime ? nil : calendar.dateComponents.timeZone
            if calendar.repeats { fields.repeatInterval = Self.repeatInterval(of: calendar.dateComponents) }
        case let interval as UNTimeIntervalNotificationTrigger:
            fields.fireDate = scheduled ?? interval.nextTriggerDate()
        default:
            break
        }
        self.init(fields: fields)
    }

    /// The interval a repeating calendar trigger's components stand for.
    private static func repeatInterval(of components: DateComponents) -> NSCalendar.Unit {
        if components.month != nil { return .year }
        if components.day != nil { return .month }
        if components.weekday != nil { return .weekOfYear }
        if components.hour != nil { return .day }
        if components.minute != nil { return .hour }
        return .minute
    }
}

extension UNNotificationSound {
    /// The file name the sound was made with (`UNNotificationSound(named:)`); nil for the system's.
    var soundName: String? {
        switch value.kind {
        case .named(let name), .ringtone(let name): name
        case .default, .defaultRingtone: nil
        }
    }
}
#endif
