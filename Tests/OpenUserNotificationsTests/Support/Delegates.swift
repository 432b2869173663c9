import Foundation
import OpenUserNotifications
import Synchronization

/// A delegate that answers `willPresent` with fixed options and finishes every response at once.
final class AnsweringDelegate: NSObject, UNUserNotificationCenterDelegate, Sendable {
    let options: UNNotificationPresentationOptions
    init(_ options: UNNotificationPresentationOptions) { self.options = options }

    func userNotificationCenter(_ center: UNUserNotificationCenter, willPresent notification: UNNotification,
                                withCompletionHandler completionHandler: @escaping @Sendable (UNNotificationPresentationOptions) -> Void) {
        completionHandler(options)
    }

    func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse,
                                withCompletionHandler completionHandler: @escaping @Sendable () -> Void) {
        completionHandler()
    }
}

/// A delegate written with the `async` forms only.
final class AsyncDelegate: NSObject, UNUserNotificationCenterDelegate, Sendable {
    let received = LogBook()

    func userNotificationCenter(_ center: UNUserNotificationCenter, willPresent notification: UNNotification) async -> UNNotificationPresentationOptions {
        [.list, .banner]
    }

    func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse) async {
        received.append(response.actionIdentifier)
    }
}

/// A delegate that keeps every completion handler and never calls it.
final class SilentDelegate: NSObject, UNUserNotificationCenterDelegate, Sendable {
    private let kept = Mutex<[@Sendable () -> Void]>([])

    func userNotificationCenter(_ center: UNUserNotificationCenter, willPresent notification: UNNotification,
                                withCompletionHandler completionHandler: @escaping @Sendable (UNNotificationPresentationOptions) -> Void) {
        kept.withLock { $0.append { completionHandler([.banner]) } }
    }

    func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse,
                                withCompletionHandler completionHandler: @escaping @Sendable () -> Void) {
        kept.withLock { $0.append(completionHandler) }
    }

    /// Calls every kept handler now, late.
    func answerLate() {
        kept.withLock { $0 }.forEach { $0() }
    }
}

/// A delegate that implements nothing.
final class EmptyDelegate: NSObject, UNUserNotificationCenterDelegate, Sendable {}
