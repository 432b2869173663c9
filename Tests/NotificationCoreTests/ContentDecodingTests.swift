import Foundation
import NotificationCore
import Testing

/// A content's JSON as clients send it and the store keeps it: every key optional, `null` as absent.
@Suite struct ContentDecodingTests {
    func decode(_ json: String) throws -> NotificationContent {
        try JSONDecoder().decode(NotificationContent.self, from: Data(json.utf8))
    }

    @Test func everyKeyIsRead() throws {
        let content = try decode("""
            {"title":"T","subtitle":"S","body":"B","badge":3,"sound":{"type":"named","name":"ding.caf"},
             "launchImageName":"L","userInfo":{"k":1},"categoryIdentifier":"C","threadIdentifier":"TH",
             "summaryArgument":"A","summaryArgumentCount":4,"targetContentIdentifier":"TC","interruptionLevel":2,
             "relevanceScore":0.5,"filterCriteria":"F","attachments":[]}
            """)
        var expected = NotificationContent()
        expected.title = "T"
        expected.subtitle = "S"
        expected.body = "B"
        expected.badge = 3
        expected.sound = try JSONDecoder().decode(NotificationSound.self, from: Data(#"{"type":"named","name":"ding.caf"}"#.utf8))
        expected.launchImageName = "L"
        expected.userInfo = ["k": .integer(1)]
        expected.categoryIdentifier = "C"
        expected.threadIdentifier = "TH"
        expected.summaryArgument = "A"
        expected.summaryArgumentCount = 4
        expected.targetContentIdentifier = "TC"
        expected.interruptionLevel = .timeSensitive
        expected.relevanceScore = 0.5
        expected.filterCriteria = "F"
        #expect(content == expected)
        // And back: what is written reads the same.
        #expect(try JSONDecoder().decode(NotificationContent.self, from: JSONEncoder().encode(content)) == content)
    }

    @Test func missingNullAndUnknownKeysLeaveTheDefaults() throws {
        #expect(try decode("{}") == NotificationContent())
        #expect(try decode(#"{"title":null,"badge":null,"summaryArgumentCount":null,"interruptionLevel":null,"somethingElse":[1,2]}"#)
            == NotificationContent())
        var titled = NotificationContent()
        titled.title = "Only this"
        #expect(try decode(#"{"title":"Only this","unknown":{"a":1}}"#) == titled)
    }

    @Test func aKeyOfTheWrongTypeIsRefused() {
        #expect(throws: DecodingError.self) { try decode(#"{"title":1}"#) }
        #expect(throws: DecodingError.self) { try decode(#"{"summaryArgumentCount":"four"}"#) }
    }
}
