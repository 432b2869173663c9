public import Foundation
internal import NotificationCore

/// The app's connection to the notification system: ask for authorization, declare categories,
/// schedule, list and remove notifications, and receive what the person does through the delegate.
///
/// Get it with ``current()``; never create one. It is safe to use from any thread, and it handles
/// calls in the order they are made. Completion handlers and delegate methods run on the notification
/// system's own serial queue, one at a time, as on Apple's platforms; hop to your own actor from there.
///
/// ```swift
/// let center = UNUserNotificationCenter.current()
/// center.delegate = self
/// if try await center.requestAuthorization(options: [.alert, .sound, .badge]) {
///     let content = UNMutableNotificationContent()
///     content.title = "Hello"
///     let trigger = UNTimeIntervalNotificationTrigger(timeInterval: 5, repeats: false)
///     try await center.add(UNNotificationRequest(identifier: "hello", content: content, trigger: trigger))
/// }
/// ```
///
/// Which system answers is chosen per task: inside a test harness of `OpenUserNotificationsTesting`, the
/// harness's; otherwise the process's own in-process system.
open class UNUserNotificationCenter: NSObject, @unchecked Sendable {
    // Sendable: `backend` is immutable and Sendable; the delegate reference lives behind a lock.
    package let backend: any NotificationBackend
    private let delegateBox = LockedValue(WeakDelegate())

    package init(backend: any NotificationBackend) {
        self.backend = backend
        super.init()
        backend.attach(self)
    }

    /// Binds a center to the tasks that run inside ``withCenter(_:operation:)``.
    @TaskLocal package static var bound: UNUserNotificationCenter?

    /// Runs `body` synchronously with `center` as what ``current()`` returns: for callbacks on a system's queue.
    package static func withBound<T>(_ center: UNUserNotificationCenter, _ body: () throws -> T) rethrows -> T {
        try $bound.withValue(center, operation: body)
    }

    /// Runs `operation` with `center` as what ``current()`` returns, in this task and the tasks it creates.
    package static func withCenter<T>(_ center: UNUserNotificationCenter, operation: () async throws -> T) async rethrows -> T {
        try await $bound.withValue(center, operation: operation)
    }

    /// The center `current()` returns outside any binding; `nil` for the process's in-process system.
    private static let processCenter = LockedValue<UNUserNotificationCenter?>(nil)

    /// Makes `center` what `current()` returns in this process, outside harnesses and other bindings;
    /// `nil` goes back to the process's in-process system. Used to connect to the notification daemon.
    package static func setProcessCenter(_ center: UNUserNotificationCenter?) {
        processCenter.withLock { $0 = center }
    }

    /// The app's notification center.
    open class func current() -> UNUserNotificationCenter {
        bound ?? processCenter.withLock { $0 } ?? InProcessNotificationSystem.processDefault.center
    }

    /// The object that decides foreground presentation and receives responses. Held weakly.
    open weak var delegate: (any UNUserNotificationCenterDelegate)? {
        get { delegateBox.withLock { $0.value } }
        set {
            delegateBox.withLock { $0.value = newValue }
            backend.delegateDidChange()
        }
    }

    /// The delegate that stands in when the app set none: UIKit's part puts the iOS 8 app-delegate
    /// methods here (`UIApplicationDelegate`'s `handleActionWithIdentifier` and `didReceive`) once the
    /// app registers with `registerUserNotificationSettings`, as iOS calls them when the app has no
    /// `UNUserNotificationCenterDelegate`. Held strongly: it is the app object's.
    private let standIn = LockedValue<(any UNUserNotificationCenterDelegate)?>(nil)

    /// Installs (or, with `nil`, removes) the stand-in delegate, and hands it what waited for a delegate.
    package func setStandInDelegate(_ delegate: (any UNUserNotificationCenterDelegate)?) {
        standIn.withLock { $0 = delegate }
        backend.delegateDidChange()
    }

    /// The delegate the system calls: the app's, else the stand-in.
    package var effectiveDelegate: (any UNUserNotificationCenterDelegate)? {
        delegate ?? standIn.withLock { $0 }
    }

    /// Whether the device shows content extensions: `true` when the app is linked to a notification
    /// daemon whose web notification center runs (`unotify serve`), which shows them.
    open var supportsContentExtensions: Bool { backend.supportsContentExtensions }

    // MARK: Authorization

    /// Asks the person to allow notifications, the first time only; later calls return the stored
    /// answer. With `.provisional` the answer is yes at once and notifications arrive quietly.
    open func requestAuthorization(
        options: UNAuthorizationOptions = [],
        completionHandler: @escaping (Bool, (any Error)?) -> Void
    ) {
        let handler = SystemQueueTransfer(completionHandler)
        backend.requestAuthorization(options: AuthorizationOptions(rawValue: options.rawValue)) { granted in
            handler.value(granted, nil)
        }
    }

    /// Asks the person to allow notifications, the first time only; returns whether they are allowed.
    open func requestAuthorization(options: UNAuthorizationOptions = []) async throws -> Bool {
        await withCheckedContinuation { continuation in
            backend.requestAuthorization(options: AuthorizationOptions(rawValue: options.rawValue)) {
                continuation.resume(returning: $0)
            }
        }
    }

    /// The person's current settings for the app.
    open func getNotificationSettings(completionHandler: @escaping (UNNotificationSettings) -> Void) {
        let handler = SystemQueueTransfer(completionHandler)
        backend.settings { handler.value(UNNotificationSettings(value: $0)) }
    }

    /// The person's current settings for the app.
    open func notificationSettings() async -> UNNotificationSettings {
        await withCheckedContinuation { continuation in
            getNotificationSettings { continuation.resume(returning: $0) }
        }
    }

    // MARK: Categories

    /// Registers the app's categories, replacing all that were registered before. Requests added after
    /// this call show the new categories' actions.
    open func setNotificationCategories(_ categories: Set<UNNotificationCategory>) {
        backend.setCategories(categories.map(\.value))
    }

    /// The app's registered categories.
    open func getNotificationCategories(completionHandler: @escaping (Set<UNNotificationCategory>) -> Void) {
        let handler = SystemQueueTransfer(completionHandler)
        backend.categories { handler.value(Set($0.map { UNNotificationCategory(value: $0) })) }
    }

    /// The app's registered categories.
    open func notificationCategories() async -> Set<UNNotificationCategory> {
        await withCheckedContinuation { continuation in
            getNotificationCategories { continuation.resume(returning: $0) }
        }
    }

    // MARK: Requests

    /// Schedules a request, replacing any pending request with the same identifier. Without a trigger it
    /// is delivered at once.
    ///
    /// The completion receives a `UNError` when the request is refused: `notificationsNotAllowed` before
    /// the person allowed notifications, an attachment error, `notificationInvalidNoDate` or
    /// `notificationInvalidNoContent`.
    ///
    /// - Precondition: the content's `userInfo` holds only property-list types (strings, numbers,
    ///   booleans, dates, data, and arrays and dictionaries of them). Apple's framework raises an
    ///   exception otherwise; so does this one.
    open func add(_ request: UNNotificationRequest, withCompletionHandler completionHandler: (((any Error)?) -> Void)? = nil) {
        guard let value = request.coreValue else {
            preconditionFailure("UNNotificationRequest \"\(request.identifier)\": userInfo must contain only property-list types")
        }
        let handler = SystemQueueTransfer(completionHandler)
        backend.add(value) { failure in
            handler.value?(failure.map(UNError.init))
        }
    }

    /// Schedules a request, replacing any pending request with the same identifier.
    ///
    /// - Throws: `UNError`; see ``add(_:withCompletionHandler:)``.
    open func add(_ request: UNNotificationRequest) async throws {
        let error: (any Error)? = await withCheckedContinuation { continuation in
            add(request) { continuation.resume(returning: $0) }
        }
        if let error { throw error }
    }

    /// The requests waiting for their triggers.
    open func getPendingNotificationRequests(completionHandler: @escaping ([UNNotificationRequest]) -> Void) {
        let handler = SystemQueueTransfer(completionHandler)
        backend.pendingRequests { pending in
            handler.value(pending.map { UNNotificationRequest($0.request, scheduledFireDate: $0.nextFireDate) })
        }
    }

    /// The requests waiting for their triggers.
    open func pendingNotificationRequests() async -> [UNNotificationRequest] {
        await withCheckedContinuation { continuation in
            getPendingNotificationRequests { continuation.resume(returning: $0) }
        }
    }

    /// Cancels the pending requests with these identifiers.
    open func removePendingNotificationRequests(withIdentifiers identifiers: [String]) {
        backend.removePendingRequests(identifiers)
    }

    /// Cancels every pending request.
    open func removeAllPendingNotificationRequests() {
        backend.removePendingRequests(nil)
    }

    // MARK: Delivered

    /// The app's notifications still in the notification center.
    open func getDeliveredNotifications(completionHandler: @escaping ([UNNotification]) -> Void) {
        let handler = SystemQueueTransfer(completionHandler)
        backend.deliveredNotifications { handler.value($0.map(UNNotification.init)) }
    }

    /// The app's notifications still in the notification center.
    open func deliveredNotifications() async -> [UNNotification] {
        await withCheckedContinuation { continuation in
            getDeliveredNotifications { continuation.resume(returning: $0) }
        }
    }

    /// Removes the delivered notifications with these identifiers from the notification center.
    open func removeDeliveredNotifications(withIdentifiers identifiers: [String]) {
        backend.removeDeliveredNotifications(identifiers)
    }

    /// Removes all the app's delivered notifications from the notification center.
    open func removeAllDeliveredNotifications() {
        backend.removeDeliveredNotifications(nil)
    }

    // MARK: Badge

    /// Sets the app's badge; 0 removes it. Fails with `badgeInputInvalid` for a negative count and with
    /// `notificationsNotAllowed` when the person does not allow badges.
    open func setBadgeCount(_ newBadgeCount: Int, withCompletionHandler completionHandler: (((any Error)?) -> Void)? = nil) {
        let handler = SystemQueueTransfer(completionHandler)
        backend.setBadgeCount(newBadgeCount) { failure in
            handler.value?(failure.map(UNError.init))
        }
    }

    /// Sets the app's badge; 0 removes it.
    open func setBadgeCount(_ newBadgeCount: Int) async throws {
        let error: (any Error)? = await withCheckedContinuation { continuation in
            setBadgeCount(newBadgeCount) { continuation.resume(returning: $0) }
        }
        if let error { throw error }
    }
}

private struct WeakDelegate {
    weak var value: (any UNUserNotificationCenterDelegate)?
}
