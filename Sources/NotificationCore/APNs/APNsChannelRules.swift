package import Foundation

extension APNs {
    /// A request of APNs' broadcast API: its channel management (`/1/apps/<bundle>/channels`,
    /// `/1/apps/<bundle>/all-channels`) and its sends (`/4/broadcasts/apps/<bundle>`).
    package enum ChannelRequest: Sendable, Equatable {
        case create(bundleIdentifier: String)
        case read(bundleIdentifier: String, channelID: String)
        case delete(bundleIdentifier: String, channelID: String)
        case list(bundleIdentifier: String)
        case broadcast(bundleIdentifier: String, channelID: String)

        package var bundleIdentifier: String {
            switch self {
            case .create(let bundle), .read(let bundle, _), .delete(let bundle, _), .list(let bundle), .broadcast(let bundle, _): bundle
            }
        }
    }

    /// What a channel is made with: `message-storage-policy` and `push-type`.
    package struct ChannelSettings: Sendable, Hashable {
        /// Policy 1, Most Recent Message Stored: a subscriber not linked gets the latest message
        /// when it links. Policy 0, No Message Stored: only subscribers linked now get it.
        package var storesMostRecent: Bool
        /// `liveactivity` as on APNs, or, beyond APNs, `alert`.
        package var pushType: PushType

        package init(storesMostRecent: Bool, pushType: PushType) {
            self.storesMostRecent = storesMostRecent
            self.pushType = pushType
        }
    }

    /// A broadcast's headers, checked.
    package struct BroadcastHeaders: Sendable, Hashable {
        /// `apns-request-id`, given or made.
        package var requestID: String
        package var pushType: PushType
        package var priority: Int
        /// `apns-expiration`: seconds since 1970, 0 for now only.
        package var expiration: Int64
    }

    /// How long a channel keeps its most recent message for a subscriber not linked: APNs' 8 hours.
    package static let channelMessageLifetime: TimeInterval = 8 * 3600
    /// The channels an app may have in each environment.
    package static let channelsPerApp = 10_000
    /// The largest broadcast payload.
    package static let maximumBroadcastBytes = 5_120
    /// The push types a channel may carry: Live Activities, as on APNs, and alerts.
    package static let channelPushTypes: [PushType] = [.liveactivity, .alert]

    /// Whether `path` is the broadcast API's (its requests are checked by these rules, not the
    /// device pushes').
    package static func isChannelPath(_ path: String) -> Bool {
        path.hasPrefix("/1/apps/") || path.hasPrefix("/4/broadcasts/")
    }

    /// Checks a broadcast API request's method, path, `apns-request-id` and `apns-channel-id`.
    package static func checkChannelTarget(method: String, path: String, headers: [(name: String, value: String)]) -> Result<ChannelRequest, Rejection> {
        func value(_ name: String) -> String? { headers.first { $0.name == name }?.value }
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        enum Kind { case channels, allChannels, broadcasts }
        let kind: Kind, bundle: String
        switch parts.count {
        case 4 where parts[0] == "1" && parts[1] == "apps" && parts[3] == "channels": (kind, bundle) = (.channels, parts[2])
        case 4 where parts[0] == "1" && parts[1] == "apps" && parts[3] == "all-channels": (kind, bundle) = (.allChannels, parts[2])
        case 4 where parts[0] == "4" && parts[1] == "broadcasts" && parts[2] == "apps": (kind, bundle) = (.broadcasts, parts[3])
        default: return .failure(Rejection(.badPath))
        }
        guard !bundle.isEmpty else { return .failure(Rejection(.badPath)) }
        // The bundle identifier alone: a push type's suffix is not part of a channel's app.
        if bundle.contains(".push-type.") || PushType.allCases.contains(where: { $0.topicSuffix.map(bundle.hasSuffix) ?? false }) {
            return .failure(Rejection(.topicDisallowed))
        }
        guard isTopic(bundle) else { return .failure(Rejection(.badPath)) }
        if let requestID = value("apns-request-id"), !isCanonicalUUID(requestID) { return .failure(Rejection(.badMessageId)) }

        func channelID() -> Result<String, Rejection> {
            guard let channel = value("apns-channel-id"), !channel.isEmpty else { return .failure(Rejection(.missingChannelId)) }
            guard isChannelID(channel) else { return .failure(Rejection(.badChannelId)) }
            return .success(channel)
        }
        switch (kind, method) {
        case (.channels, "POST"): return .success(.create(bundleIdentifier: bundle))
        case (.channels, "GET"): return channelID().map { .read(bundleIdentifier: bundle, channelID: $0) }
        case (.channels, "DELETE"): return channelID().map { .delete(bundleIdentifier: bundle, channelID: $0) }
        case (.allChannels, "GET"): return .success(.list(bundleIdentifier: bundle))
        case (.broadcasts, "POST"): return channelID().map { .broadcast(bundleIdentifier: bundle, channelID: $0) }
        default: return .failure(Rejection(.methodNotAllowed))
        }
    }

    /// Whether `text` can be a channel identifier: base64 of at least one byte.
    package static func isChannelID(_ text: String) -> Bool {
        text.count <= 128 && Data(base64Encoded: text).map { !$0.isEmpty } == true
    }

    /// Reads a channel's creation body, `{"message-storage-policy": 0|1, "push-type": "LiveActivity"}`.
    package static func checkChannelCreation(body: [UInt8]) -> Result<ChannelSettings, Rejection> {
        guard !body.isEmpty else { return .failure(Rejection(.payloadEmpty)) }
        guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
            return .failure(Rejection(.badRequestPayload))
        }
        guard let pushTypeName = object["push-type"] else { return .failure(Rejection(.missingPushType)) }
        guard let name = pushTypeName as? String, let pushType = PushType(rawValue: name.lowercased()), channelPushTypes.contains(pushType) else {
            return .failure(Rejection(.invalidPushType))
        }
        // An integer, 0 or 1: not `true`, not `"1"` (JSONDecoder, unlike JSONSerialization, tells these apart).
        struct Policy: Decodable {
            let value: Int
            enum CodingKeys: String, CodingKey { case value = "message-storage-policy" }
        }
        guard let policy = (try? JSONDecoder().decode(Policy.self, from: Data(body)))?.value, policy == 0 || policy == 1 else {
            return .failure(Rejection(.badRequestParams))
        }
        return .success(ChannelSettings(storesMostRecent: policy == 1, pushType: pushType))
    }

    /// Checks a broadcast's headers and payload size against its channel.
    package static func checkBroadcastHeaders(
        headers: [(name: String, value: String)], payloadBytes: Int, channel: ChannelSettings, newID: () -> String
    ) -> Result<BroadcastHeaders, Rejection> {
        func value(_ name: String) -> String? { headers.first { $0.name == name }?.value }
        guard let typeName = value("apns-push-type") else { return .failure(Rejection(.missingPushType)) }
        guard let pushType = PushType(rawValue: typeName.lowercased()), pushType == channel.pushType else {
            return .failure(Rejection(.invalidPushType))
        }
        guard let expirationText = value("apns-expiration"), let expiration = Int64(expirationText), expiration >= 0 else {
            return .failure(Rejection(.badExpirationDate))
        }
        // A channel that stores nothing delivers only now.
        if !channel.storesMostRecent, expiration != 0 { return .failure(Rejection(.badExpirationDate)) }
        guard let priorityText = value("apns-priority"), let priority = Int(priorityText), [10, 5, 1].contains(priority) else {
            return .failure(Rejection(.badPriority))
        }
        guard payloadBytes > 0 else { return .failure(Rejection(.payloadEmpty)) }
        guard payloadBytes <= maximumBroadcastBytes else { return .failure(Rejection(.payloadTooLarge)) }
        return .success(BroadcastHeaders(requestID: value("apns-request-id") ?? newID(), pushType: pushType, priority: priority,
                                         expiration: expiration))
    }
}
