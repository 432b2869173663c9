// Seed 003: scheduling, cancelling and updating notifications by identifier, removing delivered ones,
// the "saySomething" actionable category with a custom dismiss action, media attachments and a service
// extension. The Swift below is the seed's, with its alerts replaced by a log and its `delay` helper
// replaced by the test's manual clock.
import Foundation
import OpenUserNotifications
import OpenUserNotificationsTesting
import Synchronization
import Testing

enum UserNotificationCategoryType: String {
    case saySomething = "saySomethingCategory"
}

enum SaySomethingCategoryAction: String {
    case input = "action.input"
    case goodbye = "action.goodbye"
    case none = "action.cancel"
}

final class NotificationHandler: NSObject, UNUserNotificationCenterDelegate {
    let said = LogBook()

    @available(*, deprecated, message: "The seed's code asks for the deprecated .alert option.")
    func userNotificationCenter(_ center: UNUserNotificationCenter,
                                willPresent notification: UNNotification,
                                withCompletionHandler completionHandler: @escaping (UNNotificationPresentationOptions) -> Void)
    {
        completionHandler([.alert, .sound])
        // 如果不想显示某个通知，可以直接用空 options 调用 completionHandler:
        // completionHandler([])
    }

    func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse, withCompletionHandler completionHandler: @escaping () -> Void) {
        if let category = UserNotificationCategoryType(rawValue: response.notification.request.content.categoryIdentifier) {
            switch category {
            case .saySomething:
                handleSaySomthing(response: response)
            }
        }
        completionHandler()
    }

    private func handleSaySomthing(response: UNNotificationResponse) {
        let text: String
        if let actionType = SaySomethingCategoryAction(rawValue: response.actionIdentifier) {
            switch actionType {
            case .input: text = (response as! UNTextInputNotificationResponse).userText
            case .goodbye: text = "再见"
            case .none: text = ""
            }
        } else {
            text = ""
        }
        if !text.isEmpty {
            said.append("你刚刚说：\(text)")
        }
    }

    func registerNotificationCategory() {
        let saySomethingCategory: UNNotificationCategory = {
            let inputAction = UNTextInputNotificationAction(
                identifier: "action.input",
                title: "输入",
                options: [.foreground],
                textInputButtonTitle: "发送",
                textInputPlaceholder: "你想说什么...")
            let goodbyeAction = UNNotificationAction(
                identifier: "action.goodbye",
                title: "再见",
                options: [.foreground])
            let cancelAction = UNNotificationAction(
                identifier: "action.cancel",
                title: "取消",
                options: [.destructive])
            return UNNotificationCategory(identifier:"saySomethingCategory", actions: [inputAction, goodbyeAction, cancelAction], intentIdentifiers: [], options: [.customDismissAction])
        }()
        UNUserNotificationCenter.current().setNotificationCategories([saySomethingCategory])
    }
}

class NotificationService: UNNotificationServiceExtension {
    var contentHandler: ((UNNotificationContent) -> Void)?
    var bestAttemptContent: UNMutableNotificationContent?

    override func didReceive(_ request: UNNotificationRequest, withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void) {
        self.contentHandler = contentHandler
        bestAttemptContent = (request.content.mutableCopy() as? UNMutableNotificationContent)
        if let bestAttemptContent = bestAttemptContent {
            if request.identifier == "mutableContent" {
                bestAttemptContent.body = "\(bestAttemptContent.body), 科比·布莱恩特"
            }
            contentHandler(bestAttemptContent)
        }
    }

    override func serviceExtensionTimeWillExpire() {
        if let contentHandler = contentHandler, let bestAttemptContent =  bestAttemptContent {
            contentHandler(bestAttemptContent)
        }
    }
}

@Suite struct Seed003ManageAndActionableTests {
    /// An authorized app in the background, so notifications land in the notification center.
    private func authorizedHarness(appState: SimulatedAppState = .background) async throws -> NotificationTestHarness {
        let harness = NotificationTestHarness(appState: appState)
        harness.person.willAnswerAuthorization(allow: true)
        _ = try await harness.center.requestAuthorization(options: [.alert, .sound, .badge])
        return harness
    }

    private var title1Content: UNNotificationContent {
        let content = UNMutableNotificationContent()
        content.title = "时间戳通知"
        content.body = "我的第一条通知"
        return content
    }

    @Test func firstNotificationIsScheduledAndFiresAfterFiveSeconds() async throws {
        let harness = try await authorizedHarness()
        try await harness.run { _ in
            // 1. 创建通知内容
            let content = UNMutableNotificationContent()
            content.title = "时间戳通知"
            content.body = "我的第一条通知"
            // 2. 创建发送触发器
            let trigger = UNTimeIntervalNotificationTrigger(timeInterval: 5, repeats: false)
            // 3. 发送请求标识符
            let requestIdentifier = "com.onevcat.usernotification.myFirstNotification"
            // 4. 创建一个发送请求
            let request = UNNotificationRequest(identifier: requestIdentifier, content: content, trigger: trigger)
            // 将请求添加到发送中心
            let added = Mutex(false)
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                UNUserNotificationCenter.current().add(request) { error in
                    if error == nil {
                        added.withLock { $0 = true }
                        continuation.resume()
                    } else {
                        continuation.resume(throwing: error!)
                    }
                }
            }
            #expect(added.withLock { $0 })
        }
        await harness.clock.advance(by: 4)
        #expect(await harness.center.deliveredNotifications().isEmpty)
        await harness.clock.advance(by: 1)
        let delivered = await harness.center.deliveredNotifications()
        #expect(delivered.map(\.request.identifier) == ["com.onevcat.usernotification.myFirstNotification"])
        #expect(delivered.first?.date == harness.clock.now)
    }

    @Test func pendingRequestRemovedAfterTwoSecondsNeverFires() async throws {
        let harness = try await authorizedHarness()
        try await harness.run { _ in
            let trigger = UNTimeIntervalNotificationTrigger(timeInterval: 3, repeats: false)
            let identifier = "pendingRemoval"
            let request = UNNotificationRequest(identifier: identifier, content: title1Content, trigger: trigger)
            try await UNUserNotificationCenter.current().add(request)
            await harness.clock.advance(by: 2)
            UNUserNotificationCenter.current().removePendingNotificationRequests(withIdentifiers: [identifier])
        }
        #expect(await harness.center.pendingNotificationRequests().isEmpty)
        await harness.clock.advance(by: 10)
        #expect(harness.history.presentations.isEmpty)
        #expect(await harness.center.deliveredNotifications().isEmpty)
    }

    @Test func deliveredNotificationRemovedAfterFourSeconds() async throws {
        let harness = try await authorizedHarness()
        let identifier = "com.onevcat.usernotification.notificationWillBeRemovedAfterDisplayed"
        try await harness.run { _ in
            let trigger = UNTimeIntervalNotificationTrigger(timeInterval: 3, repeats: false)
            let request = UNNotificationRequest(identifier: identifier, content: title1Content, trigger: trigger)
            try await UNUserNotificationCenter.current().add(request)
        }
        await harness.clock.advance(by: 3)
        #expect(await harness.center.deliveredNotifications().map(\.request.identifier) == [identifier])
        await harness.clock.advance(by: 1)
        await harness.run { _ in
            UNUserNotificationCenter.current().removeDeliveredNotifications(withIdentifiers: [identifier])
        }
        #expect(await harness.center.deliveredNotifications().isEmpty)
        #expect(await harness.visibleNotifications.isEmpty)
    }

    @Test func readdingThePendingIdentifierUpdatesIt() async throws {
        let harness = try await authorizedHarness()
        let identifier = "update"
        let title2Content = UNMutableNotificationContent()
        title2Content.title = "更新后的通知"
        try await harness.run { center in
            try await center.add(UNNotificationRequest(identifier: identifier, content: title1Content,
                                                       trigger: UNTimeIntervalNotificationTrigger(timeInterval: 3, repeats: false)))
            await harness.clock.advance(by: 2)
            let newTrigger = UNTimeIntervalNotificationTrigger(timeInterval: 1, repeats: false)
            let newRequest = UNNotificationRequest(identifier: identifier, content: title2Content, trigger: newTrigger)
            try await center.add(newRequest)
        }
        #expect(await harness.center.pendingNotificationRequests().map(\.content.title) == ["更新后的通知"])
        await harness.clock.advance(by: 10)
        #expect(harness.history.presentations.map(\.notification.request.content.title) == ["更新后的通知"])
        #expect(harness.history.presentations.first?.notification.date == harness.clock.now.addingTimeInterval(-9))
    }

    @Test func readdingADeliveredIdentifierReplacesTheDeliveredNotification() async throws {
        let harness = try await authorizedHarness()
        let identifier = "score"
        let content = UNMutableNotificationContent()
        content.title = "1 : 0"
        try await harness.center.add(UNNotificationRequest(identifier: identifier, content: content, trigger: nil))
        content.title = "1 : 1"
        try await harness.center.add(UNNotificationRequest(identifier: identifier, content: content,
                                                           trigger: UNTimeIntervalNotificationTrigger(timeInterval: 1, repeats: false)))
        #expect(await harness.center.deliveredNotifications().map(\.request.content.title) == ["1 : 0"],
                "the delivered one stays until the new one fires")
        await harness.clock.advance(by: 1)
        #expect(await harness.center.deliveredNotifications().map(\.request.content.title) == ["1 : 1"])
    }

    @Test func saySomethingCategoryRoutesEveryChoice() async throws {
        let harness = try await authorizedHarness()
        let handler = NotificationHandler()
        await harness.run { center in
            center.delegate = handler
            handler.registerNotificationCategory()
        }
        func show(_ identifier: String) async throws {
            let content = UNMutableNotificationContent()
            content.body = "Please say something"
            content.categoryIdentifier = "saySomethingCategory"
            try await harness.center.add(UNNotificationRequest(identifier: identifier, content: content, trigger: nil))
        }
        try await show("1")
        try await harness.person.reply("晚安", withAction: "action.input", on: "1")
        try await show("2")
        try await harness.person.chooseAction("action.goodbye", on: "2")
        try await show("3")
        try await harness.person.chooseAction("action.cancel", on: "3")
        try await show("4")
        try await harness.person.dismiss("4")
        let responses = try await harness.history.waitForResponses(4)
        #expect(responses.map(\.actionIdentifier) == ["action.input", "action.goodbye", "action.cancel", UNNotificationDismissActionIdentifier])
        await harness.settle()
        #expect(handler.said.lines == ["你刚刚说：晚安", "你刚刚说：再见"])
        #expect(await harness.center.deliveredNotifications().isEmpty, "acting on a notification takes it out of the list")
    }

    @Test func mediaAttachmentFromTheBundle() async throws {
        let harness = try await authorizedHarness()
        let content = UNMutableNotificationContent()
        content.title = "精彩瞬间"
        content.body = "科比·布莱恩特！夺冠时刻！"
        if let imageURL = Bundle.module.url(forResource: "image", withExtension: "jpg", subdirectory: "Fixtures"),
           let attachment = try? UNNotificationAttachment(identifier: "imageAttachment", url: imageURL, options: nil)
        {
            content.attachments = [attachment]
        }
        try await harness.center.add(UNNotificationRequest(identifier: "media", content: content, trigger: nil))
        let delivered = try #require(await harness.center.deliveredNotifications().first)
        #expect(delivered.request.content.attachments.map(\.type) == ["public.jpeg"])
    }

    @Test func serviceExtensionModifiesTheContent() async throws {
        let service = NotificationService()
        let content = UNMutableNotificationContent()
        content.title = "Image Notification"
        content.body = "Show me an image from web!"
        let request = UNNotificationRequest(identifier: "mutableContent", content: content, trigger: nil)
        let delivered = Mutex<UNNotificationContent?>(nil)
        service.didReceive(request) { newContent in delivered.withLock { $0 = newContent } }
        #expect(delivered.withLock { $0?.body } == "Show me an image from web!, 科比·布莱恩特")
        #expect(request.content.body == "Show me an image from web!", "the request's own content is untouched")
        service.serviceExtensionTimeWillExpire()
        #expect(delivered.withLock { $0?.body } == "Show me an image from web!, 科比·布莱恩特")
    }
}
