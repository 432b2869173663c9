import Crypto
import Foundation
import NotificationCore
import PushGateway
import Testing

/// Token authentication on one provider connection, with real ES256 keys and Apple's time rules.
@Suite struct ProviderConnectionAuthorizationTests {
    static let t0 = Date(timeIntervalSince1970: 1_767_225_600)
    let teamKey = P256.Signing.PrivateKey()
    let otherTeamKey = P256.Signing.PrivateKey()
    let secondKey = P256.Signing.PrivateKey()
    let sandboxOnlyKey = P256.Signing.PrivateKey()

    var credentials: ProviderCredentials {
        ProviderCredentials(
            keys: [
                ProviderKey(keyID: "KEY1234567", teamID: "TEAM123456", environment: nil, publicKey: teamKey.publicKey),
                ProviderKey(keyID: "KEY2345678", teamID: "TEAM123456", environment: nil, publicKey: secondKey.publicKey),
                ProviderKey(keyID: "KEYSANDBOX", teamID: "TEAM123456", environment: .sandbox, publicKey: sandboxOnlyKey.publicKey),
                ProviderKey(keyID: "OTHERKEY01", teamID: "OTHERTEAM1", environment: nil, publicKey: otherTeamKey.publicKey),
            ],
            appsByTeam: ["TEAM123456": ["com.example.todo", "com.example.chat"], "OTHERTEAM1": ["org.other.app"]]
        )
    }

    func bearer(_ keyID: String = "KEY1234567", team: String = "TEAM123456", key: P256.Signing.PrivateKey? = nil, at date: Date = t0) throws -> String {
        "bearer " + (try ProviderToken.make(keyID: keyID, teamID: team, issuedAt: Int64(date.timeIntervalSince1970), key: key ?? teamKey))
    }

    func reason(_ result: Result<ProviderConnectionAuthorization.Authorized, APNs.Rejection>) -> String? {
        if case .failure(let rejection) = result { rejection.reason.rawValue } else { nil }
    }

    @Test func aValidTokenIsAcceptedAndBindsTheConnection() throws {
        var connection = ProviderConnectionAuthorization(environment: .production)
        let token = try bearer()
        let first = try connection.authorize(authorization: token, topic: "com.example.todo", pushType: .alert, now: Self.t0, credentials: credentials).get()
        #expect(first == .init(teamID: "TEAM123456", keyID: "KEY1234567", bundleIdentifier: "com.example.todo", isFirst: true))
        let second = try connection.authorize(authorization: token, topic: "com.example.chat.voip", pushType: .voip, now: Self.t0 + 5, credentials: credentials).get()
        #expect(second.bundleIdentifier == "com.example.chat")
        #expect(!second.isFirst)
    }

    /// The same token in another spelling of the field (the scheme's case, spaces after it) is the
    /// same token: not verified again, and not an update of the token.
    @Test func theSameTokenInAnotherSpellingIsTheSameToken() throws {
        var connection = ProviderConnectionAuthorization(environment: .production)
        let token = try bearer()
        let jwt = String(token.dropFirst("bearer ".count))
        for (offset, header) in [token, "Bearer \(jwt)", "BEARER  \(jwt)", token].enumerated() {
            #expect(reason(connection.authorize(authorization: header, topic: "com.example.todo", pushType: .alert, now: Self.t0 + Double(offset),
                                                credentials: credentials)) == nil, "\(header.prefix(9))")
        }
        #expect(reason(connection.authorize(authorization: "bearer\t\(jwt)", topic: "com.example.todo", pushType: .alert, now: Self.t0 + 5,
                                            credentials: credentials)) == "MissingProviderToken")
        // Known in any spelling, it still ages.
        #expect(reason(connection.authorize(authorization: "Bearer \(jwt)", topic: "com.example.todo", pushType: .alert, now: Self.t0 + 3601,
                                            credentials: credentials)) == "ExpiredProviderToken")
        #expect(reason(connection.authorize(authorization: token, topic: "com.example.todo", pushType: .alert, now: Self.t0 + 3601,
                                            credentials: credentials)) == "ExpiredProviderToken")
    }

    @Test func aMissingOrMalformedAuthorizationIsNamed() throws {
        var connection = ProviderConnectionAuthorization(environment: .production)
        let credentials = self.credentials
        func attempt(_ header: String?) -> String? {
            reason(connection.authorize(authorization: header, topic: "com.example.todo", pushType: .alert, now: Self.t0, credentials: credentials))
        }
        #expect(attempt(nil) == "MissingProviderToken")
        #expect(attempt("") == "MissingProviderToken")
        #expect(attempt("bearer ") == "MissingProviderToken")
        #expect(attempt("basic abc") == "MissingProviderToken")
        #expect(attempt("bearer not.a.jwt") == "InvalidProviderToken")
        #expect(attempt("bearer abc") == "InvalidProviderToken")
        // Signed by another key than the one its kid names.
        #expect(attempt(try bearer(key: secondKey)) == "InvalidProviderToken")
        // A key nobody registered.
        #expect(attempt(try bearer("UNKNOWNKEY")) == "InvalidProviderToken")
        // The right key, the wrong team in iss.
        #expect(attempt(try bearer(team: "OTHERTEAM1")) == "InvalidProviderToken")
    }

    @Test func anIncompleteTokenIsInvalid() throws {
        var connection = ProviderConnectionAuthorization(environment: .production)
        let token = try ProviderToken.make(keyID: "KEY1234567", teamID: "TEAM123456", issuedAt: 1_767_225_600, key: teamKey)
        let parts = token.split(separator: ".")
        for broken in [parts[0] + "." + parts[1], parts[0] + "." + parts[1] + ".", token + "x", "x" + token] {
            #expect(reason(connection.authorize(authorization: "bearer " + broken, topic: "com.example.todo", pushType: .alert, now: Self.t0, credentials: credentials))
                == "InvalidProviderToken")
        }
    }

    @Test func anHourOldTokenIsExpired() throws {
        var connection = ProviderConnectionAuthorization(environment: .production)
        let token = try bearer()
        #expect(reason(connection.authorize(authorization: token, topic: "com.example.todo", pushType: .alert, now: Self.t0 + 3600, credentials: credentials)) == nil)
        // The same token, cached on the connection, ages: one second past the hour it is refused.
        #expect(reason(connection.authorize(authorization: token, topic: "com.example.todo", pushType: .alert, now: Self.t0 + 3601, credentials: credentials))
            == "ExpiredProviderToken")
        // A new connection refuses it at once.
        var fresh = ProviderConnectionAuthorization(environment: .production)
        #expect(reason(fresh.authorize(authorization: token, topic: "com.example.todo", pushType: .alert, now: Self.t0 + 3601, credentials: credentials))
            == "ExpiredProviderToken")
        // From too far ahead, it is not valid either.
        #expect(reason(fresh.authorize(authorization: try bearer(at: Self.t0 + 3601), topic: "com.example.todo", pushType: .alert, now: Self.t0, credentials: credentials))
            == "InvalidProviderToken")
    }

    @Test func aNewTokenWithinTwentyMinutesIsTooManyUpdates() throws {
        var connection = ProviderConnectionAuthorization(environment: .production)
        let first = try bearer()
        _ = try connection.authorize(authorization: first, topic: "com.example.todo", pushType: .alert, now: Self.t0, credentials: credentials).get()
        let early = try bearer(at: Self.t0 + 60)
        #expect(reason(connection.authorize(authorization: early, topic: "com.example.todo", pushType: .alert, now: Self.t0 + 1199, credentials: credentials))
            == "TooManyProviderTokenUpdates")
        // The first token stays in force.
        #expect(reason(connection.authorize(authorization: first, topic: "com.example.todo", pushType: .alert, now: Self.t0 + 1199, credentials: credentials)) == nil)
        // Twenty minutes after the first was accepted, the new one replaces it.
        #expect(reason(connection.authorize(authorization: early, topic: "com.example.todo", pushType: .alert, now: Self.t0 + 1200, credentials: credentials)) == nil)
    }

    @Test func theConnectionStaysWithItsFirstKeyAndTeam() throws {
        var connection = ProviderConnectionAuthorization(environment: .production)
        _ = try connection.authorize(authorization: try bearer(), topic: "com.example.todo", pushType: .alert, now: Self.t0, credentials: credentials).get()
        let later = Self.t0 + 1800
        #expect(reason(connection.authorize(authorization: try bearer("KEY2345678", key: secondKey, at: later), topic: "com.example.todo", pushType: .alert, now: later, credentials: credentials))
            == "UnrelatedKeyIdInToken")
        #expect(reason(connection.authorize(authorization: try bearer("OTHERKEY01", team: "OTHERTEAM1", key: otherTeamKey, at: later), topic: "org.other.app", pushType: .alert, now: later, credentials: credentials))
            == "UnrelatedKeyIdInToken")
    }

    @Test func topicsAreTheTeamsAppsWhenTheConnectionWasBound() throws {
        var connection = ProviderConnectionAuthorization(environment: .production)
        var credentials = self.credentials
        let token = try bearer()
        #expect(reason(connection.authorize(authorization: token, topic: nil, pushType: .alert, now: Self.t0, credentials: credentials)) == "MissingTopic")
        #expect(reason(connection.authorize(authorization: token, topic: "org.other.app", pushType: .alert, now: Self.t0, credentials: credentials)) == "TopicDisallowed")
        // An app the team adds later needs a new connection.
        credentials.appsByTeam["TEAM123456"]?.insert("com.example.new")
        #expect(reason(connection.authorize(authorization: token, topic: "com.example.new", pushType: .alert, now: Self.t0, credentials: credentials)) == "TopicDisallowed")
        var fresh = ProviderConnectionAuthorization(environment: .production)
        #expect(reason(fresh.authorize(authorization: token, topic: "com.example.new", pushType: .alert, now: Self.t0, credentials: credentials)) == nil)
    }

    @Test func aTopicSpecificKeyReachesOnlyItsTopics() throws {
        var credentials = self.credentials
        credentials.keys["KEY2345678"]?.bundleIdentifiers = ["com.example.chat"]
        var connection = ProviderConnectionAuthorization(environment: .production)
        let token = try bearer("KEY2345678", key: secondKey)
        #expect(reason(connection.authorize(authorization: token, topic: "com.example.chat", pushType: .alert, now: Self.t0, credentials: credentials)) == nil)
        #expect(reason(connection.authorize(authorization: token, topic: "com.example.todo", pushType: .alert, now: Self.t0, credentials: credentials)) == "TopicDisallowed")
    }

    @Test func aKeyOfTheOtherEnvironmentIsRefusedInEitherSpelling() throws {
        let token = try bearer("KEYSANDBOX", key: sandboxOnlyKey)
        var observed = ProviderConnectionAuthorization(environment: .production)
        #expect(reason(observed.authorize(authorization: token, topic: "com.example.todo", pushType: .alert, now: Self.t0, credentials: credentials))
            == "BadEnvironmentKeyInToken")
        var documented = ProviderConnectionAuthorization(environment: .production, environmentKeyReason: .badEnvironmentKeyIdInToken)
        #expect(reason(documented.authorize(authorization: token, topic: "com.example.todo", pushType: .alert, now: Self.t0, credentials: credentials))
            == "BadEnvironmentKeyIdInToken")
        var sandbox = ProviderConnectionAuthorization(environment: .sandbox)
        #expect(reason(sandbox.authorize(authorization: token, topic: "com.example.todo", pushType: .alert, now: Self.t0, credentials: credentials)) == nil)
    }

    @Test func aRevokedKeyStopsAtTheNextRequest() throws {
        var connection = ProviderConnectionAuthorization(environment: .production)
        var credentials = self.credentials
        let token = try bearer()
        _ = try connection.authorize(authorization: token, topic: "com.example.todo", pushType: .alert, now: Self.t0, credentials: credentials).get()
        credentials.keys["KEY1234567"] = nil
        #expect(reason(connection.authorize(authorization: token, topic: "com.example.todo", pushType: .alert, now: Self.t0 + 1, credentials: credentials)) == "InvalidProviderToken")
    }

    @Test func fractionalIssuedAtAsJWTKitWritesItVerifies() throws {
        // A token whose iat has a fraction, signed as any ES256 library signs it.
        let header = ProviderToken.base64URLEncoded(Data(#"{"alg":"ES256","kid":"KEY1234567","typ":"JWT"}"#.utf8))
        let claims = ProviderToken.base64URLEncoded(Data(#"{"iss":"TEAM123456","iat":1767225600.75}"#.utf8))
        let signature = try teamKey.signature(for: Data((header + "." + claims).utf8))
        let token = header + "." + claims + "." + ProviderToken.base64URLEncoded(signature.rawRepresentation)
        var connection = ProviderConnectionAuthorization(environment: .production)
        #expect(reason(connection.authorize(authorization: "bearer " + token, topic: "com.example.todo", pushType: .alert, now: Self.t0, credentials: credentials)) == nil)
    }
}
