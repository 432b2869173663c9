import Foundation

/// The device link's messages (`Docs/device-link.md`): what a push gateway and a device's daemon say
/// to each other, one JSON object per WebSocket text frame.
package enum DeviceLink {
    /// The path of the link on the gateway's device listener.
    package static let path = "/v1/device-link"

    /// The largest message either side sends or reads, fragments put together: the gateway and the
    /// daemon each refuse a larger one, so neither writes one (a device's reports are sent in as many
    /// messages as it takes).
    package static let maximumMessageSize = 1 << 16

    /// A push as it travels down the link.
    package struct Push: Sendable, Hashable, Codable {
        package var sequence: Int64
        package var token: String
        package var bundleIdentifier: String
        package var environment: APNs.Environment
        package var apnsID: String
        package var pushType: APNs.PushType
        package var priority: Int
        /// Seconds since 1970.
        package var expiresAt: Double
        package var collapseID: String?
        /// The provider's JSON payload, as text.
        package var payload: String
        /// Seconds since 1970.
        package var receivedAt: Double
        /// The push's `apns-unique-id`: what the device names it by when it reports its stages for
        /// the delivery log. Absent for a push stored before the gateway kept a log.
        package var uniqueID: String?

        package init(
            sequence: Int64, token: String, bundleIdentifier: String, environment: APNs.Environment, apnsID: String, pushType: APNs.PushType,
            priority: Int, expiresAt: Double, collapseID: String?, payload: String, receivedAt: Double, uniqueID: String? = nil
        ) {
            self.sequence = sequence
            self.token = token
            self.bundleIdentifier = bundleIdentifier
            self.environment = environment
            self.apnsID = apnsID
            self.pushType = pushType
            self.priority = priority
            self.expiresAt = expiresAt
            self.collapseID = collapseID
            self.payload = payload
            self.receivedAt = receivedAt
            self.uniqueID = uniqueID
        }
    }

    /// The gateway's `push` message for `push`, written straight to its bytes: the same bytes as
    /// ``GatewayMessage/push(_:)`` encoded by ``StreamingJSONEncoder`` (one is written for every push
    /// a device gets, and `Codable`'s containers were most of its cost).
    package static func pushMessage(_ push: Push) throws -> [UInt8] {
        var object = JSONObjectWriter(capacity: 320 + push.payload.utf8.count)
        object.add("type", "push")
        object.add("sequence", push.sequence)
        object.add("token", push.token)
        object.add("bundleIdentifier", push.bundleIdentifier)
        object.add("environment", push.environment.rawValue)
        object.add("apnsID", push.apnsID)
        object.add("pushType", push.pushType.rawValue)
        object.add("priority", push.priority)
        try object.add("expiresAt", push.expiresAt)
        if let collapseID = push.collapseID { object.add("collapseID", collapseID) }
        object.add("payload", push.payload)
        try object.add("receivedAt", push.receivedAt)
        if let uniqueID = push.uniqueID { object.add("uniqueID", uniqueID) }
        return object.finish()
    }

    /// What the gateway sends.
    package enum GatewayMessage: Sendable, Hashable {
        case welcome(deviceID: String, window: Int)
        case push(Push)
        case registered(requestID: String, token: String, bundleIdentifier: String, environment: APNs.Environment)
        case unregistered(requestID: String, bundleIdentifier: String)
        case error(requestID: String?, code: String, message: String)
        /// The device's delivery-log reports up to `through` are recorded: it may forget them.
        case reported(through: Int64)
        /// The app is subscribed to the broadcast channel (or, with `subscribed` false, no longer).
        case subscription(requestID: String, channelID: String, subscribed: Bool)
        /// The device's apps are noted (``DeviceMessage/apps(requestID:bundleIdentifiers:)``): the
        /// tokens of every other app of the device answer `410 Unregistered` from now on.
        case appsNoted(requestID: String)
    }

    /// What the device sends.
    package enum DeviceMessage: Sendable, Hashable {
        case ack(through: Int64)
        case register(requestID: String, bundleIdentifier: String, environment: APNs.Environment)
        case unregister(requestID: String, bundleIdentifier: String)
        /// Stages of pushes the device received, for the delivery log, numbered by the device up to
        /// `through`; sent again until the gateway answers `reported`.
        case report(through: Int64, reports: [DeliveryLog.Report])
        /// Subscribes the app to a broadcast channel of its own in `environment` (or, with
        /// `subscribe` false, ends the subscription).
        case subscribe(requestID: String, bundleIdentifier: String, environment: APNs.Environment, channelID: String, subscribe: Bool)
        /// Every app on the device: sent when a link comes up and when an app is removed. An app that
        /// left the device (removed while the device was linked or not) has its tokens ended, as
        /// `unregister` ends them; the gateway answers `appsNoted`.
        case apps(requestID: String, bundleIdentifiers: [String])
    }
}

extension DeviceLink.GatewayMessage: Codable {
    private enum CodingKeys: String, CodingKey {
        case type, deviceID, window, requestID, token, bundleIdentifier, environment, code, message, through, channelID
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        switch try container.decode(String.self, forKey: .type) {
        case "welcome":
            self = .welcome(deviceID: try container.decode(String.self, forKey: .deviceID), window: try container.decode(Int.self, forKey: .window))
        case "push":
            self = .push(try DeviceLink.Push(from: decoder))
        case "registered":
            self = .registered(
                requestID: try container.decode(String.self, forKey: .requestID), token: try container.decode(String.self, forKey: .token),
                bundleIdentifier: try container.decode(String.self, forKey: .bundleIdentifier),
                environment: try container.decode(APNs.Environment.self, forKey: .environment)
            )
        case "unregistered":
            self = .unregistered(requestID: try container.decode(String.self, forKey: .requestID),
                                 bundleIdentifier: try container.decode(String.self, forKey: .bundleIdentifier))
        case "error":
            self = .error(requestID: try container.decodeIfPresent(String.self, forKey: .requestID),
                          code: try container.decode(String.self, forKey: .code), message: try container.decode(String.self, forKey: .message))
        case "reported":
            self = .reported(through: try container.decode(Int64.self, forKey: .through))
        case "appsNoted":
            self = .appsNoted(requestID: try container.decode(String.self, forKey: .requestID))
        case "subscribed", "unsubscribed":
            self = .subscription(requestID: try container.decode(String.self, forKey: .requestID),
                                 channelID: try container.decode(String.self, forKey: .channelID),
                                 subscribed: try container.decode(String.self, forKey: .type) == "subscribed")
        case let other:
            throw DecodingError.dataCorruptedError(forKey: .type, in: container, debugDescription: "Unknown message type \(other).")
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .welcome(let deviceID, let window):
            try container.encode("welcome", forKey: .type)
            try container.encode(deviceID, forKey: .deviceID)
            try container.encode(window, forKey: .window)
        case .push(let push):
            try container.encode("push", forKey: .type)
            try push.encode(to: encoder)
        case .registered(let requestID, let token, let bundleIdentifier, let environment):
            try container.encode("registered", forKey: .type)
            try container.encode(requestID, forKey: .requestID)
            try container.encode(token, forKey: .token)
            try container.encode(bundleIdentifier, forKey: .bundleIdentifier)
            try container.encode(environment, forKey: .environment)
        case .unregistered(let requestID, let bundleIdentifier):
            try container.encode("unregistered", forKey: .type)
            try container.encode(requestID, forKey: .requestID)
            try container.encode(bundleIdentifier, forKey: .bundleIdentifier)
        case .error(let requestID, let code, let message):
            try container.encode("error", forKey: .type)
            try container.encodeIfPresent(requestID, forKey: .requestID)
            try container.encode(code, forKey: .code)
            try container.encode(message, forKey: .message)
        case .reported(let through):
            try container.encode("reported", forKey: .type)
            try container.encode(through, forKey: .through)
        case .subscription(let requestID, let channelID, let subscribed):
            try container.encode(subscribed ? "subscribed" : "unsubscribed", forKey: .type)
            try container.encode(requestID, forKey: .requestID)
            try container.encode(channelID, forKey: .channelID)
        case .appsNoted(let requestID):
            try container.encode("appsNoted", forKey: .type)
            try container.encode(requestID, forKey: .requestID)
        }
    }
}

extension DeviceLink.DeviceMessage: Codable {
    private enum CodingKeys: String, CodingKey {
        case type, through, requestID, bundleIdentifier, environment, reports, channelID, bundleIdentifiers
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        switch try container.decode(String.self, forKey: .type) {
        case "ack":
            self = .ack(through: try container.decode(Int64.self, forKey: .through))
        case "register":
            self = .register(requestID: try container.decode(String.self, forKey: .requestID),
                             bundleIdentifier: try container.decode(String.self, forKey: .bundleIdentifier),
                             environment: try container.decode(APNs.Environment.self, forKey: .environment))
        case "unregister":
            self = .unregister(requestID: try container.decode(String.self, forKey: .requestID),
                               bundleIdentifier: try container.decode(String.self, forKey: .bundleIdentifier))
        case "report":
            self = .report(through: try container.decode(Int64.self, forKey: .through),
                           reports: try container.decode([DeliveryLog.Report].self, forKey: .reports))
        case "apps":
            self = .apps(requestID: try container.decode(String.self, forKey: .requestID),
                         bundleIdentifiers: try container.decode([String].self, forKey: .bundleIdentifiers))
        case "subscribe", "unsubscribe":
            self = .subscribe(requestID: try container.decode(String.self, forKey: .requestID),
                              bundleIdentifier: try container.decode(String.self, forKey: .bundleIdentifier),
                              environment: try container.decode(APNs.Environment.self, forKey: .environment),
                              channelID: try container.decode(String.self, forKey: .channelID),
                              subscribe: try container.decode(String.self, forKey: .type) == "subscribe")
        case let other:
            throw DecodingError.dataCorruptedError(forKey: .type, in: container, debugDescription: "Unknown message type \(other).")
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .ack(let through):
            try container.encode("ack", forKey: .type)
            try container.encode(through, forKey: .through)
        case .register(let requestID, let bundleIdentifier, let environment):
            try container.encode("register", forKey: .type)
            try container.encode(requestID, forKey: .requestID)
            try container.encode(bundleIdentifier, forKey: .bundleIdentifier)
            try container.encode(environment, forKey: .environment)
        case .unregister(let requestID, let bundleIdentifier):
            try container.encode("unregister", forKey: .type)
            try container.encode(requestID, forKey: .requestID)
            try container.encode(bundleIdentifier, forKey: .bundleIdentifier)
        case .report(let through, let reports):
            try container.encode("report", forKey: .type)
            try container.encode(through, forKey: .through)
            try container.encode(reports, forKey: .reports)
        case .subscribe(let requestID, let bundleIdentifier, let environment, let channelID, let subscribe):
            try container.encode(subscribe ? "subscribe" : "unsubscribe", forKey: .type)
            try container.encode(requestID, forKey: .requestID)
            try container.encode(bundleIdentifier, forKey: .bundleIdentifier)
            try container.encode(environment, forKey: .environment)
            try container.encode(channelID, forKey: .channelID)
        case .apps(let requestID, let bundleIdentifiers):
            try container.encode("apps", forKey: .type)
            try container.encode(requestID, forKey: .requestID)
            try container.encode(bundleIdentifiers, forKey: .bundleIdentifiers)
        }
    }
}
