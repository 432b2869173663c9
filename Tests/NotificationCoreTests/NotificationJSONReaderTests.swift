import Foundation
import NotificationCore
import Testing

/// The one decoder of the busiest messages (``NotificationJSONReader``) against `JSONDecoder` with the
/// model's `Decodable` conformances: every form a client writes, read as `JSONDecoder` reads it; every
/// fault refused as `JSONDecoder` refuses it, at the same place and with the same notification failure;
/// and where the two differ, only where the reader keeps to RFC 8259 (see ``expectAgreement``).
@Suite struct NotificationJSONReaderTests {
    func decoded(_ bytes: [UInt8]) -> NotificationRequest? {
        try? JSONDecoder().decode(NotificationRequest.self, from: Data(bytes))
    }

    func read(_ json: String) throws -> NotificationRequest {
        try NotificationJSONReader.request(from: Array(json.utf8))
    }

    /// Requests with every field set or not, at random (seeded): attachments, every kind of trigger,
    /// and a `userInfo` of every kind of value (dates, data, fractions, `null`, a dictionary of one
    /// `$`-key).
    func requests(count: Int) -> [NotificationRequest] {
        var generator = SplitMix(seed: 0x5EED)
        func chance() -> Bool { generator.next() % 2 == 0 }
        func text(_ label: String) -> String {
            ["", "\(label)", "Ünïcödé \(label) ✓ 🎉", "say \"\(label)\"\n\ttab\\slash/ \u{7F}", String(repeating: "x", count: Int(generator.next() % 300))][Int(generator.next() % 5)]
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
            if chance() {
                content.userInfo["when"] = .date(Date(timeIntervalSince1970: 1_764_262_383 + Double(generator.next() % 1000) / 8))
                content.userInfo["blob"] = .data(Data((0..<Int(generator.next() % 9)).map { UInt8($0 * 31 % 256) }))
                content.userInfo["ratio"] = .double([0.25, -1.5, 1e-9, 123_456.789][Int(generator.next() % 4)])
                content.userInfo["nothing"] = .null
                content.userInfo["dollar"] = .dictionary(["$date": .string("not a date")])
                content.userInfo["list"] = .array([.date(Date(timeIntervalSince1970: 5)), .dictionary(["$data": .integer(1)]), .null])
            }
            if chance() {
                let png = URL(fileURLWithPath: "/var/lib/unotify/attachments/\(index).png")
                content.attachments = [
                    NotificationAttachment(identifier: "image-\(index)", url: png, type: "public.png", thumbnailHidden: chance()),
                    NotificationAttachment(identifier: "clip", url: png, type: "public.png", thumbnailHidden: false,
                                           thumbnailClippingRect: ThumbnailClippingRect(x: 0.1, y: 0.2, width: 0.5, height: 0.25),
                                           thumbnailTime: [nil, 0, 2.5][Int(generator.next() % 3)]),
                ].prefix(Int(generator.next() % 3)).map { $0 }
            }
            if chance() { content.categoryIdentifier = text("category") }
            if chance() { content.threadIdentifier = text("thread") }
            if chance() { content.summaryArgument = text("summary") }
            if chance() { content.summaryArgumentCount = Int(generator.next() % 10) }
            if chance() { content.targetContentIdentifier = text("target") }
            if chance() { content.interruptionLevel = InterruptionLevel(rawValue: UInt(generator.next() % 4))! }
            if chance() { content.relevanceScore = [0.5, 1, 0.1, 1.0 / 3, 0.123456789012345678][Int(generator.next() % 5)] }
            if chance() { content.filterCriteria = text("filter") }
            var zoned = DateComponents(calendar: Calendar(identifier: .gregorian), timeZone: TimeZone(identifier: "Europe/Paris"), hour: 9)
            zoned.weekday = 2
            zoned.calendar?.firstWeekday = 2
            var leap = DateComponents(timeZone: TimeZone(identifier: "Asia/Tokyo"), month: 2, day: 29)
            leap.isLeapMonth = false
            let triggers: [NotificationTrigger?] = [
                nil, .push, .timeInterval(5, repeats: false), .timeInterval(3600, repeats: true), .timeInterval(0.25, repeats: false),
                .timeInterval(86_400 * 3.5, repeats: false), .calendar(DateComponents(hour: 8, minute: 30), repeats: true),
                .calendar(zoned, repeats: false), .calendar(leap, repeats: true),
                .location(CircularRegion(identifier: "home", center: Coordinate(latitude: 48.8566, longitude: 2.3522), radius: 150,
                                         notifyOnEntry: true, notifyOnExit: false), repeats: chance()),
            ]
            var request = NotificationRequest(identifier: text("request-\(index)"), content: content, trigger: triggers[Int(generator.next() % UInt64(triggers.count))])
            if index % 5 == 0 { request.pushUniqueID = "0f5a6c1e-3b7d-7a41-9c2e-\(index)" }
            return request
        }
    }

    /// The JSON of `request` in the forms clients write: every field (the framework, `JSONEncoder`),
    /// only what differs from the defaults, keys sorted, pretty-printed, and the system's own encoder.
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
        forms.append(try StreamingJSONEncoder().encodeBytes(request))
        forms.append(try StreamingJSONEncoder(sortsKeys: true, userInfo: [.omitsDefaultContent: true]).encodeBytes(request))
        return forms
    }

    @Test func theFormsClientsSendAreReadAsJSONDecoderReadsThem() throws {
        var kinds: Set<String> = []
        for request in requests(count: 300) {
            for json in try encodings(of: request) {
                let read = try NotificationJSONReader.request(from: json)
                let reference = try JSONDecoder().decode(NotificationRequest.self, from: Data(json))
                #expect(read == reference, "\(String(decoding: json, as: UTF8.self))")
                #expect(read.content.relevanceScore.bitPattern == reference.content.relevanceScore.bitPattern)
                #expect(read.content.userInfo == request.content.userInfo)
                switch read.trigger {
                case .calendar: kinds.insert("calendar")
                case .location: kinds.insert("location")
                default: break
                }
                if !read.content.attachments.isEmpty { kinds.insert("attachments") }
            }
        }
        #expect(kinds == ["calendar", "location", "attachments"])
    }

    /// `willPresent` events as the daemon writes them (`StreamingJSONEncoder`) and as `JSONEncoder` would.
    @Test func willPresentEventsAreReadAsJSONDecoderReadsThem() throws {
        var generator = SplitMix(seed: 0xE7E7)
        for request in requests(count: 300) {
            let date = Date(timeIntervalSinceReferenceDate: 785_000_000 + Double(generator.next() % 100_000_000) / 1000)
            let event = LocalAPI.AppEvent.call(.willPresent(ticket: generator.next() % 1_000_000, DeliveredNotification(request: request, date: date)))
            let sorted = JSONEncoder()
            sorted.outputFormatting = .sortedKeys
            for json in [try StreamingJSONEncoder().encodeBytes(event), try StreamingJSONEncoder(sortsKeys: true).encodeBytes(event), Array(try sorted.encode(event))] {
                let read = try #require(try NotificationJSONReader.willPresentEvent(from: json), "not read: \(String(decoding: json, as: UTF8.self))")
                #expect(read == (try JSONDecoder().decode(LocalAPI.AppEvent.self, from: Data(json))))
            }
        }
        // Every other event is `JSONDecoder`'s, however its members are ordered.
        for other: LocalAPI.AppEvent in [.badge(count: 3), .connected(contentExtensions: true), .replaced, .deviceToken(token: "ab", environment: .sandbox)] {
            #expect(try NotificationJSONReader.willPresentEvent(from: try StreamingJSONEncoder().encodeBytes(other)) == nil)
            #expect(try NotificationJSONReader.willPresentEvent(from: try StreamingJSONEncoder(sortsKeys: true).encodeBytes(other)) == nil)
        }
        // A member of another event that would be a fault in a `willPresent` does not make it one.
        #expect(try NotificationJSONReader.willPresentEvent(from: Array(#"{"ticket":"x","notification":5,"type":"badge","count":1}"#.utf8)) == nil)
        #expect(throws: DecodingError.self) { try NotificationJSONReader.willPresentEvent(from: Array(#"{"ticket":1,"notification":{}}"#.utf8)) }
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
            for json in [try DeviceLink.pushMessage(push), Array(try JSONEncoder().encode(message)), Array(try sorted.encode(message))] {
                let read = try #require(try NotificationJSONReader.linkPush(from: json), "not read: \(String(decoding: json, as: UTF8.self))")
                #expect(DeviceLink.GatewayMessage.push(read) == (try JSONDecoder().decode(DeviceLink.GatewayMessage.self, from: Data(json))))
                #expect(read == push)
            }
        }
        for other: DeviceLink.GatewayMessage in [.welcome(deviceID: "d", window: 4), .reported(through: 3), .error(requestID: nil, code: "c", message: "m")] {
            #expect(try NotificationJSONReader.linkPush(from: try StreamingJSONEncoder().encodeBytes(other)) == nil)
        }
        // `\u` escapes, keys no one reads and exponents, as `JSONDecoder` reads them.
        let base = #""type":"push","sequence":1,"token":"t","bundleIdentifier":"b","environment":"sandbox","apnsID":"a","pushType":"alert","priority":10,"receivedAt":1"#
        for tail in [#","expiresAt":0,"payload":"{}"}"#, #","expiresAt":0,"payload":"\u00e9\ud83d\ude00"}"#, #","expiresAt":0,"payload":"{}","extra":[1,{"a":null}]}"#,
                     #","expiresAt":1e3,"payload":"{}"}"#, #","expiresAt":0,"payload":"{}","environment":"sandbox"}"#, #","expiresAt":0}"#,
                     #","expiresAt":0,"payload":"{}","pushType":"loud"}"#.replacingOccurrences(of: #""pushType":"alert","#, with: "")] {
            expectAgreement(Array(("{" + base + tail).utf8), read: { try NotificationJSONReader.linkPush(from: $0).map(DeviceLink.GatewayMessage.push) },
                            reference: { try JSONDecoder().decode(DeviceLink.GatewayMessage.self, from: Data($0)) }, isReadersKind: { if case .push = $0 { true } else { false } })
        }
    }

    /// A device's `report` messages as its daemon writes them (`StreamingJSONEncoder`) and as
    /// `JSONEncoder` would: the reports `JSONDecoder` reads, their times to the last bit.
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
                let read = try #require(try NotificationJSONReader.linkReport(from: json), "not read: \(String(decoding: json, as: UTF8.self))")
                #expect(read == (try JSONDecoder().decode(DeviceLink.DeviceMessage.self, from: Data(json))))
                #expect(read == message)
            }
        }
        for other: DeviceLink.DeviceMessage in [.ack(through: 3), .register(requestID: "r", bundleIdentifier: "b", environment: .sandbox)] {
            #expect(try NotificationJSONReader.linkReport(from: try StreamingJSONEncoder().encodeBytes(other)) == nil)
        }
        let report = #"{"uniqueID":"u","stage":"presented","at":1764262383.5"#
        for reports in [#"[\#(report)}]"#, #"[\#(report),"detail":"\u00e9"}]"#, #"[\#(report),"extra":1}]"#, #"[{"uniqueID":"u","stage":"presented","at":1e9}]"#,
                        #"[\#(report)},{"uniqueID":"u","stage":"unknown","at":1}]"#, #"[\#(report)},{"uniqueID":"u","at":1}]"#, "{}"] {
            expectAgreement(Array(#"{"type":"report","through":1,"reports":\#(reports)}"#.utf8), read: { try NotificationJSONReader.linkReport(from: $0) },
                            reference: { try JSONDecoder().decode(DeviceLink.DeviceMessage.self, from: Data($0)) },
                            isReadersKind: { if case .report = $0 { true } else { false } })
        }
    }

    /// An app's `willPresentAnswer` as the framework writes it (`StreamingJSONEncoder`) and as
    /// `JSONEncoder` would.
    @Test func willPresentAnswersAreReadAsJSONDecoderReadsThem() throws {
        let answers: [LocalAPI.AppReply] = [0, 1, 7, 31, 4_294_967_296, UInt64(Int.max), UInt64.max].flatMap { ticket in
            [nil, 0, 1, 27].map { LocalAPI.AppReply.willPresentAnswer(ticket: ticket, options: $0) }
        }
        for answer in answers {
            for json in [try StreamingJSONEncoder().encodeBytes(answer), Array(try JSONEncoder().encode(answer))] {
                let read = try #require(try NotificationJSONReader.willPresentAnswer(from: json), "not read: \(String(decoding: json, as: UTF8.self))")
                #expect(read == (try JSONDecoder().decode(LocalAPI.AppReply.self, from: Data(json))))
                #expect(read == answer)
            }
        }
        for other: LocalAPI.AppReply in [.state(.foreground), .responseCompleted(ticket: 3), .released] {
            #expect(try NotificationJSONReader.willPresentAnswer(from: try StreamingJSONEncoder().encodeBytes(other)) == nil)
        }
        for json in [#"{"type":"willPresentAnswer","ticket":-1}"#, #"{"type":"willPresentAnswer","ticket":1,"options":-2}"#,
                     #"{"type":"willPresentAnswer","ticket":18446744073709551616}"#, #"{"type":"willPresentAnswer","ticket":1.5}"#,
                     #"{"type":"willPresentAnswer","ticket":-0}"#, #"{"type":"willPresentAnswer","ticket":1e19}"#, #"{"type":"willPresentAnswer","ticket":2.0}"#,
                     #"{"type":"willPresentAnswer","ticket":1,"state":"foreground"}"#, #"{"ticket":1}"#, #"{"type":1,"ticket":1}"#,
                     #" { "options" : null , "ticket" : 5 , "type" : "willPresentAnswer" } "#] {
            expectAgreement(Array(json.utf8), read: { try NotificationJSONReader.willPresentAnswer(from: $0) },
                            reference: { try JSONDecoder().decode(LocalAPI.AppReply.self, from: Data($0)) },
                            isReadersKind: { if case .willPresentAnswer = $0 { true } else { false } })
        }
        var read = 0
        for answer in [LocalAPI.AppReply.willPresentAnswer(ticket: 1234, options: 19), .willPresentAnswer(ticket: 7, options: nil)] {
            read += expectAgreementWhenDamaged(try StreamingJSONEncoder().encodeBytes(answer), read: { try NotificationJSONReader.willPresentAnswer(from: $0) },
                                               reference: { try JSONDecoder().decode(LocalAPI.AppReply.self, from: Data($0)) },
                                               isReadersKind: { if case .willPresentAnswer = $0 { true } else { false } })
        }
        #expect(read > 10)
    }

    @Test func nullsWhiteSpaceAndAbsentKeysReadAsTheirDefaults() throws {
        let json = """
             { "identifier" : "a" ,"content":{"title":null,"badge":null,"sound":null,"attachments":null,"userInfo":null,
            "summaryArgumentCount":null,"interruptionLevel":null,"relevanceScore":null,"targetContentIdentifier":null},
            "trigger":null,"pushUniqueID":null}\t\r\n
            """
        #expect(try read(json) == NotificationRequest(identifier: "a", content: NotificationContent(), trigger: nil))
        #expect(try read(json) == decoded(Array(json.utf8)))
        #expect(try read(#"{"identifier":"b","content":{}}"#) == NotificationRequest(identifier: "b", content: NotificationContent(), trigger: nil))
        #expect(try read(#"{"identifier":"c","trigger":{"type":"timeInterval","interval":60,"repeats":null}}"#)
            == NotificationRequest(identifier: "c", content: NotificationContent(), trigger: .timeInterval(60, repeats: false)))
    }

    /// Forms that a fast path once left to `JSONDecoder`, and faults: each read as `JSONDecoder` reads
    /// it, or refused as it refuses it.
    @Test func everyFormIsReadOrRefusedAsJSONDecoderReadsOrRefusesIt() {
        let documents = [
            #"{"identifier":"a\nb\u00e9\ud83d\ude00"}"#,
            #"{"identifier":"a","content":{"title":"say \"hi\""}}"#,
            #"{"identifier":"a","content":{"badge":1e2}}"#,
            #"{"identifier":"a","content":{"badge":1.0}}"#,
            #"{"identifier":"a","content":{"badge":-0}}"#,
            #"{"identifier":"a","content":{"badge":1.5}}"#,
            #"{"identifier":"a","content":{"badge":9223372036854775807}}"#,
            #"{"identifier":"a","content":{"badge":9223372036854775808}}"#,
            #"{"identifier":"a","content":{"badge":1.00000000000000000001}}"#,
            #"{"identifier":"a","content":{"userInfo":{"nested":{"a":null}}}}"#,
            #"{"identifier":"a","content":{"userInfo":{"date":{"$date":1.5},"late":{"$date":1e9}}}}"#,
            #"{"identifier":"a","content":{"userInfo":{"data":{"$data":"AAAA"},"bad":{"$data":"A"},"notData":{"$data":1}}}}"#,
            #"{"identifier":"a","content":{"userInfo":{"d":{"$dictionary":{"$date":1}},"e":{"$dictionary":5},"f":{"$date":1,"x":2},"g":{"$other":1}}}}"#,
            #"{"identifier":"a","content":{"userInfo":{"list":[{"$date":1},[{"$data":""}],1.5,-0.0,1e2,12345678901234567890]}}}"#,
            #"{"identifier":"a","content":{"userInfo":{"fraction":0.5,"big":1.7976931348623157e308,"tiny":5e-324}}}"#,
            #"{"identifier":"a","content":{"userInfo":[]}}"#,
            #"{"identifier":"a","content":{"attachments":[{"identifier":"i","url":"file:///x.png","type":"public.png","thumbnailHidden":false}]}}"#,
            #"{"identifier":"a","content":{"attachments":[{"identifier":"i","url":"file:///x.png","type":"public.png","thumbnailHidden":true,"thumbnailClippingRect":{"X":0.5,"Y":0.5,"Width":2,"Height":2},"thumbnailTime":-3}]}}"#,
            #"{"identifier":"a","content":{"attachments":[{"identifier":"i","url":"file:///x.png","type":"public.png","thumbnailHidden":true,"thumbnailClippingRect":{"X":2,"Y":2,"Width":1,"Height":1}}]}}"#,
            #"{"identifier":"a","content":{"attachments":[{"identifier":"i","url":"","type":"public.png","thumbnailHidden":false}]}}"#,
            #"{"identifier":"a","content":{"attachments":[{"identifier":"i","url":"","type":5,"thumbnailHidden":false}]}}"#,
            #"{"identifier":"a","content":{"attachments":[{"url":"","identifier":5}]}}"#,
            #"{"identifier":"a","content":{"attachments":[{"identifier":"i","url":"file:///x.png","type":"public.png"}]}}"#,
            #"{"identifier":"a","content":{"attachments":{}}}"#,
            #"{"identifier":"a","trigger":{"type":"calendar","dateComponents":{"hour":8,"minute":30,"weekday":2},"repeats":true}}"#,
            #"{"identifier":"a","trigger":{"type":"calendar","dateComponents":{"hour":8,"timeZone":{"identifier":"Europe/Paris"},"calendar":{"identifier":"iso8601","firstWeekday":2,"minimumDaysInFirstWeek":4,"timeZone":{"identifier":"Asia/Tokyo"}}}}}"#,
            #"{"identifier":"a","trigger":{"type":"calendar","dateComponents":{"hour":8,"timeZone":{"identifier":"Mars/Olympus_Mons"}}}}"#,
            #"{"identifier":"a","trigger":{"type":"calendar","dateComponents":{"calendar":{"identifier":"lunar"}}}}"#,
            #"{"identifier":"a","trigger":{"type":"calendar","dateComponents":{"calendar":{"identifier":"gregorian","firstWeekday":8}}}}"#,
            #"{"identifier":"a","trigger":{"type":"calendar","dateComponents":{"hour":"8"}}}"#,
            #"{"identifier":"a","trigger":{"type":"calendar"}}"#,
            #"{"identifier":"a","trigger":{"type":"timeInterval","interval":5,"dateComponents":{"hour":"8"}}}"#,
            #"{"identifier":"a","trigger":{"type":"location","region":{"identifier":"r","center":{"latitude":1.5,"longitude":-2},"radius":100,"notifyOnEntry":true,"notifyOnExit":false}}}"#,
            #"{"identifier":"a","trigger":{"type":"location","region":{}}}"#,
            #"{"identifier":"a","trigger":{"type":"location","region":{"identifier":"r","center":{"latitude":1},"radius":1,"notifyOnEntry":true,"notifyOnExit":true}}}"#,
            #"{"identifier":"a","trigger":{"type":"push","interval":1}}"#,
            #"{"identifier":"a","trigger":{"type":"push","repeats":1}}"#,
            #"{"identifier":"a","somethingElse":[1,{"x":null}]}"#,
            #"{"identifier":"a","content":{"interruptionLevel":7}}"#,
            #"{"identifier":"a","content":{"interruptionLevel":-1}}"#,
            #"{"identifier":"a","content":{"interruptionLevel":2.0}}"#,
            #"{"identifier":"a","content":{"sound":{"type":"named"}}}"#,
            #"{"identifier":"a","content":{"sound":{"type":"loud"}}}"#,
            #"{"identifier":"a","content":{"sound":{"type":"default","volume":7,"critical":true}}}"#,
            #"{"identifier":"a","content":{"badge":99999999999999999999}}"#,
            #"{"identifier":"a","content":{"relevanceScore":1e999}}"#,
            #"{"identifier":"a","content":{"title":1}}"#,
            #"{"identifier":null}"#,
            #"{"content":{}}"#,
            #"{"identifier":"a","content":[]}"#,
            #"{"identifier":"a","trigger":{"type":"timeInterval"}}"#,
            #"{"identifier":"a","trigger":{"interval":5}}"#,
            #"{"identifier":"a"} x"#,
            #"{"identifier":"a""#,
            #"["identifier"]"#,
            #"{"identifier":"a","content":{"badge":01}}"#,
            #"{"identifier":"a","content":{"badge":-}}"#,
            #"{"identifier":"a","content":{"relevanceScore":.5}}"#,
            #"{"identifier":"a","trigger":{"type":"timeInterval","interval":5,"repeats":truex}}"#,
            #"{"identifier":"\ud800"}"#,
            "{\"identifier\":\"a\tb\"}",
            "",
        ]
        var read = 0
        for json in documents {
            if expectAgreement(Array(json.utf8), read: { try NotificationJSONReader.request(from: $0) },
                               reference: { try JSONDecoder().decode(NotificationRequest.self, from: Data($0)) }) { read += 1 }
        }
        #expect(read > 20 && read < documents.count - 20, "\(read) of \(documents.count) read")
        // Bytes that are not UTF-8.
        #expect(throws: DecodingError.self) { try NotificationJSONReader.request(from: Array(#"{"identifier":""#.utf8) + [0xFF, 0xFE] + Array(#""}"#.utf8)) }
    }

    /// A fault is reported where `JSONDecoder` reports it: the same kind of error, the same coding
    /// path; a value the model refuses carries the notification failure the daemon answers with.
    @Test func aFaultIsReportedWhereJSONDecoderReportsIt() throws {
        let faults = [
            #"{"content":{}}"#,
            #"{"identifier":null}"#,
            #"{"identifier":"a","content":{"title":1}}"#,
            #"{"identifier":"a","content":{"attachments":[{"identifier":"i","url":"file:///x.png","type":"public.png","thumbnailHidden":false},{"identifier":"j","url":"file:///y.png","type":"public.png"}]}}"#,
            #"{"identifier":"a","content":{"attachments":[{"identifier":"i","url":"","type":"public.png","thumbnailHidden":false}]}}"#,
            #"{"identifier":"a","trigger":{"type":"calendar","dateComponents":{"hour":"8"}}}"#,
            #"{"identifier":"a","trigger":{"type":"calendar","dateComponents":{"timeZone":{"identifier":"Mars/Olympus_Mons"}}}}"#,
            #"{"identifier":"a","content":{"sound":{"type":"loud"}}}"#,
            #"{"identifier":"a","content":{"interruptionLevel":9}}"#,
            #"{"identifier":"a","trigger":{"type":"location","region":{"identifier":"r","center":{"latitude":1},"radius":1,"notifyOnEntry":true,"notifyOnExit":true}}}"#,
            #"{"identifier":"a","content":{"userInfo":5}}"#,
        ]
        for json in faults {
            let mine = try #require(throws: DecodingError.self) { try read(json) }
            let theirs = try #require(throws: DecodingError.self) { try JSONDecoder().decode(NotificationRequest.self, from: Data(json.utf8)) }
            #expect(Fault(mine) == Fault(theirs), "\(json)")
        }
        // Where `JSONDecoder` says only that the data was not valid, the reader says where.
        let badge = try #require(throws: DecodingError.self) { try read(#"{"identifier":"a","content":{"badge":1.5}}"#) }
        #expect(Fault(badge).path == ["content", "badge"])
    }

    /// Where `JSONDecoder` is lax, the reader keeps to RFC 8259 and the system's rules: it refuses
    /// what `JSONDecoder` lets through, as malformed.
    @Test(arguments: [
        #"{"identifier":"a",}"#,
        #"{"identifier":"a","content":{"title":"x","title":"y"}}"#,
        #"{"identifier":"a","identifier":"b"}"#,
        "\u{FEFF}{\"identifier\":\"a\"}",
        #"{"identifier":"a","extra":01}"#,
        #"{"identifier":"a","extra":"\ud800"}"#,
        #"{"identifier":"a","extra":1e400}"#,
        #"{"identifier":"a","content":{"userInfo":{"list":[1,]}}}"#,
    ])
    func whereJSONDecoderIsLaxTheReaderKeepsToTheRFC(json: String) throws {
        _ = try JSONDecoder().decode(NotificationRequest.self, from: Data(json.utf8))
        let refusal = try #require(throws: DecodingError.self) { try read(json) }
        guard case .dataCorrupted(let context) = refusal else { Issue.record("\(refusal)"); return }
        #expect(context.underlyingError is StrictJSONReader.Failure)
    }

    /// A request nested past the deepest a message of the system goes is refused as too deep, without
    /// being read (as `JSONLimits` refused it before `JSONDecoder`); one within it is read.
    @Test(arguments: [JSONLimits.maximumValueDepth, JSONLimits.maximumMessageDepth - 2, JSONLimits.maximumMessageDepth - 1, 10_000])
    func aRequestNestedPastTheMessageDepthIsRefused(userInfoDepth: Int) throws {
        // The request's object and its content's are two levels; `userInfo` and its arrays the rest.
        let arrays = userInfoDepth - 1
        let json = #"{"identifier":"deep","content":{"userInfo":{"d":"# + String(repeating: "[", count: arrays) + "1" + String(repeating: "]", count: arrays) + "}}}"
        guard userInfoDepth + 2 > JSONLimits.maximumMessageDepth else {
            #expect(try read(json).identifier == "deep")
            return
        }
        let refusal = try #require(throws: DecodingError.self) { try read(json) }
        guard case .dataCorrupted(let context) = refusal else { Issue.record("\(refusal)"); return }
        #expect(context.underlyingError as? StrictJSONReader.Failure == .tooDeep(limit: JSONLimits.maximumMessageDepth))
    }

    /// A zero written with an exponent is the number zero, which `JSONDecoder` refuses as a `Double`.
    @Test func aZeroWithAnExponentIsZero() throws {
        let json = #"{"identifier":"a","content":{"relevanceScore":0e5,"sound":{"type":"default","volume":0E1}}}"#
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(NotificationRequest.self, from: Data(json.utf8)) }
        let request = try read(json)
        #expect(request.content.relevanceScore == 0)
        #expect(request.content.sound?.volume == 0)
    }

    /// Damaged at every byte, or cut short, each form is read or refused as the rules of
    /// ``expectAgreement`` say.
    @Test func damagedFormsAreReadOrRefusedAsJSONDecoderReadsOrRefusesThem() throws {
        var request = NotificationRequest(identifier: "r1", content: NotificationContent(), trigger: .timeInterval(90, repeats: true))
        request.content.title = "Title"
        request.content.body = "Body ✓"
        request.content.badge = 12
        request.content.sound = NotificationSound(kind: .named("a.caf"), isCritical: true, volume: 0.5)
        request.content.userInfo = ["n": .integer(-3), "s": .string("v"), "b": .bool(true), "d": .date(Date(timeIntervalSince1970: 8)),
                                    "aps": .dictionary(["alert": .string("x"), "list": .array([.integer(1), .dictionary([:])])])]
        request.content.relevanceScore = 0.75
        request.content.interruptionLevel = .timeSensitive
        request.content.attachments = [NotificationAttachment(identifier: "i", url: URL(fileURLWithPath: "/x.png"), type: "public.png")]
        var read = 0
        for json in try encodings(of: request).prefix(1) {
            read += expectAgreementWhenDamaged(json, read: { try NotificationJSONReader.request(from: $0) },
                                               reference: { try JSONDecoder().decode(NotificationRequest.self, from: Data($0)) })
        }
        var calendar = request
        calendar.trigger = .calendar(DateComponents(timeZone: TimeZone(identifier: "Europe/Paris"), hour: 8, minute: 5), repeats: false)
        calendar.content = NotificationContent()
        read += expectAgreementWhenDamaged(try StreamingJSONEncoder(sortsKeys: true).encodeBytes(calendar), read: { try NotificationJSONReader.request(from: $0) },
                                           reference: { try JSONDecoder().decode(NotificationRequest.self, from: Data($0)) })
        // The same for a `willPresent` event.
        let event = try StreamingJSONEncoder(sortsKeys: true).encodeBytes(LocalAPI.AppEvent.call(.willPresent(
            ticket: 42, DeliveredNotification(request: request, date: Date(timeIntervalSinceReferenceDate: 785_000_000.25)))))
        read += expectAgreementWhenDamaged(event, read: { try NotificationJSONReader.willPresentEvent(from: $0) },
                                           reference: { try JSONDecoder().decode(LocalAPI.AppEvent.self, from: Data($0)) },
                                           isReadersKind: { if case .call(.willPresent) = $0 { true } else { false } })
        // And for a push message, its payload escaped, and a report message.
        for push in linkPushes(count: 6) where push.payload.contains("\"") {
            read += expectAgreementWhenDamaged(try DeviceLink.pushMessage(push), read: { try NotificationJSONReader.linkPush(from: $0).map(DeviceLink.GatewayMessage.push) },
                                               reference: { try JSONDecoder().decode(DeviceLink.GatewayMessage.self, from: Data($0)) },
                                               isReadersKind: { if case .push = $0 { true } else { false } })
        }
        let report = DeviceLink.DeviceMessage.report(through: 9, reports: [
            DeliveryLog.Report(uniqueID: "u1", stage: .presented, secondsSince1970: 1_764_262_383.25, detail: "said \"hi\""),
            DeliveryLog.Report(uniqueID: "u2", stage: .accepted, secondsSince1970: 1_764_262_384),
        ])
        read += expectAgreementWhenDamaged(try StreamingJSONEncoder().encodeBytes(report), read: { try NotificationJSONReader.linkReport(from: $0) },
                                           reference: { try JSONDecoder().decode(DeviceLink.DeviceMessage.self, from: Data($0)) },
                                           isReadersKind: { if case .report = $0 { true } else { false } })
        // Many damaged forms are still valid JSON that both read (a digit for a digit, a letter in a string).
        #expect(read > 100)
    }
}

/// A decoding error as compared: its kind, its coding path, and the notification failure under it.
private struct Fault: Equatable {
    var kind: String
    var path: [String]
    var failure: NotificationErrorCode?

    init(_ error: DecodingError) {
        switch error {
        case .typeMismatch(_, let context): (kind, path) = ("typeMismatch", context.codingPath.map(\.stringValue))
        case .valueNotFound(_, let context): (kind, path) = ("valueNotFound", context.codingPath.map(\.stringValue))
        case .keyNotFound(let key, let context): (kind, path) = ("keyNotFound", (context.codingPath + [key]).map(\.stringValue))
        case .dataCorrupted(let context): (kind, path) = ("dataCorrupted", context.codingPath.map(\.stringValue))
        @unknown default: (kind, path) = ("unknown", [])
        }
        failure = notificationFailure(in: error)?.code
    }
}

/// The notification failure under a decoding error, however deeply the decoders wrapped it.
private func notificationFailure(in error: any Error) -> NotificationFailure? {
    if let failure = error as? NotificationFailure { return failure }
    guard case .dataCorrupted(let context)? = error as? DecodingError, let underlying = context.underlyingError else { return nil }
    return notificationFailure(in: underlying)
}

/// Whether `json` writes a number outside its strings that `JSONDecoder` reads otherwise than its
/// value: a zero with an exponent (`0e5`, which it refuses as a `Double`), or a whole number past
/// ±2⁵³ written with a fraction or an exponent (which it reads through a `Double` or a `Decimal`).
func hasNumberJSONDecoderMisreads(_ json: [UInt8]) -> Bool {
    var inString = false, escaped = false
    var token: [UInt8] = []
    func misread() -> Bool {
        defer { token.removeAll() }
        guard !token.isEmpty else { return false }
        let text = String(decoding: token, as: UTF8.self)
        let hasExponent = text.contains("e") || text.contains("E")
        let mantissa = text.drop { $0 == "-" }.prefix { $0 != "e" && $0 != "E" }
        if hasExponent, mantissa.allSatisfy({ $0 == "0" || $0 == "." }) { return true }
        if hasExponent || text.contains("."), let value = Double(text), value.magnitude > 9_007_199_254_740_992 { return true }
        return false
    }
    for byte in json {
        if inString {
            if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
            continue
        }
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"):
            token.append(byte)
        default:
            if misread() { return true }
            if byte == UInt8(ascii: "\"") { inString = true }
        }
    }
    return misread()
}

/// The one decoder (`read`) against `JSONDecoder` (`reference`) on one document:
/// - JSON the system's rules refuse (``StrictJSONReader``) is refused as malformed, wherever
///   `JSONDecoder` stands (it takes a trailing comma, a byte-order mark, a key twice);
/// - any other document is read as the same value by both, or refused by both, with the same
///   notification failure under the error; the one difference allowed is in a number `JSONDecoder`
///   misreads (``hasNumberJSONDecoderMisreads(_:)``);
/// - `nil` (a message of another type) is a document `JSONDecoder` does not read as one of the
///   reader's kind.
/// Returns whether the reader read a value.
@discardableResult
private func expectAgreement<T: Equatable>(
    _ json: [UInt8], read: ([UInt8]) throws -> T?, reference: ([UInt8]) throws -> T, isReadersKind: (T) -> Bool = { _ in true },
    sourceLocation: SourceLocation = #_sourceLocation
) -> Bool {
    let text = String(decoding: json.prefix(400), as: UTF8.self).debugDescription
    let mine = Result { try read(json) }
    let theirs = Result { try reference(json) }
    let malformed = StrictJSONReader(maximumDepth: JSONLimits.maximumMessageDepth).check(json)
    switch mine {
    case .success(nil):
        if case .success(let value) = theirs { #expect(!isReadersKind(value), "left to JSONDecoder, which reads it as ours: \(text)", sourceLocation: sourceLocation) }
        return false
    case .success(let value?):
        #expect(malformed == nil, "read, though malformed: \(text)", sourceLocation: sourceLocation)
        guard case .success(let expected) = theirs, value == expected else {
            #expect(hasNumberJSONDecoderMisreads(json), "read \(value), JSONDecoder \(theirs): \(text)", sourceLocation: sourceLocation)
            return true
        }
        return true
    case .failure(let error):
        let fault = error as? DecodingError
        #expect(fault != nil, "\(error)", sourceLocation: sourceLocation)
        if malformed != nil {
            if case .dataCorrupted(let context)? = fault {
                #expect(context.underlyingError is StrictJSONReader.Failure, "refused as malformed: \(text)", sourceLocation: sourceLocation)
            } else {
                Issue.record("malformed (\(malformed!)), refused as \(error): \(text)", sourceLocation: sourceLocation)
            }
            return false
        }
        switch theirs {
        case .success(let expected):
            #expect(hasNumberJSONDecoderMisreads(json), "refused (\(error)), JSONDecoder reads \(expected): \(text)", sourceLocation: sourceLocation)
        case .failure(let referenceError):
            #expect(notificationFailure(in: error)?.code == notificationFailure(in: referenceError)?.code,
                    "refused with \(error), JSONDecoder with \(referenceError): \(text)", sourceLocation: sourceLocation)
        }
        return false
    }
}

/// ``expectAgreement`` on `json` cut short at every byte, and damaged at every byte with each of a few
/// bytes that matter to JSON. Returns how many damaged forms the reader read.
private func expectAgreementWhenDamaged<T: Equatable>(
    _ json: [UInt8], read: ([UInt8]) throws -> T?, reference: ([UInt8]) throws -> T, isReadersKind: (T) -> Bool = { _ in true },
    sourceLocation: SourceLocation = #_sourceLocation
) -> Int {
    let replacements: [UInt8] = Array(#" "{}[],:0-1.e+tfn\xu/b"#.utf8) + [0x00, 0x0A, 0xC3, 0xFF]
    var taken = 0
    for end in 0..<json.count
    where expectAgreement(Array(json[..<end]), read: read, reference: reference, isReadersKind: isReadersKind, sourceLocation: sourceLocation) {
        taken += 1
    }
    for position in json.indices {
        for byte in replacements where byte != json[position] {
            var damaged = json
            damaged[position] = byte
            if expectAgreement(damaged, read: read, reference: reference, isReadersKind: isReadersKind, sourceLocation: sourceLocation) { taken += 1 }
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
