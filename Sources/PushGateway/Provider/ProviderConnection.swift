import NIOCore
import NotificationCore

/// What one provider connection remembers between its requests: its authentication and its standing.
/// Used only on the connection's event loop (its streams share that loop).
final class ProviderConnection {
    var authorization: ProviderConnectionAuthorization
    /// Whether the connection may open many streams: after its first accepted token (APNs allows
    /// one stream until then).
    var isAuthenticated = false
    /// The errors counted against the connection within the last period (see
    /// ``noteRefusal(_:limit:period:at:)``), each with its time and weight, oldest first; at a total
    /// of ``ProviderServer/Configuration/errorLimit`` it is closed with GOAWAY. At most that many:
    /// each weighs at least 1.
    private var recentErrors: [(at: NIODeadline, weight: Int)] = []
    private(set) var isClosing = false

    init(environment: APNs.Environment, environmentKeyReason: APNs.Reason, certificate: ProviderCertificate.Verdict?) {
        authorization = ProviderConnectionAuthorization(environment: environment, environmentKeyReason: environmentKeyReason, certificate: certificate)
    }

    /// Counts a refused request at `now`; returns true when the connection has had too many and must
    /// close. An invalid device token weighs more (10), as APNs disconnects sooner for it; `410` and
    /// `503` are not errors of the provider. Only the errors of the last `period` count: a
    /// connection kept for days (as Apple asks providers to) is closed for errors that come faster
    /// than `limit` a `period`, not for the few it meets now and then (a token of the other
    /// environment, say).
    func noteRefusal(_ reason: APNs.Reason, limit: Int, period: TimeAmount, at now: NIODeadline) -> Bool {
        guard reason.isConnectionError else { return false }
        return noteError(weight: reason == .badDeviceToken ? 10 : 1, limit: limit, period: period, at: now)
    }

    /// Counts an error that has no reason of Apple's at `now` (a header list over the announced
    /// size, answered `431`); returns true when the connection has had too many and must close.
    func noteError(weight: Int, limit: Int, period: TimeAmount, at now: NIODeadline) -> Bool {
        guard !isClosing else { return false }
        recentErrors.removeFirst(recentErrors.prefix { $0.at + period <= now }.count)
        recentErrors.append((now, weight))
        if recentErrors.reduce(0, { $0 + $1.weight }) >= limit {
            isClosing = true
            return true
        }
        return false
    }
}
