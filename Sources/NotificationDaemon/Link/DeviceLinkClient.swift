import Foundation
import HTTPTypes
import HummingbirdWSClient
package import Logging
import NIOCore
import NIOSSL
import NIOWebSocket
package import NotificationCore
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
        var outbox: AsyncStream<DeviceLink.DeviceMessage>.Continuation?
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
                let closed = try await connectOnce(to: url)
                if closed?.closeCode == .unknown(4001) {
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
                try await withCheckedThrowingContinuation { continuation in
                    let outbox = self.state.withLock { state -> AsyncStream<DeviceLink.DeviceMessage>.Continuation? in
                        guard let outbox = state.outbox else { return nil }
                        state.waiting[requestID] = continuation
                        return outbox
                    }
                    guard let outbox else {
                        return continuation.resume(throwing: DaemonError(.gatewayUnavailable, "This device is not linked to a push gateway now."))
                    }
                    outbox.yield(request)
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

    private func connectOnce(to address: String) async throws -> WebSocketCloseFrame? {
        var client = WebSocketClientConfiguration()
        client.additionalHeaders[.authorization] = "Bearer \(configuration.credential)"
        client.autoPing = .enabled(timePeriod: .seconds(20))
        var tls = TLSConfiguration.makeClientConfiguration()
        // By the time TLS shuts down, the WebSocket's close handshake is over; the gateway's server
        // closes without waiting for TLS's close_notify, so the default 5 s would be spent waiting.
        tls.shutdownTimeout = .seconds(1)
        if let pem = configuration.trustedAuthorityPEM {
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(pem.utf8)))
        }
        let url = address.hasSuffix(DeviceLink.path) ? address : address + DeviceLink.path
        return try await WebSocketClient.connect(url: url, configuration: client, tlsConfiguration: tls, logger: logger) { inbound, outbound, _ in
            try await self.serve(inbound: inbound, outbound: outbound, address: address)
        }
    }

    /// Runs one link: the one writer sends what the outbox holds; the reader answers requests and
    /// gathers pushes, which the deliverer hands to the engine in batches (all that arrived while the
    /// engine took the previous batch); they are acknowledged once on the disk (paced:
    /// ``AcknowledgementPacer``), by the acknowledger, beside the deliverer: the engine's commit of
    /// a push does not wait for the disk (``DaemonEngine/takePushes(_:)``), and the sync that makes
    /// it durable keeps neither the app's question nor the next pushes waiting.
    private func serve(inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, address: String) async throws {
        let (outbox, post) = AsyncStream.makeStream(of: DeviceLink.DeviceMessage.self)
        state.withLock { $0.outbox = post }
        defer { linkEnded() }
        let remaining = UncheckedInbound(iterator: inbound.messages(maxSize: 1 << 16).makeAsyncIterator())
        let arrived = ArrivedPushes()
        let (reported, confirmReported) = AsyncStream.makeStream(of: Int64.self, bufferingPolicy: .bufferingNewest(1))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                let encoder = StreamingJSONEncoder()
                for await message in outbox {
                    try await outbound.write(.text(String(decoding: try encoder.encode(message), as: UTF8.self)))
                }
            }
            // Acknowledgements are cumulative: one waiting for the disk while others are decided
            // stands for them all, the last.
            let (decided, decide) = AsyncStream.makeStream(of: Int64.self, bufferingPolicy: .bufferingNewest(1))
            let pacer = AcknowledgementPacer(interval: Self.acknowledgementInterval) { through in decide.yield(through) }
            defer {
                pacer.close()
                decide.finish()
            }
            group.addTask {
                for await _ in arrived.arrivals {
                    let batch = arrived.takeAll()
                    guard !batch.isEmpty else { continue }
                    try await self.engine.takePushes(batch)
                    pacer.taken(through: await self.engine.linkSequence, count: batch.count)
                }
            }
            group.addTask {
                for await through in decided {
                    // Decided after the pushes it covers were written: a sync begun now covers them.
                    try await self.engine.waitForTheDisk()
                    post.yield(.ack(through: through))
                    self.acknowledgementsContinuation.yield(through)
                }
            }
            group.addTask {
                try await self.sendDeliveryReports(post: post, reported: reported)
            }
            group.addTask {
                var iterator = remaining.iterator
                let decoder = JSONDecoder()
                defer { arrived.finish() }
                while let frame = try await iterator.next() {
                    guard case .text(let text) = frame else { continue }
                    // A push, the message of every push, is read straight from its bytes when it can be.
                    guard let message = NotificationJSONReader.linkPush(from: text.utf8).map(DeviceLink.GatewayMessage.push)
                        ?? (try? decoder.decode(DeviceLink.GatewayMessage.self, from: Data(text.utf8)))
                    else { continue }
                    switch message {
                    case .welcome(let deviceID, let window):
                        self.state.withLock { $0.isWelcomed = true }
                        pacer.setWindow(window)
                        self.logger.info("linked to the push gateway", metadata: ["gateway": .string(address), "device": .string(deviceID)])
                        self.linkedContinuation.yield()
                    case .push(let push):
                        arrived.append(push)
                    case .registered(let requestID, _, _, _), .unregistered(let requestID, _), .subscription(let requestID, _, _):
                        self.answer(requestID, message)
                    case .error(let requestID, _, _):
                        if let requestID { self.answer(requestID, message) }
                    case .reported(let through):
                        confirmReported.yield(through)
                    }
                }
                confirmReported.finish()
                post.finish()
            }
            try await group.next()
            group.cancelAll()
        }
    }

    /// Sends the delivery-log reports the engine saved, oldest first, one message at a time: each is
    /// forgotten once the gateway confirms it, and the rest are sent again on the next link.
    ///
    /// After a quiet spell the first report goes at once; while reports keep coming, a message goes
    /// at most every ``reportInterval``, with everything saved meanwhile (a full one is followed at
    /// once). Each message costs a read and a write here and a write at the gateway: under a steady
    /// stream of pushes, one per push would be most of what the two stores write.
    private func sendDeliveryReports(post: AsyncStream<DeviceLink.DeviceMessage>.Continuation, reported: AsyncStream<Int64>) async throws {
        var confirmations = reported.makeAsyncIterator()
        var written = engine.deliveryReportsWritten().makeAsyncIterator()
        var lastSent: ContinuousClock.Instant?
        while !Task.isCancelled {
            if let lastSent, case let wait = lastSent + Self.reportInterval - .now, wait > .zero {
                try await Task.sleep(for: wait)
            }
            guard let (through, reports) = try await engine.unsentDeliveryReports(limit: Self.reportsPerMessage) else {
                // Nothing to send: wait until a step saves some.
                guard await written.next() != nil else { return }
                continue
            }
            // A full message leaves more behind: the next follows at once.
            lastSent = reports.count < Self.reportsPerMessage ? .now : nil
            // What the reports say is on the disk before the gateway hears of it (a push's step does
            // not wait for it: ``DaemonEngine/takePushes(_:)``).
            try await engine.waitForTheDisk()
            post.yield(.report(through: through, reports: reports))
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
            state.outbox?.finish()
            state.outbox = nil
            state.isWelcomed = false
            defer { state.waiting.removeAll() }
            return Array(state.waiting.values)
        }
        for continuation in waiting { continuation.resume(throwing: DaemonError(.gatewayUnavailable, "The link to the push gateway closed.")) }
    }
}

/// Carries a link's inbound messages into the task that reads them.
private struct UncheckedInbound: @unchecked Sendable {
    // Sendable: the iterator is handed over once, to the one task that reads it from then on.
    var iterator: WebSocketInboundMessageStream.AsyncIterator
}

/// The pushes a link has received and not yet handed to the engine: the reader appends, the
/// deliverer takes everything gathered so far as one batch. At most the gateway's window is ever here.
private final class ArrivedPushes: Sendable {
    private let pending = Mutex<[DeviceLink.Push]>([])
    private let (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))

    func append(_ push: DeviceLink.Push) {
        pending.withLock { $0.append(push) }
        wake.yield()
    }

    func finish() { wake.finish() }

    /// Wakes the deliverer after appends (one wake may stand for several), until the reader finishes.
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
