package import Foundation

/// The bodies of the daemon's local API (version 1), shared by the daemon, the `unotify` command and
/// the framework's daemon client. `Docs/local-api.openapi.json` describes the HTTP part and
/// `Docs/local-api-streams.md` the WebSocket messages; the tests check the server against both.
package enum LocalAPI {
    /// The version prefix of every path.
    package static let version = "v1"

    /// The largest message of the daemon's WebSocket streams an app or a presenter reads, fragments
    /// put together (an event carries a notification's content, at most 64 KiB, with its envelope).
    package static let maximumEventSize = 1 << 24
    /// The largest message the daemon reads on an app's event stream (its replies and its state).
    package static let maximumReplySize = 1 << 20

    // MARK: - Problems

    /// An error, as an RFC 9457 problem document (`application/problem+json`).
    package struct Problem: Codable, Sendable, Hashable, Error {
        /// `urn:unotify:problem:<code>`.
        package var type: String
        package var title: String
        package var status: Int
        /// A stable code to switch on: a daemon error code, or `notification` / `personAction`.
        package var code: String
        /// For refusals of the notification system: Apple's `UNError` code, such as 1 for
        /// `notificationsNotAllowed`.
        package var unErrorCode: Int?
        /// For refusals of a person's action: why, such as `unknownAction`.
        package var reason: String?
        package var detail: String

        package init(status: Int, code: String, title: String, detail: String, unErrorCode: Int? = nil, reason: String? = nil) {
            self.type = "urn:unotify:problem:\(code)"
            self.title = title
            self.status = status
            self.code = code
            self.unErrorCode = unErrorCode
            self.reason = reason
            self.detail = detail
        }
    }

    // MARK: - The app's calls

    package struct AuthorizationRequest: Codable, Sendable, Hashable {
        /// `UNAuthorizationOptions` raw value.
        package var options: UInt
        package init(options: UInt) { self.options = options }
    }

    package struct AuthorizationResult: Codable, Sendable, Hashable {
        package var granted: Bool
        package init(granted: Bool) { self.granted = granted }
    }

    package struct BadgeRequest: Codable, Sendable, Hashable {
        package var count: Int
        package init(count: Int) { self.count = count }
    }

    /// A pending request with the date it fires next.
    package struct PendingRequest: Codable, Sendable, Hashable {
        package var request: NotificationRequest
        package var nextFireDate: Date?
        package init(request: NotificationRequest, nextFireDate: Date?) {
            self.request = request
            self.nextFireDate = nextFireDate
        }
    }

    /// What the app is called about on its event stream (`GET /v1/events`, WebSocket).
    package enum AppEvent: Codable, Sendable, Hashable {
        /// A call of the app's delegates (`willPresent`, `response`, `openSettings`,
        /// `remoteNotification`): the machine's own value, answered as ``AppCall`` says.
        case call(AppCall)
        /// The app's device token changed (renewed on the device): an app that registered for remote
        /// notifications hands the new one to its delegate's `didRegisterForRemoteNotificationsWithDeviceToken`.
        case deviceToken(token: String, environment: APNs.Environment)
        /// The app's badge: sent when the app connects and whenever it changes (a push's `badge`, a
        /// notification's content, the app's own call), for `UIApplication.applicationIconBadgeNumber`.
        case badge(count: Int)
        /// The first message: the app is connected and reachable from now on. `contentExtensions`:
        /// whether something on the device shows content extensions (`supportsContentExtensions`).
        case connected(contentExtensions: Bool)
        /// Another process of the app connected and took over: answer with `released` once what was
        /// finished is confirmed, and do not reconnect.
        case replaced

        private enum CodingKeys: String, CodingKey { case type, token, environment, count, contentExtensions }

        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            switch try container.decode(String.self, forKey: .type) {
            case let type where AppCall.types.contains(type):
                self = .call(try AppCall(from: decoder))
            case "deviceToken":
                self = .deviceToken(token: try container.decode(String.self, forKey: .token),
                                    environment: try container.decode(APNs.Environment.self, forKey: .environment))
            case "badge":
                self = .badge(count: try container.decode(Int.self, forKey: .count))
            case "connected":
                self = .connected(contentExtensions: try container.decodeIfPresent(Bool.self, forKey: .contentExtensions) ?? false)
            case "replaced":
                self = .replaced
            case let type:
                throw DecodingError.dataCorruptedError(forKey: .type, in: container, debugDescription: "Unknown event \"\(type)\".")
            }
        }

        package func encode(to encoder: any Encoder) throws {
            // A call is its own object, with the same `type` key.
            if case .call(let call) = self { return try call.encode(to: encoder) }
            var container = encoder.container(keyedBy: CodingKeys.self)
            switch self {
            case .call:
                break
            case .deviceToken(let token, let environment):
                try container.encode("deviceToken", forKey: .type)
                try container.encode(token, forKey: .token)
                try container.encode(environment, forKey: .environment)
            case .badge(let count):
                try container.encode("badge", forKey: .type)
                try container.encode(count, forKey: .count)
            case .connected(let contentExtensions):
                try container.encode("connected", forKey: .type)
                try container.encode(contentExtensions, forKey: .contentExtensions)
            case .replaced:
                try container.encode("replaced", forKey: .type)
            }
        }
    }

    /// What the app sends on its event stream.
    package enum AppReply: Codable, Sendable, Hashable {
        /// The app is in the foreground or the background (sent first, and on every change).
        case state(AppState)
        /// The delegate's `willPresent` answer; `nil` options when the app has no delegate.
        case willPresentAnswer(ticket: UInt64, options: UInt?)
        /// The delegate finished with the response of this ticket.
        case responseCompleted(ticket: UInt64)
        /// The app's `didReceiveRemoteNotification` called its completion handler with this result.
        case remoteNotificationCompleted(ticket: UInt64, result: BackgroundFetchResult)
        /// The answer to `replaced`, after every confirmation this connection will send: the daemon
        /// may hand what is left to the process that took over.
        case released

        private enum CodingKeys: String, CodingKey { case type, state, ticket, options, result }

        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            switch try container.decode(String.self, forKey: .type) {
            case "state":
                self = .state(try container.decode(AppState.self, forKey: .state))
            case "willPresentAnswer":
                self = .willPresentAnswer(ticket: try container.decode(UInt64.self, forKey: .ticket),
                                          options: try container.decodeIfPresent(UInt.self, forKey: .options))
            case "responseCompleted":
                self = .responseCompleted(ticket: try container.decode(UInt64.self, forKey: .ticket))
            case "remoteNotificationCompleted":
                self = .remoteNotificationCompleted(ticket: try container.decode(UInt64.self, forKey: .ticket),
                                                    result: try container.decode(BackgroundFetchResult.self, forKey: .result))
            case "released":
                self = .released
            case let type:
                throw DecodingError.dataCorruptedError(forKey: .type, in: container, debugDescription: "Unknown reply \"\(type)\".")
            }
        }

        package func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            switch self {
            case .state(let state):
                try container.encode("state", forKey: .type)
                try container.encode(state, forKey: .state)
            case .willPresentAnswer(let ticket, let options):
                try container.encode("willPresentAnswer", forKey: .type)
                try container.encode(ticket, forKey: .ticket)
                try container.encodeIfPresent(options, forKey: .options)
            case .responseCompleted(let ticket):
                try container.encode("responseCompleted", forKey: .type)
                try container.encode(ticket, forKey: .ticket)
            case .remoteNotificationCompleted(let ticket, let result):
                try container.encode("remoteNotificationCompleted", forKey: .type)
                try container.encode(ticket, forKey: .ticket)
                try container.encode(result, forKey: .result)
            case .released:
                try container.encode("released", forKey: .type)
            }
        }
    }

    // MARK: - The person's and the administrator's calls

    package struct RegisterApp: Codable, Sendable, Hashable {
        package var bundleIdentifier: String
        package var launchCommand: String?
        package init(bundleIdentifier: String, launchCommand: String? = nil) {
            self.bundleIdentifier = bundleIdentifier
            self.launchCommand = launchCommand
        }
    }

    package struct AppKey: Codable, Sendable, Hashable {
        package var bundleIdentifier: String
        package var key: String
        package init(bundleIdentifier: String, key: String) {
            self.bundleIdentifier = bundleIdentifier
            self.key = key
        }
    }

    /// The body of a request for an app's device token.
    package struct RemoteNotificationRegistration: Codable, Sendable, Hashable {
        package var environment: APNs.Environment
        package init(environment: APNs.Environment) { self.environment = environment }
    }

    /// A push handed to an app on this device directly (`unotify push`, like `xcrun simctl push`).
    package struct LocalPush: Codable, Sendable, Hashable {
        /// The push's JSON payload, as text: an object with `aps` and custom keys.
        package var payload: String
        /// The request's identifier on the device, as `apns-collapse-id` sets it.
        package var collapseID: String?
        package init(payload: String, collapseID: String? = nil) {
            self.payload = payload
            self.collapseID = collapseID
        }
    }

    /// An app's device token, issued by the push gateway the daemon is linked to.
    package struct DeviceToken: Codable, Sendable, Hashable {
        package var bundleIdentifier: String
        package var environment: APNs.Environment
        /// Lower-case hexadecimal, as providers put it in `/3/device/<token>`.
        package var token: String
        package init(bundleIdentifier: String, environment: APNs.Environment, token: String) {
            self.bundleIdentifier = bundleIdentifier
            self.environment = environment
            self.token = token
        }
    }

    /// An app's service extension: the executable the daemon starts for each push marked
    /// `mutable-content`, and how long it has (30 seconds unless given).
    package struct ServiceExtension: Codable, Sendable, Hashable {
        package var executable: String
        package var timeLimit: Double?

        package init(executable: String, timeLimit: Double? = nil) {
            self.executable = executable
            self.timeLimit = timeLimit
        }
    }

    /// An app's content extension: the executable the daemon starts when the person expands one of the
    /// categories it draws, and its `Info.plist` attributes.
    package struct ContentExtension: Codable, Sendable, Hashable {
        package var executable: String
        package var attributes: ContentExtensionAttributes

        package init(executable: String, attributes: ContentExtensionAttributes) {
            self.executable = executable
            self.attributes = attributes
        }
    }

    /// How many background pushes per hour may wake an app that is not in the foreground; `null` for no
    /// limit. The key is required, so that a body without it is not taken for "no limit".
    package struct BackgroundPushBudget: Codable, Sendable, Hashable {
        package var perHour: Int?

        package init(perHour: Int?) {
            self.perHour = perHour
        }

        private enum CodingKeys: String, CodingKey { case perHour }

        package init(from decoder: any Decoder) throws {
            perHour = try decoder.container(keyedBy: CodingKeys.self).decodeNullable(Int.self, requiredFor: .perHour)
        }

        package func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(perHour, forKey: .perHour)
        }
    }

    package struct AppSummary: Codable, Sendable, Hashable {
        package var bundleIdentifier: String
        package var launchCommand: String?
        /// `foreground` or `background` while the app is connected, else `notRunning`.
        package var state: String?
        /// Why the app is quarantined (its stored state cannot be read), when it is.
        package var quarantined: String?
        /// The name surfaces show (``ShownAppIdentity/name``).
        package var name: String?
        package init(bundleIdentifier: String, launchCommand: String?, state: String? = nil, quarantined: String? = nil, name: String? = nil) {
            self.bundleIdentifier = bundleIdentifier
            self.launchCommand = launchCommand
            self.state = state
            self.quarantined = quarantined
            self.name = name
        }
    }

    /// What `POST /v1/admin/apps/{app}/reset` did.
    package struct AppReset: Codable, Sendable, Hashable {
        package var bundleIdentifier: String
        /// How many stored parts (its core, categories, pending, delivered and queued rows) were set aside.
        package var setAside: Int
        package init(bundleIdentifier: String, setAside: Int) {
            self.bundleIdentifier = bundleIdentifier
            self.setAside = setAside
        }
    }

    package struct AuthorizationDecision: Codable, Sendable, Hashable {
        /// `grant`, `deny`, `provisional` or `reset`.
        package var decision: String
        package init(decision: String) { self.decision = decision }
    }

    /// A change to an app's settings: every field is optional, and only those given change.
    package struct SettingsChange: Codable, Sendable, Hashable {
        package var alertSetting: SettingValue?
        package var soundSetting: SettingValue?
        package var badgeSetting: SettingValue?
        package var notificationCenterSetting: SettingValue?
        package var lockScreenSetting: SettingValue?
        package var carPlaySetting: SettingValue?
        package var criticalAlertSetting: SettingValue?
        package var timeSensitiveSetting: SettingValue?
        package var scheduledDeliverySetting: SettingValue?
        package var announcementSetting: SettingValue?
        package var directMessagesSetting: SettingValue?
        package var alertStyle: AlertStyle?
        package var showPreviewsSetting: ShowPreviews?

        package init() {}

        package func apply(to settings: inout NotificationSettings) {
            if let alertSetting { settings.alertSetting = alertSetting }
            if let soundSetting { settings.soundSetting = soundSetting }
            if let badgeSetting { settings.badgeSetting = badgeSetting }
            if let notificationCenterSetting { settings.notificationCenterSetting = notificationCenterSetting }
            if let lockScreenSetting { settings.lockScreenSetting = lockScreenSetting }
            if let carPlaySetting { settings.carPlaySetting = carPlaySetting }
            if let criticalAlertSetting { settings.criticalAlertSetting = criticalAlertSetting }
            if let timeSensitiveSetting { settings.timeSensitiveSetting = timeSensitiveSetting }
            if let scheduledDeliverySetting { settings.scheduledDeliverySetting = scheduledDeliverySetting }
            if let announcementSetting { settings.announcementSetting = announcementSetting }
            if let directMessagesSetting { settings.directMessagesSetting = directMessagesSetting }
            if let alertStyle { settings.alertStyle = alertStyle }
            if let showPreviewsSetting { settings.showPreviewsSetting = showPreviewsSetting }
        }
    }

    /// What a person does with a notification.
    package struct Respond: Codable, Sendable, Hashable {
        /// `open`, `action`, `reply`, `dismiss` or `settings`.
        package var kind: String
        /// For `action` and `reply`: the action's identifier.
        package var actionIdentifier: String?
        /// For `reply`: the typed text.
        package var text: String?

        package init(kind: String, actionIdentifier: String? = nil, text: String? = nil) {
            self.kind = kind
            self.actionIdentifier = actionIdentifier
            self.text = text
        }
    }

    /// A change to the device: where it is, whether it is locked, its time zone.
    package struct DeviceChange: Codable, Sendable, Hashable {
        package var latitude: Double?
        package var longitude: Double?
        package var locked: Bool?
        package var timeZone: String?
        package init(latitude: Double? = nil, longitude: Double? = nil, locked: Bool? = nil, timeZone: String? = nil) {
            self.latitude = latitude
            self.longitude = longitude
            self.locked = locked
            self.timeZone = timeZone
        }
    }

    /// The Focus that is on (`GET /v1/admin/focus`), or the one to turn on (`PUT`); `null` for none.
    package struct DeviceFocus: Codable, Sendable, Hashable {
        package var focus: Focus?

        package init(focus: Focus?) {
            self.focus = focus
        }

        private enum CodingKeys: CodingKey { case focus }

        /// `focus` must be there, `null` or a Focus: a body without it does not turn the Focus off.
        package init(from decoder: any Decoder) throws {
            focus = try decoder.container(keyedBy: CodingKeys.self).decodeNullable(Focus.self, requiredFor: .focus)
        }

        package func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(focus, forKey: .focus)
        }
    }

    /// The Scheduled Summary (`GET /v1/admin/summary`), or the one to turn on (`PUT`); `null` while off.
    package struct DeviceSummary: Codable, Sendable, Hashable {
        package var summary: ScheduledSummary?

        package init(summary: ScheduledSummary?) {
            self.summary = summary
        }

        private enum CodingKeys: CodingKey { case summary }

        /// `summary` must be there, `null` or a summary: a body without it does not turn the summary off.
        package init(from decoder: any Decoder) throws {
            summary = try decoder.container(keyedBy: CodingKeys.self).decodeNullable(ScheduledSummary.self, requiredFor: .summary)
        }

        package func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(summary, forKey: .summary)
        }
    }

    /// `POST /api/apps/{app}/keep` on the notification center's page: "Deliver Immediately", or "Deliver
    /// in Scheduled Summary" with `inSummary`.
    package struct KeepProvisional: Codable, Sendable, Hashable {
        package var inSummary: Bool

        package init(inSummary: Bool = false) {
            self.inSummary = inSummary
        }

        private enum CodingKeys: CodingKey { case inSummary }

        package init(from decoder: any Decoder) throws {
            inSummary = try decoder.container(keyedBy: CodingKeys.self).decodeIfPresent(Bool.self, forKey: .inSummary) ?? false
        }
    }

    /// A notification as the person sees it, with its app.
    package struct VisibleNotification: Codable, Sendable, Hashable {
        package var bundleIdentifier: String
        package var notification: DeliveredNotification
        package var presentation: Presentation
        package var actions: [NotificationAction]
        package var categoryOptions: CategoryOptions
        package var hiddenPreviewsBodyPlaceholder: String?
        package var categorySummaryFormat: String?
        /// The Scheduled Summary it waits for (`held`) or came in; absent when it was shown at once.
        package var summary: SummaryPlacement?

        package init(bundleIdentifier: String, _ shown: NotificationCenterMachine.VisibleNotification) {
            self.bundleIdentifier = bundleIdentifier
            self.notification = shown.notification
            self.presentation = shown.presentation
            self.actions = shown.actions
            self.categoryOptions = shown.categoryOptions
            self.hiddenPreviewsBodyPlaceholder = shown.hiddenPreviewsBodyPlaceholder
            self.categorySummaryFormat = shown.categorySummaryFormat
            self.summary = shown.summary
        }
    }

    /// An app's authorization prompt on screen (`GET /v1/admin/prompts`).
    package struct AuthorizationPrompt: Codable, Sendable, Hashable {
        package var bundleIdentifier: String
        /// The `UNAuthorizationOptions` the app asks for, as their raw value.
        package var options: UInt

        package init(bundleIdentifier: String, options: UInt) {
            self.bundleIdentifier = bundleIdentifier
            self.options = options
        }
    }
}

extension KeyedDecodingContainer {
    /// The value of `key`, which must be there: `null` (read as `nil`) or a `T`. A body that leaves it
    /// out is refused rather than read as `null`, which would turn something off.
    package func decodeNullable<T: Decodable>(_ type: T.Type, requiredFor key: Key) throws -> T? {
        guard contains(key) else {
            throw DecodingError.keyNotFound(key, DecodingError.Context(
                codingPath: codingPath, debugDescription: "\"\(key.stringValue)\" is required: a value, or null."
            ))
        }
        return try decodeIfPresent(T.self, forKey: key)
    }
}
