import Foundation
import NotificationCore
import Testing

/// A push marked `mutable-content` and the app's service extension, in the machine: nothing is shown
/// until the extension hands back the content or its time is up, and then exactly once.
@Suite struct ContentPreparationTests {
    typealias Machine = NotificationCenterMachine

    static let t0 = Date(timeIntervalSince1970: 1_767_225_600)
    let serviceExtension = ServiceExtension(timeLimit: 30)

    func machine(authorized: Bool = true) -> Machine {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        var machine = Machine(now: Self.t0, calendar: calendar, timeZone: calendar.timeZone, appState: .background)
        if authorized {
            _ = machine.requestAuthorization(options: [.alert, .sound, .badge], call: 0)
            _ = machine.answerAuthorizationPrompt(allow: true)
        }
        return machine
    }

    func receive(_ json: String, into machine: inout Machine, collapseID: String = "news", pushType: APNs.PushType = .alert,
                 serviceExtension: ServiceExtension? = ServiceExtension(timeLimit: 30)) throws -> [Machine.Effect] {
        machine.receivePush(try APNs.payload(Array(json.utf8)).get(), apnsID: "apns-1", collapseID: collapseID, pushType: pushType,
                            serviceExtension: serviceExtension)
    }

    static let mutable = #"{"aps":{"alert":{"title":"Title","body":"Body"},"mutable-content":1}}"#

    func shownBodies(_ effects: [Machine.Effect]) -> [String] {
        effects.compactMap { if case .presented(let shown) = $0 { shown.notification.request.content.body } else { nil } }
    }

    func preparationTicket(_ effects: [Machine.Effect]) -> UInt64? {
        effects.lazy.compactMap { if case .prepareContent(let ticket, _) = $0 { ticket } else { nil } }.first
    }

    @Test func aMutablePushWaitsForTheExtensionAndShowsWhatItHandsBack() throws {
        var machine = machine()
        let effects = try receive(Self.mutable, into: &machine)
        #expect(shownBodies(effects).isEmpty, "nothing is shown while the extension works")
        let ticket = try #require(preparationTicket(effects))
        guard case .prepareContent(_, let preparation) = effects.first else { Issue.record("\(effects)"); return }
        #expect(preparation.request.content.body == "Body")
        #expect(preparation.deadline == Self.t0.addingTimeInterval(30))
        #expect(machine.nextWakeUpDate() == Self.t0.addingTimeInterval(27), "warned three seconds before the end")

        var content = preparation.request.content
        content.body = "Body, changed"
        let finished = machine.finishPreparation(ticket: ticket, content: content)
        #expect(finished.first == .preparationEnded(ticket: ticket, preparation, .prepared))
        #expect(shownBodies(finished) == ["Body, changed"])
        #expect(machine.deliveredNotifications.map(\.request.trigger) == [.push])
        #expect(machine.nextWakeUpDate() == nil, "its deadlines are gone")
        #expect(machine.finishPreparation(ticket: ticket, content: content).isEmpty, "a second answer changes nothing")
    }

    @Test func onlyAMutableAlertPushOfAnAppWithAnExtensionThatMayShowItIsPrepared() throws {
        var plain = machine()
        #expect(shownBodies(try receive(#"{"aps":{"alert":{"body":"Body"}}}"#, into: &plain)) == ["Body"])
        var noExtension = machine()
        #expect(shownBodies(try receive(Self.mutable, into: &noExtension, serviceExtension: nil)) == ["Body"])
        var notAllowed = machine(authorized: false)
        #expect(try receive(Self.mutable, into: &notAllowed) == [], "nothing to show: the extension is not started")
        var background = machine()
        #expect(preparationTicket(try receive(#"{"aps":{"content-available":1,"mutable-content":1}}"#, into: &background)) == nil)
        var voip = machine()
        #expect(preparationTicket(try receive(Self.mutable, into: &voip, pushType: .voip)) == nil)
    }

    @Test func whenTimeIsNearlyUpTheExtensionIsWarnedAndThenTheOriginalIsShown() throws {
        var machine = machine()
        let ticket = try #require(preparationTicket(try receive(Self.mutable, into: &machine)))
        #expect(machine.advance(to: Self.t0.addingTimeInterval(26.9)) == nil)
        #expect(machine.advance(to: Self.t0.addingTimeInterval(27)) == [.preparationTimeWillExpire(ticket: ticket)])
        #expect(machine.advance(to: Self.t0.addingTimeInterval(29.9)) == nil)
        let due = machine.advance(to: Self.t0.addingTimeInterval(30))
        let ended = try #require(due)
        guard case .preparationEnded(ticket, _, .timedOut) = ended.first else { Issue.record("\(ended)"); return }
        #expect(shownBodies(ended) == ["Body"])
        #expect(machine.finishPreparation(ticket: ticket, content: NotificationContent()).isEmpty, "too late")
    }

    @Test func aFailureOrContentThatBreaksARuleShowsTheOriginal() throws {
        var machine = machine()
        let crashed = try #require(preparationTicket(try receive(Self.mutable, into: &machine, collapseID: "one")))
        let effects = machine.finishPreparation(ticket: crashed, content: nil, failure: "it crashed")
        guard case .preparationEnded(_, _, .failed("it crashed")) = effects.first else { Issue.record("\(effects)"); return }
        #expect(shownBodies(effects) == ["Body"])

        let broken = try #require(preparationTicket(try receive(Self.mutable, into: &machine, collapseID: "two")))
        var content = NotificationContent()
        content.body = "Changed"
        content.badge = -1
        let refused = machine.finishPreparation(ticket: broken, content: content)
        guard case .preparationEnded(_, _, .failed(let reason)) = refused.first else { Issue.record("\(refused)"); return }
        #expect(reason.contains("badge"))
        #expect(shownBodies(refused) == ["Body"])
    }

    @Test func aNewerPushWithTheSameIdentifierReplacesOneBeingPrepared() throws {
        var machine = machine()
        let first = try #require(preparationTicket(try receive(Self.mutable, into: &machine)))
        let effects = try receive(#"{"aps":{"alert":{"body":"Newer"},"mutable-content":1}}"#, into: &machine)
        guard case .preparationEnded(first, _, .failed) = effects.first else { Issue.record("\(effects)"); return }
        let second = try #require(preparationTicket(effects))
        #expect(shownBodies(machine.finishPreparation(ticket: first, content: NotificationContent())).isEmpty)
        var content = NotificationContent()
        content.body = "Newer, prepared"
        #expect(shownBodies(machine.finishPreparation(ticket: second, content: content)) == ["Newer, prepared"])
        #expect(machine.deliveredNotifications.map(\.request.content.body) == ["Newer, prepared"])
    }

    @Test func aPreparationIsKeptInTheStoredCoreAndRunsAgainOnceAfterARestart() throws {
        var machine = machine()
        machine.startRecordingChanges()
        let ticket = try #require(preparationTicket(try receive(Self.mutable, into: &machine)))
        let whole = machine.takeWhole()
        let core = try JSONDecoder().decode(Machine.Core.self, from: JSONEncoder().encode(try #require(whole.core)))
        #expect(core.preparing?[ticket]?.attempts == 1)

        let later = Self.t0.addingTimeInterval(100)
        var restored = Machine(now: whole.now, nextSequence: whole.nextSequence, core: core, categories: [], pending: [], visible: [], queued: [])
        let resumed = restored.resume(at: later)
        guard let again = resumed.compactMap({ if case .prepareContent(ticket, let p) = $0 { p } else { nil } }).first else {
            Issue.record("\(resumed)"); return
        }
        #expect(again.attempts == 2)
        #expect(again.deadline == later.addingTimeInterval(30), "its whole time again")

        var secondCore = core
        secondCore.preparing?[ticket]?.attempts = 2
        var twice = Machine(now: whole.now, nextSequence: whole.nextSequence, core: secondCore, categories: [], pending: [], visible: [], queued: [])
        let interrupted = twice.resume(at: later)
        #expect(interrupted.contains { if case .preparationEnded(ticket, _, .interrupted) = $0 { true } else { false } })
        #expect(shownBodies(interrupted) == ["Body"])
    }

    @Test func aCoreWithoutPreparationsIsStoredAsBefore() throws {
        var machine = machine()
        machine.startRecordingChanges()
        let json = String(decoding: try JSONEncoder().encode(try #require(machine.takeWhole().core)), as: UTF8.self)
        #expect(!json.contains("preparing"))
    }
}
