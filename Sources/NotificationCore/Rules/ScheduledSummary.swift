package import Foundation

/// The person's Scheduled Summary, as iOS 15 has it: the apps they put in it (each app's
/// `scheduledDeliverySetting`) deliver quietly, and what they delivered is shown together at the times
/// the person picked, as a digest. Time-sensitive notifications (when the app's Time Sensitive setting
/// is on) and critical ones go through at once.
package struct ScheduledSummary: Sendable, Hashable, Codable {
    /// A time of day the summary is delivered, on the device's clock ("08:00", "18:30").
    package struct Time: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
        package var hour: Int
        package var minute: Int

        package init(hour: Int, minute: Int) {
            self.hour = hour
            self.minute = minute
        }

        /// "HH:MM", 00:00 to 23:59; `nil` for anything else.
        package init?(_ text: String) {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2, parts.allSatisfy({ $0.count == 2 && $0.allSatisfy { ("0"..."9").contains($0) } }),
                  let hour = Int(parts[0]), let minute = Int(parts[1]), (0...23).contains(hour), (0...59).contains(minute)
            else { return nil }
            self.init(hour: hour, minute: minute)
        }

        package var description: String {
            (hour < 10 ? "0" : "") + "\(hour):" + (minute < 10 ? "0" : "") + "\(minute)"
        }

        package static func < (lhs: Time, rhs: Time) -> Bool {
            (lhs.hour, lhs.minute) < (rhs.hour, rhs.minute)
        }

        package init(from decoder: any Decoder) throws {
            let text = try decoder.singleValueContainer().decode(String.self)
            guard let time = Time(text) else {
                throw DecodingError.dataCorrupted(DecodingError.Context(
                    codingPath: decoder.codingPath, debugDescription: "A summary's time is HH:MM on a 24-hour clock, such as \"08:00\"; got \"\(text)\"."
                ))
            }
            self = time
        }

        package func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(description)
        }
    }

    /// When the summary is delivered each day, earliest first.
    package var times: [Time]
    /// Whether what waits for the next summary can be seen in Notification Center before it comes
    /// (iOS's "Show Next Summary").
    package var showsNextSummary: Bool

    /// iOS's first two summaries: 8 AM and 6 PM.
    package static let defaultTimes = [Time(hour: 8, minute: 0), Time(hour: 18, minute: 0)]
    /// As many summaries a day as iOS allows.
    package static let maximumTimes = 12

    package init(times: [Time] = ScheduledSummary.defaultTimes, showsNextSummary: Bool = false) {
        self.times = times.sorted()
        self.showsNextSummary = showsNextSummary
    }

    private enum CodingKeys: String, CodingKey { case times, showsNextSummary }

    /// Both fields may be left out, as the initializer's defaults say; the times come back sorted.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            times: try container.decodeIfPresent([Time].self, forKey: .times) ?? Self.defaultTimes,
            showsNextSummary: try container.decodeIfPresent(Bool.self, forKey: .showsNextSummary) ?? false
        )
    }

    /// What is wrong with this summary, for the person; `nil` when nothing is.
    package var problem: String? {
        if times.isEmpty { return "A Scheduled Summary needs at least one time; turn it off instead." }
        if times.count > Self.maximumTimes { return "A Scheduled Summary has at most \(Self.maximumTimes) times a day; got \(times.count)." }
        if Set(times).count != times.count { return "A Scheduled Summary names a time more than once." }
        return nil
    }

    /// The first summary strictly after `date`, on the device's clock.
    package func nextDelivery(after date: Date, calendar: Calendar, timeZone: TimeZone) -> Date? {
        times.compactMap { time in
            TriggerRules.nextDate(matching: DateComponents(hour: time.hour, minute: time.minute, second: 0),
                                  after: date, calendar: calendar, timeZone: timeZone)
        }.min()
    }

    /// Whether a notification with `content` of an app with `settings` waits for the summary: the app is
    /// fully authorized and in the summary, and the notification is neither critical nor a time-sensitive
    /// one the app may deliver at once.
    package static func holds(_ content: NotificationContent, settings: NotificationSettings) -> Bool {
        guard settings.authorizationStatus == .authorized, settings.scheduledDeliverySetting == .enabled else { return false }
        switch content.interruptionLevel {
        case .critical: return false
        case .timeSensitive: return settings.timeSensitiveSetting != .enabled
        case .passive, .active: return true
        }
    }
}

/// Where a notification stands with the Scheduled Summary.
package struct SummaryPlacement: Sendable, Hashable, Codable {
    /// The summary it waits for, or the one it came in.
    package var date: Date
    /// Whether it still waits: it is delivered, quietly, but the person sees it only when the summary comes.
    package var held: Bool
    /// How it is shown once the summary comes: as the settings (and, in the foreground, the app) decided
    /// when it arrived, quietly.
    package var whenShown: Presentation

    package init(date: Date, held: Bool, whenShown: Presentation) {
        self.date = date
        self.held = held
        self.whenShown = whenShown
    }
}

extension PresentationPolicy {
    /// `presentation` while the notification waits for the summary: kept for it, with no banner, no
    /// sound and nothing on the lock screen; the badge still changes.
    package static func heldForSummary(_ presentation: Presentation) -> Presentation {
        Presentation(list: true, badge: presentation.badge)
    }

    /// How a notification whose presentation was decided as `decided` is shown once its summary comes:
    /// quietly, in the list and on the lock screen as decided (in the list when neither was, since
    /// the summary is where the person sees it); the badge it set when it arrived.
    package static func shownAfterSummary(_ decided: Presentation) -> Presentation {
        Presentation(list: decided.list || !decided.lockScreen, lockScreen: decided.lockScreen, badge: decided.badge)
    }
}
