package import Foundation
import Logging
import NIOSSL
import ServiceLifecycle
import SwiftASN1
import Synchronization
import X509
#if canImport(Glibc)
import Glibc
#endif

/// A certificate chain and its key given to the gateway as PEM files, such as a public host's from
/// Let's Encrypt or a company's authority, served in place of one from the gateway's own authority.
///
/// The files are read at start and again whenever they change (``reload()``, run by
/// ``ServedCertificateWatch``): a renewed certificate is served to the connections that open after,
/// without a restart, and the connections already open keep theirs. A change that is not a usable
/// pair (a chain written before its key, a key of another certificate) is refused, said once, and
/// the last good pair kept.
package final class ServedCertificate: Sendable {
    package struct Files: Sendable, Hashable {
        /// The server's certificate, then the intermediates that lead to a trusted root.
        package var chain: String
        package var key: String

        package init(chain: String, key: String) {
            self.chain = chain
            self.key = key
        }
    }

    /// A chain and key read and checked together.
    package struct Loaded: Sendable {
        package var chainPEM: String
        package var keyPEM: String
        /// The names and addresses the certificate is for (its subject alternative names).
        package var names: [String]
        package var notValidAfter: Date
        /// 1 for the pair read at start, one more for each renewal.
        package var generation: Int
    }

    /// What ``reload()`` found.
    package enum Reload: Sendable {
        case unchanged
        case renewed(Loaded)
        /// The files changed into something that cannot be served; the last good pair stays.
        case refused(String)
    }

    package let files: Files
    private let state: Mutex<Loaded>
    /// The contents last refused: not refused (and said) again until they change once more.
    private let lastRefused = Mutex<String?>(nil)

    /// Reads the pair; throws a ``ProviderServerError`` naming the file at fault.
    package init(files: Files) throws {
        self.files = files
        var loaded = try Self.read(files)
        loaded.generation = 1
        state = Mutex(loaded)
    }

    /// The pair served now.
    package var loaded: Loaded { state.withLock { $0 } }

    /// Reads the files again; a changed, usable pair replaces the one served.
    package func reload() -> Reload {
        let current = loaded
        let contents: (chain: String, key: String)
        do {
            contents = (try Self.text(of: files.chain, what: "certificate chain"), try Self.text(of: files.key, what: "key"))
        } catch {
            return refusing("\(error)", contents: nil)
        }
        guard contents.chain != current.chainPEM || contents.key != current.keyPEM else { return .unchanged }
        do {
            var renewed = try Self.check(chainPEM: contents.chain, keyPEM: contents.key, files: files)
            renewed.generation = current.generation + 1
            state.withLock { $0 = renewed }
            lastRefused.withLock { $0 = nil }
            return .renewed(renewed)
        } catch {
            return refusing("\(error)", contents: contents.chain + contents.key)
        }
    }

    private func refusing(_ reason: String, contents: String?) -> Reload {
        let said = lastRefused.withLock { last in
            defer { last = contents ?? reason }
            return last == (contents ?? reason)
        }
        return said ? .unchanged : .refused(reason)
    }

    private static func read(_ files: Files) throws -> Loaded {
        try check(chainPEM: try text(of: files.chain, what: "certificate chain"), keyPEM: try text(of: files.key, what: "key"), files: files)
    }

    private static func text(of path: String, what: String) throws -> String {
        do {
            return try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ProviderServerError("The served \(what) \(path) cannot be read (\((error as NSError).localizedDescription)).")
        }
    }

    /// The pair, if it can be served: PEM that both SwiftNIO SSL and the X.509 reader take, the key
    /// the first certificate's.
    private static func check(chainPEM: String, keyPEM: String, files: Files) throws -> Loaded {
        let leaf: Certificate
        do {
            guard !(try NIOSSLCertificate.fromPEMBytes(Array(chainPEM.utf8))).isEmpty,
                  let first = try PEMDocument.parseMultiple(pemString: chainPEM).first(where: { $0.discriminator == "CERTIFICATE" }) else {
                throw ProviderServerError("no certificate")
            }
            leaf = try Certificate(pemDocument: first)
        } catch {
            throw ProviderServerError("The served certificate chain \(files.chain) is not PEM certificates (\(error)).")
        }
        let key: Certificate.PrivateKey
        do {
            _ = try NIOSSLPrivateKey(bytes: Array(keyPEM.utf8), format: .pem)
            key = try Certificate.PrivateKey(pemEncoded: keyPEM)
        } catch {
            throw ProviderServerError("The served key \(files.key) is not a PEM private key (\(error)).")
        }
        guard key.publicKey == leaf.publicKey else {
            throw ProviderServerError("The served key \(files.key) is not the key of the first certificate in \(files.chain).")
        }
        var names: [String] = []
        if let alternatives = try? leaf.extensions.subjectAlternativeNames {
            for name in alternatives {
                switch name {
                case .dnsName(let host): names.append(host)
                case .ipAddress(let bytes): names.append(Self.address(Array(bytes.bytes)))
                default: break
                }
            }
        }
        return Loaded(chainPEM: chainPEM, keyPEM: keyPEM, names: names, notValidAfter: leaf.notValidAfter, generation: 0)
    }

    /// An address's text: dotted for IPv4, as `inet_ntop` writes IPv6.
    private static func address(_ bytes: [UInt8]) -> String {
        if bytes.count == 4 { return bytes.map(String.init).joined(separator: ".") }
        guard bytes.count == 16 else { return "" }
        var text = [CChar](repeating: 0, count: 64)
        let written = bytes.withUnsafeBytes { raw in inet_ntop(AF_INET6, raw.baseAddress, &text, socklen_t(text.count)) != nil }
        return written ? String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
    }

    /// Whether the certificate is for `host` (a name, matched as TLS clients do, a `*.` covering one
    /// label, or an address).
    package func covers(_ host: String) -> Bool {
        loaded.names.contains { name in
            let (name, host) = (name.lowercased(), host.lowercased())
            if name == host { return true }
            guard name.hasPrefix("*."), let dot = host.firstIndex(of: ".") else { return false }
            return host[dot...] == name.dropFirst() && host[..<dot] != ""
        }
    }

    /// A name the gateway's own device (`serve`'s) can check the certificate against while it
    /// connects on loopback: `localhost` or `127.0.0.1` when covered, else the first name (a
    /// wildcard's as `gateway.<domain>`).
    package var localName: String {
        for name in ["localhost", "127.0.0.1", "::1"] where covers(name) { return name }
        guard let first = loaded.names.first else { return "localhost" }
        return first.hasPrefix("*.") ? "gateway" + first.dropFirst() : first
    }
}

/// Reads the served certificate's files again every `interval` (a few stats' worth of work), and
/// says what changed.
struct ServedCertificateWatch: Service {
    let certificate: ServedCertificate
    let interval: Duration
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                switch certificate.reload() {
                case .unchanged:
                    break
                case .renewed(let loaded):
                    logger.notice("served certificate renewed", metadata: ServedCertificateWatch.metadata(loaded))
                case .refused(let reason):
                    logger.error("served certificate not renewed: the one served stays", metadata: ["reason": .string(reason)])
                }
            }
        }
    }

    static func metadata(_ loaded: ServedCertificate.Loaded) -> Logger.Metadata {
        ["names": .string(loaded.names.joined(separator: ",")), "notValidAfter": .string(ISO8601DateFormatter().string(from: loaded.notValidAfter))]
    }
}

/// A listener's TLS context: made again, for the connections that open after, once its certificate
/// is renewed (``ServedCertificate``); a connection keeps the context it opened with.
final class ListenerTLSContext: Sendable {
    private let tls: ProviderServer.Configuration.TLS
    private let make: @Sendable (ProviderServer.Configuration.TLS) throws -> NIOSSLContext
    private let listener: String
    private let logger: Logger
    private let state: Mutex<(generation: Int, context: NIOSSLContext)>

    /// - Parameter make: the listener's context for a chain and key; what it throws at start is the listener's failure to start.
    init(_ tls: ProviderServer.Configuration.TLS, listener: String, logger: Logger,
         make: @escaping @Sendable (ProviderServer.Configuration.TLS) throws -> NIOSSLContext) throws {
        self.tls = tls
        self.make = make
        self.listener = listener
        self.logger = logger
        guard let renewals = tls.renewals else {
            state = Mutex((0, try make(tls)))
            return
        }
        let loaded = renewals.loaded
        state = Mutex((loaded.generation, try make(Self.tls(tls, with: loaded))))
    }

    private static func tls(_ tls: ProviderServer.Configuration.TLS, with loaded: ServedCertificate.Loaded) -> ProviderServer.Configuration.TLS {
        var tls = tls
        tls.certificateChainPEM = loaded.chainPEM
        tls.privateKeyPEM = loaded.keyPEM
        return tls
    }

    /// The context for a connection opening now: made once per renewal, on the first connection after it.
    var current: NIOSSLContext {
        guard let renewals = tls.renewals else { return state.withLock { $0.context } }
        let loaded = renewals.loaded
        return state.withLock { state in
            guard state.generation != loaded.generation else { return state.context }
            state.generation = loaded.generation
            do {
                state.context = try make(Self.tls(tls, with: loaded))
            } catch {
                logger.error("renewed certificate not served: the one before stays", metadata: ["listener": .string(listener), "error": .string("\(error)")])
            }
            return state.context
        }
    }
}
