#if canImport(UIKit)
// On Apple's platforms the app uses UIKit itself.
@_exported public import UIKit
#else
public import Foundation
internal import NotificationCore
internal import OpenUserNotifications

/// The result an app reports when it finishes with a background push.
public enum UIBackgroundFetchResult: UInt, Sendable {
    /// New data was downloaded.
    case newData = 0
    /// There was no new data to download.
    case noData = 1
    /// An attempt to download data failed.
    case failed = 2
}

/// The base of objects that take part in the app's life: here, the app object and its delegate.
///
/// Only what notifications need of UIKit's responder exists: a plain object that an app delegate
/// subclasses, as `class AppDelegate: UIResponder, UIApplicationDelegate` does on iOS.
@MainActor
open class UIResponder: NSObject {
    /// Creates a responder; the app delegate's `main()` creates the delegate with it.
    public required override init() {
        super.init()
    }
}

/// The app object: its registration for remote notifications, as UIKit's `UIApplication` has it.
///
/// Get it with ``shared``. Remote-notification calls reach the notification system that
/// `UNUserNotificationCenter.current()` reaches (the notification daemon once the app is linked to
/// it), and their answers come back on the main actor to the app ``delegate``:
///
/// ```swift
/// UIApplication.shared.delegate = appDelegate
/// UIApplication.shared.registerForRemoteNotifications()
/// // → appDelegate.application(_:didRegisterForRemoteNotificationsWithDeviceToken:)
/// ```
@MainActor
open class UIApplication: UIResponder {
    /// Keys of the options an app is launched with.
    public struct LaunchOptionsKey: Hashable, RawRepresentable, Sendable {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The payload of the remote notification the app was launched for.
        public static let remoteNotification = LaunchOptionsKey(rawValue: "UIApplicationLaunchOptionsRemoteNotificationKey")
    }

    /// The app object of this process.
    public static let shared = UIApplication()

    /// The launch options of an app the daemon started: the payload of the push it was started for
    /// (`remoteNotification`), as iOS gives it; `nil` for an app started otherwise.
    static func launchOptions(from environment: [String: String]) -> [LaunchOptionsKey: Any]? {
        guard let payload = LaunchEnvironment.remoteNotification(in: environment) else { return nil }
        return [.remoteNotification: PropertyListValue.userInfo(from: payload)]
    }

    /// Whether the app is in the foreground (`active`) or not.
    public enum State: Int, Sendable {
        /// In the foreground, receiving events.
        case active = 0
        /// In the foreground, not receiving events (never reported on Linux).
        case inactive = 1
        /// In the background.
        case background = 2
    }

    /// The app's state as the notification system knows it: `active` in the foreground (as the app
    /// told the system, `UNOTIFY_APP_STATE` or `NotificationDaemonLink.setAppState`), `background`
    /// otherwise. Background-push handlers read it as on iOS.
    open var applicationState: State {
        UNUserNotificationCenter.current().backend.appState == .foreground ? .active : .background
    }

    /// The number on the app's icon: reading it gives the badge the system last told the app of (the
    /// badge of a push or a notification, or the app's own); setting it sets the badge, as
    /// `UNUserNotificationCenter.setBadgeCount(_:)` does, and 0 clears it.
    open var applicationIconBadgeNumber: Int {
        get { UNUserNotificationCenter.current().backend.badgeCount }
        set { UNUserNotificationCenter.current().setBadgeCount(max(0, newValue)) { _ in } }
    }

    /// The app's delegate: it receives the device token, registration failures and background pushes.
    ///
    /// Divergence: held strongly (UIKit does not retain it, but keeps its own reference from
    /// `UIApplicationMain`), so that an app that sets it from its own code does not lose it.
    open var delegate: (any UIApplicationDelegate)? {
        didSet {
            installRemoteNotificationHandler()
            // No app delegate, no iOS 8 methods to hand notifications to: they wait for a delegate again.
            if delegate == nil { UNUserNotificationCenter.current().setStandInDelegate(nil) }
        }
    }

    /// Whether the app registered for remote notifications and got its device token, and has not
    /// unregistered since.
    open private(set) var isRegisteredForRemoteNotifications = false

    public required init() {
        super.init()
    }

    /// Registers the app with the push service: the delegate receives the device token in
    /// `application(_:didRegisterForRemoteNotificationsWithDeviceToken:)`, or the reason it could not
    /// in `application(_:didFailToRegisterForRemoteNotificationsWithError:)`.
    ///
    /// Call it at every launch, as Apple advises: the token stays the same until the app unregisters, and
    /// is the one a provider puts in `/3/device/<token>` (as hexadecimal).
    open func registerForRemoteNotifications() {
        UNUserNotificationCenter.current().backend.registerForRemoteNotifications { result in
            Task { @MainActor in UIApplication.shared.finishRegistration(result) }
        }
    }

    /// Ends the app's registration: providers that push to its token get `410 Unregistered`, and a
    /// later registration gets a new token.
    open func unregisterForRemoteNotifications() {
        isRegisteredForRemoteNotifications = false
        UNUserNotificationCenter.current().backend.unregisterForRemoteNotifications { _ in }
    }

    /// Subscribes the app to one of its broadcast channels at the push gateway: what its provider sends
    /// to the channel with `POST /4/broadcasts/apps/<bundle>` reaches the app from then on, as a push
    /// to its device token does (an alert is shown through the delegate's `willPresent`, as any).
    ///
    /// Beyond iOS, where only a Live Activity subscribes to a channel (ActivityKit's
    /// `pushType: .channel(_:)`), and so not in UIKit: see COMPATIBILITY.md. The provider creates the
    /// channel with `POST /1/apps/<bundle>/channels` and gives the app its `apns-channel-id`.
    ///
    /// - Parameter completionHandler: called with nil once the gateway holds the subscription, or
    ///   with why not (no gateway, or no such channel of the app's).
    public func subscribeToBroadcastChannel(_ channelID: String, completionHandler: (@Sendable ((any Error)?) -> Void)? = nil) {
        UNUserNotificationCenter.current().backend.setSubscribed(true, toChannel: channelID) { failure in
            completionHandler?(failure.map(Self.error))
        }
    }

    /// Ends the app's subscription to a broadcast channel: what is sent to it no longer reaches the app.
    public func unsubscribeFromBroadcastChannel(_ channelID: String, completionHandler: (@Sendable ((any Error)?) -> Void)? = nil) {
        UNUserNotificationCenter.current().backend.setSubscribed(false, toChannel: channelID) { failure in
            completionHandler?(failure.map(Self.error))
        }
    }

    /// Subscribes the app to one of its broadcast channels; see ``subscribeToBroadcastChannel(_:completionHandler:)``.
    public func subscribeToBroadcastChannel(_ channelID: String) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            subscribeToBroadcastChannel(channelID) { error in
                if let error { continuation.resume(throwing: error) } else { continuation.resume() }
            }
        }
    }

    /// Ends the app's subscription to a broadcast channel; see ``unsubscribeFromBroadcastChannel(_:completionHandler:)``.
    public func unsubscribeFromBroadcastChannel(_ channelID: String) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            unsubscribeFromBroadcastChannel(channelID) { error in
                if let error { continuation.resume(throwing: error) } else { continuation.resume() }
            }
        }
    }

    private func finishRegistration(_ result: Result<String, RemoteRegistrationFailure>) {
        switch result {
        case .success(let token):
            isRegisteredForRemoteNotifications = true
            delegate?.application(self, didRegisterForRemoteNotificationsWithDeviceToken: RemoteNotificationInbox.tokenData(hex: token))
        case .failure(let failure):
            delegate?.application(self, didFailToRegisterForRemoteNotificationsWithError: Self.error(failure))
        }
    }

    /// Background pushes wait in the framework until the app has a delegate to hand them to.
    private func installRemoteNotificationHandler() {
        guard delegate != nil else {
            RemoteNotificationInbox.shared.setHandler(nil)
            RemoteNotificationInbox.shared.setTokenHandler(nil)
            return
        }
        RemoteNotificationInbox.shared.setHandler { userInfo, completion in
            Task { @MainActor in UIApplication.shared.deliverRemoteNotification(userInfo, completion: completion) }
        }
        RemoteNotificationInbox.shared.setTokenHandler { token in
            Task { @MainActor in UIApplication.shared.deviceTokenChanged(token) }
        }
    }

    /// The system renewed the app's token: a registered app's delegate hears the new one, as an iOS
    /// app's does when it registers after its token changed.
    private func deviceTokenChanged(_ token: String) {
        guard isRegisteredForRemoteNotifications else { return }
        delegate?.application(self, didRegisterForRemoteNotificationsWithDeviceToken: RemoteNotificationInbox.tokenData(hex: token))
    }

    private func deliverRemoteNotification(_ userInfo: [String: PropertyListValue], completion: @escaping RemoteNotificationInbox.Completion) {
        guard let delegate else {
            completion(.noData)
            return
        }
        // The handler must be called once; a second call is ignored, as the system has moved on.
        let once = RemoteNotificationInbox.CompletionOnce(completion)
        delegate.application(self, didReceiveRemoteNotification: PropertyListValue.userInfo(from: userInfo)) { result in
            once.call(BackgroundFetchResult(rawValue: result.rawValue) ?? .noData)
        }
    }

    /// The error UIKit reports: Cocoa's 3000 ("no valid aps-environment entitlement") when the system
    /// has no push service, a network error when it cannot reach it now.
    nonisolated static func error(_ failure: RemoteRegistrationFailure) -> NSError {
        switch failure {
        case .notConfigured(let detail):
            NSError(domain: NSCocoaErrorDomain, code: 3000, userInfo: [NSLocalizedDescriptionKey: detail])
        case .unavailable(let detail):
            NSError(domain: NSURLErrorDomain, code: NSURLErrorCannotConnectToHost, userInfo: [NSLocalizedDescriptionKey: detail])
        }
    }
}

#endif
