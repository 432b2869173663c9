package import Foundation

/// A rule an app's request or categories break: what the system accepts from any client, whatever
/// the client is. Apple's framework enforces some of these as exceptions when an object is made (a
/// repeating interval under 60 s); the others are limits that keep one app from harming the system.
package struct RuleViolation: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable name for the rule, such as `repeatingIntervalTooShort`.
    package var rule: String
    /// What was wrong and what is accepted instead.
    package var message: String

    package init(_ rule: String, _ message: String) {
        self.rule = rule
        self.message = message
    }

    package var description: String { message }
}

/// The rules every request and category must follow before the system keeps it.
///
/// The state machine applies them itself (``NotificationCenterMachine/add(_:)`` and
/// ``NotificationCenterMachine/setCategories(_:)``), so the in-process system and the daemon accept
/// exactly the same things, and no client of the daemon can store what the framework would refuse.
package enum RequestRules {
    /// The longest identifier (of a request, category, action, thread or region), in UTF-8 bytes.
    package static let maximumIdentifierBytes = 1024
    /// The most a request's content may weigh, all its text and `userInfo` together, in UTF-8 bytes:
    /// far above what a notification shows, and sixteen times the largest push payload.
    package static let maximumContentBytes = 64 * 1024
    /// The most attachments one notification may carry.
    package static let maximumAttachments = 10
    /// The most categories an app may register, and the most actions in one of them.
    package static let maximumCategories = 256
    package static let maximumActionsPerCategory = 32
    /// The largest radius of a region a location trigger watches, in metres.
    package static let maximumRegionRadius = 1_000_000.0

    /// The range each calendar-trigger component may take. A component outside its range can never
    /// match; such a trigger is refused before any search for its date.
    package static let componentRanges: [(Calendar.Component, ClosedRange<Int>, String)] = [
        (.era, 0...1_000, "era"),
        (.year, 1...100_000, "year"),
        (.month, 1...13, "month"),
        (.day, 1...31, "day"),
        (.hour, 0...23, "hour"),
        (.minute, 0...59, "minute"),
        (.second, 0...59, "second"),
        (.weekday, 1...7, "weekday"),
        (.weekdayOrdinal, -5...5, "weekdayOrdinal"),
        (.quarter, 1...4, "quarter"),
        (.weekOfMonth, 0...6, "weekOfMonth"),
        (.weekOfYear, 1...53, "weekOfYear"),
        (.yearForWeekOfYear, 1...100_000, "yearForWeekOfYear"),
        (.nanosecond, 0...999_999_999, "nanosecond"),
    ]

    /// Checks a request an app adds.
    ///
    /// - Returns: the first rule it breaks, or `nil` when the system can keep it.
    package static func violation(in request: NotificationRequest) -> RuleViolation? {
        if let violation = identifierViolation(request.identifier, what: "request identifier") { return violation }
        if let trigger = request.trigger, let violation = violation(in: trigger) { return violation }
        return violation(in: request.content)
    }

    /// Checks a trigger an app gives.
    package static func violation(in trigger: NotificationTrigger) -> RuleViolation? {
        switch trigger {
        case .timeInterval(let interval, let repeats):
            guard let broken = TriggerRules.validateTimeInterval(interval, repeats: repeats) else { return nil }
            switch broken {
            case .intervalNotPositive: return RuleViolation("intervalNotPositive", "The trigger's \(broken).")
            case .repeatingIntervalTooShort: return RuleViolation("repeatingIntervalTooShort", "The trigger's \(broken).")
            }
        case .calendar(let components, _):
            for (component, range, name) in componentRanges {
                guard let value = components.value(for: component) else { continue }
                guard range.contains(value) else {
                    return RuleViolation("dateComponentOutOfRange", "The calendar trigger's \(name) must be within \(range.lowerBound)…\(range.upperBound); got \(value).")
                }
            }
            return nil
        case .location(let region, _):
            if let violation = identifierViolation(region.identifier, what: "region identifier") { return violation }
            let center = region.center
            guard center.latitude.isFinite, center.longitude.isFinite,
                  (-90...90).contains(center.latitude), (-180...180).contains(center.longitude) else {
                return RuleViolation("regionInvalid", "The region's center must have a latitude within ±90 and a longitude within ±180.")
            }
            guard region.radius.isFinite, region.radius > 0, region.radius <= maximumRegionRadius else {
                return RuleViolation("regionInvalid", "The region's radius must be above 0 and at most \(Int(maximumRegionRadius)) m; got \(region.radius).")
            }
            guard region.notifyOnEntry || region.notifyOnExit else {
                return RuleViolation("regionInvalid", "The region must notify on entry, on exit, or both.")
            }
            return nil
        case .push:
            return RuleViolation("pushTriggerNotAllowed", "Only the push service delivers notifications with a push trigger; an app cannot add one.")
        }
    }

    /// Checks what a request shows and carries.
    package static func violation(in content: NotificationContent) -> RuleViolation? {
        for (value, what) in [(content.categoryIdentifier, "category identifier"), (content.threadIdentifier, "thread identifier"),
                              (content.targetContentIdentifier ?? "", "target content identifier")] {
            if let violation = identifierViolation(value, what: what) { return violation }
        }
        guard content.attachments.count <= maximumAttachments else {
            return RuleViolation("tooManyAttachments", "A notification carries at most \(maximumAttachments) attachments; got \(content.attachments.count).")
        }
        guard content.relevanceScore.isFinite else {
            return RuleViolation("relevanceScoreNotFinite", "The relevance score must be a finite number.")
        }
        if let sound = content.sound, !sound.volume.isFinite {
            return RuleViolation("soundVolumeNotFinite", "A critical sound's volume must be a finite number.")
        }
        guard content.summaryArgumentCount >= 0 else {
            return RuleViolation("summaryArgumentCountNegative", "The summary argument count must be 0 or more; got \(content.summaryArgumentCount).")
        }
        let weight = contentBytes(content)
        guard weight <= maximumContentBytes else {
            return RuleViolation("contentTooLarge", "A notification's text and userInfo weigh at most \(maximumContentBytes) bytes; this one weighs \(weight).")
        }
        return nil
    }

    /// Checks the categories an app registers.
    package static func violation(in categories: [NotificationCategory]) -> RuleViolation? {
        guard categories.count <= maximumCategories else {
            return RuleViolation("tooManyCategories", "An app registers at most \(maximumCategories) categories; got \(categories.count).")
        }
        for category in categories {
            if let violation = identifierViolation(category.identifier, what: "category identifier") { return violation }
            guard category.actions.count <= maximumActionsPerCategory else {
                return RuleViolation("tooManyActions", "A category has at most \(maximumActionsPerCategory) actions; \(category.identifier) has \(category.actions.count).")
            }
            var seen = Set<String>()
            for action in category.actions {
                guard !action.identifier.isEmpty else {
                    return RuleViolation("actionIdentifierEmpty", "Every action of \(category.identifier) needs an identifier.")
                }
                if let violation = identifierViolation(action.identifier, what: "action identifier") { return violation }
                guard seen.insert(action.identifier).inserted else {
                    return RuleViolation("duplicateActionIdentifier", "\(category.identifier) has two actions called \(action.identifier).")
                }
                var text = action.title.utf8.count
                if let input = action.textInput { text += input.buttonTitle.utf8.count + input.placeholder.utf8.count }
                guard text <= maximumIdentifierBytes * 4 else {
                    return RuleViolation("actionTooLarge", "The action \(action.identifier)'s title and text-input strings weigh at most \(maximumIdentifierBytes * 4) bytes.")
                }
            }
            let text = category.intentIdentifiers.reduce(0) { $0 + $1.utf8.count }
                + category.hiddenPreviewsBodyPlaceholder.utf8.count + category.categorySummaryFormat.utf8.count
            guard text <= maximumIdentifierBytes * 4 else {
                return RuleViolation("categoryTooLarge", "The category \(category.identifier)'s strings weigh at most \(maximumIdentifierBytes * 4) bytes.")
            }
        }
        return nil
    }

    /// Checks an app's bundle identifier: reverse-DNS, as Apple's `CFBundleIdentifier` is (letters,
    /// digits and hyphens, in labels separated by single periods, at most 255 characters). It names
    /// the app's folders on disk, so nothing else is accepted: no `..`, no `/`, no leading period.
    package static func violation(inBundleIdentifier value: String) -> RuleViolation? {
        let labels = value.split(separator: ".", omittingEmptySubsequences: false)
        let valid = !value.isEmpty && value.utf8.count <= 255
            && labels.allSatisfy { label in
                !label.isEmpty && label.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "-") }
            }
        guard valid else {
            return RuleViolation(
                "bundleIdentifierInvalid",
                "\"\(value)\" is not a bundle identifier: use letters, digits and hyphens in labels separated by single periods, such as com.example.todo."
            )
        }
        return nil
    }

    private static func identifierViolation(_ value: String, what: String) -> RuleViolation? {
        guard value.utf8.count <= maximumIdentifierBytes else {
            return RuleViolation("identifierTooLong", "A \(what) is at most \(maximumIdentifierBytes) bytes long; got \(value.utf8.count).")
        }
        return nil
    }

    /// What a content weighs: its text, and its `userInfo` as its keys and values would take in JSON
    /// (near enough; the bound is far from any real notification).
    private static func contentBytes(_ content: NotificationContent) -> Int {
        var total = content.title.utf8.count + content.subtitle.utf8.count + content.body.utf8.count
            + content.launchImageName.utf8.count + content.summaryArgument.utf8.count + (content.filterCriteria?.utf8.count ?? 0)
        if case .named(let name)? = content.sound?.kind { total += name.utf8.count }
        if case .ringtone(let name)? = content.sound?.kind { total += name.utf8.count }
        for attachment in content.attachments { total += attachment.identifier.utf8.count + attachment.url.path.utf8.count }
        for (key, value) in content.userInfo { total += key.utf8.count + weight(value) }
        return total
    }

    private static func weight(_ value: PropertyListValue) -> Int {
        switch value {
        case .string(let string): string.utf8.count + 2
        case .integer, .double, .date: 20
        case .bool: 5
        case .data(let data): data.count * 4 / 3 + 4
        case .array(let values): values.reduce(2) { $0 + weight($1) + 1 }
        case .dictionary(let values): values.reduce(2) { $0 + $1.key.utf8.count + 3 + weight($1.value) + 1 }
        }
    }
}
