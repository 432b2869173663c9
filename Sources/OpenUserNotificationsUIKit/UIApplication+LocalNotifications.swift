#if !canImport(UIKit)
import Foundation
internal import OpenUserNotifications

/// The iOS 8 notification methods of the app object, mapped onto `UNUserNotificationCenter.current()`.
@available(*, deprecated, message: "Use UserNotifications Framework's UNUserNotificationCenter")
extension UIApplication {
    /// Registers the app's settings: asks the person for the types (the first time), registers the
    /// categories, and tells the delegate what was allowed in
    /// `application(_:didRegister:)`. From then on, while the app sets no
    /// `UNUserNotificationCenterDelegate`, notifications and the person's actions reach the app
    /// delegate's iOS 8 methods, as on iOS.
    @available(*, deprecated, message: "Use UserNotifications Framework's -[UNUserNotificationCenter requestAuthorizationWithOptions:completionHandler:] and -[UNUserNotificationCenter setNotificationCategories:]")
    public func registerUserNotificationSettings(_ notificationSettings: UIUserNotificationSettings) {
        let center = UNUserNotificationCenter.current()
        center.setNotificationCategories(Set((notificationSettings.categories ?? []).map(\.notificationCategory)))
        center.setStandInDelegate(AppDelegateNotificationRouter.shared)
        center.requestAuthorization(options: notificationSettings.types.authorizationOptions) { granted, _ in
            let registered = UIUserNotificationSettings(types: granted ? notificationSettings.types : [], categories: notificationSettings.categories)
            Task { @MainActor in
                UIApplication.registeredSettings.withLock { $0 = registered }
                let application = UIApplication.shared
                application.delegate?.application(application, didRegister: registered)
            }
        }
    }

    /// The settings the app registered, with the types the person allowed; nil before the first
    /// registration.
    @available(*, deprecated, message: "Use UserNotifications Framework's -[UNUserNotificationCenter getNotificationSettingsWithCompletionHandler:] and -[UNUserNotificationCenter getNotificationCategoriesWithCompletionHandler:]")
    public var currentUserNotificationSettings: UIUserNotificationSettings? {
        Self.registeredSettings.withLock { $0 }
    }

    /// Schedules `notification`: it fires at its date, repeat interval or region.
    @available(*, deprecated, message: "Use UserNotifications Framework's -[UNUserNotificationCenter addNotificationRequest:withCompletionHandler:]")
    public func scheduleLocalNotification(_ notification: UILocalNotification) {
        // As on iOS, a notification the system refuses (not allowed, invalid) is dropped without a word.
        UNUserNotificationCenter.current().add(notification.request()) { _ in }
    }

    /// Shows `notification` at once, whatever its date.
    @available(*, deprecated, message: "Use UserNotifications Framework's -[UNUserNotificationCenter addNotificationRequest:withCompletionHandler:]")
    public func presentLocalNotificationNow(_ notification: UILocalNotification) {
        UNUserNotificationCenter.current().add(notification.request(immediately: true)) { _ in }
    }

    /// Cancels `notification` (or a copy of it) if it is scheduled.
    @available(*, deprecated, message: "Use UserNotifications Framework's -[UNUserNotificationCenter removePendingNotificationRequestsWithIdentifiers:]")
    public func cancelLocalNotification(_ notification: UILocalNotification) {
        UNUserNotificationCenter.current().removePendingNotificationRequests(withIdentifiers: [notification.requestIdentifier])
    }

    /// Cancels every scheduled notification of the app.
    @available(*, deprecated, message: "Use UserNotifications Framework's -[UNUserNotificationCenter removeAllPendingNotificationRequests]")
    public func cancelAllLocalNotifications() {
        UNUserNotificationCenter.current().removeAllPendingNotificationRequests()
    }

    /// The app's scheduled notifications, each with its next fire date; setting it replaces them all.
    ///
    /// Reading waits for the system's answer (at most 5 seconds), as iOS's synchronous property does.
    @available(*, deprecated, message: "Use UserNotifications Framework's -[UNUserNotificationCenter getPendingNotificationRequestsWithCompletionHandler:]")
    public var scheduledLocalNotifications: [UILocalNotification]? {
        get {
            let pending = LockedValue<[UNNotificationRequest]>([])
            let answered = DispatchSemaphore(value: 0)
            UNUserNotificationCenter.current().getPendingNotificationRequests { requests in
                pending.withLock { $0 = requests }
                answered.signal()
            }
            guard answered.wait(timeout: .now() + 5) == .success else { return [] }
            return pending.withLock { $0 }.map { UILocalNotification($0, scheduled: nil) }
        }
        set {
            cancelAllLocalNotifications()
            for notification in newValue ?? [] { scheduleLocalNotification(notification) }
        }
    }

    /// The settings of the last `registerUserNotificationSettings(_:)`, as the person answered.
    static let registeredSettings = LockedValue<UIUserNotificationSettings?>(nil)
}

/// Hands the app delegate what iOS 8 handed it: a notification arriving in the foreground (not shown),
/// the person's tap, and the actions picked (with typed text, iOS 9). It stands in for a
/// `UNUserNotificationCenterDelegate` the app did not set; one that the app sets takes precedence.
@available(*, deprecated, message: "The iOS 8 app-delegate methods, called as iOS calls them")
final class AppDelegateNotificationRouter: NSObject, UNUserNotificationCenterDelegate, Sendable {
    static let shared = AppDelegateNotificationRouter()

    func userNotificationCenter(
        _ center: UNUserNotificationCenter, willPresent notification: UNNotification,
        withCompletionHandler completionHandler: @escaping @Sendable (UNNotificationPresentationOptions) -> Void
    ) {
        // iOS 8 shows nothing while the app is in the foreground: the app is told instead.
        Task { @MainActor in
            let application = UIApplication.shared
            if let delegate = application.delegate {
                let request = notification.request
                if request.trigger is UNPushNotificationTrigger {
                    delegate.application(application, didReceiveRemoteNotification: request.content.userInfo) { _ in }
                } else {
                    delegate.application(application, didReceive: UILocalNotification(request, scheduled: notification.date))
                }
            }
            completionHandler([])
        }
    }

    func userNotificationCenter(
        _ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse,
        withCompletionHandler completionHandler: @escaping @Sendable () -> Void
    ) {
        let done = CalledOnce(completionHandler)
        Task { @MainActor in
            let application = UIApplication.shared
            guard let delegate = application.delegate else { return done.call() }
            let request = response.notification.request
            let remote = request.trigger is UNPushNotificationTrigger
            let userInfo = request.content.userInfo
            switch response.actionIdentifier {
            case UNNotificationDismissActionIdentifier:
                // iOS 8 tells the app nothing of a dismissal.
                done.call()
            case UNNotificationDefaultActionIdentifier:
                // The tap opens the app, which is handed the notification.
                if remote {
                    delegate.application(application, didReceiveRemoteNotification: userInfo) { _ in done.call() }
                } else {
                    delegate.application(application, didReceive: UILocalNotification(request, scheduled: response.notification.date))
                    done.call()
                }
            case let action:
                var responseInfo: [AnyHashable: Any] = [:]
                if let text = (response as? UNTextInputNotificationResponse)?.userText {
                    responseInfo[UIUserNotificationActionResponseTypedTextKey] = text
                }
                // The handler may call back after asynchronous work; one never called is reported by
                // the system once the time for a response is up.
                if remote {
                    delegate.application(application, handleActionWithIdentifier: action, forRemoteNotification: userInfo,
                                         withResponseInfo: responseInfo, completionHandler: { done.call() })
                } else {
                    delegate.application(application, handleActionWithIdentifier: action,
                                         for: UILocalNotification(request, scheduled: response.notification.date),
                                         withResponseInfo: responseInfo, completionHandler: { done.call() })
                }
            }
        }
    }
}

/// A completion handler that runs once, whoever calls it and however often.
final class CalledOnce: Sendable {
    private let handler: LockedValue<(@Sendable () -> Void)?>

    init(_ handler: @escaping @Sendable () -> Void) {
        self.handler = LockedValue(handler)
    }

    func call() {
        handler.withLock { handler in
            defer { handler = nil }
            return handler
        }?()
    }
}
#endif
