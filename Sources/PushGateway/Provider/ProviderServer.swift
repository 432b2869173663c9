import ConnectionLifecycle
package import Foundation
package import Logging
package import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS
package import NotificationCore
import Synchronization
import SwiftASN1
import X509

/// Apple's HTTP/2 provider API on a TCP port: `POST /3/device/<token>` over TLS 1.2+ (ALPN `h2`, or
/// no ALPN, as APNs accepts), or over cleartext HTTP/2 only when the configuration asks for it.
///
/// Each connection authenticates as on APNs (``ProviderConnectionAuthorization``), each request is
/// checked against Apple's rules in their order, and what passes goes to the ``PushAcceptor``.
package final class ProviderServer: Listener {
    package struct Configuration: Sendable {
        /// Where to listen. Loopback unless told otherwise.
        package var host = "127.0.0.1"
        /// 0 picks a free port (see ``ProviderServer/start()``).
        package var port = 2197
        /// The environment this endpoint is, as `api.sandbox.push.apple.com` or `api.push.apple.com` are.
        package var environment: APNs.Environment = .sandbox
        /// The server's certificate chain and key, in PEM; nil serves cleartext HTTP/2 (prior knowledge).
        package var tls: TLS?
        /// Streams a connection may open at once once authenticated; one before, as on APNs.
        package var maximumConcurrentStreams = 1000
        /// The weight of refused requests within an ``errorPeriod`` after which a connection is
        /// closed with GOAWAY (a bad device token weighs 10, other errors 1).
        package var errorLimit = 100
        /// How long a refused request counts against its connection.
        package var errorPeriod: TimeAmount = .seconds(60)
        /// Requests a connection may cancel (`RST_STREAM`) in 30 seconds before it is closed as an
        /// attack (the HTTP/2 "rapid reset", CVE-2023-44487). Ten times the streams it may have open:
        /// a busy provider whose client cancels a few of its requests, or all those under way now and
        /// then, keeps its connection. A limit of 200 (SwiftNIO's HTTP/2 default) closed the connection of a
        /// provider sending a few thousand pushes a second every second or two, and with it the
        /// answers of the pushes under way, pushes that were accepted and delivered all the same.
        package var cancelledRequestsPer30Seconds = 10_000
        /// How long a request may take from its first frame to its end; then it is answered
        /// `400 IdleTimeout` (a provider's request, at most a few kilobytes, is sent at once).
        package var requestIdleTimeout: TimeAmount = .seconds(10)
        /// How long a connection may take to complete its TLS handshake; then it is closed.
        package var openingTimeout: TimeAmount = .seconds(10)
        /// How long a connection may take, after its handshake, to send HTTP/2's preface and its first
        /// SETTINGS (a client sends them with its first bytes); then it is closed.
        package var prefaceTimeout: TimeAmount = .seconds(10)
        /// How long a connection speaking HTTP/2 may take to send a first request that a provider token
        /// or certificate authenticates; then it is closed. Until then it is a stranger's, and gives its
        /// place to a newer connection when the port is full.
        package var firstRequestTimeout: TimeAmount = .seconds(60)
        /// How long an authenticated connection may go without sending a frame (a PING counts); then
        /// it is sent GOAWAY and closed once its requests are answered. APNs keeps a provider's
        /// connection open for hours, and providers ping every minute or so, or reconnect: an hour
        /// hurts none of them.
        package var idleTimeout: TimeAmount = .hours(1)
        /// The most connections the port keeps; `nil`, its share of the process's open files
        /// (``ConnectionBudget``). A connection beyond it closes the oldest one not yet authenticated,
        /// or, with every one authenticated, is closed.
        package var maximumConnections: Int?
        /// The spelling of the environment-key refusal (see ``APNs/Reason/badEnvironmentKeyInToken``).
        package var environmentKeyReason: APNs.Reason = .badEnvironmentKeyInToken

        package struct TLS: Sendable {
            package var certificateChainPEM: String
            package var privateKeyPEM: String
            /// The authority whose provider certificates authenticate connections (``ProviderCertificate``),
            /// in PEM; nil accepts token authentication alone.
            package var clientAuthorityPEM: String?
            /// Where a renewed chain and key come from (files given to the gateway); nil serves the
            /// ones above for the server's life.
            package var renewals: ServedCertificate?

            package init(certificateChainPEM: String, privateKeyPEM: String, clientAuthorityPEM: String? = nil, renewals: ServedCertificate? = nil) {
                self.certificateChainPEM = certificateChainPEM
                self.privateKeyPEM = privateKeyPEM
                self.clientAuthorityPEM = clientAuthorityPEM
                self.renewals = renewals
            }

            /// A server's TLS 1.2+ configuration with this chain and key; `listener` names the server
            /// in the error thrown for unreadable PEM.
            func serverConfiguration(for listener: String) throws -> TLSConfiguration {
                let chain: [NIOSSLCertificate]
                let key: NIOSSLPrivateKey
                do {
                    chain = try NIOSSLCertificate.fromPEMBytes(Array(certificateChainPEM.utf8))
                    key = try NIOSSLPrivateKey(bytes: Array(privateKeyPEM.utf8), format: .pem)
                } catch {
                    throw ProviderServerError("The \(listener)'s certificate chain or key is not readable PEM (\(error)).")
                }
                // Said at start, not at each handshake: a key of another certificate serves nobody.
                guard let first = try? PEMDocument.parseMultiple(pemString: certificateChainPEM).first,
                      let leaf = try? Certificate(pemDocument: first), let privateKey = try? Certificate.PrivateKey(pemEncoded: privateKeyPEM),
                      leaf.publicKey == privateKey.publicKey else {
                    throw ProviderServerError("The \(listener)'s private key is not the key of its certificate.")
                }
                var configuration = TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
                configuration.minimumTLSVersion = .tlsv12
                return configuration
            }
        }

        package init() {}
    }

    /// What every connection handler of the server reads.
    struct Shared: Sendable {
        let configuration: Configuration
        let credentials: @Sendable () -> ProviderCredentials
        /// Reads the providers' keys again (at most so often), then calls back.
        let refreshCredentials: @Sendable (_ done: @escaping @Sendable () -> Void) -> Void
        let acceptor: any PushAcceptor
        /// Where `GET /1/delivery-log/<id>` reads; nil answers it `404`.
        let deliveryLog: (any DeliveryLogReader)?
        /// Where the broadcast API's requests go; nil answers them `400 FeatureNotEnabled`.
        let channels: (any BroadcastChannels)?
        let metrics: GatewayMetrics
        let clock: @Sendable () -> Date
        /// What an emulator changes of the provider API; nil in a gateway.
        let emulation: ProviderEmulation?
        let shutdown: ShutdownFlag
        /// Where a request's work away from the event loop runs (a delivery-log read, a broadcast
        /// request): the gateway's ``OwnedTasks``.
        let tasks: OwnedTasks
    }

    /// Set once the server is stopping: requests that end after it are answered `503 Shutdown`.
    final class ShutdownFlag: Sendable {
        private let value = Atomic(false)
        var isSet: Bool { value.load(ordering: .acquiring) }
        func set() { value.store(true, ordering: .releasing) }
    }

    private let shared: Shared
    private let group: any EventLoopGroup
    private let logger: Logger
    private let channel = Mutex<(any Channel)?>(nil)
    /// The port's connections: at most so many, each held to its deadlines; on a graceful stop, each
    /// is told.
    private let lifecycle: ListenerLifecycle

    /// - Parameters:
    ///   - credentials: the keys and apps as they are now; read at each request.
    ///   - refreshCredentials: reads them again before a token of an unknown key is refused, then calls back.
    ///   - metrics: where pushes accepted and refused are counted.
    ///   - clock: the time the token rules count with.
    ///   - emulation: what an emulator changes of the provider API (scripted faults, tokens aged on
    ///     its clock); nil in a gateway.
    ///   - tasks: where requests' work away from the event loop runs (the core's, in the gateway).
    package init(
        configuration: Configuration,
        credentials: @escaping @Sendable () -> ProviderCredentials,
        refreshCredentials: @escaping @Sendable (_ done: @escaping @Sendable () -> Void) -> Void = { $0() },
        acceptor: any PushAcceptor,
        deliveryLog: (any DeliveryLogReader)? = nil,
        channels: (any BroadcastChannels)? = nil,
        metrics: GatewayMetrics = GatewayMetrics(),
        clock: @escaping @Sendable () -> Date = { Date() },
        emulation: ProviderEmulation? = nil,
        tasks: OwnedTasks = OwnedTasks(),
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger
    ) {
        shared = Shared(configuration: configuration, credentials: credentials, refreshCredentials: refreshCredentials, acceptor: acceptor,
                        deliveryLog: deliveryLog, channels: channels, metrics: metrics, clock: clock, emulation: emulation, shutdown: ShutdownFlag(), tasks: tasks)
        lifecycle = ListenerLifecycle(
            capacity: configuration.maximumConnections ?? ConnectionBudget.now.capacity(of: .providerPort),
            deadlines: ConnectionDeadlines.Configuration(
                handshake: configuration.tls == nil ? nil : configuration.openingTimeout, opening: configuration.prefaceTimeout,
                firstUse: configuration.firstRequestTimeout, idle: configuration.idleTimeout
            ),
            listener: "provider API", logger: logger
        )
        self.group = group
        self.logger = logger
    }

    /// Starts listening; returns the address it listens on.
    package func start() async throws -> SocketAddress {
        let clientAuthority: Certificate?
        do {
            clientAuthority = try shared.configuration.tls?.clientAuthorityPEM.map { try Certificate(pemEncoded: $0) }
        } catch {
            throw ProviderServerError("The provider certificates' authority is not a readable PEM certificate (\(error)).")
        }
        let sslContexts = try shared.configuration.tls.map { tls in
            try ListenerTLSContext(tls, listener: "provider API", logger: logger) { tls in
                var configuration = try tls.serverConfiguration(for: "provider API")
                configuration.applicationProtocols = ["h2"]
                if let pem = tls.clientAuthorityPEM {
                    // A client certificate is asked for but not required: token connections present none.
                    // The handshake accepts any; each connection's requests are judged by what it presented.
                    configuration.certificateVerification = .optionalVerification
                    configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(pem.utf8)))
                    configuration.sendCANameList = true
                }
                return try NIOSSLContext(configuration: configuration)
            }
        }
        let shared = self.shared
        let lifecycle = self.lifecycle
        let bound = try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            // A connection stops being read once this much is waiting to be sent to its provider
            // (``ProviderConnectionHandler``): a group commit answers up to a thousand requests at
            // once, which SwiftNIO's 64 KiB would often stop, and a provider that does not read is
            // held to a few megabytes.
            .childChannelOption(.writeBufferWaterMark, value: .init(low: 1 << 20, high: 4 << 20))
            .childChannelInitializer { channel in
                // Beyond the port's share of the open files, a stranger's connection (or this one) closes.
                guard lifecycle.connections.admit(channel) != .refused else { return channel.eventLoop.makeSucceededVoidFuture() }
                let deadlines = ConnectionDeadlineHandler(lifecycle.deadlines, connections: lifecycle.connections)
                guard let sslContext = sslContexts?.current else {
                    return channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(deadlines)
                        try Self.configureHTTP2(channel, shared: shared, certificate: nil)
                    }
                }
                return channel.eventLoop.makeCompletedFuture {
                    let presented = NIOLoopBoundBox<ProviderCertificate.Verdict?>(nil, eventLoop: channel.eventLoop)
                    let handler: NIOSSLServerHandler
                    if let clientAuthority {
                        handler = NIOSSLServerHandler(context: sslContext) { chain, promise in
                            presented.value = ProviderCertificate.verify(chain.compactMap { try? $0.toDERBytes() }, authority: clientAuthority, now: shared.clock())
                            promise.succeed(.certificateVerified)
                        }
                    } else {
                        handler = NIOSSLServerHandler(context: sslContext)
                    }
                    try channel.pipeline.syncOperations.addHandler(handler)
                    try channel.pipeline.syncOperations.addHandler(deadlines)
                    // HTTP/2 whatever ALPN said: `h2`, or nothing (some APNs clients offer no ALPN).
                    try channel.pipeline.syncOperations.addHandler(ApplicationProtocolNegotiationHandler { _ in
                        channel.eventLoop.makeCompletedFuture { try Self.configureHTTP2(channel, shared: shared, certificate: presented.value) }
                    })
                }
            }
            .bind(host: shared.configuration.host, port: shared.configuration.port)
            .get()
        channel.withLock { $0 = bound }
        guard let address = bound.localAddress else { throw ProviderServerError("the provider API's socket has no address") }
        logger.info("provider API listening", metadata: [
            "address": .string("\(address)"), "environment": .string(shared.configuration.environment.rawValue),
            "tls": .stringConvertible(shared.configuration.tls != nil),
        ])
        return address
    }

    /// Whether ``stop(grace:)`` has begun.
    package var isStopping: Bool { shared.shutdown.isSet }

    /// Stops gracefully, as APNs does: no new connections; each open one is sent GOAWAY with
    /// `{"reason":"Shutdown"}` naming the last stream it opened (those it opens after are not
    /// processed, and the provider sends them again elsewhere), requests that end from now on are
    /// answered `503 Shutdown`, requests under way are answered as usual; connections still open
    /// after `grace` are closed.
    package func stop(grace: Duration = .seconds(5)) async {
        shared.shutdown.set()
        let bound = channel.withLock { channel in
            defer { channel = nil }
            return channel
        }
        try? await bound?.close()
        let open = lifecycle.connections.all.map(\.channel)
        for connection in open {
            connection.eventLoop.execute {
                guard (try? connection.pipeline.syncOperations.handler(type: ProviderConnectionHandler.self)) != nil else {
                    // Not speaking HTTP/2 yet (its TLS handshake is under way): nothing to finish.
                    connection.close(promise: nil)
                    return
                }
                // A connection with nothing under way closes now; the others once their last stream ends.
                connection.pipeline.fireUserInboundEventTriggered(ProviderConnectionHandler.Stopping())
            }
        }
        // Waits for the connections to finish, up to the grace.
        let deadline = ContinuousClock.now + grace
        await Self.waitUntilClosed(open, until: deadline)
        Self.closeAll(lifecycle.connections.all.map(\.channel))
    }

    private static func configureHTTP2(_ channel: any Channel, shared: Shared, certificate: ProviderCertificate.Verdict?) throws {
        let connection = ProviderConnection(environment: shared.configuration.environment,
                                            environmentKeyReason: shared.configuration.environmentKeyReason, certificate: certificate)
        try channel.pipeline.syncOperations.addHandler(ProviderConnectionHandler(connection: connection, server: shared, allocator: channel.allocator))
    }
}

/// The provider API could not start.
package struct ProviderServerError: Error, CustomStringConvertible {
    package var description: String
    init(_ description: String) { self.description = description }
}
