package import Foundation
package import NotificationCore

/// A fault scripted on the emulator: what it does, and which pushes it is for.
package struct Fault: Sendable, Hashable {
    /// What a fault does.
    package enum Action: Sendable, Hashable {
        /// The push is answered with this reason's status and reason (`410` with the time now as
        /// its timestamp), and not taken.
        case status(APNs.Reason)
        /// The push is taken and answered as usual, this many seconds later.
        case delay(TimeInterval)
        /// The connection is sent GOAWAY with this reason and closes; the push is not taken.
        case goAway(APNs.Reason)
        /// The push's stream is reset without an answer; it is not taken.
        case resetStream
        /// The connection is closed at once, without GOAWAY; the push is not taken.
        case closeConnection
        /// The simulated devices it names are offline while it lasts: pushes to them are taken and
        /// held, and reach them once it ends (unless they expired meanwhile).
        case offline
        /// The app is removed from the devices it names when the fault is scripted: their tokens
        /// answer `410 Unregistered` from then on, for good.
        case uninstalled

        /// Whether it acts on the devices rather than on the answers of pushes.
        package var isDeviceFault: Bool { self == .offline || self == .uninstalled }
    }

    package var id: Int
    package var action: Action
    /// The device token it is for; nil for any.
    package var token: String?
    /// The topic (or its app's bundle identifier) it is for; nil for any.
    package var topic: String?
    /// How many more pushes it is for; nil for every push while it lasts.
    package var remaining: Int?
    /// When it starts, on the emulator's clock; nil: when it is scripted.
    package var from: Date?
    /// When it ends, on the emulator's clock; nil: once its pushes are counted, or when removed.
    package var until: Date?
    /// The pushes it was for so far.
    package var fired = 0

    package init(id: Int = 0, action: Action, token: String? = nil, topic: String? = nil, remaining: Int? = nil, from: Date? = nil, until: Date? = nil) {
        self.id = id
        self.action = action
        self.token = token
        self.topic = topic
        self.remaining = remaining
        self.from = from
        self.until = until
    }

    /// Whether it is in force at `now`: started, not ended, with pushes left.
    package func isActive(at now: Date) -> Bool {
        if let from, now < from { return false }
        if let until, now >= until { return false }
        return remaining.map { $0 > 0 } ?? true
    }

    /// Whether it is over for good at `now` (its window has passed, or its pushes are counted).
    package func isOver(at now: Date) -> Bool {
        if let until, now >= until { return true }
        return remaining.map { $0 <= 0 } ?? false
    }

    /// Whether it is for a push to `token` of `topic` (the push's `apns-topic`) for the app `bundleIdentifier`.
    package func matches(token: String, topic: String?, bundleIdentifier: String) -> Bool {
        if let wanted = self.token, wanted != token { return false }
        if let wanted = self.topic, wanted != topic, wanted != bundleIdentifier { return false }
        return true
    }

    /// What the delivery log and the faults' list say it does.
    package var summary: String {
        switch action {
        case .status(let reason): "\(reason.status) \(reason.rawValue)"
        case .delay(let seconds): "answer delayed \(EmulatorDuration.text(seconds))"
        case .goAway(let reason): "GOAWAY \(reason.rawValue)"
        case .resetStream: "stream reset"
        case .closeConnection: "connection closed"
        case .offline: "device offline"
        case .uninstalled: "app uninstalled"
        }
    }
}

/// The faults scripted on the emulator, in the order they were scripted: which one a push meets,
/// and which devices are offline. A pure value; the emulator keeps one under its lock.
package struct FaultScript: Sendable {
    package private(set) var faults: [Fault] = []
    private var nextID = 1

    package init() {}

    /// Adds a fault; returns it with its identifier.
    package mutating func add(_ fault: Fault) -> Fault {
        var fault = fault
        fault.id = nextID
        nextID += 1
        faults.append(fault)
        return fault
    }

    /// Removes a fault; returns it, or nil when there is none with that identifier.
    package mutating func remove(_ id: Int) -> Fault? {
        guard let index = faults.firstIndex(where: { $0.id == id }) else { return nil }
        return faults.remove(at: index)
    }

    /// Removes every fault.
    package mutating func removeAll() {
        faults.removeAll()
    }

    /// What a push meets at `now`: the first fault in force for it that acts on its answer, if any,
    /// and the device faults in force for it (a push to an offline device counts against its fault;
    /// one to an app uninstalled is noted).
    /// Each fault counted is one push nearer its end.
    package mutating func meet(token: String, topic: String?, bundleIdentifier: String, at now: Date) -> (answer: Fault?, device: [Fault]) {
        var answer: Fault?
        var device: [Fault] = []
        for index in faults.indices where faults[index].isActive(at: now)
            && faults[index].matches(token: token, topic: topic, bundleIdentifier: bundleIdentifier) {
            if !faults[index].action.isDeviceFault, answer != nil { continue }
            faults[index].fired += 1
            faults[index].remaining = faults[index].remaining.map { $0 - 1 }
            if faults[index].action.isDeviceFault { device.append(faults[index]) } else { answer = faults[index] }
        }
        return (answer, device)
    }

    /// The `offline` faults in force at `now`.
    package func offline(at now: Date) -> [Fault] {
        faults.filter { $0.action == .offline && $0.isActive(at: now) }
    }
}
