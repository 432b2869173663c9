import Foundation
import NotificationCore
import Testing

/// The streaming encoder writes what `JSONEncoder` writes: byte for byte with sorted keys (the
/// store's form), and the same JSON in any order of keys without them (the wire's form).
@Suite struct StreamingJSONEncoderTests {
    private static func foundation(_ value: some Encodable, sorted: Bool = true) throws -> String {
        let encoder = JSONEncoder()
        if sorted { encoder.outputFormatting = .sortedKeys }
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    private static func streaming(_ value: some Encodable, sorted: Bool = true) throws -> String {
        String(decoding: try StreamingJSONEncoder(sortsKeys: sorted).encode(value), as: UTF8.self)
    }

    /// Parsed back into Foundation's objects, to compare JSON whatever the order of its keys.
    private static func parsed(_ json: String) throws -> NSObject {
        try JSONSerialization.jsonObject(with: Data(json.utf8), options: [.fragmentsAllowed]) as! NSObject
    }

    private static func expectSameJSON(_ value: some Encodable, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(try streaming(value) == foundation(value), sourceLocation: sourceLocation)
        #expect(try parsed(streaming(value, sorted: false)) == parsed(foundation(value, sorted: false)), sourceLocation: sourceLocation)
    }

    @Test(arguments: [
        "", "plain", "quote \" backslash \\ slash / done", "tab\tnewline\nreturn\rback\u{8}feed\u{C}", "\u{0}\u{1}\u{1F}\u{7F}",
        "é, 日本語, emoji 👩‍👩‍👧", "https://example.com/a?b=c&d=e",
    ])
    func stringsAreEscapedAsJSONEncoderEscapesThem(_ text: String) throws {
        try Self.expectSameJSON(text)
        try Self.expectSameJSON(["key \(text)": text])
    }

    @Test(arguments: [0.0, -0.0, 1.0, -1.5, 0.1, 1e-7, 123_456_789.125, 1e21, 1e300, 2.5e-300, Double.leastNonzeroMagnitude, Double.greatestFiniteMagnitude])
    func doublesAreWrittenAsJSONEncoderWritesThem(_ number: Double) throws {
        try Self.expectSameJSON(number)
        try Self.expectSameJSON([number, number / 3])
        if Float(number).isFinite { try Self.expectSameJSON(Float(number)) }
    }

    @Test func integersOfEveryWidth() throws {
        try Self.expectSameJSON([Int.min, -1, 0, 7, Int.max])
        try Self.expectSameJSON([UInt64.max, 0])
        try Self.expectSameJSON(Int8.min)
        try Self.expectSameJSON(UInt32.max)
    }

    @Test func datesDataURLsAndDecimalsAsJSONEncoderWritesThem() throws {
        try Self.expectSameJSON(Date(timeIntervalSinceReferenceDate: 785_000_000.25))
        try Self.expectSameJSON(Data([0, 1, 2, 250, 255]))
        try Self.expectSameJSON(URL(fileURLWithPath: "/var/lib/unotify/attachments/a b.png"))
        try Self.expectSameJSON(URL(string: "https://example.com/x?y=1")!)
        try Self.expectSameJSON(Decimal(string: "12.345")!)
    }

    @Test func collectionsOptionalsAndDictionariesOfEveryKey() throws {
        try Self.expectSameJSON([String]())
        try Self.expectSameJSON([String: Int]())
        try Self.expectSameJSON(["b": [1, 2], "a": [], "c": [3]])
        try Self.expectSameJSON([3: "three", 1: "one", 2: "two"])
        // Keys that are neither strings nor `Int`s: an array of keys and values, as Swift encodes them.
        try Self.expectSameJSON([UInt64(9): "nine", 4: "four"])
        try Self.expectSameJSON([Int?.none, 1, nil])
        try Self.expectSameJSON(["zeta": ["y": true, "x": false], "alpha": ["b": nil, "a": true] as [String: Bool?]])
    }

    @Test func theModelsOnAPushsWayAsJSONEncoderWritesThem() throws {
        var content = NotificationContent()
        (content.title, content.subtitle, content.body, content.launchImageName) = ("Lunch", "Today", "At noon? \"Yes\" / no", "Launch")
        content.attachments = [NotificationAttachment(identifier: "menu", url: URL(fileURLWithPath: "/store/menu.png"), type: "public.png",
                                                      thumbnailClippingRect: ThumbnailClippingRect(x: 0.1, y: 0.2, width: 0.5, height: 0.5),
                                                      thumbnailTime: 1.5)]
        (content.badge, content.sound) = (3, NotificationSound(kind: .named("chime.caf"), isCritical: true, volume: 0.25))
        content.userInfo = [
            "aps": .dictionary(["alert": .dictionary(["title": .string("Lunch")]), "badge": .integer(3), "mutable-content": .integer(1)]),
            "score": .double(0.75), "when": .date(Date(timeIntervalSince1970: 1_800_000_000)), "blob": .data(Data([1, 2, 3])),
            "list": .array([.bool(true), .string("x"), .integer(-4)]),
        ]
        (content.categoryIdentifier, content.threadIdentifier, content.summaryArgument, content.summaryArgumentCount) = ("message", "lunch", "Ana", 2)
        (content.targetContentIdentifier, content.interruptionLevel, content.relevanceScore, content.filterCriteria) = ("chat", .timeSensitive, 0.5, "work")
        let request = NotificationRequest(identifier: "lunch-1", content: content, trigger: .timeInterval(90, repeats: false))
        let delivered = DeliveredNotification(request: request, date: Date(timeIntervalSinceReferenceDate: 785_000_000.5))
        try Self.expectSameJSON(content)
        try Self.expectSameJSON(request)
        try Self.expectSameJSON(NotificationRequest(identifier: "push", content: content, trigger: .push))
        try Self.expectSameJSON(delivered)
        try Self.expectSameJSON(LocalAPI.AppEvent.call(.willPresent(ticket: 12, delivered)))
        try Self.expectSameJSON(LocalAPI.AppEvent.badge(count: 4))

        // The store's form: without default fields, read from the encoder's user info.
        let storedForm = StreamingJSONEncoder(sortsKeys: true, userInfo: [.omitsDefaultContent: true])
        let foundation = JSONEncoder()
        foundation.outputFormatting = .sortedKeys
        foundation.userInfo[.omitsDefaultContent] = true
        #expect(try storedForm.encode(delivered) == foundation.encode(delivered))
        #expect(try storedForm.encode(NotificationContent()) == foundation.encode(NotificationContent()))

        // A long list of them, each object's keys put in order where it ends, behind everything
        // written before it: the person's list of what is shown.
        let shown = (0..<300).map { index in
            var notification = delivered
            notification.request.identifier = "lunch-\(index)"
            return ["notification": notification]
        }
        try Self.expectSameJSON(["shown": shown])
    }

    @Test func aNonFiniteNumberIsRefusedAsJSONEncoderRefusesIt() throws {
        #expect(throws: EncodingError.self) { try StreamingJSONEncoder().encode(["a": Double.nan]) }
        #expect(throws: EncodingError.self) { try StreamingJSONEncoder().encode([Float.infinity]) }
    }

    @Test func aValueThatEncodesNothingIsAnEmptyObjectInsideAnotherAndRefusedAlone() throws {
        #expect(throws: EncodingError.self) { try JSONEncoder().encode(Nothing()) }
        #expect(throws: EncodingError.self) { try StreamingJSONEncoder().encode(Nothing()) }
        try Self.expectSameJSON(["a": Nothing()])
        try Self.expectSameJSON([Nothing(), Nothing()])
    }

    @Test func containersUsedOutOfOrderAreEncodedByJSONEncoder() throws {
        try Self.expectSameJSON(LateNested())
        try Self.expectSameJSON(["wrapped": LateNested()])
        try Self.expectSameJSON(TwiceKeyed())
        try Self.expectSameJSON(WithSuper())
        try Self.expectSameJSON(SameKeyTwice())
    }

    @Test func nestedContainersAndCodingPaths() throws {
        try Self.expectSameJSON(Nested())
        let path = try #require(String(data: try StreamingJSONEncoder().encode(["outer": [PathReporter()]]), encoding: .utf8))
        #expect(path == #"{"outer":[{"path":"outer\/Index 0"}]}"#)
    }
}

private struct Nothing: Encodable {
    func encode(to encoder: any Encoder) throws {}
}

private enum Keys: String, CodingKey { case a, b, c, path }

/// Writes to a nested container after its parent wrote a later member.
private struct LateNested: Encodable {
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        var nested = container.nestedContainer(keyedBy: Keys.self, forKey: .b)
        try container.encode(1, forKey: .a)
        try nested.encode("late", forKey: .c)
    }
}

/// Asks its encoder for the same keyed container twice, as a class and its superclass do.
private struct TwiceKeyed: Encodable {
    func encode(to encoder: any Encoder) throws {
        var first = encoder.container(keyedBy: Keys.self)
        try first.encode(1, forKey: .b)
        var second = encoder.container(keyedBy: Keys.self)
        try second.encode(2, forKey: .a)
    }
}

private struct WithSuper: Encodable {
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(1, forKey: .a)
        var parent = container.superEncoder().container(keyedBy: Keys.self)
        try parent.encode(2, forKey: .b)
    }
}

private struct SameKeyTwice: Encodable {
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(1, forKey: .a)
        try container.encode(2, forKey: .b)
        try container.encode(3, forKey: .a)
    }
}

private struct Nested: Encodable {
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode("x", forKey: .c)
        var list = container.nestedUnkeyedContainer(forKey: .b)
        try list.encode(1)
        var inner = list.nestedContainer(keyedBy: Keys.self)
        try inner.encode(true, forKey: .b)
        try inner.encodeNil(forKey: .a)
        var deeper = list.nestedUnkeyedContainer()
        try deeper.encode("d")
        try list.encode(2)
        var object = container.nestedContainer(keyedBy: Keys.self, forKey: .a)
        try object.encode(0.5, forKey: .c)
    }
}

private struct PathReporter: Encodable {
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(encoder.codingPath.map(\.stringValue).joined(separator: "/"), forKey: .path)
    }
}
