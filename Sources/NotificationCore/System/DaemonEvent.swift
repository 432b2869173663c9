package import Foundation

/// What presenters are told (`unotify watch`, the web notification center, the desktop): what one
/// app's machine did that the person sees (its ``PersonEvent``, as ``NotificationCenterMachine/Effect/routes``
/// routes it), or a change of the device.
///
/// It is also what the local API's presenter stream sends (`GET /v1/admin/events`): encoded flat, as a
/// JSON object with a `type` naming its kind, the app's `bundleIdentifier` (empty for the device's
/// events), and the fields of its kind (Docs/local-api-streams.md). Decoding gives back the same event.
package enum DaemonEvent: Sendable, Hashable {
    /// Something one app's machine did, for the person.
    case app(String, PersonEvent)
    /// The device was locked or unlocked.
    case deviceLockChanged(locked: Bool)
    /// The person turned a Focus on, changed it, or turned it off (`nil`).
    case focusChanged(Focus?)
    /// The person turned the Scheduled Summary on, changed its times, or turned it off (`nil`).
    case summaryChanged(ScheduledSummary?)
    /// The device moved to another time zone.
    case timeZoneChanged(TimeZone)

    /// The app the event is about; empty for the device's events.
    package var bundleIdentifier: String {
        if case .app(let app, _) = self { return app }
        return ""
    }

    /// Its kind, as the stream's `type` names it.
    package var type: String {
        switch self {
        case .app(_, let event): event.type
        case .deviceLockChanged: "deviceLockChanged"
        case .focusChanged: "focusChanged"
        case .summaryChanged: "summaryChanged"
        case .timeZoneChanged: "timeZoneChanged"
        }
    }
}

extension PersonEvent {
    /// Its kind, as the presenter stream's `type` names it.
    package var type: String {
        switch self {
        case .authorizationPrompt: "authorizationPrompt"
        case .settingsChanged: "settingsChanged"
        case .presented: "presented"
        case .badgeChanged: "badgeChanged"
        case .appStateChanged: "appStateChanged"
        case .responseDelivered: "responseDelivered"
        case .responseNotCompleted: "responseNotCompleted"
        case .willPresentTimedOut: "willPresentTimedOut"
        case .discardedOverLimit: "discardedOverLimit"
        case .notificationsRemoved: "notificationsRemoved"
        case .actedOn: "actedOn"
        case .remoteNotificationDelivered: "remoteNotificationDelivered"
        case .remoteNotificationHeld: "remoteNotificationHeld"
        case .remoteNotificationNotCompleted: "remoteNotificationNotCompleted"
        case .contentPreparing: "contentPreparing"
        case .contentPrepared: "contentPrepared"
        case .summaryDelivered: "summaryDelivered"
        }
    }
}

extension DaemonEvent: Codable {
    private enum Field: String, CodingKey {
        case type, bundleIdentifier, notification, options, settings, badge, state, response, request, remoteNotification
        case outcome, reason, identifiers, actionIdentifier, locked, focus, summary, notifications, date, timeZone
    }

    package func encode(to encoder: any Encoder) throws {
        var fields = encoder.container(keyedBy: Field.self)
        try fields.encode(type, forKey: .type)
        try fields.encode(bundleIdentifier, forKey: .bundleIdentifier)
        switch self {
        case .app(let app, let event):
            switch event {
            case .presented(let shown):
                try fields.encode(LocalAPI.VisibleNotification(bundleIdentifier: app, shown), forKey: .notification)
            case .authorizationPrompt(let options):
                try fields.encode(options.rawValue, forKey: .options)
            case .settingsChanged(let settings):
                try fields.encode(settings, forKey: .settings)
            case .badgeChanged(let badge):
                try fields.encode(badge, forKey: .badge)
            case .appStateChanged(let state):
                try fields.encode(state, forKey: .state)
            case .responseDelivered(let response), .responseNotCompleted(let response):
                try fields.encode(response, forKey: .response)
            case .willPresentTimedOut(let notification):
                try fields.encode(notification.request, forKey: .request)
                try fields.encode(notification.date, forKey: .date)
            case .discardedOverLimit(let request), .contentPreparing(let request):
                try fields.encode(request, forKey: .request)
            case .remoteNotificationDelivered(let remote), .remoteNotificationHeld(let remote), .remoteNotificationNotCompleted(let remote):
                try fields.encode(remote, forKey: .remoteNotification)
            case .contentPrepared(let request, let outcome):
                try fields.encode(request, forKey: .request)
                try fields.encode(outcome.name, forKey: .outcome)
                try fields.encodeIfPresent(outcome.reason, forKey: .reason)
            case .notificationsRemoved(let identifiers):
                try fields.encode(identifiers, forKey: .identifiers)
            case .actedOn(let identifier, let actionIdentifier):
                try fields.encode([identifier], forKey: .identifiers)
                try fields.encode(actionIdentifier, forKey: .actionIdentifier)
            case .summaryDelivered(let shown):
                try fields.encode(shown.map { LocalAPI.VisibleNotification(bundleIdentifier: app, $0) }, forKey: .notifications)
                try fields.encodeIfPresent(shown.first?.summary?.date, forKey: .date)
            }
        case .deviceLockChanged(let locked):
            try fields.encode(locked, forKey: .locked)
        case .focusChanged(let focus):
            try fields.encodeIfPresent(focus, forKey: .focus)
        case .summaryChanged(let summary):
            try fields.encodeIfPresent(summary, forKey: .summary)
        case .timeZoneChanged(let zone):
            try fields.encode(zone.identifier, forKey: .timeZone)
        }
    }

    package init(from decoder: any Decoder) throws {
        let fields = try decoder.container(keyedBy: Field.self)
        let type = try fields.decode(String.self, forKey: .type)
        switch type {
        case "deviceLockChanged":
            self = .deviceLockChanged(locked: try fields.decode(Bool.self, forKey: .locked))
            return
        case "focusChanged":
            self = .focusChanged(try fields.decodeIfPresent(Focus.self, forKey: .focus))
            return
        case "summaryChanged":
            self = .summaryChanged(try fields.decodeIfPresent(ScheduledSummary.self, forKey: .summary))
            return
        case "timeZoneChanged":
            let identifier = try fields.decode(String.self, forKey: .timeZone)
            guard let zone = TimeZone(identifier: identifier) else {
                throw DecodingError.dataCorruptedError(forKey: .timeZone, in: fields, debugDescription: "\"\(identifier)\" is not a time zone.")
            }
            self = .timeZoneChanged(zone)
            return
        default:
            break
        }
        let app = try fields.decode(String.self, forKey: .bundleIdentifier)
        let event: PersonEvent
        switch type {
        case "presented": event = .presented(try fields.decode(LocalAPI.VisibleNotification.self, forKey: .notification).shown)
        case "authorizationPrompt": event = .authorizationPrompt(AuthorizationOptions(rawValue: try fields.decode(UInt.self, forKey: .options)))
        case "settingsChanged": event = .settingsChanged(try fields.decode(NotificationSettings.self, forKey: .settings))
        case "badgeChanged": event = .badgeChanged(try fields.decode(Int.self, forKey: .badge))
        case "appStateChanged": event = .appStateChanged(try fields.decode(AppState.self, forKey: .state))
        case "responseDelivered": event = .responseDelivered(try fields.decode(NotificationResponse.self, forKey: .response))
        case "responseNotCompleted": event = .responseNotCompleted(try fields.decode(NotificationResponse.self, forKey: .response))
        case "willPresentTimedOut":
            event = .willPresentTimedOut(DeliveredNotification(
                request: try fields.decode(NotificationRequest.self, forKey: .request), date: try fields.decode(Date.self, forKey: .date)
            ))
        case "discardedOverLimit": event = .discardedOverLimit(try fields.decode(NotificationRequest.self, forKey: .request))
        case "notificationsRemoved": event = .notificationsRemoved(try fields.decode([String].self, forKey: .identifiers))
        case "actedOn":
            guard let identifier = try fields.decode([String].self, forKey: .identifiers).first else {
                throw DecodingError.dataCorruptedError(forKey: .identifiers, in: fields, debugDescription: "actedOn names the notification acted on.")
            }
            event = .actedOn(identifier: identifier, actionIdentifier: try fields.decode(String.self, forKey: .actionIdentifier))
        case "remoteNotificationDelivered": event = .remoteNotificationDelivered(try fields.decode(RemoteNotification.self, forKey: .remoteNotification))
        case "remoteNotificationHeld": event = .remoteNotificationHeld(try fields.decode(RemoteNotification.self, forKey: .remoteNotification))
        case "remoteNotificationNotCompleted":
            event = .remoteNotificationNotCompleted(try fields.decode(RemoteNotification.self, forKey: .remoteNotification))
        case "contentPreparing": event = .contentPreparing(try fields.decode(NotificationRequest.self, forKey: .request))
        case "contentPrepared":
            let outcome: PreparationOutcome = switch try fields.decode(String.self, forKey: .outcome) {
            case "prepared": .prepared
            case "timedOut": .timedOut
            case "interrupted": .interrupted
            default: .failed(try fields.decodeIfPresent(String.self, forKey: .reason) ?? "")
            }
            event = .contentPrepared(try fields.decode(NotificationRequest.self, forKey: .request), outcome)
        case "summaryDelivered": event = .summaryDelivered(try fields.decode([LocalAPI.VisibleNotification].self, forKey: .notifications).map(\.shown))
        default:
            throw DecodingError.dataCorruptedError(forKey: .type, in: fields, debugDescription: "\"\(type)\" is not an event the daemon sends.")
        }
        self = .app(app, event)
    }
}

extension LocalAPI {
    /// What presenters receive on `GET /v1/admin/events` (WebSocket): `subscribed` first, then each
    /// ``DaemonEvent``, and `overflowed` when the presenter fell behind and must read the state again.
    package enum WatchEvent: Sendable, Hashable, Codable {
        case subscribed
        case overflowed
        case event(DaemonEvent)

        /// Its kind, as the stream's `type` names it.
        package var type: String {
            switch self {
            case .subscribed: "subscribed"
            case .overflowed: "overflowed"
            case .event(let event): event.type
            }
        }

        /// The app the event is about; empty for the device's events and the stream's own.
        package var bundleIdentifier: String {
            if case .event(let event) = self { return event.bundleIdentifier }
            return ""
        }

        package init(from decoder: any Decoder) throws {
            let kind = try decoder.container(keyedBy: Kind.self).decode(String.self, forKey: .type)
            switch kind {
            case "subscribed": self = .subscribed
            case "overflowed": self = .overflowed
            default: self = .event(try DaemonEvent(from: decoder))
            }
        }

        package func encode(to encoder: any Encoder) throws {
            switch self {
            case .subscribed, .overflowed:
                var fields = encoder.container(keyedBy: Kind.self)
                try fields.encode(type, forKey: .type)
                try fields.encode("", forKey: .bundleIdentifier)
            case .event(let event):
                try event.encode(to: encoder)
            }
        }

        private enum Kind: String, CodingKey {
            case type, bundleIdentifier
        }
    }
}

extension LocalAPI.VisibleNotification {
    /// The notification as the machine keeps it (without its app).
    package var shown: NotificationCenterMachine.VisibleNotification {
        NotificationCenterMachine.VisibleNotification(
            notification: notification, presentation: presentation, actions: actions, categoryOptions: categoryOptions,
            hiddenPreviewsBodyPlaceholder: hiddenPreviewsBodyPlaceholder, categorySummaryFormat: categorySummaryFormat, summary: summary
        )
    }
}
