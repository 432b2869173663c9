// An app written as an iOS app is: an `@main` app delegate that asks for permission, registers for
// remote notifications, answers background pushes, and takes VoIP pushes through PushKit. Run it as an
// app registered with the daemon:
//
//     unotify apps add com.example.push
//     UNOTIFY_APP_ID=com.example.push swift run push-example
//
// It prints its device token (and the same token again for VoIP); send it pushes with `curl` or
// `unotify push` (see the README), VoIP ones with `--push-type voip`.
import Foundation
import OpenUserNotificationsShim

@main
final class AppDelegate: UIResponder, UIApplicationDelegate {
    /// Shows alert pushes in the foreground and prints what the person did with them.
    let notificationHandler = NotificationHandler()
    /// Takes VoIP pushes: calls, as a calling app announces them.
    let callHandler = CallHandler()
    let voipRegistry = PKPushRegistry(queue: nil)

    func application(_ application: UIApplication, didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]?) -> Bool {
        // Started by the system for a push (a background push, or the person answering a notification).
        if let push = launchOptions?[.remoteNotification] as? [AnyHashable: Any] {
            say("launched for a push \(customKeys(push))")
        }
        let center = UNUserNotificationCenter.current()
        center.delegate = notificationHandler
        center.setNotificationCategories([
            UNNotificationCategory(identifier: "MESSAGE", actions: [
                UNTextInputNotificationAction(identifier: "REPLY", title: "Reply", options: [], textInputButtonTitle: "Send", textInputPlaceholder: "Message"),
            ], intentIdentifiers: [], options: []),
            // Drawn by the app's content extension (push-example-content): "switch" changes its picture.
            UNNotificationCategory(identifier: "customUI", actions: [
                UNNotificationAction(identifier: "switch", title: "Switch", options: []),
                UNNotificationAction(identifier: "open", title: "Open", options: [.foreground]),
                UNNotificationAction(identifier: "dismiss", title: "Dismiss", options: [.destructive]),
            ], intentIdentifiers: [], options: []),
        ])
        center.requestAuthorization(options: [.alert, .sound, .badge]) { granted, _ in
            say("authorization \(granted ? "granted" : "denied")")
            Task { @MainActor in application.registerForRemoteNotifications() }
        }
        // VoIP pushes need no permission: they never show anything by themselves.
        voipRegistry.delegate = callHandler
        voipRegistry.desiredPushTypes = [.voIP]
        return true
    }

    func application(_ application: UIApplication, didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data) {
        say("device token \(deviceToken.map { String(format: "%02x", $0) }.joined())")
    }

    func application(_ application: UIApplication, didFailToRegisterForRemoteNotificationsWithError error: Error) {
        say("registration failed: \(error.localizedDescription)")
    }

    func application(_ application: UIApplication, didReceiveRemoteNotification userInfo: [AnyHashable: Any],
                     fetchCompletionHandler completionHandler: @escaping (UIBackgroundFetchResult) -> Void) {
        say("background push \(customKeys(userInfo))")
        completionHandler(.newData)
    }
}

final class NotificationHandler: NSObject, UNUserNotificationCenterDelegate, Sendable {
    func userNotificationCenter(_ center: UNUserNotificationCenter, willPresent notification: UNNotification,
                                withCompletionHandler completionHandler: @escaping (UNNotificationPresentationOptions) -> Void) {
        say("willPresent \(notification.request.content.title)")
        completionHandler([.banner, .list, .sound])
    }

    func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse,
                                withCompletionHandler completionHandler: @escaping () -> Void) {
        if let reply = response as? UNTextInputNotificationResponse {
            say("reply \"\(reply.userText)\" to \(response.notification.request.content.title)")
        } else {
            say("response \(response.actionIdentifier) to \(response.notification.request.content.title)")
        }
        completionHandler()
    }
}

final class CallHandler: NSObject, PKPushRegistryDelegate, Sendable {
    func pushRegistry(_ registry: PKPushRegistry, didUpdate pushCredentials: PKPushCredentials, for type: PKPushType) {
        say("voip token \(pushCredentials.token.map { String(format: "%02x", $0) }.joined())")
    }

    func pushRegistry(_ registry: PKPushRegistry, didReceiveIncomingPushWith payload: PKPushPayload, for type: PKPushType,
                      completion: @escaping () -> Void) {
        // On iOS, an app reports the call to CallKit here; there is no CallKit on Linux.
        say("incoming call \(customKeys(payload.dictionaryPayload))")
        completion()
    }
}

/// A push's own keys, besides `aps`, as `key=value` in order.
func customKeys(_ userInfo: [AnyHashable: Any]) -> String {
    userInfo.filter { "\($0.key)" != "aps" }.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: " ")
}

/// Prints a line at once, also when the output is a pipe.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
