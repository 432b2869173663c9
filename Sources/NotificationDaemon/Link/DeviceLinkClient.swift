import EventLoopWebSocket
import Foundation
package import Logging
import NIOCore
import NIOSSL
import NIOWebSocket
package import NotificationCore
package import NotificationEngine
import ServiceLifecycle
import Synchronization

/// The daemon's end of the device link (`Docs/device-link.md`): it holds the link to a push gateway,
/// hands every push to the engine and acknowledges it once it is durable there, registers apps for
/// remote notifications, and sends up what became of each push for the gateway's delivery log. It
/// reconnects after a drop, waiting 0.5 s doubling to 30 s (±20 %), to the next of the gateway's
/// nodes when it has several, and stops for good when another link of the same device replaced it.
package final class DeviceLinkClient: Service, Sendable {
    package struct Configuration: Sendable {
        /// The gateway's device-link addresses, such as `wss://push.example.com:2199`: one, or one per
        /// node of a gateway on several; each reconnection goes to the next.
        package var urls: [String]
        /// `<device id>.<secret>`, from `unotify gateway devices add`.
        package var credential: String
        /// The certificate authority to trust for the gateway, in PEM; nil trusts the system's roots.
        package var trustedAuthorityPEM: String?
        /// Trust the system's roots as well as ``trustedAuthorityPEM``.
        package var trustsSystemRoots = false
        /// Where to connect, when the addresses' host is a name this machine may not resolve to the
        /// gateway: the certificate is still checked against the name (`serve`'s own link, when its
        /// certificate is a public host's).
        package var connectAddress: String?

        package init(urls: [String], credential: String, trustedAuthorityPEM: String? = nil) {
            precondition(!urls.isEmpty, "a device links to at least one address")
            self.urls = urls
            self.credential = credential
            self.trustedAuthorityPEM = trustedAuthorityPEM
        }

        package init(url: String, credential: String, trustedAuthorityPEM: String? = nil) {
            self.init(urls: [url], credential: credential, trustedAuthorityPEM: trustedAuthorityPEM)
        }
    }

    private struct State {
        /// The link that is up now.
        var socket: ClientWebSocket?
        var waiting: [String: CheckedContinuation<DeviceLink.GatewayMessage, any Error>] = [:]
        /// Whether the gateway welcomed the link that is up now.
        var isWelcomed = false
    }

    private let configuration: Configuration
    private let engine: DaemonEngine
    private let logger: Logger
    private let state = Mutex(State())
    /// Yields each time a link comes up: for tests and for callers waiting to register.
    package let linked: AsyncStream<Void>
    private let linkedContinuation: AsyncStream<Void>.Continuation
    /// Yields the sequence of each acknowledgement as it is handed to the link, in order.
    package let acknowledgements: AsyncStream<Int64>
    private let acknowledgementsContinuation: AsyncStream<Int64>.Continuation
    /// Yields the number of the last delivery-log report the gateway confirmed, each time it does.
    package let reportsConfirmed: AsyncStream<Int64>
    private let reportsConfirmedContinuation: AsyncStream<Int64>.Continuation

    package init(configuration: Configuration, engine: DaemonEngine, logger: Logger) {
        self.configuration = configuration
        self.engine = engine
        self.logger = logger
        (linked, linkedContinuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        (acknowledgements, acknowledgementsContinuation) = AsyncStream.makeStream(of: Int64.self, bufferingPolicy: .bufferingNewest(64))
        (reportsConfirmed, reportsConfirmedContinuation) = AsyncStream.makeStream(of: Int64.self, bufferingPolicy: .bufferingNewest(64))
    }

    package func run() async throws {
        // Not cancelled on a graceful shutdown: the WebSocket closes itself then, with its close
        // handshake; a cancelled one stops reading first.
        var delay: Double = 0.5
        var attempt = 0
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            let began = ContinuousClock.now
            // A node that dropped the link may be gone: the next attempt goes to the next one.
            let url = configuration.urls[attempt % configuration.urls.count]
            attempt += 1
            do {
                let closeCode = try await connectOnce(to: url)
                if closeCode == .unknown(4001) {
                    logger.warning("another daemon linked to the gateway as this device; this one stops linking")
                    break
                }
            } catch {
                logger.notice("the device link is down", metadata: ["gateway": .string(url), "error": .string("\(error)")])
            }
            linkEnded()
            if ContinuousClock.now - began > .seconds(60) { delay = 0.5 }
            let wait = delay * Double.random(in: 0.8...1.2)
            delay = min(delay * 2, 30)
            // Only the wait is cut short by a shutdown.
            await cancelWhenGracefulShutdown { try? await Task.sleep(for: .milliseconds(Int(wait * 1000))) }
        }
        linkEnded()
    }

    /// Whether the device is linked to the gateway now (welcomed on a link that is up).
    package var isLinked: Bool { state.withLock { $0.isWelcomed } }

    /// Issues (or returns) the app's device token for `environment` from the gateway.
    package func register(_ bundleIdentifier: String, environment: APNs.Environment) async throws -> String {
        let answer = try await ask { .register(requestID: $0, bundleIdentifier: bundleIdentifier, environment: environment) }
        guard case .registered(_, let token, _, _) = answer else { throw Self.refusal(answer) }
        return token
    }

    /// Ends the app's tokens at the gateway: pushes to them answer `410 Unregistered` from now on.
    package func unregister(_ bundleIdentifier: String) async throws {
        let answer = try await ask { .unregister(requestID: $0, bundleIdentifier: bundleIdentifier) }
        guard case .unregistered = answer else { throw Self.refusal(answer) }
    }

    /// Tells the gateway every app on the device, and waits for it to take note: the tokens of an app
    /// no longer on it answer `410 Unregistered` from then on. Called when an app is removed; each link
    /// sends the same report first, unanswered by anyone, as it comes up.
    package func reportApps() async throws {
        let apps = try await engine.apps().map(\.bundleIdentifier)
        let answer = try await ask { .apps(requestID: $0, bundleIdentifiers: apps) }
        guard case .appsNoted = answer else { throw Self.refusal(answer) }
    }

    /// Subscribes the app to a broadcast channel of its own at the gateway (or, with `subscribe`
    /// false, ends the subscription): what is sent to the channel reaches the app from then on.
    package func setSubscribed(_ subscribe: Bool, _ bundleIdentifier: String, environment: APNs.Environment, channelID: String) async throws {
        let answer = try await ask {
            .subscribe(requestID: $0, bundleIdentifier: bundleIdentifier, environment: environment, channelID: channelID, subscribe: subscribe)
        }
        guard case .subscription = answer else { throw Self.refusal(answer) }
    }

    private static func refusal(_ answer: DeviceLink.GatewayMessage) -> DaemonError {
        if case .error(_, let code, let message) = answer {
            // What does not exist is the request's mistake, not the gateway's.
            return DaemonError(code == "notFound" ? .invalidRequest : .gatewayUnavailable, "The gateway refused: \(message) (\(code)).")
        }
        return DaemonError(.gatewayUnavailable, "The gateway answered something else.")
    }

    /// Sends a request over the link and waits (10 s at most) for its answer.
    private func ask(_ message: (String) -> DeviceLink.DeviceMessage) async throws -> DeviceLink.GatewayMessage {
        let requestID = UUID().uuidString
        let request = message(requestID)
        return try await withThrowingTaskGroup(of: DeviceLink.GatewayMessage.self) { group in
            group.addTask {
                // A request asked by a task that is cancelled (a link's own task, as the link ends)
                // stops waiting at once: its group could not end otherwise.
                try await withTaskCancellationHandler {
                    try await withCheckedThrowingContinuation { continuation in
                        let socket = self.state.withLock { state -> ClientWebSocket? in
                            guard let socket = state.socket, !Task.isCancelled else { return nil }
                            state.waiting[requestID] = continuation
                            return socket
                        }
                        guard let socket else {
                            return continuation.resume(throwing: Task.isCancelled
                                ? CancellationError() : DaemonError(.gatewayUnavailable, "This device is not linked to a push gateway now."))
                        }
                        Self.send(request, on: socket)
                    }
                } onCancel: {
                    self.state.withLock { $0.waiting.removeValue(forKey: requestID) }?.resume(throwing: CancellationError())
                }
            }
            group.addTask {
                try await Task.sleep(for: .seconds(10))
                throw DaemonError(.gatewayUnavailable, "The push gateway did not answer in time.")
            }
            defer { group.cancelAll() }
            guard let answer = try await group.next() else { throw CancellationError() }
            // The waiting continuation, if the timeout won, is failed when the link ends; forget it now.
            self.state.withLock { state in
                if let stale = state.waiting.removeValue(forKey: requestID) {
                    stale.resume(throwing: DaemonError(.gatewayUnavailable, "The push gateway did not answer in time."))
                }
            }
            return answer
        }
    }

    /// Runs one link to `address` until it ends; returns the code of the gateway's close frame, if it sent one.
    ///
    /// The link's messages are read on its connection's event loop (``ClientWebSocket``): a push goes from
    /// there to the pushes gathered for the engine, and the deliverer hands them over in batches (all
    /// that arrived while the engine took the previous batch); they are acknowledged once on the disk
    /// (paced: ``AcknowledgementPacer``), by the acknowledger, beside the deliverer: the engine's commit
    /// of a push does not wait for the disk (``DaemonEngine/takePushes(_:)``), and the sync that makes
    /// it durable keeps neither the app's question nor the next pushes waiting.
    private func connectOnce(to address: String) async throws -> WebSocketErrorCode? {
        var tls = TLSConfiguration.makeClientConfiguration()
        // The gateway closes a link without waiting for TLS's close_notify once the WebSocket's close
        // handshake is over, so the default 5 s would be spent waiting.
        tls.shutdownTimeout = .seconds(1)
        if let pem = configuration.trustedAuthorityPEM {
            let authorities = try NIOSSLCertificate.fromPEMBytes(Array(pem.utf8))
            if configuration.trustsSystemRoots {
                tls.additionalTrustRoots = [.certificates(authorities)]
            } else {
                tls.trustRoots = .certificates(authorities)
            }
        }
        let url = address.hasSuffix(DeviceLink.path) ? address : address + DeviceLink.path
        let arrived = ArrivedPushes()
        let (reported, confirmReported) = AsyncStream.makeStream(of: Int64.self, bufferingPolicy: .bufferingNewest(1))
        // Acknowledgements are cumulative: one waiting for the disk while others are decided stands
        // for them all, the last.
        let (decided, decide) = AsyncStream.makeStream(of: Int64.self, bufferingPolicy: .bufferingNewest(1))
        let pacer = AcknowledgementPacer(interval: Self.acknowledgementInterval) { through in decide.yield(through) }
        // The apps on the device go first on every link, before any request can: the gateway handles
        // a link's messages in order, so a token issued on this link is never ended by this report.
        // (A list that cannot be read now is not sent: an empty one would end every token.)
        let apps = try? await engine.apps().map(\.bundleIdentifier)
        let socket = try await Self.connect(to: url, credential: configuration.credential, tls: tls, at: configuration.connectAddress) { text in
            self.received(text, arrived: arrived, pacer: pacer, confirmReported: confirmReported, address: address)
        }
        if let apps { Self.send(.apps(requestID: UUID().uuidString, bundleIdentifiers: apps), on: socket) }
        // Requests can be sent on the link before its first message (the welcome) is handled.
        state.withLock { $0.socket = socket }
        socket.start()
        defer {
            pacer.close()
            decide.finish()
            linkEnded()
        }
        // A graceful shutdown closes the link with its close handshake; the tasks end with it.
        return try await withGracefulShutdownHandler {
            try await withThrowingTaskGroup(of: LinkTask.self) { group in
                group.addTask {
                    let closeCode = await socket.waitUntilEnded()
                    arrived.finish()
                    confirmReported.finish()
                    return .connectionEnded(closeCode: closeCode)
                }
                group.addTask {
                    for await _ in arrived.arrivals {
                        let batch = arrived.takeAll()
                        guard !batch.isEmpty else { continue }
                        do {
                            try await self.engine.takePushes(batch)
                        } catch {
                            // What was taken before the failure is acknowledged first, so that the
                            // gateway counts the failure against the push it came from.
                            try await self.engine.waitForTheDisk()
                            Self.send(.ack(through: await self.engine.linkSequence), on: socket)
                            throw error
                        }
                        pacer.taken(through: await self.engine.linkSequence, count: batch.count)
                    }
                    return .ended
                }
                group.addTask {
                    for await through in decided {
                        // Decided after the pushes it covers were written: a sync begun now covers them.
                        try await self.engine.waitForTheDisk()
                        Self.send(.ack(through: through), on: socket)
                        self.acknowledgementsContinuation.yield(through)
                    }
                    return .ended
                }
                group.addTask {
                    try await self.sendDeliveryReports(on: socket, reported: reported)
                    return .ended
                }
                // The link ends when its connection does; a task that fails closes the connection (the
                // next link resumes where this one stopped).
                do {
                    while let finished = try await group.next() {
                        if case .connectionEnded(let closeCode) = finished {
                            group.cancelAll()
                            return closeCode
                        }
                    }
                } catch {
                    // The gateway counts a push the link failed with, and names the failure in its delivery log.
                    socket.close(code: .unexpectedServerError, reason: "\((error as? DaemonError)?.message ?? "\(error)")")
                    throw error
                }
                return nil
            }
        } onGracefulShutdown: {
            socket.close(code: .normalClosure)
        }
    }

    /// Connects to `address` (`wss://host:port/path` or `ws://…`), asking for the link with
    /// `Authorization: Bearer <credential>`; its messages go to `receive` on the connection's event
    /// loop from ``ClientWebSocket/start()`` on. The device pings the gateway every 20 s and closes a
    /// link it has heard nothing from for 60 s (`Docs/device-link.md`).
    ///
    /// - Throws: `gatewayUnavailable` when the gateway cannot be reached or refuses the link.
    static func connect(
        to address: String, credential: String, tls: TLSConfiguration, at connectAddress: String? = nil,
        keepAlive: ClientWebSocket.KeepAlive = ClientWebSocket.KeepAlive(),
        openingTimeout: TimeAmount = .seconds(10), receive: @escaping @Sendable (ByteBuffer) -> Void
    ) async throws(DaemonError) -> ClientWebSocket {
        guard let url = URL(string: address), let scheme = url.scheme?.lowercased(), scheme == "wss" || scheme == "ws",
              let host = url.host, !host.isEmpty else {
            throw DaemonError(.invalidRequest, "\(address) is not a device-link address (wss://host:port).")
        }
        let target = (url.path.isEmpty ? "/" : url.path) + (url.query.map { "?" + $0 } ?? "")
        var configuration = ClientWebSocket.Configuration(
            path: target, headers: [(name: "Authorization", value: "Bearer \(credential)")], maximumMessageSize: DeviceLink.maximumMessageSize,
            keepAlive: keepAlive, openingTimeout: openingTimeout
        )
        if connectAddress != nil { configuration.serverName = host }
        do {
            return try await ClientWebSocket.connect(
                to: .tcp(host: connectAddress ?? host, port: url.port ?? (scheme == "wss" ? 443 : 80), tls: scheme == "wss" ? tls : nil),
                configuration: configuration, receive: receive
            )
        } catch where error.code == .refused {
            throw DaemonError(.gatewayUnavailable, "The gateway at \(address) refused the link: check the device's credential.")
        } catch {
            throw DaemonError(.gatewayUnavailable, "The gateway at \(address) could not be reached (\(error)).")
        }
    }

    /// What ended of a link's tasks.
    private enum LinkTask {
        case connectionEnded(closeCode: WebSocketErrorCode?)
        case ended
    }

    /// Handles one message of the gateway, on the link's event loop.
    private func received(_ text: ByteBuffer, arrived: ArrivedPushes, pacer: AcknowledgementPacer,
                          confirmReported: AsyncStream<Int64>.Continuation, address: String) {
        // A push, the message of every push, has a decoder of its own; every other message, `JSONDecoder`.
        guard let message = try? text.withUnsafeReadableBytes({ try NotificationJSONReader.linkPush(from: $0) }).map(DeviceLink.GatewayMessage.push)
            ?? JSONLimits.decode(DeviceLink.GatewayMessage.self, from: text.readableBytesView)
        else { return }
        switch message {
        case .welcome(let deviceID, let window):
            state.withLock { $0.isWelcomed = true }
            pacer.setWindow(window)
            logger.info("linked to the push gateway", metadata: ["gateway": .string(address), "device": .string(deviceID)])
            linkedContinuation.yield()
        case .push(let push):
            arrived.append(push)
        case .registered(let requestID, _, _, _), .unregistered(let requestID, _), .subscription(let requestID, _, _), .appsNoted(let requestID):
            answer(requestID, message)
        case .error(let requestID, _, _):
            if let requestID { answer(requestID, message) }
        case .reported(let through):
            confirmReported.yield(through)
        }
    }

    /// Writes a message on a link.
    private static func send(_ message: DeviceLink.DeviceMessage, on socket: ClientWebSocket) {
        guard let data = try? StreamingJSONEncoder().encode(message) else { return }
        socket.send(String(decoding: data, as: UTF8.self))
    }

    /// Sends the delivery-log reports the engine saved, oldest first, one message at a time: each is
    /// forgotten once the gateway confirms it, and the rest are sent again on the next link.
    ///
    /// After a quiet spell the first report goes at once; while reports keep coming, a message goes
    /// at most every ``reportInterval``, with everything saved meanwhile (a full one is followed at
    /// once). Each message costs a read and a write here and a write at the gateway: under a steady
    /// stream of pushes, one per push would be most of what the two stores write.
    private func sendDeliveryReports(on socket: ClientWebSocket, reported: AsyncStream<Int64>) async throws {
        var confirmations = reported.makeAsyncIterator()
        var written = engine.deliveryReportsWritten().makeAsyncIterator()
        var lastSent: ContinuousClock.Instant?
        while !Task.isCancelled {
            if let lastSent, case let wait = lastSent + Self.reportInterval - .now, wait > .zero {
                try await Task.sleep(for: wait)
            }
            guard var (through, reports) = try await engine.unsentDeliveryReports(limit: Self.reportsPerMessage) else {
                // Nothing to send: wait until a step saves some.
                guard await written.next() != nil else { return }
                continue
            }
            // Within the link's largest message (a report's detail may be long): fewer at a time.
            var message = try StreamingJSONEncoder().encodeBytes(DeviceLink.DeviceMessage.report(through: through, reports: reports))
            while message.count > DeviceLink.maximumMessageSize, reports.count > 1,
                  let fewer = try await engine.unsentDeliveryReports(limit: reports.count / 2) {
                (through, reports) = fewer
                message = try StreamingJSONEncoder().encodeBytes(DeviceLink.DeviceMessage.report(through: through, reports: reports))
            }
            // A full message leaves more behind: the next follows at once.
            lastSent = reports.count < Self.reportsPerMessage ? .now : nil
            // What the reports say is on the disk before the gateway hears of it (a push's step does
            // not wait for it: ``DaemonEngine/takePushes(_:)``).
            try await engine.waitForTheDisk()
            socket.send(message)
            while true {
                guard let confirmed = await confirmations.next() else { return }
                if confirmed >= through { break }
            }
            try await engine.forgetDeliveryReports(through: through)
            reportsConfirmedContinuation.yield(through)
        }
    }

    /// The least time between two acknowledgements while pushes keep coming (unless half the window
    /// waits for one). Each costs the gateway a write and the handling of a message.
    static let acknowledgementInterval: Duration = .milliseconds(10)

    /// Reports sent in one message.
    static let reportsPerMessage = 200
    /// The least time between two messages of reports: the gateway's delivery log trails the device
    /// by at most this much while pushes keep coming.
    static let reportInterval: Duration = .milliseconds(100)

    private func answer(_ requestID: String, _ message: DeviceLink.GatewayMessage) {
        state.withLock { $0.waiting.removeValue(forKey: requestID) }?.resume(returning: message)
    }

    /// The link is down: requests waiting for it fail.
    private func linkEnded() {
        let waiting = state.withLock { state in
            state.socket = nil
            state.isWelcomed = false
            defer { state.waiting.removeAll() }
            return Array(state.waiting.values)
        }
        for continuation in waiting { continuation.resume(throwing: DaemonError(.gatewayUnavailable, "The link to the push gateway closed.")) }
    }
}

/// The pushes a link has received and not yet handed to the engine: the link's event loop appends,
/// the deliverer takes everything gathered so far as one batch. At most the gateway's window is ever here.
private final class ArrivedPushes: Sendable {
    private let pending = Mutex<[DeviceLink.Push]>([])
    private let (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))

    func append(_ push: DeviceLink.Push) {
        pending.withLock { $0.append(push) }
        wake.yield()
    }

    func finish() { wake.finish() }

    /// Wakes the deliverer after appends (one wake may stand for several), until the link ends.
    var arrivals: AsyncStream<Void> { wakes }

    /// Everything gathered since the last call, in order.
    func takeAll() -> [DeviceLink.Push] {
        pending.withLock { pending in
            defer { pending.removeAll(keepingCapacity: true) }
            return pending
        }
    }
}

/// When a link acknowledges the pushes the engine took: at once after a quiet spell; while pushes
/// keep coming, at most once an `interval` (each acknowledgement covering every push taken
/// meanwhile), or at once when half the gateway's window waits for one, so the window never holds
/// the link back. What it decides is sent once on the disk (see `DeviceLinkClient`).
final class AcknowledgementPacer: Sendable {
    private struct State {
        var taken: Int64 = 0
        var acknowledged: Int64 = 0
        /// Pushes taken since the last acknowledgement.
        var waiting = 0
        var urgentAt = 32
        var lastSent: ContinuousClock.Instant?
        var isScheduled = false
        var isClosed = false
    }

    private let state = Mutex(State())
    private let interval: Duration
    /// Sends an acknowledgement; called with the pacer's lock held, so that they go in order.
    private let send: @Sendable (Int64) -> Void

    init(interval: Duration, send: @escaping @Sendable (Int64) -> Void) {
        self.interval = interval
        self.send = send
    }

    /// The gateway's window, from its welcome.
    func setWindow(_ window: Int) {
        state.withLock { $0.urgentAt = max(1, window / 2) }
    }

    /// The engine took the pushes up to `through`, `count` more of them.
    func taken(through: Int64, count: Int) {
        let wait = state.withLock { state -> Duration? in
            state.taken = max(state.taken, through)
            state.waiting += count
            guard !state.isClosed, state.taken > state.acknowledged else { return nil }
            if let last = state.lastSent, state.waiting < state.urgentAt, case let wait = last + interval - .now, wait > .zero {
                guard !state.isScheduled else { return nil }
                state.isScheduled = true
                return wait
            }
            acknowledge(&state)
            return nil
        }
        guard let wait else { return }
        Task {
            try? await Task.sleep(for: wait)
            self.state.withLock { state in
                state.isScheduled = false
                guard !state.isClosed, state.taken > state.acknowledged else { return }
                self.acknowledge(&state)
            }
        }
    }

    /// The link ended: nothing more is sent.
    func close() {
        state.withLock { $0.isClosed = true }
    }

    private func acknowledge(_ state: inout State) {
        state.acknowledged = state.taken
        state.waiting = 0
        state.lastSent = .now
        send(state.taken)
    }
}
