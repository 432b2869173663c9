import Foundation

/// The one decoder of the busiest messages, reading them straight from their bytes: a
/// ``NotificationRequest`` an app adds (`POST /v1/requests`, the local API's busiest call, and the web
/// page's composer), the `willPresent` event the daemon sends an app for each notification in the
/// foreground and the app's answer to it, the `push` message a gateway sends a device's daemon for
/// each push, and the `report` messages a device sends its gateway.
///
/// `JSONDecoder` took a tenth of the daemon's CPU for each add (a container, a key lookup and type
/// metadata per field, for the sixteen fields of a content the framework writes whole), as much of
/// an app's for each event, and a fortieth of `unotify serve`'s for pushes at 1,000 a second. This
/// reader walks the bytes once and builds the value itself.
///
/// **What it reads, and how.** The JSON is read by ``JSONScanner``'s rules, the same as every other
/// reader of outside JSON in the system (``StrictJSONReader``): RFC 8259's grammar, valid UTF-8, every
/// escape, surrogates in pairs, finite numbers, no key twice in an object, at most
/// ``JSONLimits/maximumMessageDepth`` deep. A document that breaks one is refused, wherever in it.
/// Its values are read as the model's `Decodable` conformances read them with `JSONDecoder`: the same
/// members required and optional, `null` for the default, keys it does not know passed over, the same
/// numbers taken for each type, the same values refused (with the same ``NotificationFailure`` under
/// the error, where the conformance gives one), and among several faults, the one `JSONDecoder`
/// reports first. `NotificationJSONReaderTests` and `JSONAgreementTests` hold it to that.
///
/// Where it differs from `JSONDecoder`, it keeps to the RFC: it refuses what `JSONDecoder` lets
/// through (a trailing comma, a byte-order mark, a key twice (`JSONDecoder` keeps the first), a
/// malformed number or string under a key no one reads), and it reads a zero written with an
/// exponent (`0e5`) as the `Double` 0, which `JSONDecoder` refuses. A whole number past ±2⁵³ written
/// with a fraction or an exponent is read exactly, where `JSONDecoder` refuses some that fit.
///
/// Errors are `DecodingError`s, as `JSONDecoder`'s are, with the coding path to the value at fault:
/// `dataCorrupted` with a ``StrictJSONReader/Failure`` under it for JSON the system does not take.
package enum NotificationJSONReader {
    /// The request in `bytes`.
    package static func request(from bytes: UnsafeRawBufferPointer) throws(DecodingError) -> NotificationRequest {
        try read(bytes) { reader throws(ReadError) in try reader.request(depth: 0) }
    }

    /// The request in `bytes` (see ``request(from:)-(UnsafeRawBufferPointer)``).
    package static func request(from bytes: some Collection<UInt8>) throws(DecodingError) -> NotificationRequest {
        try withBytes(bytes) { bytes throws(DecodingError) in try request(from: bytes) }
    }

    /// The app's event in `bytes` when it is a `willPresent` event; `nil` when its `type` says it is
    /// another event (for `JSONDecoder` to read).
    package static func willPresentEvent(from bytes: some Collection<UInt8>) throws(DecodingError) -> LocalAPI.AppEvent? {
        try message(in: bytes) { reader throws(ReadError) in try reader.willPresentEvent() }
    }

    /// The app's reply in `bytes` when it is a `willPresentAnswer` (the daemon's busiest reply: one for
    /// each notification shown in the foreground); `nil` when its `type` says it is another reply.
    package static func willPresentAnswer(from bytes: some Collection<UInt8>) throws(DecodingError) -> LocalAPI.AppReply? {
        try message(in: bytes) { reader throws(ReadError) in try reader.willPresentAnswer() }
    }

    /// The push of a device link's `push` message in `bytes`; `nil` when its `type` says it is another
    /// message.
    package static func linkPush(from bytes: some Collection<UInt8>) throws(DecodingError) -> DeviceLink.Push? {
        try message(in: bytes) { reader throws(ReadError) in try reader.linkPush() }
    }

    /// A device link's `report` message in `bytes` (a device's delivery-log reports, a few hundred at a
    /// time, which the gateway reads on the link's event loop, between the pushes it writes to the
    /// link); `nil` when its `type` says it is another message.
    package static func linkReport(from bytes: some Collection<UInt8>) throws(DecodingError) -> DeviceLink.DeviceMessage? {
        try message(in: bytes) { reader throws(ReadError) in try reader.linkReport() }
    }

    /// The message of one kind in `bytes`, read by `body`; `nil` for a message of another `type`.
    private static func message<T>(in bytes: some Collection<UInt8>, _ body: (inout Reader) throws(ReadError) -> T) throws(DecodingError) -> T? {
        try withBytes(bytes) { bytes throws(DecodingError) -> T? in
            try read(bytes) { reader throws(ReadError) -> T? in try body(&reader) }
        }
    }

    /// Reads the document in `bytes` with `body`, which reads its one value; `nil` from `body`, or a
    /// message of another type, is `nil`.
    private static func read<T>(_ bytes: UnsafeRawBufferPointer, _ body: (inout Reader) throws(ReadError) -> T?) throws(DecodingError) -> T? {
        var reader = Reader(scanner: JSONScanner(bytes: bytes, maximumDepth: JSONLimits.maximumMessageDepth, builds: true))
        do throws(ReadError) {
            let value = try body(&reader)
            try reader.end()
            return value
        } catch {
            switch error {
            case .malformed(let failure):
                throw .dataCorrupted(DecodingError.Context(codingPath: [], debugDescription: failure.description, underlyingError: failure))
            case .fault(let fault):
                // A fault is the answer only for a document that is JSON the system takes: the
                // reading may have stopped before its end (at a value of the wrong type, or a member
                // missing), so the whole of it is checked first.
                var checker = JSONScanner(bytes: bytes, maximumDepth: JSONLimits.maximumMessageDepth, builds: false)
                do throws(JSONScanner.Failure) {
                    try checker.skipValue(depth: 0)
                    try checker.end()
                } catch {
                    throw .dataCorrupted(DecodingError.Context(codingPath: [], debugDescription: error.description, underlyingError: error))
                }
                throw fault
            case .anotherType: return nil
            }
        }
    }

    private static func read<T>(_ bytes: UnsafeRawBufferPointer, _ body: (inout Reader) throws(ReadError) -> T) throws(DecodingError) -> T {
        let value: T? = try read(bytes) { reader throws(ReadError) -> T? in try body(&reader) }
        return value!
    }

    private static func withBytes<T>(_ bytes: some Collection<UInt8>, _ body: (UnsafeRawBufferPointer) throws(DecodingError) -> T) throws(DecodingError) -> T {
        let result: Result<T, DecodingError>? = bytes.withContiguousStorageIfAvailable { buffer in
            Result { () throws(DecodingError) in try body(UnsafeRawBufferPointer(buffer)) }
        }
        if let result { return try result.get() }
        return try Array(bytes).withUnsafeBytes { buffer in Result { () throws(DecodingError) in try body(buffer) } }.get()
    }
}

/// Why a value was not read.
private enum ReadError: Error {
    /// The document is not JSON the system takes: reading stops.
    case malformed(JSONScanner.Failure)
    /// A value in it is not what the model wants: reading goes on past it (malformed JSON later in
    /// the document is what `JSONDecoder` reports first), and the fault is thrown when its value is
    /// wanted, in the order the model's `Decodable` conformance wants them.
    case fault(DecodingError)
    /// A message whose `type` says it is not the one being read.
    case anotherType
}

/// A member's key, or an element's index, in a coding path: as `JSONDecoder` names them.
private struct PathKey: CodingKey {
    var stringValue: String
    var intValue: Int?

    init(stringValue: String) {
        self.stringValue = stringValue
    }

    init(intValue: Int) {
        self.stringValue = "Index \(intValue)"
        self.intValue = intValue
    }
}

extension DecodingError {
    /// The same error, for the member `key` of the value it was about.
    fileprivate func under(_ key: PathKey) -> DecodingError {
        func moved(_ context: Context) -> Context {
            Context(codingPath: [key] + context.codingPath, debugDescription: context.debugDescription, underlyingError: context.underlyingError)
        }
        return switch self {
        case .typeMismatch(let type, let context): .typeMismatch(type, moved(context))
        case .valueNotFound(let type, let context): .valueNotFound(type, moved(context))
        case .keyNotFound(let missing, let context): .keyNotFound(missing, moved(context))
        case .dataCorrupted(let context): .dataCorrupted(moved(context))
        @unknown default: self
        }
    }

    fileprivate static func corrupted(_ description: String, at key: String? = nil, because underlying: (any Error)? = nil) -> DecodingError {
        .dataCorrupted(Context(codingPath: key.map { [PathKey(stringValue: $0)] } ?? [], debugDescription: description, underlyingError: underlying))
    }
}

/// A member of an object as it was read: absent, `null`, its value, or the fault found in it.
private enum Slot<Value> {
    case absent
    case null
    case value(Value)
    case fault(DecodingError)

    /// The value, as `decode(_:forKey:)` wants it: there, and not `null`.
    func required(_ key: String) throws(ReadError) -> Value {
        switch self {
        case .value(let value): return value
        case .fault(let fault): throw .fault(fault)
        case .absent:
            throw .fault(.keyNotFound(PathKey(stringValue: key), DecodingError.Context(
                codingPath: [], debugDescription: "No value associated with key \"\(key)\".")))
        case .null:
            throw .fault(.valueNotFound(Value.self, DecodingError.Context(
                codingPath: [PathKey(stringValue: key)], debugDescription: "Cannot get value of type \(Value.self) -- found null value instead")))
        }
    }

    /// The value, as `decodeIfPresent(_:forKey:)` wants it: `nil` when absent or `null`.
    func optional() throws(ReadError) -> Value? {
        switch self {
        case .value(let value): return value
        case .fault(let fault): throw .fault(fault)
        case .absent, .null: return nil
        }
    }

    var fault: DecodingError? {
        if case .fault(let fault) = self { return fault }
        return nil
    }
}

private struct Reader {
    var scanner: JSONScanner

    var bytes: UnsafeRawBufferPointer { scanner.bytes }

    mutating func end() throws(ReadError) {
        do throws(JSONScanner.Failure) { try scanner.end() } catch { throw .malformed(error) }
    }

    private mutating func skip(depth: Int) throws(ReadError) {
        do throws(JSONScanner.Failure) { try scanner.skipValue(depth: depth) } catch { throw .malformed(error) }
    }

    private func fault<T>(expected: T.Type) -> ReadError {
        let found = switch scanner.current {
        case UInt8(ascii: "\"")?: "a string"
        case UInt8(ascii: "{")?: "a dictionary"
        case UInt8(ascii: "[")?: "an array"
        case UInt8(ascii: "t")?, UInt8(ascii: "f")?: "bool"
        case UInt8(ascii: "n")?: "null"
        default: "number"
        }
        return .fault(.typeMismatch(T.self, DecodingError.Context(codingPath: [], debugDescription: "Expected to decode \(T.self) but found \(found) instead.")))
    }

    // MARK: - Members and elements

    /// The scanner's `body`, its failure the document's.
    private mutating func scan<T>(_ body: (inout JSONScanner) throws(JSONScanner.Failure) -> T) throws(ReadError) -> T {
        do throws(JSONScanner.Failure) { return try body(&scanner) } catch { throw .malformed(error) }
    }

    /// The members of the object at the scanner, inside `depth` open arrays and objects: `member` is
    /// handed each key, with the scanner at its value, and reads the value or passes it over. A key
    /// twice is malformed. Not an object: a fault.
    private mutating func object(depth: Int, _ member: (inout Reader, String) throws(ReadError) -> Void) throws(ReadError) {
        scanner.skipSpace()
        guard scanner.current == UInt8(ascii: "{") else { throw fault(expected: [String: Any].self) }
        try scan { scanner throws(JSONScanner.Failure) in try scanner.enter(depth: depth + 1) }
        scanner.index += 1
        scanner.skipSpace()
        if scanner.current == UInt8(ascii: "}") {
            scanner.index += 1
            return
        }
        // The keys so far: a few in an array, more in a set (an object from outside may have thousands).
        var keys: [String] = []
        var manyKeys: Set<String> = []
        while true {
            scanner.skipSpace()
            guard scanner.current == UInt8(ascii: "\"") else { throw .malformed(.malformed(offset: scanner.index)) }
            let start = scanner.index
            let key = try scan { scanner throws(JSONScanner.Failure) in try scanner.text() }
            if keys.count < 16 {
                guard !keys.contains(key) else { throw .malformed(.duplicateKey(offset: start)) }
                keys.append(key)
                if keys.count == 16 { manyKeys = Set(keys) }
            } else {
                guard manyKeys.insert(key).inserted else { throw .malformed(.duplicateKey(offset: start)) }
            }
            scanner.skipSpace()
            guard scanner.current == UInt8(ascii: ":") else { throw .malformed(.malformed(offset: scanner.index)) }
            scanner.index += 1
            scanner.skipSpace()
            try member(&self, key)
            scanner.skipSpace()
            switch scanner.current {
            case UInt8(ascii: ",")?: scanner.index += 1
            case UInt8(ascii: "}")?:
                scanner.index += 1
                return
            default: throw .malformed(.malformed(offset: scanner.index))
            }
        }
    }

    /// The value at the scanner, inside `depth` open arrays and objects, read by `read`: `null`, the
    /// value, or the fault `read` found in it (then the value is passed over, checked).
    private mutating func slot<T>(_ key: String, depth: Int, _ read: (inout Reader) throws(ReadError) -> T) throws(ReadError) -> Slot<T> {
        scanner.skipSpace()
        if scanner.current == UInt8(ascii: "n") {
            do throws(JSONScanner.Failure) { try scanner.literal("null") } catch { throw .malformed(error) }
            return .null
        }
        let start = scanner.index
        do throws(ReadError) {
            return .value(try read(&self))
        } catch {
            guard case .fault(let fault) = error else { throw error }
            scanner.index = start
            try skip(depth: depth)
            return .fault(fault.under(PathKey(stringValue: key)))
        }
    }

    /// The elements of the array at the scanner, inside `depth` open arrays and objects, each read
    /// by `element`; the first fault among them, with its index, after all are read.
    private mutating func array<T>(depth: Int, _ element: (inout Reader) throws(ReadError) -> T) throws(ReadError) -> [T] {
        scanner.skipSpace()
        guard scanner.current == UInt8(ascii: "[") else { throw fault(expected: [Any].self) }
        try scan { scanner throws(JSONScanner.Failure) in try scanner.enter(depth: depth + 1) }
        scanner.index += 1
        scanner.skipSpace()
        var elements: [T] = []
        if scanner.current == UInt8(ascii: "]") {
            scanner.index += 1
            return elements
        }
        var firstFault: DecodingError?
        var count = 0
        while true {
            scanner.skipSpace()
            let start = scanner.index
            do throws(ReadError) {
                elements.append(try element(&self))
            } catch {
                guard case .fault(let fault) = error else { throw error }
                if firstFault == nil { firstFault = fault.under(PathKey(intValue: count)) }
                scanner.index = start
                try skip(depth: depth + 1)
            }
            count += 1
            scanner.skipSpace()
            switch scanner.current {
            case UInt8(ascii: ",")?: scanner.index += 1
            case UInt8(ascii: "]")?:
                scanner.index += 1
                if let firstFault { throw .fault(firstFault) }
                return elements
            default: throw .malformed(.malformed(offset: scanner.index))
            }
        }
    }

    // MARK: - Scalars

    private mutating func string() throws(ReadError) -> String {
        guard scanner.current == UInt8(ascii: "\"") else { throw fault(expected: String.self) }
        do throws(JSONScanner.Failure) { return try scanner.text() } catch { throw .malformed(error) }
    }

    private mutating func bool() throws(ReadError) -> Bool {
        do throws(JSONScanner.Failure) {
            switch scanner.current {
            case UInt8(ascii: "t")?:
                try scanner.literal("true")
                return true
            case UInt8(ascii: "f")?:
                try scanner.literal("false")
                return false
            default: break
            }
        } catch {
            throw .malformed(error)
        }
        throw fault(expected: Bool.self)
    }

    private mutating func number<T>(as type: T.Type) throws(ReadError) -> JSONScanner.Number {
        guard let byte = scanner.current, byte == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else {
            throw fault(expected: T.self)
        }
        do throws(JSONScanner.Failure) { return try scanner.number() } catch { throw .malformed(error) }
    }

    private func notRepresentable<T>(_ number: JSONScanner.Number, as type: T.Type) -> ReadError {
        let literal = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[number.range]), as: UTF8.self)
        return .fault(.dataCorrupted(DecodingError.Context(codingPath: [], debugDescription: "Number \(literal) is not representable in Swift as \(T.self).")))
    }

    private mutating func integer() throws(ReadError) -> Int {
        let number = try number(as: Int.self)
        guard let value = number.integer(in: bytes) else { throw notRepresentable(number, as: Int.self) }
        return value
    }

    private mutating func unsignedInteger() throws(ReadError) -> UInt64 {
        let number = try number(as: UInt64.self)
        guard let value = number.unsignedInteger(in: bytes) else { throw notRepresentable(number, as: UInt64.self) }
        return value
    }

    private mutating func double() throws(ReadError) -> Double {
        try number(as: Double.self).double
    }

    /// A `String`-backed enum's case, as `JSONDecoder` reads one.
    private mutating func rawValue<E: RawRepresentable<String>>(_ type: E.Type) throws(ReadError) -> E {
        let raw = try string()
        guard let value = E(rawValue: raw) else {
            throw .fault(.corrupted("Cannot initialize \(E.self) from invalid String value \(raw)"))
        }
        return value
    }

    // MARK: - The model

    mutating func request(depth: Int) throws(ReadError) -> NotificationRequest {
        var identifier = Slot<String>.absent
        var content = Slot<NotificationContent>.absent
        var trigger = Slot<NotificationTrigger>.absent
        var pushUniqueID = Slot<String>.absent
        try object(depth: depth) { reader, key throws(ReadError) in
            switch key {
            case "identifier": identifier = try reader.slot(key, depth: depth + 1) { reader throws(ReadError) in try reader.string() }
            case "content": content = try reader.slot(key, depth: depth + 1) { reader throws(ReadError) in try reader.content(depth: depth + 1) }
            case "trigger": trigger = try reader.slot(key, depth: depth + 1) { reader throws(ReadError) in try reader.trigger(depth: depth + 1) }
            case "pushUniqueID": pushUniqueID = try reader.slot(key, depth: depth + 1) { reader throws(ReadError) in try reader.string() }
            default: try reader.skip(depth: depth + 1)
            }
        }
        var request = NotificationRequest(identifier: try identifier.required("identifier"), content: try content.optional() ?? NotificationContent(),
                                          trigger: try trigger.optional())
        request.pushUniqueID = try pushUniqueID.optional()
        return request
    }

    /// Every member optional, `null` for its default; the members in any order (`NotificationContent`
    /// decodes the keys there are, in no order).
    private mutating func content(depth: Int) throws(ReadError) -> NotificationContent {
        var content = NotificationContent()
        var firstFault: DecodingError?
        func take<T>(_ slot: Slot<T>, _ set: (T?) -> Void) {
            if let fault = slot.fault {
                if firstFault == nil { firstFault = fault }
            } else {
                set(try? slot.optional())
            }
        }
        try object(depth: depth) { reader, key throws(ReadError) in
            let inside = depth + 1
            switch key {
            case "title": take(try reader.slot(key, depth: inside) { r throws(ReadError) in try r.string() }) { content.title = $0 ?? "" }
            case "subtitle": take(try reader.slot(key, depth: inside) { r throws(ReadError) in try r.string() }) { content.subtitle = $0 ?? "" }
            case "body": take(try reader.slot(key, depth: inside) { r throws(ReadError) in try r.string() }) { content.body = $0 ?? "" }
            case "attachments":
                take(try reader.slot(key, depth: inside) { r throws(ReadError) in
                    try r.array(depth: inside) { r throws(ReadError) in try r.attachment(depth: inside + 1) }
                }) { content.attachments = $0 ?? [] }
            case "badge": take(try reader.slot(key, depth: inside) { r throws(ReadError) in try r.integer() }) { content.badge = $0 }
            case "sound": take(try reader.slot(key, depth: inside) { r throws(ReadError) in try r.sound(depth: inside) }) { content.sound = $0 }
            case "launchImageName": take(try reader.slot(key, depth: inside) { r throws(ReadError) in try r.string() }) { content.launchImageName = $0 ?? "" }
            case "userInfo": take(try reader.slot(key, depth: inside) { r throws(ReadError) in try r.userInfo(depth: inside) }) { content.userInfo = $0 ?? [:] }
            case "categoryIdentifier": take(try reader.slot(key, depth: inside) { r throws(ReadError) in try r.string() }) { content.categoryIdentifier = $0 ?? "" }
            case "threadIdentifier": take(try reader.slot(key, depth: inside) { r throws(ReadError) in try r.string() }) { content.threadIdentifier = $0 ?? "" }
            case "summaryArgument": take(try reader.slot(key, depth: inside) { r throws(ReadError) in try r.string() }) { content.summaryArgument = $0 ?? "" }
            case "summaryArgumentCount":
                take(try reader.slot(key, depth: inside) { r throws(ReadError) in try r.integer() }) { content.summaryArgumentCount = $0 ?? 1 }
            case "targetContentIdentifier": take(try reader.slot(key, depth: inside) { r throws(ReadError) in try r.string() }) { content.targetContentIdentifier = $0 }
            case "interruptionLevel":
                take(try reader.slot(key, depth: inside) { r throws(ReadError) in try r.interruptionLevel() }) { content.interruptionLevel = $0 ?? .active }
            case "relevanceScore": take(try reader.slot(key, depth: inside) { r throws(ReadError) in try r.double() }) { content.relevanceScore = $0 ?? 0 }
            case "filterCriteria": take(try reader.slot(key, depth: inside) { r throws(ReadError) in try r.string() }) { content.filterCriteria = $0 }
            default: try reader.skip(depth: inside)
            }
        }
        if let firstFault { throw .fault(firstFault) }
        return content
    }

    private mutating func interruptionLevel() throws(ReadError) -> InterruptionLevel {
        let number = try number(as: UInt.self)
        guard let raw = number.unsignedInteger(in: bytes) else { throw notRepresentable(number, as: UInt.self) }
        guard let level = InterruptionLevel(rawValue: UInt(raw)) else {
            throw .fault(.corrupted("Cannot initialize InterruptionLevel from invalid UInt value \(raw)"))
        }
        return level
    }

    /// `NotificationSound`'s members: `type`, then `name` for the kinds that have one, `critical` and `volume`.
    private mutating func sound(depth: Int) throws(ReadError) -> NotificationSound {
        var type = Slot<String>.absent, name = Slot<String>.absent, critical = Slot<Bool>.absent, volume = Slot<Double>.absent
        try object(depth: depth) { reader, key throws(ReadError) in
            switch key {
            case "type": type = try reader.slot(key, depth: depth + 1) { r throws(ReadError) in try r.string() }
            case "name": name = try reader.slot(key, depth: depth + 1) { r throws(ReadError) in try r.string() }
            case "critical": critical = try reader.slot(key, depth: depth + 1) { r throws(ReadError) in try r.bool() }
            case "volume": volume = try reader.slot(key, depth: depth + 1) { r throws(ReadError) in try r.double() }
            default: try reader.skip(depth: depth + 1)
            }
        }
        let kind: NotificationSound.Kind
        switch try type.required("type") {
        case "default": kind = .default
        case "defaultRingtone": kind = .defaultRingtone
        case "named": kind = .named(try name.required("name"))
        case "ringtone": kind = .ringtone(try name.required("name"))
        case let other: throw .fault(.corrupted("Unknown sound type \"\(other)\".", at: "type"))
        }
        let isCritical = try critical.optional() ?? false
        return NotificationSound(kind: kind, isCritical: isCritical, volume: Float(min(max(try volume.optional() ?? 1, 0), 1)))
    }

    /// `NotificationAttachment`'s members, in its order; a `url` that is no URL fails as Apple's
    /// `attachmentInvalidURL`.
    private mutating func attachment(depth: Int) throws(ReadError) -> NotificationAttachment {
        var identifier = Slot<String>.absent, url = Slot<String>.absent, type = Slot<String>.absent, hidden = Slot<Bool>.absent
        var clipping = Slot<ThumbnailClippingRect>.absent, time = Slot<Double>.absent
        try object(depth: depth) { reader, key throws(ReadError) in
            let inside = depth + 1
            switch key {
            case "identifier": identifier = try reader.slot(key, depth: inside) { r throws(ReadError) in try r.string() }
            case "url": url = try reader.slot(key, depth: inside) { r throws(ReadError) in try r.string() }
            case "type": type = try reader.slot(key, depth: inside) { r throws(ReadError) in try r.string() }
            case "thumbnailHidden": hidden = try reader.slot(key, depth: inside) { r throws(ReadError) in try r.bool() }
            case "thumbnailClippingRect": clipping = try reader.slot(key, depth: inside) { r throws(ReadError) in try r.clippingRect(depth: inside) }
            case "thumbnailTime": time = try reader.slot(key, depth: inside) { r throws(ReadError) in try r.double() }
            default: try reader.skip(depth: inside)
            }
        }
        let id = try identifier.required("identifier")
        let text = try url.required("url")
        guard !text.isEmpty, let location = URL(string: text) else {
            throw .fault(.corrupted("\"\(text)\" is not a URL.", at: "url",
                                    because: NotificationFailure(.attachmentInvalidURL, detail: "\"\(text)\" is not a URL.")))
        }
        return NotificationAttachment(identifier: id, url: location, type: try type.required("type"), thumbnailHidden: try hidden.required("thumbnailHidden"),
                                      thumbnailClippingRect: try clipping.optional(), thumbnailTime: try time.optional().map { max(0, $0) })
    }

    /// `X`, `Y`, `Width` and `Height`, each required; a rectangle with nothing inside the image is the whole image.
    private mutating func clippingRect(depth: Int) throws(ReadError) -> ThumbnailClippingRect {
        var sides: [String: Slot<Double>] = [:]
        try object(depth: depth) { reader, key throws(ReadError) in
            switch key {
            case "X", "Y", "Width", "Height": sides[key] = try reader.slot(key, depth: depth + 1) { r throws(ReadError) in try r.double() }
            default: try reader.skip(depth: depth + 1)
            }
        }
        func side(_ key: String) throws(ReadError) -> Double { try (sides[key] ?? .absent).required(key) }
        return ThumbnailClippingRect(x: try side("X"), y: try side("Y"), width: try side("Width"), height: try side("Height")) ?? .whole
    }

    /// A `userInfo`: an object of ``propertyListValue(depth:)``s.
    private mutating func userInfo(depth: Int) throws(ReadError) -> [String: PropertyListValue] {
        var userInfo: [String: PropertyListValue] = [:]
        try object(depth: depth) { reader, key throws(ReadError) in
            userInfo[key] = try reader.propertyListValue(depth: depth + 1)
        }
        return userInfo
    }

    /// Any JSON value, as `PropertyListValue` decodes it: numbers as ``JSONScanner/Number`` reads them,
    /// `null` as `.null`, and an object of one member `$date` (a number: seconds since 1970), `$data`
    /// (a string of base64) or `$dictionary` (an object) as a date, data or that dictionary; any other
    /// object of one `$`-key is a dictionary of it.
    private mutating func propertyListValue(depth: Int) throws(ReadError) -> PropertyListValue {
        scanner.skipSpace()
        switch scanner.current {
        case UInt8(ascii: "{")?: break
        case UInt8(ascii: "[")?: return .array(try array(depth: depth) { reader throws(ReadError) in try reader.propertyListValue(depth: depth + 1) })
        default: return try scan { scanner throws(JSONScanner.Failure) in try scanner.value(depth: depth)! }
        }
        var members: [String: PropertyListValue] = [:]
        var lastValueStart = 0
        try object(depth: depth) { reader, key throws(ReadError) in
            lastValueStart = reader.scanner.index
            members[key] = try reader.propertyListValue(depth: depth + 1)
        }
        guard members.count == 1, let (key, value) = members.first else { return .dictionary(members) }
        switch key {
        case "$date":
            switch value {
            case .integer(let seconds): return .date(Date(timeIntervalSince1970: Double(seconds)))
            case .double(let seconds): return .date(Date(timeIntervalSince1970: seconds))
            default: return .dictionary(members)
            }
        case "$data":
            guard case .string(let base64) = value, let data = Data(base64Encoded: base64) else { return .dictionary(members) }
            return .data(data)
        case "$dictionary" where bytes[lastValueStart] == UInt8(ascii: "{"):
            // The object inside is a dictionary as it is written, its own one `$`-key (a date, say)
            // not read as a tag: read again so.
            let end = scanner.index
            scanner.index = lastValueStart
            let dictionary = try userInfo(depth: depth + 1)
            scanner.index = end
            return .dictionary(dictionary)
        default:
            return .dictionary(members)
        }
    }

    /// A trigger: `repeats`, then `type`, then the member its type needs.
    private mutating func trigger(depth: Int) throws(ReadError) -> NotificationTrigger {
        var type = Slot<String>.absent, interval = Slot<Double>.absent, repeats = Slot<Bool>.absent
        var components = Slot<DateComponents>.absent, region = Slot<CircularRegion>.absent
        try object(depth: depth) { reader, key throws(ReadError) in
            let inside = depth + 1
            switch key {
            case "type": type = try reader.slot(key, depth: inside) { r throws(ReadError) in try r.string() }
            case "interval": interval = try reader.slot(key, depth: inside) { r throws(ReadError) in try r.double() }
            case "repeats": repeats = try reader.slot(key, depth: inside) { r throws(ReadError) in try r.bool() }
            case "dateComponents": components = try reader.slot(key, depth: inside) { r throws(ReadError) in try r.dateComponents(depth: inside) }
            case "region": region = try reader.slot(key, depth: inside) { r throws(ReadError) in try r.region(depth: inside) }
            default: try reader.skip(depth: inside)
            }
        }
        let repeating = try repeats.optional() ?? false
        switch try type.required("type") {
        case "timeInterval": return .timeInterval(try interval.required("interval"), repeats: repeating)
        case "calendar": return .calendar(try components.required("dateComponents"), repeats: repeating)
        case "location": return .location(try region.required("region"), repeats: repeating)
        case "push": return .push
        case let other: throw .fault(.corrupted("Unknown trigger type \"\(other)\".", at: "type"))
        }
    }

    /// A calendar trigger's components, as `WireDateComponents` reads them: each number of
    /// ``TriggerRules/matchableComponents`` in turn, `isLeapMonth`, `timeZone`, then `calendar`.
    private mutating func dateComponents(depth: Int) throws(ReadError) -> DateComponents {
        var numbers: [String: Slot<Int>] = [:]
        var leapMonth = Slot<Bool>.absent, zone = Slot<String>.absent, calendar = Slot<WireCalendar>.absent
        let names = Set(TriggerRules.matchableComponents.map(\.name))
        try object(depth: depth) { reader, key throws(ReadError) in
            let inside = depth + 1
            switch key {
            case "isLeapMonth": leapMonth = try reader.slot(key, depth: inside) { r throws(ReadError) in try r.bool() }
            case "timeZone": zone = try reader.slot(key, depth: inside) { r throws(ReadError) in try r.zone(depth: inside) }
            case "calendar": calendar = try reader.slot(key, depth: inside) { r throws(ReadError) in try r.calendar(depth: inside) }
            case let name where names.contains(name): numbers[name] = try reader.slot(key, depth: inside) { r throws(ReadError) in try r.integer() }
            default: try reader.skip(depth: inside)
            }
        }
        var components = DateComponents()
        for matchable in TriggerRules.matchableComponents {
            if let value = try (numbers[matchable.name] ?? .absent).optional() { components.setValue(value, for: matchable.component) }
        }
        components.isLeapMonth = try leapMonth.optional()
        if let identifier = try zone.optional() { components.timeZone = try Self.timeZone(identifier, at: "timeZone") }
        if let wire = try calendar.optional() {
            guard let identifier = WireDateComponents.calendars[wire.identifier] else {
                throw .fault(.corrupted("No calendar is called \(wire.identifier).", at: "calendar"))
            }
            var built = Calendar(identifier: identifier)
            for (value, name) in [(wire.firstWeekday, "firstWeekday"), (wire.minimumDaysInFirstWeek, "minimumDaysInFirstWeek")] {
                guard let value else { continue }
                guard (1...7).contains(value) else {
                    throw .fault(.corrupted("The calendar's \(name) must be within 1…7; got \(value).", at: "calendar"))
                }
            }
            if let first = wire.firstWeekday { built.firstWeekday = first }
            if let minimum = wire.minimumDaysInFirstWeek { built.minimumDaysInFirstWeek = minimum }
            if let zone = wire.timeZone { built.timeZone = try Self.timeZone(zone, at: "calendar") }
            components.calendar = built
        }
        return components
    }

    /// A time zone named on this system, or the failure Apple reports for a trigger that can never fire.
    private static func timeZone(_ identifier: String, at key: String) throws(ReadError) -> TimeZone {
        guard let zone = TimeZone(identifier: identifier) else {
            throw .fault(.corrupted("No time zone is called \(identifier).", at: key,
                                    because: NotificationFailure(.notificationInvalidNoDate, detail: "No time zone is called \"\(identifier)\".")))
        }
        return zone
    }

    /// A time zone's object: its `identifier`.
    private mutating func zone(depth: Int) throws(ReadError) -> String {
        var identifier = Slot<String>.absent
        try object(depth: depth) { reader, key throws(ReadError) in
            if key == "identifier" {
                identifier = try reader.slot(key, depth: depth + 1) { r throws(ReadError) in try r.string() }
            } else {
                try reader.skip(depth: depth + 1)
            }
        }
        return try identifier.required("identifier")
    }

    private struct WireCalendar {
        var identifier: String
        var firstWeekday: Int?
        var minimumDaysInFirstWeek: Int?
        var timeZone: String?
    }

    private mutating func calendar(depth: Int) throws(ReadError) -> WireCalendar {
        var identifier = Slot<String>.absent, first = Slot<Int>.absent, minimum = Slot<Int>.absent, zone = Slot<String>.absent
        try object(depth: depth) { reader, key throws(ReadError) in
            let inside = depth + 1
            switch key {
            case "identifier": identifier = try reader.slot(key, depth: inside) { r throws(ReadError) in try r.string() }
            case "firstWeekday": first = try reader.slot(key, depth: inside) { r throws(ReadError) in try r.integer() }
            case "minimumDaysInFirstWeek": minimum = try reader.slot(key, depth: inside) { r throws(ReadError) in try r.integer() }
            case "timeZone": zone = try reader.slot(key, depth: inside) { r throws(ReadError) in try r.zone(depth: inside) }
            default: try reader.skip(depth: inside)
            }
        }
        return WireCalendar(identifier: try identifier.required("identifier"), firstWeekday: try first.optional(),
                            minimumDaysInFirstWeek: try minimum.optional(), timeZone: try zone.optional())
    }

    /// A `CircularRegion`: every member required, in its order.
    private mutating func region(depth: Int) throws(ReadError) -> CircularRegion {
        var identifier = Slot<String>.absent, center = Slot<Coordinate>.absent, radius = Slot<Double>.absent
        var entry = Slot<Bool>.absent, exit = Slot<Bool>.absent
        try object(depth: depth) { reader, key throws(ReadError) in
            let inside = depth + 1
            switch key {
            case "identifier": identifier = try reader.slot(key, depth: inside) { r throws(ReadError) in try r.string() }
            case "center": center = try reader.slot(key, depth: inside) { r throws(ReadError) in try r.coordinate(depth: inside) }
            case "radius": radius = try reader.slot(key, depth: inside) { r throws(ReadError) in try r.double() }
            case "notifyOnEntry": entry = try reader.slot(key, depth: inside) { r throws(ReadError) in try r.bool() }
            case "notifyOnExit": exit = try reader.slot(key, depth: inside) { r throws(ReadError) in try r.bool() }
            default: try reader.skip(depth: inside)
            }
        }
        return CircularRegion(identifier: try identifier.required("identifier"), center: try center.required("center"), radius: try radius.required("radius"),
                              notifyOnEntry: try entry.required("notifyOnEntry"), notifyOnExit: try exit.required("notifyOnExit"))
    }

    private mutating func coordinate(depth: Int) throws(ReadError) -> Coordinate {
        var latitude = Slot<Double>.absent, longitude = Slot<Double>.absent
        try object(depth: depth) { reader, key throws(ReadError) in
            switch key {
            case "latitude": latitude = try reader.slot(key, depth: depth + 1) { r throws(ReadError) in try r.double() }
            case "longitude": longitude = try reader.slot(key, depth: depth + 1) { r throws(ReadError) in try r.double() }
            default: try reader.skip(depth: depth + 1)
            }
        }
        return Coordinate(latitude: try latitude.required("latitude"), longitude: try longitude.required("longitude"))
    }

    // MARK: - Messages

    /// Reads a message's object; its `type` member, once read, must be `type`, or the message is
    /// another one (``ReadError/anotherType``, at once).
    private mutating func message(_ type: String, _ member: (inout Reader, String) throws(ReadError) -> Void) throws(ReadError) {
        var sawType = Slot<String>.absent
        try object(depth: 0) { reader, key throws(ReadError) in
            guard key == "type" else { return try member(&reader, key) }
            sawType = try reader.slot(key, depth: 1) { r throws(ReadError) in try r.string() }
            if case .value(let value) = sawType, value != type { throw .anotherType }
        }
        _ = try sawType.required("type")
    }

    /// `{"type": "willPresent", "ticket": …, "notification": {"request": …, "date": …}}`, its date as
    /// `JSONDecoder` reads a `Date` (seconds since 2001).
    mutating func willPresentEvent() throws(ReadError) -> LocalAPI.AppEvent {
        var ticket = Slot<UInt64>.absent, notification = Slot<DeliveredNotification>.absent
        try message("willPresent") { reader, key throws(ReadError) in
            switch key {
            case "ticket": ticket = try reader.slot(key, depth: 1) { r throws(ReadError) in try r.unsignedInteger() }
            case "notification": notification = try reader.slot(key, depth: 1) { r throws(ReadError) in try r.deliveredNotification(depth: 1) }
            default: try reader.skip(depth: 1)
            }
        }
        return .call(.willPresent(ticket: try ticket.required("ticket"), try notification.required("notification")))
    }

    private mutating func deliveredNotification(depth: Int) throws(ReadError) -> DeliveredNotification {
        var request = Slot<NotificationRequest>.absent, date = Slot<Double>.absent
        try object(depth: depth) { reader, key throws(ReadError) in
            switch key {
            case "request": request = try reader.slot(key, depth: depth + 1) { r throws(ReadError) in try r.request(depth: depth + 1) }
            case "date": date = try reader.slot(key, depth: depth + 1) { r throws(ReadError) in try r.double() }
            default: try reader.skip(depth: depth + 1)
            }
        }
        return DeliveredNotification(request: try request.required("request"), date: Date(timeIntervalSinceReferenceDate: try date.required("date")))
    }

    /// An app's `willPresentAnswer` reply: its ticket, and its options (absent or `null` for none).
    mutating func willPresentAnswer() throws(ReadError) -> LocalAPI.AppReply {
        var ticket = Slot<UInt64>.absent, options = Slot<UInt64>.absent
        try message("willPresentAnswer") { reader, key throws(ReadError) in
            switch key {
            case "ticket": ticket = try reader.slot(key, depth: 1) { r throws(ReadError) in try r.unsignedInteger() }
            case "options": options = try reader.slot(key, depth: 1) { r throws(ReadError) in try r.unsignedInteger() }
            default: try reader.skip(depth: 1)
            }
        }
        return .willPresentAnswer(ticket: try ticket.required("ticket"), options: try options.optional().map(UInt.init))
    }

    /// A device link's `push` message, its members as `DeviceLink.Push` decodes them, in its order.
    mutating func linkPush() throws(ReadError) -> DeviceLink.Push {
        var token = Slot<String>.absent, bundleIdentifier = Slot<String>.absent, apnsID = Slot<String>.absent
        var collapseID = Slot<String>.absent, payload = Slot<String>.absent, uniqueID = Slot<String>.absent
        var sequence = Slot<Int>.absent, priority = Slot<Int>.absent, expiresAt = Slot<Double>.absent, receivedAt = Slot<Double>.absent
        var environment = Slot<APNs.Environment>.absent, pushType = Slot<APNs.PushType>.absent
        try message("push") { reader, key throws(ReadError) in
            switch key {
            case "token": token = try reader.slot(key, depth: 1) { r throws(ReadError) in try r.string() }
            case "bundleIdentifier": bundleIdentifier = try reader.slot(key, depth: 1) { r throws(ReadError) in try r.string() }
            case "apnsID": apnsID = try reader.slot(key, depth: 1) { r throws(ReadError) in try r.string() }
            case "collapseID": collapseID = try reader.slot(key, depth: 1) { r throws(ReadError) in try r.string() }
            case "payload": payload = try reader.slot(key, depth: 1) { r throws(ReadError) in try r.string() }
            case "uniqueID": uniqueID = try reader.slot(key, depth: 1) { r throws(ReadError) in try r.string() }
            case "sequence": sequence = try reader.slot(key, depth: 1) { r throws(ReadError) in try r.integer() }
            case "priority": priority = try reader.slot(key, depth: 1) { r throws(ReadError) in try r.integer() }
            case "expiresAt": expiresAt = try reader.slot(key, depth: 1) { r throws(ReadError) in try r.double() }
            case "receivedAt": receivedAt = try reader.slot(key, depth: 1) { r throws(ReadError) in try r.double() }
            case "environment": environment = try reader.slot(key, depth: 1) { r throws(ReadError) in try r.rawValue(APNs.Environment.self) }
            case "pushType": pushType = try reader.slot(key, depth: 1) { r throws(ReadError) in try r.rawValue(APNs.PushType.self) }
            default: try reader.skip(depth: 1)
            }
        }
        return DeviceLink.Push(
            sequence: Int64(try sequence.required("sequence")), token: try token.required("token"),
            bundleIdentifier: try bundleIdentifier.required("bundleIdentifier"), environment: try environment.required("environment"),
            apnsID: try apnsID.required("apnsID"), pushType: try pushType.required("pushType"), priority: try priority.required("priority"),
            expiresAt: try expiresAt.required("expiresAt"), collapseID: try collapseID.optional(), payload: try payload.required("payload"),
            receivedAt: try receivedAt.required("receivedAt"), uniqueID: try uniqueID.optional()
        )
    }

    /// A device link's `report` message: `through`, then its reports.
    mutating func linkReport() throws(ReadError) -> DeviceLink.DeviceMessage {
        var through = Slot<Int>.absent, reports = Slot<[DeliveryLog.Report]>.absent
        try message("report") { reader, key throws(ReadError) in
            switch key {
            case "through": through = try reader.slot(key, depth: 1) { r throws(ReadError) in try r.integer() }
            case "reports":
                reports = try reader.slot(key, depth: 1) { r throws(ReadError) in
                    try r.array(depth: 1) { r throws(ReadError) in try r.report(depth: 2) }
                }
            default: try reader.skip(depth: 1)
            }
        }
        return .report(through: Int64(try through.required("through")), reports: try reports.required("reports"))
    }

    /// One report of a `report` message, its members as `DeliveryLog.Report` decodes them.
    private mutating func report(depth: Int) throws(ReadError) -> DeliveryLog.Report {
        var uniqueID = Slot<String>.absent, stage = Slot<DeliveryLog.Stage>.absent, at = Slot<Double>.absent, detail = Slot<String>.absent
        try object(depth: depth) { reader, key throws(ReadError) in
            let inside = depth + 1
            switch key {
            case "uniqueID": uniqueID = try reader.slot(key, depth: inside) { r throws(ReadError) in try r.string() }
            case "stage": stage = try reader.slot(key, depth: inside) { r throws(ReadError) in try r.rawValue(DeliveryLog.Stage.self) }
            case "at": at = try reader.slot(key, depth: inside) { r throws(ReadError) in try r.double() }
            case "detail": detail = try reader.slot(key, depth: inside) { r throws(ReadError) in try r.string() }
            default: try reader.skip(depth: inside)
            }
        }
        return DeliveryLog.Report(uniqueID: try uniqueID.required("uniqueID"), stage: try stage.required("stage"),
                                  secondsSince1970: try at.required("at"), detail: try detail.optional())
    }
}
