import Foundation
import NotificationCore
import Testing

/// What an app's delegates are asked is one value from the machine to the app's event stream and back:
/// each event decodes to the value sent, as a flat object with the `type` and fields the stream's
/// documentation names (Docs/local-api-streams.md), with our encoder and with Foundation's.
@Suite struct AppEventCodingTests {
    static let notification = DaemonEventCodingTests.notification
    static let response = DaemonEventCodingTests.response
    static let remote = DaemonEventCodingTests.remote

    static let events: [(LocalAPI.AppEvent, type: String, fields: Set<String>)] = [
        (.call(.willPresent(ticket: 7, notification)), "willPresent", ["type", "ticket", "notification"]),
        (.call(.response(ticket: 8, response)), "response", ["type", "ticket", "response"]),
        (.call(.openSettings(notification)), "openSettings", ["type", "notification"]),
        (.call(.openSettings(nil)), "openSettings", ["type"]),
        (.call(.remoteNotification(ticket: 9, remote)), "remoteNotification", ["type", "ticket", "remoteNotification"]),
        (.deviceToken(token: "ab12", environment: .sandbox), "deviceToken", ["type", "token", "environment"]),
        (.badge(count: 3), "badge", ["type", "count"]),
        (.connected(contentExtensions: true), "connected", ["type", "contentExtensions"]),
        (.replaced, "replaced", ["type"]),
    ]

    @Test(arguments: events)
    func anEventComesBackAsItWasSent(_ event: LocalAPI.AppEvent, type: String, fields: Set<String>) throws {
        for data in [try JSONEncoder().encode(event), Data(try StreamingJSONEncoder().encodeBytes(event))] {
            #expect(try JSONDecoder().decode(LocalAPI.AppEvent.self, from: data) == event)
            let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            #expect(object["type"] as? String == type)
            #expect(Set(object.keys) == fields)
        }
    }

    @Test func aCallOfAnUnknownTypeIsRefused() {
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(LocalAPI.AppEvent.self, from: Data(#"{"type":"willVanish","ticket":1}"#.utf8))
        }
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(AppCall.self, from: Data(#"{"type":"badge","count":1}"#.utf8))
        }
    }
}
