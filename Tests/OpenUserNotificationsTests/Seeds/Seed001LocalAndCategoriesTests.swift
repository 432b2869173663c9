// Seed 001: registering two categories (three buttons; one text input), checking the settings before
// asking, a local notification with an image attachment, a sound and a 1-second trigger, and a delegate
// that tells text-input responses apart. The seed is Objective-C; this is the same code in Swift, with
// its alerts replaced by a log the test can read.
import Foundation
import OpenUserNotifications
import OpenUserNotificationsTesting
import Synchronization
import Testing

final class Seed001AppDelegate: NSObject, UNUserNotificationCenterDelegate {
    let log = LogBook()
    func record(_ line: String) { log.append(line) }

    func didFinishLaunching() {
        let center = UNUserNotificationCenter.current()
        center.setNotificationCategories(createNotificationCategoryActions())
        center.delegate = self
        center.getNotificationSettings { settings in
            if settings.authorizationStatus == .notDetermined {
                center.requestAuthorization(options: [.alert, .badge, .sound]) { granted, error in
                    self.record(granted ? "granted" : "not granted")
                }
            } else {
                self.record("do other things")
            }
        }
    }

    func createNotificationCategoryActions() -> Set<UNNotificationCategory> {
        let action1 = UNNotificationAction(identifier: "action1", title: "操作一", options: [.destructive, .foreground])
        let action2 = UNNotificationAction(identifier: "action2", title: "操作二", options: [.destructive, .foreground])
        let action3 = UNNotificationAction(identifier: "action3", title: "操作三", options: [.destructive, .foreground])
        let inputAction = UNTextInputNotificationAction(identifier: "text", title: "输入框", options: [.authenticationRequired, .destructive, .foreground])
        let category1 = UNNotificationCategory(identifier: "category1", actions: [action1, action2, action3], intentIdentifiers: ["action1", "action2", "action3"], options: [])
        let category2 = UNNotificationCategory(identifier: "category2", actions: [inputAction], intentIdentifiers: ["text"], options: [])
        return [category1, category2]
    }

    @available(*, deprecated, message: "The seed's code asks for the deprecated .alert option.")
    func userNotificationCenter(_ center: UNUserNotificationCenter, willPresent notification: UNNotification, withCompletionHandler completionHandler: @escaping (UNNotificationPresentationOptions) -> Void) {
        if notification.request.trigger is UNPushNotificationTrigger {
            record("iOS10 收到远程通知")
        } else {
            record("iOS10 收到本地通知")
        }
        completionHandler([.badge, .sound, .alert])
    }

    func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse, withCompletionHandler completionHandler: @escaping () -> Void) {
        if let textResponse = response as? UNTextInputNotificationResponse {
            record("文本框输入 \(textResponse.userText)")
        } else {
            record("\(response.actionIdentifier) \(response.notification.request.content.body)")
        }
        completionHandler()
    }

    func createOneLocalNotification(imageURL: URL) {
        let content = UNMutableNotificationContent()
        content.title = "标题"
        content.subtitle = "副标题"
        content.body = "这里是通知内容"
        content.badge = 0
        do {
            let imgAttachment = try UNNotificationAttachment(identifier: "att1", url: imageURL, options: nil)
            content.attachments = [imgAttachment]
        } catch {
            record("\(error)")
        }
        content.launchImageName = ""
        content.sound = UNNotificationSound(named: UNNotificationSoundName("sound.wav"))
        let timeTrigger = UNTimeIntervalNotificationTrigger(timeInterval: 1, repeats: false)
        let requestIdentifer = "requestIdentifer"
        content.categoryIdentifier = "category1"
        let request = UNNotificationRequest(identifier: requestIdentifer, content: content, trigger: timeTrigger)
        UNUserNotificationCenter.current().add(request) { error in
            self.record("added \(error.map { "\($0)" } ?? "nil")")
        }
    }
}

@Suite struct Seed001LocalAndCategoriesTests {
    let imageURL = Bundle.module.url(forResource: "image1", withExtension: "png", subdirectory: "Fixtures")!

    private func launch(_ harness: NotificationTestHarness, _ app: Seed001AppDelegate) async throws {
        harness.person.willAnswerAuthorization(allow: true)
        await harness.run { _ in app.didFinishLaunching() }
        try await harness.history.waitFor { if case .authorizationCompleted = $0 { true } else { false } }
        await harness.settle()
    }

    @Test func asksOnlyWhenNotDeterminedAndRegistersBothCategories() async throws {
        let harness = NotificationTestHarness()
        let app = Seed001AppDelegate()
        try await launch(harness, app)
        #expect(app.log.lines == ["granted"])

        let categories = await harness.center.notificationCategories()
        #expect(Set(categories.map(\.identifier)) == ["category1", "category2"])
        let category1 = try #require(categories.first { $0.identifier == "category1" })
        #expect(category1.actions.map(\.identifier) == ["action1", "action2", "action3"])
        #expect(category1.actions.allSatisfy { $0.options == [.destructive, .foreground] })
        #expect(category1.intentIdentifiers == ["action1", "action2", "action3"])

        // A second launch finds the stored answer and does not ask again.
        await harness.run { _ in app.didFinishLaunching() }
        await harness.settle()
        #expect(app.log.lines == ["granted", "do other things"])
        let prompts = harness.history.events.filter { if case .authorizationPromptShown = $0 { true } else { false } }
        #expect(prompts.count == 1)
    }

    @Test func localNotificationWithAttachmentFiresAfterOneSecond() async throws {
        let harness = NotificationTestHarness()
        let app = Seed001AppDelegate()
        try await launch(harness, app)
        await harness.run { _ in app.createOneLocalNotification(imageURL: imageURL) }
        await harness.settle()
        #expect(app.log.lines.last == "added nil")

        let pending = try #require(await harness.center.pendingNotificationRequests().first)
        let attachment = try #require(pending.content.attachments.first)
        #expect(attachment.identifier == "att1")
        #expect(attachment.type == "public.png")
        #expect(attachment.url != imageURL.standardizedFileURL, "the system keeps its own copy")
        #expect(FileManager.default.contentsEqual(atPath: attachment.url.path, andPath: imageURL.path))

        await harness.clock.advance(by: 0.999)
        #expect(harness.history.willPresentQuestions.isEmpty)
        await harness.clock.advance(by: 0.001)
        #expect(harness.history.willPresentQuestions.map(\.request.identifier) == ["requestIdentifer"])
        #expect(app.log.lines.last == "iOS10 收到本地通知")

        // [.badge, .sound, .alert]: banner and list, the named sound, and badge 0 (cleared).
        let shown = try #require(harness.history.presentations.last)
        #expect(shown.presentation == NotificationPresentation(banner: true, list: true, sound: true, badge: 0))
        let delivered = await harness.center.deliveredNotifications()
        #expect(delivered.map(\.request.content.subtitle) == ["副标题"])
        #expect(delivered.first?.request.content.sound == UNNotificationSound(named: UNNotificationSoundName("sound.wav")))
    }

    @Test func textInputResponsesAreTextInputResponses() async throws {
        let harness = NotificationTestHarness(appState: .background)
        let app = Seed001AppDelegate()
        try await launch(harness, app)
        let content = UNMutableNotificationContent()
        content.body = "please reply"
        content.categoryIdentifier = "category2"
        try await harness.center.add(UNNotificationRequest(identifier: "ask", content: content, trigger: nil))
        try await harness.person.reply("你好", withAction: "text", on: "ask")
        try await harness.history.waitForResponses(1)

        try await harness.center.add(UNNotificationRequest(identifier: "ask", content: content, trigger: nil))
        try await harness.person.tap("ask")
        try await harness.history.waitForResponses(2)
        try await harness.history.waitFor { if case .didReceiveCompleted(let r) = $0 { r.actionIdentifier == UNNotificationDefaultActionIdentifier } else { false } }
        // The text action is a .foreground one, so the second notification arrives in the foreground.
        #expect(app.log.lines.suffix(3) == ["文本框输入 你好", "iOS10 收到本地通知", "\(UNNotificationDefaultActionIdentifier) please reply"])
    }
}
