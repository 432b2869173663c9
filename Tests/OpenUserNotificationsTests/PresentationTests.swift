import Foundation
import OpenUserNotifications
import OpenUserNotificationsTesting
import Testing

/// How a notification reaches the person: the delegate decides in the foreground, the person's settings
/// everywhere else.
@Suite struct PresentationTests {
    @Test func foregroundWithoutADelegatePresentsNothingAndKeepsNothing() async throws {
        let harness = try await NotificationTestHarness.authorized(appState: .foreground)
        try await harness.add("n", sound: .default)
        await harness.settle()
        #expect(harness.history.presentations.map(\.presentation) == [.none])
        #expect(await harness.center.deliveredNotifications().isEmpty)
        #expect(await harness.visibleNotifications.isEmpty)
    }

    @Test func aDelegateThatImplementsNothingPresentsNothing() async throws {
        let harness = try await NotificationTestHarness.authorized(appState: .foreground)
        let delegate = EmptyDelegate()
        harness.center.delegate = delegate
        try await harness.add("n")
        await harness.settle()
        #expect(harness.history.presentations.map(\.presentation) == [.none])
        withExtendedLifetime(delegate) {}
    }

    struct ForegroundCase: Sendable, CustomStringConvertible {
        var options: UNNotificationPresentationOptions
        var expected: NotificationPresentation
        var inList: Bool
        var description: String { "\(options.rawValue) → \(expected)" }
    }

    @Test(arguments: [
        ForegroundCase(options: [], expected: .none, inList: false),
        ForegroundCase(options: [.list], expected: NotificationPresentation(list: true), inList: true),
        ForegroundCase(options: [.banner], expected: NotificationPresentation(banner: true), inList: false),
        ForegroundCase(options: [.banner, .list, .sound, .badge],
                       expected: NotificationPresentation(banner: true, list: true, sound: true, badge: 7), inList: true),
    ])
    func foregroundPresentationFollowsTheDelegate(_ example: ForegroundCase) async throws {
        let (options, expected, inList) = (example.options, example.expected, example.inList)
        let harness = try await NotificationTestHarness.authorized(appState: .foreground)
        let delegate = AnsweringDelegate(options)
        harness.center.delegate = delegate
        try await harness.add("n", badge: 7, sound: .default)
        await harness.settle()
        #expect(harness.history.presentations.map(\.presentation) == [expected])
        #expect(await harness.center.deliveredNotifications().isEmpty == !inList)
        #expect(harness.badge == (expected.badge ?? 0))
        withExtendedLifetime(delegate) {}
    }

    @Test func theSystemEnforcesSettingsEvenInTheForeground() async throws {
        let harness = try await NotificationTestHarness.authorized(appState: .foreground)
        await harness.person.changeSettings {
            $0.soundSetting = .disabled
            $0.badgeSetting = .disabled
        }
        let delegate = AnsweringDelegate([.banner, .list, .sound, .badge])
        harness.center.delegate = delegate
        try await harness.add("n", badge: 3, sound: .default)
        await harness.settle()
        #expect(harness.history.presentations.map(\.presentation) == [NotificationPresentation(banner: true, list: true)])
        #expect(harness.badge == 0)
        withExtendedLifetime(delegate) {}
    }

    @Test func anAsyncDelegateIsAskedAndAnswers() async throws {
        let harness = try await NotificationTestHarness.authorized(appState: .foreground)
        let delegate = AsyncDelegate()
        harness.center.delegate = delegate
        try await harness.add("n", trigger: UNTimeIntervalNotificationTrigger(timeInterval: 1, repeats: false))
        await harness.clock.advance(by: 1)
        #expect(harness.history.presentations.map(\.presentation) == [NotificationPresentation(banner: true, list: true)])
        withExtendedLifetime(delegate) {}
    }

    @Test func aDelegateThatNeverAnswersPresentsNothingAfterTheDeadline() async throws {
        let harness = NotificationTestHarness(appState: .foreground, delegateGrace: .milliseconds(50))
        harness.person.willAnswerAuthorization(allow: true)
        _ = try await harness.center.requestAuthorization(options: [.alert])
        let delegate = SilentDelegate()
        harness.center.delegate = delegate
        try await harness.add("n")
        await harness.clock.advance(by: 4.9)
        #expect(harness.history.presentations.isEmpty, "still waiting for the delegate")
        await harness.clock.advance(by: 0.1)
        #expect(harness.eventNames.suffix(3) == ["willPresent", "willPresentTimedOut", "presented"])
        #expect(harness.history.presentations.map(\.presentation) == [.none])
        delegate.answerLate()
        await harness.settle()
        #expect(harness.history.presentations.count == 1, "a late answer changes nothing")
        withExtendedLifetime(delegate) {}
    }

    @Test(arguments: [SimulatedAppState.background, .notRunning])
    func outsideTheForegroundTheSettingsDecide(_ state: SimulatedAppState) async throws {
        let harness = try await NotificationTestHarness.authorized(appState: state)
        try await harness.add("n", badge: 2, sound: .default)
        #expect(harness.history.presentations.map(\.presentation) == [
            NotificationPresentation(banner: true, list: true, lockScreen: true, sound: true, badge: 2),
        ])
        #expect(harness.history.willPresentQuestions.isEmpty)
        await harness.person.changeSettings {
            $0.alertStyle = .none
            $0.lockScreenSetting = .disabled
            $0.soundSetting = .disabled
        }
        try await harness.add("m", badge: 0, sound: .default)
        #expect(harness.history.presentations.last?.presentation == NotificationPresentation(list: true, badge: 0))
        #expect(harness.badge == 0)
    }

    @Test func passiveNotificationsArriveQuietly() async throws {
        let harness = try await NotificationTestHarness.authorized()
        let content = UNMutableNotificationContent()
        content.title = "FYI"
        content.sound = .default
        content.interruptionLevel = .passive
        try await harness.center.add(UNNotificationRequest(identifier: "p", content: content, trigger: nil))
        #expect(harness.history.presentations.last?.presentation == NotificationPresentation(list: true, lockScreen: true))
    }

    @Test func badgeFollowsTheContent() async throws {
        let harness = try await NotificationTestHarness.authorized()
        try await harness.add("a", badge: 5)
        #expect(harness.badge == 5)
        try await harness.add("b")
        #expect(harness.badge == 5, "nil leaves the badge alone")
        try await harness.add("c", badge: 0)
        #expect(harness.badge == 0, "0 removes it")
        try await harness.center.setBadgeCount(9)
        #expect(harness.badge == 9)
        #expect(harness.history.events.compactMap { if case .badgeChanged(let b) = $0 { b } else { nil } } == [5, 0, 9])
    }
}
