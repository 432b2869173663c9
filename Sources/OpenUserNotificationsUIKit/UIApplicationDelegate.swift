#if !canImport(UIKit)
public import Foundation
internal import Dispatch
internal import NotificationCore
internal import OpenUserNotificationsLink

/// What the app object tells the app about remote notifications and its launch, as UIKit's
/// `UIApplicationDelegate` does. Every method is optional: each has a default that does what iOS does
/// when an app does not implement it.
///
/// An app delegate written for iOS is also the app's entry point here:
///
/// ```swift
/// @main
/// class AppDelegate: UIResponder, UIApplicationDelegate {
///     func application(_ application: UIApplication,
///                      didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]?) -> Bool {
///         application.registerForRemoteNotifications()
///         return true
///     }
///     func application(_ application: UIApplication, didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data) {
///         print(deviceToken.map { String(format: "%02x", $0) }.joined())
///     }
/// }
/// ```
@MainActor
public protocol UIApplicationDelegate: NSObjectProtocol {
    /// The app is launching; `false` to refuse a URL it was opened with (ignored here).
    func application(_ application: UIApplication, willFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]?) -> Bool
    /// The app has launched: set the notification center's delegate and register for remote
    /// notifications here.
    func application(_ application: UIApplication, didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]?) -> Bool
    /// The app registered for remote notifications: the token to give the app's provider. It is called
    /// again at each registration, with a new token if the token changed.
    func application(_ application: UIApplication, didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data)
    /// The app could not register for remote notifications: try again later.
    func application(_ application: UIApplication, didFailToRegisterForRemoteNotificationsWithError error: any Error)
    /// A background push (`content-available: 1`) arrived: fetch what it announces and
    /// call the completion handler, within 30 seconds.
    func application(
        _ application: UIApplication,
        didReceiveRemoteNotification userInfo: [AnyHashable: Any],
        fetchCompletionHandler completionHandler: @escaping (UIBackgroundFetchResult) -> Void
    )
    /// The `async` form of the method above, for apps that implement this one instead.
    func application(_ application: UIApplication, didReceiveRemoteNotification userInfo: [AnyHashable: Any]) async -> UIBackgroundFetchResult
    /// The iOS 3 form, without a completion handler: called when the app implements neither form above.
    /// (Deprecated by Apple since iOS 10; not marked so here, so that apps still using it build cleanly.)
    func application(_ application: UIApplication, didReceiveRemoteNotification userInfo: [AnyHashable: Any])

    // The iOS 8 notification API: called while the app registered with `registerUserNotificationSettings`
    // and set no `UNUserNotificationCenterDelegate`.

    /// The person answered the app's registration: `notificationSettings.types` are those allowed.
    @available(*, deprecated, message: "Use UserNotifications Framework's -[UNUserNotificationCenter requestAuthorizationWithOptions:completionHandler:]")
    func application(_ application: UIApplication, didRegister notificationSettings: UIUserNotificationSettings)
    /// A local notification fired while the app was in the foreground (it is not shown), or the
    /// person tapped one.
    @available(*, deprecated, message: "Use UserNotifications Framework's -[UNUserNotificationCenterDelegate willPresentNotification:withCompletionHandler:] or -[UNUserNotificationCenterDelegate didReceiveNotificationResponse:withCompletionHandler:]")
    func application(_ application: UIApplication, didReceive notification: UILocalNotification)
    /// The person picked the action `identifier` on a local notification: call `completionHandler` when
    /// done, after asynchronous work if need be.
    @available(*, deprecated, message: "Use UserNotifications Framework's -[UNUserNotificationCenterDelegate didReceiveNotificationResponse:withCompletionHandler:]")
    func application(_ application: UIApplication, handleActionWithIdentifier identifier: String?, for notification: UILocalNotification,
                     completionHandler: @escaping () -> Void)
    /// The same, with `responseInfo[UIUserNotificationActionResponseTypedTextKey]` the text the person
    /// typed into a text-input action (iOS 9). Without it, the form above is called.
    @available(*, deprecated, message: "Use UserNotifications Framework's -[UNUserNotificationCenterDelegate didReceiveNotificationResponse:withCompletionHandler:]")
    func application(_ application: UIApplication, handleActionWithIdentifier identifier: String?, for notification: UILocalNotification,
                     withResponseInfo responseInfo: [AnyHashable: Any], completionHandler: @escaping () -> Void)
    /// The person picked the action `identifier` on a remote notification (its payload's `"category"`):
    /// call `completionHandler` when done, after asynchronous work if need be.
    @available(*, deprecated, message: "Use UserNotifications Framework's -[UNUserNotificationCenterDelegate didReceiveNotificationResponse:withCompletionHandler:]")
    func application(_ application: UIApplication, handleActionWithIdentifier identifier: String?, forRemoteNotification userInfo: [AnyHashable: Any],
                     completionHandler: @escaping () -> Void)
    /// The same, with the typed text in `responseInfo` (iOS 9). Without it, the form above is called.
    @available(*, deprecated, message: "Use UserNotifications Framework's -[UNUserNotificationCenterDelegate didReceiveNotificationResponse:withCompletionHandler:]")
    func application(_ application: UIApplication, handleActionWithIdentifier identifier: String?, forRemoteNotification userInfo: [AnyHashable: Any],
                     withResponseInfo responseInfo: [AnyHashable: Any], completionHandler: @escaping () -> Void)
}

extension UIApplicationDelegate {
    public func application(_ application: UIApplication, willFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]?) -> Bool {
        true
    }

    public func application(_ application: UIApplication, didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]?) -> Bool {
        true
    }

    public func application(_ application: UIApplication, didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data) {}

    public func application(_ application: UIApplication, didFailToRegisterForRemoteNotificationsWithError error: any Error) {}

    /// Without this method, the app's `async` form or its iOS 3 form receives the push.
    public func application(
        _ application: UIApplication,
        didReceiveRemoteNotification userInfo: [AnyHashable: Any],
        fetchCompletionHandler completionHandler: @escaping (UIBackgroundFetchResult) -> Void
    ) {
        self.application(application, didReceiveRemoteNotification: userInfo)
        Task { @MainActor in
            completionHandler(await self.application(application, didReceiveRemoteNotification: userInfo))
        }
    }

    public func application(_ application: UIApplication, didReceiveRemoteNotification userInfo: [AnyHashable: Any]) async -> UIBackgroundFetchResult {
        .noData
    }

    public func application(_ application: UIApplication, didReceiveRemoteNotification userInfo: [AnyHashable: Any]) {}

    @available(*, deprecated, message: "Use UserNotifications Framework's -[UNUserNotificationCenter requestAuthorizationWithOptions:completionHandler:]")
    public func application(_ application: UIApplication, didRegister notificationSettings: UIUserNotificationSettings) {}

    @available(*, deprecated, message: "Use UserNotifications Framework's -[UNUserNotificationCenterDelegate willPresentNotification:withCompletionHandler:] or -[UNUserNotificationCenterDelegate didReceiveNotificationResponse:withCompletionHandler:]")
    public func application(_ application: UIApplication, didReceive notification: UILocalNotification) {}

    /// Without this method, the action is done with at once.
    @available(*, deprecated, message: "Use UserNotifications Framework's -[UNUserNotificationCenterDelegate didReceiveNotificationResponse:withCompletionHandler:]")
    public func application(_ application: UIApplication, handleActionWithIdentifier identifier: String?, for notification: UILocalNotification,
                            completionHandler: @escaping () -> Void) {
        completionHandler()
    }

    @available(*, deprecated, message: "Use UserNotifications Framework's -[UNUserNotificationCenterDelegate didReceiveNotificationResponse:withCompletionHandler:]")
    public func application(_ application: UIApplication, handleActionWithIdentifier identifier: String?, for notification: UILocalNotification,
                            withResponseInfo responseInfo: [AnyHashable: Any], completionHandler: @escaping () -> Void) {
        self.application(application, handleActionWithIdentifier: identifier, for: notification, completionHandler: completionHandler)
    }

    /// Without this method, the action is done with at once.
    @available(*, deprecated, message: "Use UserNotifications Framework's -[UNUserNotificationCenterDelegate didReceiveNotificationResponse:withCompletionHandler:]")
    public func application(_ application: UIApplication, handleActionWithIdentifier identifier: String?, forRemoteNotification userInfo: [AnyHashable: Any],
                            completionHandler: @escaping () -> Void) {
        completionHandler()
    }

    @available(*, deprecated, message: "Use UserNotifications Framework's -[UNUserNotificationCenterDelegate didReceiveNotificationResponse:withCompletionHandler:]")
    public func application(_ application: UIApplication, handleActionWithIdentifier identifier: String?, forRemoteNotification userInfo: [AnyHashable: Any],
                            withResponseInfo responseInfo: [AnyHashable: Any], completionHandler: @escaping () -> Void) {
        self.application(application, handleActionWithIdentifier: identifier, forRemoteNotification: userInfo, completionHandler: completionHandler)
    }
}

extension UIApplicationDelegate where Self: UIResponder {
    /// The app's entry point when its delegate is marked `@main`, as on iOS: connects to the
    /// notification daemon when the environment names the app (`UNOTIFY_APP_ID`, see
    /// `NotificationDaemonLink.configurationFromEnvironment`), creates the delegate, tells it the app
    /// launched, and runs the main queue until the app exits.
    public static func main() {
        do {
            try NotificationDaemonLink.bootstrapFromEnvironment()
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            exit(1)
        }
        let application = UIApplication.shared
        let delegate = Self()
        application.delegate = delegate
        let launchOptions = UIApplication.launchOptions(from: ProcessInfo.processInfo.environment)
        // Read once: a process the app starts does not inherit it.
        unsetenv(LaunchEnvironment.remoteNotificationVariable)
        _ = delegate.application(application, willFinishLaunchingWithOptions: launchOptions)
        _ = delegate.application(application, didFinishLaunchingWithOptions: launchOptions)
        dispatchMain()
    }
}
#endif
