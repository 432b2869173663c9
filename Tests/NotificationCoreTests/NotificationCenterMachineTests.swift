import Foundation
import NotificationCore
import Testing

private typealias Machine = NotificationCenterMachine
private typealias Effect = NotificationCenterMachine.Effect

/// 2026-01-01T00:00:00Z, a Thursday.
private let t0 = Date(timeIntervalSince1970: 1_767_225_600)
private let utc = TimeZone(identifier: "UTC")!
private let gregorian: Calendar = {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = utc
    return calendar
}()

private func at(_ seconds: TimeInterval) -> Date { t0.addingTimeInterval(seconds) }

/// A machine at `t0` in UTC whose app asked for `options` and was allowed them (unless `options` is `nil`).
private func makeMachine(
    appState: AppState = .background,
    authorizing options: AuthorizationOptions? = [.alert, .sound, .badge],
    configuration: Machine.Configuration = Machine.Configuration()
) -> Machine {
    var machine = Machine(now: t0, calendar: gregorian, timeZone: utc, appState: appState, configuration: configuration)
    if let options {
        _ = machine.requestAuthorization(options: options, call: 0)
        _ = machine.answerAuthorizationPrompt(allow: true)
    }
    return machine
}

private func makeRequest(
    _ identifier: String,
    _ trigger: NotificationTrigger? = .timeInterval(60, repeats: false),
    title: String = "Title",
    badge: Int? = nil,
    category: String = ""
) -> NotificationRequest {
    var content = NotificationContent()
    content.title = title
    content.sound = NotificationSound(kind: .default)
    content.badge = badge
    content.categoryIdentifier = category
    return NotificationRequest(identifier: identifier, content: content, trigger: trigger)
}

/// Moves time to `date`, carrying out every step due by then, and returns all their effects in order.
private func advanceAll(_ machine: inout Machine, to date: Date) -> [Effect] {
    var effects: [Effect] = []
    while let step = machine.advance(to: date) { effects += step }
    return effects
}

extension NotificationCenterMachine.Effect {
    /// The identifier of the request a `presented` effect shows.
    fileprivate var presentedIdentifier: String? {
        if case .presented(let shown) = self { shown.notification.request.identifier } else { nil }
    }

    fileprivate var presentation: Presentation? {
        if case .presented(let shown) = self { shown.presentation } else { nil }
    }

    /// The ticket and identifier of an `askWillPresent` effect.
    fileprivate var question: (ticket: UInt64, identifier: String)? {
        if case .askWillPresent(let ticket, let notification) = self { (ticket, notification.request.identifier) } else { nil }
    }

    fileprivate var discarded: String? {
        if case .discardedOverLimit(let request) = self { request.identifier } else { nil }
    }
}

// MARK: - Authorization

@Suite("Notification center machine: authorization")
struct NotificationCenterMachineAuthorizationTests {
    @Test func firstRequestPrompts() {
        var machine = makeMachine(authorizing: nil)
        #expect(machine.requestAuthorization(options: [.alert, .sound], call: 1) == [.promptForAuthorization([.alert, .sound])])
        #expect(machine.isAuthorizationPromptShown)
        #expect(machine.promptedOptions == [.alert, .sound])
        #expect(machine.settings.authorizationStatus == .notDetermined)
    }

    @Test func answeringThePromptCompletesTheCall() {
        var machine = makeMachine(authorizing: nil)
        _ = machine.requestAuthorization(options: [.alert, .badge], call: 1)
        let granted = NotificationSettings.granting([.alert, .badge], status: .authorized)
        #expect(machine.answerAuthorizationPrompt(allow: true) == [.settingsChanged(granted), .authorizationCompleted(call: 1, granted: true)])
        #expect(!machine.isAuthorizationPromptShown)
        #expect(machine.promptedOptions == nil)
        #expect(machine.settings == granted)
    }

    @Test("a request while the prompt is up joins it: one prompt, both calls answered")
    func requestJoinsPendingPrompt() {
        var machine = makeMachine(authorizing: nil)
        #expect(machine.requestAuthorization(options: [.alert], call: 1) == [.promptForAuthorization([.alert])])
        #expect(machine.requestAuthorization(options: [.sound], call: 2) == [])
        #expect(machine.promptedOptions == [.alert])
        let denied = NotificationSettings.granting([.alert], status: .denied)
        #expect(machine.answerAuthorizationPrompt(allow: false) == [
            .settingsChanged(denied), .authorizationCompleted(call: 1, granted: false), .authorizationCompleted(call: 2, granted: false),
        ])
    }

    @Test("after the person answered, requests are answered from the stored state without a prompt")
    func laterRequestsDoNotPrompt() {
        var allowed = makeMachine(authorizing: [.alert])
        #expect(allowed.requestAuthorization(options: [.alert, .sound, .badge], call: 7) == [.authorizationCompleted(call: 7, granted: true)])
        #expect(!allowed.isAuthorizationPromptShown)

        var denied = makeMachine(authorizing: nil)
        _ = denied.requestAuthorization(options: [.alert], call: 1)
        _ = denied.answerAuthorizationPrompt(allow: false)
        #expect(denied.requestAuthorization(options: [.alert], call: 2) == [.authorizationCompleted(call: 2, granted: false)])
        #expect(denied.requestAuthorization(options: [.alert, .provisional], call: 3) == [.authorizationCompleted(call: 3, granted: false)])
        #expect(!denied.isAuthorizationPromptShown)
    }

    @Test("a provisional request is granted at once, with no prompt")
    func provisionalIsGrantedAtOnce() {
        var machine = makeMachine(authorizing: nil)
        let provisional = NotificationSettings.granting([.alert, .sound, .provisional], status: .provisional)
        #expect(machine.requestAuthorization(options: [.alert, .sound, .provisional], call: 1) == [
            .settingsChanged(provisional), .authorizationCompleted(call: 1, granted: true),
        ])
        #expect(!machine.isAuthorizationPromptShown)
        #expect(machine.settings.authorizationStatus == .provisional)
        #expect(machine.requestAuthorization(options: [.provisional], call: 2) == [.authorizationCompleted(call: 2, granted: true)])
    }

    @Test("an explicit request while provisional prompts for full authorization")
    func explicitRequestWhileProvisionalPrompts() {
        var machine = makeMachine(authorizing: nil)
        _ = machine.requestAuthorization(options: [.provisional], call: 1)
        #expect(machine.requestAuthorization(options: [.alert, .sound], call: 2) == [.promptForAuthorization([.alert, .sound])])
        let granted = NotificationSettings.granting([.alert, .sound], status: .authorized)
        #expect(machine.answerAuthorizationPrompt(allow: true) == [.settingsChanged(granted), .authorizationCompleted(call: 2, granted: true)])
        #expect(machine.settings.authorizationStatus == .authorized)
    }

    @Test func answeringWithNoPromptDoesNothing() {
        var machine = makeMachine(authorizing: nil)
        #expect(machine.answerAuthorizationPrompt(allow: true) == [])
        #expect(machine.settings == .notDetermined)
    }

    @Test("adding a request needs authorization", arguments: [false, true])
    func addNeedsAuthorization(asked: Bool) {
        var machine = makeMachine(authorizing: nil)
        if asked {
            _ = machine.requestAuthorization(options: [.alert], call: 1)
            _ = machine.answerAuthorizationPrompt(allow: false)
        }
        #expect(throws: NotificationFailure(.notificationsNotAllowed)) {
            try machine.add(makeRequest("a"))
        }
        #expect(machine.pendingRequests.isEmpty)
    }

    @Test func provisionalAppsMayAdd() throws {
        var machine = makeMachine(authorizing: [.provisional])
        #expect(try machine.add(makeRequest("a")) == [])
        #expect(machine.pendingRequests.map(\.request.identifier) == ["a"])
    }

    @Test func changingSettingsReportsOnlyChanges() {
        var machine = makeMachine()
        #expect(machine.changeSettings(machine.settings) == [])
        var quieter = machine.settings
        quieter.soundSetting = .disabled
        #expect(machine.changeSettings(quieter) == [.settingsChanged(quieter)])
        #expect(machine.settings == quieter)
    }

    @Test("notifications due after the person turned them off are not delivered")
    func noDeliveryAfterDenial() throws {
        var machine = makeMachine()
        _ = try machine.add(makeRequest("a"))
        var off = machine.settings
        off.authorizationStatus = .denied
        _ = machine.changeSettings(off)
        #expect(advanceAll(&machine, to: at(60)) == [])
        #expect(machine.visibleNotifications.isEmpty)
    }
}

// MARK: - Pending requests and firing

@Suite("Notification center machine: pending requests and firing")
struct NotificationCenterMachinePendingTests {
    @Test func addSchedulesWithoutEffects() throws {
        var machine = makeMachine()
        #expect(try machine.add(makeRequest("a", .timeInterval(90, repeats: false))) == [])
        #expect(machine.pendingRequests.map(\.request.identifier) == ["a"])
        #expect(machine.pendingRequests.first?.nextFireDate == at(90))
        #expect(machine.nextWakeUpDate() == at(90))
    }

    @Test("adding the same identifier replaces the pending request and its date")
    func addReplacesPending() throws {
        var machine = makeMachine()
        _ = try machine.add(makeRequest("a", .timeInterval(60, repeats: false), title: "old"))
        _ = try machine.add(makeRequest("a", .timeInterval(120, repeats: false), title: "new"))
        #expect(machine.pendingRequests.count == 1)
        #expect(machine.pendingRequests.first?.request.content.title == "new")
        #expect(advanceAll(&machine, to: at(119)) == [])
        let effects = advanceAll(&machine, to: at(120))
        #expect(effects.compactMap(\.presentedIdentifier) == ["a"])
        #expect(machine.deliveredNotifications.map(\.request.content.title) == ["new"])
    }

    @Test func removePendingRequests() throws {
        var machine = makeMachine()
        _ = try machine.add(makeRequest("a"))
        _ = try machine.add(makeRequest("b"))
        _ = try machine.add(makeRequest("c"))
        machine.removePendingRequests(["a", "nope", "c"])
        #expect(machine.pendingRequests.map(\.request.identifier) == ["b"])
        #expect(advanceAll(&machine, to: at(60)).compactMap(\.presentedIdentifier) == ["b"])
    }

    @Test func removeAllPendingRequests() throws {
        var machine = makeMachine()
        _ = try machine.add(makeRequest("a"))
        _ = try machine.add(makeRequest("b", .timeInterval(60, repeats: true)))
        machine.removeAllPendingRequests()
        #expect(machine.pendingRequests.isEmpty)
        #expect(machine.nextWakeUpDate() == nil)
        #expect(advanceAll(&machine, to: at(3600)) == [])
    }

    @Test func emptyContentIsRejected() {
        var machine = makeMachine()
        let empty = NotificationRequest(identifier: "a", content: NotificationContent(), trigger: .timeInterval(60, repeats: false))
        #expect(throws: NotificationFailure(.notificationInvalidNoContent)) { try machine.add(empty) }
    }

    @Test("a badge alone is content")
    func badgeAloneIsContent() throws {
        var machine = makeMachine()
        var content = NotificationContent()
        content.badge = 1
        #expect(try machine.add(NotificationRequest(identifier: "a", content: content, trigger: .timeInterval(60, repeats: false))) == [])
    }

    @Test("calendar components that never match are rejected", arguments: [DateComponents(month: 2, day: 30), DateComponents()])
    func neverMatchingCalendarIsRejected(components: DateComponents) {
        var machine = makeMachine()
        for repeats in [false, true] {
            #expect(throws: NotificationFailure(.notificationInvalidNoDate, detail: "No date matches the trigger's date components.")) {
                try machine.add(makeRequest("a", .calendar(components, repeats: repeats)))
            }
        }
        #expect(machine.pendingRequests.isEmpty)
    }

    @Test("a request with no trigger fires at once, and replaces a pending one")
    func noTriggerFiresAtOnce() throws {
        var machine = makeMachine()
        _ = try machine.add(makeRequest("a", .timeInterval(60, repeats: false)))
        let effects = try machine.add(makeRequest("a", nil))
        #expect(effects.compactMap(\.presentedIdentifier) == ["a"])
        #expect(machine.pendingRequests.isEmpty)
        #expect(machine.deliveredNotifications.first?.date == t0)
    }

    @Test("requests fire in due order; ties fire in the order they were added")
    func firesInDueOrder() throws {
        var machine = makeMachine()
        _ = try machine.add(makeRequest("late", .timeInterval(120, repeats: false)))
        _ = try machine.add(makeRequest("tie1", .timeInterval(90, repeats: false)))
        _ = try machine.add(makeRequest("early", .timeInterval(60, repeats: false)))
        _ = try machine.add(makeRequest("tie2", .timeInterval(90, repeats: false)))
        _ = try machine.add(makeRequest("tie3", .timeInterval(90, repeats: false)))
        #expect(advanceAll(&machine, to: at(500)).compactMap(\.presentedIdentifier) == ["early", "tie1", "tie2", "tie3", "late"])
        #expect(machine.deliveredNotifications.map(\.request.identifier) == ["early", "tie1", "tie2", "tie3", "late"])
        #expect(machine.deliveredNotifications.map(\.date) == [at(60), at(90), at(90), at(90), at(120)])
    }

    @Test("advance does one step at a time and returns nil when nothing is due")
    func advanceStepsOneAtATime() throws {
        var machine = makeMachine()
        _ = try machine.add(makeRequest("a", .timeInterval(60, repeats: false)))
        _ = try machine.add(makeRequest("b", .timeInterval(60, repeats: false)))
        #expect(machine.advance(to: at(59.999)) == nil)
        #expect(machine.now == at(59.999))
        #expect(machine.advance(to: at(100))?.compactMap(\.presentedIdentifier) == ["a"])
        #expect(machine.now == at(60))
        #expect(machine.advance(to: at(100))?.compactMap(\.presentedIdentifier) == ["b"])
        #expect(machine.advance(to: at(100)) == nil)
        #expect(machine.now == at(100))
    }

    @Test("time never runs backwards")
    func timeNeverRunsBackwards() {
        var machine = makeMachine()
        _ = machine.advance(to: at(100))
        _ = machine.advance(to: at(50))
        #expect(machine.now == at(100))
    }

    @Test("a repeating interval fires at its cadence and stays pending")
    func repeatingIntervalFiresAtCadence() throws {
        var machine = makeMachine()
        _ = try machine.add(makeRequest("tick", .timeInterval(60, repeats: true)))
        var fireDates: [Date] = []
        // Time jumps well past several fire dates at once; each fires at its own date, with no drift.
        for step in advanceAll(&machine, to: at(185)) {
            if case .presented(let shown) = step { fireDates.append(shown.notification.date) }
        }
        #expect(fireDates == [at(60), at(120), at(180)])
        #expect(machine.pendingRequests.first?.nextFireDate == at(240))
    }

    @Test("a delivered notification is replaced when the same identifier fires again")
    func firingAgainReplacesDelivered() throws {
        var machine = makeMachine()
        _ = try machine.add(makeRequest("a", .timeInterval(60, repeats: false), title: "first"))
        _ = try machine.add(makeRequest("b", .timeInterval(90, repeats: false)))
        _ = advanceAll(&machine, to: at(90))
        _ = try machine.add(makeRequest("a", .timeInterval(60, repeats: false), title: "second"))
        _ = advanceAll(&machine, to: at(150))
        #expect(machine.deliveredNotifications.map(\.request.identifier) == ["b", "a"])
        #expect(machine.deliveredNotifications.last?.request.content.title == "second")
        #expect(machine.deliveredNotifications.last?.date == at(150))
    }

    @Test func removeDeliveredNotifications() throws {
        var machine = makeMachine()
        _ = try machine.add(makeRequest("a", nil))
        _ = try machine.add(makeRequest("b", nil))
        _ = try machine.add(makeRequest("c", nil))
        machine.removeDeliveredNotifications(["b", "nope"])
        #expect(machine.deliveredNotifications.map(\.request.identifier) == ["a", "c"])
        machine.removeAllDeliveredNotifications()
        #expect(machine.deliveredNotifications.isEmpty)
        #expect(machine.visibleNotifications.isEmpty)
    }
}

// MARK: - Presentation

@Suite("Notification center machine: presentation")
struct NotificationCenterMachinePresentationTests {
    @Test("in the foreground the delegate is asked, and its answer decides")
    func foregroundAsksThenAnswerDecides() throws {
        var machine = makeMachine(appState: .foreground)
        _ = try machine.add(makeRequest("a", badge: 4))
        let asked = advanceAll(&machine, to: at(60))
        #expect(asked.count == 1)
        let question = try #require(asked.first?.question)
        #expect(question.identifier == "a")
        #expect(machine.openTickets == 1)
        #expect(machine.visibleNotifications.isEmpty)

        let answered = machine.answerWillPresent(ticket: question.ticket, options: [.banner, .list, .sound, .badge])
        #expect(answered.map(\.presentation) == [Presentation(banner: true, list: true, sound: true, badge: 4), nil])
        #expect(answered.last == .badgeChanged(4))
        #expect(machine.badge == 4)
        #expect(machine.openTickets == 0)
        #expect(machine.deliveredNotifications.map(\.request.identifier) == ["a"])
        // The question is closed: a second answer and the old deadline do nothing.
        #expect(machine.answerWillPresent(ticket: question.ticket, options: [.banner]) == [])
        #expect(advanceAll(&machine, to: at(3600)) == [])
    }

    @Test("a banner without .list is seen but not kept among the delivered notifications")
    func bannerOnlyIsNotDelivered() throws {
        var machine = makeMachine(appState: .foreground)
        _ = try machine.add(makeRequest("a"))
        let ticket = try #require(advanceAll(&machine, to: at(60)).first?.question?.ticket)
        _ = machine.answerWillPresent(ticket: ticket, options: [.banner])
        #expect(machine.visibleNotifications.map(\.presentation) == [Presentation(banner: true)])
        #expect(machine.deliveredNotifications.isEmpty)
    }

    @Test("a delegate without willPresent, or answering nothing, presents nothing", arguments: [nil, PresentationOptions()])
    func noOptionsPresentNothing(options: PresentationOptions?) throws {
        var machine = makeMachine(appState: .foreground)
        _ = try machine.add(makeRequest("a", badge: 2))
        let ticket = try #require(advanceAll(&machine, to: at(60)).first?.question?.ticket)
        let effects = machine.answerWillPresent(ticket: ticket, options: options)
        #expect(effects.map(\.presentation) == [Presentation.none])
        #expect(machine.visibleNotifications.isEmpty)
        #expect(machine.badge == 0)
    }

    @Test("an unanswered willPresent expires at its deadline: nothing is presented")
    func willPresentDeadline() throws {
        var machine = makeMachine(appState: .foreground)
        _ = try machine.add(makeRequest("a"))
        let asked = advanceAll(&machine, to: at(60))
        let ticket = try #require(asked.first?.question?.ticket)
        guard case .askWillPresent(_, let notification) = asked.first else { return }

        #expect(advanceAll(&machine, to: at(64.999)) == [])
        let expired = advanceAll(&machine, to: at(65))
        #expect(expired.first == .willPresentTimedOut(ticket: ticket, notification))
        #expect(expired.dropFirst().map(\.presentation) == [Presentation.none])
        #expect(machine.visibleNotifications.isEmpty)
        #expect(machine.openTickets == 0)
        // A late answer changes nothing.
        #expect(machine.answerWillPresent(ticket: ticket, options: [.banner, .list]) == [])
        #expect(machine.visibleNotifications.isEmpty)
    }

    @Test("the willPresent deadline follows the configuration")
    func willPresentDeadlineIsConfigurable() throws {
        var configuration = Machine.Configuration()
        configuration.willPresentTimeout = 1
        var machine = makeMachine(appState: .foreground, configuration: configuration)
        _ = try machine.add(makeRequest("a"))
        guard case .askWillPresent(let ticket, let notification) = advanceAll(&machine, to: at(60)).first else {
            Issue.record("expected askWillPresent")
            return
        }
        #expect(advanceAll(&machine, to: at(60.999)) == [])
        #expect(advanceAll(&machine, to: at(61)).first == .willPresentTimedOut(ticket: ticket, notification))
    }

    @Test("in the background the person's settings decide", arguments: [AppState.background, .notRunning])
    func backgroundPresentsPerSettings(state: AppState) throws {
        var machine = makeMachine(appState: state)
        _ = try machine.add(makeRequest("a", badge: 9))
        let effects = advanceAll(&machine, to: at(60))
        #expect(effects.map(\.presentation) == [Presentation(banner: true, list: true, lockScreen: true, sound: true, badge: 9), nil])
        #expect(effects.last == .badgeChanged(9))
        #expect(machine.openTickets == 0)
    }

    @Test("on a locked device an app in the foreground is not asked: the settings decide, lock screen included")
    func lockedDeviceHasNoForegroundApp() throws {
        var machine = makeMachine(appState: .foreground)
        machine.setDeviceLocked(true)
        _ = try machine.add(makeRequest("a", badge: 2))
        let effects = advanceAll(&machine, to: at(60))
        #expect(effects.map(\.presentation) == [Presentation(banner: true, list: true, lockScreen: true, sound: true, badge: 2), nil])
        #expect(machine.openTickets == 0)
    }

    @Test("a notification keeps its category's hidden-previews placeholder and summary format as they were when it came")
    func visibleNotificationKeepsItsCategorysTexts() throws {
        var machine = makeMachine()
        try machine.setCategories([NotificationCategory(identifier: "message", actions: [], hiddenPreviewsBodyPlaceholder: "%u messages",
                                                        categorySummaryFormat: "%u more from %@"), NotificationCategory(identifier: "plain", actions: [])])
        _ = try machine.add(makeRequest("m", category: "message"))
        _ = try machine.add(makeRequest("p", category: "plain"))
        _ = advanceAll(&machine, to: at(60))
        try machine.setCategories([])
        let shown = Dictionary(uniqueKeysWithValues: machine.visibleNotifications.map { ($0.notification.request.identifier, $0) })
        #expect(shown["m"]?.hiddenPreviewsBodyPlaceholder == "%u messages")
        #expect(shown["m"]?.categorySummaryFormat == "%u more from %@")
        #expect(shown["p"]?.hiddenPreviewsBodyPlaceholder == nil)
        #expect(shown["p"]?.categorySummaryFormat == nil)
    }

    @Test("in the background a person who turned sounds off hears nothing")
    func backgroundHonoursSoundSetting() throws {
        var machine = makeMachine(appState: .background)
        var settings = machine.settings
        settings.soundSetting = .disabled
        _ = machine.changeSettings(settings)
        _ = try machine.add(makeRequest("a"))
        #expect(advanceAll(&machine, to: at(60)).map(\.presentation) == [Presentation(banner: true, list: true, lockScreen: true)])
    }

    @Test("provisional notifications arrive quietly in the list")
    func provisionalArrivesQuietly() throws {
        var machine = makeMachine(appState: .background, authorizing: [.alert, .sound, .badge, .provisional])
        _ = try machine.add(makeRequest("a", badge: 3))
        #expect(advanceAll(&machine, to: at(60)).map(\.presentation) == [Presentation(list: true)])
        #expect(machine.badge == 0)
    }

    @Test("the badge is only reported when it changes")
    func badgeReportedOnChange() throws {
        var machine = makeMachine()
        _ = try machine.add(makeRequest("a", .timeInterval(60, repeats: false), badge: 1))
        _ = try machine.add(makeRequest("b", .timeInterval(61, repeats: false), badge: 1))
        #expect(advanceAll(&machine, to: at(61)).filter { $0.presentation == nil } == [.badgeChanged(1)])
    }
}

// MARK: - The 64-request limit

@Suite("Notification center machine: pending limit")
struct NotificationCenterMachineLimitTests {
    @Test("the 64th request is accepted; the 65th causes exactly one discard, of the latest")
    func sixtyFifthDiscardsLatest() throws {
        var machine = makeMachine()
        for index in 1...64 {
            #expect(try machine.add(makeRequest("r\(index)", .timeInterval(TimeInterval(index * 10), repeats: false))) == [])
        }
        #expect(machine.pendingRequests.count == 64)
        let effects = try machine.add(makeRequest("r65", .timeInterval(650, repeats: false)))
        #expect(effects == [.discardedOverLimit(makeRequest("r65", .timeInterval(650, repeats: false)))])
        #expect(machine.pendingRequests.count == 64)
    }

    @Test("a sooner 65th request stays, and the latest-firing one is dropped instead")
    func soonerRequestDisplacesLatest() throws {
        var machine = makeMachine()
        for index in 1...64 {
            _ = try machine.add(makeRequest("r\(index)", .timeInterval(TimeInterval(index * 10), repeats: false)))
        }
        let effects = try machine.add(makeRequest("soon", .timeInterval(5, repeats: false)))
        #expect(effects.compactMap(\.discarded) == ["r64"])
        #expect(machine.pendingRequests.map(\.request.identifier).contains("soon"))
        #expect(!machine.pendingRequests.map(\.request.identifier).contains("r64"))
        // The dropped request never fires.
        let fired = advanceAll(&machine, to: at(10_000)).compactMap(\.presentedIdentifier)
        #expect(fired.count == 64)
        #expect(!fired.contains("r64"))
        #expect(fired.first == "soon")
    }

    @Test("a repeating request counts once, however often it fires before the others")
    func repeatingCountsOnce() throws {
        var machine = makeMachine()
        _ = try machine.add(makeRequest("every minute", .timeInterval(60, repeats: true)))
        for index in 1...63 {
            #expect(try machine.add(makeRequest("r\(index)", .timeInterval(TimeInterval(3600 + index), repeats: false))) == [])
        }
        let effects = try machine.add(makeRequest("r64", .timeInterval(1800, repeats: false)))
        #expect(effects.compactMap(\.discarded) == ["r63"])
        #expect(machine.pendingRequests.contains { $0.request.identifier == "every minute" })
    }

    @Test("among requests firing at the same time, the newest is discarded")
    func tiesDiscardNewest() throws {
        var machine = makeMachine()
        for index in 1...65 {
            let effects = try machine.add(makeRequest("r\(index)", .timeInterval(60, repeats: false)))
            #expect(effects.compactMap(\.discarded) == (index == 65 ? ["r65"] : []))
        }
    }

    @Test("location requests have no date and do not count")
    func locationRequestsDoNotCount() throws {
        var machine = makeMachine()
        let region = CircularRegion(identifier: "home", center: Coordinate(latitude: 0, longitude: 0), radius: 100)
        for index in 1...64 {
            _ = try machine.add(makeRequest("r\(index)", .timeInterval(TimeInterval(index), repeats: false)))
        }
        #expect(try machine.add(makeRequest("here", .location(region, repeats: false))) == [])
        #expect(machine.pendingRequests.count == 65)
    }

    @Test("replacing a pending request does not count twice")
    func replacingDoesNotCount() throws {
        var machine = makeMachine()
        for index in 1...64 {
            _ = try machine.add(makeRequest("r\(index)", .timeInterval(TimeInterval(index), repeats: false)))
        }
        #expect(try machine.add(makeRequest("r1", .timeInterval(5000, repeats: false))) == [])
        #expect(machine.pendingRequests.count == 64)
    }

    @Test("with no limit configured nothing is discarded")
    func noLimit() throws {
        var configuration = Machine.Configuration()
        configuration.pendingRequestLimit = nil
        var machine = makeMachine(configuration: configuration)
        for index in 1...200 {
            #expect(try machine.add(makeRequest("r\(index)", .timeInterval(TimeInterval(index), repeats: false))) == [])
        }
        #expect(machine.pendingRequests.count == 200)
    }
}

// MARK: - Location and time zone

@Suite("Notification center machine: location and time zone")
struct NotificationCenterMachineLocationAndZoneTests {
    static let home = Coordinate(latitude: 52.5200, longitude: 13.4050)
    /// About 1.1 km north of home.
    static let away = Coordinate(latitude: 52.5300, longitude: 13.4050)

    static func region(entry: Bool, exit: Bool) -> CircularRegion {
        CircularRegion(identifier: "home", center: home, radius: 200, notifyOnEntry: entry, notifyOnExit: exit)
    }

    /// What a store indexes at every step (``NotificationCenterMachine/watchesLocation``) is what a
    /// scan of the pending requests says, however they come and go, and in a machine a store rebuilt.
    @Test("whether the machine watches the location follows its requests")
    func watchingFollowsTheRequests() throws {
        func scanned(_ machine: Machine) -> Bool {
            machine.pendingRequests.contains { if case .location? = $0.request.trigger { true } else { false } }
        }
        var machine = makeMachine()
        var seen: [Bool] = []
        func note() {
            #expect(machine.watchesLocation == scanned(machine))
            seen.append(machine.watchesLocation)
        }
        _ = machine.updateLocation(Self.away)
        note()
        _ = try machine.add(makeRequest("arrive", .location(Self.region(entry: true, exit: false), repeats: false)))
        _ = try machine.add(makeRequest("leave", .location(Self.region(entry: false, exit: true), repeats: true)))
        _ = try machine.add(makeRequest("later", .timeInterval(60, repeats: false)))
        note()
        _ = try machine.add(makeRequest("arrive", .timeInterval(30, repeats: false)))  // replaced by a dated request
        note()
        _ = machine.updateLocation(Self.home)
        note()
        let whole = machine.takeWhole()
        let rebuilt = Machine(now: whole.now, nextSequence: whole.nextSequence, core: try #require(whole.core), categories: whole.categories ?? [],
                              pending: whole.pending, visible: whole.visible, queued: whole.queued)
        #expect(rebuilt.watchesLocation == scanned(rebuilt) && rebuilt.watchesLocation)
        // Decoded whole, as the store's format before v4 kept it: it scans, and says the same.
        let decoded = try JSONDecoder().decode(Machine.self, from: JSONEncoder().encode(machine))
        #expect(decoded.watchesLocation == scanned(decoded) && decoded.watchesLocation)
        machine.removePendingRequests(["leave"])
        note()
        _ = try machine.add(makeRequest("arrive", .location(Self.region(entry: true, exit: false), repeats: false)))
        note()
        _ = machine.updateLocation(Self.away)
        _ = machine.updateLocation(Self.home)  // fires once, and is gone
        note()
        _ = try machine.add(makeRequest("again", .location(Self.region(entry: true, exit: true), repeats: true)))
        note()
        machine.removeAllPendingRequests()
        note()
        #expect(seen == [false, true, true, true, false, true, false, true, false])
    }

    @Test("entering a region fires an entry trigger once")
    func entryFires() throws {
        var machine = makeMachine()
        _ = machine.updateLocation(Self.away)
        _ = try machine.add(makeRequest("arrive", .location(Self.region(entry: true, exit: false), repeats: false)))
        #expect(machine.updateLocation(Self.away) == [])
        #expect(machine.updateLocation(Self.home).compactMap(\.presentedIdentifier) == ["arrive"])
        #expect(machine.pendingRequests.isEmpty)
        _ = machine.updateLocation(Self.away)
        #expect(machine.updateLocation(Self.home) == [])
    }

    @Test("with no location known yet the device counts as outside")
    func unknownLocationIsOutside() throws {
        var machine = makeMachine()
        _ = try machine.add(makeRequest("arrive", .location(Self.region(entry: true, exit: false), repeats: false)))
        #expect(machine.pendingRequests.first?.insideRegion == false)
        #expect(machine.updateLocation(Self.home).compactMap(\.presentedIdentifier) == ["arrive"])
    }

    @Test("leaving a region fires an exit trigger; entering it does not")
    func exitFires() throws {
        var machine = makeMachine()
        _ = machine.updateLocation(Self.home)
        _ = try machine.add(makeRequest("leave", .location(Self.region(entry: false, exit: true), repeats: false)))
        #expect(machine.pendingRequests.first?.insideRegion == true)
        #expect(machine.updateLocation(Self.away).compactMap(\.presentedIdentifier) == ["leave"])

        var entryOnly = makeMachine()
        _ = entryOnly.updateLocation(Self.home)
        _ = try entryOnly.add(makeRequest("arrive", .location(Self.region(entry: true, exit: false), repeats: false)))
        #expect(entryOnly.updateLocation(Self.away) == [])
    }

    @Test("a trigger with neither entry nor exit never fires")
    func neitherNeverFires() throws {
        var machine = makeMachine()
        _ = try machine.add(makeRequest("never", .location(Self.region(entry: false, exit: false), repeats: true)))
        #expect(machine.updateLocation(Self.home) == [])
        #expect(machine.updateLocation(Self.away) == [])
    }

    @Test("a repeating region trigger fires on every crossing and stays pending")
    func repeatingRegion() throws {
        var machine = makeMachine()
        _ = try machine.add(makeRequest("both", .location(Self.region(entry: true, exit: true), repeats: true)))
        var fired: [String] = []
        for place in [Self.home, Self.home, Self.away, Self.away, Self.home] {
            fired += machine.updateLocation(place).compactMap(\.presentedIdentifier)
        }
        #expect(fired == ["both", "both", "both"])
        #expect(machine.pendingRequests.map(\.request.identifier) == ["both"])
    }

    @Test("location triggers fire at the time of the update")
    func locationFiresAtNow() throws {
        var machine = makeMachine()
        _ = try machine.add(makeRequest("arrive", .location(Self.region(entry: true, exit: false), repeats: false)))
        _ = machine.advance(to: at(500))
        _ = machine.updateLocation(Self.home)
        #expect(machine.visibleNotifications.map(\.notification.date) == [at(500)])
    }

    @Test("as on Apple's platforms, a notification fired by a location trigger is seen but not listed as delivered")
    func locationNotificationsAreNotListed() throws {
        var machine = makeMachine()
        _ = try machine.add(makeRequest("arrive", .location(Self.region(entry: true, exit: false), repeats: false)))
        _ = try machine.add(makeRequest("timed", nil))
        let effects = machine.updateLocation(Self.home)
        #expect(effects.compactMap(\.presentation) == [Presentation(banner: true, list: true, lockScreen: true, sound: true)])
        #expect(machine.visibleNotifications.map(\.notification.request.identifier) == ["timed", "arrive"])
        #expect(machine.deliveredNotifications.map(\.request.identifier) == ["timed"])
        machine.removeDeliveredNotifications(["arrive"])
        #expect(machine.visibleNotifications.map(\.notification.request.identifier) == ["timed"])
    }

    @Test("a time zone change re-targets calendar triggers that name no zone, and only those")
    func timeZoneChangeRetargets() throws {
        var machine = makeMachine()
        var pinned = DateComponents(hour: 9)
        pinned.timeZone = utc
        _ = try machine.add(makeRequest("local", .calendar(DateComponents(hour: 9), repeats: true)))
        _ = try machine.add(makeRequest("pinned", .calendar(pinned, repeats: true)))
        _ = try machine.add(makeRequest("interval", .timeInterval(3600, repeats: false)))
        #expect(machine.pendingRequests.map(\.nextFireDate) == [at(9 * 3600), at(9 * 3600), at(3600)])

        let tokyo = try #require(TimeZone(identifier: "Asia/Tokyo"))
        #expect(machine.changeTimeZone(tokyo).isEmpty)
        #expect(machine.timeZone == tokyo)
        // 09:00 in Tokyo (+09:00) is midnight UTC; t0 is exactly that, so the next is a day later.
        #expect(machine.pendingRequests.map(\.nextFireDate) == [at(86_400), at(9 * 3600), at(3600)])
        #expect(advanceAll(&machine, to: at(9 * 3600)).compactMap(\.presentedIdentifier) == ["interval", "pinned"])
        #expect(advanceAll(&machine, to: at(86_400)).compactMap(\.presentedIdentifier) == ["local"])
        // After firing it keeps following the new zone: 09:00 Tokyo every day.
        #expect(machine.pendingRequests.first { $0.request.identifier == "local" }?.nextFireDate == at(2 * 86_400))
    }
}

// MARK: - Responses

@Suite("Notification center machine: responses")
struct NotificationCenterMachineResponseTests {
    static let todo = NotificationCategory(
        identifier: "todo",
        actions: [
            NotificationAction(identifier: "done", title: "Done"),
            NotificationAction(identifier: "reply", title: "Reply", textInput: .init(buttonTitle: "Send", placeholder: "Message")),
            NotificationAction(identifier: "secure", title: "Delete", options: [.authenticationRequired, .destructive]),
            NotificationAction(identifier: "open", title: "Open", options: [.foreground]),
        ]
    )

    /// A machine with one visible notification "n" of category `todo`, delivered at 60 s.
    fileprivate static func withVisibleNotification(
        appState: AppState = .background,
        categoryOptions: CategoryOptions = [],
        authorizing options: AuthorizationOptions = [.alert, .sound, .badge]
    ) throws -> (Machine, DeliveredNotification) {
        var machine = makeMachine(appState: .background, authorizing: options)
        var category = todo
        category.options = categoryOptions
        try machine.setCategories([category])
        _ = try machine.add(makeRequest("n", category: "todo"))
        _ = advanceAll(&machine, to: at(60))
        _ = machine.setAppState(appState)
        let notification = try #require(machine.visibleNotifications.first?.notification)
        return (machine, notification)
    }

    @Test("the person can pick a plain action; the notification leaves the list")
    func plainAction() throws {
        var (machine, notification) = try Self.withVisibleNotification()
        let effects = try machine.respond(to: "n", with: .action("done"))
        // Every surface hears that it left the screen, then the app gets the response.
        guard effects.first == .personActed(identifier: "n", actionIdentifier: "done"),
              case .deliverResponse(let ticket, let response) = effects.last, effects.count == 2 else {
            Issue.record("expected personActed then deliverResponse, got \(effects)")
            return
        }
        #expect(response == NotificationResponse(notification: notification, actionIdentifier: "done"))
        #expect(machine.visibleNotifications.isEmpty)
        #expect(machine.openTickets == 1)
        machine.completeResponse(ticket: ticket)
        #expect(machine.openTickets == 0)
        #expect(advanceAll(&machine, to: at(3600)) == [])
    }

    @Test func unknownActionIsRejected() throws {
        var (machine, _) = try Self.withVisibleNotification()
        #expect(throws: PersonActionRejection.unknownAction("nope")) { try machine.respond(to: "n", with: .action("nope")) }
        #expect(machine.visibleNotifications.count == 1)
    }

    @Test func unknownNotificationIsRejected() throws {
        var (machine, _) = try Self.withVisibleNotification()
        #expect(throws: PersonActionRejection.notificationNotFound("other")) { try machine.respond(to: "other", with: .open) }
    }

    @Test("text cannot be sent to a plain button")
    func textOnPlainAction() throws {
        var (machine, _) = try Self.withVisibleNotification()
        #expect(throws: PersonActionRejection.textInputNotAccepted("done")) { try machine.respond(to: "n", with: .reply("done", text: "hi")) }
    }

    @Test("a text-input action must be answered with text")
    func plainPickOnTextAction() throws {
        var (machine, _) = try Self.withVisibleNotification()
        #expect(throws: PersonActionRejection.textInputRequired("reply")) { try machine.respond(to: "n", with: .action("reply")) }
    }

    @Test("a reply carries the typed text")
    func replyCarriesText() throws {
        var (machine, notification) = try Self.withVisibleNotification()
        let effects = try machine.respond(to: "n", with: .reply("reply", text: "On my way"))
        guard case .deliverResponse(_, let response) = effects.last else {
            Issue.record("expected deliverResponse, got \(effects)")
            return
        }
        #expect(response == NotificationResponse(notification: notification, actionIdentifier: "reply", userText: "On my way"))
    }

    @Test("on a locked device, actions that need unlocking are refused", arguments: [
        (PersonAction.action("secure"), "secure"),
        (PersonAction.action("open"), "open"),
        (PersonAction.open, SystemActionIdentifier.default),
    ])
    func lockedDevice(action: PersonAction, identifier: String) throws {
        var (machine, _) = try Self.withVisibleNotification()
        machine.setDeviceLocked(true)
        #expect(throws: PersonActionRejection.deviceLocked(identifier)) { try machine.respond(to: "n", with: action) }
        #expect(machine.visibleNotifications.count == 1)
        machine.setDeviceLocked(false)
        #expect(try machine.respond(to: "n", with: action).isEmpty == false)
    }

    @Test("on a locked device, plain actions, replies and dismissals still work", arguments: [
        PersonAction.action("done"), .reply("reply", text: "ok"), .dismiss,
    ])
    func lockedDeviceAllowsPlainActions(action: PersonAction) throws {
        var (machine, _) = try Self.withVisibleNotification(categoryOptions: [.customDismissAction])
        machine.setDeviceLocked(true)
        let effects = try machine.respond(to: "n", with: action)
        #expect(effects.count == 2, "it leaves the screen, and the app hears of it")
        #expect(machine.appState == .background)
    }

    @Test("a dismissal reaches the app only with customDismissAction")
    func dismissNeedsCustomDismissAction() throws {
        var (quiet, _) = try Self.withVisibleNotification()
        // Only the surfaces hear of it: the notification leaves every one of them.
        #expect(try quiet.respond(to: "n", with: .dismiss) == [.personActed(identifier: "n", actionIdentifier: SystemActionIdentifier.dismiss)])
        #expect(quiet.visibleNotifications.isEmpty)
        #expect(quiet.openTickets == 0)

        var (reported, notification) = try Self.withVisibleNotification(categoryOptions: [.customDismissAction])
        let effects = try reported.respond(to: "n", with: .dismiss)
        guard effects.first == .personActed(identifier: "n", actionIdentifier: SystemActionIdentifier.dismiss),
              case .deliverResponse(_, let response) = effects.last, effects.count == 2 else {
            Issue.record("expected personActed then deliverResponse, got \(effects)")
            return
        }
        #expect(response == NotificationResponse(notification: notification, actionIdentifier: SystemActionIdentifier.dismiss))
        #expect(reported.appState == .background)
    }

    @Test("opening the notification brings the app to the foreground")
    func openBringsAppForward() throws {
        var (machine, notification) = try Self.withVisibleNotification()
        let effects = try machine.respond(to: "n", with: .open)
        #expect(effects.first == .personActed(identifier: "n", actionIdentifier: SystemActionIdentifier.default))
        #expect(effects.dropFirst().first == .appStateChanged(.foreground))
        guard case .deliverResponse(_, let response) = effects.last, effects.count == 3 else {
            Issue.record("expected personActed, appStateChanged then deliverResponse, got \(effects)")
            return
        }
        #expect(response.actionIdentifier == SystemActionIdentifier.default)
        #expect(response.notification == notification)
        #expect(machine.appState == .foreground)
    }

    @Test("a foreground action brings the app to the foreground; a plain one does not")
    func foregroundActionBringsAppForward() throws {
        var (machine, _) = try Self.withVisibleNotification()
        let effects = try machine.respond(to: "n", with: .action("open"))
        #expect(effects.dropFirst().first == .appStateChanged(.foreground))
        #expect(machine.appState == .foreground)

        var (plain, _) = try Self.withVisibleNotification()
        #expect(try plain.respond(to: "n", with: .action("done")).contains(.appStateChanged(.foreground)) == false)
        #expect(plain.appState == .background)
    }

    @Test("a plain action launches a stopped app in the background")
    func plainActionLaunchesInBackground() throws {
        var (machine, _) = try Self.withVisibleNotification(appState: .notRunning)
        let effects = try machine.respond(to: "n", with: .action("done"))
        #expect(effects.dropFirst().first == .appStateChanged(.background))
        #expect(machine.appState == .background)
    }

    @Test("an unconfirmed response is reported at its deadline")
    func responseDeadline() throws {
        var (machine, _) = try Self.withVisibleNotification()
        _ = machine.advance(to: at(100))
        let effects = try machine.respond(to: "n", with: .action("done"))
        guard case .deliverResponse(let ticket, let response) = effects.last else {
            Issue.record("expected deliverResponse, got \(effects)")
            return
        }
        #expect(advanceAll(&machine, to: at(129.999)) == [])
        #expect(advanceAll(&machine, to: at(130)) == [.responseTimedOut(ticket: ticket, response)])
        #expect(machine.openTickets == 0)
        // Confirming after the deadline changes nothing.
        machine.completeResponse(ticket: ticket)
        #expect(advanceAll(&machine, to: at(1000)) == [])
    }

    @Test("actions are those of the category when the notification was presented")
    func actionsAreFixedAtPresentation() throws {
        var (machine, _) = try Self.withVisibleNotification()
        try machine.setCategories([])
        #expect(try machine.respond(to: "n", with: .action("done")).count == 2)
    }

    @Test("a notification whose category is not registered has no actions")
    func unregisteredCategoryHasNoActions() throws {
        var machine = makeMachine()
        _ = try machine.add(makeRequest("n", nil, category: "unknown"))
        #expect(machine.visibleNotifications.first?.actions == [])
        #expect(throws: PersonActionRejection.unknownAction("done")) { try machine.respond(to: "n", with: .action("done")) }
    }

    // MARK: - App settings and badge

    @Test("the in-app settings button exists only with providesAppNotificationSettings")
    func openAppSettingsRequiresOption() throws {
        var (machine, _) = try Self.withVisibleNotification()
        #expect(throws: PersonActionRejection.appSettingsNotProvided) { try machine.openAppSettings(from: nil) }
        #expect(throws: PersonActionRejection.appSettingsNotProvided) { try machine.openAppSettings(from: "n") }
    }

    @Test("opening the app's settings brings it forward, from the system settings or from a notification")
    func openAppSettings() throws {
        var (machine, notification) = try Self.withVisibleNotification(authorizing: [.alert, .providesAppNotificationSettings])
        #expect(try machine.openAppSettings(from: "n") == [.appStateChanged(.foreground), .openSettings(notification)])
        #expect(try machine.openAppSettings(from: nil) == [.openSettings(nil)])
        #expect(throws: PersonActionRejection.notificationNotFound("other")) { try machine.openAppSettings(from: "other") }
    }

    @Test("a negative badge count is invalid", arguments: [-1, Int.min])
    func negativeBadge(count: Int) {
        var machine = makeMachine()
        #expect(throws: NotificationFailure(.badgeInputInvalid, detail: "Got \(count).")) { try machine.setBadgeCount(count) }
        #expect(machine.badge == 0)
    }

    @Test func badgeNeedsBadgePermission() {
        var machine = makeMachine(authorizing: [.alert])
        #expect(throws: NotificationFailure(.notificationsNotAllowed, detail: "Badges are not allowed.")) { try machine.setBadgeCount(1) }
    }

    @Test func setBadgeCount() throws {
        var machine = makeMachine()
        #expect(try machine.setBadgeCount(5) == [.badgeChanged(5)])
        #expect(try machine.setBadgeCount(5) == [])
        #expect(try machine.setBadgeCount(0) == [.badgeChanged(0)])
        #expect(machine.badge == 0)
    }
}
