import Foundation
import NotificationCore
import Testing

/// What presenters are told is one value from the engine to the wire and back: each event, encoded as
/// the presenter stream sends it, decodes to the same event, and its JSON has the fields the stream's
/// documentation names (Docs/local-api-streams.md).
@Suite struct DaemonEventCodingTests {
    static let notification: DeliveredNotification = {
        var content = NotificationContent()
        content.title = "Lunch"
        content.body = "At noon"
        return DeliveredNotification(request: NotificationRequest(identifier: "n", content: content, trigger: nil),
                                     date: Date(timeIntervalSinceReferenceDate: 100))
    }()
    static let shown = NotificationCenterMachine.VisibleNotification(
        notification: notification, presentation: Presentation(banner: true, list: true), actions: [], categoryOptions: [],
        summary: SummaryPlacement(date: Date(timeIntervalSinceReferenceDate: 200), held: false, whenShown: Presentation(list: true))
    )
    static let response = NotificationResponse(notification: notification, actionIdentifier: "REPLY", userText: "on my way")
    static let remote = RemoteNotification(identifier: "apns-1", userInfo: ["k": .string("v")], isVoIP: true)

    static let events: [DaemonEvent] = [
        .app("com.example.a", .authorizationPrompt([.alert, .badge])),
        .app("com.example.a", .settingsChanged(.granting([.alert], status: .authorized))),
        .app("com.example.a", .presented(shown)),
        .app("com.example.a", .badgeChanged(3)),
        .app("com.example.a", .appStateChanged(.foreground)),
        .app("com.example.a", .responseDelivered(response)),
        .app("com.example.a", .responseNotCompleted(response)),
        .app("com.example.a", .willPresentTimedOut(notification)),
        .app("com.example.a", .discardedOverLimit(notification.request)),
        .app("com.example.a", .notificationsRemoved(["n", "m"])),
        .app("com.example.a", .actedOn(identifier: "n", actionIdentifier: SystemActionIdentifier.dismiss)),
        .app("com.example.a", .remoteNotificationDelivered(remote)),
        .app("com.example.a", .remoteNotificationHeld(remote)),
        .app("com.example.a", .remoteNotificationNotCompleted(remote)),
        .app("com.example.a", .contentPreparing(notification.request)),
        .app("com.example.a", .contentPrepared(notification.request, .prepared)),
        .app("com.example.a", .contentPrepared(notification.request, .timedOut)),
        .app("com.example.a", .contentPrepared(notification.request, .interrupted)),
        .app("com.example.a", .contentPrepared(notification.request, .failed("it crashed"))),
        .app("com.example.a", .summaryDelivered([shown])),
        .deviceLockChanged(locked: true),
        .focusChanged(Focus(name: "Work", allowedApps: ["com.example.a"])),
        .focusChanged(nil),
        .summaryChanged(ScheduledSummary(times: [.init(hour: 8, minute: 0)])),
        .summaryChanged(nil),
        .timeZoneChanged(TimeZone(identifier: "Asia/Shanghai")!),
    ]

    @Test(arguments: events)
    func anEventComesBackAsItWasSent(_ event: DaemonEvent) throws {
        let data = try JSONEncoder().encode(LocalAPI.WatchEvent.event(event))
        #expect(try JSONDecoder().decode(LocalAPI.WatchEvent.self, from: data) == .event(event))
        let fields = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(fields["type"] as? String == event.type)
        #expect(fields["bundleIdentifier"] as? String == event.bundleIdentifier)
    }

    /// The fields of a few kinds, as the stream's documentation names them.
    @Test func theFieldsAreTheDocumentedOnes() throws {
        func fields(_ event: DaemonEvent) throws -> [String: Any] {
            try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(event)) as? [String: Any])
        }
        let presented = try fields(.app("com.example.a", .presented(Self.shown)))
        let notification = try #require(presented["notification"] as? [String: Any])
        #expect(notification["bundleIdentifier"] as? String == "com.example.a")
        #expect((notification["presentation"] as? [String: Any])?["banner"] as? Bool == true)
        #expect(try fields(.app("com.example.a", .authorizationPrompt([.alert, .sound])))["options"] as? Int == 6, "alert (4) and sound (2), as UNAuthorizationOptions numbers them")
        let prepared = try fields(.app("com.example.a", .contentPrepared(Self.notification.request, .failed("it crashed"))))
        #expect(prepared["outcome"] as? String == "failed" && prepared["reason"] as? String == "it crashed")
        let acted = try fields(.app("com.example.a", .actedOn(identifier: "n", actionIdentifier: "OPEN")))
        #expect(acted["identifiers"] as? [String] == ["n"] && acted["actionIdentifier"] as? String == "OPEN")
        let summary = try fields(.app("com.example.a", .summaryDelivered([Self.shown])))
        #expect(summary["date"] as? Double == 200 && (summary["notifications"] as? [Any])?.count == 1)
        #expect(try fields(.timeZoneChanged(TimeZone(identifier: "Europe/Paris")!))["timeZone"] as? String == "Europe/Paris")
        let locked = try fields(.deviceLockChanged(locked: true))
        #expect(locked["locked"] as? Bool == true && locked["bundleIdentifier"] as? String == "")
        #expect(try fields(.focusChanged(nil))["focus"] == nil)
    }

    /// The stream's own messages, and what it refuses to read.
    @Test func theStreamsOwnMessagesAndAnUnknownKind() throws {
        let subscribed = try JSONEncoder().encode(LocalAPI.WatchEvent.subscribed)
        #expect(String(decoding: subscribed, as: UTF8.self).contains(#""type":"subscribed""#))
        #expect(try JSONDecoder().decode(LocalAPI.WatchEvent.self, from: Data(#"{"type":"overflowed","bundleIdentifier":""}"#.utf8)) == .overflowed)
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(LocalAPI.WatchEvent.self, from: Data(#"{"type":"somethingNew","bundleIdentifier":"a"}"#.utf8))
        }
    }
}
