package import Foundation
package import NotificationCore

/// The checks on a push that need the gateway's knowledge of tokens and time, as a pure value: is
/// the token registered for this app and environment, and is it being flooded.
///
/// The gateway's core keeps one, reads registrations into it, and asks it for every push.
package struct PushAdmission: Sendable {
    package struct Configuration: Sendable {
        /// Pushes one token may take in a burst before `429 TooManyRequests`.
        package var burstPerToken = 100
        /// Pushes per second one token takes for as long as it is sent to.
        package var sustainedPerTokenPerSecond = 10.0
        /// Pushes accepted but not yet durable beyond which new ones are refused with
        /// `503 ServiceUnavailable`, so that a stalled disk costs bounded memory and providers back off.
        package var maximumUnwrittenPushes = 20_000
        /// How long a push without `apns-expiration` is kept for an offline device: APNs' 30 days.
        package var defaultTimeToLive: TimeInterval = 30 * 86_400
        /// How long a push with `apns-expiration: 0` waits for a device that is connected when it
        /// arrives (it is never kept for one that is not).
        package var deliverNowWindow: TimeInterval = 30
        /// The broadcast channels an app may have in each environment: APNs' 10,000.
        package var channelsPerApp = APNs.channelsPerApp
        /// How long a token lasts once its device stops linking (counted from the last time it held a
        /// link, or from the token's issue): then it answers `410 ExpiredToken`, as APNs answers for a
        /// device gone for good. Nil: never.
        package var tokenExpiry: TimeInterval? = 90 * 86_400

        package init() {}
    }

    /// What becomes of an admitted push.
    package enum Decision: Sendable, Equatable {
        /// Kept for the device until it acknowledges it or `expiresAt`.
        case queue(deviceID: String, expiresAt: Date)
        /// For now only (`apns-expiration: 0`) and the device is not linked to this node: kept as
        /// `queue` if it is linked to another node of the gateway, else dropped.
        case queueIfLinkedElsewhere(deviceID: String, expiresAt: Date)
        /// Accepted (`200`) and not kept: it expired already, or it was for now only and the device
        /// is not connected. APNs answers these `200` too. The reason is for the delivery log.
        case drop(because: String)
    }

    package let configuration: Configuration
    private var buckets: [String: Bucket] = [:]

    private struct Bucket: Sendable {
        var tokens: Double
        var updatedAt: Date
    }

    package init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Decides on `push` to the token of `registration` (nil: the gateway issued no such token);
    /// `deviceIsConnected` says whether the device is linked to this node.
    package mutating func admit(
        _ push: ProviderPush,
        registration: Registration?,
        deviceIsConnected: Bool,
        standing: DeviceStanding? = nil
    ) -> Result<Decision, APNs.Rejection> {
        guard let registration, registration.environment == push.environment else {
            // A token of the other environment is as unknown here as on APNs.
            return .failure(APNs.Rejection(.badDeviceToken))
        }
        guard registration.bundleIdentifier == push.bundleIdentifier else { return .failure(APNs.Rejection(.deviceTokenNotForTopic)) }
        if let unregisteredAt = registration.unregisteredAt {
            return .failure(APNs.Rejection(.unregistered, timestamp: Int64((unregisteredAt.timeIntervalSince1970 * 1000).rounded(.down))))
        }
        if let removedAt = standing?.removedAt {
            // The device is gone: its tokens have expired.
            return .failure(APNs.Rejection(.expiredToken, timestamp: Int64((removedAt.timeIntervalSince1970 * 1000).rounded(.down))))
        }
        if !deviceIsConnected, let expiry = configuration.tokenExpiry {
            let expiredAt = registration.lastSeenAt.addingTimeInterval(expiry)
            if push.receivedAt > expiredAt {
                return .failure(APNs.Rejection(.expiredToken, timestamp: Int64((expiredAt.timeIntervalSince1970 * 1000).rounded(.down))))
            }
        }
        if standing?.isDisabled == true { return .failure(APNs.Rejection(.forbidden)) }
        guard take(from: registration.token, at: push.receivedAt) else { return .failure(APNs.Rejection(.tooManyRequests)) }

        let now = push.receivedAt
        switch push.headers.expiration {
        case nil:
            return .success(.queue(deviceID: registration.deviceID, expiresAt: now.addingTimeInterval(configuration.defaultTimeToLive)))
        case 0:
            let expiresAt = now.addingTimeInterval(configuration.deliverNowWindow)
            guard deviceIsConnected else { return .success(.queueIfLinkedElsewhere(deviceID: registration.deviceID, expiresAt: expiresAt)) }
            return .success(.queue(deviceID: registration.deviceID, expiresAt: expiresAt))
        case let seconds?:
            let expiresAt = Date(timeIntervalSince1970: TimeInterval(seconds))
            guard expiresAt > now else { return .success(.drop(because: "its apns-expiration had passed when it arrived")) }
            return .success(.queue(deviceID: registration.deviceID, expiresAt: expiresAt))
        }
    }

    /// A token bucket per device token; buckets that refilled completely are forgotten.
    private mutating func take(from token: String, at now: Date) -> Bool {
        let capacity = Double(configuration.burstPerToken)
        var bucket = buckets[token] ?? Bucket(tokens: capacity, updatedAt: now)
        let refill = max(0, now.timeIntervalSince(bucket.updatedAt)) * configuration.sustainedPerTokenPerSecond
        bucket.tokens = min(capacity, bucket.tokens + refill)
        bucket.updatedAt = now
        guard bucket.tokens >= 1 else {
            buckets[token] = bucket
            return false
        }
        bucket.tokens -= 1
        buckets[token] = bucket
        if buckets.count > 100_000 { forgetFullBuckets(at: now) }
        return true
    }

    private mutating func forgetFullBuckets(at now: Date) {
        let capacity = Double(configuration.burstPerToken)
        buckets = buckets.filter { _, bucket in
            bucket.tokens + now.timeIntervalSince(bucket.updatedAt) * configuration.sustainedPerTokenPerSecond < capacity
        }
    }
}
