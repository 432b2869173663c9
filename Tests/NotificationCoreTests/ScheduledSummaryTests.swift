import Foundation
import NotificationCore
import Testing

/// The Scheduled Summary in the machine: what it holds, when it comes, and what moves it.
@Suite struct ScheduledSummaryTests {
    /// 2026-01-01T00:00:00Z.
    static let t0 = Date(timeIntervalSince1970: 1_767_225_600)
    static let utc = TimeZone(identifier: "UTC")!

    static func at(hours: Double) -> Date { t0.addingTimeInterval(hours * 3600) }

    /// A machine whose app was allowed alerts, sounds, badges and time-sensitive notifications, and is
    /// in the summary (unless `inSummary` is false), with the summary on at 08:00 and 18:00.
    static func machine(inSummary: Bool = true, summary: ScheduledSummary? = ScheduledSummary()) -> NotificationCenterMachine {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = utc
        var machine = NotificationCenterMachine(now: t0, calendar: calendar, timeZone: utc, appState: .background)
        _ = machine.requestAuthorization(options: [.alert, .sound, .badge, .timeSensitive], call: 0)
        _ = machine.answerAuthorizationPrompt(allow: true)
        var settings = machine.settings
        settings.scheduledDeliverySetting = inSummary ? .enabled : .disabled
        _ = machine.changeSettings(settings)
        _ = machine.setScheduledSummary(summary)
        return machine
    }

    static func post(_ machine: inout NotificationCenterMachine, _ identifier: String, _ level: InterruptionLevel = .active, badge: Int? = nil) throws -> [NotificationCenterMachine.Effect] {
        var content = NotificationContent()
        content.title = identifier
        content.sound = NotificationSound(kind: .default)
        content.interruptionLevel = level
        content.badge = badge
        return try machine.add(NotificationRequest(identifier: identifier, content: content, trigger: nil))
    }

    static func delivered(_ effects: [NotificationCenterMachine.Effect]) -> [String]? {
        for case .summaryDelivered(let shown) in effects { return shown.map(\.notification.request.identifier) }
        return nil
    }

    static func placement(_ machine: NotificationCenterMachine, _ identifier: String) -> SummaryPlacement? {
        machine.visibleNotifications.first { $0.notification.request.identifier == identifier }?.summary
    }

    static func advance(_ machine: inout NotificationCenterMachine, to date: Date) -> [NotificationCenterMachine.Effect] {
        machine.catchUp(to: date).effects
    }

    @Test func anAppInTheSummaryDeliversQuietlyAndItsNotificationsComeTogetherAtTheNextTime() throws {
        var machine = Self.machine()
        _ = Self.advance(&machine, to: Self.at(hours: 7))
        _ = try Self.post(&machine, "first", badge: 3)
        _ = Self.advance(&machine, to: Self.at(hours: 7.5))
        _ = try Self.post(&machine, "second")

        // Delivered (the app sees them) but held: no banner, no sound, not on the lock screen; the badge moves.
        #expect(machine.deliveredNotifications.map(\.request.identifier).sorted() == ["first", "second"])
        let held = try #require(machine.visibleNotifications.first { $0.notification.request.identifier == "first" })
        #expect(held.presentation == Presentation(list: true, badge: 3))
        #expect(held.summary?.date == Self.at(hours: 8) && held.summary?.held == true)
        #expect(machine.badge == 3)
        #expect(machine.nextWakeUpDate() == Self.at(hours: 8))

        #expect(Self.delivered(Self.advance(&machine, to: Self.at(hours: 8) - 1)) == nil)
        let effects = Self.advance(&machine, to: Self.at(hours: 8))
        #expect(Self.delivered(effects) == ["first", "second"], "in the order they arrived")
        let shown = try #require(machine.visibleNotifications.first { $0.notification.request.identifier == "second" })
        #expect(shown.summary?.date == Self.at(hours: 8) && shown.summary?.held == false)
        #expect(shown.presentation == Presentation(list: true, lockScreen: true), "quietly, in the list and on the lock screen as decided")
        #expect(machine.nextWakeUpDate() == nil)

        // After the morning summary, the next waits for the evening one.
        _ = try Self.post(&machine, "third")
        #expect(Self.placement(machine, "third")?.date == Self.at(hours: 18))
    }

    @Test func criticalAndAllowedTimeSensitiveNotificationsGoThroughAtOnce() throws {
        var machine = Self.machine()
        _ = try Self.post(&machine, "critical", .critical)
        _ = try Self.post(&machine, "urgent", .timeSensitive)
        _ = try Self.post(&machine, "passive", .passive)
        #expect(Self.placement(machine, "critical") == nil)
        #expect(Self.placement(machine, "urgent") == nil)
        #expect(Self.placement(machine, "passive")?.held == true)

        // With the app's Time Sensitive setting off, a time-sensitive notification waits like the others.
        var settings = machine.settings
        settings.timeSensitiveSetting = .disabled
        _ = machine.changeSettings(settings)
        _ = try Self.post(&machine, "urgent later", .timeSensitive)
        #expect(Self.placement(machine, "urgent later")?.held == true)
    }

    @Test func onlyAnAuthorizedAppPutInTheSummaryWaitsForIt() throws {
        var outside = Self.machine(inSummary: false)
        _ = try Self.post(&outside, "now")
        #expect(Self.placement(outside, "now") == nil)
        #expect(outside.visibleNotifications.first?.presentation.banner == true)

        var summaryOff = Self.machine(summary: nil)
        _ = try Self.post(&summaryOff, "now")
        #expect(Self.placement(summaryOff, "now") == nil)
    }

    @Test func newTimesMoveWhatIsHeldAndTurningTheSummaryOffShowsItAtOnce() throws {
        var machine = Self.machine()
        _ = Self.advance(&machine, to: Self.at(hours: 9))
        _ = try Self.post(&machine, "n")
        #expect(Self.placement(machine, "n")?.date == Self.at(hours: 18))

        #expect(machine.setScheduledSummary(ScheduledSummary(times: [.init(hour: 12, minute: 30)])).isEmpty)
        #expect(Self.placement(machine, "n")?.date == Self.at(hours: 12.5))
        #expect(machine.nextWakeUpDate() == Self.at(hours: 12.5))

        // A time already past today: the summary the notification waited for has come.
        _ = Self.advance(&machine, to: Self.at(hours: 10))
        #expect(machine.setScheduledSummary(ScheduledSummary(times: [.init(hour: 9, minute: 30)])).isEmpty)
        #expect(Self.delivered(Self.advance(&machine, to: Self.at(hours: 10))) == ["n"])

        // Off: what waits is shown at once, as an ordinary notification, not as a summary.
        _ = try Self.post(&machine, "m")
        let released = machine.setScheduledSummary(nil)
        #expect(Self.delivered(released) == nil)
        #expect(released.compactMap { if case .presented(let shown) = $0 { shown.notification.request.identifier } else { nil } } == ["m"])
        #expect(Self.placement(machine, "m") == nil)
        #expect(machine.visibleNotifications.first { $0.notification.request.identifier == "m" }?.presentation == Presentation(list: true, lockScreen: true))
        #expect(machine.nextWakeUpDate() == nil)
    }

    @Test func theSummaryShowsANotificationAsTheSettingsDecidedAndHidesItFromThePersonUntilThen() throws {
        var machine = Self.machine()
        var settings = machine.settings
        settings.notificationCenterSetting = .disabled
        _ = machine.changeSettings(settings)
        _ = try Self.post(&machine, "n")
        #expect(throws: PersonActionRejection.self, "not seen yet, so not acted on") { try machine.respond(to: "n", with: .open) }
        _ = machine.setScheduledSummary(ScheduledSummary(showsNextSummary: true))
        #expect(throws: Never.self, "unless the next summary is shown early") { _ = try machine.respond(to: "n", with: .dismiss) }

        _ = try Self.post(&machine, "m")
        _ = Self.advance(&machine, to: Self.at(hours: 8))
        #expect(Self.placement(machine, "m")?.held == false)
        let shown = machine.visibleNotifications.first { $0.notification.request.identifier == "m" }?.presentation
        #expect(shown == Presentation(lockScreen: true), "Notification Center is off for the app: on the lock screen only")
    }

    @Test func anAppTakenOutOfTheSummaryShowsWhatItHeld() throws {
        var machine = Self.machine()
        _ = try Self.post(&machine, "n")
        var settings = machine.settings
        settings.scheduledDeliverySetting = .disabled
        let effects = machine.changeSettings(settings)
        #expect(Self.delivered(effects) == nil)
        #expect(effects.contains { if case .presented(let shown) = $0 { shown.notification.request.identifier == "n" } else { false } })
        #expect(Self.placement(machine, "n") == nil)
        #expect(machine.nextWakeUpDate() == nil)
    }

    @Test func theSummaryFollowsTheDevicesClockToAnotherTimeZone() throws {
        var machine = Self.machine()
        _ = try Self.post(&machine, "n")
        // 08:00 in Paris (+01:00 in January) is 07:00 UTC.
        #expect(machine.changeTimeZone(TimeZone(identifier: "Europe/Paris")!).isEmpty)
        #expect(Self.placement(machine, "n")?.date == Self.at(hours: 7))
    }

    @Test func whatIsHeldAndWhenItComesAreKeptWithTheSavedMachine() throws {
        var machine = Self.machine()
        _ = try Self.post(&machine, "n")
        let whole = machine.takeWhole()
        var restored = NotificationCenterMachine(
            now: whole.now, nextSequence: whole.nextSequence, core: try #require(whole.core), categories: whole.categories ?? [],
            pending: whole.pending, visible: whole.visible, queued: whole.queued
        )
        #expect(restored.nextWakeUpDate() == Self.at(hours: 8))
        // Brought again by the system at its next step: nothing moves.
        #expect(restored.setScheduledSummary(ScheduledSummary()).isEmpty)
        #expect(Self.delivered(restored.catchUp(to: Self.at(hours: 9)).effects) == ["n"])
    }

    @Test(arguments: [
        ("08:00", ScheduledSummary.Time(hour: 8, minute: 0)), ("23:59", ScheduledSummary.Time(hour: 23, minute: 59)),
        ("00:00", ScheduledSummary.Time(hour: 0, minute: 0)),
        ("24:00", nil), ("8:00", nil), ("08:60", nil), ("08-00", nil), ("08:00:00", nil), ("", nil), ("٠٨:٠٠", nil),
        ("+8:00", nil), ("-0:-0", nil), ("08:+5", nil),
    ])
    func aTimeIsHoursAndMinutesOnATwentyFourHourClock(_ text: String, _ expected: ScheduledSummary.Time?) {
        #expect(ScheduledSummary.Time(text) == expected)
        if let expected { #expect(expected.description == text) }
    }

    @Test func aSummaryHasOneToTwelveDifferentTimes() {
        let noon = ScheduledSummary.Time(hour: 12, minute: 0)
        #expect(ScheduledSummary(times: []).problem != nil)
        #expect(ScheduledSummary(times: [noon, noon]).problem != nil)
        let twelve = (0..<12).map { ScheduledSummary.Time(hour: $0 * 2, minute: 0) }
        #expect(ScheduledSummary(times: twelve).problem == nil)
        #expect(ScheduledSummary(times: twelve + [ScheduledSummary.Time(hour: 1, minute: 0)]).problem != nil)
        #expect(ScheduledSummary(times: [noon, .init(hour: 7, minute: 15)]).times.map(\.description) == ["07:15", "12:00"])
    }
}
