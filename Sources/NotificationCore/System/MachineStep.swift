package import Foundation

/// The device's state that every app's machine follows: a system keeps it once and brings it to each
/// app at the app's next step (see ``NotificationCenterMachine/step(at:device:pending:atMost:_:)``).
package struct DeviceConditions: Sendable, Equatable {
    package var isLocked: Bool
    package var timeZone: TimeZone
    /// Where the device is; `nil` while unknown.
    package var location: Coordinate?
    /// The Focus the person turned on, if any, for every app (each step applies it to its app).
    package var focus: Focus?
    /// The person's Scheduled Summary, if it is on (it holds the notifications of the apps put in it).
    package var summary: ScheduledSummary?

    package init(isLocked: Bool = false, timeZone: TimeZone, location: Coordinate? = nil, focus: Focus? = nil, summary: ScheduledSummary? = nil) {
        self.isLocked = isLocked
        self.timeZone = timeZone
        self.location = location
        self.focus = focus
        self.summary = summary
    }

    /// The conditions as one app's machine receives them: the Focus as it applies to that app.
    package func applying(to bundleIdentifier: String) -> DeviceConditions {
        guard let focus else { return self }
        var conditions = self
        conditions.focus = focus.applying(to: bundleIdentifier)
        return conditions
    }
}

/// What one step of a machine did: the body's value or refusal, every effect in order, and whether
/// anything changed (a step that changed nothing needs no save).
package struct MachineStep<Value, Failure: Error> {
    /// The body's value, or why it refused; a body that refuses has changed nothing.
    package var result: Result<Value, Failure>
    /// What the step does, in order: what was pending, what catching up did, then what the body did.
    package var effects: [NotificationCenterMachine.Effect]
    /// Whether the machine may have changed: the body ran to its end, or catching up did something.
    package var changed: Bool
    /// Whether anything before the body changed the machine: what was pending, the device's state,
    /// what fell due.
    package var caughtUp: Bool
}

extension NotificationCenterMachine {
    /// One step, as every system (the in-process one and the daemon) runs it: the device's state is
    /// brought to the machine, what fell due by `now` is carried out (at most `limit` wake-ups: an app
    /// with more due is caught up over several steps), then `body` runs.
    ///
    /// A system adds nothing of its own around this: a new kind of input is a new body, and a new effect
    /// is routed by ``Effect/routes``, so both systems handle both the same way.
    ///
    /// - Parameters:
    ///   - device: the device's state, when the system keeps it apart from the machine (the daemon,
    ///     for every app at once); `nil` when the machine holds it itself.
    ///   - pending: effects decided before the step that are carried out with it (resuming after a
    ///     restart); they count as a change.
    package mutating func step<Value, Failure: Error>(
        at now: Date,
        device: DeviceConditions? = nil,
        pending: [Effect] = [],
        atMost limit: Int = .max,
        _ body: (inout NotificationCenterMachine) throws(Failure) -> (Value, [Effect])
    ) -> MachineStep<Value, Failure> {
        var effects = pending
        var changed = !pending.isEmpty
        if let device {
            if isDeviceLocked != device.isLocked {
                setDeviceLocked(device.isLocked)
                changed = true
            }
            // Not saved with the app: brought to every step. Held notifications move with it, and are saved.
            let placed = setScheduledSummary(device.summary)
            effects += placed
            changed = changed || !placed.isEmpty
            if timeZone != device.timeZone {
                effects += changeTimeZone(device.timeZone)
                changed = true
            }
            // Not saved with the app: brought to every step, so no change to save.
            focus = device.focus
            if let location = device.location, location != self.location {
                effects += updateLocation(location)
                changed = true
            }
        }
        let (due, wakeUps) = catchUp(to: now, atMost: limit)
        effects += due
        changed = changed || wakeUps > 0
        do throws(Failure) {
            let (value, more) = try body(&self)
            effects += more
            return MachineStep(result: .success(value), effects: effects, changed: true, caughtUp: changed)
        } catch {
            return MachineStep(result: .failure(error), effects: effects, changed: changed, caughtUp: changed)
        }
    }
}
