package import Foundation
package import NotificationCore
import SwiftASN1
package import X509

/// A provider's TLS client certificate, read as APNs reads Apple's push certificates: the app it is for
/// (the subject's user ID), its team (the organizational unit), the environments it may push to, and
/// the topics it may use.
///
/// The gateway's certificate authority issues them (``GatewayCertificateAuthority/issueProviderCertificate(bundleIdentifier:teamID:environments:now:)``),
/// with Apple's markers: the extension `1.2.840.113635.100.6.3.1` for the sandbox ("Development"),
/// `…6.3.2` for production, and `…6.3.6` listing the topics of a certificate valid in both.
package struct ProviderCertificate: Sendable, Hashable {
    package var bundleIdentifier: String
    package var teamID: String
    package var environments: Set<APNs.Environment>
    /// The app's topics: the bundle identifier first, then its VoIP and complication topics for a
    /// certificate valid in both environments (Apple's "Apple Push Services" certificates).
    package var topics: [String]

    package init(bundleIdentifier: String, teamID: String, environments: Set<APNs.Environment>, topics: [String]) {
        self.bundleIdentifier = bundleIdentifier
        self.teamID = teamID
        self.environments = environments
        self.topics = topics
    }

    static let sandboxMarker: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 6, 3, 1]
    static let productionMarker: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 6, 3, 2]
    static let topicsExtension: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 6, 3, 6]
    static let userID: ASN1ObjectIdentifier = [0, 9, 2342, 19_200_300, 100, 1, 1]

    /// What a connection's client certificate amounts to.
    package enum Verdict: Sendable, Hashable {
        /// A provider certificate the gateway's authority issued, valid now.
        case valid(ProviderCertificate)
        /// A certificate that cannot authenticate a provider, and why: `403 BadCertificate`.
        case invalid(String)
    }

    /// Reads and checks the chain a client presented (its leaf first, DER), at `now`: issued by
    /// `authority`, within its dates, for client authentication, naming an app and its team.
    package static func verify(_ chain: [[UInt8]], authority: Certificate, now: Date) -> Verdict {
        guard let leafBytes = chain.first, let leaf = try? Certificate(derEncoded: leafBytes) else {
            return .invalid("The client certificate cannot be read.")
        }
        guard leaf.issuer == authority.subject, authority.publicKey.isValidSignature(leaf.signature, for: leaf) else {
            return .invalid("The client certificate was not issued by this gateway's certificate authority.")
        }
        guard leaf.notValidBefore <= now, now <= leaf.notValidAfter else {
            return .invalid("The client certificate is outside its dates of validity.")
        }
        if let usage = try? leaf.extensions.extendedKeyUsage, !usage.contains(.clientAuth) {
            return .invalid("The client certificate is not for client authentication.")
        }
        guard let bundleIdentifier = attribute(userID, of: leaf.subject), !bundleIdentifier.isEmpty,
              let teamID = attribute(ASN1ObjectIdentifier.RDNAttributeType.organizationalUnitName, of: leaf.subject), !teamID.isEmpty else {
            return .invalid("The client certificate names no app (user ID) or team (organizational unit).")
        }
        var environments = Set<APNs.Environment>()
        if leaf.extensions[oid: sandboxMarker] != nil { environments.insert(.sandbox) }
        if leaf.extensions[oid: productionMarker] != nil { environments.insert(.production) }
        guard !environments.isEmpty else { return .invalid("The client certificate is not a push certificate: it names no environment.") }
        var topics = [bundleIdentifier]
        if let listed = leaf.extensions[oid: topicsExtension] {
            guard let node = try? DER.parse(listed.value),
                  let values = try? DER.sequence(of: ASN1UTF8String.self, identifier: .sequence, rootNode: node) else {
                return .invalid("The client certificate's topics cannot be read.")
            }
            topics += values.map(String.init).filter { $0 != bundleIdentifier }
        }
        return .valid(ProviderCertificate(bundleIdentifier: bundleIdentifier, teamID: teamID, environments: environments, topics: topics))
    }

    private static func attribute(_ type: ASN1ObjectIdentifier, of name: DistinguishedName) -> String? {
        for relativeName in name {
            for attribute in relativeName where attribute.type == type {
                return String(attribute.value)
            }
        }
        return nil
    }

    /// The extensions that mark a certificate for `environments` and, valid in both, its `topics`.
    static func markers(environments: Set<APNs.Environment>, topics: [String]) throws -> [Certificate.Extension] {
        // Apple's environment markers hold an ASN.1 NULL.
        let null: ArraySlice<UInt8> = [0x05, 0x00]
        var markers: [Certificate.Extension] = []
        if environments.contains(.sandbox) { markers.append(Certificate.Extension(oid: sandboxMarker, critical: false, value: null)) }
        if environments.contains(.production) { markers.append(Certificate.Extension(oid: productionMarker, critical: false, value: null)) }
        if topics.count > 1 {
            var serializer = DER.Serializer()
            try serializer.appendConstructedNode(identifier: .sequence) { serializer in
                for topic in topics { try serializer.serialize(ASN1UTF8String(topic)) }
            }
            markers.append(Certificate.Extension(oid: topicsExtension, critical: false, value: serializer.serializedBytes[...]))
        }
        return markers
    }
}
