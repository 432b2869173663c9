import Foundation
import Logging
import NotificationAttachmentStore
package import NotificationCore

/// What the person does with an app's notifications and settings, and what is on screen for them.
extension DaemonEngine {
    /// A person's decision about an app's notifications, as `simctl privacy` offers.
    package enum AuthorizationDecision: String, Sendable, CaseIterable {
        case grant, deny, provisional, reset
    }

    /// Answers the app's authorization prompt if one is showing, or sets the app's authorization.
    package func authorize(_ bundleIdentifier: String, _ decision: AuthorizationDecision) async throws -> NotificationSettings {
        try await step(bundleIdentifier) { (machine: inout NotificationCenterMachine) throws(Never) in
            var effects: [NotificationCenterMachine.Effect]
            let asked = machine.promptedOptions
            switch decision {
            case .grant where asked != nil:
                effects = machine.answerAuthorizationPrompt(allow: true)
            case .deny where asked != nil:
                effects = machine.answerAuthorizationPrompt(allow: false)
            case .grant:
                effects = machine.changeSettings(.granting([.alert, .sound, .badge], status: .authorized))
            case .deny:
                effects = machine.changeSettings(.granting([], status: .denied))
            case .provisional:
                effects = machine.changeSettings(.granting([], status: .provisional))
            case .reset:
                effects = machine.changeSettings(.notDetermined)
            }
            return (machine.settings, effects)
        }
    }

    /// Changes an app's settings as the person does in the system's settings.
    package func changeSettings(_ bundleIdentifier: String, _ change: @Sendable (inout NotificationSettings) -> Void) async throws -> NotificationSettings {
        try await step(bundleIdentifier) { (machine: inout NotificationCenterMachine) throws(Never) in
            var settings = machine.settings
            change(&settings)
            let effects = machine.changeSettings(settings)
            return (machine.settings, effects)
        }
    }

    /// The person keeps an app's provisional notifications ("Keep…", then "Deliver Immediately"): the
    /// app is authorized, and its notifications go on arriving quietly, in Notification Center only (no
    /// banner, sound, badge or lock screen) until the person changes its settings, as on iOS. With
    /// `inSummary` ("Deliver in Scheduled Summary"), they also wait for the Scheduled Summary.
    ///
    /// - Throws: `invalidRequest` when the app's notifications are not provisional, or `inSummary` while
    ///   the Scheduled Summary is off.
    package func keepProvisionalNotifications(_ bundleIdentifier: String, inSummary: Bool = false) async throws -> NotificationSettings {
        guard try await settings(bundleIdentifier).authorizationStatus == .provisional else {
            throw DaemonError(.invalidRequest, "\(bundleIdentifier)'s notifications are not provisional: there is nothing to keep.")
        }
        guard !inSummary || device.conditions.summary != nil else {
            throw DaemonError(.invalidRequest, "The Scheduled Summary is off: turn it on before delivering \(bundleIdentifier)'s notifications in it.")
        }
        return try await changeSettings(bundleIdentifier) { settings in
            settings = .granting([], status: .authorized)
            settings.lockScreenSetting = .disabled
            if inSummary { settings.scheduledDeliverySetting = .enabled }
        }
    }

    /// The most background pushes per hour an app's budget may name.
    package static let backgroundPushesPerHourRange = 1...1_000_000

    /// Changes how many background pushes per hour may wake an app that is not in the foreground;
    /// `nil` for no limit. The new budget starts full; a push held for the app goes at once.
    package func setBackgroundPushesPerHour(_ bundleIdentifier: String, _ perHour: Int?) async throws -> Int? {
        if let perHour, !Self.backgroundPushesPerHourRange.contains(perHour) {
            let range = Self.backgroundPushesPerHourRange
            throw DaemonError(.invalidRequest, "A background push budget is \(range.lowerBound) to \(range.upperBound) pushes an hour, or null for no limit; got \(perHour).")
        }
        return try await step(bundleIdentifier) { (machine: inout NotificationCenterMachine) throws(Never) in
            let effects = machine.setBackgroundPushesPerHour(perHour)
            return (machine.configuration.backgroundPushesPerHour, effects)
        }
    }

    /// What the person sees of an app: every notification on screen, on the lock screen or in the list.
    package func visibleNotifications(_ bundleIdentifier: String) async throws -> [NotificationCenterMachine.VisibleNotification] {
        try await read(bundleIdentifier) { machine in machine.visibleNotifications }
    }

    /// The file of one attachment of a notification the person sees, for a surface to show; `nil` when
    /// the notification is not on screen, has no such attachment, or the file is not one of the
    /// daemon's own copies (a surface is never given a file from anywhere else).
    package func attachmentFile(_ bundleIdentifier: String, notification identifier: String, index: Int) async throws -> NotificationAttachment? {
        guard let store = attachmentStore(of: bundleIdentifier) else { return nil }
        let shown = try await visibleNotifications(bundleIdentifier).first { $0.notification.request.identifier == identifier }
        guard let attachments = shown?.notification.request.content.attachments, attachments.indices.contains(index) else { return nil }
        let attachment = attachments[index]
        return store.holds(attachment.url) ? attachment : nil
    }

    /// The person acts on one of an app's notifications.
    ///
    /// - Throws: a `DaemonError` with code `personAction` saying why the system refused.
    ///
    /// - Parameters:
    ///   - offeredActions: the actions shown, when a content extension replaced the category's.
    ///   - forwardingToApp: `false` when a content extension handled the action (`.dismiss`).
    package func respond(_ bundleIdentifier: String, to identifier: String, with action: PersonAction,
                         offeredActions: [NotificationAction]? = nil, forwardingToApp: Bool = true) async throws {
        do {
            try await step(bundleIdentifier) { (machine: inout NotificationCenterMachine) throws(PersonActionRejection) in
                ((), try machine.respond(to: identifier, with: action, offeredActions: offeredActions, forwardingToApp: forwardingToApp))
            }
        } catch let rejection as PersonActionRejection {
            throw DaemonError(rejection)
        }
    }

    /// The response a person's action would give the app, checked as ``respond(_:to:with:offeredActions:forwardingToApp:)``
    /// checks it, and nothing done: what the app's content extension is handed first.
    package func response(_ bundleIdentifier: String, to identifier: String, with action: PersonAction,
                          offeredActions: [NotificationAction]? = nil) async throws -> NotificationResponse? {
        let checked = try await read(bundleIdentifier) { machine in
            Result { () throws(PersonActionRejection) in try machine.response(to: identifier, with: action, offeredActions: offeredActions) }
        }
        do {
            return try checked.get()
        } catch {
            throw DaemonError(error)
        }
    }

    /// The person opens an app's notification settings, from one of its notifications or from the system.
    package func openAppSettings(_ bundleIdentifier: String, from identifier: String?) async throws {
        do {
            try await step(bundleIdentifier) { (machine: inout NotificationCenterMachine) throws(PersonActionRejection) in
                ((), try machine.openAppSettings(from: identifier))
            }
        } catch let rejection as PersonActionRejection {
            throw DaemonError(rejection)
        }
    }

    /// The apps with a notification the person can see, but those quarantined.
    package func appsShowingNotifications() async throws -> [String] {
        var apps: [String] = []
        for app in try await store.appsShowingNotifications() where try await isReadable(app) { apps.append(app) }
        return apps
    }

    /// The authorization prompts on screen: each app asking, with what it asks for.
    package func authorizationPrompts() async throws -> [(bundleIdentifier: String, options: AuthorizationOptions)] {
        var prompts: [(bundleIdentifier: String, options: AuthorizationOptions)] = []
        for app in try await appsShowingNotifications() {
            if let options = try await read(app, { machine in machine.promptedOptions }) { prompts.append((app, options)) }
        }
        return prompts
    }

    /// Starts a presenter's view of events (see ``Presenters``).
    package func watch() -> Watch {
        presenters.watch()
    }
}
