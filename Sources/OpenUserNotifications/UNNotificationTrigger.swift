public import Foundation
package import NotificationCore

/// What makes a notification request fire. Use one of the concrete subclasses.
open class UNNotificationTrigger: NSObject, NSCopying, NSSecureCoding, @unchecked Sendable {
    // Sendable: every stored property is an immutable value.
    package let value: NotificationTrigger
    /// When the system has this trigger scheduled, the date it will fire; `nil` before it is scheduled.
    let scheduledFireDate: Date?

    init(value: NotificationTrigger, scheduledFireDate: Date? = nil) {
        self.value = value
        self.scheduledFireDate = scheduledFireDate
        super.init()
    }

    /// Whether the trigger fires again after it fired.
    open var repeats: Bool { value.repeats }

    /// Archives of this class can be read back safely.
    public class var supportsSecureCoding: Bool { true }

    /// Archives the trigger.
    open func encode(with coder: NSCoder) {
        SecureCoding.encode(value, with: coder)
    }

    /// Reads an archived trigger; `nil` when the archive is not one.
    public required convenience init?(coder: NSCoder) {
        guard let value = SecureCoding.decode(NotificationTrigger.self, from: coder) else { return nil }
        self.init(value: value)
    }

    open func copy(with zone: NSZone? = nil) -> Any { self }

    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? UNNotificationTrigger else { return false }
        return type(of: other) == type(of: self) && other.value == value
    }

    open override var hash: Int { value.hashValue }

    /// The matching public trigger for a stored one.
    static func make(_ value: NotificationTrigger, scheduledFireDate: Date? = nil) -> UNNotificationTrigger {
        switch value {
        case .timeInterval: UNTimeIntervalNotificationTrigger(value: value, scheduledFireDate: scheduledFireDate)
        case .calendar: UNCalendarNotificationTrigger(value: value, scheduledFireDate: scheduledFireDate)
        case .location: UNLocationNotificationTrigger(value: value, scheduledFireDate: scheduledFireDate)
        case .push: UNPushNotificationTrigger(value: value, scheduledFireDate: scheduledFireDate)
        }
    }
}

/// The trigger of a notification sent through the push service. Apps never create one.
open class UNPushNotificationTrigger: UNNotificationTrigger, @unchecked Sendable {
    // Sendable: inherits only immutable state.
}

/// Fires after a number of seconds, once or repeatedly.
///
/// ```swift
/// let trigger = UNTimeIntervalNotificationTrigger(timeInterval: 5, repeats: false)
/// ```
open class UNTimeIntervalNotificationTrigger: UNNotificationTrigger, @unchecked Sendable {
    // Sendable: inherits only immutable state.

    /// A trigger that fires `timeInterval` seconds after the request is added.
    ///
    /// - Precondition: `timeInterval` is greater than 0, and at least 60 when `repeats` is true. As with
    ///   Apple's framework, breaking this stops the program.
    public convenience init(timeInterval: TimeInterval, repeats: Bool) {
        if let violation = TriggerRules.validateTimeInterval(timeInterval, repeats: repeats) {
            preconditionFailure("UNTimeIntervalNotificationTrigger: \(violation)")
        }
        self.init(value: .timeInterval(timeInterval, repeats: repeats))
    }

    /// The interval given at creation; it does not count down.
    open var timeInterval: TimeInterval {
        guard case .timeInterval(let interval, _) = value else { return 0 }
        return interval
    }

    /// When the trigger fires next: its scheduled date once the request is pending, else the interval
    /// from now.
    open func nextTriggerDate() -> Date? {
        scheduledFireDate ?? NotificationEnvironment.current.now.addingTimeInterval(timeInterval)
    }
}

/// Fires when the date and time match the given components, once or every time they match.
///
/// ```swift
/// var components = DateComponents()
/// components.hour = 8
/// let everyMorning = UNCalendarNotificationTrigger(dateMatching: components, repeats: true)
/// ```
open class UNCalendarNotificationTrigger: UNNotificationTrigger, @unchecked Sendable {
    // Sendable: inherits only immutable state.

    /// A trigger that fires at the next date matching `dateComponents`, in their calendar and time zone
    /// when they name one and in the device's otherwise.
    public convenience init(dateMatching dateComponents: DateComponents, repeats: Bool) {
        self.init(value: .calendar(dateComponents, repeats: repeats))
    }

    /// The components the trigger matches.
    open var dateComponents: DateComponents {
        guard case .calendar(let components, _) = value else { return DateComponents() }
        return components
    }

    /// The next date matching the components, or `nil` if none ever does.
    open func nextTriggerDate() -> Date? {
        if let scheduledFireDate { return scheduledFireDate }
        let environment = NotificationEnvironment.current
        return TriggerRules.nextDate(
            matching: dateComponents,
            after: environment.now,
            calendar: environment.calendar,
            timeZone: environment.timeZone
        )
    }
}

/// Fires when the device enters or leaves a region.
open class UNLocationNotificationTrigger: UNNotificationTrigger, @unchecked Sendable {
    // Sendable: inherits only immutable state.

    /// A trigger for `region`: set its `notifyOnEntry` and `notifyOnExit` to choose the crossings.
    ///
    /// - Precondition: `region` is a `CLCircularRegion`: the only kind of region this platform provides.
    public convenience init(region: CLRegion, repeats: Bool) {
        guard let circle = region as? CLCircularRegion else {
            preconditionFailure("UNLocationNotificationTrigger: only CLCircularRegion is supported here")
        }
        let value = CircularRegion(
            identifier: circle.identifier,
            center: Coordinate(latitude: circle.center.latitude, longitude: circle.center.longitude),
            radius: circle.radius,
            notifyOnEntry: circle.notifyOnEntry,
            notifyOnExit: circle.notifyOnExit
        )
        self.init(value: .location(value, repeats: repeats))
    }

    /// The region the trigger watches.
    open var region: CLRegion {
        guard case .location(let value, _) = value else { preconditionFailure("not a location trigger") }
        let region = CLCircularRegion(
            center: CLLocationCoordinate2D(latitude: value.center.latitude, longitude: value.center.longitude),
            radius: value.radius,
            identifier: value.identifier
        )
        region.notifyOnEntry = value.notifyOnEntry
        region.notifyOnExit = value.notifyOnExit
        return region
    }
}
