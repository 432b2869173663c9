import DaemonTestSupport
import Foundation
import Logging
import NotificationCore
@testable import NotificationDaemon
import NotificationDaemonClient
import OpenUserNotifications
@testable import OpenUserNotificationsLink
import OpenUserNotificationsTesting
import Synchronization
import TestSupport

/// The two notification systems an app's code can run against. The behaviour suite runs every test
/// body once on each: what an app sees must not depend on which one it talks to.
enum Backend: String, CaseIterable, Sendable, CustomStringConvertible {
    /// `InProcessNotificationSystem`, driven by `NotificationTestHarness`.
    case inProcess
    /// A real daemon (SQLite file, Unix socket) reached through `OpenUserNotificationsLink`.
    case daemon

    var description: String { rawValue }

    /// Runs `body` with a fresh system of this kind and an app with a ``RecordingDelegate``.
    func run(appState: SimulatedAppState = .background, _ body: @Sendable (any SystemUnderTest) async throws -> Void) async throws {
        switch self {
        case .inProcess:
            try await InProcessSystem.run(appState: appState, body)
        case .daemon:
            try await DaemonSystem.run(appState: appState, body)
        }
    }
}

/// A notification system as a test of app code drives it: the app's center and delegate, the device's
/// clock, and the person using the device.
protocol SystemUnderTest: Sendable {
    /// The app's center; a new one after ``startApp()``, as in a new process.
    var center: UNUserNotificationCenter { get }
    /// The app's delegate, set on every center the app has.
    var delegate: RecordingDelegate { get }

    /// Moves the device's clock forward, firing what falls due in order, each after the delegate
    /// answered for the one before.
    func advance(by seconds: TimeInterval) async throws
    /// Waits until the app's calls so far reached the system and its delegate answered everything asked.
    func settle() async throws

    /// Decides the person's answer to the authorization prompts from now on.
    func willAnswerAuthorization(allow: Bool) async throws
    /// The person acts on a notification they can see.
    func act(_ gesture: PersonGesture, on identifier: String) async throws
    /// The person turns some of the app's settings on or off.
    func changeSettings(sound: UNNotificationSetting?, badge: UNNotificationSetting?, alert: UNNotificationSetting?) async throws
    /// The person locks or unlocks the device.
    func setDeviceLocked(_ locked: Bool) async throws
    /// The person turns Do Not Disturb on (letting time-sensitive notifications through, or not), or off with `nil`.
    func setFocus(allowingTimeSensitive: Bool?) async throws
    /// Puts the app in the Scheduled Summary and turns the summary on at `times` (hours and minutes,
    /// UTC); with `nil`, turns the summary off.
    func setScheduledSummary(_ times: [DateComponents]?) async throws
    /// What the person sees of the app now, oldest first.
    func seen() async throws -> [SeenNotification]
    /// The app's badge.
    func badge() async throws -> Int

    /// The app moves to the foreground or the background.
    func moveApp(toForeground: Bool) async throws
    /// The app's process stops.
    func stopApp() async throws
    /// The app's process starts again and sets its delegate.
    func startApp() async throws
}

/// Something a person does to a notification.
enum PersonGesture: Sendable {
    case open
    case action(String)
    case reply(String, text: String)
    case dismiss
}

/// The system refused what the person did; `reason` names why, as `SimulatedPersonError.Code` and the
/// daemon's problem `reason` both do.
struct PersonRefusal: Error, Equatable {
    var reason: String
}

/// A notification the person can see, and how.
struct SeenNotification: Sendable, Equatable {
    var identifier: String
    var presentation: NotificationPresentation
    /// Whether it waits, unseen, for the Scheduled Summary.
    var heldForSummary = false
}

// MARK: - In-process

/// The in-process system, through the public testing harness.
struct InProcessSystem: SystemUnderTest {
    let harness: NotificationTestHarness
    let delegate: RecordingDelegate

    static func run(appState: SimulatedAppState, _ body: @Sendable (any SystemUnderTest) async throws -> Void) async throws {
        let harness = NotificationTestHarness(appState: appState)
        let delegate = RecordingDelegate()
        harness.center.delegate = delegate
        try await harness.run { _ in try await body(InProcessSystem(harness: harness, delegate: delegate)) }
    }

    var center: UNUserNotificationCenter { harness.center }

    func advance(by seconds: TimeInterval) async { await harness.clock.advance(by: seconds) }

    func settle() async throws {
        guard await harness.settle(timeout: .seconds(10)) else { throw SystemUnderTestError("the in-process system did not settle") }
    }

    func willAnswerAuthorization(allow: Bool) { harness.person.willAnswerAuthorization(allow: allow) }

    func act(_ gesture: PersonGesture, on identifier: String) async throws {
        do {
            switch gesture {
            case .open: try await harness.person.tap(identifier)
            case .action(let action): try await harness.person.chooseAction(action, on: identifier)
            case .reply(let action, let text): try await harness.person.reply(text, withAction: action, on: identifier)
            case .dismiss: try await harness.person.dismiss(identifier)
            }
        } catch {
            throw PersonRefusal(reason: error.code.description)
        }
    }

    func changeSettings(sound: UNNotificationSetting?, badge: UNNotificationSetting?, alert: UNNotificationSetting?) async {
        await harness.person.changeSettings { settings in
            if let sound { settings.soundSetting = sound }
            if let badge { settings.badgeSetting = badge }
            if let alert { settings.alertSetting = alert }
        }
    }

    func setDeviceLocked(_ locked: Bool) async {
        if locked { await harness.person.lockDevice() } else { await harness.person.unlockDevice() }
    }

    func setFocus(allowingTimeSensitive: Bool?) async {
        if let allowingTimeSensitive {
            await harness.person.turnOnFocus(allowingTimeSensitive: allowingTimeSensitive)
        } else {
            await harness.person.turnOffFocus()
        }
    }

    func setScheduledSummary(_ times: [DateComponents]?) async {
        guard let times else { return await harness.person.turnOffScheduledSummary() }
        await harness.person.changeSettings { $0.scheduledDeliverySetting = .enabled }
        await harness.person.turnOnScheduledSummary(at: times)
    }

    func seen() async -> [SeenNotification] {
        await harness.visibleNotifications.map {
            SeenNotification(identifier: $0.notification.request.identifier, presentation: $0.presentation, heldForSummary: $0.isHeldForSummary)
        }
    }

    func badge() -> Int { harness.badge }

    func moveApp(toForeground: Bool) async {
        if toForeground { await harness.app.moveToForeground() } else { await harness.app.moveToBackground() }
    }

    func stopApp() async { await harness.app.terminate() }

    /// The in-process app is the process itself: a response to it while it was stopped already
    /// started it, in the background; otherwise it starts now.
    func startApp() async {
        if harness.app.state == .notRunning { await harness.app.moveToBackground() }
    }
}

// MARK: - Daemon

/// A real daemon in this process (its SQLite file and Unix socket in a fresh folder, its clock moved
/// by hand), the app linked to it over the socket as an app process is, and the person acting through
/// the daemon's admin API.
final class DaemonSystem: SystemUnderTest {
    static let app = "com.example.behaviour"

    let daemon: RunningDaemon
    let delegate: RecordingDelegate
    private let key: String
    private let current: Mutex<UNUserNotificationCenter>
    private let promptAnswer = Mutex<Bool?>(nil)

    private init(daemon: RunningDaemon, key: String, delegate: RecordingDelegate, center: UNUserNotificationCenter) {
        self.daemon = daemon
        self.key = key
        self.delegate = delegate
        self.current = Mutex(center)
    }

    static func run(appState: SimulatedAppState, _ body: @Sendable (any SystemUnderTest) async throws -> Void) async throws {
        try await withDaemon { daemon in
            let registered = try await daemon.registerApp(app)
            let delegate = RecordingDelegate()
            let state: AppState = appState == .foreground ? .foreground : .background
            let center = try await connect(daemon, key: registered.key, state: state, delegate: delegate)
            let system = DaemonSystem(daemon: daemon, key: registered.key, delegate: delegate, center: center)
            if appState == .notRunning { try await system.stopApp() }
            // The person's answers to prompts, given as the prompts come: watching from before the body
            // starts, so that no prompt goes unseen.
            let events = await daemon.engine.watch().events
            let answering = Task { await system.answerPrompts(events) }
            defer { answering.cancel() }
            do {
                try await body(system)
            } catch {
                await NotificationDaemonLink.close(system.center)
                throw error
            }
            await NotificationDaemonLink.close(system.center)
        }
    }

    /// A new center linked to the daemon, with `delegate`, once the daemon sees the app connected.
    private static func connect(_ daemon: RunningDaemon, key: String, state: AppState, delegate: RecordingDelegate) async throws -> UNUserNotificationCenter {
        try await daemon.untilAppState(app, is: state) {
            let center = UNUserNotificationCenter(backend: DaemonBackend(client: LocalAPIClient(socketPath: daemon.socketPath, key: key), initialState: state))
            center.delegate = delegate
            return center
        }
    }

    var center: UNUserNotificationCenter { current.withLock { $0 } }

    func advance(by seconds: TimeInterval) async throws {
        try await settle()
        let target = daemon.clock.now.addingTimeInterval(seconds)
        while true {
            // What fell due has been fired; once the delegate answered, the next date is known (an
            // answer also takes its question's deadline off the schedule).
            try await answered()
            guard let next = await daemon.engine.processDue(), next <= target else { break }
            daemon.clock.advance(to: next)
            await daemon.engine.processDue()
        }
        daemon.clock.advance(to: target)
        await daemon.engine.processDue()
        try await answered()
    }

    func settle() async throws {
        // A call answered through the app's serial queue: every call the app made before it has reached the daemon.
        _ = await center.notificationSettings()
        try await answered()
    }

    private func answered() async throws {
        try await withDeadline("the app's delegate to answer") { await self.daemon.engine.waitUntilAnswered(Self.app) }
    }

    func willAnswerAuthorization(allow: Bool) { promptAnswer.withLock { $0 = allow } }

    private func answerPrompts(_ events: AsyncStream<DaemonEvent>) async {
        for await event in events {
            guard case .app(Self.app, .authorizationPrompt(_)) = event, let allow = promptAnswer.withLock({ $0 }) else { continue }
            _ = try? await daemon.admin.call(.POST, "/v1/admin/apps/\(Self.app)/authorization",
                                             body: LocalAPI.AuthorizationDecision(decision: allow ? "grant" : "deny"), as: NotificationSettings.self)
        }
    }

    func act(_ gesture: PersonGesture, on identifier: String) async throws {
        try await settle()
        let body: LocalAPI.Respond
        switch gesture {
        case .open: body = LocalAPI.Respond(kind: "open")
        case .action(let action): body = LocalAPI.Respond(kind: "action", actionIdentifier: action)
        case .reply(let action, let text): body = LocalAPI.Respond(kind: "reply", actionIdentifier: action, text: text)
        case .dismiss: body = LocalAPI.Respond(kind: "dismiss")
        }
        do {
            try await daemon.admin.call(.POST, "/v1/admin/apps/\(Self.app)/notifications/\(identifier)/respond", body: body)
        } catch LocalAPIClientError.problem(let problem) where problem.code == "personAction" {
            throw PersonRefusal(reason: problem.reason ?? problem.title)
        }
    }

    func changeSettings(sound: UNNotificationSetting?, badge: UNNotificationSetting?, alert: UNNotificationSetting?) async throws {
        try await settle()
        var change = LocalAPI.SettingsChange()
        change.soundSetting = sound.map { SettingValue(rawValue: $0.rawValue)! }
        change.badgeSetting = badge.map { SettingValue(rawValue: $0.rawValue)! }
        change.alertSetting = alert.map { SettingValue(rawValue: $0.rawValue)! }
        _ = try await daemon.admin.call(.PATCH, "/v1/admin/apps/\(Self.app)/settings", body: change, as: NotificationSettings.self)
    }

    func setDeviceLocked(_ locked: Bool) async throws {
        try await settle()
        try await daemon.admin.call(.POST, "/v1/admin/device", body: LocalAPI.DeviceChange(locked: locked))
    }

    func setFocus(allowingTimeSensitive: Bool?) async throws {
        try await settle()
        let focus = allowingTimeSensitive.map { Focus(allowsTimeSensitive: $0) }
        _ = try await daemon.admin.call(.PUT, "/v1/admin/focus", body: LocalAPI.DeviceFocus(focus: focus), as: LocalAPI.DeviceFocus.self)
    }

    func setScheduledSummary(_ times: [DateComponents]?) async throws {
        try await settle()
        let summary = times.map { ScheduledSummary(times: $0.map { ScheduledSummary.Time(hour: $0.hour!, minute: $0.minute!) }) }
        if summary != nil {
            var change = LocalAPI.SettingsChange()
            change.scheduledDeliverySetting = .enabled
            _ = try await daemon.admin.call(.PATCH, "/v1/admin/apps/\(Self.app)/settings", body: change, as: NotificationSettings.self)
        }
        _ = try await daemon.admin.call(.PUT, "/v1/admin/summary", body: LocalAPI.DeviceSummary(summary: summary), as: LocalAPI.DeviceSummary.self)
    }

    func seen() async throws -> [SeenNotification] {
        try await settle()
        let visible = try await daemon.admin.call(.GET, "/v1/admin/notifications?app=\(Self.app)", as: [LocalAPI.VisibleNotification].self)
        return visible.map { shown in
            let value = shown.presentation
            return SeenNotification(
                identifier: shown.notification.request.identifier,
                presentation: NotificationPresentation(banner: value.banner, list: value.list, lockScreen: value.lockScreen,
                                                       sound: value.sound, badge: value.badge),
                heldForSummary: shown.summary?.held ?? false
            )
        }
    }

    func badge() async throws -> Int {
        try await settle()
        return try await daemon.engine.badge(Self.app)
    }

    func moveApp(toForeground: Bool) async throws {
        try await settle()
        let center = self.center
        try await daemon.untilAppState(Self.app, is: toForeground ? .foreground : .background) {
            NotificationDaemonLink.appDidChangeState(to: center, foreground: toForeground)
        }
    }

    func stopApp() async throws {
        try await settle()
        let center = self.center
        try await daemon.untilAppState(Self.app, is: .notRunning) { await NotificationDaemonLink.close(center) }
    }

    func startApp() async throws {
        let center = try await Self.connect(daemon, key: key, state: .background, delegate: delegate)
        current.withLock { $0 = center }
    }
}

extension RunningDaemon {
    /// Does `change`, then waits until the daemon sees `app` in `state` (at once if it already is).
    func untilAppState<T: Sendable>(_ app: String, is state: AppState, _ change: @Sendable () async throws -> T) async throws -> T {
        let events = await engine.watch().events
        let value = try await change()
        guard try await engine.appState(app) != state else { return value }
        try await withDeadline("the daemon to see \(app) \(state)") {
            for await event in events {
                if case .app(app, .appStateChanged(state)) = event { return }
            }
        }
        return value
    }
}

struct SystemUnderTestError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

