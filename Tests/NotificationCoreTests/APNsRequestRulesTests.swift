import NotificationCore
import Testing

/// Apple's rules for a provider's request, one row per rule and its exact limits.
@Suite struct APNsRequestRulesTests {
    static let token = "00fc13adff785122b4ad28809a3420982341241421348097878e577c991de8f0"

    func target(_ method: String = "POST", _ path: String = "/3/device/\(token)", headers: [(String, String)] = []) -> Result<String, APNs.Rejection> {
        APNs.checkTarget(method: method, path: path, headers: headers.map { (name: $0.0, value: $0.1) })
    }

    func check(_ headers: [(String, String)], payloadBytes: Int = 30) -> Result<APNs.PushHeaders, APNs.Rejection> {
        APNs.checkHeaders(deviceToken: Self.token, headers: headers.map { (name: $0.0, value: $0.1) }, payloadBytes: payloadBytes) {
            "made-up-id"
        }
    }

    func reason<T>(_ result: Result<T, APNs.Rejection>) -> String? {
        if case .failure(let rejection) = result { rejection.reason.rawValue } else { nil }
    }

    @Test func aPushToADeviceTokenPasses() throws {
        #expect(try target().get() == Self.token)
        // Upper-case hexadecimal is the same token.
        #expect(try target("POST", "/3/device/\(Self.token.uppercased())").get() == Self.token)
    }

    @Test(arguments: [
        ("GET", "/3/device/\(token)", "MethodNotAllowed"),
        ("DELETE", "/3/device/\(token)", "MethodNotAllowed"),
        ("POST", "/3/devices/\(token)", "BadPath"),
        ("POST", "/2/device/\(token)", "BadPath"),
        ("POST", "/", "BadPath"),
        ("POST", "/3/device", "MissingDeviceToken"),
        ("POST", "/3/device/", "MissingDeviceToken"),
        ("POST", "/3/device/xyz", "BadDeviceToken"),
        ("POST", "/3/device/abc", "BadDeviceToken"),
        ("POST", "/3/device/\(token)/extra", "BadDeviceToken"),
        // Hexadecimal in ASCII only: fullwidth digits are digits to Unicode, not to APNs.
        ("POST", "/3/device/\u{FF10}\u{FF11}", "BadDeviceToken"),
        ("POST", "/3/device/0g", "BadDeviceToken"),
    ])
    func theTargetIsChecked(method: String, path: String, expected: String) {
        #expect(reason(target(method, path)) == expected)
    }

    @Test func aRepeatedApnsHeaderIsRefused() {
        #expect(reason(target(headers: [("apns-topic", "com.example.a"), ("apns-topic", "com.example.b")])) == "DuplicateHeaders")
        #expect(reason(target(headers: [("authorization", "bearer a"), ("authorization", "bearer b")])) == "DuplicateHeaders")
        // Headers that are not Apple's may repeat.
        #expect((try? target(headers: [("x-trace", "a"), ("x-trace", "b")]).get()) == Self.token)
    }

    @Test func defaultsAreApples() throws {
        let push = try check([("apns-topic", "com.example.app")]).get()
        #expect(push.apnsID == "made-up-id")
        #expect(push.pushType == .alert)
        #expect(push.priority == 10)
        #expect(push.expiration == nil)
        #expect(push.collapseID == nil)
    }

    @Test func givenValuesAreKept() throws {
        let push = try check([
            ("apns-topic", "com.example.app"), ("apns-id", "eabeae54-14a8-11e5-b60b-1697f925ec7b"), ("apns-push-type", "background"),
            ("apns-priority", "5"), ("apns-expiration", "0"), ("apns-collapse-id", "score"),
        ]).get()
        #expect(push.apnsID == "eabeae54-14a8-11e5-b60b-1697f925ec7b")
        #expect(push.pushType == .background)
        #expect(push.priority == 5)
        #expect(push.expiration == 0)
        #expect(push.collapseID == "score")
    }

    @Test(arguments: [
        ("apns-id", "eabeae54-14a8-11e5-b60b-1697f925ec7", "BadMessageId"),
        ("apns-id", "not-a-uuid", "BadMessageId"),
        ("apns-id", "eabeae5414a811e5b60b1697f925ec7b", "BadMessageId"),
        ("apns-expiration", "-1", "BadExpirationDate"),
        ("apns-expiration", "soon", "BadExpirationDate"),
        ("apns-expiration", "", "BadExpirationDate"),
        ("apns-priority", "7", "BadPriority"),
        ("apns-priority", "high", "BadPriority"),
        ("apns-priority", "010", "BadPriority"),
        ("apns-push-type", "banner", "InvalidPushType"),
        ("apns-push-type", "Alert", "InvalidPushType"),
        ("apns-topic", "com..example", "BadTopic"),
        ("apns-topic", "com.example/app", "BadTopic"),
        ("apns-topic", "", "BadTopic"),
    ])
    func aBadHeaderValueIsNamed(header: String, value: String, expected: String) {
        var headers = [(header, value)]
        if header != "apns-topic" { headers.append(("apns-topic", "com.example.app")) }
        #expect(reason(check(headers)) == expected)
    }

    @Test func anUpperCaseApnsIDIsTakenAsClientsSendIt() throws {
        let id = "EABEAE54-14A8-11E5-B60B-1697F925EC7B"
        #expect(try check([("apns-id", id), ("apns-topic", "com.example.app")]).get().apnsID == id)
    }

    @Test(arguments: [
        ("eabeae54-14a8-11e5-b60b-1697f925ec7b", true), ("EABEAE54-14A8-11E5-B60B-1697F925EC7B", true),
        ("eabeae5414a811e5b60b1697f925ec7b", false), ("eabeae54-14a8-11e5-b60b-1697f925ec7", false),
        ("eabeae54-14a8-11e5-b60b-1697f925ec7b0", false), ("eabeae5-414a8-11e5-b60b-1697f925ec7b", false),
        ("eabeae54-14a8-11e5-b60b-1697f925ec7g", false), ("eabeae54-14a8-11e5-b60b-1697f925ec7\u{FF10}", false), ("", false),
    ])
    func anApnsIDIsAUUIDIn8_4_4_4_12Form(_ text: String, valid: Bool) {
        #expect(APNs.isCanonicalUUID(text) == valid)
    }

    @Test func theCollapseIDIsAtMost64Bytes() {
        let atLimit = String(repeating: "c", count: 64)
        #expect((try? check([("apns-topic", "a.b"), ("apns-collapse-id", atLimit)]).get())?.collapseID == atLimit)
        #expect(reason(check([("apns-topic", "a.b"), ("apns-collapse-id", atLimit + "c")])) == "BadCollapseId")
        // Bytes, not characters: 32 two-byte characters fit, 33 do not.
        #expect((try? check([("apns-topic", "a.b"), ("apns-collapse-id", String(repeating: "é", count: 32))]).get()) != nil)
        #expect(reason(check([("apns-topic", "a.b"), ("apns-collapse-id", String(repeating: "é", count: 33))])) == "BadCollapseId")
    }

    @Test func thePayloadIsBetweenOneByteAndItsTypesLimit() {
        let alert = [("apns-topic", "com.example.app")]
        let voip = [("apns-topic", "com.example.app.voip"), ("apns-push-type", "voip")]
        #expect(reason(check(alert, payloadBytes: 0)) == "PayloadEmpty")
        #expect((try? check(alert, payloadBytes: 4096).get()) != nil)
        #expect(reason(check(alert, payloadBytes: 4097)) == "PayloadTooLarge")
        #expect((try? check(voip, payloadBytes: 5120).get()) != nil)
        #expect(reason(check(voip, payloadBytes: 5121)) == "PayloadTooLarge")
    }

    @Test func priorityFollowsThePushType() {
        func priority(_ type: String, _ topic: String, _ value: String) -> String? {
            reason(check([("apns-push-type", type), ("apns-topic", topic), ("apns-priority", value)]))
        }
        // "Always use priority 5. Using priority 10 is an error."
        #expect(priority("background", "com.example.app", "10") == "BadPriority")
        #expect(priority("background", "com.example.app", "5") == nil)
        #expect(priority("liveactivity", "com.example.app.push-type.liveactivity", "1") == "BadPriority")
        #expect(priority("liveactivity", "com.example.app.push-type.liveactivity", "5") == nil)
        #expect(priority("alert", "com.example.app", "1") == nil)
        // An absent priority is 10, which a background push may not have.
        #expect(reason(check([("apns-push-type", "background"), ("apns-topic", "com.example.app")])) == "BadPriority")
    }

    @Test func theTopicCarriesItsPushTypesSuffix() throws {
        // The suffix of another type: the push type is wrong for the topic.
        #expect(reason(check([("apns-push-type", "alert"), ("apns-topic", "com.example.app.voip")])) == "InvalidPushType")
        // No suffix where the type needs one: the token is not this type's.
        #expect(reason(check([("apns-push-type", "voip"), ("apns-topic", "com.example.app")])) == "DeviceTokenNotForTopic")
        // Without a push type, the suffix says which.
        #expect(try check([("apns-topic", "com.example.app.voip")]).get().pushType == .voip)
        #expect(try check([("apns-topic", "com.example.app.voip-ptt")]).get().pushType == .pushtotalk)
        #expect(try check([("apns-topic", "com.example.app.push-type.liveactivity"), ("apns-priority", "5")]).get().pushType == .liveactivity)
        for type in APNs.PushType.allCases where type != .mdm {
            let topic = "com.example.app" + (type.topicSuffix ?? "")
            let priority = type == .background ? "5" : "10"
            #expect(try check([("apns-push-type", type.rawValue), ("apns-topic", topic), ("apns-priority", priority)]).get().pushType == type)
        }
    }

    @Test func everyReasonHasApplesStatusAndBody() {
        #expect(APNs.Reason.all.count == 33)
        #expect(Set(APNs.Reason.all.map(\.rawValue)).count == 33)
        #expect(APNs.Reason.unregistered.status == 410)
        #expect(APNs.Rejection(.unregistered, timestamp: 1_767_225_600_123).body == #"{"reason":"Unregistered","timestamp":1767225600123}"#)
        #expect(APNs.Rejection(.badDeviceToken).body == #"{"reason":"BadDeviceToken"}"#)
        #expect(!APNs.Reason.unregistered.isConnectionError)
        #expect(APNs.Reason.badDeviceToken.isConnectionError)
    }
}
