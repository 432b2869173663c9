public import Foundation
public import OpenUserNotifications
internal import NotificationCore
internal import Synchronization

/// Something a simulated person tried to do that the system refused.
public struct SimulatedPersonError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Why the system refused.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String, Hashable, Sendable {
            case notificationNotFound, unknownAction, textInputRequired, textInputNotAccepted
            case deviceLocked, appSettingsNotProvided, noAuthorizationPrompt
        }

        private let value: Value

        /// No notification with that identifier is on screen or in the list.
        public static let notificationNotFound = Code(value: .notificationNotFound)
        /// The notification's category has no such action.
        public static let unknownAction = Code(value: .unknownAction)
        /// The action takes typed text: reply to it.
        public static let textInputRequired = Code(value: .textInputRequired)
        /// The action is a plain button and takes no text.
        public static let textInputNotAccepted = Code(value: .textInputNotAccepted)
        /// The action needs the device unlocked first.
        public static let deviceLocked = Code(value: .deviceLocked)
        /// The app did not ask for `.providesAppNotificationSettings`.
        public static let appSettingsNotProvided = Code(value: .appSettingsNotProvided)
        /// No authorization prompt is on screen.
        public static let noAuthorizationPrompt = Code(value: .noAuthorizationPrompt)

        public var description: String { value.rawValue }
    }

    /// Why the system refused.
    public var code: Code
    /// What happened, in a sentence.
    public var message: String

    public var description: String { "\(code): \(message)" }

    init(_ rejection: PersonActionRejection) {
        message = rejection.description
        switch rejection {
        case .notificationNotFound: code = .notificationNotFound
        case .unknownAction: code = .unknownAction
        case .textInputRequired: code = .textInputRequired
        case .textInputNotAccepted: code = .textInputNotAccepted
        case .deviceLocked: code = .deviceLocked
        case .appSettingsNotProvided: code = .appSettingsNotProvided
        }
    }

    init(code: Code, message: String) {
        self.code = code
        self.message = message
    }
}

/// The answers a simulated person gives to authorization prompts.
final class PromptAnswers: NotificationPromptAnswerer {
    private let preset = Mutex<Bool?>(nil)

    func set(_ allow: Bool?) { preset.withLock { $0 = allow } }

    func answer(toPromptFor options: AuthorizationOptions) -> Bool? {
        preset.withLock { $0 }
    }
}

/// The person using the simulated device: answers the authorization prompt, taps, picks actions,
/// replies, dismisses, changes settings, locks the device and moves around.
///
/// Every action on a notification is checked as the real system would check it: a notification must be
/// on screen or in the list, an action must belong to its category, text goes only to text-input
/// actions, and actions that need authentication need the device unlocked.
public final class SimulatedPerson: Sendable {
    private let system: InProcessNotificationSystem
    private let answers: PromptAnswers

    init(system: InProcessNotificationSystem, answers: PromptAnswers) {
        self.system = system
        self.answers = answers
    }

    // MARK: Authorization

    /// Decides the answer to every future authorization prompt: allow, deny, or (`nil`) leave the prompt
    /// on screen until ``answerAuthorizationPrompt(allow:)``. A prompt already on screen is answered now.
    public func willAnswerAuthorization(allow: Bool?) {
        answers.set(allow)
        if let allow { system.answerAuthorizationPrompt(allow: allow) }
    }

    /// The options of the authorization prompt on screen, if one is.
    public var authorizationPrompt: UNAuthorizationOptions? {
        get async { await system.promptedOptions.map { UNAuthorizationOptions(rawValue: $0.rawValue) } }
    }

    /// Answers the authorization prompt on screen.
    ///
    /// - Throws: ``SimulatedPersonError/Code-swift.struct/noAuthorizationPrompt`` when there is none.
    public func answerAuthorizationPrompt(allow: Bool) async throws(SimulatedPersonError) {
        guard await system.promptedOptions != nil else {
            throw SimulatedPersonError(code: .noAuthorizationPrompt, message: "No authorization prompt is on screen.")
        }
        system.answerAuthorizationPrompt(allow: allow)
    }

    // MARK: Notifications

    /// Taps a notification, which opens the app; the app receives `UNNotificationDefaultActionIdentifier`.
    public func tap(_ identifier: String) async throws(SimulatedPersonError) {
        try await act(on: identifier, .open)
    }

    /// Picks one of a notification's action buttons.
    public func chooseAction(_ actionIdentifier: String, on identifier: String) async throws(SimulatedPersonError) {
        try await act(on: identifier, .action(actionIdentifier))
    }

    /// Types `text` into a notification's text-input action and sends it; the app receives a
    /// `UNTextInputNotificationResponse`.
    public func reply(_ text: String, withAction actionIdentifier: String, on identifier: String) async throws(SimulatedPersonError) {
        try await act(on: identifier, .reply(actionIdentifier, text: text))
    }

    /// Swipes a notification away. The app hears of it only if its category has `.customDismissAction`.
    public func dismiss(_ identifier: String) async throws(SimulatedPersonError) {
        try await act(on: identifier, .dismiss)
    }

    /// Opens the app's own notification settings, from a notification or (`nil`) from the system's
    /// settings. The app must have asked for `.providesAppNotificationSettings`.
    public func openAppNotificationSettings(from identifier: String? = nil) async throws(SimulatedPersonError) {
        do {
            try await system.openAppSettings(from: identifier)
        } catch {
            throw SimulatedPersonError(error)
        }
    }

    private func act(on identifier: String, _ action: PersonAction) async throws(SimulatedPersonError) {
        do {
            try await system.respond(to: identifier, with: action)
        } catch {
            throw SimulatedPersonError(error)
        }
    }

    // MARK: Settings

    /// Changes the app's notification settings, as the person does in the system's settings.
    ///
    /// ```swift
    /// await harness.person.changeSettings { $0.soundSetting = .disabled }
    /// ```
    public func changeSettings(_ change: (inout NotificationSettingsEditor) -> Void) async {
        var editor = NotificationSettingsEditor(await system.settings)
        change(&editor)
        let changed = editor.value
        await system.changeSettings { $0 = changed }
    }

    /// Turns the app's notifications off: the authorization becomes `.denied`.
    public func turnOffNotifications() async {
        await system.changeSettings { $0 = .granting([], status: .denied) }
    }

    /// Keeps a provisionally authorized app's notifications, delivered quietly: the authorization becomes
    /// `.authorized`, with notifications in the notification center only (no alerts, sounds, badges or
    /// lock screen).
    public func keepQuietNotifications() async {
        var quiet = NotificationSettings.granting([], status: .authorized)
        quiet.lockScreenSetting = .disabled
        let settings = quiet
        await system.changeSettings { $0 = settings }
    }

    // MARK: The device

    /// Locks the device: actions that need authentication are refused until it is unlocked.
    public func lockDevice() async {
        await system.setDeviceLocked(true)
    }

    /// Unlocks the device.
    public func unlockDevice() async {
        await system.setDeviceLocked(false)
    }

    /// Turns on a Focus such as Do Not Disturb: the app's notifications arrive silenced (in the list
    /// and on the lock screen, with no banner and no sound), but for critical ones, and time-sensitive
    /// ones when `allowingTimeSensitive` and the app's Time Sensitive setting is on. With `allowingApp`,
    /// the app's notifications all break through.
    public func turnOnFocus(_ name: String = "Do Not Disturb", allowingTimeSensitive: Bool = true, allowingApp: Bool = false) async {
        await system.setFocus(Focus(name: name, allowsTimeSensitive: allowingTimeSensitive,
                                    allowedApps: allowingApp ? [InProcessNotificationSystem.app] : []))
    }

    /// Turns the Focus off: notifications interrupt again as the settings say.
    public func turnOffFocus() async {
        await system.setFocus(nil)
    }

    /// Turns on the Scheduled Summary, delivered each day at `times` (hour and minute on the device's
    /// clock; 8 AM and 6 PM unless given). The notifications of an app whose
    /// ``NotificationSettingsEditor/scheduledDeliverySetting`` is on then arrive quietly and wait for the
    /// next summary, but for critical ones and time-sensitive ones the app may deliver at once.
    public func turnOnScheduledSummary(at times: [DateComponents] = [DateComponents(hour: 8, minute: 0), DateComponents(hour: 18, minute: 0)]) async {
        let summary = ScheduledSummary(times: times.map { ScheduledSummary.Time(hour: $0.hour ?? 0, minute: $0.minute ?? 0) })
        await system.setScheduledSummary(summary)
    }

    /// Turns the Scheduled Summary off: what waits for it is shown now.
    public func turnOffScheduledSummary() async {
        await system.setScheduledSummary(nil)
    }

    /// Moves the device to `coordinate`: location triggers whose region it enters or leaves fire.
    public func moveDevice(to coordinate: CLLocationCoordinate2D) async {
        await system.updateLocation(Coordinate(latitude: coordinate.latitude, longitude: coordinate.longitude))
    }

    /// Travels to another time zone: calendar triggers that do not name a zone follow the device.
    public func changeTimeZone(to timeZone: TimeZone) async {
        await system.changeTimeZone(timeZone)
    }
}

/// The app's notification settings, as the person edits them.
public struct NotificationSettingsEditor: Sendable {
    var value: NotificationSettings

    init(_ value: NotificationSettings) { self.value = value }

    public var authorizationStatus: UNAuthorizationStatus {
        get { UNAuthorizationStatus(rawValue: value.authorizationStatus.rawValue)! }
        set { value.authorizationStatus = AuthorizationStatus(rawValue: newValue.rawValue)! }
    }
    public var soundSetting: UNNotificationSetting {
        get { .init(value.soundSetting) }
        set { value.soundSetting = .init(newValue) }
    }
    public var badgeSetting: UNNotificationSetting {
        get { .init(value.badgeSetting) }
        set { value.badgeSetting = .init(newValue) }
    }
    public var alertSetting: UNNotificationSetting {
        get { .init(value.alertSetting) }
        set { value.alertSetting = .init(newValue) }
    }
    public var notificationCenterSetting: UNNotificationSetting {
        get { .init(value.notificationCenterSetting) }
        set { value.notificationCenterSetting = .init(newValue) }
    }
    public var lockScreenSetting: UNNotificationSetting {
        get { .init(value.lockScreenSetting) }
        set { value.lockScreenSetting = .init(newValue) }
    }
    public var carPlaySetting: UNNotificationSetting {
        get { .init(value.carPlaySetting) }
        set { value.carPlaySetting = .init(newValue) }
    }
    public var alertStyle: UNAlertStyle {
        get { UNAlertStyle(rawValue: value.alertStyle.rawValue)! }
        set { value.alertStyle = AlertStyle(rawValue: newValue.rawValue)! }
    }
    public var showPreviewsSetting: UNShowPreviewsSetting {
        get { UNShowPreviewsSetting(rawValue: value.showPreviewsSetting.rawValue)! }
        set { value.showPreviewsSetting = ShowPreviews(rawValue: newValue.rawValue)! }
    }
    public var criticalAlertSetting: UNNotificationSetting {
        get { .init(value.criticalAlertSetting) }
        set { value.criticalAlertSetting = .init(newValue) }
    }
    public var announcementSetting: UNNotificationSetting {
        get { .init(value.announcementSetting) }
        set { value.announcementSetting = .init(newValue) }
    }
    public var timeSensitiveSetting: UNNotificationSetting {
        get { .init(value.timeSensitiveSetting) }
        set { value.timeSensitiveSetting = .init(newValue) }
    }
    public var scheduledDeliverySetting: UNNotificationSetting {
        get { .init(value.scheduledDeliverySetting) }
        set { value.scheduledDeliverySetting = .init(newValue) }
    }
    public var directMessagesSetting: UNNotificationSetting {
        get { .init(value.directMessagesSetting) }
        set { value.directMessagesSetting = .init(newValue) }
    }
}

extension UNNotificationSetting {
    init(_ value: SettingValue) { self.init(rawValue: value.rawValue)! }
}

extension SettingValue {
    init(_ value: UNNotificationSetting) { self.init(rawValue: value.rawValue)! }
}

/// The app under test, as the system sees it.
public final class SimulatedApp: Sendable {
    private let system: InProcessNotificationSystem

    init(system: InProcessNotificationSystem) {
        self.system = system
    }

    /// Whether the app is in the foreground, in the background, or not running.
    public var state: SimulatedAppState {
        SimulatedAppState(rawValue: system.appState.rawValue)!
    }

    /// Brings the app to the foreground: `willPresent` decides how notifications show.
    public func moveToForeground() async { await system.setAppState(.foreground) }

    /// Sends the app to the background: the person's settings decide how notifications show.
    public func moveToBackground() async { await system.setAppState(.background) }

    /// Stops the app. Notifications still arrive; a response launches it again.
    public func terminate() async { await system.setAppState(.notRunning) }
}
