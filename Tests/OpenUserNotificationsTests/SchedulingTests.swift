import Foundation
import OpenUserNotifications
import OpenUserNotificationsTesting
import Testing

/// Triggers fire at the right moment on the device's clock, calendar and time zone.
@Suite struct SchedulingTests {
    /// 2026-01-01 00:00:00 UTC, where every harness clock starts.
    static let start = Date(timeIntervalSince1970: 1_767_225_600)

    @Test func advancingFiresExactlyTheDueTriggersInOrder() async throws {
        let harness = try await NotificationTestHarness.authorized()
        try await harness.add("c", trigger: UNTimeIntervalNotificationTrigger(timeInterval: 30, repeats: false))
        try await harness.add("a", trigger: UNTimeIntervalNotificationTrigger(timeInterval: 10, repeats: false))
        try await harness.add("b", trigger: UNTimeIntervalNotificationTrigger(timeInterval: 10, repeats: false))
        try await harness.add("d", trigger: UNTimeIntervalNotificationTrigger(timeInterval: 31, repeats: false))
        await harness.clock.advance(by: 30)
        #expect(harness.history.presentations.map(\.notification.request.identifier) == ["a", "b", "c"])
        #expect(harness.history.presentations.map(\.notification.date) == [
            Self.start + 10, Self.start + 10, Self.start + 30,
        ])
        #expect(await harness.center.pendingNotificationRequests().map(\.identifier) == ["d"])
    }

    @Test func repeatingIntervalsKeepTheirCadence() async throws {
        let harness = try await NotificationTestHarness.authorized()
        try await harness.add("tick", trigger: UNTimeIntervalNotificationTrigger(timeInterval: 60, repeats: true))
        await harness.clock.advance(by: 3 * 60 + 59)
        #expect(harness.history.presentations.map(\.notification.date) == [Self.start + 60, Self.start + 120, Self.start + 180])
        let pending = try #require(await harness.center.pendingNotificationRequests().first)
        let trigger = try #require(pending.trigger as? UNTimeIntervalNotificationTrigger)
        #expect(trigger.nextTriggerDate() == Self.start + 240)
        #expect(trigger.timeInterval == 60, "the interval does not count down")
        #expect(await harness.center.deliveredNotifications().count == 1, "each firing replaces the last")
    }

    @Test func nextTriggerDateOfAnUnscheduledTriggerCountsFromNow() async throws {
        let harness = NotificationTestHarness()
        await harness.run { _ in
            let trigger = UNTimeIntervalNotificationTrigger(timeInterval: 90, repeats: false)
            #expect(trigger.nextTriggerDate() == Self.start + 90)
            let calendar = UNCalendarNotificationTrigger(dateMatching: DateComponents(hour: 8, minute: 30), repeats: true)
            #expect(calendar.nextTriggerDate() == Self.start + 8 * 3600 + 1800)
        }
    }

    @Test func calendarTriggersMatchInTheDevicesTimeZone() async throws {
        let harness = try await NotificationTestHarness.authorized(timeZone: TimeZone(identifier: "Asia/Shanghai")!)
        try await harness.add("morning", trigger: UNCalendarNotificationTrigger(dateMatching: DateComponents(hour: 8), repeats: true))
        // 08:00 in Shanghai is 00:00 UTC: the first is a day after the start.
        let pending = try #require(await harness.center.pendingNotificationRequests().first?.trigger as? UNCalendarNotificationTrigger)
        #expect(pending.nextTriggerDate() == Self.start + 86_400)
        await harness.clock.advance(by: 3 * 86_400)
        #expect(harness.history.presentations.map(\.notification.date) == [Self.start + 86_400, Self.start + 2 * 86_400, Self.start + 3 * 86_400])
    }

    @Test func calendarTriggersWithTheirOwnTimeZoneIgnoreTheDevices() async throws {
        let harness = try await NotificationTestHarness.authorized(timeZone: TimeZone(identifier: "Asia/Tokyo")!)
        var components = DateComponents(hour: 9)
        components.timeZone = TimeZone(identifier: "UTC")
        try await harness.add("utc", trigger: UNCalendarNotificationTrigger(dateMatching: components, repeats: false))
        await harness.clock.advance(by: 9 * 3600)
        #expect(harness.history.presentations.map(\.notification.date) == [Self.start + 9 * 3600])
        #expect(await harness.center.pendingNotificationRequests().isEmpty, "a non-repeating calendar trigger fires once")
    }

    @Test func dailyWallClockTriggersSurviveDaylightSavingChanges() async throws {
        let newYork = TimeZone(identifier: "America/New_York")!
        let harness = try await NotificationTestHarness.authorized(timeZone: newYork)
        try await harness.add("daily", trigger: UNCalendarNotificationTrigger(dateMatching: DateComponents(hour: 9, minute: 15), repeats: true))
        // 2026-03-08 is the spring-forward day and 2026-11-01 the fall-back day in New York.
        await harness.clock.advance(to: Date(timeIntervalSince1970: 1_773_014_400)) // 2026-03-09 00:00 UTC
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = newYork
        let times = harness.history.presentations.map { calendar.dateComponents([.hour, .minute], from: $0.notification.date) }
        #expect(times.count == 67)
        #expect(times.allSatisfy { $0.hour == 9 && $0.minute == 15 })
        let days = harness.history.presentations.map { calendar.component(.day, from: $0.notification.date) }
        #expect(Array(days.suffix(3)) == [6, 7, 8])
    }

    @Test func aTimeThatDaylightSavingSkipsFiresRightAfterTheGap() async throws {
        let newYork = TimeZone(identifier: "America/New_York")!
        let harness = try await NotificationTestHarness.authorized(timeZone: newYork)
        var components = DateComponents(year: 2026, month: 3, day: 8, hour: 2, minute: 30)
        components.calendar = Calendar(identifier: .gregorian)
        try await harness.add("gap", trigger: UNCalendarNotificationTrigger(dateMatching: components, repeats: false))
        let trigger = try #require(await harness.center.pendingNotificationRequests().first?.trigger as? UNCalendarNotificationTrigger)
        #expect(trigger.nextTriggerDate() == Date(timeIntervalSince1970: 1_772_953_200)) // 03:00 EDT = 07:00 UTC
    }

    @Test func travellingMovesCalendarTriggersWithTheDevice() async throws {
        let harness = try await NotificationTestHarness.authorized(timeZone: TimeZone(identifier: "UTC")!)
        try await harness.add("alarm", trigger: UNCalendarNotificationTrigger(dateMatching: DateComponents(hour: 7), repeats: false))
        await harness.person.changeTimeZone(to: TimeZone(identifier: "Europe/Paris")!)
        let trigger = try #require(await harness.center.pendingNotificationRequests().first?.trigger as? UNCalendarNotificationTrigger)
        #expect(trigger.nextTriggerDate() == Self.start + 6 * 3600, "07:00 in Paris in winter is 06:00 UTC")
        await harness.clock.advance(by: 6 * 3600)
        #expect(harness.history.presentations.count == 1)
    }

    @Test func theSixtyFifthPendingRequestDropsTheLatestFiring() async throws {
        let harness = try await NotificationTestHarness.authorized()
        for index in 1...64 {
            try await harness.add("r\(index)", trigger: UNTimeIntervalNotificationTrigger(timeInterval: TimeInterval(index * 10), repeats: false))
        }
        #expect(await harness.center.pendingNotificationRequests().count == 64)
        #expect(!harness.eventNames.contains("discardedOverLimit"))

        try await harness.add("soon", trigger: UNTimeIntervalNotificationTrigger(timeInterval: 5, repeats: false))
        let pending = await harness.center.pendingNotificationRequests().map(\.identifier)
        #expect(pending.count == 64)
        #expect(pending.contains("soon"))
        #expect(!pending.contains("r64"))
        let discarded = harness.history.events.compactMap { if case .discardedOverLimit(let r) = $0 { r.identifier } else { nil } }
        #expect(discarded == ["r64"])

        try await harness.add("late", trigger: UNTimeIntervalNotificationTrigger(timeInterval: 10_000, repeats: false))
        #expect(!(await harness.center.pendingNotificationRequests().map(\.identifier).contains("late")))
    }

    @Test func aRepeatingRequestCountsOnceTowardsTheLimit() async throws {
        let harness = try await NotificationTestHarness.authorized()
        try await harness.add("every-minute", trigger: UNTimeIntervalNotificationTrigger(timeInterval: 60, repeats: true))
        for index in 1...63 {
            try await harness.add("r\(index)", trigger: UNTimeIntervalNotificationTrigger(timeInterval: TimeInterval(index), repeats: false))
        }
        #expect(await harness.center.pendingNotificationRequests().count == 64)
        #expect(!harness.eventNames.contains("discardedOverLimit"))
    }

    @Test func removingAllPendingAndDelivered() async throws {
        let harness = try await NotificationTestHarness.authorized()
        try await harness.add("now")
        try await harness.add("later", trigger: UNTimeIntervalNotificationTrigger(timeInterval: 60, repeats: false))
        harness.center.removeAllPendingNotificationRequests()
        harness.center.removeAllDeliveredNotifications()
        #expect(await harness.center.pendingNotificationRequests().isEmpty)
        #expect(await harness.center.deliveredNotifications().isEmpty)
        await harness.clock.advance(by: 120)
        #expect(harness.history.presentations.count == 1)
    }

    @Test func removingUnknownIdentifiersIsHarmless() async throws {
        let harness = try await NotificationTestHarness.authorized()
        try await harness.add("keep", trigger: UNTimeIntervalNotificationTrigger(timeInterval: 60, repeats: false))
        harness.center.removePendingNotificationRequests(withIdentifiers: ["nope"])
        harness.center.removeDeliveredNotifications(withIdentifiers: ["nope"])
        #expect(await harness.center.pendingNotificationRequests().map(\.identifier) == ["keep"])
    }

    @Test func theCompletionHandlerFormsReportTheSameState() async throws {
        let harness = try await NotificationTestHarness.authorized()
        try await harness.add("a", trigger: UNTimeIntervalNotificationTrigger(timeInterval: 60, repeats: false))
        let pending: [UNNotificationRequest] = await withCheckedContinuation { continuation in
            harness.center.getPendingNotificationRequests { continuation.resume(returning: $0) }
        }
        #expect(pending.map(\.identifier) == ["a"])
        let settings: UNNotificationSettings = await withCheckedContinuation { continuation in
            harness.center.getNotificationSettings { continuation.resume(returning: $0) }
        }
        #expect(settings.authorizationStatus == .authorized)
        let error: (any Error)? = await withCheckedContinuation { continuation in
            harness.center.setBadgeCount(-1) { continuation.resume(returning: $0) }
        }
        #expect((error as? UNError)?.code == .badgeInputInvalid)
    }
}

/// Location triggers fire when the device crosses their region.
@Suite struct LocationTriggerTests {
    static let office = CLLocationCoordinate2D(latitude: 31.2304, longitude: 121.4737)
    static let home = CLLocationCoordinate2D(latitude: 31.1000, longitude: 121.3000)

    func region(entry: Bool, exit: Bool) -> CLCircularRegion {
        let region = CLCircularRegion(center: Self.office, radius: 200, identifier: "office")
        region.notifyOnEntry = entry
        region.notifyOnExit = exit
        return region
    }

    @Test func entryFiresOnceWhenNotRepeating() async throws {
        let harness = try await NotificationTestHarness.authorized()
        await harness.person.moveDevice(to: Self.home)
        try await harness.add("arrive", trigger: UNLocationNotificationTrigger(region: region(entry: true, exit: false), repeats: false))
        await harness.person.moveDevice(to: CLLocationCoordinate2D(latitude: 31.2305, longitude: 121.4738))
        await harness.person.moveDevice(to: Self.home)
        await harness.person.moveDevice(to: Self.office)
        await harness.settle()
        #expect(harness.history.presentations.map(\.notification.request.identifier) == ["arrive"])
        #expect(await harness.center.pendingNotificationRequests().isEmpty)
    }

    @Test func repeatingExitFiresOnEveryDeparture() async throws {
        let harness = try await NotificationTestHarness.authorized()
        await harness.person.moveDevice(to: Self.office)
        try await harness.add("leave", trigger: UNLocationNotificationTrigger(region: region(entry: false, exit: true), repeats: true))
        for _ in 0..<3 {
            await harness.person.moveDevice(to: Self.home)
            await harness.person.moveDevice(to: Self.office)
        }
        await harness.settle()
        #expect(harness.history.presentations.count == 3)
        let pending = try #require(await harness.center.pendingNotificationRequests().first?.trigger as? UNLocationNotificationTrigger)
        #expect(pending.region.identifier == "office")
        #expect(pending.region.notifyOnExit && !pending.region.notifyOnEntry)
        #expect((pending.region as? CLCircularRegion)?.radius == 200)
    }

    @Test func circularRegionsContainWhatIsWithinTheirRadius() {
        let region = CLCircularRegion(center: Self.office, radius: 1_000, identifier: "r")
        #expect(region.contains(CLLocationCoordinate2D(latitude: 31.2354, longitude: 121.4737))) // ~556 m north
        #expect(!region.contains(CLLocationCoordinate2D(latitude: 31.2404, longitude: 121.4737))) // ~1.1 km north
    }
}

extension LocationTriggerTests {
    @Test func locationNotificationsCannotBeListedButCanBeRemoved() async throws {
        let harness = try await NotificationTestHarness.authorized()
        await harness.person.moveDevice(to: Self.home)
        try await harness.add("arrive", trigger: UNLocationNotificationTrigger(region: region(entry: true, exit: false), repeats: false))
        await harness.person.moveDevice(to: Self.office)
        await harness.settle()
        #expect(await harness.visibleNotifications.map(\.notification.request.identifier) == ["arrive"])
        #expect(await harness.center.deliveredNotifications().isEmpty)
        harness.center.removeDeliveredNotifications(withIdentifiers: ["arrive"])
        #expect(await harness.visibleNotifications.isEmpty)
    }
}

/// Code that calls `current()` from a completion handler stays with the harness's system.
@Suite struct CallbackBindingTests {
    @Test func currentInsideACompletionHandlerIsTheHarnessCenter() async throws {
        let harness = NotificationTestHarness()
        harness.person.willAnswerAuthorization(allow: true)
        await harness.run { _ in
            UNUserNotificationCenter.current().requestAuthorization(options: [.alert]) { granted, _ in
                let content = UNMutableNotificationContent()
                content.title = "from the callback"
                UNUserNotificationCenter.current().add(UNNotificationRequest(identifier: "cb", content: content, trigger: nil))
            }
        }
        try await harness.history.waitFor { if case .presented = $0 { true } else { false } }
        #expect(harness.history.presentations.map(\.notification.request.identifier) == ["cb"])
    }
}
