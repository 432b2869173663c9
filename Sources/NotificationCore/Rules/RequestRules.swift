package import Foundation

/// A rule an app's request or categories break: what the system accepts from any client, whatever
/// the client is. Apple's framework enforces some of these as exceptions when an object is made (a
/// repeating interval under 60 s); the others are limits that keep one app from harming the system.
package struct RuleViolation: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable name for the rule, such as `repeatingIntervalTooShort`.
    package var rule: String
    /// What was wrong and what is accepted instead.
    package var message: String
    /// The `UNError` code Apple reports for this, when it has one.
    package var errorCode: NotificationErrorCode?

    package init(_ rule: String, _ message: String, errorCode: NotificationErrorCode? = nil) {
        self.rule = rule
        self.message = message
        self.errorCode = errorCode
    }

    package var description: String { message }
}

/// The rules every request and category must follow before the system keeps it.
///
/// The state machine applies them itself (``NotificationCenterMachine/add(_:)`` and
/// ``NotificationCenterMachine/setCategories(_:)``), so the in-process system and the daemon accept
/// exactly the same things, and no client of the daemon can store what the framework would refuse.
package enum RequestRules {
    /// The longest identifier (of a request, category, action, thread or region) and the longest
    /// string of a category (titles, placeholders), in characters (Unicode scalars, as JSON Schema's
    /// `maxLength` counts them).
    package static let maximumIdentifierLength = 1024
    /// The most a request's content may weigh, all its text and `userInfo` together, in UTF-8 bytes:
    /// far above what a notification shows, and sixteen times the largest push payload.
    package static let maximumContentBytes = 64 * 1024
    /// The most attachments one notification may carry.
    package static let maximumAttachments = 10
    /// The most categories an app may register, and the most actions in one of them.
    package static let maximumCategories = 256
    package static let maximumActionsPerCategory = 32
    package static let maximumIntentIdentifiers = 64
    /// The longest interval of a time-interval trigger: a century, in seconds. Its date would be
    /// past any the system can wait for.
    package static let maximumInterval: TimeInterval = 100 * 365.25 * 86_400
    /// The largest radius of a region a location trigger watches, in metres.
    package static let maximumRegionRadius = 1_000_000.0

    /// Checks a request an app adds.
    ///
    /// - Returns: the first rule it breaks, or `nil` when the system can keep it.
    package static func violation(in request: NotificationRequest) -> RuleViolation? {
        if let violation = identifierViolation(request.identifier, what: "request identifier") { return violation }
        if let trigger = request.trigger, let violation = violation(in: trigger) { return violation }
        return violation(in: request.content) ?? propertyListViolation(in: request.content)
    }

    /// An app's own request holds property-list values only: `null` comes in a push's payload alone.
    private static func propertyListViolation(in content: NotificationContent) -> RuleViolation? {
        guard PropertyListValue.dictionary(content.userInfo).containsNull else { return nil }
        return RuleViolation("userInfoNotPropertyList", "A notification's userInfo holds property-list values only: strings, numbers, booleans, dates, data, arrays and dictionaries; not null.")
    }

    /// The refusal of a request that breaks a rule, with the nearest `UNError` code: invalid date for
    /// its trigger, invalid content for the rest; `nil` when the system can keep it.
    package static func failure(for request: NotificationRequest) -> NotificationFailure? {
        if let trigger = request.trigger, let violation = violation(in: trigger) {
            return NotificationFailure(violation, isTrigger: true)
        }
        if let violation = identifierViolation(request.identifier, what: "request identifier") ?? violation(in: request.content)
            ?? propertyListViolation(in: request.content) {
            return NotificationFailure(violation, isTrigger: false)
        }
        return nil
    }

    /// Checks a trigger an app gives.
    package static func violation(in trigger: NotificationTrigger) -> RuleViolation? {
        switch trigger {
        case .timeInterval(let interval, let repeats):
            guard let broken = TriggerRules.validateTimeInterval(interval, repeats: repeats) else {
                guard interval <= maximumInterval else {
                    return RuleViolation("intervalTooLong", "The trigger's time interval must be at most a century, \(Int(maximumInterval)) s; got \(interval).")
                }
                return nil
            }
            switch broken {
            case .intervalNotPositive: return RuleViolation("intervalNotPositive", "The trigger's \(broken).")
            case .repeatingIntervalTooShort: return RuleViolation("repeatingIntervalTooShort", "The trigger's \(broken).")
            }
        case .calendar(let components, _):
            for matchable in TriggerRules.matchableComponents {
                guard let value = components.value(for: matchable.component) else { continue }
                let range = matchable.range
                guard range.contains(value) else {
                    return RuleViolation("dateComponentOutOfRange", "The calendar trigger's \(matchable.name) must be within \(range.lowerBound)…\(range.upperBound); got \(value).")
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
        if let badge = content.badge, badge < 0 {
            return RuleViolation("badgeNegative", "The badge must be 0 or more; got \(badge).", errorCode: .badgeInputInvalid)
        }
        guard content.summaryArgumentCount >= 0 else {
            return RuleViolation("summaryArgumentCountNegative", "The summary argument count must be 0 or more; got \(content.summaryArgumentCount).")
        }
        for attachment in content.attachments {
            if let violation = identifierViolation(attachment.identifier, what: "attachment identifier") { return violation }
        }
        if PropertyListValue.dictionary(content.userInfo).nests(deeperThan: JSONLimits.maximumValueDepth) {
            return RuleViolation(
                "userInfoTooDeep",
                "A notification's userInfo nests at most \(JSONLimits.maximumValueDepth) levels of arrays and dictionaries (itself counted)."
            )
        }
        let weight = contentBytes(content)
        guard weight <= maximumContentBytes else {
            return RuleViolation("contentTooLarge", "A notification's text and userInfo weigh at most \(maximumContentBytes) bytes; this one weighs \(weight).")
        }
        return nil
    }

    /// Checks the categories an app registers. As on Apple's platforms, actions may share an
    /// identifier (the first one is the one a person can pick); what is bounded is their size.
    package static func violation(in categories: [NotificationCategory]) -> RuleViolation? {
        guard categories.count <= maximumCategories else {
            return RuleViolation("tooManyCategories", "An app registers at most \(maximumCategories) categories; got \(categories.count).")
        }
        for category in categories {
            if let violation = identifierViolation(category.identifier, what: "category identifier") { return violation }
            guard category.actions.count <= maximumActionsPerCategory else {
                return RuleViolation("tooManyActions", "A category has at most \(maximumActionsPerCategory) actions; \(category.identifier) has \(category.actions.count).")
            }
            guard category.intentIdentifiers.count <= maximumIntentIdentifiers else {
                return RuleViolation("tooManyIntentIdentifiers", "A category has at most \(maximumIntentIdentifiers) intent identifiers; \(category.identifier) has \(category.intentIdentifiers.count).")
            }
            var identifiers = category.intentIdentifiers.map { ($0, "intent identifier") }
            var texts = [(category.hiddenPreviewsBodyPlaceholder, "hidden-previews placeholder"), (category.categorySummaryFormat, "summary format")]
            for action in category.actions {
                identifiers.append((action.identifier, "action identifier"))
                texts.append((action.title, "action title"))
                if let input = action.textInput { texts += [(input.buttonTitle, "text-input button title"), (input.placeholder, "text-input placeholder")] }
                switch action.icon {
                case .template(let name)?, .system(let name)?: identifiers.append((name, "action icon name"))
                case nil: break
                }
            }
            for (value, what) in identifiers {
                if let violation = identifierViolation(value, what: what) { return violation }
            }
            for (value, what) in texts {
                if let violation = textViolation(value, what: what) { return violation }
            }
        }
        return nil
    }

    /// Checks an app's bundle identifier: reverse-DNS, as Apple's `CFBundleIdentifier` is (letters,
    /// digits and hyphens, in labels separated by single periods, at most 255 characters). It names
    /// the app's folders on disk, so nothing else is accepted: no `..`, no `/`, no leading period.
    package static func violation(inBundleIdentifier value: String) -> RuleViolation? {
        // ASCII letters, digits and hyphens, in labels that are not empty.
        var valid = !value.isEmpty && value.utf8.count <= 255
        var labelIsEmpty = true
        for byte in value.utf8 where valid {
            switch byte {
            case UInt8(ascii: "."):
                valid = !labelIsEmpty
                labelIsEmpty = true
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"):
                labelIsEmpty = false
            default:
                valid = false
            }
        }
        guard valid, !labelIsEmpty else {
            return RuleViolation(
                "bundleIdentifierInvalid",
                "\"\(value)\" is not a bundle identifier: use letters, digits and hyphens in labels separated by single periods, such as com.example.todo."
            )
        }
        return nil
    }

    /// Checks an identifier (of a request, category, action, thread, region, or a push's collapse
    /// identifier): at most ``maximumIdentifierLength`` characters, none of them a control character
    /// (U+0000–U+001F, U+007F–U+009F). Identifiers are keys on disk and on the wire, where a NUL would
    /// end one early and make two identifiers one.
    package static func violation(inIdentifier value: String, what: String) -> RuleViolation? {
        if let violation = textViolation(value, what: what) { return violation }
        if let control = value.unicodeScalars.first(where: isControl) {
            return RuleViolation(
                "identifierHasControlCharacter",
                "A \(what) has no control characters; this one has U+\(String(format: "%04X", control.value))."
            )
        }
        return nil
    }

    /// Whether `scalar` is a control character (Unicode's general category Cc).
    package static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    private static func identifierViolation(_ value: String, what: String) -> RuleViolation? {
        violation(inIdentifier: value, what: what)
    }

    /// Checks a string of a category that a person reads (a title, a placeholder): its length.
    private static func textViolation(_ value: String, what: String) -> RuleViolation? {
        let length = value.unicodeScalars.count
        guard length <= maximumIdentifierLength else {
            return RuleViolation("stringTooLong", "A \(what) is at most \(maximumIdentifierLength) characters long; got \(length).")
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
        case .null: 4
        case .data(let data): data.count * 4 / 3 + 4
        case .array(let values): values.reduce(2) { $0 + weight($1) + 1 }
        case .dictionary(let values): values.reduce(2) { $0 + $1.key.utf8.count + 3 + weight($1.value) + 1 }
        }
    }
}
