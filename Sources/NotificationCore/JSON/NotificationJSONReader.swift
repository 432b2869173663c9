import Foundation

/// Reads the JSON of the busiest messages straight from their bytes: a ``NotificationRequest`` an app
/// adds (`POST /v1/requests`, the local API's busiest call), the `willPresent` event the daemon
/// sends an app for each notification in the foreground, the `push` message a gateway sends a
/// device's daemon for each push (`JSONDecoder` took a fortieth of `unotify serve`'s CPU for those
/// at 1,000 pushes a second), and the `report` messages a device sends its gateway.
///
/// `JSONDecoder` took a tenth of the daemon's CPU for each add (a container, a key lookup and type
/// metadata per field, for the sixteen fields of a content the framework writes whole), and as
/// much of an app's for each event. This reader walks the bytes once and builds the value itself.
///
/// It takes only what it can read exactly as `JSONDecoder` with the model's `Decodable` conformances
/// reads it, and gives up (`nil`) on anything else, for the caller to decode the usual way: escaped
/// strings (but the two-character escapes of a push's payload), numbers with an exponent, or with a
/// fraction where an integer is wanted or in `userInfo`, `null` in `userInfo` and its objects of one
/// `$`-key (a date or data), attachments, calendar and location triggers, a key it does not know or
/// that comes twice, malformed JSON. So a value read here is the value `JSONDecoder` reads, and every
/// error is `JSONDecoder`'s.
package enum NotificationJSONReader {
    /// The request in `bytes`, or `nil` when they are not in a form this reader takes.
    package static func request(from bytes: UnsafeRawBufferPointer) -> NotificationRequest? {
        whole(bytes) { $0.request() }
    }

    /// The request in `bytes`, or `nil` (see ``request(from:)-(UnsafeRawBufferPointer)``).
    package static func request(from bytes: some Collection<UInt8>) -> NotificationRequest? {
        withBytes(bytes) { request(from: $0) }
    }

    /// The app's event in `bytes` when it is a `willPresent` event in a form this reader takes; `nil`
    /// for every other event, and for any other form.
    package static func willPresentEvent(from bytes: some Collection<UInt8>) -> LocalAPI.AppEvent? {
        withBytes(bytes) { bytes in whole(bytes) { $0.willPresentEvent() } }
    }

    /// The app's reply in `bytes` when it is a `willPresentAnswer` in a form this reader takes (the
    /// daemon's busiest reply: one for each notification shown in the foreground); `nil` for every
    /// other reply, and for any other form.
    package static func willPresentAnswer(from bytes: some Collection<UInt8>) -> LocalAPI.AppReply? {
        withBytes(bytes) { bytes in whole(bytes) { $0.willPresentAnswer() } }
    }

    /// The push of a device link's `push` message in `bytes`, or `nil` for every other message, and
    /// for any other form.
    package static func linkPush(from bytes: some Collection<UInt8>) -> DeviceLink.Push? {
        withBytes(bytes) { bytes in whole(bytes) { $0.linkPush() } }
    }

    /// A device link's `report` message in `bytes` (a device's delivery-log reports, a few hundred
    /// at a time, which the gateway reads on the link's event loop, between the pushes it writes to
    /// the link), or `nil` for every other message, and for any other form.
    package static func linkReport(from bytes: some Collection<UInt8>) -> DeviceLink.DeviceMessage? {
        withBytes(bytes) { bytes in whole(bytes) { $0.linkReport() } }
    }

    private static func whole<T>(_ bytes: UnsafeRawBufferPointer, _ read: (inout Cursor) -> T?) -> T? {
        var reader = Cursor(bytes: bytes)
        guard let value = read(&reader) else { return nil }
        reader.skipSpace()
        return reader.isAtEnd ? value : nil
    }

    private static func withBytes<T>(_ bytes: some Collection<UInt8>, _ body: (UnsafeRawBufferPointer) -> T?) -> T? {
        bytes.withContiguousStorageIfAvailable { body(UnsafeRawBufferPointer($0)) }
            ?? Array(bytes).withUnsafeBytes { body($0) }
    }
}

private struct Cursor {
    let bytes: UnsafeRawBufferPointer
    var index = 0

    init(bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    var isAtEnd: Bool { index >= bytes.count }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    mutating func skipSpace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    /// Skips white space, then takes `byte` if it comes next.
    private mutating func take(_ byte: UInt8) -> Bool {
        skipSpace()
        guard current == byte else { return false }
        index += 1
        return true
    }

    private mutating func takeLiteral(_ literal: StaticString) -> Bool {
        skipSpace()
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        for offset in 0..<count where bytes[index + offset] != literal.utf8Start[offset] { return false }
        index += count
        // A literal is followed by a delimiter, never by more letters (`nullx`, `truely`).
        if let next = current, (0x61...0x7A).contains(next) || (0x41...0x5A).contains(next) || (0x30...0x39).contains(next) { return false }
        return true
    }

    /// `null`, taken if it comes next.
    private mutating func takeNull() -> Bool {
        skipSpace()
        guard current == UInt8(ascii: "n") else { return false }
        return takeLiteral("null")
    }

    /// The members of an object, each handed to `read` with its key; `false` when the JSON is not an
    /// object, a key comes twice, or `read` gives up.
    private mutating func object(_ read: (inout Cursor, String) -> Bool) -> Bool {
        guard take(UInt8(ascii: "{")) else { return false }
        if take(UInt8(ascii: "}")) { return true }
        var keys: [String] = []
        while true {
            skipSpace()
            guard let key = string(), take(UInt8(ascii: ":")) else { return false }
            guard !keys.contains(key) else { return false }
            keys.append(key)
            guard read(&self, key) else { return false }
            if take(UInt8(ascii: ",")) { continue }
            return take(UInt8(ascii: "}"))
        }
    }

    /// A string of valid UTF-8 and no control characters, without escapes; with `escapes`, also with
    /// JSON's two-character ones (`\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`: a push's payload has
    /// its quotes escaped in the link's messages). Other escapes (`\u`) are left to `JSONDecoder`.
    mutating func string(escapes: Bool = false) -> String? {
        skipSpace()
        guard current == UInt8(ascii: "\"") else { return nil }
        let start = index + 1
        var end = start
        var unescaped: [UInt8]?
        var plainFrom = start
        while end < bytes.count {
            let byte = bytes[end]
            if byte == UInt8(ascii: "\"") { break }
            if byte < 0x20 { return nil }
            guard byte == UInt8(ascii: "\\") else {
                end += 1
                continue
            }
            guard escapes, end + 1 < bytes.count else { return nil }
            let meant: UInt8
            switch bytes[end + 1] {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): meant = bytes[end + 1]
            case UInt8(ascii: "b"): meant = 0x08
            case UInt8(ascii: "f"): meant = 0x0C
            case UInt8(ascii: "n"): meant = 0x0A
            case UInt8(ascii: "r"): meant = 0x0D
            case UInt8(ascii: "t"): meant = 0x09
            default: return nil
            }
            if unescaped == nil { unescaped = [] }
            unescaped!.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[plainFrom..<end]))
            unescaped!.append(meant)
            end += 2
            plainFrom = end
        }
        guard end < bytes.count else { return nil }
        index = end + 1
        // Escapes are ASCII: the bytes between them are whole UTF-8 sequences, or not UTF-8 at all.
        guard var text = unescaped else { return String(validating: UnsafeRawBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self) }
        text.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[plainFrom..<end]))
        return String(validating: text, as: UTF8.self)
    }

    /// A member's value as `read` reads it, handed to `set`; `false` when `read` gives up.
    private mutating func member<T>(_ read: (inout Cursor) -> T?, _ set: (T) -> Void) -> Bool {
        guard let value = read(&self) else { return false }
        set(value)
        return true
    }

    /// `null`, which leaves the member as it is (every member starts as its default, which `null`
    /// stands for), or a value as ``member(_:_:)`` reads it.
    private mutating func optionalMember<T>(_ read: (inout Cursor) -> T?, _ set: (T) -> Void) -> Bool {
        takeNull() || member(read, set)
    }

    private mutating func bool() -> Bool? {
        skipSpace()
        if current == UInt8(ascii: "t") { return takeLiteral("true") ? true : nil }
        if current == UInt8(ascii: "f") { return takeLiteral("false") ? false : nil }
        return nil
    }

    /// The bytes of a JSON number without an exponent, checked against JSON's grammar, and whether it
    /// has a fraction.
    private mutating func number() -> (text: UnsafeRawBufferPointer, isInteger: Bool)? {
        skipSpace()
        let start = index
        var end = index
        func digits(_ end: inout Int) -> Int {
            let from = end
            while end < bytes.count, (0x30...0x39).contains(bytes[end]) { end += 1 }
            return end - from
        }
        if end < bytes.count, bytes[end] == UInt8(ascii: "-") { end += 1 }
        let integerStart = end
        let integerDigits = digits(&end)
        guard integerDigits > 0, !(integerDigits > 1 && bytes[integerStart] == UInt8(ascii: "0")) else { return nil }
        var isInteger = true
        if end < bytes.count, bytes[end] == UInt8(ascii: ".") {
            end += 1
            guard digits(&end) > 0 else { return nil }
            isInteger = false
        }
        // An exponent is left to `JSONDecoder`, which refuses some that JSON allows (`0e5`).
        if end < bytes.count, bytes[end] == UInt8(ascii: "e") || bytes[end] == UInt8(ascii: "E") { return nil }
        index = end
        return (UnsafeRawBufferPointer(rebasing: bytes[start..<end]), isInteger)
    }

    /// An integer written without a fraction, that fits in an `Int`.
    private mutating func integer() -> Int? {
        guard let (text, isInteger) = number(), isInteger else { return nil }
        return Int(String(decoding: text, as: UTF8.self))
    }

    /// Any finite number, as a `Double`.
    private mutating func double() -> Double? {
        guard let (text, _) = number(), let value = Double(String(decoding: text, as: UTF8.self)), value.isFinite else { return nil }
        return value
    }

    // MARK: - The model

    mutating func request() -> NotificationRequest? {
        var identifier: String?
        var content = NotificationContent()
        var trigger: NotificationTrigger?
        var pushUniqueID: String?
        let read = object { cursor, key in
            switch key {
            case "identifier": cursor.member({ $0.string() }) { identifier = $0 }
            case "content": cursor.optionalMember({ $0.content() }) { content = $0 }
            case "trigger": cursor.optionalMember({ $0.trigger() }) { trigger = $0 }
            case "pushUniqueID": cursor.optionalMember({ $0.string() }) { pushUniqueID = $0 }
            default: false
            }
        }
        guard read, let identifier else { return nil }
        var request = NotificationRequest(identifier: identifier, content: content, trigger: trigger)
        request.pushUniqueID = pushUniqueID
        return request
    }

    private mutating func content() -> NotificationContent? {
        var content = NotificationContent()
        let read = object { cursor, key in
            switch key {
            case "title": cursor.optionalMember({ $0.string() }) { content.title = $0 }
            case "subtitle": cursor.optionalMember({ $0.string() }) { content.subtitle = $0 }
            case "body": cursor.optionalMember({ $0.string() }) { content.body = $0 }
            case "launchImageName": cursor.optionalMember({ $0.string() }) { content.launchImageName = $0 }
            case "categoryIdentifier": cursor.optionalMember({ $0.string() }) { content.categoryIdentifier = $0 }
            case "threadIdentifier": cursor.optionalMember({ $0.string() }) { content.threadIdentifier = $0 }
            case "summaryArgument": cursor.optionalMember({ $0.string() }) { content.summaryArgument = $0 }
            case "targetContentIdentifier": cursor.optionalMember({ $0.string() }) { content.targetContentIdentifier = $0 }
            case "filterCriteria": cursor.optionalMember({ $0.string() }) { content.filterCriteria = $0 }
            // Only none: an attachment's URL and options are `JSONDecoder`'s to read.
            case "attachments": cursor.takeNull() || (cursor.take(UInt8(ascii: "[")) && cursor.take(UInt8(ascii: "]")))
            case "badge": cursor.optionalMember({ $0.integer() }) { content.badge = $0 }
            case "summaryArgumentCount": cursor.optionalMember({ $0.integer() }) { content.summaryArgumentCount = $0 }
            case "relevanceScore": cursor.optionalMember({ $0.double() }) { content.relevanceScore = $0 }
            case "interruptionLevel":
                cursor.optionalMember({ $0.integer().flatMap { $0 >= 0 ? InterruptionLevel(rawValue: UInt($0)) : nil } }) { content.interruptionLevel = $0 }
            case "sound": cursor.optionalMember({ $0.sound() }) { content.sound = $0 }
            case "userInfo": cursor.optionalMember({ $0.userInfo() }) { content.userInfo = $0 }
            default: false
            }
        }
        return read ? content : nil
    }

    /// A `userInfo` of values ``propertyListValue()`` reads.
    private mutating func userInfo() -> [String: PropertyListValue]? {
        var userInfo: [String: PropertyListValue] = [:]
        let read = object { cursor, key in
            guard let value = cursor.propertyListValue(depth: 0) else { return false }
            userInfo[key] = value
            return true
        }
        return read ? userInfo : nil
    }

    /// A string, a boolean, an integer that fits in an `Int`, or an array or object of them: how
    /// `PropertyListValue` decodes each leaves no doubt. (A fraction could decode as an integer or
    /// not, an object of one `$`-key is a date or data or not, `null` is refused.)
    private mutating func propertyListValue(depth: Int) -> PropertyListValue? {
        guard depth < 32 else { return nil }
        skipSpace()
        guard let first = current else { return nil }
        switch first {
        case UInt8(ascii: "\""):
            return string().map(PropertyListValue.string)
        case UInt8(ascii: "t"), UInt8(ascii: "f"):
            return bool().map(PropertyListValue.bool)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return integer().map(PropertyListValue.integer)
        case UInt8(ascii: "["):
            index += 1
            var values: [PropertyListValue] = []
            if take(UInt8(ascii: "]")) { return .array(values) }
            while true {
                guard let value = propertyListValue(depth: depth + 1) else { return nil }
                values.append(value)
                if take(UInt8(ascii: ",")) { continue }
                return take(UInt8(ascii: "]")) ? .array(values) : nil
            }
        case UInt8(ascii: "{"):
            var dictionary: [String: PropertyListValue] = [:]
            let read = object { cursor, key in
                guard let value = cursor.propertyListValue(depth: depth + 1) else { return false }
                dictionary[key] = value
                return true
            }
            guard read, !(dictionary.count == 1 && dictionary.keys.first!.hasPrefix("$")) else { return nil }
            return .dictionary(dictionary)
        default:
            return nil
        }
    }

    /// An app's `willPresentAnswer` reply: its ticket, and its options (absent or `null` for none).
    mutating func willPresentAnswer() -> LocalAPI.AppReply? {
        var type: String?
        var ticket: Int?
        var options: Int?
        let read = object { cursor, key in
            switch key {
            case "type": cursor.member({ $0.string() }) { type = $0 }
            case "ticket": cursor.member({ $0.integer() }) { ticket = $0 }
            case "options": cursor.optionalMember({ $0.integer() }) { options = $0 }
            default: false
            }
        }
        // Unsigned, as the reply's `UInt64` and `UInt` are: a negative number is `JSONDecoder`'s to refuse.
        guard read, type == "willPresentAnswer", let ticket, ticket >= 0, (options ?? 0) >= 0 else { return nil }
        return .willPresentAnswer(ticket: UInt64(ticket), options: options.map(UInt.init))
    }

    /// A device link's `push` message, its members as `DeviceLink.Push` decodes them.
    mutating func linkPush() -> DeviceLink.Push? {
        var type: String?
        var sequence: Int?
        var token: String?
        var bundleIdentifier: String?
        var environment: APNs.Environment?
        var apnsID: String?
        var pushType: APNs.PushType?
        var priority: Int?
        var expiresAt: Double?
        var collapseID: String?
        var payload: String?
        var receivedAt: Double?
        var uniqueID: String?
        let read = object { cursor, key in
            switch key {
            case "type": cursor.member({ $0.string() }) { type = $0 }
            case "sequence": cursor.member({ $0.integer() }) { sequence = $0 }
            case "token": cursor.member({ $0.string() }) { token = $0 }
            case "bundleIdentifier": cursor.member({ $0.string() }) { bundleIdentifier = $0 }
            case "environment": cursor.member({ $0.string().flatMap(APNs.Environment.init(rawValue:)) }) { environment = $0 }
            case "apnsID": cursor.member({ $0.string() }) { apnsID = $0 }
            case "pushType": cursor.member({ $0.string().flatMap(APNs.PushType.init(rawValue:)) }) { pushType = $0 }
            case "priority": cursor.member({ $0.integer() }) { priority = $0 }
            case "expiresAt": cursor.member({ $0.double() }) { expiresAt = $0 }
            case "collapseID": cursor.optionalMember({ $0.string() }) { collapseID = $0 }
            case "payload": cursor.member({ $0.string(escapes: true) }) { payload = $0 }
            case "receivedAt": cursor.member({ $0.double() }) { receivedAt = $0 }
            case "uniqueID": cursor.optionalMember({ $0.string() }) { uniqueID = $0 }
            default: false
            }
        }
        guard read, type == "push", let sequence, let token, let bundleIdentifier, let environment, let apnsID, let pushType, let priority,
              let expiresAt, let payload, let receivedAt
        else { return nil }
        return DeviceLink.Push(sequence: Int64(sequence), token: token, bundleIdentifier: bundleIdentifier, environment: environment, apnsID: apnsID,
                               pushType: pushType, priority: priority, expiresAt: expiresAt, collapseID: collapseID, payload: payload,
                               receivedAt: receivedAt, uniqueID: uniqueID)
    }

    /// A device link's `report` message, as `DeviceLink.DeviceMessage` decodes it.
    mutating func linkReport() -> DeviceLink.DeviceMessage? {
        var type: String?
        var through: Int?
        var reports: [DeliveryLog.Report]?
        let read = object { cursor, key in
            switch key {
            case "type": cursor.member({ $0.string() }) { type = $0 }
            case "through": cursor.member({ $0.integer() }) { through = $0 }
            case "reports": cursor.member({ $0.array { $0.report() } }) { reports = $0 }
            default: false
            }
        }
        guard read, type == "report", let through, let reports else { return nil }
        return .report(through: Int64(through), reports: reports)
    }

    /// One report of a `report` message, its members as `DeliveryLog.Report` decodes them.
    private mutating func report() -> DeliveryLog.Report? {
        var uniqueID: String?
        var stage: DeliveryLog.Stage?
        var at: Double?
        var detail: String?
        let read = object { cursor, key in
            switch key {
            case "uniqueID": cursor.member({ $0.string(escapes: true) }) { uniqueID = $0 }
            case "stage": cursor.member({ $0.string().flatMap(DeliveryLog.Stage.init(rawValue:)) }) { stage = $0 }
            case "at": cursor.member({ $0.double() }) { at = $0 }
            case "detail": cursor.optionalMember({ $0.string(escapes: true) }) { detail = $0 }
            default: false
            }
        }
        guard read, let uniqueID, let stage, let at else { return nil }
        return DeliveryLog.Report(uniqueID: uniqueID, stage: stage, secondsSince1970: at, detail: detail)
    }

    /// The elements of an array, each read by `element`; nil when it is not an array or an element
    /// is not read.
    private mutating func array<T>(_ element: (inout Cursor) -> T?) -> [T]? {
        guard take(UInt8(ascii: "[")) else { return nil }
        var elements: [T] = []
        if take(UInt8(ascii: "]")) { return elements }
        while true {
            guard let value = element(&self) else { return nil }
            elements.append(value)
            if take(UInt8(ascii: ",")) { continue }
            return take(UInt8(ascii: "]")) ? elements : nil
        }
    }

    /// `{"type": "willPresent", "ticket": …, "notification": {"request": …, "date": …}}`.
    mutating func willPresentEvent() -> LocalAPI.AppEvent? {
        var type: String?
        var ticket: Int?
        var notification: DeliveredNotification?
        let read = object { cursor, key in
            switch key {
            case "type": cursor.member({ $0.string() }) { type = $0 }
            case "ticket": cursor.member({ $0.integer().flatMap { $0 >= 0 ? $0 : nil } }) { ticket = $0 }
            case "notification": cursor.member({ $0.deliveredNotification() }) { notification = $0 }
            default: false
            }
        }
        guard read, type == "willPresent", let ticket, let notification else { return nil }
        return .call(.willPresent(ticket: UInt64(ticket), notification))
    }

    /// A delivered notification: its request, and its date as `JSONDecoder` reads a `Date` (seconds
    /// since 2001).
    private mutating func deliveredNotification() -> DeliveredNotification? {
        var request: NotificationRequest?
        var date: Double?
        let read = object { cursor, key in
            switch key {
            case "request": cursor.member({ $0.request() }) { request = $0 }
            case "date": cursor.member({ $0.double() }) { date = $0 }
            default: false
            }
        }
        guard read, let request, let date else { return nil }
        return DeliveredNotification(request: request, date: Date(timeIntervalSinceReferenceDate: date))
    }

    private mutating func sound() -> NotificationSound? {
        var type: String?
        var name: String?
        var critical = false
        var volume = 1.0
        let read = object { cursor, key in
            switch key {
            case "type": cursor.member({ $0.string() }) { type = $0 }
            case "name": cursor.optionalMember({ $0.string() }) { name = $0 }
            case "critical": cursor.optionalMember({ $0.bool() }) { critical = $0 }
            case "volume": cursor.optionalMember({ $0.double() }) { volume = $0 }
            default: false
            }
        }
        guard read, let type else { return nil }
        let kind: NotificationSound.Kind
        switch type {
        case "default": kind = .default
        case "defaultRingtone": kind = .defaultRingtone
        case "named":
            guard let name else { return nil }
            kind = .named(name)
        case "ringtone":
            guard let name else { return nil }
            kind = .ringtone(name)
        default:
            return nil
        }
        return NotificationSound(kind: kind, isCritical: critical, volume: Float(min(max(volume, 0), 1)))
    }

    /// A time-interval or push trigger; calendar and location triggers are `JSONDecoder`'s to read.
    private mutating func trigger() -> NotificationTrigger? {
        var type: String?
        var interval: Double?
        var repeats = false
        let read = object { cursor, key in
            switch key {
            case "type": cursor.member({ $0.string() }) { type = $0 }
            case "interval": cursor.member({ $0.double() }) { interval = $0 }
            case "repeats": cursor.optionalMember({ $0.bool() }) { repeats = $0 }
            default: false
            }
        }
        guard read else { return nil }
        switch type {
        case "timeInterval":
            guard let interval else { return nil }
            return .timeInterval(interval, repeats: repeats)
        case "push":
            return interval == nil ? .push : nil
        default:
            return nil
        }
    }
}
