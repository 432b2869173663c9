package import Crypto
package import Foundation
import NotificationCore

/// A provider authentication token: the ES256 JSON Web Token a provider sends as
/// `authorization: bearer <token>`, signed with the key whose `.p8` its team holds.
///
/// Parsing reads the three parts and the claims APNs uses (`alg`, `kid`, `iss`, `iat`); it does not
/// trust them: ``isSigned(by:)`` checks the signature against the registered key.
package struct ProviderToken: Sendable {
    /// The header's `kid`: the 10-character identifier of the signing key.
    package let keyID: String
    /// The claims' `iss`: the 10-character team identifier.
    package let teamID: String
    /// The claims' `iat`, in seconds since 1970.
    package let issuedAt: Int64
    private let signingInput: Data
    private let signature: Data

    private struct Header: Decodable {
        let alg: String
        let kid: String
    }

    private struct Claims: Decodable {
        let iss: String
        let iat: Double
    }

    /// Reads a token; nil when it is not a well-formed ES256 JWT with the claims APNs needs.
    package init?(_ text: Substring) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
              let headerBytes = Self.base64URLDecoded(parts[0]),
              let claimsBytes = Self.base64URLDecoded(parts[1]),
              let signature = Self.base64URLDecoded(parts[2]),
              let header = try? JSONDecoder().decode(Header.self, from: headerBytes),
              let claims = try? JSONDecoder().decode(Claims.self, from: claimsBytes),
              header.alg == "ES256", claims.iat.isFinite, abs(claims.iat) < 1e12
        else { return nil }
        keyID = header.kid
        teamID = claims.iss
        // jwt-kit writes fractional seconds; the rules count whole seconds.
        issuedAt = Int64(claims.iat.rounded(.down))
        signingInput = Data(text[..<parts[2].startIndex].dropLast().utf8)
        self.signature = signature
    }

    /// Whether the token's signature is `key`'s, over its header and claims (ES256: ECDSA with P-256
    /// and SHA-256, the signature as the raw 64 bytes of r and s).
    package func isSigned(by key: P256.Signing.PublicKey) -> Bool {
        guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else { return false }
        return key.isValidSignature(signature, for: signingInput)
    }

    /// Makes a token signed with `key`: what a provider's library does, for `unotify push` and tests.
    package static func make(keyID: String, teamID: String, issuedAt: Int64, key: P256.Signing.PrivateKey) throws -> String {
        let header = base64URLEncoded(Data(#"{"alg":"ES256","kid":"\#(keyID)"}"#.utf8))
        let claims = base64URLEncoded(Data(#"{"iss":"\#(teamID)","iat":\#(issuedAt)}"#.utf8))
        let input = header + "." + claims
        let signature = try key.signature(for: Data(input.utf8))
        return input + "." + base64URLEncoded(signature.rawRepresentation)
    }

    static func base64URLDecoded(_ text: Substring) -> Data? {
        guard !text.isEmpty else { return nil }
        var base64 = String(text).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.utf8.count % 4 != 0 { base64.append("=") }
        return Data(base64Encoded: base64)
    }

    package static func base64URLEncoded(_ data: Data) -> String {
        data.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
