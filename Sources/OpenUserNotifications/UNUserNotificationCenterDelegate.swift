public import Foundation

/// The app's handler of notifications: how they are presented while the app is in the foreground, and
/// what the person did with them.
///
/// As with Apple's optional protocol methods, implement only what you need, in either the
/// completion-handler or the `async` form. Set the delegate before the app finishes launching, so that
/// responses that launched the app are not missed.
public protocol UNUserNotificationCenterDelegate: NSObjectProtocol {
    /// A notification arrives while the app is in the foreground: call `completionHandler` with how to
    /// present it. Not implementing this, or not answering in time, presents nothing.
    func userNotificationCenter(
        _ center: UNUserNotificationCenter,
        willPresent notification: UNNotification,
        withCompletionHandler completionHandler: @escaping @Sendable (UNNotificationPresentationOptions) -> Void
    )

    /// A notification arrives while the app is in the foreground: return how to present it.
    func userNotificationCenter(
        _ center: UNUserNotificationCenter,
        willPresent notification: UNNotification
    ) async -> UNNotificationPresentationOptions

    /// The person opened, dismissed or acted on a notification. Call `completionHandler` when done.
    func userNotificationCenter(
        _ center: UNUserNotificationCenter,
        didReceive response: UNNotificationResponse,
        withCompletionHandler completionHandler: @escaping @Sendable () -> Void
    )

    /// The person opened, dismissed or acted on a notification.
    func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse) async

    /// The person asked to see the app's own notification settings, from a notification or (with
    /// `nil`) from the system's settings. Requires `.providesAppNotificationSettings`.
    func userNotificationCenter(_ center: UNUserNotificationCenter, openSettingsFor notification: UNNotification?)
}

/// Marks a call of a delegate's `async` method made by the default completion-handler method, so that
/// a delegate implementing neither form does not bounce between the two defaults.
enum DelegateBridge {
    @TaskLocal static var isBridging = false
}

extension UNUserNotificationCenterDelegate {
    public func userNotificationCenter(
        _ center: UNUserNotificationCenter,
        willPresent notification: UNNotification,
        withCompletionHandler completionHandler: @escaping @Sendable (UNNotificationPresentationOptions) -> Void
    ) {
        let delegate = SystemQueueTransfer(self)
        Task {
            let options = await DelegateBridge.$isBridging.withValue(true) {
                await delegate.value.userNotificationCenter(center, willPresent: notification)
            }
            completionHandler(options)
        }
    }

    public func userNotificationCenter(
        _ center: UNUserNotificationCenter,
        willPresent notification: UNNotification
    ) async -> UNNotificationPresentationOptions {
        if DelegateBridge.isBridging { return [] }
        return await withCheckedContinuation { continuation in
            userNotificationCenter(center, willPresent: notification) { continuation.resume(returning: $0) }
        }
    }

    public func userNotificationCenter(
        _ center: UNUserNotificationCenter,
        didReceive response: UNNotificationResponse,
        withCompletionHandler completionHandler: @escaping @Sendable () -> Void
    ) {
        let delegate = SystemQueueTransfer(self)
        Task {
            await DelegateBridge.$isBridging.withValue(true) {
                await delegate.value.userNotificationCenter(center, didReceive: response)
            }
            completionHandler()
        }
    }

    public func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse) async {
        if DelegateBridge.isBridging { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            userNotificationCenter(center, didReceive: response) { continuation.resume() }
        }
    }

    public func userNotificationCenter(_ center: UNUserNotificationCenter, openSettingsFor notification: UNNotification?) {}
}

/// Carries a value that is not `Sendable` (an app's delegate or completion handler) to the notification
/// system's serial queue, where it is used once at a time. As on Apple's platforms, the app hands these
/// over to the system and is responsible for their own thread safety.
struct SystemQueueTransfer<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
