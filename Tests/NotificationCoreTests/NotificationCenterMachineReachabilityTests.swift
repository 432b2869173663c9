import Foundation
import NotificationCore
import Testing

/// An app that is not running (as the daemon's apps are until they connect): responses wait for it,
/// in order, and the machine survives being stored and restored.
@Suite struct NotificationCenterMachineReachabilityTests {
    typealias Machine = NotificationCenterMachine

    static let t0 = Date(timeIntervalSince1970: 1_767_225_600)
    static let utc = TimeZone(identifier: "UTC")!
    static var gregorian: Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = utc
        return calendar
    }

    func stoppedApp(options: AuthorizationOptions = [.alert, .sound]) -> Machine {
        var machine = Machine(now: Self.t0, calendar: Self.gregorian, timeZone: Self.utc, appState: .notRunning, appReachable: false)
        _ = machine.requestAuthorization(options: options, call: 0)
        _ = machine.answerAuthorizationPrompt(allow: true)
        return machine
    }

    func request(_ identifier: String, _ trigger: NotificationTrigger? = nil, category: String = "") -> NotificationRequest {
        var content = NotificationContent()
        content.title = identifier
        content.categoryIdentifier = category
        return NotificationRequest(identifier: identifier, content: content, trigger: trigger)
    }

    func deliveredTickets(_ effects: [Machine.Effect]) -> [(UInt64, String)] {
        effects.compactMap {
            if case .deliverResponse(let ticket, let response) = $0 { (ticket, response.notification.request.identifier) } else { nil }
        }
    }

    @Test func catchingUpIsBoundedAndPicksUpWhereItStopped() throws {
        var machine = stoppedApp()
        _ = try machine.add(request("minutely", .timeInterval(60, repeats: true)))
        let tenMinutesLater = Self.t0.addingTimeInterval(600)
        let first = machine.catchUp(to: tenMinutesLater, atMost: 3)
        #expect(first.wakeUps == 3)
        #expect(first.effects.count { if case .presented = $0 { true } else { false } } == 3)
        let rest = machine.catchUp(to: tenMinutesLater)
        #expect(rest.wakeUps == 7, "the fires at 4 to 10 minutes, in order")
        #expect(machine.catchUp(to: tenMinutesLater).wakeUps == 0)
        #expect(machine.nextWakeUpDate() == Self.t0.addingTimeInterval(660))
    }

    @Test func responsesForAStoppedAppWaitAndArriveInOrderWhenItConnects() throws {
        var machine = stoppedApp()
        for id in ["a", "b", "c"] { _ = try machine.add(request(id)) }
        #expect(try machine.respond(to: "b", with: .open) == [.personActed(identifier: "b", actionIdentifier: SystemActionIdentifier.default), .launchApp(.foreground)])
        #expect(try machine.respond(to: "a", with: .open) == [.personActed(identifier: "a", actionIdentifier: SystemActionIdentifier.default), .launchApp(.foreground)])
        #expect(machine.queuedForAppCount == 2)
        #expect(machine.appState == .notRunning)

        let effects = machine.setAppReachable(true, state: .foreground)
        #expect(effects.first == .appStateChanged(.foreground))
        #expect(deliveredTickets(effects).map(\.1) == ["b", "a"])
        #expect(machine.queuedForAppCount == 0)
    }

    @Test func anUnconfirmedResponseIsHandedOverAgainAfterTheAppComesBack() throws {
        var machine = stoppedApp()
        _ = try machine.add(request("a"))
        _ = try machine.respond(to: "a", with: .open)
        let first = deliveredTickets(machine.setAppReachable(true, state: .background))
        #expect(first.map(\.1) == ["a"])
        _ = machine.setAppReachable(false, state: .notRunning)
        let again = deliveredTickets(machine.setAppReachable(true, state: .background))
        #expect(again.map(\.0) == first.map(\.0), "the same ticket, so the app can tell it is the same response")
        machine.completeResponse(ticket: again[0].0)
        _ = machine.setAppReachable(false, state: .notRunning)
        #expect(deliveredTickets(machine.setAppReachable(true, state: .background)).isEmpty, "confirmed: never again")
    }

    @Test func anUnansweredForegroundQuestionIsSettledWhenTheAppGoesAway() throws {
        var machine = stoppedApp()
        _ = machine.setAppReachable(true, state: .foreground)
        let asked = try machine.add(request("a"))
        #expect(asked.contains { if case .askWillPresent = $0 { true } else { false } })
        let effects = machine.setAppReachable(false, state: .notRunning)
        let presentation = effects.compactMap { if case .presented(let shown) = $0 { shown.presentation } else { nil } }
        #expect(presentation == [Presentation(banner: true, list: true, lockScreen: true)])
        #expect(machine.openTickets == 0)
    }

    @Test func whileUnreachableTheForegroundStateDoesNotAskTheDelegate() throws {
        var machine = Machine(now: Self.t0, calendar: Self.gregorian, timeZone: Self.utc, appState: .foreground, appReachable: false)
        _ = machine.requestAuthorization(options: [.alert], call: 0)
        _ = machine.answerAuthorizationPrompt(allow: true)
        let effects = try machine.add(request("a"))
        #expect(!effects.contains { if case .askWillPresent = $0 { true } else { false } })
    }

    @Test func openingSettingsForAStoppedAppWaitsForIt() throws {
        var machine = stoppedApp(options: [.alert, .providesAppNotificationSettings])
        #expect(try machine.openAppSettings(from: nil) == [.launchApp(.foreground)])
        let effects = machine.setAppReachable(true, state: .foreground)
        #expect(effects.contains(.openSettings(nil)))
    }

    @Test func resumingAfterDowntimeSkipsMissedRepeatsButFiresMissedOneShots() throws {
        var machine = stoppedApp()
        _ = try machine.add(request("once", .timeInterval(30, repeats: false)))
        _ = try machine.add(request("minutely", .timeInterval(60, repeats: true)))
        _ = try machine.add(request("daily", .calendar(DateComponents(hour: 9), repeats: true)))
        let back = Self.t0.addingTimeInterval(3 * 86_400 + 125)   // down for three days and a bit
        _ = machine.resume(at: back)
        let pending = Dictionary(uniqueKeysWithValues: machine.pendingRequests.map { ($0.request.identifier, $0.nextFireDate) })
        #expect(pending["minutely"] == Self.t0.addingTimeInterval(3 * 86_400 + 180))
        #expect(pending["daily"] == Self.t0.addingTimeInterval(3 * 86_400 + 9 * 3600))
        var fired: [String] = []
        while let effects = machine.advance(to: back) {
            fired += effects.compactMap { if case .presented(let shown) = $0 { shown.notification.request.identifier } else { nil } }
        }
        #expect(fired == ["once"])
    }

    @Test func theMachineSurvivesBeingStoredAndRestored() throws {
        var machine = stoppedApp(options: [.alert, .badge])
        try machine.setCategories([NotificationCategory(identifier: "c", actions: [NotificationAction(identifier: "x", title: "X")])])
        _ = try machine.add(request("later", .timeInterval(60, repeats: true), category: "c"))
        _ = try machine.add(request("now", category: "c"))
        _ = try machine.respond(to: "now", with: .action("x"))
        let data = try JSONEncoder().encode(machine)
        var restored = try JSONDecoder().decode(Machine.self, from: data)
        #expect(restored.settings == machine.settings)
        #expect(restored.pendingRequests == machine.pendingRequests)
        #expect(restored.categories == machine.categories)
        #expect(restored.queuedForAppCount == 1)
        #expect(restored.nextWakeUpDate() == Self.t0.addingTimeInterval(60))
        let effects = restored.setAppReachable(true, state: .background)
        #expect(deliveredTickets(effects).map(\.1) == ["now"])
    }

    @Test func anAttachmentStaysWhileAResponseWaitsForTheAppAndIsReleasedWhenItIsConfirmed() throws {
        var machine = stoppedApp()
        let file = URL(fileURLWithPath: "/store/1/0-photo.png")
        var photo = request("photo")
        photo.content.attachments = [NotificationAttachment(identifier: "p", url: file, type: "public.png")]
        _ = try machine.add(photo)
        #expect(machine.takeUnreferencedAttachments().isEmpty)

        _ = try machine.respond(to: "photo", with: .open)
        #expect(machine.deliveredNotifications.isEmpty)
        #expect(machine.takeUnreferencedAttachments().isEmpty, "the queued response still shows the photo to the app")

        let tickets = deliveredTickets(machine.setAppReachable(true, state: .background))
        #expect(tickets.map(\.1) == ["photo"])
        #expect(machine.takeUnreferencedAttachments().isEmpty, "the app has not confirmed yet")
        machine.completeResponse(ticket: tickets[0].0)
        #expect(machine.takeUnreferencedAttachments() == [file])
        #expect(machine.takeUnreferencedAttachments().isEmpty, "each file is handed over once")
    }
}
