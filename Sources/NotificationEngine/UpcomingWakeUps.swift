package import Foundation

/// The apps that wake up first, and when: read once from the store's index of wake-ups, then kept
/// up to date with every save, so the scheduler finds what is due, and when it next has something
/// to do, without reading the store.
///
/// It is exact up to ``horizon``: every app whose next wake-up is at or before the horizon is here,
/// with that wake-up, and no other app is. Past the horizon it knows nothing, and the store is read
/// again.
package struct UpcomingWakeUps: Sendable, Equatable {
    /// The date up to which ``dates`` holds every app's wake-up; `nil` until the store is read.
    package private(set) var horizon: Date?
    private var dates: [String: Date] = [:]
    /// How many apps a read of the store takes; it holds at most four times as many before it
    /// drops the latest.
    package let capacity: Int

    package init(capacity: Int) {
        precondition(capacity > 0, "an empty read knows nothing")
        self.capacity = capacity
    }

    /// What the scheduler does next.
    package enum Next: Equatable, Sendable {
        /// Read the store's index (``load(_:)``): the date asked about is past what is known.
        case unknown
        /// Wake up at this date (nothing before it is due), or never if `nil` (nothing is due ever).
        case at(Date?)
    }

    /// The apps with a wake-up due by `now`, soonest first, at most `limit`; `nil` when `now` is past
    /// the horizon (read the store).
    package func due(by now: Date, limit: Int) -> [String]? {
        dueWakeUps(by: now, limit: limit)?.map(\.bundleIdentifier)
    }

    /// ``due(by:limit:)`` with each app's wake-up.
    package func dueWakeUps(by now: Date, limit: Int) -> [(bundleIdentifier: String, date: Date)]? {
        guard let horizon, now <= horizon else { return nil }
        return dates.filter { $0.value <= now }
            .sorted { ($0.value, $0.key) < ($1.value, $1.key) }
            .prefix(limit)
            .map { ($0.key, $0.value) }
    }

    /// When the earliest app wakes up, or ``Next/unknown`` before the store was read.
    package var next: Next {
        guard let horizon else { return .unknown }
        if let earliest = dates.values.min() { return .at(earliest) }
        // Nothing up to the horizon: look again there, unless the read saw every wake-up there is.
        return .at(horizon == .distantFuture ? nil : horizon)
    }

    /// Takes what the store's index says: the `capacity` earliest wake-ups, soonest first (fewer when
    /// there are no more).
    package mutating func load(_ earliest: [(bundleIdentifier: String, date: Date)]) {
        dates = Dictionary(earliest.map { ($0.bundleIdentifier, $0.date) }, uniquingKeysWith: min)
        guard earliest.count >= capacity, let last = earliest.last?.date else {
            horizon = .distantFuture
            return
        }
        // Apps past the read may wake up at the same date as the last one read: known only before it.
        cut(before: last)
    }

    /// Notes an app's next wake-up as a durable save left it (`nil`: nothing due, or the app is gone).
    package mutating func note(_ bundleIdentifier: String, wakeUp: Date?) {
        guard let horizon else { return }
        if let wakeUp, wakeUp <= horizon {
            dates[bundleIdentifier] = wakeUp
            if dates.count > 4 * capacity { shrink() }
        } else if dates[bundleIdentifier] != nil {
            dates[bundleIdentifier] = nil
        }
    }

    /// Forgets everything: the next question reads the store.
    package mutating func forgetAll() {
        horizon = nil
        dates = [:]
    }

    /// Keeps the `capacity` earliest apps (and any waking up with the last of them kept out).
    private mutating func shrink() {
        let sorted = dates.values.sorted()
        cut(before: sorted[capacity])
    }

    private mutating func cut(before date: Date) {
        let edge = Date(timeIntervalSinceReferenceDate: date.timeIntervalSinceReferenceDate.nextDown)
        horizon = edge
        dates = dates.filter { $0.value <= edge }
    }
}
