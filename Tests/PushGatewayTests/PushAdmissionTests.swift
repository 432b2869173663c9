import Foundation
import NotificationCore
import PushGateway
import Testing

/// The checks a push meets once it passed the provider API: its token, its rate, its expiry.
@Suite struct PushAdmissionTests {
    static let t0 = Date(timeIntervalSince1970: 1_767_225_600)
    static let registration = Registration(token: "ab12", deviceID: "device-1", bundleIdentifier: "com.example.todo", environment: .sandbox, registeredAt: t0)

    func push(app: String = "com.example.todo", environment: APNs.Environment = .sandbox, expiration: Int64? = nil, at date: Date = t0) -> ProviderPush {
        ProviderPush(
            headers: APNs.PushHeaders(deviceToken: "ab12", apnsID: "id", topic: app, pushType: .alert, priority: 10, expiration: expiration, collapseID: nil),
            bundleIdentifier: app, teamID: "TEAM123456", environment: environment, payload: Array("{}".utf8), receivedAt: date
        )
    }

    func reason(_ result: Result<PushAdmission.Decision, APNs.Rejection>) -> APNs.Rejection? {
        if case .failure(let rejection) = result { rejection } else { nil }
    }

    @Test func aTokenMustBeIssuedForTheAppAndTheEnvironment() {
        var admission = PushAdmission()
        #expect(reason(admission.admit(push(), registration: nil, deviceIsConnected: true))?.reason == .badDeviceToken)
        #expect(reason(admission.admit(push(environment: .production), registration: Self.registration, deviceIsConnected: true))?.reason == .badDeviceToken)
        #expect(reason(admission.admit(push(app: "com.example.chat"), registration: Self.registration, deviceIsConnected: true))?.reason == .deviceTokenNotForTopic)
        #expect(reason(admission.admit(push(), registration: Self.registration, deviceIsConnected: true)) == nil)
    }

    @Test func anUnregisteredTokenIsGoneSinceItsTimeInMilliseconds() {
        var admission = PushAdmission()
        var gone = Self.registration
        gone.unregisteredAt = Date(timeIntervalSince1970: 1_767_225_600.123)
        let rejection = reason(admission.admit(push(), registration: gone, deviceIsConnected: true))
        #expect(rejection == APNs.Rejection(.unregistered, timestamp: 1_767_225_600_123))
    }

    /// A token whose device has not linked for the expiry (counted from its last link, or from the
    /// token's issue) has expired: `410 ExpiredToken`, with the time it expired in milliseconds. A
    /// device linked now, or an expiry of none, keeps it.
    @Test func aTokenOfADeviceGoneTooLongHasExpired() {
        var admission = PushAdmission()
        let expiry = try! #require(admission.configuration.tokenExpiry)
        #expect(expiry == 90 * 86_400)
        var registration = Self.registration
        #expect(reason(admission.admit(push(at: Self.t0 + expiry - 1), registration: registration, deviceIsConnected: false)) == nil)
        #expect(reason(admission.admit(push(at: Self.t0 + expiry + 1), registration: registration, deviceIsConnected: false))
            == APNs.Rejection(.expiredToken, timestamp: Int64((Self.t0 + expiry).timeIntervalSince1970 * 1000)))
        #expect(reason(admission.admit(push(at: Self.t0 + expiry + 2), registration: registration, deviceIsConnected: true)) == nil)
        // A later link starts the count again.
        registration.deviceLastLinkedAt = Self.t0 + 86_400
        #expect(reason(admission.admit(push(at: Self.t0 + expiry + 3), registration: registration, deviceIsConnected: false)) == nil)
        #expect(reason(admission.admit(push(at: Self.t0 + 86_400 + expiry + 1), registration: registration, deviceIsConnected: false))?.reason == .expiredToken)
        // An unregistered token says so first.
        registration.unregisteredAt = Self.t0 + 5
        #expect(reason(admission.admit(push(at: Self.t0 + 2 * expiry), registration: registration, deviceIsConnected: false))?.reason == .unregistered)
        var never = PushAdmission.Configuration()
        never.tokenExpiry = nil
        var keeping = PushAdmission(configuration: never)
        #expect(reason(keeping.admit(push(at: Self.t0 + 3_650 * 86_400), registration: Self.registration, deviceIsConnected: false)) == nil)
    }

    @Test func aFloodToOneTokenIsTooManyRequestsUntilItRefills() {
        var configuration = PushAdmission.Configuration()
        configuration.burstPerToken = 5
        configuration.sustainedPerTokenPerSecond = 2
        var admission = PushAdmission(configuration: configuration)
        for _ in 0..<5 { #expect(reason(admission.admit(push(), registration: Self.registration, deviceIsConnected: true)) == nil) }
        #expect(reason(admission.admit(push(), registration: Self.registration, deviceIsConnected: true))?.reason == .tooManyRequests)
        // Half a second later one more fits (2 per second), then not the next.
        #expect(reason(admission.admit(push(at: Self.t0 + 0.5), registration: Self.registration, deviceIsConnected: true)) == nil)
        #expect(reason(admission.admit(push(at: Self.t0 + 0.5), registration: Self.registration, deviceIsConnected: true))?.reason == .tooManyRequests)
        // Another token is not affected.
        var other = Self.registration
        other.token = "cd34"
        var otherPush = push(at: Self.t0 + 0.5)
        otherPush.headers.deviceToken = "cd34"
        #expect(reason(admission.admit(otherPush, registration: other, deviceIsConnected: true)) == nil)
    }

    @Test func expirationDecidesHowLongAPushIsKept() throws {
        var admission = PushAdmission()
        let now = Self.t0
        #expect(try admission.admit(push(), registration: Self.registration, deviceIsConnected: false).get()
            == .queue(deviceID: "device-1", expiresAt: now + 30 * 86_400))
        #expect(try admission.admit(push(expiration: Int64(now.timeIntervalSince1970) + 600), registration: Self.registration, deviceIsConnected: false).get()
            == .queue(deviceID: "device-1", expiresAt: now + 600))
        // Already expired: accepted, not kept.
        #expect(try admission.admit(push(expiration: Int64(now.timeIntervalSince1970) - 1), registration: Self.registration, deviceIsConnected: true).get()
                == .drop(because: "its apns-expiration had passed when it arrived"))
        // For now only, and the device is not linked to this node: kept only if another node holds its link.
        #expect(try admission.admit(push(expiration: 0), registration: Self.registration, deviceIsConnected: false).get()
                == .queueIfLinkedElsewhere(deviceID: "device-1", expiresAt: now + 30))
        #expect(try admission.admit(push(expiration: 0), registration: Self.registration, deviceIsConnected: true).get()
            == .queue(deviceID: "device-1", expiresAt: now + 30))
    }
}
