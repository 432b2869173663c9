// The least a service extension can do: it appends to the body and hands the content back at once.
// What a push through it costs beyond one shown as it came is the system's own cost of an extension.
import OpenUserNotifications
import OpenUserNotificationsLink

final class TrivialService: UNNotificationServiceExtension {
    override func didReceive(_ request: UNNotificationRequest, withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void) {
        let content = request.content.mutableCopy() as! UNMutableNotificationContent
        content.body += " (prepared)"
        contentHandler(content)
    }
}

NotificationServiceExtensionHost.run(TrivialService())
