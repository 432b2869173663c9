/// Where an effect of ``NotificationCenterMachine`` goes: to the app, to the person, to starting the
/// app, or to its service extension. Every system (the in-process one and the daemon) carries out effects through
/// ``NotificationCenterMachine/Effect/routes``, so a new effect is routed in one place, and the
/// compiler then shows each system the call or event it must handle.
package enum EffectRoute: Sendable, Hashable {
    /// The app's `requestAuthorization` call `call` ends with this answer.
    case authorizationCompleted(call: UInt64, granted: Bool)
    /// A call of the app's delegates: the same value is the message of the app's event stream
    /// (``LocalAPI/AppEvent/call(_:)``) and what the app's process hands its delegates.
    case app(AppCall)
    /// Something the person sees: what presenters show and observers record.
    case person(PersonEvent)
    /// The app must be started, in this state, to receive what waits for it.
    case launch(AppState)
    /// Something for the app's service extension, which the system runs.
    case serviceExtension(ServiceExtensionCall)
}

/// What a system asks of an app's service extension.
package enum ServiceExtensionCall: Sendable, Hashable {
    /// Start it for a push (`didReceive(_:withContentHandler:)`); what it hands back goes to
    /// ``NotificationCenterMachine/finishPreparation(ticket:content:failure:)`` with this ticket.
    case prepare(ticket: UInt64, ContentPreparation)
    /// `serviceExtensionTimeWillExpire()`.
    case timeWillExpire(ticket: UInt64)
    /// The preparation is over: stop the extension if it still runs.
    case stop(ticket: UInt64)
}

/// What a system asks of the app's delegates: the center's delegate for notifications, the app
/// delegate for background pushes. In its `Codable` form it is the app's event stream message of the
/// same `type` (Docs/local-api-streams.md); the in-process system hands it to the delegates as it is.
package enum AppCall: Codable, Sendable, Hashable {
    /// The delegate's `willPresent`, for a notification arriving while the app is in the foreground:
    /// answered with `willPresentAnswer` and the same ticket.
    case willPresent(ticket: UInt64, DeliveredNotification)
    /// The delegate's `didReceive`, for what the person did: confirmed with `responseCompleted` and
    /// the same ticket once the delegate is done.
    case response(ticket: UInt64, NotificationResponse)
    /// The delegate's `openSettingsFor`.
    case openSettings(DeliveredNotification?)
    /// The app delegate's `didReceiveRemoteNotification`, for a background or VoIP push: confirmed
    /// with `remoteNotificationCompleted` and the same ticket once its completion handler is called.
    case remoteNotification(ticket: UInt64, RemoteNotification)

    /// The stream's `type` of each call.
    package static let types: Set<String> = ["willPresent", "response", "openSettings", "remoteNotification"]

    private enum CodingKeys: String, CodingKey { case type, ticket, notification, response, remoteNotification }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        switch try container.decode(String.self, forKey: .type) {
        case "willPresent":
            self = .willPresent(ticket: try container.decode(UInt64.self, forKey: .ticket),
                                try container.decode(DeliveredNotification.self, forKey: .notification))
        case "response":
            self = .response(ticket: try container.decode(UInt64.self, forKey: .ticket),
                             try container.decode(NotificationResponse.self, forKey: .response))
        case "openSettings":
            self = .openSettings(try container.decodeIfPresent(DeliveredNotification.self, forKey: .notification))
        case "remoteNotification":
            self = .remoteNotification(ticket: try container.decode(UInt64.self, forKey: .ticket),
                                       try container.decode(RemoteNotification.self, forKey: .remoteNotification))
        case let type:
            throw DecodingError.dataCorruptedError(forKey: .type, in: container, debugDescription: "Unknown call \"\(type)\".")
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .willPresent(let ticket, let notification):
            try container.encode("willPresent", forKey: .type)
            try container.encode(ticket, forKey: .ticket)
            try container.encode(notification, forKey: .notification)
        case .response(let ticket, let response):
            try container.encode("response", forKey: .type)
            try container.encode(ticket, forKey: .ticket)
            try container.encode(response, forKey: .response)
        case .openSettings(let notification):
            try container.encode("openSettings", forKey: .type)
            try container.encodeIfPresent(notification, forKey: .notification)
        case .remoteNotification(let ticket, let remoteNotification):
            try container.encode("remoteNotification", forKey: .type)
            try container.encode(ticket, forKey: .ticket)
            try container.encode(remoteNotification, forKey: .remoteNotification)
        }
    }
}

/// What the person sees, and what happens to it.
package enum PersonEvent: Sendable, Hashable {
    /// The app asks the person to allow notifications.
    case authorizationPrompt(AuthorizationOptions)
    /// The app's settings changed.
    case settingsChanged(NotificationSettings)
    /// A notification reached the person (or was suppressed, with an empty presentation).
    case presented(NotificationCenterMachine.VisibleNotification)
    /// The app's badge changed.
    case badgeChanged(Int)
    /// The app came to the foreground, went to the background, or stopped.
    case appStateChanged(AppState)
    /// What the person did was handed to the app.
    case responseDelivered(NotificationResponse)
    /// The app did not confirm a response in time.
    case responseNotCompleted(NotificationResponse)
    /// The app did not answer `willPresent` in time; nothing was presented.
    case willPresentTimedOut(DeliveredNotification)
    /// A pending request was discarded over the limit.
    case discardedOverLimit(NotificationRequest)
    /// The app removed these delivered notifications.
    case notificationsRemoved([String])
    /// The person acted on a notification (open, dismiss, an action): it left the screen.
    case actedOn(identifier: String, actionIdentifier: String)
    /// A background or VoIP push was handed to the app.
    case remoteNotificationDelivered(RemoteNotification)
    /// A background push waits for the app (not running, or over its budget); a newer one replaces it.
    case remoteNotificationHeld(RemoteNotification)
    /// The app did not call `didReceiveRemoteNotification`'s completion handler in time.
    case remoteNotificationNotCompleted(RemoteNotification)
    /// A push went to the app's service extension; nothing is shown until it is prepared.
    case contentPreparing(NotificationRequest)
    /// The service extension's work on a push ended; what is shown follows.
    case contentPrepared(NotificationRequest, PreparationOutcome)
    /// The Scheduled Summary came with these notifications, held for it until now.
    case summaryDelivered([NotificationCenterMachine.VisibleNotification])
}

extension NotificationCenterMachine.Effect {
    /// Where this effect goes, in order.
    package var routes: [EffectRoute] {
        switch self {
        case .promptForAuthorization(let options): [.person(.authorizationPrompt(options))]
        case .authorizationCompleted(let call, let granted): [.authorizationCompleted(call: call, granted: granted)]
        case .settingsChanged(let settings): [.person(.settingsChanged(settings))]
        case .askWillPresent(let ticket, let notification): [.app(.willPresent(ticket: ticket, notification))]
        case .presented(let shown): [.person(.presented(shown))]
        case .badgeChanged(let badge): [.person(.badgeChanged(badge))]
        case .deliverResponse(let ticket, let response): [.app(.response(ticket: ticket, response)), .person(.responseDelivered(response))]
        case .openSettings(let notification): [.app(.openSettings(notification))]
        case .appStateChanged(let state): [.person(.appStateChanged(state))]
        case .willPresentTimedOut(_, let notification): [.person(.willPresentTimedOut(notification))]
        case .responseTimedOut(_, let response): [.person(.responseNotCompleted(response))]
        case .discardedOverLimit(let request): [.person(.discardedOverLimit(request))]
        case .notificationsRemoved(let identifiers): [.person(.notificationsRemoved(identifiers))]
        case .personActed(let identifier, let actionIdentifier): [.person(.actedOn(identifier: identifier, actionIdentifier: actionIdentifier))]
        case .summaryDelivered(let shown): [.person(.summaryDelivered(shown))]
        case .launchApp(let state): [.launch(state)]
        case .deliverRemoteNotification(let ticket, let remote): [.app(.remoteNotification(ticket: ticket, remote)), .person(.remoteNotificationDelivered(remote))]
        case .remoteNotificationHeld(let remote): [.person(.remoteNotificationHeld(remote))]
        case .remoteNotificationTimedOut(_, let remote): [.person(.remoteNotificationNotCompleted(remote))]
        case .prepareContent(let ticket, let preparation):
            [.serviceExtension(.prepare(ticket: ticket, preparation)), .person(.contentPreparing(preparation.request))]
        case .preparationTimeWillExpire(let ticket): [.serviceExtension(.timeWillExpire(ticket: ticket))]
        case .preparationEnded(let ticket, let preparation, let outcome):
            [.serviceExtension(.stop(ticket: ticket)), .person(.contentPrepared(preparation.request, outcome))]
        }
    }
}
