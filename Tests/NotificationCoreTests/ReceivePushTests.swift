import Foundation
import NotificationCore
import Testing

/// A remote notification arriving at the app's machine: shown as a local one fires, never refused.
@Suite struct ReceivePushTests {
    typealias Machine = NotificationCenterMachine

    static let t0 = Date(timeIntervalSince1970: 1_767_225_600)

    func machine(appState: AppState = .background, authorized: Bool = true) -> Machine {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        var machine = Machine(now: Self.t0, calendar: calendar, timeZone: calendar.timeZone, appState: appState)
        if authorized {
            _ = machine.requestAuthorization(options: [.alert, .sound, .badge], call: 0)
            _ = machine.answerAuthorizationPrompt(allow: true)
        }
        return machine
    }

    func push(_ json: String, apnsID: String = "eabeae54-14a8-11e5-b60b-1697f925ec7b", collapseID: String? = nil) throws -> NotificationRequest {
        APNs.request(for: try APNs.payload(Array(json.utf8)).get(), apnsID: apnsID, collapseID: collapseID)
    }

    func shown(_ effects: [Machine.Effect]) -> [VisibleNotificationSummary] {
        effects.compactMap { effect in
            guard case .presented(let shown) = effect else { return nil }
            return VisibleNotificationSummary(identifier: shown.notification.request.identifier, body: shown.notification.request.content.body,
                                              isPush: shown.notification.request.trigger == .push, banner: shown.presentation.banner)
        }
    }

    struct VisibleNotificationSummary: Equatable {
        var identifier: String
        var body: String
        var isPush: Bool
        var banner: Bool
    }

    @Test func anAppStartedForAnAnswerToAPushFindsThePushInItsLaunchOptions() throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        var machine = Machine(now: Self.t0, calendar: calendar, timeZone: calendar.timeZone, appState: .notRunning, appReachable: false)
        _ = machine.requestAuthorization(options: [.alert], call: 0)
        _ = machine.answerAuthorizationPrompt(allow: true)
        _ = machine.receivePush(try push(#"{"aps":{"alert":"Lunch?"},"chat":"42"}"#, apnsID: "pushed"))
        var content = NotificationContent()
        content.title = "Local"
        _ = try machine.add(NotificationRequest(identifier: "local", content: content, trigger: nil))
        #expect(machine.launchRemoteNotification == nil, "nothing waits for the app")

        #expect(try machine.respond(to: "local", with: .open) == [.personActed(identifier: "local", actionIdentifier: SystemActionIdentifier.default), .launchApp(.foreground)])
        #expect(machine.launchRemoteNotification == nil, "an answer to a local notification: no push")
        #expect(try machine.respond(to: "pushed", with: .open) == [.personActed(identifier: "pushed", actionIdentifier: SystemActionIdentifier.default), .launchApp(.foreground)])
        #expect(machine.launchRemoteNotification?["chat"] == .string("42"))
        #expect(machine.launchRemoteNotification?["aps"] != nil, "the whole payload, as on iOS")
    }

    @Test func anAlertPushIsShownWithItsPushTrigger() throws {
        var machine = machine()
        let effects = machine.receivePush(try push(#"{"aps":{"alert":"Hello","badge":3}}"#))
        #expect(shown(effects) == [.init(identifier: "eabeae54-14a8-11e5-b60b-1697f925ec7b", body: "Hello", isPush: true, banner: true)])
        #expect(effects.contains(.badgeChanged(3)))
        #expect(machine.deliveredNotifications.map(\.request.identifier) == ["eabeae54-14a8-11e5-b60b-1697f925ec7b"])
    }

    @Test func aPushWithTheSameCollapseIDReplacesTheShownOne() throws {
        var machine = machine()
        _ = machine.receivePush(try push(#"{"aps":{"alert":"1-0"}}"#, apnsID: "a", collapseID: "score"))
        _ = machine.receivePush(try push(#"{"aps":{"alert":"2-0"}}"#, apnsID: "b", collapseID: "score"))
        #expect(machine.deliveredNotifications.map(\.request.content.body) == ["2-0"])
    }

    @Test func anUnauthorizedAppsPushIsNotShownAndNotAnError() throws {
        var machine = machine(authorized: false)
        #expect(machine.receivePush(try push(#"{"aps":{"alert":"Hello"}}"#)).isEmpty)
        #expect(machine.deliveredNotifications.isEmpty)
    }

    @Test func aBackgroundPushNeverReachesThePerson() throws {
        var machine = machine()
        #expect(machine.receivePush(try push(#"{"aps":{"content-available":1},"refresh":true}"#)).isEmpty)
        #expect(machine.deliveredNotifications.isEmpty)
    }

    @Test func inTheForegroundTheAppsDelegateDecides() throws {
        var machine = machine(appState: .foreground)
        _ = machine.setAppReachable(true, state: .foreground)
        let effects = machine.receivePush(try push(#"{"aps":{"alert":"Hello"}}"#))
        guard case .askWillPresent(let ticket, let notification)? = effects.first else {
            Issue.record("expected willPresent, got \(effects)")
            return
        }
        #expect(notification.request.trigger == .push)
        let answered = machine.answerWillPresent(ticket: ticket, options: [.list])
        #expect(shown(answered).map(\.banner) == [false])
        #expect(machine.deliveredNotifications.count == 1)
    }
}
