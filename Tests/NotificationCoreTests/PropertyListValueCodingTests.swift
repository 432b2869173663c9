import Foundation
import NotificationCore
import Testing

/// A payload's values keep their JSON kinds when decoded, whatever order the kinds are tried in.
@Suite struct PropertyListValueCodingTests {
    @Test func everyJSONKindDecodesAsItself() throws {
        let json = #"""
            {"string": "1", "true": true, "false": false, "integer": 1, "negative": -7, "double": 1.5, "zero": 0,
             "array": [1, "a", false, [], {}], "object": {"alert": {"title": "Hi"}, "badge": 3},
             "date": {"$date": 1800000000}, "data": {"$data": "AQID"}, "notData": {"$data": "not base64!"}}
            """#
        let decoded = try JSONDecoder().decode([String: PropertyListValue].self, from: Data(json.utf8))
        #expect(decoded == [
            "string": .string("1"), "true": .bool(true), "false": .bool(false), "integer": .integer(1), "negative": .integer(-7),
            "double": .double(1.5), "zero": .integer(0),
            "array": .array([.integer(1), .string("a"), .bool(false), .array([]), .dictionary([:])]),
            "object": .dictionary(["alert": .dictionary(["title": .string("Hi")]), "badge": .integer(3)]),
            "date": .date(Date(timeIntervalSince1970: 1_800_000_000)), "data": .data(Data([1, 2, 3])),
            "notData": .dictionary(["$data": .string("not base64!")]),
        ])
        // And back: the same JSON values.
        #expect(try JSONDecoder().decode([String: PropertyListValue].self, from: JSONEncoder().encode(decoded)) == decoded)
    }

    /// A push's payload may carry `null` (the app finds `NSNull`), so its stored form does too; an
    /// app's own request may not, as a property list has no null.
    @Test func aNullIsAPushsValueButNotALocalRequests() throws {
        #expect(try JSONDecoder().decode([String: PropertyListValue].self, from: Data(#"{"a": null}"#.utf8)) == ["a": .null])
        #expect(try JSONDecoder().decode([PropertyListValue].self, from: Data(#"[1, null]"#.utf8)) == [.integer(1), .null])
        #expect(try JSONDecoder().decode(PropertyListValue.self, from: JSONEncoder().encode(PropertyListValue.array([.null]))) == .array([.null]))
        var content = NotificationContent()
        content.userInfo = ["list": .array([.integer(1), .null])]
        let request = NotificationRequest(identifier: "r", content: content, trigger: nil)
        #expect(RequestRules.violation(in: request)?.rule == "userInfoNotPropertyList")
        #expect(RequestRules.violation(in: content) == nil, "an extension may hand back a push's content as it came")
    }
}
