package import NotificationCore

/// The device-wide facts a trigger needs to compute its next date: the time, calendar and time zone.
package struct NotificationEnvironment: Sendable {
    package var now: Date
    package var calendar: Calendar
    package var timeZone: TimeZone

    package init(now: Date, calendar: Calendar, timeZone: TimeZone) {
        self.now = now
        self.calendar = calendar
        self.timeZone = timeZone
    }

    /// The environment of the notification system in scope: the one bound to the current task, else
    /// the process's own.
    package static var current: NotificationEnvironment {
        UNUserNotificationCenter.current().backend.environment
    }
}

/// The system behind `UNUserNotificationCenter`: where requests are kept, triggers fire and the person
/// sees notifications.
///
/// There are two: the in-process system (tests, single-process apps), and the notification daemon. The
/// framework's behaviour is the same with either. Completions may run on any thread.
package protocol NotificationBackend: AnyObject, Sendable {
    /// The time, calendar and time zone the backend schedules with.
    var environment: NotificationEnvironment { get }
    /// Connects the center whose delegate receives this backend's callbacks.
    func attach(_ center: UNUserNotificationCenter)
    func requestAuthorization(options: AuthorizationOptions, completion: @escaping @Sendable (Bool) -> Void)
    func setCategories(_ categories: [NotificationCategory])
    func categories(completion: @escaping @Sendable ([NotificationCategory]) -> Void)
    func settings(completion: @escaping @Sendable (NotificationSettings) -> Void)
    func add(_ request: NotificationRequest, completion: @escaping @Sendable (NotificationFailure?) -> Void)
    func pendingRequests(completion: @escaping @Sendable ([LocalAPI.PendingRequest]) -> Void)
    /// Removes the pending requests with these identifiers, or all of them for `nil`.
    func removePendingRequests(_ identifiers: [String]?)
    func deliveredNotifications(completion: @escaping @Sendable ([DeliveredNotification]) -> Void)
    /// Removes the delivered notifications with these identifiers, or all of them for `nil`.
    func removeDeliveredNotifications(_ identifiers: [String]?)
    func setBadgeCount(_ count: Int, completion: @escaping @Sendable (NotificationFailure?) -> Void)
    /// The app set (or cleared) its center's delegate.
    func delegateDidChange()
    /// The app's device token for remote notifications, as lower-case hexadecimal; the same one until
    /// the app unregisters.
    func registerForRemoteNotifications(completion: @escaping @Sendable (Result<String, RemoteRegistrationFailure>) -> Void)
    /// Ends the app's device tokens: providers pushing to them get `410 Unregistered`.
    func unregisterForRemoteNotifications(completion: @escaping @Sendable (RemoteRegistrationFailure?) -> Void)
    /// Subscribes the app to one of its broadcast channels (or, with `subscribed` false, ends the
    /// subscription): what its provider sends to the channel reaches it from then on.
    func setSubscribed(_ subscribed: Bool, toChannel channelID: String, completion: @escaping @Sendable (RemoteRegistrationFailure?) -> Void)
    /// Whether the app is in the foreground or the background, as the system knows it.
    var appState: AppState { get }
    /// The app's badge as last known: at once after the app sets it, and whenever the system changes it.
    var badgeCount: Int { get }
    /// Whether something on the device shows content extensions.
    var supportsContentExtensions: Bool { get }
}

extension NotificationBackend {
    package func delegateDidChange() {}
    package var supportsContentExtensions: Bool { false }
}
