// Seed 002: interactive notifications with the iOS 8 API (UIUserNotificationAction, categories per
// context, UIUserNotificationSettings, UILocalNotification, and the app delegate's
// handleActionWithIdentifier methods). The app delegate below is the seed's Objective-C in Swift, line
// by line, as an iOS app in Swift writes it; it builds against the shim, which brings UIKit's names.
import Foundation
import OpenUserNotificationsShim
import OpenUserNotificationsTesting
import TestSupport
import Testing

final class Seed002AppDelegate: UIResponder, UIApplicationDelegate {
    let log = LogBook()
    /// The network request the handler waits for before it calls its completion handler.
    let network = Gate()

    func registerForInvitations(_ application: UIApplication) {
        let acceptAction = UIMutableUserNotificationAction()
        // 回调时按钮的ID
        acceptAction.identifier = "ACCEPT_IDENTIFIER"
        // 按钮title(Facebook使用了emoji)
        acceptAction.title = "Accept"
        // UIUserNotificationActivationModeBackground: APP会在后台启动
        acceptAction.activationMode = .background
        // YES为红色，NO为蓝色
        acceptAction.isDestructive = false
        // 是否需要解锁
        acceptAction.isAuthenticationRequired = true

        let category = UIMutableUserNotificationCategory()
        // 消息的ID(区分服务器推送过来时消息的种类)
        category.identifier = "INVITE_CATEGORY"
        // Alert形式展现的推送
        category.setActions([acceptAction], for: .default)
        // Banner/锁屏形式展现的推送
        category.setActions([acceptAction], for: .minimal)

        let settings = UIUserNotificationSettings(types: [.alert, .badge, .sound], categories: [category])
        application.registerUserNotificationSettings(settings)
    }

    func application(_ application: UIApplication, didRegister notificationSettings: UIUserNotificationSettings) {
        log.append("registered \(notificationSettings.types.rawValue)")
    }

    func application(_ application: UIApplication, didReceive notification: UILocalNotification) {
        log.append("received \(notification.alertBody ?? "")")
    }

    // 当收到推送时，会调用这两个方法
    func application(_ application: UIApplication, handleActionWithIdentifier identifier: String?,
                     forRemoteNotification userInfo: [AnyHashable: Any], completionHandler: @escaping () -> Void) {
        let aps = userInfo["aps"] as? [String: Any]
        log.append("remote \(identifier ?? "") \(aps?["alert"] as? String ?? "")")
        // 在网络请求结束后再调用`completionHandler()`
        Task {
            await network.wait()
            log.append("remote done")
            completionHandler()
        }
    }

    func application(_ application: UIApplication, handleActionWithIdentifier identifier: String?,
                     for notification: UILocalNotification, completionHandler: @escaping () -> Void) {
        log.append("local \(identifier ?? "") \(notification.alertBody ?? "") \(notification.userInfo?["invitation"] as? Int ?? 0)")
        Task {
            await network.wait()
            log.append("local done")
            completionHandler()
        }
    }
}

/// An app delegate of iOS 9 that takes typed replies, and one that never calls its completion handler.
final class ReplyingAppDelegate: UIResponder, UIApplicationDelegate {
    let log = LogBook()
    var completes = true

    func application(_ application: UIApplication, handleActionWithIdentifier identifier: String?, for notification: UILocalNotification,
                     withResponseInfo responseInfo: [AnyHashable: Any], completionHandler: @escaping () -> Void) {
        log.append("\(identifier ?? "") \(responseInfo[UIUserNotificationActionResponseTypedTextKey] as? String ?? "-")")
        if completes { completionHandler() }
    }
}

/// Something asynchronous the test finishes when it chooses: the seed's network request.
final class Gate: Sendable {
    private let state = LockedState()

    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            if !state.park(continuation) { continuation.resume() }
        }
    }

    func open() { state.open().forEach { $0.resume() } }

    private final class LockedState: Sendable {
        private let mutex = Mutex<(open: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))
        func park(_ continuation: CheckedContinuation<Void, Never>) -> Bool {
            mutex.withLock { state in
                guard !state.open else { return false }
                state.waiting.append(continuation)
                return true
            }
        }
        func open() -> [CheckedContinuation<Void, Never>] {
            mutex.withLock { state in
                state.open = true
                defer { state.waiting = [] }
                return state.waiting
            }
        }
    }
}

import Synchronization

/// `UIApplication.shared` is one per process: these tests take turns with every other test that uses it.
@Suite(.serialized) struct Seed002InteractiveIOS8Tests {
    /// Runs `body` with the seed's app delegate registered on a fresh harness, the person allowing.
    func withSeedApp(
        appState: SimulatedAppState = .background, _ body: @escaping @Sendable (NotificationTestHarness, Seed002AppDelegate) async throws -> Void
    ) async throws {
        try await SharedApplicationLock.withLock {
            let harness = NotificationTestHarness(timeZone: TimeZone(identifier: "UTC")!, appState: appState)
            harness.person.willAnswerAuthorization(allow: true)
            let appDelegate = await Seed002AppDelegate()
            try await harness.run { _ in
                await MainActor.run {
                    UIApplication.shared.delegate = appDelegate
                    appDelegate.registerForInvitations(UIApplication.shared)
                }
                #expect(await appDelegate.log.waitForLines(1))
                try await body(harness, appDelegate)
            }
            await MainActor.run { UIApplication.shared.delegate = nil }
        }
    }

    @Test func theSeedsRegistrationAsksThePersonAndGivesTheCategoryItsAcceptButton() async throws {
        try await withSeedApp { harness, appDelegate in
            #expect(appDelegate.log.lines == ["registered 7"])
            #expect(harness.history.events.contains { if case .authorizationPromptShown(let options) = $0 { options == [.alert, .badge, .sound] } else { false } })
            let current = await MainActor.run { UIApplication.shared.currentUserNotificationSettings }
            #expect(current?.types == [.alert, .badge, .sound])
            #expect(current?.categories?.first?.identifier == "INVITE_CATEGORY")
            let categories = await harness.center.notificationCategories()
            let invite = try #require(categories.first { $0.identifier == "INVITE_CATEGORY" })
            #expect(invite.actions.map(\.identifier) == ["ACCEPT_IDENTIFIER"])
            #expect(invite.actions.first?.title == "Accept")
            // Background activation, not destructive, unlocking first.
            #expect(invite.actions.first?.options == [.authenticationRequired])
        }
    }

    /// The seed's discussion: two buttons at most in the minimal context (a banner, the lock screen),
    /// four in the default one (an alert), top to bottom; activation and destruction become options.
    @Test func eachContextShowsItsOwnButtonsUpToItsLimit() async throws {
        try await SharedApplicationLock.withLock {
            let harness = try await NotificationTestHarness.authorized()
            try await harness.run { center in
                await MainActor.run {
                    @MainActor func action(_ identifier: String, _ mode: UIUserNotificationActivationMode = .background, destructive: Bool = false) -> UIUserNotificationAction {
                        let action = UIMutableUserNotificationAction()
                        action.identifier = identifier
                        action.title = identifier.capitalized
                        action.activationMode = mode
                        action.isDestructive = destructive
                        return action
                    }
                    let category = UIMutableUserNotificationCategory()
                    category.identifier = "MANY"
                    category.setActions([action("one"), action("two", .foreground), action("three"), action("four"), action("five")], for: .default)
                    category.setActions([action("delete", destructive: true), action("two", .foreground), action("three")], for: .minimal)
                    #expect(category.actions(for: .default)?.count == 5)
                    #expect(category.actions(for: .minimal)?.map(\.identifier) == ["delete", "two", "three"])
                    UIApplication.shared.registerUserNotificationSettings(UIUserNotificationSettings(types: [.alert], categories: [category]))
                }
                let many = try #require(await center.notificationCategories().first { $0.identifier == "MANY" })
                // The minimal context's two come first (a banner shows two), then the default's, four in all.
                #expect(many.actions.map(\.identifier) == ["delete", "two", "one", "three"])
                #expect(many.actions.map(\.options) == [[.destructive], [.foreground], [], []])
                try await harness.add("m", category: "MANY")
                let shown = try #require(await harness.visibleNotifications.first)
                #expect(shown.actions.prefix(2).map(\.identifier) == ["delete", "two"])
            }
            await MainActor.run { UIApplication.shared.delegate = nil }
        }
    }

    @Test func theAcceptButtonOnALocalNotificationReachesTheHandlerWhichMayAnswerAfterANetworkRequest() async throws {
        try await withSeedApp { harness, appDelegate in
            let fireDate = harness.clock.now.addingTimeInterval(60)
            let scheduled = await MainActor.run {
                let notification = UILocalNotification()
                notification.fireDate = fireDate
                notification.timeZone = TimeZone(identifier: "UTC")
                notification.alertBody = "You’re invited!"
                notification.category = "INVITE_CATEGORY"
                notification.userInfo = ["invitation": 42]
                UIApplication.shared.scheduleLocalNotification(notification)
                return notification
            }
            await harness.settle()
            let listed = try #require(await MainActor.run { UIApplication.shared.scheduledLocalNotifications })
            #expect(listed.count == 1)
            #expect(await MainActor.run { listed.first == scheduled })
            #expect(await MainActor.run { listed.first?.alertBody } == "You’re invited!")
            #expect(await MainActor.run { listed.first?.fireDate } == fireDate)

            await harness.clock.advance(by: 60)
            let shown = try #require(await harness.visibleNotifications.first)
            #expect(shown.actions.map(\.identifier) == ["ACCEPT_IDENTIFIER"])
            try await harness.person.chooseAction("ACCEPT_IDENTIFIER", on: shown.notification.request.identifier)
            #expect(await appDelegate.log.waitForLines(2))
            #expect(appDelegate.log.lines.last == "local ACCEPT_IDENTIFIER You’re invited! 42")
            // Not done until the handler calls back, after its network request.
            #expect(!harness.history.events.contains { if case .didReceiveCompleted = $0 { true } else { false } })
            appDelegate.network.open()
            try await harness.history.waitFor { if case .didReceiveCompleted = $0 { true } else { false } }
            #expect(appDelegate.log.lines.last == "local done")
        }
    }

    /// Seed 002's remote notification: `{"aps":{"alert":"You’re invited!","category":"INVITE_CATEGORY"}}`.
    @Test func acceptOnAPushWithTheCategoryReachesTheRemoteHandler() async throws {
        try await withSeedApp { harness, appDelegate in
            appDelegate.network.open()
            try await harness.receivePush(#"{"aps":{"alert":"You’re invited!","category":"INVITE_CATEGORY"}}"#, apnsID: "invite-1")
            await harness.settle()
            let shown = try #require(await harness.visibleNotifications.first)
            #expect(shown.actions.map(\.identifier) == ["ACCEPT_IDENTIFIER"])
            try await harness.person.chooseAction("ACCEPT_IDENTIFIER", on: shown.notification.request.identifier)
            #expect(await appDelegate.log.waitForLines(3))
            #expect(appDelegate.log.lines.dropFirst() == ["remote ACCEPT_IDENTIFIER You’re invited!", "remote done"])
        }
    }

    @Test func inTheForegroundALocalNotificationIsHandedToTheAppAndNotShown() async throws {
        try await withSeedApp(appState: .foreground) { harness, appDelegate in
            await MainActor.run {
                let notification = UILocalNotification()
                notification.alertBody = "Now"
                UIApplication.shared.presentLocalNotificationNow(notification)
            }
            #expect(await appDelegate.log.waitForLines(2))
            #expect(appDelegate.log.lines.last == "received Now")
            await harness.settle()
            #expect(await harness.visibleNotifications.isEmpty)
        }
    }

    @Test func aTypedReplyReachesTheIOS9HandlerAndAHandlerNeverCalledIsReported() async throws {
        try await SharedApplicationLock.withLock {
            let harness = try await NotificationTestHarness.authorized()
            let appDelegate = await ReplyingAppDelegate()
            try await harness.run { _ in
                await MainActor.run {
                    let reply = UIMutableUserNotificationAction()
                    reply.identifier = "REPLY"
                    reply.title = "Reply"
                    reply.behavior = .textInput
                    // Answered in the background: the app stays there, and the next notification is shown.
                    reply.activationMode = .background
                    reply.parameters = [UIUserNotificationTextInputActionButtonTitleKey: "Send"]
                    let category = UIMutableUserNotificationCategory()
                    category.identifier = "CHAT"
                    category.setActions([reply], for: .default)
                    UIApplication.shared.delegate = appDelegate
                    UIApplication.shared.registerUserNotificationSettings(UIUserNotificationSettings(types: [.alert], categories: [category]))
                }
                let chat = try #require(await harness.center.notificationCategories().first { $0.identifier == "CHAT" })
                #expect((chat.actions.first as? UNTextInputNotificationAction)?.textInputButtonTitle == "Send")
                await MainActor.run {
                    let notification = UILocalNotification()
                    notification.alertBody = "Lunch?"
                    notification.category = "CHAT"
                    UIApplication.shared.presentLocalNotificationNow(notification)
                }
                await harness.settle()
                let first = try #require(await harness.visibleNotifications.first).notification.request.identifier
                try await harness.person.reply("at noon", withAction: "REPLY", on: first)
                #expect(await appDelegate.log.waitForLines(1))
                #expect(appDelegate.log.lines == ["REPLY at noon"])

                // A handler that never calls back: the system reports it once the time for a response is up.
                await MainActor.run {
                    appDelegate.completes = false
                    let notification = UILocalNotification()
                    notification.alertBody = "Dinner?"
                    notification.category = "CHAT"
                    UIApplication.shared.presentLocalNotificationNow(notification)
                }
                await harness.settle()
                let second = try #require(await harness.visibleNotifications.first { $0.notification.request.content.body == "Dinner?" }).notification.request.identifier
                try await harness.person.reply("at eight", withAction: "REPLY", on: second)
                #expect(await appDelegate.log.waitForLines(2))
                await harness.clock.advance(by: 31)
                try await harness.history.waitFor { if case .didReceiveNotCompleted = $0 { true } else { false } }
            }
            await MainActor.run { UIApplication.shared.delegate = nil }
        }
    }

    @Test func aDelegateOfUserNotificationsTakesPrecedenceOverTheIOS8Methods() async throws {
        try await withSeedApp { harness, appDelegate in
            let inbox = RecordingResponses()
            harness.center.delegate = inbox
            appDelegate.network.open()
            await MainActor.run {
                let notification = UILocalNotification()
                notification.alertBody = "Both"
                notification.category = "INVITE_CATEGORY"
                UIApplication.shared.presentLocalNotificationNow(notification)
            }
            await harness.settle()
            try await harness.person.chooseAction("ACCEPT_IDENTIFIER", on: try #require(harness.visibleNotifications.first).notification.request.identifier)
            try await harness.history.waitFor { if case .didReceiveCompleted = $0 { true } else { false } }
            #expect(inbox.identifiers == ["ACCEPT_IDENTIFIER"])
            #expect(appDelegate.log.lines == ["registered 7"])
            harness.center.delegate = nil
        }
    }

    @Test func localNotificationsBecomeTheTriggersAppleMapsThemTo() async throws {
        try await SharedApplicationLock.withLock {
            let harness = try await NotificationTestHarness.authorized()
            try await harness.run { center in
                let now = harness.clock.now  // 2026-01-01 00:00:00 UTC, a Thursday
                let paris = TimeZone(identifier: "Europe/Paris")!
                await MainActor.run {
                    @MainActor func schedule(_ name: String, _ interval: NSCalendar.Unit, _ zone: TimeZone?) {
                        let notification = UILocalNotification()
                        notification.alertBody = name
                        notification.fireDate = now.addingTimeInterval(90)
                        notification.timeZone = zone
                        notification.repeatInterval = interval
                        UIApplication.shared.scheduleLocalNotification(notification)
                    }
                    schedule("absolute", [], nil)
                    schedule("wall clock", [], paris)
                    schedule("daily", .day, paris)
                    schedule("weekly", .weekOfYear, paris)
                    schedule("yearly", .year, nil)
                    let regional = UILocalNotification()
                    regional.alertBody = "region"
                    regional.region = CLCircularRegion(center: CLLocationCoordinate2D(latitude: 48.85, longitude: 2.35), radius: 100, identifier: "paris")
                    regional.regionTriggersOnce = false
                    UIApplication.shared.scheduleLocalNotification(regional)
                    let content = UILocalNotification()
                    content.alertTitle = "Title"
                    content.alertBody = "content"
                    content.soundName = UILocalNotificationDefaultSoundName
                    content.applicationIconBadgeNumber = 3
                    content.alertLaunchImage = "Launch"
                    content.fireDate = now.addingTimeInterval(3600)
                    UIApplication.shared.scheduleLocalNotification(content)
                }
                await harness.settle()
                var byBody: [String: UNNotificationRequest] = [:]
                for request in await center.pendingNotificationRequests() { byBody[request.content.body] = request }
                #expect(byBody.count == 7)
                func components(_ name: String) -> (DateComponents?, Bool?) {
                    let trigger = byBody[name]?.trigger as? UNCalendarNotificationTrigger
                    return (trigger?.dateComponents, trigger?.repeats)
                }
                // No time zone: that instant, read in GMT.
                let (absolute, absoluteRepeats) = components("absolute")
                #expect(absolute?.timeZone?.identifier == "GMT" && absolute?.hour == 0 && absolute?.minute == 1 && absolute?.second == 30)
                #expect(absolute?.year == 2026 && absolute?.day == 1 && absoluteRepeats == false)
                // A time zone: the wall-clock time there, 01:01:30 in Paris.
                let (wallClock, _) = components("wall clock")
                #expect(wallClock?.timeZone == paris && wallClock?.hour == 1 && wallClock?.minute == 1)
                let (daily, dailyRepeats) = components("daily")
                #expect(daily?.day == nil && daily?.hour == 1 && daily?.minute == 1 && daily?.second == 30 && dailyRepeats == true)
                let (weekly, _) = components("weekly")
                #expect(weekly?.weekday == 5 && weekly?.hour == 1)
                let (yearly, _) = components("yearly")
                #expect(yearly?.month == 1 && yearly?.day == 1 && yearly?.year == nil)
                let location = byBody["region"]?.trigger as? UNLocationNotificationTrigger
                #expect(location?.region.identifier == "paris" && location?.repeats == true)
                let content = try #require(byBody["content"]).content
                #expect(content.title == "Title" && content.sound == .default && content.badge == 3 && content.launchImageName == "Launch")

                // Read back as iOS lists them, each with its date and zone.
                let listed = try #require(await MainActor.run { UIApplication.shared.scheduledLocalNotifications })
                let absoluteBack = try #require(await MainActor.run { listed.first { $0.alertBody == "absolute" } })
                #expect(await MainActor.run { absoluteBack.timeZone } == nil)
                #expect(await MainActor.run { absoluteBack.fireDate } == now.addingTimeInterval(90))
                let dailyBack = try #require(await MainActor.run { listed.first { $0.alertBody == "daily" } })
                #expect(await MainActor.run { dailyBack.repeatInterval } == .day)
                #expect(await MainActor.run { dailyBack.timeZone } == paris)
                await harness.clock.advance(by: 90)
                #expect(await harness.visibleNotifications.map(\.notification.request.content.body).sorted() == ["absolute", "daily", "wall clock", "weekly", "yearly"])
            }
            await MainActor.run { UIApplication.shared.delegate = nil }
        }
    }

    @Test func cancellingANotificationOrAllOfThemRemovesThem() async throws {
        try await withSeedApp { harness, _ in
            let (first, copy) = await MainActor.run {
                let notifications = (1...3).map { index in
                    let notification = UILocalNotification()
                    notification.fireDate = Date().addingTimeInterval(3600 * Double(index))
                    notification.alertBody = "reminder \(index)"
                    UIApplication.shared.scheduleLocalNotification(notification)
                    return notification
                }
                return (notifications[0], notifications[1].copy() as! UILocalNotification)
            }
            await harness.settle()
            #expect(await MainActor.run { UIApplication.shared.scheduledLocalNotifications?.count } == 3)
            await MainActor.run {
                UIApplication.shared.cancelLocalNotification(first)
                UIApplication.shared.cancelLocalNotification(copy)
            }
            await harness.settle()
            #expect(await MainActor.run { UIApplication.shared.scheduledLocalNotifications?.map(\.alertBody) } == ["reminder 3"])
            await MainActor.run { UIApplication.shared.cancelAllLocalNotifications() }
            await harness.settle()
            #expect(await MainActor.run { UIApplication.shared.scheduledLocalNotifications?.isEmpty } == true)
        }
    }
}

/// A `UNUserNotificationCenterDelegate` that notes the actions it receives.
final class RecordingResponses: NSObject, UNUserNotificationCenterDelegate, Sendable {
    private let received = Mutex<[String]>([])
    var identifiers: [String] { received.withLock { $0 } }

    func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse,
                                withCompletionHandler completionHandler: @escaping @Sendable () -> Void) {
        received.withLock { $0.append(response.actionIdentifier) }
        completionHandler()
    }
}
