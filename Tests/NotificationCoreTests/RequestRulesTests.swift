import Foundation
import NotificationCore
import Testing

private let newYear2026 = Date(timeIntervalSince1970: 1_767_225_600)

private func content(_ change: (inout NotificationContent) -> Void = { _ in }) -> NotificationContent {
    var content = NotificationContent()
    content.title = "Title"
    change(&content)
    return content
}

private func request(_ identifier: String = "r", trigger: NotificationTrigger? = nil, content change: (inout NotificationContent) -> Void = { _ in }) -> NotificationRequest {
    NotificationRequest(identifier: identifier, content: content(change), trigger: trigger)
}

private func components(_ change: (inout DateComponents) -> Void) -> DateComponents {
    var components = DateComponents()
    change(&components)
    return components
}

private func region(latitude: Double = 48.85, longitude: Double = 2.35, radius: Double = 100, entry: Bool = true, exit: Bool = true) -> CircularRegion {
    CircularRegion(identifier: "home", center: Coordinate(latitude: latitude, longitude: longitude), radius: radius, notifyOnEntry: entry, notifyOnExit: exit)
}

@Suite("Request rules: what the system accepts from any client")
struct RequestRulesTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var request: NotificationRequest
        /// The rule broken, or `nil` when the request is accepted.
        var rule: String?
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        // Time intervals: Apple's construction rules, checked again at the boundary, and the hostile request.
        Case(name: "a one-shot interval of 5 s", request: request(trigger: .timeInterval(5, repeats: false)), rule: nil),
        Case(name: "a repeating interval of 0 s (the hostile one)", request: request(trigger: .timeInterval(0, repeats: true)), rule: "intervalNotPositive"),
        Case(name: "a negative interval", request: request(trigger: .timeInterval(-1, repeats: false)), rule: "intervalNotPositive"),
        Case(name: "a NaN interval", request: request(trigger: .timeInterval(.nan, repeats: false)), rule: "intervalNotPositive"),
        Case(name: "an infinite interval", request: request(trigger: .timeInterval(.infinity, repeats: false)), rule: "intervalNotPositive"),
        Case(name: "a repeating interval just under 60 s", request: request(trigger: .timeInterval(60.0.nextDown, repeats: true)), rule: "repeatingIntervalTooShort"),
        Case(name: "a repeating interval of 60 s", request: request(trigger: .timeInterval(60, repeats: true)), rule: nil),
        Case(name: "an interval of a century", request: request(trigger: .timeInterval(RequestRules.maximumInterval, repeats: false)), rule: nil),
        Case(name: "an interval over a century", request: request(trigger: .timeInterval(RequestRules.maximumInterval.nextUp, repeats: false)), rule: "intervalTooLong"),
        // Calendar components, at the edges of their ranges.
        Case(name: "hour 23", request: request(trigger: .calendar(components { $0.hour = 23 }, repeats: true)), rule: nil),
        Case(name: "hour 24", request: request(trigger: .calendar(components { $0.hour = 24 }, repeats: true)), rule: "dateComponentOutOfRange"),
        Case(name: "minute -1", request: request(trigger: .calendar(components { $0.minute = -1 }, repeats: false)), rule: "dateComponentOutOfRange"),
        Case(name: "month 13 (Hebrew leap years)", request: request(trigger: .calendar(components { $0.month = 13 }, repeats: false)), rule: nil),
        Case(name: "month 14", request: request(trigger: .calendar(components { $0.month = 14 }, repeats: false)), rule: "dateComponentOutOfRange"),
        Case(name: "weekday 0", request: request(trigger: .calendar(components { $0.weekday = 0 }, repeats: false)), rule: "dateComponentOutOfRange"),
        Case(name: "year 100,000", request: request(trigger: .calendar(components { $0.year = 100_000 }, repeats: false)), rule: nil),
        Case(name: "year 100,001", request: request(trigger: .calendar(components { $0.year = 100_001 }, repeats: false)), rule: "dateComponentOutOfRange"),
        Case(name: "a nanosecond of a whole second", request: request(trigger: .calendar(components { $0.nanosecond = 1_000_000_000 }, repeats: true)), rule: "dateComponentOutOfRange"),
        // Regions.
        Case(name: "a region in Paris", request: request(trigger: .location(region(), repeats: false)), rule: nil),
        Case(name: "a latitude of 91", request: request(trigger: .location(region(latitude: 91), repeats: false)), rule: "regionInvalid"),
        Case(name: "a longitude of -180.5", request: request(trigger: .location(region(longitude: -180.5), repeats: false)), rule: "regionInvalid"),
        Case(name: "a radius of 0", request: request(trigger: .location(region(radius: 0), repeats: false)), rule: "regionInvalid"),
        Case(name: "a radius of 1,000 km", request: request(trigger: .location(region(radius: 1_000_000), repeats: false)), rule: nil),
        Case(name: "a radius over 1,000 km", request: request(trigger: .location(region(radius: 1_000_001), repeats: false)), rule: "regionInvalid"),
        Case(name: "a region that notifies of nothing (it never fires, as on Apple's)", request: request(trigger: .location(region(entry: false, exit: false), repeats: false)), rule: nil),
        // Only the push service sends pushes.
        Case(name: "a push trigger from an app", request: request(trigger: .push), rule: "pushTriggerNotAllowed"),
        // Sizes.
        Case(name: "an identifier of 1024 characters", request: request(String(repeating: "é", count: 1024)), rule: nil),
        Case(name: "an identifier of 1025 characters", request: request(String(repeating: "a", count: 1025)), rule: "stringTooLong"),
        Case(name: "a thread identifier of 1025 characters", request: request(content: { $0.threadIdentifier = String(repeating: "t", count: 1025) }), rule: "stringTooLong"),
        Case(name: "ten attachments", request: request(content: { $0.attachments = attachments(10) }), rule: nil),
        Case(name: "eleven attachments", request: request(content: { $0.attachments = attachments(11) }), rule: "tooManyAttachments"),
        Case(name: "a body of 64 KiB", request: request(content: { $0.title = ""; $0.body = String(repeating: "b", count: RequestRules.maximumContentBytes) }), rule: nil),
        Case(name: "a body of 64 KiB and a title", request: request(content: { $0.body = String(repeating: "b", count: RequestRules.maximumContentBytes) }), rule: "contentTooLarge"),
        Case(name: "a userInfo of 100 KiB", request: request(content: { $0.userInfo = ["blob": .string(String(repeating: "x", count: 100_000))] }), rule: "contentTooLarge"),
        Case(name: "a badge of -1", request: request(content: { $0.badge = -1 }), rule: "badgeNegative"),
        Case(name: "a badge of 0", request: request(content: { $0.badge = 0 }), rule: nil),
        Case(name: "a NaN relevance score", request: request(content: { $0.relevanceScore = .nan }), rule: "relevanceScoreNotFinite"),
    ]

    @Test(arguments: cases)
    func requests(_ testCase: Case) {
        #expect(RequestRules.violation(in: testCase.request)?.rule == testCase.rule)
    }

    @Test func theMachineRefusesABrokenRuleAndKeepsNothing() throws {
        var machine = NotificationCenterMachine(now: newYear2026, calendar: Calendar(identifier: .gregorian), timeZone: TimeZone(identifier: "UTC")!)
        _ = machine.changeSettings(.granting([.alert], status: .authorized))
        #expect(throws: NotificationFailure.self) { try machine.add(request("hostile", trigger: .timeInterval(0, repeats: true))) }
        do {
            _ = try machine.add(request("hostile", trigger: .timeInterval(0, repeats: true)))
        } catch {
            #expect(error.violation?.rule == "intervalNotPositive")
            #expect(error.code == .notificationInvalidNoDate, "the nearest UNError code for a trigger")
        }
        #expect(machine.pendingRequests.isEmpty)
        #expect(machine.nextWakeUpDate() == nil)
    }

    @Test func aBrokenRequestStoredBeforeTheRulesIsDroppedWhenTheSystemResumes() throws {
        // A state written before the rules were enforced, with the hostile request in it.
        var machine = NotificationCenterMachine(now: newYear2026, calendar: Calendar(identifier: .gregorian), timeZone: TimeZone(identifier: "UTC")!)
        _ = machine.changeSettings(.granting([.alert], status: .authorized))
        _ = try machine.add(request("fine", trigger: .timeInterval(3600, repeats: true)))
        _ = try machine.add(request("hostile", trigger: .timeInterval(60, repeats: true)))
        var json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(machine)) as! [String: Any]
        json = rewriteInterval(of: "hostile", to: 0, in: json)
        var stored = try JSONDecoder().decode(NotificationCenterMachine.self, from: JSONSerialization.data(withJSONObject: json))
        #expect(stored.pendingRequests.map(\.request.identifier).sorted() == ["fine", "hostile"])

        _ = stored.resume(at: newYear2026.addingTimeInterval(120))
        #expect(stored.pendingRequests.map(\.request.identifier) == ["fine"])
        var fired = 0
        while let effects = stored.advance(to: newYear2026.addingTimeInterval(7200)) {
            fired += effects.count { if case .presented = $0 { true } else { false } }
            #expect(fired < 10, "time moves on")
            if fired >= 10 { break }
        }
        #expect(fired == 2, "the hourly one fired at 1 h and 2 h")
    }

    @Test func whatThePersonSeesOfOneAppIsBoundedAndTheOldestLeavesFirst() throws {
        var machine = NotificationCenterMachine(now: newYear2026, calendar: Calendar(identifier: .gregorian), timeZone: TimeZone(identifier: "UTC")!,
                                                appState: .background)
        _ = machine.changeSettings(.granting([.alert, .sound, .badge], status: .authorized))
        let limit = try #require(machine.configuration.visibleLimit)
        #expect(limit == 100)
        for index in 0..<limit { #expect(!(try machine.add(request("n\(index)"))).contains(.notificationsRemoved(["n0"]))) }
        // The one over the limit: the oldest leaves, and the surfaces are told, as when the app removes it.
        #expect(try machine.add(request("n\(limit)")).contains(.notificationsRemoved(["n0"])))
        #expect(machine.visibleNotifications.count == limit)
        #expect(machine.visibleNotifications.first?.notification.request.identifier == "n1", "n0, the oldest, left")
        #expect(machine.visibleNotifications.last?.notification.request.identifier == "n\(limit)")

        // A state stored before the limit existed gets it when read again.
        var json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(machine)) as! [String: Any]
        var configuration = json["configuration"] as! [String: Any]
        configuration.removeValue(forKey: "visibleLimit")
        json["configuration"] = configuration
        let stored = try JSONDecoder().decode(NotificationCenterMachine.self, from: JSONSerialization.data(withJSONObject: json))
        #expect(stored.configuration.visibleLimit == limit)
    }

    @Test(arguments: [
        ("com.example.todo", true), ("a", true), ("com.example-app.todo2", true), ("A1.B2", true),
        ("", false), ("..", false), (".", false), (".com.example", false), ("com.example.", false), ("com..example", false),
        ("com/example", false), ("com_example", false), ("com example", false), ("com.exämple", false),
        (String(repeating: "a", count: 255), true), (String(repeating: "a", count: 256), false),
    ])
    func bundleIdentifiers(_ identifier: String, valid: Bool) {
        #expect((RequestRules.violation(inBundleIdentifier: identifier) == nil) == valid)
    }

    @Test func categoriesAreBounded() {
        let action = NotificationAction(identifier: "OK", title: "OK")
        let category = NotificationCategory(identifier: "c", actions: Array(repeating: action, count: 32))
        #expect(RequestRules.violation(in: [category]) == nil, "32 actions, even sharing an identifier, as Apple allows")
        #expect(RequestRules.violation(in: [NotificationCategory(identifier: "c", actions: Array(repeating: action, count: 33))])?.rule == "tooManyActions")
        let many = (0..<256).map { NotificationCategory(identifier: "c\($0)", actions: []) }
        #expect(RequestRules.violation(in: many) == nil)
        #expect(RequestRules.violation(in: many + [NotificationCategory(identifier: "more", actions: [])])?.rule == "tooManyCategories")
        let long = NotificationAction(identifier: "OK", title: String(repeating: "t", count: 1025))
        #expect(RequestRules.violation(in: [NotificationCategory(identifier: "c", actions: [long])])?.rule == "stringTooLong")

        var machine = NotificationCenterMachine(now: newYear2026, calendar: Calendar(identifier: .gregorian), timeZone: TimeZone(identifier: "UTC")!)
        #expect(throws: RuleViolation.self) { try machine.setCategories(many + [NotificationCategory(identifier: "more", actions: [])]) }
        #expect(machine.categories.isEmpty, "refused categories change nothing")
    }
}

private func attachments(_ count: Int) -> [NotificationAttachment] {
    (0..<count).map { NotificationAttachment(identifier: "a\($0)", url: URL(fileURLWithPath: "/tmp/a\($0).png"), type: "public.png") }
}

/// The machine's JSON with the interval of one pending request changed, as an old daemon might have
/// stored it.
private func rewriteInterval(of identifier: String, to interval: Double, in machine: [String: Any]) -> [String: Any] {
    var machine = machine
    func rewrite(_ value: Any) -> Any {
        if var object = value as? [String: Any] {
            if let request = object["request"] as? [String: Any], request["identifier"] as? String == identifier,
               var trigger = request["trigger"] as? [String: Any] {
                trigger["interval"] = interval
                var changed = request
                changed["trigger"] = trigger
                object["request"] = changed
                return object
            }
            for (key, inner) in object { object[key] = rewrite(inner) }
            return object
        }
        if let array = value as? [Any] { return array.map(rewrite) }
        return value
    }
    machine["pending"] = rewrite(machine["pending"] as Any)
    return machine
}
