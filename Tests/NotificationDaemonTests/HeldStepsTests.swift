import Foundation
@testable import NotificationDaemon
@testable import NotificationEngine
import Testing

/// What durable steps do, held for their time: in order, each when its time has come.
@Suite struct HeldStepsTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func aStepAheadOfItsTimeWaitsForItAndTheAppsLaterStepsWaitBehindIt() {
        var held = HeldSteps()
        let untimed = held.holdBehind("a", [], isSettled: true)
        held.hold("a", [], isSettled: false, until: now.addingTimeInterval(0.025))
        let behind = held.holdBehind("a", [], isSettled: true)
        let otherApp = held.holdBehind("b", [], isSettled: true)
        #expect(!untimed, "nothing waits: carried out now")
        #expect(behind, "behind the step that waits")
        #expect(!otherApp, "another app's step does not wait")
        #expect(held.isHolding("a") && !held.isHolding("b"))

        let early = held.takeNext(of: "a", through: now)
        let first = held.takeNext(of: "a", through: now.addingTimeInterval(0.025))
        let second = held.takeNext(of: "a", through: now.addingTimeInterval(0.025))
        let none = held.takeNext(of: "a", through: .distantFuture)
        #expect(early == nil, "not yet")
        #expect(first?.isSettled == false)
        #expect(second?.isSettled == true && second?.showAt == nil)
        #expect(none == nil)
        #expect(!held.isHolding("a") && held.apps.isEmpty)
    }

    @Test func aDroppedAppHasNothingLeftToCarryOut() {
        var held = HeldSteps()
        held.hold("a", [], isSettled: true, until: now.addingTimeInterval(1))
        held.drop("a")
        let next = held.takeNext(of: "a", through: .distantFuture)
        #expect(next == nil)
        #expect(!held.isHolding("a"))
    }
}
