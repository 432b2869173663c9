// A small app that uses notifications exactly as an iOS app would, connected to the notification
// daemon: it asks for authorization, declares a category with a "done" button and a reply field,
// schedules a reminder, and prints what the person does with it — also when it happened while the app
// was not running.
//
//     UNOTIFY_APP_ID=com.example.todo swift run todo-example --schedule 5
import Foundation
import OpenUserNotifications
import OpenUserNotificationsLink

final class ReminderHandler: NSObject, UNUserNotificationCenterDelegate, Sendable {
    func userNotificationCenter(_ center: UNUserNotificationCenter, willPresent notification: UNNotification,
                                withCompletionHandler completionHandler: @escaping (UNNotificationPresentationOptions) -> Void) {
        // A push whose `alert` is a string has a body and no title.
        let content = notification.request.content
        say("arrived while running: \(content.title.isEmpty ? content.body : content.title)")
        completionHandler([.banner, .list, .sound])
    }

    func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse,
                                withCompletionHandler completionHandler: @escaping () -> Void) {
        switch response.actionIdentifier {
        case UNNotificationDefaultActionIdentifier:
            say("the person opened \"\(response.notification.request.identifier)\"")
        case UNNotificationDismissActionIdentifier:
            say("the person dismissed \"\(response.notification.request.identifier)\"")
        case "MARK_DONE":
            say("the person marked \"\(response.notification.request.identifier)\" done")
        default:
            if let reply = response as? UNTextInputNotificationResponse {
                say("the person replied to \"\(response.notification.request.identifier)\": \(reply.userText)")
            }
        }
        completionHandler()
    }

    /// The person chose the app's own notification settings, from the system's settings for the app.
    func userNotificationCenter(_ center: UNUserNotificationCenter, openSettingsFor notification: UNNotification?) {
        say("the person opened the app's notification settings")
    }
}

/// Prints a line at once, also when the output is a pipe or a file (where `print` alone waits for a
/// full buffer).
func say(_ line: String) {
    print(line)
    fflush(nil)
}

@main
struct TodoExample {
    static func main() async throws {
        let arguments = CommandLine.arguments
        guard try NotificationDaemonLink.bootstrapFromEnvironment() else {
            say("Set UNOTIFY_APP_ID (and register the app with `unotify apps add`) to connect to the daemon.")
            exit(1)
        }
        // One process per app: a second `todo-example` takes over, and this one stops.
        Task {
            await NotificationDaemonLink.waitUntilReplaced()
            say("another todo-example took over; this one stops")
            exit(0)
        }
        let handler = ReminderHandler()
        let center = UNUserNotificationCenter.current()
        center.delegate = handler

        let done = UNNotificationAction(identifier: "MARK_DONE", title: "Done", options: [.authenticationRequired])
        let reply = UNTextInputNotificationAction(identifier: "INPUT", title: "Reply", options: [.foreground],
                                                  textInputButtonTitle: "Send", textInputPlaceholder: "How did it go?")
        center.setNotificationCategories([UNNotificationCategory(identifier: "TODO_CATEGORY", actions: [done, reply],
                                                                 intentIdentifiers: [], options: [.customDismissAction])])

        // Asked once: after the person's answer, the system answers at once with what was decided.
        switch await center.notificationSettings().authorizationStatus {
        case .notDetermined:
            say("asking for permission (answer on the notification center's page, or in `unotify watch` with `allow com.example.todo`)…")
        case .denied:
            say("notifications are turned off for this app (turn them on in the notification center's Settings, or with `unotify authorize --app … grant`)")
            exit(1)
        default:
            say("notifications are allowed")
        }
        guard try await center.requestAuthorization(options: [.alert, .sound, .badge, .providesAppNotificationSettings]) else {
            say("notifications are not allowed")
            exit(1)
        }

        if let index = arguments.firstIndex(of: "--schedule"), index + 1 < arguments.count, let seconds = TimeInterval(arguments[index + 1]) {
            let content = UNMutableNotificationContent()
            content.title = "📌 Daily reminder"
            content.body = "Write the report!"
            content.categoryIdentifier = "TODO_CATEGORY"
            content.sound = .default
            let request = UNNotificationRequest(identifier: "daily-report", content: content,
                                                trigger: UNTimeIntervalNotificationTrigger(timeInterval: seconds, repeats: false))
            try await center.add(request)
            say("scheduled \"daily-report\" in \(Int(seconds)) s")
        }
        say("waiting for the person (Ctrl-C to stop)…")
        while true {
            try await Task.sleep(for: .seconds(3600))
        }
    }
}
