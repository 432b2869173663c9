import Foundation
import NotificationCore
import OpenUserNotifications
import Synchronization
import Testing

/// What a system asks of the app reaches its delegates through one dispatch, whichever system the app
/// runs on, and each answer comes back as the reply the daemon reads.
@Suite struct DelegateCallsTests {
    static let notification = DeliveredNotification(
        request: NotificationRequest(identifier: "lunch", content: NotificationContent(), trigger: nil),
        date: Date(timeIntervalSinceReferenceDate: 100)
    )
    static let response = NotificationResponse(notification: notification, actionIdentifier: "REPLY", userText: "on my way")

    /// A delegate that answers `willPresent` with a banner and the list, and finishes a response at once.
    final class AnsweringDelegate: NSObject, UNUserNotificationCenterDelegate, Sendable {
        let heard = Mutex<[String]>([])

        func userNotificationCenter(_ center: UNUserNotificationCenter, willPresent notification: UNNotification,
                                    withCompletionHandler completionHandler: @escaping @Sendable (UNNotificationPresentationOptions) -> Void) {
            heard.withLock { $0.append("willPresent \(notification.request.identifier)") }
            completionHandler([.banner, .list])
        }

        func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse,
                                    withCompletionHandler completionHandler: @escaping @Sendable () -> Void) {
            let text = (response as? UNTextInputNotificationResponse)?.userText ?? ""
            // The center the app reaches through `current()` is the one calling it.
            let bound = UNUserNotificationCenter.current() === center
            heard.withLock { $0.append("didReceive \(response.actionIdentifier) \(text) bound: \(bound)") }
            completionHandler()
        }

        func userNotificationCenter(_ center: UNUserNotificationCenter, openSettingsFor notification: UNNotification?) {
            heard.withLock { $0.append("openSettings \(notification?.request.identifier ?? "-")") }
        }
    }

    @Test func withNoDelegateWillPresentIsAnsweredNothingAndTheOthersWait() {
        let system = InProcessNotificationSystem(clock: SystemClock(), answerer: AllowingPromptAnswerer())
        defer { system.releaseCenter(); system.removeTemporaryAttachmentFolder() }
        let replies = Mutex<[LocalAPI.AppReply]>([])
        let reply: @Sendable (LocalAPI.AppReply) -> Void = { answer in replies.withLock { $0.append(answer) } }
        #expect(system.center.hand(.willPresent(ticket: 3, Self.notification), reply: reply) == .handed)
        #expect(system.center.hand(.response(ticket: 4, Self.response), reply: reply) == .needsDelegate)
        #expect(system.center.hand(.openSettings(nil), reply: reply) == .needsDelegate)
        #expect(replies.withLock { $0 } == [.willPresentAnswer(ticket: 3, options: nil)])
    }

    @Test func theDelegatesAnswersComeBackAsTheDaemonReadsThem() {
        let system = InProcessNotificationSystem(clock: SystemClock(), answerer: AllowingPromptAnswerer())
        defer { system.releaseCenter(); system.removeTemporaryAttachmentFolder() }
        let delegate = AnsweringDelegate()
        system.center.delegate = delegate
        let replies = Mutex<[LocalAPI.AppReply]>([])
        let reply: @Sendable (LocalAPI.AppReply) -> Void = { answer in replies.withLock { $0.append(answer) } }
        #expect(system.center.hand(.willPresent(ticket: 3, Self.notification), reply: reply) == .handed)
        #expect(system.center.hand(.response(ticket: 4, Self.response), reply: reply) == .handed)
        #expect(system.center.hand(.openSettings(Self.notification), reply: reply) == .handed)
        #expect(delegate.heard.withLock { $0 } == ["willPresent lunch", "didReceive REPLY on my way bound: true", "openSettings lunch"])
        #expect(replies.withLock { $0 } == [
            .willPresentAnswer(ticket: 3, options: UNNotificationPresentationOptions([.banner, .list]).rawValue),
            .responseCompleted(ticket: 4),
        ])
    }
}
