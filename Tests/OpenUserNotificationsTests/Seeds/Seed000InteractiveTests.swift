// Seed 000: foreground presentation, a TODO category with a "done" button and a text input, the
// delegate's response handling, and the in-app settings shortcut. The Swift below is the seed's own
// code, with its UIKit presentation replaced by a log the test can read.
import Foundation
import OpenUserNotifications
import OpenUserNotificationsTesting
import Synchronization
import Testing

final class TodoViewController: NSObject, Sendable {
    let log = LogBook()
    func record(_ line: String) { log.append(line) }
}

extension TodoViewController: UNUserNotificationCenterDelegate {
    func userNotificationCenter(_ center: UNUserNotificationCenter,
                                willPresent notification: UNNotification,
                                withCompletionHandler completionHandler: @escaping (UNNotificationPresentationOptions) -> Void) {
        // 指定前台展示通知的方式
        completionHandler([.banner, .sound])
    }

    func userNotificationCenter(_ center: UNUserNotificationCenter,
                                didReceive response: UNNotificationResponse,
                                withCompletionHandler completionHandler: @escaping () -> Void) {

        switch response.actionIdentifier {
        case UNNotificationDefaultActionIdentifier:
            record("用户点击了通知本体")

        case "MARK_DONE":
            record("用户点击了“完成”按钮")

        case "SNOOZE":
            record("用户点击了“稍后提醒”按钮")

        default:
            break
        }

        if let textResponse = response as? UNTextInputNotificationResponse {
            let userText = textResponse.userText
            record("用户输入了：\(userText)")
            // 这里可以处理用户的回复内容，比如发送消息
        }

        // 告诉系统处理完成
        completionHandler()
    }

    func userNotificationCenter(_ center: UNUserNotificationCenter, openSettingsFor notification: UNNotification?) {
        // App内跳转设置页
        record("openSettingsFor \(notification?.request.identifier ?? "nil")")
    }

    func registerTodoCategory() {
        let doneAction = UNNotificationAction(
            identifier: "MARK_DONE",
            title: "完成",
            options: [.authenticationRequired]
        )

        let inputAction = UNTextInputNotificationAction(
            identifier: "INPUT",
            title: "输入框",
            options: [.authenticationRequired, .foreground]
        )

        let category = UNNotificationCategory(
            identifier: "TODO_CATEGORY",
            actions: [doneAction, inputAction],
            intentIdentifiers: [],
            options: []
        )

        // 注册分类，必须调用，否则按钮不会显示
        UNUserNotificationCenter.current().setNotificationCategories([category])
    }

    func requestAuthorization() {
        UNUserNotificationCenter.current().requestAuthorization(
            options: [.alert, .sound, .badge, .providesAppNotificationSettings]) { granted, error in

        }
    }

    func scheduleDailyReminder() {
        let content = UNMutableNotificationContent()
        content.title = "📌 每日提醒"
        content.body = "别忘了写日报！"
        content.categoryIdentifier = "TODO_CATEGORY" // 必须与分类 identifier 一致
        content.sound = UNNotificationSound.default
        let trigger = UNTimeIntervalNotificationTrigger(timeInterval: 60, repeats: false)
        let request = UNNotificationRequest(identifier: "daily-report", content: content, trigger: trigger)
        UNUserNotificationCenter.current().setNotificationCategories([])
        registerTodoCategory()
        UNUserNotificationCenter.current().add(request) // ⚠️ on iOS the buttons may be missing the first time
    }
}

@Suite struct Seed000InteractiveTests {
    /// Sets up the seed's app: delegate, authorization (allowed by the person), categories, one request.
    private func launch(_ harness: NotificationTestHarness) async throws -> TodoViewController {
        let controller = TodoViewController()
        harness.person.willAnswerAuthorization(allow: true)
        await harness.run { center in
            center.delegate = controller
            controller.requestAuthorization()
        }
        try await harness.history.waitFor { if case .authorizationCompleted(true) = $0 { true } else { false } }
        await harness.run { _ in controller.scheduleDailyReminder() }
        await harness.settle()
        #expect(await harness.center.pendingNotificationRequests().map(\.identifier) == ["daily-report"])
        return controller
    }

    @Test func foregroundNotificationShowsAsBannerWithSoundButNotInTheList() async throws {
        let harness = NotificationTestHarness()
        let controller = try await launch(harness)
        await harness.clock.advance(by: 60)

        #expect(harness.history.willPresentQuestions.map(\.request.identifier) == ["daily-report"])
        let presented = try #require(harness.history.presentations.last)
        #expect(presented.presentation == NotificationPresentation(banner: true, sound: true))
        let delivered = await harness.center.deliveredNotifications()
        #expect(delivered.isEmpty, "[.banner, .sound] without .list keeps it out of the notification center")
        withExtendedLifetime(controller) {}
    }

    @Test func registeredCategoryActionsShowOnTheFirstRun() async throws {
        let harness = NotificationTestHarness()
        let controller = try await launch(harness)
        await harness.clock.advance(by: 60)
        let visible = try #require(await harness.visibleNotifications.first)
        #expect(visible.actions.map(\.identifier) == ["MARK_DONE", "INPUT"])
        #expect(visible.actions[1] is UNTextInputNotificationAction)
        withExtendedLifetime(controller) {}
    }

    @Test func tappingDoneAndReplyingReachTheDelegate() async throws {
        let harness = NotificationTestHarness()
        let controller = try await launch(harness)
        await harness.app.moveToBackground()
        await harness.clock.advance(by: 60)
        #expect(harness.history.presentations.last?.presentation.list == true)

        try await harness.person.chooseAction("MARK_DONE", on: "daily-report")
        try await harness.history.waitFor { if case .didReceiveCompleted = $0 { true } else { false } }
        #expect(controller.log.lines == ["用户点击了“完成”按钮"])

        let content = UNMutableNotificationContent()
        content.title = "again"
        content.categoryIdentifier = "TODO_CATEGORY"
        try await harness.center.add(UNNotificationRequest(identifier: "again", content: content, trigger: nil))
        try await harness.person.reply("写完了", withAction: "INPUT", on: "again")
        let responses = try await harness.history.waitForResponses(2)
        let reply = try #require(responses[1] as? UNTextInputNotificationResponse)
        #expect(reply.userText == "写完了")
        #expect(reply.actionIdentifier == "INPUT")
        #expect(harness.app.state == .foreground, "INPUT is a .foreground action")
        try await harness.history.waitFor { if case .didReceiveCompleted(let r) = $0 { r.actionIdentifier == "INPUT" } else { false } }
        #expect(controller.log.lines == ["用户点击了“完成”按钮", "用户输入了：写完了"])
    }

    @Test func openSettingsReachesTheDelegate() async throws {
        let harness = NotificationTestHarness()
        let controller = try await launch(harness)
        try await harness.person.openAppNotificationSettings()
        try await harness.history.waitFor { if case .openSettings = $0 { true } else { false } }
        await harness.settle()
        #expect(controller.log.lines == ["openSettingsFor nil"])
    }
}
