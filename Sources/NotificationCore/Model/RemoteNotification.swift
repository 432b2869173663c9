package import Foundation

/// A push for the app itself rather than the person: a background push (`content-available: 1`) or a
/// VoIP push. It reaches the app's `application(_:didReceiveRemoteNotification:fetchCompletionHandler:)`
/// and never the person (a push that also has an alert is shown as well, as its own notification).
package struct RemoteNotification: Sendable, Hashable, Codable {
    /// The push's `apns-id`.
    package var identifier: String
    /// The whole payload, `aps` included: the handler's `userInfo`.
    package var userInfo: [String: PropertyListValue]
    /// A VoIP push: handed to the app at once, never throttled.
    package var isVoIP: Bool
    /// The push's `apns-unique-id`, for the delivery log, when it came through a gateway.
    package var pushUniqueID: String?

    package init(identifier: String, userInfo: [String: PropertyListValue], isVoIP: Bool = false, pushUniqueID: String? = nil) {
        self.identifier = identifier
        self.userInfo = userInfo
        self.isVoIP = isVoIP
        self.pushUniqueID = pushUniqueID
    }
}

/// What the app's handler reports through its completion: UIKit's `UIBackgroundFetchResult`.
package enum BackgroundFetchResult: UInt, Sendable, Hashable, Codable, CaseIterable {
    case newData = 0
    case noData = 1
    case failed = 2
}

/// How many background pushes may wake an app that is not in the foreground: a budget that refills
/// evenly over an hour (a token bucket). iOS throttles background pushes by an undocumented power
/// budget and advises "not more than two or three per hour"; this makes that advice the rule, so a
/// provider sees in tests what its users' devices would do.
package struct BackgroundPushBudget: Sendable, Hashable, Codable {
    /// Pushes per hour, and at most this many at once after a quiet hour.
    package var perHour: Int
    /// Pushes that may wake the app now (fractions accumulate).
    package private(set) var available: Double
    package private(set) var updatedAt: Date

    package init(perHour: Int, at date: Date) {
        self.perHour = max(1, perHour)
        self.available = Double(self.perHour)
        self.updatedAt = date
    }

    private var secondsPerPush: TimeInterval { 3600 / Double(perHour) }

    /// Refills are computed in floating point: a push is allowed once it is within this of whole, so
    /// that the date ``nextAllowedDate(after:)`` gives always allows it (and a machine waiting for it
    /// never wakes to find it a hair short, again and again).
    private static let tolerance = 1e-6

    private mutating func refill(at date: Date) {
        guard date > updatedAt else { return }
        available = min(Double(perHour), available + date.timeIntervalSince(updatedAt) / secondsPerPush)
        updatedAt = date
    }

    /// Whether a push may wake the app at `date`, without spending it.
    package func allows(at date: Date) -> Bool {
        var copy = self
        copy.refill(at: date)
        return copy.available >= 1 - Self.tolerance
    }

    /// Spends one push if the budget allows it at `date`.
    package mutating func spend(at date: Date) -> Bool {
        refill(at: date)
        guard available >= 1 - Self.tolerance else { return false }
        available = max(0, available - 1)
        return true
    }

    /// When the next push will be allowed, from `date` on.
    package func nextAllowedDate(after date: Date) -> Date {
        var copy = self
        copy.refill(at: date)
        guard copy.available < 1 - Self.tolerance else { return date }
        // Rounded up to the millisecond: never a date that lands a rounding error short of the push.
        let wait = ((1 - copy.available) * secondsPerPush * 1000).rounded(.up) / 1000
        return date.addingTimeInterval(max(wait, 0.001))
    }
}

/// How an app the daemon starts for a push learns which one: the push's payload, as JSON, in the
/// environment variable ``remoteNotificationVariable``; the app puts it in its launch options.
package enum LaunchEnvironment {
    package static let remoteNotificationVariable = "UNOTIFY_LAUNCH_REMOTE_NOTIFICATION"

    /// The variable's value for `payload`.
    package static func value(for payload: [String: PropertyListValue]) -> String? {
        (try? JSONEncoder().encode(payload)).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The payload the environment names, if any.
    package static func remoteNotification(in environment: [String: String]) -> [String: PropertyListValue]? {
        guard let value = environment[remoteNotificationVariable] else { return nil }
        return try? JSONDecoder().decode([String: PropertyListValue].self, from: Data(value.utf8))
    }
}
