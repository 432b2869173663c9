package import Crypto
package import Foundation
import SwiftASN1
#if canImport(Glibc)
import Glibc
#endif
package import X509
package import NotificationCore

/// A certificate authority of the gateway's own, for a self-hosted deployment: it signs the
/// gateway's server certificate (and, later, providers' client certificates), and providers trust it
/// the way they trust Apple's root for APNs.
package struct GatewayCertificateAuthority: Sendable {
    package let certificate: Certificate
    package let privateKey: P256.Signing.PrivateKey

    /// A server certificate and its key, in PEM, for a TLS listener.
    package struct Issued: Sendable {
        package var certificatePEM: String
        package var privateKeyPEM: String
    }

    /// Makes a new authority, valid for ten years from `now`.
    package init(name: String, now: Date = Date()) throws {
        let key = P256.Signing.PrivateKey()
        let subject = try DistinguishedName {
            CommonName(name)
            OrganizationName("OpenUserNotifications")
        }
        certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: .init(key.publicKey),
            notValidBefore: now.addingTimeInterval(-3600),
            notValidAfter: now.addingTimeInterval(10 * 365 * 86_400),
            issuer: subject,
            subject: subject,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                SubjectKeyIdentifier(hash: .init(key.publicKey))
            },
            issuerPrivateKey: .init(key)
        )
        privateKey = key
    }

    /// Reads an authority written by ``certificatePEM`` and ``privateKeyPEM``.
    package init(certificatePEM: String, privateKeyPEM: String) throws {
        certificate = try Certificate(pemEncoded: certificatePEM)
        privateKey = try P256.Signing.PrivateKey(pemRepresentation: privateKeyPEM)
    }

    package var certificatePEM: String {
        get throws { try certificate.serializeAsPEM().pemString }
    }

    package var privateKeyPEM: String { privateKey.pemRepresentation }

    /// Issues a server certificate for `hosts` (names, or IPv4/IPv6 addresses), valid for two years.
    package func issueServerCertificate(for hosts: [String], now: Date = Date()) throws -> Issued {
        let key = P256.Signing.PrivateKey()
        let names = hosts.map { host -> GeneralName in
            if let address = IPAddressBytes(host) { return .ipAddress(ASN1OctetString(contentBytes: address.bytes[...])) }
            return .dnsName(host)
        }
        let subject = try DistinguishedName { CommonName(hosts.first ?? "localhost") }
        return try issue(to: subject, key: key, days: 2 * 365, extensions: try Certificate.Extensions {
            Critical(BasicConstraints.notCertificateAuthority)
            Critical(KeyUsage(digitalSignature: true))
            try ExtendedKeyUsage([.serverAuth])
            SubjectAlternativeNames(names)
        }, now: now)
    }

    /// Signs a certificate for `key` (an hour back-dated, against clocks a little behind).
    private func issue(to subject: DistinguishedName, key: P256.Signing.PrivateKey, days: Int, extensions: Certificate.Extensions, now: Date) throws -> Issued {
        let issued = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: .init(key.publicKey),
            notValidBefore: now.addingTimeInterval(-3600),
            notValidAfter: now.addingTimeInterval(TimeInterval(days) * 86_400),
            issuer: certificate.subject,
            subject: subject,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: extensions,
            issuerPrivateKey: .init(privateKey)
        )
        return Issued(certificatePEM: try issued.serializeAsPEM().pemString, privateKeyPEM: key.pemRepresentation)
    }
}

extension GatewayCertificateAuthority {
    /// Issues a provider's client certificate for one app, valid for a year as Apple's are: for the
    /// sandbox, production, or both. A certificate for both also carries the app's VoIP and
    /// complication topics, as Apple's "Apple Push Services" certificates do, so that a request on it
    /// must name its `apns-topic` (`MissingTopic` otherwise); one for a single environment has one topic.
    package func issueProviderCertificate(
        bundleIdentifier: String,
        teamID: String,
        environments: Set<APNs.Environment>,
        now: Date = Date()
    ) throws -> Issued {
        let key = P256.Signing.PrivateKey()
        let kind = environments.count > 1 ? "Apple Push Services" : environments.contains(.production) ? "Apple Production IOS Push Services" : "Apple Development IOS Push Services"
        let subject = DistinguishedName([
            RelativeDistinguishedName(RelativeDistinguishedName.Attribute(type: ProviderCertificate.userID, utf8String: bundleIdentifier)),
            RelativeDistinguishedName(RelativeDistinguishedName.Attribute(type: ASN1ObjectIdentifier.RDNAttributeType.commonName, utf8String: "\(kind): \(bundleIdentifier)")),
            RelativeDistinguishedName(RelativeDistinguishedName.Attribute(type: ASN1ObjectIdentifier.RDNAttributeType.organizationalUnitName, utf8String: teamID)),
            RelativeDistinguishedName(RelativeDistinguishedName.Attribute(type: ASN1ObjectIdentifier.RDNAttributeType.organizationName, utf8String: "OpenUserNotifications")),
        ])
        let topics = environments.count > 1 ? [bundleIdentifier, bundleIdentifier + ".voip", bundleIdentifier + ".complication"] : [bundleIdentifier]
        let markers = try ProviderCertificate.markers(environments: environments, topics: topics)
        return try issue(to: subject, key: key, days: 365, extensions: try Certificate.Extensions {
            Critical(BasicConstraints.notCertificateAuthority)
            Critical(KeyUsage(digitalSignature: true))
            try ExtendedKeyUsage([.clientAuth])
            for marker in markers { marker }
        }, now: now)
    }
}

/// The bytes of a textual IPv4 or IPv6 address, for a certificate's subject alternative names.
private struct IPAddressBytes {
    var bytes: [UInt8]

    init?(_ text: String) {
        // inet_pton writes 4 bytes for IPv4 and 16 for IPv6.
        var buffer = [UInt8](repeating: 0, count: 16)
        if inet_pton(AF_INET, text, &buffer) == 1 {
            bytes = Array(buffer.prefix(4))
        } else if inet_pton(AF_INET6, text, &buffer) == 1 {
            bytes = buffer
        } else {
            return nil
        }
    }
}
