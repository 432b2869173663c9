import Foundation
import NotificationCore
import Testing
import TestSupport

/// Every JSON reader and writer of the system against Foundation's, on generated documents: what the
/// system accepts, every reader reads, and reads the same way; what it writes, every reader reads back
/// as the same value. Documents nest at and around every limit, and carry NUL, lone surrogates, huge
/// and tiny numbers, duplicate keys and every escape.
@Suite struct JSONAgreementTests {
    @Test func whatTheCheckerTakesFoundationReadsAndWhatItRefusesFoundationRefusesButForItsOwnStrictness() {
        var generator = DocumentGenerator(seed: 0xA91E)
        var taken = 0, refused = 0
        for _ in 0..<2_000 {
            let document = generator.document()
            let checked = StrictJSONReader(maximumDepth: JSONLimits.maximumDocumentDepth).check(document.bytes)
            let serialized = (try? JSONSerialization.jsonObject(with: Data(document.bytes), options: [.fragmentsAllowed])) != nil
            let decoded = (try? JSONDecoder().decode(AnyJSON.self, from: Data(document.bytes))) != nil
            if checked == nil {
                taken += 1
                #expect(serialized && decoded, "taken, but Foundation refuses: \(document)")
            } else {
                refused += 1
                // Stricter than Foundation only where Foundation is lax (a trailing comma, a byte-order
                // mark) or its two readers disagree (a key twice).
                if !document.isLaxOnPurpose {
                    #expect(!(serialized && decoded), "refused (\(checked!)), but Foundation reads it: \(document)")
                }
            }
        }
        #expect(taken > 400 && refused > 400, "both kinds were generated: \(taken) taken, \(refused) refused")
    }

    @Test func aPayloadTakenIsReadTheSameWayAtTheGatewayOnTheDeviceAndFromTheStore() throws {
        var generator = DocumentGenerator(seed: 0xBEEF)
        var compared = 0
        for _ in 0..<2_000 {
            let document = generator.document()
            guard APNs.checkPayload(document.bytes) == nil else {
                // What the gateway refuses, the device refuses too.
                #expect(throws: APNs.PayloadError.self, "\(document)") { try APNs.payload(document.bytes).get() }
                continue
            }
            // What the gateway takes, the device reads: as JSONDecoder reads the same JSON, exactly.
            let payload = try APNs.payload(document.bytes).get()
            compared += 1
            let userInfo = payload.content.userInfo
            let byFoundation = try JSONDecoder().decode(AnyJSON.self, from: Data(document.bytes))
            #expect(AnyJSON(.dictionary(userInfo)) == byFoundation, "\(document)")
            #expect(RequestRules.violation(in: payload.content) == nil, "its content can be kept: \(document)")

            // Written as the store writes it (or as JSONEncoder does), read back: the same value, in a
            // document the strict reader takes.
            for stored in [try StreamingJSONEncoder(sortsKeys: true).encodeBytes(userInfo), Array(try JSONEncoder().encode(userInfo))] {
                #expect(StrictJSONReader(maximumDepth: JSONLimits.maximumDocumentDepth).check(stored) == nil)
                let readBack = try JSONDecoder().decode([String: PropertyListValue].self, from: Data(stored))
                #expect(readBack == userInfo, "\(document) → \(String(decoding: stored, as: UTF8.self))")
            }
        }
        #expect(compared > 400, "\(compared) payloads compared")
    }

    /// A request's `userInfo` is read by the request's one decoder (``NotificationJSONReader``): where the
    /// system's rules take the JSON, as `JSONDecoder` reads it; where they refuse it, refused.
    @Test func theRequestsDecoderReadsAUserInfoAsJSONDecoderDoesWhereTheRulesTakeIt() {
        var generator = DocumentGenerator(seed: 0xC0DE)
        var read = 0, refused = 0
        for _ in 0..<2_000 {
            let document = generator.document()
            let bytes = Array(#"{"identifier":"r","content":{"title":"t","userInfo":"#.utf8) + document.bytes + Array("}}".utf8)
            let reference = try? JSONDecoder().decode(NotificationRequest.self, from: Data(bytes))
            let malformed = StrictJSONReader(maximumDepth: JSONLimits.maximumMessageDepth).check(bytes) != nil
            do {
                let request = try NotificationJSONReader.request(from: bytes)
                read += 1
                #expect(!malformed, "\(document)")
                #expect(request == reference || hasNumberJSONDecoderMisreads(document.bytes), "\(document)")
            } catch {
                refused += 1
                #expect(malformed || reference == nil || hasNumberJSONDecoderMisreads(document.bytes), "refused (\(error)), JSONDecoder reads it: \(document)")
            }
        }
        #expect(read > 200 && refused > 200, "\(read) read, \(refused) refused")
    }

    /// A value nested exactly to each limit and one past it, through every reader and writer.
    @Test(arguments: [JSONLimits.maximumValueDepth - 1, JSONLimits.maximumValueDepth, JSONLimits.maximumValueDepth + 1, 510])
    func aPayloadIsTakenUpToTheValueDepthAndRefusedPastIt(depth: Int) throws {
        // `{"aps":{"alert":"deep"},"d":[[…]]}`: the outer object is one level, the arrays the rest.
        let arrays = depth - 1
        let payload = Array((#"{"aps":{"alert":"deep"},"d":"# + String(repeating: "[", count: arrays) + "1" + String(repeating: "]", count: arrays) + "}").utf8)
        let taken = depth <= JSONLimits.maximumValueDepth
        #expect((APNs.checkPayload(payload) == nil) == taken)
        #expect(APNs.checkPayload(payload) == nil || APNs.checkPayload(payload)?.reason == .badRequestPayload)
        #expect(((try? APNs.payload(payload).get()) != nil) == taken)

        // An app's request with the same userInfo: refused by the rules past the limit.
        var nested = PropertyListValue.integer(1)
        for _ in 0..<arrays { nested = .array([nested]) }
        var content = NotificationContent()
        content.title = "deep"
        content.userInfo = ["d": nested]
        #expect((RequestRules.violation(in: content) == nil) == taken)
        #expect(RequestRules.violation(in: content).map(\.rule) ?? "userInfoTooDeep" == "userInfoTooDeep")
        if taken {
            // Kept, it is read back from the store's form inside its envelopes.
            let request = NotificationRequest(identifier: "deep", content: content, trigger: nil)
            let stored = try StreamingJSONEncoder(sortsKeys: true).encode(["notification": ["request": request]])
            #expect(try JSONDecoder().decode([String: [String: NotificationRequest]].self, from: stored)["notification"]?["request"] == request)
        }
    }

    @Test(arguments: [JSONLimits.maximumDocumentDepth - 1, JSONLimits.maximumDocumentDepth, JSONLimits.maximumDocumentDepth + 1])
    func theEncoderWritesNoDocumentAReaderRefuses(depth: Int) throws {
        var value = PropertyListValue.string("x")
        for _ in 0..<depth { value = .array([value]) }
        if depth <= JSONLimits.maximumDocumentDepth {
            let bytes = try StreamingJSONEncoder().encodeBytes(value)
            #expect(try JSONDecoder().decode(PropertyListValue.self, from: Data(bytes)) == value)
            #expect((try? JSONSerialization.jsonObject(with: Data(bytes))) != nil)
        } else {
            #expect(throws: EncodingError.self) { try StreamingJSONEncoder().encodeBytes(value) }
            // Foundation's own readers refuse what it would have written.
            // Foundation's own encoder refuses it too.
            #expect(throws: EncodingError.self) { try JSONEncoder().encode(value) }
        }
    }

    @Test(arguments: [
        ("nul\u{0}A", false), ("tab\there", false), ("line\nbreak", false), ("del\u{7F}", false), ("c1\u{85}", false),
        ("plain", true), ("üñï €", true), ("emoji 🎉", true), ("", true),
    ])
    func identifiersHaveNoControlCharacters(_ identifier: String, taken: Bool) {
        let content = NotificationContent()
        let request = NotificationRequest(identifier: identifier, content: content, trigger: .timeInterval(5, repeats: false))
        #expect((RequestRules.violation(in: request) == nil) == taken)
        var threaded = content
        threaded.threadIdentifier = identifier
        threaded.categoryIdentifier = identifier
        #expect((RequestRules.violation(in: threaded) == nil) == taken)
        let category = NotificationCategory(identifier: identifier, actions: [NotificationAction(identifier: identifier, title: "Title")])
        #expect((RequestRules.violation(in: [category]) == nil) == taken)
        if !taken {
            #expect(RequestRules.violation(in: request)?.rule == "identifierHasControlCharacter")
            #expect(RequestRules.failure(for: request)?.code == .notificationInvalidNoContent)
            // A push's collapse identifier becomes the notification's identifier: refused at the gateway.
            let headers = [(name: "apns-topic", value: "com.example.todo"), (name: "apns-collapse-id", value: identifier)]
            let checked = APNs.checkHeaders(deviceToken: String(repeating: "ab", count: 32), headers: headers, payloadBytes: 10, newID: { UUID().uuidString })
            #expect(throws: APNs.Rejection(.badCollapseId)) { try checked.get() }
        }
    }

    @Test func aDictionaryOfOneDollarKeyComesBackADictionary() throws {
        let values: [PropertyListValue] = [
            .dictionary(["$date": .integer(5)]), .dictionary(["$data": .string("AAAA")]), .dictionary(["$dictionary": .dictionary([:])]),
            .dictionary(["$other": .bool(true)]), .date(Date(timeIntervalSince1970: 5)), .data(Data([1, 2, 3])),
        ]
        for value in values {
            let written = try StreamingJSONEncoder().encodeBytes(["k": value])
            #expect(try JSONDecoder().decode([String: PropertyListValue].self, from: Data(written))["k"] == value, "\(String(decoding: written, as: UTF8.self))")
        }
    }

    @Test func numbersAreReadAsJSONDecoderReadsThem() throws {
        let payload = try APNs.payload(Array(#"{"big":12345678901234567890,"max":9223372036854775807,"whole":1.0,"e":1e2,"long":3.4054608297621225e-74,"none":null}"#.utf8)).get()
        #expect(payload.content.userInfo["big"] == .double(12_345_678_901_234_567_890))
        #expect(payload.content.userInfo["max"] == .integer(Int.max))
        #expect(payload.content.userInfo["whole"] == .integer(1))
        #expect(payload.content.userInfo["e"] == .integer(100))
        #expect(payload.content.userInfo["long"] == .double(3.4054608297621225e-74))
        #expect(payload.content.userInfo["none"] == .null)
        #expect(PropertyListValue.userInfo(from: payload.content.userInfo)["none"] is NSNull)
    }

    @Test func aPossiblyUnsignedNumberFromFoundationIsNeverAWrappedInteger() throws {
        let object = try #require(JSONSerialization.jsonObject(with: Data(#"{"big":12345678901234567890}"#.utf8)) as? [String: Any])
        #expect(PropertyListValue.dictionary(from: object)?["big"] == .double(12_345_678_901_234_567_890))
    }
}

extension AnyJSON {
    /// A value read from a payload, as plain JSON (no dates or data come from JSON).
    init(_ value: PropertyListValue) {
        switch value {
        case .null: self = .null
        case .bool(let value): self = .bool(value)
        case .integer(let value): self = .integer(value)
        case .double(let value): self = .double(value)
        case .string(let value): self = .string(value)
        case .array(let values): self = .array(values.map(Self.init))
        case .dictionary(let values): self = .object(values.mapValues(Self.init))
        case .date, .data: self = .string("not from JSON")
        }
    }
}

/// Generates JSON documents, valid and not, whose pieces are the ones readers disagree on.
private struct DocumentGenerator {
    struct Document: CustomStringConvertible {
        var bytes: [UInt8]
        /// It holds a construct Foundation reads that the checker refuses on purpose.
        var isLaxOnPurpose = false
        var description: String {
            let text = String(decoding: bytes.prefix(300), as: UTF8.self).debugDescription
            return bytes.count > 300 ? text + "… (\(bytes.count) bytes)" : text
        }
    }

    var random: SeededGenerator
    private var current = Document(bytes: [])

    init(seed: UInt64) {
        random = SeededGenerator(seed: seed)
    }

    private mutating func chance(_ percent: UInt64) -> Bool { random.next() % 100 < percent }
    private mutating func pick<T>(_ items: [T]) -> T { items[Int(random.next() % UInt64(items.count))] }

    /// An object, as a payload is, with now and then something around it.
    mutating func document() -> Document {
        current = Document(bytes: [])
        if chance(2) { append([0xEF, 0xBB, 0xBF]); current.isLaxOnPurpose = true }
        if chance(10) { space() }
        if chance(8) {
            deepChain()
        } else {
            object(depth: 1, budget: Int(random.next() % 4) + 1)
        }
        if chance(10) { space() }
        if chance(2) { append(Array(pick(["x", "}", ",", "\u{0}", "[]"]).utf8)) }
        return current
    }

    private mutating func append(_ bytes: [UInt8]) { current.bytes += bytes }
    private mutating func append(_ text: String) { current.bytes += Array(text.utf8) }
    private mutating func space() { append(pick([" ", "\n", "\t", "\r\n  ", "\u{0B}"])) }

    /// `{"d":[[…]]}` nested to a depth at or near the value limit, with an object at its heart or not.
    /// (The document limit has tests of its own: Foundation's decoders take a second for each document
    /// near it, as each failed attempt of a value's decoding copies its coding path.)
    private mutating func deepChain() {
        let depth = JSONLimits.maximumValueDepth + Int(random.next() % 5) - 2
        append(#"{"d":"#)
        let opening = (1..<depth).map { _ in chance(70) ? "[" : #"{"k":"# }
        for open in opening { append(open) }
        value(depth: depth, budget: 0)
        for open in opening.reversed() { append(open == "[" ? "]" : "}") }
        append("}")
    }

    private mutating func value(depth: Int, budget: Int) {
        if chance(5) { space() }
        switch random.next() % (budget > 0 ? 8 : 6) {
        case 0, 1: string()
        case 2, 3: number()
        case 4: literal()
        case 5: append(pick(["[]", "{}"]))
        case 6: array(depth: depth + 1, budget: budget - 1)
        default: object(depth: depth + 1, budget: budget - 1)
        }
        if chance(5) { space() }
    }

    private mutating func array(depth: Int, budget: Int) {
        append("[")
        let count = Int(random.next() % 4)
        for index in 0..<count {
            if index > 0 { append(chance(1) ? " " : ",") }
            value(depth: depth, budget: budget)
        }
        if count > 0, chance(2) { append(","); current.isLaxOnPurpose = true }
        append("]")
    }

    private mutating func object(depth: Int, budget: Int) {
        append("{")
        let count = Int(random.next() % 5)
        var keys: Set<String> = []
        for index in 0..<count {
            if index > 0 { append(chance(1) ? " " : ",") }
            // Keys from a small pool, so that some come twice, spelled alike or escaped: a key twice is
            // refused on purpose (Foundation's two readers keep different ones).
            let (spelled, key) = pick([
                (#""a""#, "a"), (#""b""#, "b"), (#""\u0061""#, "a"), (#""aps""#, "aps"), (#""x\u0000y""#, "x\u{0}y"), (#""$date""#, "$date"),
                (#""$data""#, "$data"), (#""$dictionary""#, "$dictionary"), (#""é""#, "é"), (#""\u00e9""#, "é"),
            ])
            if !keys.insert(key).inserted { current.isLaxOnPurpose = true }
            append(spelled)
            append(":")
            value(depth: depth, budget: budget)
        }
        if count > 0, chance(2) { append(","); current.isLaxOnPurpose = true }
        append("}")
    }

    private mutating func literal() {
        append(pick(["true", "false", "null", "null", "tru", "nul", "True"]))
    }

    private mutating func number() {
        if chance(30) {
            append(String(Int64(bitPattern: random.next()) >> Int64(random.next() % 64)))
            return
        }
        if chance(20) {
            append(String(Double(bitPattern: random.next() & 0x7FEF_FFFF_FFFF_FFFF)))
            return
        }
        let literal = pick([
            "0", "-0", "1", "-1", "1.5", "0.1", "1.0", "1e10", "1E-5", "1e308", "1.7976931348623157e308", "1.8e308", "1e400", "-1e400",
            "4.9e-324", "2e-324", "1e-400", "0e99999", "0.0e-400", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
            "-9223372036854775809", "18446744073709551615", "18446744073709551616", "12345678901234567890", "100000000000000000000000",
            "1" + String(repeating: "0", count: 308), "1" + String(repeating: "0", count: 309), "01", "1.", ".5", "+1", "-", "1e", "1e+",
            "NaN", "Infinity", "0x10", "1_000",
        ])
        // A number that rounds to zero is refused on purpose: JSONDecoder reads it as an `Int` (0)
        // but not as a `Double`, JSONSerialization as 0.0.
        if ["2e-324", "1e-400"].contains(literal) { current.isLaxOnPurpose = true }
        append(literal)
    }

    private mutating func string() {
        append("\"")
        for _ in 0..<Int(random.next() % 5) {
            if chance(12) {
                // What Foundation refuses: a lone surrogate, a control character, bytes that are not UTF-8, a bad escape.
                let bad: [[UInt8]] = [
                    Array(#"\uD800"#.utf8), Array(#"\uDC00"#.utf8), Array(#"\uD800\u0041"#.utf8), Array(#"\uDBFF"#.utf8) + [0x78],
                    [0x01], [0x1F], [0x0A], [0x00], [0xFF], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82],
                    Array(#"\x"#.utf8), Array(#"\U0041"#.utf8), Array(#"\u12"#.utf8), Array(#"\u12G4"#.utf8),
                ]
                append(pick(bad))
            } else {
                append(pick([
                    "a", "text", " ", "é", "😀", "\u{FFFF}", "\u{10FFFF}", "\u{7F}", "\u{2028}", #"\""#, #"\\"#, #"\/"#, #"\b"#, #"\f"#,
                    #"\n"#, #"\r"#, #"\t"#, #"\u0000"#, #"\u001f"#, #"\u00e9"#, #"\u00E9"#, #"\uD83D\uDE00"#, #"\udbff\udfff"#, #"\u2028"#,
                ]))
            }
        }
        append("\"")
    }
}
