import Foundation
import NotificationCore
import Testing

/// The one step both systems run: the device's state first, then what fell due, then the input.
@Suite struct MachineStepTests {
    typealias Machine = NotificationCenterMachine

    static let t0 = Date(timeIntervalSince1970: 1_767_225_600)
    static let utc = TimeZone(identifier: "UTC")!
    static let tokyo = TimeZone(identifier: "Asia/Tokyo")!

    func authorizedApp() -> Machine {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = Self.utc
        var machine = Machine(now: Self.t0, calendar: calendar, timeZone: Self.utc, appState: .background)
        _ = machine.requestAuthorization(options: [.alert], call: 0)
        _ = machine.answerAuthorizationPrompt(allow: true)
        return machine
    }

    func request(_ identifier: String, _ trigger: NotificationTrigger?) -> NotificationRequest {
        var content = NotificationContent()
        content.title = identifier
        return NotificationRequest(identifier: identifier, content: content, trigger: trigger)
    }

    func presented(_ effects: [Machine.Effect]) -> [String] {
        effects.compactMap { if case .presented(let shown) = $0 { shown.notification.request.identifier } else { nil } }
    }

    @Test func theDeviceAndWhatFellDueComeBeforeTheInput() throws {
        var machine = authorizedApp()
        _ = try machine.add(request("due", .timeInterval(60, repeats: false)))
        let device = DeviceConditions(isLocked: true, timeZone: Self.tokyo)
        var lockedWhenTheInputRan = false
        let step = machine.step(at: Self.t0.addingTimeInterval(61), device: device) { (machine: inout Machine) throws(NotificationFailure) in
            lockedWhenTheInputRan = machine.isDeviceLocked
            return ((), try machine.add(self.request("new", nil)))
        }
        #expect(lockedWhenTheInputRan)
        #expect(machine.timeZone == Self.tokyo)
        #expect(presented(step.effects) == ["due", "new"], "what fell due is shown before what the input adds")
        #expect(step.changed)
        #expect(step.caughtUp, "the device's state and what fell due changed the machine before the input")

        // With nothing due and the device as it was, only the input changes it.
        let alone = machine.step(at: Self.t0.addingTimeInterval(62), device: device) { (machine: inout Machine) throws(NotificationFailure) in
            ((), try machine.add(self.request("another", nil)))
        }
        #expect(presented(alone.effects) == ["another"])
        #expect(alone.changed && !alone.caughtUp)
    }

    @Test func aRefusedInputKeepsWhatCatchingUpDidAndSaysSo() throws {
        var machine = authorizedApp()
        _ = try machine.add(request("due", .timeInterval(60, repeats: false)))
        let refused = machine.step(at: Self.t0.addingTimeInterval(61)) { (machine: inout Machine) throws(NotificationFailure) in
            ((), try machine.setBadgeCount(-1))
        }
        #expect(throws: NotificationFailure.self) { try refused.result.get() }
        #expect(presented(refused.effects) == ["due"])
        #expect(refused.changed, "what catching up did must be saved")

        let nothingDue = machine.step(at: Self.t0.addingTimeInterval(62)) { (machine: inout Machine) throws(NotificationFailure) in
            ((), try machine.setBadgeCount(-1))
        }
        #expect(nothingDue.effects.isEmpty)
        #expect(!nothingDue.changed, "a refused input with nothing due changed nothing")
    }

    @Test func catchingUpInOneStepIsBounded() throws {
        var machine = authorizedApp()
        _ = try machine.add(request("minutely", .timeInterval(60, repeats: true)))
        let step = machine.step(at: Self.t0.addingTimeInterval(600), atMost: 4) { (_: inout Machine) throws(Never) in ((), []) }
        #expect(presented(step.effects).count == 4)
        #expect(machine.nextWakeUpDate() == Self.t0.addingTimeInterval(300), "the fifth fire waits for the next step")
    }
}
