internal import DequeModule
import Foundation
import NotificationCore

/// What durable steps do, waiting to be carried out. The scheduler steps an app a little before its
/// wake-up (``DaemonEngine/Configuration/firesAhead``) and saves the step at once; what the step does
/// (the banner, the app's `willPresent`) waits here for the wake-up itself, and the app's later steps
/// wait behind it: an app hears of its steps in their order. In between, the notification already
/// reads as delivered, and a crash leaves it so, as after a crash between any step's save and its
/// effects.
struct HeldSteps {
    /// What a durable step does, waiting to be carried out at its time (or after an earlier step's).
    struct Step {
        let effects: [NotificationCenterMachine.Effect]
        /// The time of a step taken ahead of it; `nil` for a later step, carried out after the one before.
        let showAt: Date?
        /// Whether the app had answered every `willPresent` question and confirmed every response.
        let isSettled: Bool
    }

    private var steps: [String: Deque<Step>] = [:]

    /// Whether anything of `app` waits.
    func isHolding(_ app: String) -> Bool { steps[app] != nil }

    /// The apps something waits for.
    var apps: [String] { Array(steps.keys) }

    /// Holds a durable step's effects until `showAt`, a time still to come.
    mutating func hold(_ app: String, _ effects: [NotificationCenterMachine.Effect], isSettled: Bool, until showAt: Date) {
        steps[app, default: []].append(Step(effects: effects, showAt: showAt, isSettled: isSettled))
    }

    /// Holds a durable step's effects behind what already waits for the app, if anything does;
    /// returns `false` when nothing does (they are to be carried out now).
    mutating func holdBehind(_ app: String, _ effects: [NotificationCenterMachine.Effect], isSettled: Bool) -> Bool {
        guard steps[app] != nil else { return false }
        steps[app]!.append(Step(effects: effects, showAt: nil, isSettled: isSettled))
        return true
    }

    /// The next of an app's steps whose time has come by `now`, taken out: the first in line, if its
    /// time has come (or it has none: it only waited behind the ones before).
    mutating func takeNext(of app: String, through now: Date) -> Step? {
        guard let step = steps[app]?.first, step.showAt.map({ $0 <= now }) ?? true else { return nil }
        steps[app]!.removeFirst()
        if steps[app]!.isEmpty { steps[app] = nil }
        return step
    }

    /// Forgets everything of an app (removed, or set aside): nothing of it is to be carried out.
    mutating func drop(_ app: String) {
        steps.removeValue(forKey: app)
    }
}
