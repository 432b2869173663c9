// Seed 001, §三: register for remote notifications once the person allowed notifications, log the
// device token or the failure, and answer a silent push with new data. The app delegate below is the
// seed's Objective-C in Swift, as an iOS app in Swift 6 writes it (UIKit's calls on the main actor);
// it builds against the shim, which brings the UIKit names on Linux.
import Foundation
import OpenUserNotificationsShim
import OpenUserNotificationsTesting
import TestSupport
import Testing

final class Seed001PushAppDelegate: UIResponder, UIApplicationDelegate {
    let log = LogBook()

    func application(_ application: UIApplication, didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]?) -> Bool {
        let center = UNUserNotificationCenter.current()
        let log = self.log
        center.getNotificationSettings { settings in
            if settings.authorizationStatus == .notDetermined {
                center.requestAuthorization(options: [.alert, .badge, .sound]) { granted, error in
                    if granted {
                        log.append("granted")
                        // 注册远程推送
                        Task { @MainActor in application.registerForRemoteNotifications() }
                    } else {
                        log.append("not granted")
                    }
                }
            } else {
                log.append("do other things")
            }
        }
        return true
    }

    // 注册deviceToken失败
    func application(_ application: UIApplication, didFailToRegisterForRemoteNotificationsWithError error: Error) {
        log.append("error=\(error)")
    }

    // 注册并成功获取deviceToken
    func application(_ application: UIApplication, didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data) {
        log.append("deviceToken=\(deviceToken.map { String(format: "%02x", $0) }.joined())")
    }

    // iOS10之后(静默通知)
    func application(_ application: UIApplication, didReceiveRemoteNotification userInfo: [AnyHashable: Any],
                     fetchCompletionHandler completionHandler: @escaping (UIBackgroundFetchResult) -> Void) {
        log.append("收到静默通知 \(userInfo["acme1"] as? String ?? "?")")
        completionHandler(.newData)
    }
}

/// An app delegate that implements only the `async` form.
final class AsyncFetchAppDelegate: UIResponder, UIApplicationDelegate {
    let log = LogBook()

    func application(_ application: UIApplication, didReceiveRemoteNotification userInfo: [AnyHashable: Any]) async -> UIBackgroundFetchResult {
        log.append("fetched \(userInfo["acme2"] as? Int ?? 0)")
        return .failed
    }
}

/// `UIApplication` is one per process, as on iOS: these tests take turns, with each other and with
/// every other test that uses it (``SharedApplicationLock``). UIKit's calls are made on
/// the main actor, inside the harness's task so that they reach the harness's system.
@Suite(.serialized) struct Seed001RemoteNotificationsTests {
    @Test func afterThePersonAllowsNotificationsTheAppGetsItsDeviceToken() async throws {
        try await SharedApplicationLock.withLock {
            let harness = NotificationTestHarness()
            harness.person.willAnswerAuthorization(allow: true)
            let appDelegate = await Seed001PushAppDelegate()
            try await harness.run { _ in
                await MainActor.run {
                    UIApplication.shared.delegate = appDelegate
                    _ = appDelegate.application(UIApplication.shared, didFinishLaunchingWithOptions: nil)
                }
                #expect(await appDelegate.log.waitForLines(2))
                let token = try #require(harness.deviceToken)
                #expect(appDelegate.log.lines == ["granted", "deviceToken=\(token)"])
                #expect(token.count == 64)
                #expect(await UIApplication.shared.isRegisteredForRemoteNotifications)
            }
            await MainActor.run { UIApplication.shared.delegate = nil }
        }
    }

    @Test func theTokenStaysTheSameUntilTheAppUnregistersAndThenChanges() async throws {
        try await SharedApplicationLock.withLock {
            let harness = NotificationTestHarness()
            let appDelegate = await Seed001PushAppDelegate()
            try await harness.run { _ in
                await MainActor.run {
                    UIApplication.shared.delegate = appDelegate
                    UIApplication.shared.registerForRemoteNotifications()
                    UIApplication.shared.registerForRemoteNotifications()
                }
                #expect(await appDelegate.log.waitForLines(2))
                let first = try #require(harness.deviceToken)
                await MainActor.run { UIApplication.shared.unregisterForRemoteNotifications() }
                #expect(await !UIApplication.shared.isRegisteredForRemoteNotifications)
                await harness.settle()
                #expect(harness.deviceToken == nil)
                await MainActor.run { UIApplication.shared.registerForRemoteNotifications() }
                #expect(await appDelegate.log.waitForLines(3))
                let second = try #require(harness.deviceToken)
                #expect(appDelegate.log.lines == ["deviceToken=\(first)", "deviceToken=\(first)", "deviceToken=\(second)"])
                #expect(first != second)
            }
            await MainActor.run { UIApplication.shared.delegate = nil }
        }
    }

    @Test("a renewed token reaches the delegate of a registered app, and only of one")
    func aRenewedTokenReachesTheDelegateAgain() async throws {
        try await SharedApplicationLock.withLock {
            let harness = NotificationTestHarness()
            let appDelegate = await Seed001PushAppDelegate()
            try await harness.run { _ in
                await MainActor.run { UIApplication.shared.delegate = appDelegate }
                // Not registered: there is no token to renew, and the delegate hears nothing.
                #expect(harness.renewDeviceToken() == nil)
                await MainActor.run { UIApplication.shared.registerForRemoteNotifications() }
                #expect(await appDelegate.log.waitForLines(1))
                let first = try #require(harness.deviceToken)
                let second = try #require(harness.renewDeviceToken())
                #expect(second != first)
                #expect(harness.deviceToken == second)
                #expect(await appDelegate.log.waitForLines(2))
                #expect(appDelegate.log.lines == ["deviceToken=\(first)", "deviceToken=\(second)"])
                // Registering again at the next launch gives the renewed token, as on iOS.
                await MainActor.run { UIApplication.shared.registerForRemoteNotifications() }
                #expect(await appDelegate.log.waitForLines(3))
                #expect(appDelegate.log.lines.last == "deviceToken=\(second)")
            }
            await MainActor.run { UIApplication.shared.delegate = nil }
        }
    }

    @Test("the app's state and icon badge, as iOS code reads and sets them")
    func applicationStateAndIconBadgeNumber() async throws {
        try await SharedApplicationLock.withLock {
            let inForeground = NotificationTestHarness()
            inForeground.person.willAnswerAuthorization(allow: true)
            try await inForeground.run { center in
                // Badges are the person's to allow, as on iOS.
                let granted = try await center.requestAuthorization(options: [.alert, .badge])
                #expect(granted)
                #expect(await UIApplication.shared.applicationState == .active)
                // What the app sets is the badge, and what it reads back.
                await MainActor.run { UIApplication.shared.applicationIconBadgeNumber = 4 }
                await inForeground.settle()
                #expect(inForeground.badge == 4)
                #expect(await UIApplication.shared.applicationIconBadgeNumber == 4)
            }
            let inBackground = NotificationTestHarness(appState: .background)
            inBackground.person.willAnswerAuthorization(allow: true)
            try await inBackground.run { center in
                let granted = try await center.requestAuthorization(options: [.alert, .badge])
                #expect(granted)
                #expect(await UIApplication.shared.applicationState == .background)
                // A push's badge (shown: the app is in the background) is what the app reads.
                try await inBackground.receivePush(#"{"aps":{"alert":"Three new","badge":3}}"#)
                await inBackground.settle()
                #expect(await UIApplication.shared.applicationIconBadgeNumber == 3)
                // Clearing it, as iOS apps do when they open.
                await MainActor.run { UIApplication.shared.applicationIconBadgeNumber = 0 }
                await inBackground.settle()
                #expect(inBackground.badge == 0)
            }
        }
    }

    @Test func aSilentPushReachesTheAppDelegateAndItsResultIsRecorded() async throws {
        try await SharedApplicationLock.withLock {
            let harness = NotificationTestHarness(appState: .background)
            let appDelegate = await Seed001PushAppDelegate()
            await MainActor.run { UIApplication.shared.delegate = appDelegate }
            try await harness.run { _ in
                try await harness.receivePush(#"{"aps":{"content-available":1},"acme1":"bar","acme2":42}"#, pushType: "background", apnsID: "silent-1")
                #expect(await appDelegate.log.waitForLines(1))
                #expect(await harness.settle())
            }
            await MainActor.run { UIApplication.shared.delegate = nil }
            #expect(appDelegate.log.lines == ["收到静默通知 bar"])
            #expect(harness.history.events.map(\.description) == [
                "didReceiveRemoteNotification(silent-1)",
                "didReceiveRemoteNotificationCompleted(silent-1, 0)",
            ])
            // Nothing reached the person.
            #expect(await harness.visibleNotifications.isEmpty)
        }
    }

    @Test func aPushThatArrivesBeforeTheAppHasADelegateWaitsForIt() async throws {
        try await SharedApplicationLock.withLock {
            let harness = NotificationTestHarness()
            await MainActor.run { UIApplication.shared.delegate = nil }
            let appDelegate = await AsyncFetchAppDelegate()
            try await harness.run { _ in
                try await harness.receivePush(#"{"aps":{"content-available":1},"acme2":42}"#, pushType: "background", apnsID: "early")
                // Handed to the app, which has no delegate yet: it waits.
                try await harness.history.waitFor { $0.description == "didReceiveRemoteNotification(early)" }
                #expect(appDelegate.log.lines.isEmpty)
                await MainActor.run { UIApplication.shared.delegate = appDelegate }
                #expect(await appDelegate.log.waitForLines(1))
                #expect(await harness.settle())
            }
            await MainActor.run { UIApplication.shared.delegate = nil }
            #expect(appDelegate.log.lines == ["fetched 42"])
            #expect(harness.history.events.map(\.description).last == "didReceiveRemoteNotificationCompleted(early, 2)")
        }
    }
}
