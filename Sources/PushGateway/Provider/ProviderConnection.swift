import NotificationCore

/// What one provider connection remembers between its requests: its authentication and its standing.
/// Used only on the connection's event loop (its streams share that loop).
final class ProviderConnection {
    var authorization: ProviderConnectionAuthorization
    /// Whether the connection may open many streams: after its first accepted token (APNs allows
    /// one stream until then).
    var isAuthenticated = false
    /// The errors counted against the connection; at ``ProviderServer/Configuration/errorLimit`` it is
    /// closed with GOAWAY.
    private(set) var errorWeight = 0
    private(set) var isClosing = false

    init(environment: APNs.Environment, environmentKeyReason: APNs.Reason, certificate: ProviderCertificate.Verdict?) {
        authorization = ProviderConnectionAuthorization(environment: environment, environmentKeyReason: environmentKeyReason, certificate: certificate)
    }

    /// Counts a refused request; returns true when the connection has had too many and must close.
    /// An invalid device token weighs more, as APNs disconnects sooner for it; `410` and `503` are
    /// not errors of the provider.
    func noteRefusal(_ reason: APNs.Reason, limit: Int) -> Bool {
        guard reason.isConnectionError, !isClosing else { return false }
        errorWeight += reason == .badDeviceToken ? 10 : 1
        if errorWeight >= limit {
            isClosing = true
            return true
        }
        return false
    }
}
