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
