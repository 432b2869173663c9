package import Crypto
package import Foundation
package import NotificationCore

/// A signing key a team registered with the gateway: the public half of the `.p8` its provider holds.
package struct ProviderKey: Sendable {
    /// The 10-character key identifier, the token's `kid`.
    package var keyID: String
    /// The 10-character team identifier, the token's `iss`.
    package var teamID: String
    /// The one environment a team-scoped key is restricted to; nil for a key valid in both.
    package var environment: APNs.Environment?
    /// The apps a topic-specific key may push to; nil for a key that reaches every app of its team.
    package var bundleIdentifiers: Set<String>?
    package var publicKey: P256.Signing.PublicKey

    package init(keyID: String, teamID: String, environment: APNs.Environment?, bundleIdentifiers: Set<String>? = nil, publicKey: P256.Signing.PublicKey) {
        self.keyID = keyID
        self.teamID = teamID
        self.environment = environment
        self.bundleIdentifiers = bundleIdentifiers
        self.publicKey = publicKey
    }
}

/// What the gateway knows of its providers when a request arrives: the registered keys and each
/// team's apps. A value: a connection checks against the snapshot current at each request, so a
/// revoked key stops working at the next request.
package struct ProviderCredentials: Sendable {
    package var keys: [String: ProviderKey]
    package var appsByTeam: [String: Set<String>]

    package init(keys: [ProviderKey] = [], appsByTeam: [String: Set<String>] = [:]) {
        self.keys = Dictionary(keys.map { ($0.keyID, $0) }, uniquingKeysWith: { _, last in last })
        self.appsByTeam = appsByTeam
    }
}

/// Token authentication on one provider connection, as APNs does it: a pure state machine that the
/// connection's handler asks once per request.
///
/// - A token is verified once per connection (its signature costs far more than a request), then
///   recognized by its text; its age is checked on every request: over an hour old, it is refused
///   with `ExpiredProviderToken`.
/// - The first accepted token binds the connection to its key, its team and the team's apps at that
///   moment: a token of another key is `UnrelatedKeyIdInToken`, an app added to the team afterwards
///   needs a new connection (`TopicDisallowed`), as on APNs.
/// - A new token less than 20 minutes after the previous one was accepted is
///   `TooManyProviderTokenUpdates`; the previous one stays in force.
///
/// A connection that presented a client certificate and sends no token is authenticated by the
/// certificate instead, as APNs' certificate-based connections are: bound to the certificate's app and
/// topics (`BadCertificate`, `BadCertificateEnvironment`, `MissingTopic` as Apple describes).
package struct ProviderConnectionAuthorization: Sendable {
    /// Who sent an accepted request, and to which app.
    package struct Authorized: Sendable, Hashable {
        package var teamID: String
        package var keyID: String
        /// The app the topic names, without its push type's suffix.
        package var bundleIdentifier: String
        /// True for the connection's first accepted token (set by ``ProviderConnectionAuthorization/authorize(authorization:topic:pushType:now:credentials:)``).
        package var isFirst: Bool

        package init(teamID: String, keyID: String, bundleIdentifier: String, isFirst: Bool) {
            self.teamID = teamID
            self.keyID = keyID
            self.bundleIdentifier = bundleIdentifier
            self.isFirst = isFirst
        }
    }

    private struct Binding: Sendable {
        var keyID: String
        var teamID: String
        var bundleIdentifiers: Set<String>
        /// A certificate's topics: the connection may use these alone, and may omit the topic when
        /// there is one. Nil on a token connection.
        var certificateTopics: [String]? = nil
    }

    private struct Current: Sendable {
        /// The `authorization` field as the provider last sent it with this token.
        var header: String
        var token: String
        var keyID: String
        var issuedAt: Int64
        var acceptedAt: Date
    }

    /// The environment of the endpoint this connection reached.
    package let environment: APNs.Environment
    /// The reason sent for a key of the other environment: Apple documents
    /// `BadEnvironmentKeyIdInToken`, APNs has been seen sending `BadEnvironmentKeyInToken`.
    package let environmentKeyReason: APNs.Reason
    /// The client certificate the connection presented, as its TLS handshake found it; nil for none.
    package let certificate: ProviderCertificate.Verdict?
    private var binding: Binding?
    private var current: Current?

    /// How old a token may be, in seconds.
    package static let tokenLifetime: Int64 = 3600
    /// How long a token must be in use on a connection before another replaces it.
    package static let minimumTokenInterval: TimeInterval = 20 * 60

    package init(environment: APNs.Environment, environmentKeyReason: APNs.Reason = .badEnvironmentKeyInToken, certificate: ProviderCertificate.Verdict? = nil) {
        self.environment = environment
        self.environmentKeyReason = environmentKeyReason
        self.certificate = certificate
    }

    /// Checks one request's `authorization` header and `apns-topic` against the credentials: both
    /// steps below, in order.
    package mutating func authorize(
        authorization: String?,
        topic: String?,
        pushType: APNs.PushType,
        now: Date,
        credentials: ProviderCredentials
    ) -> Result<Authorized, APNs.Rejection> {
        switch authenticate(authorization: authorization, now: now, credentials: credentials) {
        case .failure(let rejection):
            return .failure(rejection)
        case .success(let isFirst):
            return authorizeTopic(topic, pushType: pushType).map { authorized in
                var authorized = authorized
                authorized.isFirst = isFirst
                return authorized
            }
        }
    }

    /// The first step, before the request's other headers are read: whether its token is valid on
    /// this connection. Returns true for the connection's first accepted token (the connection may
    /// now open more streams).
    ///
    /// `tokenIssuedAt` gives a new token's issue time on the clock of `now` from its text and its
    /// `iat` (an emulator's clock, ``ProviderEmulation``); without it, the `iat` is that time.
    package mutating func authenticate(authorization: String?, now: Date, credentials: ProviderCredentials,
                                       tokenIssuedAt: ((Substring, Int64) -> Int64)? = nil) -> Result<Bool, APNs.Rejection> {
        if authorization == nil, let certificate { return authenticate(certificate: certificate, credentials: credentials) }
        guard binding?.certificateTopics == nil else {
            // A certificate connection stays one: a token cannot take it over.
            return .failure(APNs.Rejection(.invalidProviderToken))
        }
        let seconds = Int64(now.timeIntervalSince1970.rounded(.down))
        // Known: not verified again, but it ages, and its key may have been revoked since. A provider
        // sends the same field with every request: recognized as it is, before it is read.
        func known(_ current: Current) -> Result<Bool, APNs.Rejection> {
            guard credentials.keys[current.keyID] != nil else { return .failure(APNs.Rejection(.invalidProviderToken)) }
            guard seconds - current.issuedAt <= Self.tokenLifetime else { return .failure(APNs.Rejection(.expiredProviderToken)) }
            return .success(false)
        }
        if let current, let authorization, authorization == current.header { return known(current) }
        guard let authorization, authorization.utf8.count > 7, authorization.utf8.prefix(7).elementsEqual("bearer ".utf8, by: { (0x41...0x5A ~= $0 ? $0 | 0x20 : $0) == $1 }) else {
            return .failure(APNs.Rejection(.missingProviderToken))
        }
        let text = String(authorization.dropFirst(7).drop { $0 == " " })
        if let current, current.token == text {
            self.current?.header = authorization
            return known(current)
        }
        guard let token = ProviderToken(Substring(text)),
              let key = credentials.keys[token.keyID], key.teamID == token.teamID,
              token.isSigned(by: key.publicKey)
        else { return .failure(APNs.Rejection(.invalidProviderToken)) }
        if let required = key.environment, required != environment { return .failure(APNs.Rejection(environmentKeyReason)) }
        let issuedAt = tokenIssuedAt?(Substring(text), token.issuedAt) ?? token.issuedAt
        guard seconds - issuedAt <= Self.tokenLifetime else { return .failure(APNs.Rejection(.expiredProviderToken)) }
        guard issuedAt - seconds <= Self.tokenLifetime else { return .failure(APNs.Rejection(.invalidProviderToken)) }
        if let binding, binding.keyID != token.keyID { return .failure(APNs.Rejection(.unrelatedKeyIdInToken)) }
        if let current, now.timeIntervalSince(current.acceptedAt) < Self.minimumTokenInterval {
            return .failure(APNs.Rejection(.tooManyProviderTokenUpdates))
        }
        current = Current(header: authorization, token: text, keyID: token.keyID, issuedAt: issuedAt, acceptedAt: now)
        guard binding == nil else { return .success(false) }
        let teamApps = credentials.appsByTeam[key.teamID] ?? []
        binding = Binding(keyID: key.keyID, teamID: key.teamID, bundleIdentifiers: key.bundleIdentifiers.map { $0.intersection(teamApps) } ?? teamApps)
        return .success(true)
    }

    /// A request without a token on a connection with a client certificate: the certificate must be
    /// one the gateway issued, for this environment, to an app of a team still registered.
    private mutating func authenticate(certificate: ProviderCertificate.Verdict, credentials: ProviderCredentials) -> Result<Bool, APNs.Rejection> {
        guard case .valid(let issued) = certificate else { return .failure(APNs.Rejection(.badCertificate)) }
        guard issued.environments.contains(environment) else { return .failure(APNs.Rejection(.badCertificateEnvironment)) }
        // A certificate of an app or team that is no longer registered is revoked with it.
        guard credentials.appsByTeam[issued.teamID]?.contains(issued.bundleIdentifier) == true else {
            return .failure(APNs.Rejection(.badCertificate))
        }
        guard binding == nil else { return .success(false) }
        binding = Binding(keyID: "", teamID: issued.teamID, bundleIdentifiers: [issued.bundleIdentifier], certificateTopics: issued.topics)
        return .success(true)
    }

    /// Whether the connection's provider may read the delivery log of a push: one its credentials
    /// could have sent, to an app of its team they reach, in this endpoint's environment. Only after
    /// ``authenticate(authorization:now:credentials:)`` succeeded.
    package func mayRead(teamID: String, bundleIdentifier: String, environment: APNs.Environment) -> Bool {
        guard let binding, environment == self.environment else { return false }
        return binding.teamID == teamID && binding.bundleIdentifiers.contains(bundleIdentifier)
    }

    /// The second step, once the headers passed Apple's rules: whether the connection's team may push
    /// to the topic. Only after ``authenticate(authorization:now:credentials:)`` succeeded.
    package func authorizeTopic(_ topic: String?, pushType: APNs.PushType) -> Result<Authorized, APNs.Rejection> {
        guard let binding else { return .failure(APNs.Rejection(.missingProviderToken)) }
        if let topics = binding.certificateTopics, let bundleIdentifier = binding.bundleIdentifiers.first {
            // A certificate with one topic may leave it out; one with several may not.
            guard let chosen = topic ?? (topics.count == 1 ? topics.first : nil) else { return .failure(APNs.Rejection(.missingTopic)) }
            guard topics.contains(chosen) else { return .failure(APNs.Rejection(.topicDisallowed)) }
            return .success(Authorized(teamID: binding.teamID, keyID: binding.keyID, bundleIdentifier: bundleIdentifier, isFirst: false))
        }
        guard let topic else { return .failure(APNs.Rejection(.missingTopic)) }
        let bundleIdentifier = pushType.topicSuffix.map { String(topic.dropLast($0.count)) } ?? topic
        guard binding.bundleIdentifiers.contains(bundleIdentifier) else { return .failure(APNs.Rejection(.topicDisallowed)) }
        return .success(Authorized(teamID: binding.teamID, keyID: binding.keyID, bundleIdentifier: bundleIdentifier, isFirst: false))
    }
}
