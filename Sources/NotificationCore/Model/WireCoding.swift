import Foundation

// The JSON form of the model: how requests, notifications and settings are stored and sent between the
// framework, the daemon and the gateway. Keys are spelled out and enums are tagged with a "type" field,
// so that the form can be documented and read by programs written in other languages.

extension PropertyListValue: Codable {
    private enum CodingKeys: String, CodingKey {
        case date = "$date"
        case data = "$data"
        case dictionary = "$dictionary"
    }

    /// Any key, to count an object's members.
    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// Strings, numbers, booleans, arrays and objects are plain JSON; dates and data, which JSON lacks,
    /// are objects with one key: `{"$date": <seconds since 1970>}` and `{"$data": "<base64>"}`. A
    /// dictionary that is itself one key beginning with `$` is written inside `{"$dictionary": …}`, so
    /// that it is never read back as a date or data.
    ///
    /// Each kind is tried in turn, and a kind that does not match throws an error, which costs more
    /// than decoding the value: strings and objects, the commonest in a payload, are tried first. No
    /// JSON value decodes as two of these kinds but an integer (`Int`, then `Double`), so the order
    /// changes only the time taken.
    package init(from decoder: any Decoder) throws {
        let single = try decoder.singleValueContainer()
        if let value = try? single.decode(String.self) {
            self = .string(value)
        } else if single.decodeNil() {
            self = .null
        } else if let keyed = try? decoder.container(keyedBy: CodingKeys.self) {
            // One member, and a tag: the tagged keys alone are in `allKeys`, so the members are counted apart.
            if keyed.allKeys.count == 1, try decoder.container(keyedBy: AnyKey.self).allKeys.count == 1, let tagged = try Self.tagged(keyed) {
                self = tagged
            } else {
                self = .dictionary(try single.decode([String: PropertyListValue].self))
            }
        } else if let value = try? single.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? single.decode(Int.self) {
            self = .integer(value)
        } else if let value = try? single.decode(Double.self) {
            self = .double(value)
        } else if let value = try? single.decode([PropertyListValue].self) {
            self = .array(value)
        } else {
            self = .dictionary(try single.decode([String: PropertyListValue].self))
        }
    }

    private static func tagged(_ container: KeyedDecodingContainer<CodingKeys>) throws -> PropertyListValue? {
        if let seconds = try? container.decode(Double.self, forKey: .date) {
            return .date(Date(timeIntervalSince1970: seconds))
        }
        if let base64 = try? container.decode(String.self, forKey: .data), let data = Data(base64Encoded: base64) {
            return .data(data)
        }
        if let dictionary = try? container.decode([String: PropertyListValue].self, forKey: .dictionary) {
            return .dictionary(dictionary)
        }
        return nil
    }

    package func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var single = encoder.singleValueContainer()
            try single.encodeNil()
        case .string(let value):
            var single = encoder.singleValueContainer()
            try single.encode(value)
        case .integer(let value):
            var single = encoder.singleValueContainer()
            try single.encode(value)
        case .double(let value):
            var single = encoder.singleValueContainer()
            try single.encode(value)
        case .bool(let value):
            var single = encoder.singleValueContainer()
            try single.encode(value)
        case .date(let value):
            var keyed = encoder.container(keyedBy: CodingKeys.self)
            try keyed.encode(value.timeIntervalSince1970, forKey: .date)
        case .data(let value):
            var keyed = encoder.container(keyedBy: CodingKeys.self)
            try keyed.encode(value.base64EncodedString(), forKey: .data)
        case .array(let value):
            var single = encoder.singleValueContainer()
            try single.encode(value)
        case .dictionary(let value) where value.count == 1 && value.keys.first!.hasPrefix("$"):
            var keyed = encoder.container(keyedBy: CodingKeys.self)
            try keyed.encode(value, forKey: .dictionary)
        case .dictionary(let value):
            var single = encoder.singleValueContainer()
            try single.encode(value)
        }
    }
}

extension InterruptionLevel: Codable {}
extension AuthorizationStatus: Codable {}
extension SettingValue: Codable {}
extension AlertStyle: Codable {}
extension ShowPreviews: Codable {}
extension AppState: Codable {}
extension AuthorizationOptions: Codable {}
extension PresentationOptions: Codable {}
extension ActionOptions: Codable {}
extension CategoryOptions: Codable {}

extension NotificationSound: Codable {
    private enum CodingKeys: String, CodingKey {
        case type, name, critical, volume
    }

    /// `{"type": "default" | "named" | "defaultRingtone" | "ringtone", "name"?, "critical", "volume"}`.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let type = try container.decode(String.self, forKey: .type)
        switch type {
        case "default": kind = .default
        case "defaultRingtone": kind = .defaultRingtone
        case "named": kind = .named(try container.decode(String.self, forKey: .name))
        case "ringtone": kind = .ringtone(try container.decode(String.self, forKey: .name))
        default:
            throw DecodingError.dataCorruptedError(forKey: .type, in: container, debugDescription: "Unknown sound type \"\(type)\".")
        }
        isCritical = try container.decodeIfPresent(Bool.self, forKey: .critical) ?? false
        // Any JSON number: read as a double (a Float cannot hold 1e-300) and kept within 0…1, as Apple
        // keeps a critical sound's volume.
        volume = Float(min(max(try container.decodeIfPresent(Double.self, forKey: .volume) ?? 1, 0), 1))
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch kind {
        case .default: try container.encode("default", forKey: .type)
        case .defaultRingtone: try container.encode("defaultRingtone", forKey: .type)
        case .named(let name):
            try container.encode("named", forKey: .type)
            try container.encode(name, forKey: .name)
        case .ringtone(let name):
            try container.encode("ringtone", forKey: .type)
            try container.encode(name, forKey: .name)
        }
        try container.encode(isCritical, forKey: .critical)
        try container.encode(volume, forKey: .volume)
    }
}

extension ActionIcon: Codable {
    private enum CodingKeys: String, CodingKey {
        case type, name
    }

    /// `{"type": "template" | "system", "name": "…"}`.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let name = try container.decode(String.self, forKey: .name)
        switch try container.decode(String.self, forKey: .type) {
        case "template": self = .template(name)
        case "system": self = .system(name)
        case let type:
            throw DecodingError.dataCorruptedError(forKey: .type, in: container, debugDescription: "Unknown icon type \"\(type)\".")
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .template(let name):
            try container.encode("template", forKey: .type)
            try container.encode(name, forKey: .name)
        case .system(let name):
            try container.encode("system", forKey: .type)
            try container.encode(name, forKey: .name)
        }
    }
}

extension NotificationTrigger: Codable {
    private enum CodingKeys: String, CodingKey {
        case type, interval, dateComponents, region, repeats
    }

    /// `{"type": "timeInterval", "interval": 5, "repeats": false}`, `{"type": "calendar", "dateComponents":
    /// {…}, "repeats": true}`, `{"type": "location", "region": {…}, "repeats": false}` or `{"type": "push"}`.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let repeats = try container.decodeIfPresent(Bool.self, forKey: .repeats) ?? false
        switch try container.decode(String.self, forKey: .type) {
        case "timeInterval":
            self = .timeInterval(try container.decode(TimeInterval.self, forKey: .interval), repeats: repeats)
        case "calendar":
            self = .calendar(try container.decode(WireDateComponents.self, forKey: .dateComponents).components, repeats: repeats)
        case "location":
            self = .location(try container.decode(CircularRegion.self, forKey: .region), repeats: repeats)
        case "push":
            self = .push
        case let type:
            throw DecodingError.dataCorruptedError(forKey: .type, in: container, debugDescription: "Unknown trigger type \"\(type)\".")
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .timeInterval(let interval, let repeats):
            try container.encode("timeInterval", forKey: .type)
            try container.encode(interval, forKey: .interval)
            try container.encode(repeats, forKey: .repeats)
        case .calendar(let components, let repeats):
            try container.encode("calendar", forKey: .type)
            try container.encode(components, forKey: .dateComponents)
            try container.encode(repeats, forKey: .repeats)
        case .location(let region, let repeats):
            try container.encode("location", forKey: .type)
            try container.encode(region, forKey: .region)
            try container.encode(repeats, forKey: .repeats)
        case .push:
            try container.encode("push", forKey: .type)
        }
    }
}

/// A calendar trigger's date components as they arrive: Foundation's `DateComponents` JSON (what the
/// daemon writes), read leniently so that other clients need not write Foundation's every field. A
/// calendar needs only its `identifier` (`firstWeekday` and `minimumDaysInFirstWeek` are optional,
/// 1…7); a time zone only its `identifier`.
///
/// A time zone identifier that names no zone on this system is not malformed JSON: the trigger can
/// never produce a date, and decoding fails with a ``NotificationFailure`` (`notificationInvalidNoDate`)
/// as the underlying error, which the daemon reports as Apple's code.
struct WireDateComponents: Decodable {
    var components: DateComponents

    private struct Zone: Decodable {
        var identifier: String
    }

    /// The calendar identifiers, as Foundation writes them.
    static let calendars: [String: Calendar.Identifier] = [
        "gregorian": .gregorian, "buddhist": .buddhist, "chinese": .chinese, "coptic": .coptic,
        "ethiopicAmeteMihret": .ethiopicAmeteMihret, "ethiopicAmeteAlem": .ethiopicAmeteAlem, "hebrew": .hebrew,
        "iso8601": .iso8601, "indian": .indian, "islamic": .islamic, "islamicCivil": .islamicCivil, "japanese": .japanese,
        "persian": .persian, "republicOfChina": .republicOfChina, "islamicTabular": .islamicTabular, "islamicUmmAlQura": .islamicUmmAlQura,
    ]

    private struct WireCalendar: Decodable {
        var identifier: String
        var firstWeekday: Int?
        var minimumDaysInFirstWeek: Int?
        var timeZone: Zone?
    }

    /// The keys of the components that are not numbers; the numbers' keys are the names of
    /// ``TriggerRules/matchableComponents``.
    private struct CodingKeys: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }

        static let isLeapMonth = CodingKeys(stringValue: "isLeapMonth")
        static let calendar = CodingKeys(stringValue: "calendar")
        static let timeZone = CodingKeys(stringValue: "timeZone")
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        var components = DateComponents()
        for matchable in TriggerRules.matchableComponents {
            if let value = try container.decodeIfPresent(Int.self, forKey: CodingKeys(stringValue: matchable.name)) {
                components.setValue(value, for: matchable.component)
            }
        }
        components.isLeapMonth = try container.decodeIfPresent(Bool.self, forKey: .isLeapMonth)
        if let zone = try container.decodeIfPresent(Zone.self, forKey: .timeZone) {
            components.timeZone = try Self.zone(zone, at: container.codingPath + [CodingKeys.timeZone])
        }
        if let wire = try container.decodeIfPresent(WireCalendar.self, forKey: .calendar) {
            guard let identifier = Self.calendars[wire.identifier] else {
                throw DecodingError.dataCorruptedError(forKey: .calendar, in: container, debugDescription: "No calendar is called \(wire.identifier).")
            }
            var calendar = Calendar(identifier: identifier)
            for (value, name) in [(wire.firstWeekday, "firstWeekday"), (wire.minimumDaysInFirstWeek, "minimumDaysInFirstWeek")] {
                guard let value else { continue }
                guard (1...7).contains(value) else {
                    throw DecodingError.dataCorruptedError(forKey: .calendar, in: container, debugDescription: "The calendar's \(name) must be within 1…7; got \(value).")
                }
            }
            if let first = wire.firstWeekday { calendar.firstWeekday = first }
            if let minimum = wire.minimumDaysInFirstWeek { calendar.minimumDaysInFirstWeek = minimum }
            if let zone = wire.timeZone { calendar.timeZone = try Self.zone(zone, at: container.codingPath + [CodingKeys.calendar]) }
            components.calendar = calendar
        }
        self.components = components
    }

    private static func zone(_ zone: Zone, at path: [any CodingKey]) throws -> TimeZone {
        guard let timeZone = TimeZone(identifier: zone.identifier) else {
            throw DecodingError.dataCorrupted(DecodingError.Context(
                codingPath: path,
                debugDescription: "No time zone is called \(zone.identifier).",
                underlyingError: NotificationFailure(.notificationInvalidNoDate, detail: "No time zone is called \"\(zone.identifier)\".")
            ))
        }
        return timeZone
    }
}

extension NotificationContent: Codable {
    private enum CodingKeys: String, CodingKey {
        case title, subtitle, body, attachments, badge, sound, launchImageName, userInfo, categoryIdentifier
        case threadIdentifier, summaryArgument, summaryArgumentCount, targetContentIdentifier, interruptionLevel
        case relevanceScore, filterCriteria
    }

    /// Every field is optional on input and takes its default when missing (or `null`), as on
    /// `UNMutableNotificationContent()`.
    ///
    /// Only the keys present are decoded: a typical content has three of the sixteen, and looking each
    /// of the others up was most of the time an add spent decoding its request.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init()
        for key in container.allKeys {
            switch key {
            case .title: title = try container.decodeIfPresent(String.self, forKey: key) ?? ""
            case .subtitle: subtitle = try container.decodeIfPresent(String.self, forKey: key) ?? ""
            case .body: body = try container.decodeIfPresent(String.self, forKey: key) ?? ""
            case .attachments: attachments = try container.decodeIfPresent([NotificationAttachment].self, forKey: key) ?? []
            case .badge: badge = try container.decodeIfPresent(Int.self, forKey: key)
            case .sound: sound = try container.decodeIfPresent(NotificationSound.self, forKey: key)
            case .launchImageName: launchImageName = try container.decodeIfPresent(String.self, forKey: key) ?? ""
            case .userInfo: userInfo = try container.decodeIfPresent([String: PropertyListValue].self, forKey: key) ?? [:]
            case .categoryIdentifier: categoryIdentifier = try container.decodeIfPresent(String.self, forKey: key) ?? ""
            case .threadIdentifier: threadIdentifier = try container.decodeIfPresent(String.self, forKey: key) ?? ""
            case .summaryArgument: summaryArgument = try container.decodeIfPresent(String.self, forKey: key) ?? ""
            case .summaryArgumentCount: summaryArgumentCount = try container.decodeIfPresent(Int.self, forKey: key) ?? 1
            case .targetContentIdentifier: targetContentIdentifier = try container.decodeIfPresent(String.self, forKey: key)
            case .interruptionLevel: interruptionLevel = try container.decodeIfPresent(InterruptionLevel.self, forKey: key) ?? .active
            case .relevanceScore: relevanceScore = try container.decodeIfPresent(Double.self, forKey: key) ?? 0
            case .filterCriteria: filterCriteria = try container.decodeIfPresent(String.self, forKey: key)
            }
        }
    }

    /// Every field, as clients of the local API read it; with ``CodingUserInfoKey/omitsDefaultContent``
    /// set, only the fields that differ from their defaults, which decode back to the same content.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        let all = encoder.userInfo[.omitsDefaultContent] as? Bool != true
        if all || !title.isEmpty { try container.encode(title, forKey: .title) }
        if all || !subtitle.isEmpty { try container.encode(subtitle, forKey: .subtitle) }
        if all || !body.isEmpty { try container.encode(body, forKey: .body) }
        if all || !attachments.isEmpty { try container.encode(attachments, forKey: .attachments) }
        try container.encodeIfPresent(badge, forKey: .badge)
        try container.encodeIfPresent(sound, forKey: .sound)
        if all || !launchImageName.isEmpty { try container.encode(launchImageName, forKey: .launchImageName) }
        if all || !userInfo.isEmpty { try container.encode(userInfo, forKey: .userInfo) }
        if all || !categoryIdentifier.isEmpty { try container.encode(categoryIdentifier, forKey: .categoryIdentifier) }
        if all || !threadIdentifier.isEmpty { try container.encode(threadIdentifier, forKey: .threadIdentifier) }
        if all || !summaryArgument.isEmpty { try container.encode(summaryArgument, forKey: .summaryArgument) }
        if all || summaryArgumentCount != 1 { try container.encode(summaryArgumentCount, forKey: .summaryArgumentCount) }
        try container.encodeIfPresent(targetContentIdentifier, forKey: .targetContentIdentifier)
        if all || interruptionLevel != .active { try container.encode(interruptionLevel, forKey: .interruptionLevel) }
        // Compared bit for bit: -0 and NaN are not the default 0, and are kept.
        if all || relevanceScore.bitPattern != 0 { try container.encode(relevanceScore, forKey: .relevanceScore) }
        try container.encodeIfPresent(filterCriteria, forKey: .filterCriteria)
    }
}

extension CodingUserInfoKey {
    /// Set to `true` on an encoder, contents leave out the fields that hold their defaults: how a store
    /// keeps them, a third of the size of the full form for a typical request.
    package static let omitsDefaultContent = CodingUserInfoKey(rawValue: "omitsDefaultContent")!
}
