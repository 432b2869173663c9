import Foundation
import NotificationCore
import TestSupport
import Testing

/// Pushes for the app itself (background and VoIP): handed to `didReceiveRemoteNotification`, never
/// to the person; throttled when the app is not in the foreground, the newest held.
@Suite struct BackgroundPushTests {
    typealias Machine = NotificationCenterMachine

    static let t0 = Date(timeIntervalSince1970: 1_767_225_600)

    func machine(appState: AppState = .background, reachable: Bool = true, perHour: Int? = 3) -> Machine {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        var configuration = Machine.Configuration()
        configuration.backgroundPushesPerHour = perHour
        var machine = Machine(now: Self.t0, calendar: calendar, timeZone: calendar.timeZone, appState: appState,
                              appReachable: reachable, configuration: configuration)
        _ = machine.requestAuthorization(options: [.alert, .sound, .badge], call: 0)
        _ = machine.answerAuthorizationPrompt(allow: true)
        return machine
    }

    /// Delivers a push as every system does.
    func receive(_ json: String, apnsID: String, pushType: APNs.PushType = .background, into machine: inout Machine) throws -> [Machine.Effect] {
        machine.receivePush(try APNs.payload(Array(json.utf8)).get(), apnsID: apnsID, collapseID: nil, pushType: pushType)
    }

    func background(_ apnsID: String, into machine: inout Machine) throws -> [Machine.Effect] {
        try receive(#"{"aps":{"content-available":1},"acme1":"bar"}"#, apnsID: apnsID, into: &machine)
    }

    /// The apns-ids handed to the app, with their tickets.
    func handedToApp(_ effects: [Machine.Effect]) -> [(ticket: UInt64, id: String)] {
        effects.compactMap { effect in
            guard case .deliverRemoteNotification(let ticket, let remote) = effect else { return nil }
            return (ticket, remote.identifier)
        }
    }

    func held(_ effects: [Machine.Effect]) -> [String] {
        effects.compactMap { effect in
            guard case .remoteNotificationHeld(let remote) = effect else { return nil }
            return remote.identifier
        }
    }

    @Test func aBackgroundPushReachesTheAppWithItsWholePayloadAndNeverThePerson() throws {
        var machine = machine()
        let effects = try background("a", into: &machine)
        #expect(handedToApp(effects).map(\.id) == ["a"])
        guard case .deliverRemoteNotification(_, let remote)? = effects.first else {
            Issue.record("nothing handed to the app: \(effects)")
            return
        }
        #expect(remote.userInfo["acme1"] == .string("bar"))
        #expect(remote.userInfo["aps"] == .dictionary(["content-available": .integer(1)]))
        #expect(!effects.contains { if case .presented = $0 { true } else { false } })
        #expect(machine.deliveredNotifications.isEmpty)
    }

    @Test func anAlertThatIsAlsoContentAvailableIsShownAndHandedToTheApp() throws {
        var machine = machine()
        let effects = try receive(#"{"aps":{"alert":"New mail","content-available":1}}"#, apnsID: "m", pushType: .alert, into: &machine)
        #expect(handedToApp(effects).map(\.id) == ["m"])
        #expect(machine.deliveredNotifications.map(\.request.content.body) == ["New mail"])
    }

    @Test func anAlertPushAloneDoesNotWakeTheApp() throws {
        var machine = machine()
        #expect(handedToApp(try receive(#"{"aps":{"alert":"Hi"}}"#, apnsID: "x", pushType: .alert, into: &machine)).isEmpty)
    }

    @Test func aBackgroundAppGetsThreeAnHourAndTheNewestOfTheRestWhenTheBudgetRefills() throws {
        var machine = machine()
        var delivered: [String] = []
        var heldIDs: [String] = []
        for id in ["1", "2", "3", "4", "5"] {
            let effects = try background(id, into: &machine)
            for handed in handedToApp(effects) {
                delivered.append(handed.id)
                machine.completeRemoteNotification(ticket: handed.ticket)
            }
            heldIDs += held(effects)
        }
        #expect(delivered == ["1", "2", "3"])
        #expect(heldIDs == ["4", "5"])
        #expect(machine.heldRemoteNotification?.identifier == "5")
        // One push refills every 20 minutes: not before.
        let wakeUp = machine.nextWakeUpDate()
        #expect(wakeUp == Self.t0.addingTimeInterval(20 * 60))
        let early = machine.catchUp(to: Self.t0.addingTimeInterval(20 * 60 - 1)).effects
        #expect(handedToApp(early).isEmpty)
        let refilled = machine.catchUp(to: Self.t0.addingTimeInterval(20 * 60)).effects
        #expect(handedToApp(refilled).map(\.id) == ["5"])
        #expect(machine.heldRemoteNotification == nil)
    }

    @Test func anAppInTheForegroundIsNeverThrottled() throws {
        var machine = machine(appState: .foreground)
        var delivered: [String] = []
        for id in (1...10).map(String.init) { delivered += handedToApp(try background(id, into: &machine)).map(\.id) }
        #expect(delivered.count == 10)
    }

    @Test func anAppComingToTheForegroundGetsItsHeldPushAtOnce() throws {
        var machine = machine(perHour: 1)
        _ = try background("1", into: &machine)
        #expect(held(try background("2", into: &machine)) == ["2"])
        let foreground = machine.setAppState(.foreground)
        #expect(handedToApp(foreground).map(\.id) == ["2"])
    }

    @Test func voipPushesAreNeverThrottled() throws {
        var machine = machine(perHour: 1)
        var delivered: [String] = []
        for id in ["1", "2", "3"] {
            delivered += handedToApp(try receive(#"{"aps":{},"call":"alice"}"#, apnsID: id, pushType: .voip, into: &machine)).map(\.id)
        }
        #expect(delivered == ["1", "2", "3"])
    }

    @Test func withoutALimitEveryPushGoesAtOnce() throws {
        var machine = machine(perHour: nil)
        var delivered: [String] = []
        for id in (1...10).map(String.init) { delivered += handedToApp(try background(id, into: &machine)).map(\.id) }
        #expect(delivered.count == 10)
    }

    @Test func liftingTheLimitHandsOverTheHeldPushAndEveryLaterOne() throws {
        var machine = machine(perHour: 1)
        _ = try background("1", into: &machine)
        #expect(held(try background("2", into: &machine)) == ["2"])
        let lifted = machine.setBackgroundPushesPerHour(nil)
        #expect(handedToApp(lifted).map(\.id) == ["2"])
        #expect(machine.heldRemoteNotification == nil)
        var later: [String] = []
        for id in (3...8).map(String.init) { later += handedToApp(try background(id, into: &machine)).map(\.id) }
        #expect(later == ["3", "4", "5", "6", "7", "8"])
    }

    @Test func aNewBudgetStartsFullAndThenRefillsAtItsOwnRate() throws {
        var machine = machine(perHour: 1)
        for push in handedToApp(try background("1", into: &machine)) { machine.completeRemoteNotification(ticket: push.ticket) }
        #expect(held(try background("2", into: &machine)) == ["2"])
        // Ten an hour, starting full: the held push goes now, and nine more after it.
        let handed = handedToApp(machine.setBackgroundPushesPerHour(10))
        #expect(handed.map(\.id) == ["2"])
        for push in handed { machine.completeRemoteNotification(ticket: push.ticket) }
        var delivered: [String] = []
        var heldIDs: [String] = []
        for id in (3...13).map(String.init) {
            let effects = try background(id, into: &machine)
            for push in handedToApp(effects) {
                delivered.append(push.id)
                machine.completeRemoteNotification(ticket: push.ticket)
            }
            heldIDs += held(effects)
        }
        #expect(delivered == (3...11).map(String.init))
        #expect(heldIDs == ["12", "13"])
        // One refills every six minutes.
        #expect(machine.nextWakeUpDate() == Self.t0.addingTimeInterval(6 * 60))
        // The same limit again changes nothing, and the change is kept with the app.
        #expect(machine.setBackgroundPushesPerHour(10).isEmpty)
        #expect(machine.configuration.backgroundPushesPerHour == 10)
    }

    @Test func aStoppedAppIsStartedInTheBackgroundAndGetsThePushWhenItConnects() throws {
        var machine = machine(appState: .notRunning, reachable: false)
        let effects = try background("1", into: &machine)
        #expect(effects.contains(.launchApp(.background)))
        #expect(held(effects) == ["1"])
        // Started for it: the app finds the push in its launch options.
        #expect(machine.launchRemoteNotification?["acme1"] == .string("bar"))
        let connected = machine.setAppReachable(true, state: .background)
        #expect(handedToApp(connected).map(\.id) == ["1"])
    }

    @Test func aStoppedAppOverItsBudgetIsNotStartedUntilTheBudgetRefills() throws {
        var machine = machine(appState: .notRunning, reachable: false, perHour: 1)
        #expect(try background("1", into: &machine).contains(.launchApp(.background)))
        _ = machine.setAppReachable(true, state: .background)
        _ = machine.setAppReachable(false, state: .notRunning)
        let effects = try background("2", into: &machine)
        #expect(!effects.contains(.launchApp(.background)))
        let anHourLater = machine.catchUp(to: Self.t0.addingTimeInterval(3600)).effects
        #expect(anHourLater.contains(.launchApp(.background)))
    }

    @Test func theCompletionHandlerClosesTheTicketAndALateOneIsReported() throws {
        var machine = machine()
        let first = try #require(handedToApp(try background("1", into: &machine)).first)
        #expect(machine.openTickets == 1)
        let confirmed = machine.completeRemoteNotification(ticket: first.ticket)
        #expect(confirmed?.identifier == "1")
        let again = machine.completeRemoteNotification(ticket: first.ticket)
        #expect(again == nil)
        #expect(machine.openTickets == 0)

        let second = try #require(handedToApp(try background("2", into: &machine)).first)
        let late = machine.catchUp(to: Self.t0.addingTimeInterval(30)).effects
        #expect(late == [.remoteNotificationTimedOut(ticket: second.ticket, RemoteNotification(identifier: "2", userInfo: [
            "aps": .dictionary(["content-available": .integer(1)]), "acme1": .string("bar"),
        ]))])
        #expect(machine.openTickets == 0)
    }

    @Test func aPushTheAppHadNotConfirmedWhenItWentAwayIsHandedOverAgain() throws {
        var machine = machine()
        _ = try background("1", into: &machine)
        _ = machine.setAppReachable(false, state: .notRunning)
        #expect(machine.heldRemoteNotification?.identifier == "1")
        let back = machine.setAppReachable(true, state: .foreground)
        #expect(handedToApp(back).map(\.id) == ["1"])
    }

    @Test func whatWaitsSurvivesTheStore() throws {
        var machine = machine(perHour: 1)
        machine.startRecordingChanges()
        let open = try #require(handedToApp(try background("1", into: &machine)).first)
        _ = try background("2", into: &machine)
        let whole = machine.takeWhole()
        var restored = Machine(now: whole.now, nextSequence: whole.nextSequence, core: try #require(whole.core),
                               categories: whole.categories ?? [], pending: whole.pending, visible: whole.visible, queued: whole.queued)
        #expect(restored.heldRemoteNotification?.identifier == "2")
        let confirmed = restored.completeRemoteNotification(ticket: open.ticket)
        #expect(confirmed?.identifier == "1")
        // The spent budget came back too: the held push waits for the refill.
        let early = restored.catchUp(to: Self.t0.addingTimeInterval(3599)).effects
        #expect(handedToApp(early).isEmpty)
        let refilled = restored.catchUp(to: Self.t0.addingTimeInterval(3600)).effects
        #expect(handedToApp(refilled).map(\.id) == ["2"])
    }

    @Test func theBudgetRefillsEvenlyUpToItsSize() {
        var budget = BackgroundPushBudget(perHour: 2, at: Self.t0)
        let first = budget.spend(at: Self.t0)
        #expect(first)
        let second = budget.spend(at: Self.t0)
        #expect(second)
        let third = budget.spend(at: Self.t0)
        #expect(!third)
        #expect(budget.nextAllowedDate(after: Self.t0) == Self.t0.addingTimeInterval(1800))
        #expect(!budget.allows(at: Self.t0.addingTimeInterval(1799)))
        #expect(budget.allows(at: Self.t0.addingTimeInterval(1800)))
        // A quiet day leaves no more than the budget's size.
        let nextDayFirst = budget.spend(at: Self.t0.addingTimeInterval(86_400))
        #expect(nextDayFirst)
        let nextDaySecond = budget.spend(at: Self.t0.addingTimeInterval(86_400))
        #expect(nextDaySecond)
        let nextDayThird = budget.spend(at: Self.t0.addingTimeInterval(86_400))
        #expect(!nextDayThird)
    }

    /// The date the budget names for the next push always allows it, whatever the rate and the
    /// moment: a machine waiting for it wakes once, not again and again a rounding error short.
    @Test(arguments: [1, 2, 3, 7, 11, 60, 97])
    func theNextAllowedDateAllowsThePush(perHour: Int) {
        var generator = SeededGenerator(seed: UInt64(perHour))
        var budget = BackgroundPushBudget(perHour: perHour, at: Self.t0)
        var now = Self.t0.addingTimeInterval(Double.random(in: 0..<1, using: &generator))
        for _ in 0..<200 {
            while budget.spend(at: now) {}
            let next = budget.nextAllowedDate(after: now)
            #expect(next > now)
            #expect(budget.allows(at: next))
            now = next.addingTimeInterval(Double.random(in: 0..<0.01, using: &generator))
        }
    }
}
