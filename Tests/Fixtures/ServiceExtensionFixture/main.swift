// Service extensions that behave as the tests need, chosen by the push's "behaviour" key:
//   "append"  appends " (prepared)" to the title and body at once;
//   "never"   never calls the content handler, not even when time is nearly up;
//   "late"    calls it only when time is nearly up, with its best attempt (" (best attempt)");
//   "crash"   crashes;
//   "twice"   calls it twice;
//   "escape"  attaches a file outside its own folder;
//   "limits"  sets the body to its own memory and CPU-time limits, as the kernel reports them.
import Foundation
import OpenUserNotifications
import OpenUserNotificationsLink

final class FixtureService: UNNotificationServiceExtension {
    var contentHandler: ((UNNotificationContent) -> Void)?
    var bestAttempt: UNMutableNotificationContent?

    override func didReceive(_ request: UNNotificationRequest, withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void) {
        let content = request.content.mutableCopy() as! UNMutableNotificationContent
        switch request.content.userInfo["behaviour"] as? String {
        case "append":
            content.title += " (prepared)"
            content.body += " (prepared)"
            contentHandler(content)
        case "late":
            content.body += " (best attempt)"
            self.contentHandler = contentHandler
            bestAttempt = content
        case "crash":
            fatalError("the fixture crashes, as asked")
        case "twice":
            content.body += " (first)"
            contentHandler(content)
            contentHandler(content)
        case "limits":
            let limits = (try? String(contentsOfFile: "/proc/self/limits", encoding: .utf8)) ?? ""
            content.body = limits.split(separator: "\n")
                .filter { $0.hasPrefix("Max data size") || $0.hasPrefix("Max cpu time") }
                .map { $0.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ") }
                .joined(separator: "; ")
            contentHandler(content)
        case "escape":
            let file = URL(fileURLWithPath: request.content.userInfo["file"] as? String ?? "/etc/hostname")
            if let attachment = try? UNNotificationAttachment(identifier: "outside", url: file, options: nil) {
                content.attachments = [attachment]
            }
            contentHandler(content)
        default:
            // "never": the handler is never called.
            break
        }
    }

    override func serviceExtensionTimeWillExpire() {
        if let contentHandler, let bestAttempt { contentHandler(bestAttempt) }
    }
}

NotificationServiceExtensionHost.run(FixtureService())
