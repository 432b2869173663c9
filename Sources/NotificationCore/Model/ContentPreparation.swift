package import Foundation

/// An app's notification service extension, as the machine needs to know it: whether there is one,
/// and how long it may take. Where it lives and how it runs is the shell's business.
package struct ServiceExtension: Sendable, Hashable, Codable {
    /// How long the extension has to hand back the content of one push; Apple gives 30 seconds.
    package var timeLimit: TimeInterval

    /// The longest time limit an app may ask for: a push never waits more than this to be shown.
    package static let longestTimeLimit: TimeInterval = 300
    /// The shortest: an extension needs a moment to start.
    package static let shortestTimeLimit: TimeInterval = 1

    package init(timeLimit: TimeInterval = 30) {
        self.timeLimit = timeLimit
    }

    /// How long before the deadline the extension is told time is nearly up
    /// (`serviceExtensionTimeWillExpire()`): a fifth of its time, at most three seconds, so that its best
    /// attempt still arrives in time.
    package var warningLead: TimeInterval { min(3, timeLimit / 5) }
}

/// A push whose content the app's service extension is preparing: the person sees nothing of it until
/// the extension hands back the content, or its time is up and the original is shown.
package struct ContentPreparation: Sendable, Hashable, Codable {
    /// The push's request, as it arrived (its original content).
    package var request: NotificationRequest
    /// The extension's time for it.
    package var serviceExtension: ServiceExtension
    /// When the extension was last started for it.
    package var started: Date
    /// How many times the extension was started for it: a restart of the system runs it once more,
    /// and after that shows the original.
    package var attempts: Int
    /// Whether the extension was told its time is nearly up.
    package var warned: Bool

    package init(request: NotificationRequest, serviceExtension: ServiceExtension, started: Date, attempts: Int = 1, warned: Bool = false) {
        self.request = request
        self.serviceExtension = serviceExtension
        self.started = started
        self.attempts = attempts
        self.warned = warned
    }

    /// When its time is up.
    package var deadline: Date { started.addingTimeInterval(serviceExtension.timeLimit) }
    /// When the extension is told its time is nearly up.
    package var warningDate: Date { deadline.addingTimeInterval(-serviceExtension.warningLead) }

    /// How often the extension is started for one push at most.
    package static let maximumAttempts = 2
}

/// How a preparation ended: what the person is shown comes from this.
package enum PreparationOutcome: Sendable, Hashable, Codable {
    /// The extension handed back the content, which is shown.
    case prepared
    /// The extension's time ran out without an answer: the original is shown.
    case timedOut
    /// The extension failed (it crashed, answered twice or answered something unreadable, or its
    /// content broke a rule): the original is shown. The reason says which, for logs.
    case failed(String)
    /// The system stopped while the extension ran, twice: the original is shown.
    case interrupted

    /// How it is named in events and logs.
    package var name: String {
        switch self {
        case .prepared: "prepared"
        case .timedOut: "timedOut"
        case .failed: "failed"
        case .interrupted: "interrupted"
        }
    }

    /// Why the extension failed, if it did.
    package var reason: String? {
        if case .failed(let reason) = self { return reason }
        return nil
    }
}
