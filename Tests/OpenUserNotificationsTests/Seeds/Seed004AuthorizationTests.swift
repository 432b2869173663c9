// Seed 004: explicit and provisional authorization with the async API, checking the settings before
// sending, and a 5-second notification. The seed's SwiftUI view is left out; its functions are the
// seed's own, with their prints replaced by a log.
import Foundation
import OpenUserNotifications
import OpenUserNotificationsTesting
import Synchronization
import Testing

struct LocalNotification {
    let center = UNUserNotificationCenter.current()
    let authorizationOptions: UNAuthorizationOptions = [.alert, .badge, .sound]
    let log = LogBook()

    func print(_ line: String) { log.append(line) }

    func createRequest() -> UNNotificationRequest {
        let content = UNMutableNotificationContent()
        content.title = "Notification Title"
        content.subtitle = "Notification Subtitle"
        content.sound = UNNotificationSound.default

        let trigger = UNTimeIntervalNotificationTrigger(timeInterval: 5, repeats: false)
        return UNNotificationRequest(identifier: UUID().uuidString, content: content, trigger: trigger)
    }

    func requestAuthorization(options: UNAuthorizationOptions, provisional: Bool = false) async {
        do {
            var options = options
            if provisional {
                options = options.union(.provisional)
            }
            if try await center.requestAuthorization(options: options) {
                // You have authorization.
                print("You have authorization.")
            } else {
                // You don't have authorization.
                print("You don't have authorization.")
            }
        } catch {
            // Handle any errors.
            print("error: \(error.localizedDescription)")
        }
    }

    func sendNotification(provisional: Bool) async {
        let settings = await center.notificationSettings()
        if settings.authorizationStatus == .authorized || settings.authorizationStatus == .provisional {
            print("authorized: \(settings.authorizationStatus)")
            await addNotification()
        } else {
            print("未授权 \(settings.authorizationStatus)")
            await requestAuthorization(options: authorizationOptions, provisional: provisional)
        }
    }

    func addNotification() async {
        do {
            try await center.add(createRequest())
        } catch {
            print("add request failed, err: \(error.localizedDescription)")
        }
    }
}

@Suite struct Seed004AuthorizationTests {
    @Test func explicitAuthorizationPromptsOnceAndRemembersTheAnswer() async throws {
        let harness = NotificationTestHarness(appState: .background)
        let view = await harness.run { _ in LocalNotification() }

        // The person has not answered yet: the request waits at the prompt.
        async let asked: Void = view.requestAuthorization(options: view.authorizationOptions)
        let prompt = try await harness.history.waitFor { if case .authorizationPromptShown = $0 { true } else { false } }
        guard case .authorizationPromptShown(let options) = prompt else { return }
        #expect(options == [.alert, .badge, .sound])
        try await harness.person.answerAuthorizationPrompt(allow: true)
        await asked
        #expect(view.log.lines == ["You have authorization."])

        let settings = await harness.center.notificationSettings()
        #expect(settings.authorizationStatus == .authorized)
        #expect(settings.alertSetting == .enabled)
        #expect(settings.soundSetting == .enabled)
        #expect(settings.badgeSetting == .enabled)
        #expect(settings.carPlaySetting == .disabled)
        #expect(settings.alertStyle == .banner)

        // Asking again does not show the prompt again.
        await view.requestAuthorization(options: view.authorizationOptions)
        let prompts = harness.history.events.filter { if case .authorizationPromptShown = $0 { true } else { false } }
        #expect(prompts.count == 1)

        await view.sendNotification(provisional: false)
        await harness.clock.advance(by: 5)
        let shown = try #require(harness.history.presentations.last)
        #expect(shown.presentation == NotificationPresentation(banner: true, list: true, lockScreen: true, sound: true))
        #expect(shown.notification.request.content.subtitle == "Notification Subtitle")
    }

    @Test func deniedAuthorizationIsRememberedAndBlocksNotifications() async throws {
        let harness = NotificationTestHarness()
        harness.person.willAnswerAuthorization(allow: false)
        let view = await harness.run { _ in LocalNotification() }
        await view.requestAuthorization(options: view.authorizationOptions)
        await view.addNotification()
        await view.sendNotification(provisional: false)
        #expect(view.log.lines == [
            "You don't have authorization.",
            "add request failed, err: Notifications are not allowed for this application.",
            "未授权 denied",
            "You don't have authorization.",
        ])
        let settings = await harness.center.notificationSettings()
        #expect(settings.authorizationStatus == .denied)
        #expect(settings.alertSetting == .disabled)
        #expect(await harness.center.pendingNotificationRequests().isEmpty)
    }

    @Test func provisionalAuthorizationIsGrantedWithoutAskingAndDeliversQuietly() async throws {
        let harness = NotificationTestHarness(appState: .background)
        let view = await harness.run { _ in LocalNotification() }
        await view.requestAuthorization(options: view.authorizationOptions, provisional: true)
        #expect(view.log.lines == ["You have authorization."])
        #expect(!harness.history.events.contains { if case .authorizationPromptShown = $0 { true } else { false } })

        let settings = await harness.center.notificationSettings()
        #expect(settings.authorizationStatus == .provisional)
        #expect(settings.notificationCenterSetting == .enabled)
        #expect(settings.alertSetting == .disabled)
        #expect(settings.soundSetting == .disabled)

        await view.sendNotification(provisional: true)
        await harness.clock.advance(by: 5)
        let shown = try #require(harness.history.presentations.last)
        #expect(shown.presentation == NotificationPresentation(list: true), "quietly, to the notification center's list only")
        #expect(await harness.center.deliveredNotifications().count == 1)

        // Keeping them: quiet delivery, now authorized.
        await harness.person.keepQuietNotifications()
        #expect(await harness.center.notificationSettings().authorizationStatus == .authorized)
        await view.addNotification()
        await harness.clock.advance(by: 5)
        #expect(harness.history.presentations.last?.presentation == NotificationPresentation(list: true))
    }

    @Test func anExplicitRequestAfterProvisionalPromptsThePerson() async throws {
        let harness = NotificationTestHarness()
        let view = await harness.run { _ in LocalNotification() }
        await view.requestAuthorization(options: view.authorizationOptions, provisional: true)
        harness.person.willAnswerAuthorization(allow: true)
        await view.requestAuthorization(options: view.authorizationOptions)
        #expect(harness.history.events.contains { if case .authorizationPromptShown = $0 { true } else { false } })
        #expect(await harness.center.notificationSettings().authorizationStatus == .authorized)
    }

    @Test func turningNotificationsOffFromProvisionalDenies() async throws {
        let harness = NotificationTestHarness()
        let view = await harness.run { _ in LocalNotification() }
        await view.requestAuthorization(options: view.authorizationOptions, provisional: true)
        await harness.person.turnOffNotifications()
        await view.sendNotification(provisional: true)
        #expect(view.log.lines.last == "You don't have authorization.")
        #expect(await harness.center.notificationSettings().authorizationStatus == .denied)
    }
}
