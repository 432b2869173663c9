import Foundation

extension APNs {
    /// A push's JSON payload read as the device reads it: the `aps` dictionary becomes a
    /// notification's content, every key (`aps` included) its `userInfo`.
    package struct Payload: Sendable, Hashable {
        /// The content the person would see, with `userInfo` holding the whole payload.
        package var content: NotificationContent
        /// `content-available: 1`: the app is woken to fetch (`didReceiveRemoteNotification`).
        package var isContentAvailable: Bool
        /// `mutable-content: 1`: the app's service extension may change it before it is shown.
        package var isMutableContent: Bool
        /// Whether anything in it is for the person: an alert, a sound or a badge. A push without
        /// them (a background push) never reaches the person.
        package var interactsWithPerson: Bool
    }

    /// Why a payload cannot be read.
    package struct PayloadError: Error, Sendable, Hashable, CustomStringConvertible {
        package var description: String
    }

    /// Looks up a localization key in the app's strings; nil when the app has no such key (the key is
    /// then shown as it is, as iOS does).
    package typealias Localizer = @Sendable (_ key: String) -> String?

    /// Reads a payload: a JSON object with an optional `aps` dictionary (Apple's keys) and custom keys
    /// beside it.
    package static func payload(_ bytes: [UInt8], localize: Localizer = { _ in nil }) -> Result<Payload, PayloadError> {
        // Read as the gateway checked it (``checkPayload(_:)``): nothing the system could not keep.
        let userInfo: [String: PropertyListValue]
        switch StrictJSONReader().object(bytes) {
        case .success(let object): userInfo = object
        case .failure(.notAnObject): return .failure(PayloadError(description: "The payload is not a JSON object."))
        case .failure(let failure): return .failure(PayloadError(description: "The payload cannot be kept: \(failure)"))
        }
        let aps: [String: PropertyListValue] = userInfo["aps"].flatMap { if case .dictionary(let aps) = $0 { aps } else { nil } } ?? [:]

        var content = NotificationContent()
        content.userInfo = userInfo
        var interacts = false

        switch aps["alert"] {
        case .string(let body)?:
            content.body = body
            interacts = true
        case .dictionary(let alert)?:
            content.title = text(alert, plain: "title", key: "title-loc-key", arguments: "title-loc-args", localize: localize)
            content.subtitle = text(alert, plain: "subtitle", key: "subtitle-loc-key", arguments: "subtitle-loc-args", localize: localize)
            content.body = text(alert, plain: "body", key: "loc-key", arguments: "loc-args", localize: localize)
            if case .string(let image)? = alert["launch-image"] { content.launchImageName = image }
            interacts = !(content.title.isEmpty && content.subtitle.isEmpty && content.body.isEmpty)
        default:
            break
        }
        if let badge = number(aps["badge"]) {
            content.badge = Int(badge)
            interacts = true
        }
        switch aps["sound"] {
        case .string(let name)?:
            content.sound = NotificationSound(kind: name == "default" ? .default : .named(name))
            interacts = true
        case .dictionary(let sound)?:
            let name = sound["name"].flatMap { if case .string(let name) = $0 { name } else { nil } } ?? "default"
            content.sound = NotificationSound(
                kind: name == "default" ? .default : .named(name),
                isCritical: (number(sound["critical"]) ?? 0) == 1,
                volume: Float(min(1, max(0, number(sound["volume"]) ?? 1)))
            )
            interacts = true
        default:
            break
        }
        if case .string(let thread)? = aps["thread-id"] { content.threadIdentifier = thread }
        if case .string(let category)? = aps["category"] { content.categoryIdentifier = category }
        if case .string(let target)? = aps["target-content-id"] { content.targetContentIdentifier = target }
        if case .string(let criteria)? = aps["filter-criteria"] { content.filterCriteria = criteria }
        if let score = number(aps["relevance-score"]) { content.relevanceScore = min(1, max(0, score)) }
        if case .string(let level)? = aps["interruption-level"] {
            switch level {
            case "passive": content.interruptionLevel = .passive
            case "time-sensitive": content.interruptionLevel = .timeSensitive
            case "critical": content.interruptionLevel = .critical
            default: content.interruptionLevel = .active
            }
        }
        return .success(Payload(
            content: content,
            isContentAvailable: number(aps["content-available"]) == 1,
            isMutableContent: number(aps["mutable-content"]) == 1,
            interactsWithPerson: interacts
        ))
    }

    /// An alert's title, subtitle or body: its plain text, else its localization key looked up in the
    /// app's strings (the key itself when missing) with its arguments put in.
    private static func text(
        _ alert: [String: PropertyListValue], plain: String, key: String, arguments: String, localize: Localizer
    ) -> String {
        if case .string(let key)? = alert[key] {
            let format = localize(key) ?? key
            let values: [String] = alert[arguments].flatMap { value -> [String]? in
                guard case .array(let items) = value else { return nil }
                return items.map { item in
                    switch item {
                    case .string(let text): text
                    case .integer(let number): String(number)
                    case .double(let number): String(number)
                    case .bool(let flag): String(flag)
                    default: ""
                    }
                }
            } ?? []
            return formatted(format, values)
        }
        if case .string(let text)? = alert[plain] { return text }
        return ""
    }

    /// Puts `values` into `format`'s `%@` (in order) and `%n$@` (by position) placeholders; `%%` is a
    /// percent sign.
    package static func formatted(_ format: String, _ values: [String]) -> String {
        var result = ""
        var next = 0
        var characters = format[...]
        while let percent = characters.firstIndex(of: "%") {
            result += characters[..<percent]
            var rest = characters[characters.index(after: percent)...]
            if rest.first == "%" {
                result += "%"
                characters = rest.dropFirst()
                continue
            }
            if rest.first == "@" {
                result += next < values.count ? values[next] : ""
                next += 1
                characters = rest.dropFirst()
                continue
            }
            let digits = rest.prefix { $0.isASCII && $0.isNumber }
            rest = rest.dropFirst(digits.count)
            if !digits.isEmpty, rest.hasPrefix("$@"), let position = Int(digits), position >= 1 {
                result += position <= values.count ? values[position - 1] : ""
                characters = rest.dropFirst(2)
                continue
            }
            result += "%"
            characters = characters[characters.index(after: percent)...]
        }
        return result + characters
    }

    private static func number(_ value: PropertyListValue?) -> Double? {
        switch value {
        case .integer(let number)?: Double(number)
        case .double(let number)?: number
        case .bool(let flag)?: flag ? 1 : 0
        default: nil
        }
    }
}

extension APNs {
    /// The request a push becomes on the device: its identifier is the push's `apns-collapse-id`
    /// when it has one (a later push with the same one replaces it), else its `apns-id`; its trigger
    /// is the push.
    package static func request(for payload: Payload, apnsID: String, collapseID: String?) -> NotificationRequest {
        NotificationRequest(identifier: collapseID ?? apnsID, content: payload.content, trigger: .push)
    }

    /// What a push hands to the app itself, if anything: a background push (`content-available: 1`)
    /// and every VoIP push reach `didReceiveRemoteNotification` with the whole payload.
    package static func remoteNotification(for payload: Payload, apnsID: String, pushType: PushType) -> RemoteNotification? {
        guard payload.isContentAvailable || pushType == .voip else { return nil }
        return RemoteNotification(identifier: apnsID, userInfo: payload.content.userInfo, isVoIP: pushType == .voip)
    }
}
