import Foundation
import OpenUserNotifications
import OpenUserNotificationsTesting
import Testing

/// What the person does with a notification becomes the exact response on the app's delegate.
@Suite struct ResponseTests {
    static let category = UNNotificationCategory(
        identifier: "MESSAGE",
        actions: [
            UNNotificationAction(identifier: "LIKE", title: "Like"),
            UNNotificationAction(identifier: "DELETE", title: "Delete", options: [.destructive, .authenticationRequired]),
            UNNotificationAction(identifier: "OPEN", title: "Open", options: [.foreground]),
            UNTextInputNotificationAction(identifier: "REPLY", title: "Reply", options: [],
                                          textInputButtonTitle: "Send", textInputPlaceholder: "Message"),
        ],
        intentIdentifiers: [],
        options: []
    )

    /// A background app with a delegate, the MESSAGE category, and one delivered notification "m".
    private func delivered(options: UNNotificationCategoryOptions = [], appState: SimulatedAppState = .background)
        async throws -> (NotificationTestHarness, AnsweringDelegate)
    {
        let harness = try await NotificationTestHarness.authorized(appState: appState)
        let delegate = AnsweringDelegate([.list, .banner])
        harness.center.delegate = delegate
        harness.center.setNotificationCategories([
            UNNotificationCategory(identifier: "MESSAGE", actions: Self.category.actions, intentIdentifiers: [], options: options),
        ])
        try await harness.add("m", title: "Hi!", category: "MESSAGE")
        return (harness, delegate)
    }

    @Test func tappingOpensTheAppWithTheDefaultAction() async throws {
        let (harness, delegate) = try await delivered()
        try await harness.person.tap("m")
        let response = try #require(try await harness.history.waitForResponses(1).first)
        #expect(response.actionIdentifier == UNNotificationDefaultActionIdentifier)
        #expect(response.actionIdentifier == "com.apple.UNNotificationDefaultActionIdentifier")
        #expect(!(response is UNTextInputNotificationResponse))
        #expect(response.notification.request.content.title == "Hi!")
        #expect(harness.app.state == .foreground)
        #expect(await harness.center.deliveredNotifications().isEmpty)
        withExtendedLifetime(delegate) {}
    }

    @Test func aBackgroundActionLaunchesAStoppedAppInTheBackground() async throws {
        let (harness, delegate) = try await delivered(appState: .notRunning)
        try await harness.person.chooseAction("LIKE", on: "m")
        let responses = try await harness.history.waitForResponses(1)
        #expect(responses.map(\.actionIdentifier) == ["LIKE"])
        #expect(harness.app.state == .background)
        try await harness.history.waitFor { if case .didReceiveCompleted = $0 { true } else { false } }
        #expect(harness.eventNames.suffix(3) == ["appStateChanged", "didReceive", "didReceiveCompleted"])
        withExtendedLifetime(delegate) {}
    }

    @Test func aForegroundActionBringsTheAppForward() async throws {
        let (harness, delegate) = try await delivered()
        try await harness.person.chooseAction("OPEN", on: "m")
        try await harness.history.waitForResponses(1)
        #expect(harness.app.state == .foreground)
        withExtendedLifetime(delegate) {}
    }

    @Test func replyingGivesATextInputResponse() async throws {
        let (harness, delegate) = try await delivered()
        try await harness.person.reply("On my way", withAction: "REPLY", on: "m")
        let response = try #require(try await harness.history.waitForResponses(1).first as? UNTextInputNotificationResponse)
        #expect(response.userText == "On my way")
        #expect(response.actionIdentifier == "REPLY")
        withExtendedLifetime(delegate) {}
    }

    @Test(arguments: [
        (PersonMove.choose("NOPE"), SimulatedPersonError.Code.unknownAction),
        (.reply("LIKE", "text"), .textInputNotAccepted),
        (.choose("REPLY"), .textInputRequired),
        (.reply("NOPE", "text"), .unknownAction),
    ])
    func invalidResponsesAreRejectedAndChangeNothing(move: PersonMove, code: SimulatedPersonError.Code) async throws {
        let (harness, delegate) = try await delivered()
        await #expect { try await move.perform(harness.person, on: "m") } throws: { ($0 as? SimulatedPersonError)?.code == code }
        await harness.settle()
        #expect(harness.history.responses.isEmpty)
        #expect(await harness.center.deliveredNotifications().count == 1, "the notification is still there")
        withExtendedLifetime(delegate) {}
    }

    @Test func actingOnANotificationThatIsNotThereIsRejected() async throws {
        let (harness, delegate) = try await delivered()
        await #expect { try await harness.person.tap("other") } throws: { ($0 as? SimulatedPersonError)?.code == .notificationNotFound }
        try await harness.person.tap("m")
        await #expect { try await harness.person.tap("m") } throws: { ($0 as? SimulatedPersonError)?.code == .notificationNotFound }
        withExtendedLifetime(delegate) {}
    }

    @Test func protectedActionsNeedTheDeviceUnlocked() async throws {
        let (harness, delegate) = try await delivered()
        await harness.person.lockDevice()
        for move in [PersonMove.choose("DELETE"), .choose("OPEN"), .tap] {
            await #expect { try await move.perform(harness.person, on: "m") } throws: { ($0 as? SimulatedPersonError)?.code == .deviceLocked }
        }
        try await harness.person.chooseAction("LIKE", on: "m")
        try await harness.history.waitForResponses(1)

        try await harness.add("m2", category: "MESSAGE")
        await harness.person.unlockDevice()
        try await harness.person.chooseAction("DELETE", on: "m2")
        #expect(try await harness.history.waitForResponses(2).map(\.actionIdentifier) == ["LIKE", "DELETE"])
        withExtendedLifetime(delegate) {}
    }

    @Test func dismissingIsReportedOnlyWithCustomDismissAction() async throws {
        let (quiet, delegate1) = try await delivered()
        try await quiet.person.dismiss("m")
        await quiet.settle()
        #expect(quiet.history.responses.isEmpty)
        #expect(await quiet.center.deliveredNotifications().isEmpty)

        let (reported, delegate2) = try await delivered(options: [.customDismissAction])
        try await reported.person.dismiss("m")
        let response = try #require(try await reported.history.waitForResponses(1).first)
        #expect(response.actionIdentifier == UNNotificationDismissActionIdentifier)
        #expect(response.actionIdentifier == "com.apple.UNNotificationDismissActionIdentifier")
        withExtendedLifetime((delegate1, delegate2)) {}
    }

    @Test func aDelegateThatNeverCompletesIsReported() async throws {
        let harness = NotificationTestHarness(appState: .background, delegateGrace: .milliseconds(50))
        harness.person.willAnswerAuthorization(allow: true)
        _ = try await harness.center.requestAuthorization(options: [.alert])
        let delegate = SilentDelegate()
        harness.center.delegate = delegate
        try await harness.add("m")
        try await harness.person.tap("m")
        try await harness.history.waitForResponses(1)
        await harness.clock.advance(by: 29)
        #expect(!harness.eventNames.contains("didReceiveNotCompleted"))
        await harness.clock.advance(by: 1)
        #expect(harness.eventNames.last == "didReceiveNotCompleted")
        withExtendedLifetime(delegate) {}
    }

    @Test func responsesReachAnAsyncDelegate() async throws {
        let harness = try await NotificationTestHarness.authorized()
        let delegate = AsyncDelegate()
        harness.center.delegate = delegate
        try await harness.add("m")
        try await harness.person.tap("m")
        try await harness.history.waitFor { if case .didReceiveCompleted = $0 { true } else { false } }
        #expect(delegate.received.lines == [UNNotificationDefaultActionIdentifier])
    }

    @Test func openingTheAppsSettingsNeedsTheOption() async throws {
        let plain = try await NotificationTestHarness.authorized()
        await #expect { try await plain.person.openAppNotificationSettings() } throws: {
            ($0 as? SimulatedPersonError)?.code == .appSettingsNotProvided
        }
        let harness = try await NotificationTestHarness.authorized(options: [.alert, .providesAppNotificationSettings])
        #expect(await harness.center.notificationSettings().providesAppNotificationSettings)
        try await harness.add("m")
        try await harness.person.openAppNotificationSettings(from: "m")
        let event = try await harness.history.waitFor { if case .openSettings = $0 { true } else { false } }
        guard case .openSettings(let notification) = event else { return }
        #expect(notification?.request.identifier == "m")
        #expect(harness.app.state == .foreground)
    }
}

/// A thing a person does with a notification, for parameterized tests.
enum PersonMove: Sendable, CustomStringConvertible {
    case tap
    case choose(String)
    case reply(String, String)

    func perform(_ person: SimulatedPerson, on identifier: String) async throws {
        switch self {
        case .tap: try await person.tap(identifier)
        case .choose(let action): try await person.chooseAction(action, on: identifier)
        case .reply(let action, let text): try await person.reply(text, withAction: action, on: identifier)
        }
    }

    var description: String {
        switch self {
        case .tap: "tap"
        case .choose(let action): "choose \(action)"
        case .reply(let action, let text): "reply \(text) to \(action)"
        }
    }
}
