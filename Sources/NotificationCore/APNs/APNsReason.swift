/// Apple's provider API for remote notifications, as the push gateway speaks it: the vocabulary of
/// its answers and the rules of its requests. Pure values; the gateway does the I/O.
package enum APNs {}

extension APNs {
    /// Why a provider's request was refused: Apple's reason string, with the HTTP status APNs answers
    /// it with.
    ///
    /// A struct rather than an enum, as the reason strings are Apple's vocabulary and not ours: the
    /// gateway writes them as they are, and a spelling Apple uses in the wild sits beside the one its
    /// documentation prints (see ``badEnvironmentKeyInToken``).
    package struct Reason: Sendable, Hashable, CustomStringConvertible {
        /// The string in the `reason` key of the JSON body, exactly as APNs writes it.
        package let rawValue: String
        /// The HTTP status it is answered with.
        package let status: Int

        private init(_ rawValue: String, _ status: Int) {
            self.rawValue = rawValue
            self.status = status
        }

        package var description: String { "\(status) \(rawValue)" }

        // 400
        package static let badCollapseId = Reason("BadCollapseId", 400)
        package static let badDeviceToken = Reason("BadDeviceToken", 400)
        package static let badExpirationDate = Reason("BadExpirationDate", 400)
        package static let badMessageId = Reason("BadMessageId", 400)
        package static let badPriority = Reason("BadPriority", 400)
        package static let badTopic = Reason("BadTopic", 400)
        package static let deviceTokenNotForTopic = Reason("DeviceTokenNotForTopic", 400)
        package static let duplicateHeaders = Reason("DuplicateHeaders", 400)
        package static let idleTimeout = Reason("IdleTimeout", 400)
        package static let invalidPushType = Reason("InvalidPushType", 400)
        package static let missingDeviceToken = Reason("MissingDeviceToken", 400)
        package static let missingTopic = Reason("MissingTopic", 400)
        package static let payloadEmpty = Reason("PayloadEmpty", 400)
        package static let topicDisallowed = Reason("TopicDisallowed", 400)
        // 400, broadcast channels only
        package static let badChannelId = Reason("BadChannelId", 400)
        package static let badRequestParams = Reason("BadRequestParams", 400)
        package static let badRequestPayload = Reason("BadRequestPayload", 400)
        package static let cannotCreateChannelConfig = Reason("CannotCreateChannelConfig", 400)
        package static let channelNotRegistered = Reason("ChannelNotRegistered", 400)
        package static let featureNotEnabled = Reason("FeatureNotEnabled", 400)
        package static let missingChannelId = Reason("MissingChannelId", 400)
        package static let missingPushType = Reason("MissingPushType", 400)
        // 403
        package static let badCertificate = Reason("BadCertificate", 403)
        package static let badCertificateEnvironment = Reason("BadCertificateEnvironment", 403)
        package static let expiredProviderToken = Reason("ExpiredProviderToken", 403)
        package static let forbidden = Reason("Forbidden", 403)
        package static let invalidProviderToken = Reason("InvalidProviderToken", 403)
        package static let missingProviderToken = Reason("MissingProviderToken", 403)
        package static let unrelatedKeyIdInToken = Reason("UnrelatedKeyIdInToken", 403)
        /// The spelling Apple's documentation prints for a key used in the other environment.
        package static let badEnvironmentKeyIdInToken = Reason("BadEnvironmentKeyIdInToken", 403)
        /// The spelling APNs has been seen to send for the same refusal, and that client libraries
        /// handle; the gateway sends this one unless told otherwise.
        package static let badEnvironmentKeyInToken = Reason("BadEnvironmentKeyInToken", 403)
        // 404, 405
        package static let badPath = Reason("BadPath", 404)
        package static let methodNotAllowed = Reason("MethodNotAllowed", 405)
        // 410
        package static let expiredToken = Reason("ExpiredToken", 410)
        package static let unregistered = Reason("Unregistered", 410)
        // 413
        package static let payloadTooLarge = Reason("PayloadTooLarge", 413)
        // 429
        package static let tooManyProviderTokenUpdates = Reason("TooManyProviderTokenUpdates", 429)
        package static let tooManyRequests = Reason("TooManyRequests", 429)
        // 500, 503
        package static let internalServerError = Reason("InternalServerError", 500)
        package static let serviceUnavailable = Reason("ServiceUnavailable", 503)
        package static let shutdown = Reason("Shutdown", 503)

        /// Every reason of Apple's table for device-token pushes, both spellings of the environment
        /// key's included.
        package static let all: [Reason] = [
            badCollapseId, badDeviceToken, badExpirationDate, badMessageId, badPriority, badTopic, deviceTokenNotForTopic,
            duplicateHeaders, idleTimeout, invalidPushType, missingDeviceToken, missingTopic, payloadEmpty, topicDisallowed,
            badCertificate, badCertificateEnvironment, expiredProviderToken, forbidden, invalidProviderToken, missingProviderToken,
            unrelatedKeyIdInToken, badEnvironmentKeyIdInToken, badEnvironmentKeyInToken, badPath, methodNotAllowed, expiredToken,
            unregistered, payloadTooLarge, tooManyProviderTokenUpdates, tooManyRequests, internalServerError, serviceUnavailable,
            shutdown,
        ]

        /// The reasons only broadcast channels' requests are refused with.
        package static let channelReasons: [Reason] = [
            badChannelId, badRequestParams, badRequestPayload, cannotCreateChannelConfig, channelNotRegistered, featureNotEnabled,
            missingChannelId, missingPushType,
        ]

        /// Whether a provider's connection counts it against its good standing: APNs closes a
        /// connection with too many errors, and `410` is not one.
        package var isConnectionError: Bool { status != 410 && status != 503 }
    }

    /// A refused request: its reason and, for a token that is no longer registered, when the gateway
    /// learned so.
    package struct Rejection: Error, Sendable, Hashable {
        package var reason: Reason
        /// Milliseconds since 1970 at which the token stopped being valid for the topic; only with `410`.
        package var timestamp: Int64?

        package init(_ reason: Reason, timestamp: Int64? = nil) {
            self.reason = reason
            self.timestamp = timestamp
        }

        /// The JSON body APNs answers an error with: `{"reason":"…"}`, with `timestamp` for `410`.
        package var body: String {
            if let timestamp { return #"{"reason":"\#(reason.rawValue)","timestamp":\#(timestamp)}"# }
            return #"{"reason":"\#(reason.rawValue)"}"#
        }
    }
}

extension APNs {
    /// APNs' two environments: a device token, a team-scoped key and a certificate each belong to
    /// one of them.
    package enum Environment: String, Sendable, Hashable, CaseIterable, Codable {
        /// `api.sandbox.push.apple.com`: apps under development.
        case sandbox
        /// `api.push.apple.com`: shipped apps.
        case production
    }
}
