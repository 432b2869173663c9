import Foundation
import NotificationCore
import Testing

/// The reader the local API (for requests) and the framework (for `willPresent` events) try before
/// `JSONDecoder`: whatever it reads, it reads as `JSONDecoder` does; whatever it does not take is left
/// to `JSONDecoder` (`nil`).
@Suite struct NotificationJSONReaderTests {
    func decoded(_ bytes: [UInt8]) -> NotificationRequest? {
        try? JSONDecoder().decode(NotificationRequest.self, from: Data(bytes))
    }

    func read(_ json: String) -> NotificationRequest? {
        NotificationJSONReader.request(from: Array(json.utf8))
    }

    /// Requests with every field the reader takes, set or not, at random (seeded).
    func requests(count: Int) -> [NotificationRequest] {
        var generator = SplitMix(seed: 0x5EED)
        func chance() -> Bool { generator.next() % 2 == 0 }
        func text(_ label: String) -> String {
            ["", "\(label)", "Ünïcödé \(label) ✓ 🎉", String(repeating: "x", count: Int(generator.next() % 300))][Int(generator.next() % 4)]
        }
        return (0..<count).map { index in
            var content = NotificationContent()
            if chance() { content.title = text("title") }
            if chance() { content.subtitle = text("subtitle") }
            if chance() { content.body = text("body") }
            if chance() { content.badge = Int(generator.next() % 200) - 100 }
            if chance() {
                let kinds: [NotificationSound.Kind] = [.default, .defaultRingtone, .named("ding.caf"), .ringtone("ring.caf")]
                content.sound = NotificationSound(kind: kinds[Int(generator.next() % 4)], isCritical: chance(),
                                                  volume: Float(generator.next() % 11) / 10)
            }
            if chance() { content.launchImageName = text("launch") }
            if chance() {
                content.userInfo = ["id": .integer(Int(generator.next() % 1_000_000)), "kind": .string(text("kind")),
                                    "urgent": .bool(chance()), "negative": .integer(-Int(generator.next() % 1000))]
            }
            if chance() {
                // A push's payload: `aps` and the provider's own keys, nested.
                content.userInfo["aps"] = .dictionary(["alert": .dictionary(["title": .string(text("title")), "body": .string(text("body"))]),
                                                       "badge": .integer(Int(generator.next() % 10)), "mutable-content": .integer(1)])
                content.userInfo["items"] = .array([.integer(1), .string("two"), .array([]), .dictionary([:]), .bool(false)])
            }
            if chance() { content.categoryIdentifier = text("category") }
            if chance() { content.threadIdentifier = text("thread") }
            if chance() { content.summaryArgument = text("summary") }
            if chance() { content.summaryArgumentCount = Int(generator.next() % 10) }
            if chance() { content.targetContentIdentifier = text("target") }
            if chance() { content.interruptionLevel = InterruptionLevel(rawValue: UInt(generator.next() % 4))! }
            if chance() { content.relevanceScore = [0.5, 1, 0.1, 1.0 / 3, 0.123456789012345678][Int(generator.next() % 5)] }
            if chance() { content.filterCriteria = text("filter") }
            let triggers: [NotificationTrigger?] = [
                nil, .push, .timeInterval(5, repeats: false), .timeInterval(3600, repeats: true), .timeInterval(0.25, repeats: false),
                .timeInterval(86_400 * 3.5, repeats: false),
            ]
            return NotificationRequest(identifier: "request-\(index)", content: content, trigger: triggers[Int(generator.next() % 6)])
        }
    }

    /// The JSON of `request` in the forms clients write: every field (the framework, `JSONEncoder`),
    /// only what differs from the defaults, keys sorted, pretty-printed.
    func encodings(of request: NotificationRequest) throws -> [[UInt8]] {
        var forms: [[UInt8]] = []
        for formatting: JSONEncoder.OutputFormatting in [[], [.sortedKeys], [.prettyPrinted, .withoutEscapingSlashes]] {
            for omitsDefaults in [false, true] {
                let encoder = JSONEncoder()
                encoder.outputFormatting = formatting
                encoder.userInfo[.omitsDefaultContent] = omitsDefaults
                forms.append(Array(try encoder.encode(request)))
            }
        }
        return forms
    }

    @Test func theFormsClientsSendAreReadAsJSONDecoderReadsThem() throws {
        for request in requests(count: 300) {
            for json in try encodings(of: request) {
                let read = try #require(NotificationJSONReader.request(from: json), "not taken: \(String(decoding: json, as: UTF8.self))")
                #expect(read == decoded(json))
                #expect(read == request)
                #expect(read.content.relevanceScore.bitPattern == request.content.relevanceScore.bitPattern)
            }
        }
    }

    /// `willPresent` events as the daemon writes them (`StreamingJSONEncoder`) and as `JSONEncoder` would.
    @Test func willPresentEventsAreReadAsJSONDecoderReadsThem() throws {
        var generator = SplitMix(seed: 0xE7E7)
        for (index, request) in requests(count: 300).enumerated() {
            var request = request
            if index % 3 == 0 { request.pushUniqueID = "0f5a6c1e-3b7d-7a41-9c2e-\(index)" }
            let date = Date(timeIntervalSinceReferenceDate: 785_000_000 + Double(generator.next() % 100_000_000) / 1000)
            let event = LocalAPI.AppEvent.call(.willPresent(ticket: generator.next() % 1_000_000, DeliveredNotification(request: request, date: date)))
            let sorted = JSONEncoder()
            sorted.outputFormatting = .sortedKeys
            for json in [try StreamingJSONEncoder().encodeBytes(event), try StreamingJSONEncoder(sortsKeys: true).encodeBytes(event), Array(try sorted.encode(event))] {
                let read = try #require(NotificationJSONReader.willPresentEvent(from: json), "not taken: \(String(decoding: json, as: UTF8.self))")
                #expect(read == (try JSONDecoder().decode(LocalAPI.AppEvent.self, from: Data(json))))
                #expect(read == event)
            }
        }
        // Every other event is left to `JSONDecoder`.
        for other: LocalAPI.AppEvent in [.badge(count: 3), .connected(contentExtensions: true), .replaced, .deviceToken(token: "ab", environment: .sandbox)] {
            #expect(NotificationJSONReader.willPresentEvent(from: try StreamingJSONEncoder().encodeBytes(other)) == nil)
        }
        let dated = #"{"type":"willPresent","ticket":1,"notification":{"date":1,"request":{"identifier":"a","content":{"userInfo":{"when":{"$date":5}}}}}}"#
        #expect(NotificationJSONReader.willPresentEvent(from: Array(dated.utf8)) == nil, "an object of one $-key is JSONDecoder's")
    }

    /// Link pushes with every field set or not, payloads with what JSON escapes (quotes, backslashes,
    /// line breaks, tabs) and what it does not (any other character, `/`), at random (seeded).
    func linkPushes(count: Int) -> [DeviceLink.Push] {
        var generator = SplitMix(seed: 0x7A55)
        let pieces = [#"{"aps":{"alert":"#, #""Hello""#, #"\""#, "\\n", "\\t", "\n", "\t", "\"", "\\", "/", "ü ✓ 🎉", "\u{7F}", " ", "\u{08}", "\u{0C}", "\r"]
        return (0..<count).map { index in
            let payload = (0..<(Int(generator.next() % 12))).map { _ in pieces[Int(generator.next() % UInt64(pieces.count))] }.joined()
            return DeviceLink.Push(
                sequence: Int64(generator.next() % 1_000_000_000), token: String(format: "%064x", index), bundleIdentifier: "com.example.app\(index % 7)",
                environment: index % 2 == 0 ? .sandbox : .production, apnsID: "01a21e5a-9a68-724b-b31b-\(index)",
                pushType: APNs.PushType.allCases[Int(generator.next() % UInt64(APNs.PushType.allCases.count))], priority: [1, 5, 10][index % 3],
                expiresAt: index % 4 == 0 ? 0 : 1_764_262_383 + Double(generator.next() % 1_000_000) / 1000,
                collapseID: index % 3 == 0 ? nil : "collapse-\(index)", payload: payload,
                receivedAt: 1_764_262_383 + Double(generator.next() % 1_000_000_000) / 1_000_000, uniqueID: index % 5 == 0 ? nil : "u-\(index)"
            )
        }
    }

    /// The gateway writes each `push` message straight to its bytes: the very bytes the encoder
    /// gives the message, for pushes with every field set or not and payloads that need escaping.
    @Test func aPushMessageWrittenStraightIsWhatTheEncoderWrites() throws {
        for push in linkPushes(count: 400) {
            let written = try DeviceLink.pushMessage(push)
            #expect(written == (try StreamingJSONEncoder().encodeBytes(DeviceLink.GatewayMessage.push(push))),
                    "\(String(decoding: written, as: UTF8.self))")
            #expect(try JSONDecoder().decode(DeviceLink.GatewayMessage.self, from: Data(written)) == .push(push))
        }
        var infinite = linkPushes(count: 1)[0]
        infinite.expiresAt = .infinity
        #expect(throws: EncodingError.self) { try DeviceLink.pushMessage(infinite) }
    }

    /// `push` messages as the gateway writes them (`StreamingJSONEncoder`) and as `JSONEncoder` would.
    @Test func linkPushesAreReadAsJSONDecoderReadsThem() throws {
        for push in linkPushes(count: 400) {
            let message = DeviceLink.GatewayMessage.push(push)
            let sorted = JSONEncoder()
            sorted.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            for json in [try StreamingJSONEncoder().encodeBytes(message), Array(try JSONEncoder().encode(message)), Array(try sorted.encode(message))] {
                let read = try #require(NotificationJSONReader.linkPush(from: json), "not taken: \(String(decoding: json, as: UTF8.self))")
                #expect(DeviceLink.GatewayMessage.push(read) == (try JSONDecoder().decode(DeviceLink.GatewayMessage.self, from: Data(json))))
                #expect(read == push)
            }
        }
        // Every other message is left to `JSONDecoder`, and so are `\u` escapes, unknown keys and exponents.
        for other: DeviceLink.GatewayMessage in [.welcome(deviceID: "d", window: 4), .reported(through: 3), .error(requestID: nil, code: "c", message: "m")] {
            #expect(NotificationJSONReader.linkPush(from: try StreamingJSONEncoder().encodeBytes(other)) == nil)
        }
        let base = #""type":"push","sequence":1,"token":"t","bundleIdentifier":"b","environment":"sandbox","apnsID":"a","pushType":"alert","priority":10,"receivedAt":1"#
        #expect(NotificationJSONReader.linkPush(from: Array(("{" + base + #","expiresAt":0,"payload":"{}"}"#).utf8)) != nil)
        #expect(NotificationJSONReader.linkPush(from: Array(("{" + base + #","expiresAt":0,"payload":"\u00e9"}"#).utf8)) == nil)
        #expect(NotificationJSONReader.linkPush(from: Array(("{" + base + #","expiresAt":0,"payload":"{}","extra":1}"#).utf8)) == nil)
        #expect(NotificationJSONReader.linkPush(from: Array(("{" + base + #","expiresAt":1e3,"payload":"{}"}"#).utf8)) == nil)
    }

    /// A device's `report` messages as its daemon writes them (`StreamingJSONEncoder`) and as
    /// `JSONEncoder` would: the reports `JSONDecoder` reads, their times to the last bit; every other
    /// message, and forms the reader does not take, are `JSONDecoder`'s.
    @Test func linkReportsAreReadAsJSONDecoderReadsThem() throws {
        var generator = SplitMix(seed: 0x4E90)
        let details: [String?] = [nil, "", "the app is not on the device", #"said "no" \ twice"#, "line\nbreak/ü ✓ 🎉", "\u{7F}\t"]
        for count in [0, 1, 2, 17, 200] {
            let reports = (0..<count).map { index in
                DeliveryLog.Report(
                    uniqueID: "01a21fc8-99d6-717f-bdb0-\(index)-\(generator.next() % 1000)",
                    stage: DeliveryLog.Stage.allCases[Int(generator.next() % UInt64(DeliveryLog.Stage.allCases.count))],
                    secondsSince1970: 1_764_262_383 + Double(generator.next() % 1_000_000_000) / 1_000_000 + (index % 3 == 0 ? 1e-7 : 0),
                    detail: details[Int(generator.next() % UInt64(details.count))]
                )
            }
            let message = DeviceLink.DeviceMessage.report(through: Int64(generator.next() % 1_000_000), reports: reports)
            for json in [try StreamingJSONEncoder().encodeBytes(message), Array(try JSONEncoder().encode(message))] {
                let read = try #require(NotificationJSONReader.linkReport(from: json), "not taken: \(String(decoding: json, as: UTF8.self))")
                #expect(read == (try JSONDecoder().decode(DeviceLink.DeviceMessage.self, from: Data(json))))
                #expect(read == message)
            }
        }
        for other: DeviceLink.DeviceMessage in [.ack(through: 3), .register(requestID: "r", bundleIdentifier: "b", environment: .sandbox)] {
            #expect(NotificationJSONReader.linkReport(from: try StreamingJSONEncoder().encodeBytes(other)) == nil)
        }
        let report = #"{"uniqueID":"u","stage":"presented","at":1764262383.5"#
        #expect(NotificationJSONReader.linkReport(from: Array(#"{"type":"report","through":1,"reports":[\#(report)}]}"#.utf8)) != nil)
        #expect(NotificationJSONReader.linkReport(from: Array(#"{"type":"report","through":1,"reports":[\#(report),"detail":"\u00e9"}]}"#.utf8)) == nil)
        #expect(NotificationJSONReader.linkReport(from: Array(#"{"type":"report","through":1,"reports":[\#(report),"extra":1}]}"#.utf8)) == nil)
        #expect(NotificationJSONReader.linkReport(from: Array(#"{"type":"report","through":1,"reports":[{"uniqueID":"u","stage":"presented","at":1e9}]}"#.utf8)) == nil)
        #expect(NotificationJSONReader.linkReport(from: Array(#"{"type":"report","through":1,"reports":[{"uniqueID":"u","stage":"unknown","at":1}]}"#.utf8)) == nil)
    }

    /// An app's `willPresentAnswer` as the framework writes it (`StreamingJSONEncoder`) and as
    /// `JSONEncoder` would; every other reply, and forms it does not take, are `JSONDecoder`'s.
    @Test func willPresentAnswersAreReadAsJSONDecoderReadsThem() throws {
        let answers: [LocalAPI.AppReply] = [0, 1, 7, 31, 4_294_967_296, UInt64(Int.max)].flatMap { ticket in
            [nil, 0, 1, 27].map { LocalAPI.AppReply.willPresentAnswer(ticket: ticket, options: $0) }
        }
        for answer in answers {
            for json in [try StreamingJSONEncoder().encodeBytes(answer), Array(try JSONEncoder().encode(answer))] {
                let read = try #require(NotificationJSONReader.willPresentAnswer(from: json), "not taken: \(String(decoding: json, as: UTF8.self))")
                #expect(read == (try JSONDecoder().decode(LocalAPI.AppReply.self, from: Data(json))))
                #expect(read == answer)
            }
        }
        for other: LocalAPI.AppReply in [.state(.foreground), .responseCompleted(ticket: 3), .released] {
            #expect(NotificationJSONReader.willPresentAnswer(from: try StreamingJSONEncoder().encodeBytes(other)) == nil)
        }
        for json in [#"{"type":"willPresentAnswer","ticket":-1}"#, #"{"type":"willPresentAnswer","ticket":1,"options":-2}"#,
                     #"{"type":"willPresentAnswer","ticket":18446744073709551615}"#, #"{"type":"willPresentAnswer","ticket":1.5}"#,
                     #"{"type":"willPresentAnswer","ticket":1,"state":"foreground"}"#, #"{"ticket":1}"#] {
            #expect(NotificationJSONReader.willPresentAnswer(from: Array(json.utf8)) == nil, "\(json)")
        }
        #expect(NotificationJSONReader.willPresentAnswer(from: Array(#" { "options" : null , "ticket" : 5 , "type" : "willPresentAnswer" } "#.utf8))
            == .willPresentAnswer(ticket: 5, options: nil))
        var taken = 0
        for answer in [LocalAPI.AppReply.willPresentAnswer(ticket: 1234, options: 19), .willPresentAnswer(ticket: 7, options: nil)] {
            taken += checkDamaged(try StreamingJSONEncoder().encodeBytes(answer), read: { NotificationJSONReader.willPresentAnswer(from: $0) },
                                  reference: { try? JSONDecoder().decode(LocalAPI.AppReply.self, from: Data($0)) })
        }
        #expect(taken > 10)
    }

    @Test func nullsWhiteSpaceAndAbsentKeysReadAsTheirDefaults() throws {
        let json = """
             { "identifier" : "a" ,"content":{"title":null,"badge":null,"sound":null,"attachments":null,"userInfo":null,
            "summaryArgumentCount":null,"interruptionLevel":null,"relevanceScore":null,"targetContentIdentifier":null},
            "trigger":null,"pushUniqueID":null}\t\r\n
            """
        #expect(read(json) == NotificationRequest(identifier: "a", content: NotificationContent(), trigger: nil))
        #expect(read(json) == decoded(Array(json.utf8)))
        #expect(read(#"{"identifier":"b","content":{}}"#) == NotificationRequest(identifier: "b", content: NotificationContent(), trigger: nil))
        #expect(read(#"{"identifier":"c","trigger":{"type":"timeInterval","interval":60,"repeats":null}}"#)
            == NotificationRequest(identifier: "c", content: NotificationContent(), trigger: .timeInterval(60, repeats: false)))
    }

    /// Each of these is left to `JSONDecoder`: some it reads (escapes, calendar triggers,
    /// attachments, dates and fractions in `userInfo`), some it refuses with the error the client is told.
    @Test func whatItDoesNotTakeIsLeftToJSONDecoder() {
        let left = [
            #"{"identifier":"a\nb"}"#,  // an escape
            #"{"identifier":"a","content":{"title":"say \"hi\""}}"#,
            #"{"identifier":"a","content":{"badge":1e2}}"#,  // an integer with an exponent
            #"{"identifier":"a","content":{"badge":1.0}}"#,
            #"{"identifier":"a","content":{"userInfo":{"nested":{"a":null}}}}"#,
            #"{"identifier":"a","content":{"userInfo":{"date":{"$date":1}}}}"#,
            #"{"identifier":"a","content":{"userInfo":{"data":{"$data":"AAAA"}}}}"#,
            #"{"identifier":"a","content":{"userInfo":{"fraction":0.5}}}"#,
            #"{"identifier":"a","content":{"userInfo":{"list":[1,]}}}"#,
            #"{"identifier":"a","content":{"userInfo":{"list":[1.5]}}}"#,
            #"{"identifier":"a","content":{"attachments":[{"identifier":"i","url":"file:///x.png","type":"public.png","thumbnailHidden":false}]}}"#,
            #"{"identifier":"a","trigger":{"type":"calendar","dateComponents":{"hour":8},"repeats":true}}"#,
            #"{"identifier":"a","trigger":{"type":"location","region":{}}}"#,
            #"{"identifier":"a","trigger":{"type":"push","interval":1}}"#,
            #"{"identifier":"a","somethingElse":1}"#,  // a key it does not know
            #"{"identifier":"a","content":{"title":"x","title":"y"}}"#,  // a key twice
            #"{"identifier":"a","content":{"interruptionLevel":7}}"#,
            #"{"identifier":"a","content":{"interruptionLevel":-1}}"#,
            #"{"identifier":"a","content":{"sound":{"type":"named"}}}"#,
            #"{"identifier":"a","content":{"sound":{"type":"loud"}}}"#,
            #"{"identifier":"a","content":{"badge":99999999999999999999}}"#,
            #"{"identifier":"a","content":{"relevanceScore":1e999}}"#,
            #"{"identifier":"a","content":{"sound":{"type":"default","volume":0e5}}}"#,  // valid JSON that JSONDecoder refuses
            #"{"identifier":"a","content":{"title":1}}"#,  // the wrong type
            #"{"identifier":null}"#,
            #"{"content":{}}"#,  // no identifier
            #"{"identifier":"a","trigger":{"type":"timeInterval"}}"#,
            #"{"identifier":"a","trigger":{"interval":5}}"#,
            #"{"identifier":"a"} x"#,  // trailing bytes
            #"{"identifier":"a",}"#,
            #"{"identifier":"a""#,
            #"["identifier"]"#,
            #"{"identifier":"a","content":{"badge":01}}"#,
            #"{"identifier":"a","content":{"badge":-}}"#,
            #"{"identifier":"a","content":{"relevanceScore":.5}}"#,
            #"{"identifier":"a","trigger":{"type":"timeInterval","interval":5,"repeats":truex}}"#,
            "{\"identifier\":\"a\tb\"}",  // a control character
            "",
        ]
        for json in left {
            #expect(read(json) == nil, "taken: \(json)")
        }
        // Bytes that are not UTF-8.
        #expect(NotificationJSONReader.request(from: Array(#"{"identifier":""#.utf8) + [0xFF, 0xFE] + Array(#""}"#.utf8)) == nil)
    }

    /// Damaged at every byte, or cut short: whatever the reader still takes, `JSONDecoder` reads the same.
    @Test func neverTakesWhatJSONDecoderReadsDifferentlyOrRefuses() throws {
        var request = NotificationRequest(identifier: "r1", content: NotificationContent(), trigger: .timeInterval(90, repeats: true))
        request.content.title = "Title"
        request.content.body = "Body ✓"
        request.content.badge = 12
        request.content.sound = NotificationSound(kind: .named("a.caf"), isCritical: true, volume: 0.5)
        request.content.userInfo = ["n": .integer(-3), "s": .string("v"), "b": .bool(true),
                                    "aps": .dictionary(["alert": .string("x"), "list": .array([.integer(1), .dictionary([:])])])]
        request.content.relevanceScore = 0.75
        request.content.interruptionLevel = .timeSensitive
        var taken = 0
        for json in try encodings(of: request) {
            taken += checkDamaged(json, read: { NotificationJSONReader.request(from: $0) }, reference: decoded)
        }
        // The same for a `willPresent` event.
        let event = try StreamingJSONEncoder(sortsKeys: true).encodeBytes(LocalAPI.AppEvent.call(.willPresent(
            ticket: 42, DeliveredNotification(request: request, date: Date(timeIntervalSinceReferenceDate: 785_000_000.25)))))
        taken += checkDamaged(event, read: { NotificationJSONReader.willPresentEvent(from: $0) },
                              reference: { try? JSONDecoder().decode(LocalAPI.AppEvent.self, from: Data($0)) })
        // And for a push message, its payload escaped.
        for push in linkPushes(count: 6) where push.payload.contains("\"") {
            taken += checkDamaged(try StreamingJSONEncoder().encodeBytes(DeviceLink.GatewayMessage.push(push)),
                                  read: { NotificationJSONReader.linkPush(from: $0).map(DeviceLink.GatewayMessage.push) },
                                  reference: { try? JSONDecoder().decode(DeviceLink.GatewayMessage.self, from: Data($0)) })
        }
        // Many damaged forms are still valid JSON that both read (a digit for a digit, a letter in a string).
        #expect(taken > 100)
    }
}

/// Reads `json` cut short at every byte, and damaged at every byte with each of a few bytes that
/// matter to JSON: whatever `read` still takes, `reference` (`JSONDecoder`) must read the same.
/// Returns how many damaged forms were taken.
private func checkDamaged<T: Equatable>(_ json: [UInt8], read: ([UInt8]) -> T?, reference: ([UInt8]) -> T?) -> Int {
    let replacements: [UInt8] = Array(#" "{}[],:0-1.e+tfn\xu/b"#.utf8) + [0x00, 0x0A, 0xC3, 0xFF]
    var taken = 0
    for end in 0..<json.count {
        let cut = Array(json[..<end])
        guard let value = read(cut) else { continue }
        taken += 1
        #expect(value == reference(cut), "cut at \(end)")
    }
    for position in json.indices {
        for byte in replacements where byte != json[position] {
            var damaged = json
            damaged[position] = byte
            guard let value = read(damaged) else { continue }
            taken += 1
            let expected = reference(damaged)
            #expect(expected != nil && value == expected, "\(String(decoding: damaged, as: UTF8.self))")
        }
    }
    return taken
}

/// A small seeded generator, so that the generated requests are the same at every run.
private struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
