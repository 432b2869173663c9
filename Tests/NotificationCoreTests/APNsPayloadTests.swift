import Foundation
import NotificationCore
import Testing

/// A push's payload as the device reads it, key by key of Apple's `aps` table.
@Suite struct APNsPayloadTests {
    func read(_ json: String, localize: @escaping APNs.Localizer = { _ in nil }) throws -> APNs.Payload {
        try APNs.payload(Array(json.utf8), localize: localize).get()
    }

    @Test func anAlertStringIsTheBody() throws {
        let payload = try read(#"{"aps":{"alert":"Hello"}}"#)
        #expect(payload.content.body == "Hello")
        #expect(payload.content.title.isEmpty)
        #expect(payload.interactsWithPerson)
        #expect(!payload.isContentAvailable)
    }

    @Test func anAlertDictionaryGivesTitleSubtitleAndBody() throws {
        let payload = try read(#"""
            {"aps":{"alert":{"title":"Game Request","subtitle":"Five Card Draw","body":"Bob wants to play poker","launch-image":"poker.png"},
            "category":"GAME_INVITATION","thread-id":"games","target-content-id":"table-7","filter-criteria":"work",
            "relevance-score":0.75,"interruption-level":"time-sensitive"},"gameID":"12345678"}
            """#)
        let content = payload.content
        #expect(content.title == "Game Request")
        #expect(content.subtitle == "Five Card Draw")
        #expect(content.body == "Bob wants to play poker")
        #expect(content.launchImageName == "poker.png")
        #expect(content.categoryIdentifier == "GAME_INVITATION")
        #expect(content.threadIdentifier == "games")
        #expect(content.targetContentIdentifier == "table-7")
        #expect(content.filterCriteria == "work")
        #expect(content.relevanceScore == 0.75)
        #expect(content.interruptionLevel == .timeSensitive)
        // userInfo is the whole payload, aps included, as on iOS.
        #expect(content.userInfo["gameID"] == .string("12345678"))
        #expect(content.userInfo["aps"] != nil)
    }

    @Test func badgeAndSoundsAreReadAsIOSReadsThem() throws {
        let plain = try read(#"{"aps":{"badge":9,"sound":"bingbong.aiff"},"messageID":"ABCDEFGHIJ"}"#)
        #expect(plain.content.badge == 9)
        #expect(plain.content.sound == NotificationSound(kind: .named("bingbong.aiff")))
        #expect(plain.interactsWithPerson)
        #expect(try read(#"{"aps":{"sound":"default"}}"#).content.sound == NotificationSound(kind: .default))
        #expect(try read(#"{"aps":{"badge":0}}"#).content.badge == 0)
        let critical = try read(#"{"aps":{"sound":{"critical":1,"name":"alarm.caf","volume":0.5}}}"#).content.sound
        #expect(critical == NotificationSound(kind: .named("alarm.caf"), isCritical: true, volume: 0.5))
        #expect(try read(#"{"aps":{"sound":{"critical":1,"volume":7}}}"#).content.sound?.volume == 1)
    }

    @Test func aBackgroundPushNeverReachesThePerson() throws {
        let payload = try read(#"{"aps":{"content-available":1},"acme1":"bar","acme2":42}"#)
        #expect(payload.isContentAvailable)
        #expect(!payload.interactsWithPerson)
        #expect(payload.content.userInfo["acme2"] == .integer(42))
    }

    @Test func mutableContentIsNoted() throws {
        #expect(try read(#"{"aps":{"alert":"x","mutable-content":1}}"#).isMutableContent)
        #expect(try !read(#"{"aps":{"alert":"x","mutable-content":0}}"#).isMutableContent)
    }

    @Test func interruptionLevelsAreApples() throws {
        for (text, level) in [("passive", InterruptionLevel.passive), ("active", .active), ("time-sensitive", .timeSensitive), ("critical", .critical)] {
            #expect(try read(#"{"aps":{"alert":"x","interruption-level":"\#(text)"}}"#).content.interruptionLevel == level)
        }
    }

    @Test func localizationKeysUseTheAppsStringsOrShowTheKey() throws {
        let strings = ["GAME_PLAY_REQUEST_FORMAT": "%@ and %@ have invited you to play Monopoly", "TITLE": "Invitation from %2$@ (%1$@)"]
        let payload = try read(#"""
            {"aps":{"alert":{"loc-key":"GAME_PLAY_REQUEST_FORMAT","loc-args":["Shelly","Rick"],"title-loc-key":"TITLE","title-loc-args":["games","Ann"],
            "subtitle-loc-key":"MISSING_KEY"}}}
            """#, localize: { strings[$0] })
        #expect(payload.content.body == "Shelly and Rick have invited you to play Monopoly")
        #expect(payload.content.title == "Invitation from Ann (games)")
        #expect(payload.content.subtitle == "MISSING_KEY")
    }

    @Test func formatsPutArgumentsInTheirPlaces() {
        #expect(APNs.formatted("%@ has %@ new messages", ["Ann", "3"]) == "Ann has 3 new messages")
        #expect(APNs.formatted("%2$@ before %1$@", ["one", "two"]) == "two before one")
        #expect(APNs.formatted("100%% sure, %@", ["Bob"]) == "100% sure, Bob")
        #expect(APNs.formatted("%@ and %@", ["only"]) == "only and ")
        #expect(APNs.formatted("50% off", []) == "50% off")
    }

    @Test func notAnObjectIsRefused() {
        #expect((try? read("[1,2]")) == nil)
        #expect((try? read("not json")) == nil)
        #expect((try? read(#""text""#)) == nil)
    }

    @Test func thePushBecomesARequestNamedByItsCollapseID() throws {
        let payload = try read(#"{"aps":{"alert":"Score 2-1"}}"#)
        let collapsed = APNs.request(for: payload, apnsID: "eabeae54-14a8-11e5-b60b-1697f925ec7b", collapseID: "score")
        #expect(collapsed.identifier == "score")
        #expect(collapsed.trigger == .push)
        #expect(APNs.request(for: payload, apnsID: "eabeae54-14a8-11e5-b60b-1697f925ec7b", collapseID: nil).identifier == "eabeae54-14a8-11e5-b60b-1697f925ec7b")
    }
}
