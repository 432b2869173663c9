import Foundation
import NotificationCore
import Testing

/// What the machine notes for the gateway's delivery log about a push that came through it: what the
/// person was shown (or why not) and what they did, never what they typed.
@Suite struct DeliveryReportTests {
    typealias Machine = NotificationCenterMachine

    static let t0 = Date(timeIntervalSince1970: 1_767_225_600)

    func machine(appState: AppState = .background, reachable: Bool = true, authorized: Bool = true) -> Machine {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        var machine = Machine(now: Self.t0, calendar: calendar, timeZone: calendar.timeZone, appState: appState, appReachable: reachable)
        if authorized {
            _ = machine.requestAuthorization(options: [.alert, .sound, .badge], call: 0)
            _ = machine.answerAuthorizationPrompt(allow: true)
        }
        try? machine.setCategories([
            NotificationCategory(identifier: "CHAT", actions: [
                NotificationAction(identifier: "LIKE", title: "Like"),
                NotificationAction(identifier: "REPLY", title: "Reply", textInput: .init(buttonTitle: "Send", placeholder: "Message")),
            ], options: [.customDismissAction]),
        ])
        return machine
    }

    func receive(_ machine: inout Machine, _ json: String, id: String, collapseID: String? = nil, pushType: APNs.PushType = .alert,
                 serviceExtension: ServiceExtension? = nil) throws -> [Machine.Effect] {
        machine.receivePush(try APNs.payload(Array(json.utf8)).get(), apnsID: "apns-\(id)", collapseID: collapseID, pushType: pushType,
                            uniqueID: id, serviceExtension: serviceExtension)
    }

    func stages(_ machine: inout Machine) -> [String] {
        machine.takeDeliveryReports().map { [$0.uniqueID, $0.stage.rawValue, $0.detail].compactMap { $0 }.joined(separator: " ") }
    }

    @Test func whatThePersonSawAndDidIsNotedWithoutTheirWords() throws {
        var machine = machine()
        _ = try receive(&machine, #"{"aps":{"alert":"a","sound":"default","category":"CHAT"}}"#, id: "u1")
        _ = try receive(&machine, #"{"aps":{"alert":"b","category":"CHAT"}}"#, id: "u2")
        _ = try receive(&machine, #"{"aps":{"alert":"c","category":"CHAT"}}"#, id: "u3")
        _ = try receive(&machine, #"{"aps":{"alert":"d","category":"CHAT"}}"#, id: "u4")
        #expect(stages(&machine) == [
            "u1 presented banner, list, lock screen, sound", "u2 presented banner, list, lock screen",
            "u3 presented banner, list, lock screen", "u4 presented banner, list, lock screen",
        ])
        _ = try machine.respond(to: "apns-u1", with: .open)
        _ = try machine.respond(to: "apns-u2", with: .action("LIKE"))
        _ = try machine.respond(to: "apns-u3", with: .reply("REPLY", text: "see you at eight"))
        _ = try machine.respond(to: "apns-u4", with: .dismiss)
        let done = stages(&machine)
        #expect(done == ["u1 opened", "u2 action LIKE", "u3 replied REPLY", "u4 dismissed"])
        #expect(!done.joined().contains("eight"))
        #expect(machine.takeDeliveryReports().isEmpty, "each stage is taken once")
    }

    @Test func whyAPushWasNotShownIsNoted() throws {
        var denied = machine(authorized: false)
        _ = try receive(&denied, #"{"aps":{"alert":"a"}}"#, id: "u1")
        #expect(stages(&denied) == ["u1 notShown the app is not authorized (notDetermined)"])

        var foreground = machine(appState: .foreground)
        let effects = try receive(&foreground, #"{"aps":{"alert":"a"}}"#, id: "u2")
        guard case .askWillPresent(let ticket, _)? = effects.first else { Issue.record("no willPresent: \(effects)"); return }
        #expect(stages(&foreground).isEmpty, "nothing is decided before the app answers")
        _ = foreground.answerWillPresent(ticket: ticket, options: [])
        #expect(stages(&foreground) == ["u2 notShown the app in the foreground chose not to show it"])

        var quiet = machine()
        var settings = quiet.settings
        settings.alertSetting = .disabled
        settings.notificationCenterSetting = .disabled
        settings.lockScreenSetting = .disabled
        _ = quiet.changeSettings(settings)
        _ = try receive(&quiet, #"{"aps":{"alert":"a"}}"#, id: "u3")
        #expect(stages(&quiet) == ["u3 notShown its alerts, list and lock screen are turned off in settings"])
    }

    @Test func aNotificationThatLeavesTheListSaysWhy() throws {
        var machine = machine()
        _ = try receive(&machine, #"{"aps":{"alert":"first"}}"#, id: "u1", collapseID: "score")
        _ = try receive(&machine, #"{"aps":{"alert":"second"}}"#, id: "u2", collapseID: "score")
        _ = try receive(&machine, #"{"aps":{"alert":"other"}}"#, id: "u3")
        machine.removeDeliveredNotifications(["apns-u3"])
        #expect(stages(&machine) == [
            "u1 presented banner, list, lock screen",
            "u1 removed replaced by a newer notification with the same identifier", "u2 presented banner, list, lock screen",
            "u3 presented banner, list, lock screen", "u3 removed removed by the app",
        ])
    }

    @Test func aServiceExtensionsWorkAndABackgroundPushsFateAreNoted() throws {
        var machine = machine(reachable: false)
        _ = try receive(&machine, #"{"aps":{"alert":"a","mutable-content":1}}"#, id: "u1", serviceExtension: ServiceExtension())
        guard let ticket = machine.preparing.keys.first else { Issue.record("not preparing"); return }
        var content = NotificationContent()
        content.body = "rewritten"
        _ = machine.finishPreparation(ticket: ticket, content: content)
        _ = try receive(&machine, #"{"aps":{"content-available":1}}"#, id: "u2", pushType: .background)
        #expect(stages(&machine) == [
            "u1 preparing service extension started", "u1 prepared prepared", "u1 presented banner, list, lock screen",
            "u2 heldForApp the app is not running",
        ])
        let effects = machine.setAppReachable(true, state: .background)
        guard let handed = effects.compactMap({ if case .deliverRemoteNotification(let ticket, _) = $0 { ticket } else { nil } }).first else {
            Issue.record("not handed to the app: \(effects)")
            return
        }
        _ = machine.completeRemoteNotification(ticket: handed, result: .newData)
        #expect(stages(&machine) == ["u2 handedToApp", "u2 completedByApp newData"])
    }

    @Test func anAppCannotNameAPushInItsOwnRequest() throws {
        var machine = machine()
        var content = NotificationContent()
        content.title = "Local"
        var request = NotificationRequest(identifier: "local", content: content, trigger: nil)
        request.pushUniqueID = "someone-elses-push"
        _ = try machine.add(request)
        _ = try machine.respond(to: "local", with: .open)
        #expect(machine.takeDeliveryReports().isEmpty)
        #expect(machine.deliveredNotifications.allSatisfy { $0.request.pushUniqueID == nil })
    }
}
