import CoreMetrics
import Crypto
package import Foundation
import NIOCore
package import Logging
import NIOWebSocket
package import NotificationCore
import Synchronization

/// The devices linked to the gateway right now, and the work of each link (`Docs/device-link.md`):
/// the pushes stored for the device, in order, at most a window of them unacknowledged; then each
/// new one as it is stored; acknowledgements; apps' registrations.
///
/// A link does its work in short tasks started when there is some (a push stored, a message from the
/// device), owned by the core's ``OwnedTasks``, and holds none while idle (``DeviceLinkServer``).
package final class DeviceLinks: Sendable {
    private let links = Mutex<[String: LinkSession]>([:])
    private let store: any GatewayStore
    private let acknowledgements: AcknowledgementWriter
    private let core: GatewayCore
    /// Where a link's work runs: the core's tasks (``OwnedTasks``).
    private var tasks: OwnedTasks { core.tasks }
    /// Pushes a device may hold unacknowledged.
    package let window: Int
    /// The links a push may be the oldest one not taken on, ended by the device's error or without a
    /// close, before it is dropped (``GatewayStore/noteNotTaken(deviceID:sequence:reason:limit:at:)``).
    package let triesPerPush: Int
    private let metrics: GatewayMetrics
    private let logger: Logger
    private let clock: @Sendable () -> Date
    /// Whether the core's pushes may reach a link without being read back from the store: only when
    /// no other node stores pushes in it (another node's may take sequences in between).
    private let handsOverStoredPushes: Bool
    private let handedOver = Atomic<Int>(0)

    package init(store: any GatewayStore, core: GatewayCore, window: Int = 64, triesPerPush: Int = 10, metrics: GatewayMetrics = GatewayMetrics(),
                 logger: Logger, clock: @escaping @Sendable () -> Date = { Date() }) {
        self.store = store
        self.triesPerPush = triesPerPush
        handsOverStoredPushes = !store.isSharedByNodes
        acknowledgements = AcknowledgementWriter(store: store, tasks: core.tasks, logger: logger)
        self.core = core
        self.window = window
        self.metrics = metrics
        self.logger = logger
        self.clock = clock
    }

    /// The pushes sent to links as the core stored them, without a read of the store.
    package var pushesHandedOver: Int { handedOver.load(ordering: .relaxed) }

    /// Sets the gauges of the links: how many, and how many pushes they have in flight.
    package func sampleMetrics() {
        let sessions = links.withLock { Array($0.values) }
        metrics.deviceLinks.record(sessions.count)
        metrics.inFlight.record(sessions.reduce(0) { $0 + $1.withState { $0.unacknowledged.count } })
    }

    /// The close code a replaced link gets: the device does not reconnect.
    package static let replacedCloseCode: UInt16 = 4001
    /// Messages of a device that may wait to be handled; a device that sends more is cut off.
    static let inboxLimit = 256
    /// Delivery reports recorded from one message; the rest of a longer one are ignored.
    static let reportsPerMessage = 500

    /// Tells the links of these pushes' devices, just stored by the core in one batch, that more is
    /// stored for them. A link that has sent everything stored for its device before them is handed
    /// them as they are (``handOver(_:to:)``) instead of reading them back from the store.
    package func stored(_ pushes: [QueuedPush]) {
        // Only the devices linked to this node have a link to tell: looked up together, and the
        // batch's other pushes (a device away) cost nothing more here.
        let sessions = links.withLock { links in
            var sessions: [String: LinkSession] = [:]
            for push in pushes { if let session = links[push.deviceID] { sessions[push.deviceID] = session } }
            return sessions
        }
        guard !sessions.isEmpty else { return }
        var byDevice: [String: [QueuedPush]] = [:]
        for push in pushes where sessions[push.deviceID] != nil { byDevice[push.deviceID, default: []].append(push) }
        // A broadcast being stored may have taken sequences before these: its devices read it first.
        let handsOver = handsOverStoredPushes && !core.isStoringBroadcasts
        for (device, pushes) in byDevice {
            guard let session = sessions[device] else { continue }
            let held = pushes.contains(where: \.held)
            if handsOver, !held, handOver(pushes, to: session) { continue }
            wake(session, held: held)
        }
    }

    /// Tells every link of this node that more may be stored for it, held pushes included.
    package func wakeAll() {
        wake(links.withLock { links in Dictionary(uniqueKeysWithValues: links.keys.map { ($0, true) }) })
    }

    /// Tells the links of these devices, those linked to this node, that more is stored for them
    /// (`true`: some of it held while the device was not linked).
    package func wake(_ devices: [String: Bool]) {
        let woken = links.withLock { links in devices.compactMap { device, held in links[device].map { ($0, held) } } }
        for (session, held) in woken { wake(session, held: held) }
    }

    private func wake(_ session: LinkSession, held: Bool) {
        session.withState { $0.wake(held: held) }
        pump(session)
    }

    /// Checks a device's credential, `<device id>.<secret>`; returns the device's identifier.
    package func authenticate(_ credential: String) async -> String? {
        guard let deviceID = Self.deviceID(in: credential) else { return nil }
        let secret = credential.drop { $0 != "." }.dropFirst()
        guard !secret.isEmpty, let stored = try? await store.deviceSecretHash(deviceID) else { return nil }
        return Self.hash(secret) == stored ? deviceID : nil
    }

    /// The device a credential, `<device id>.<secret>`, names (not checked).
    static func deviceID(in credential: String) -> String? {
        guard let dot = credential.firstIndex(of: "."), dot > credential.startIndex else { return nil }
        return String(credential[..<dot])
    }

    /// The hash the store keeps of a device's secret.
    package static func hash(_ secret: some StringProtocol) -> String {
        hexadecimal(SHA256.hash(data: Data(secret.utf8)))
    }

    /// Enrolls a new device in `store` and returns its credential, `<device id>.<secret>`: a random
    /// identifier (after `prefix`) and a 32-byte secret, of which the store keeps only the hash.
    package static func enroll(in store: any GatewayStore, prefix: String = "", at date: Date) async throws(GatewayError) -> String {
        let deviceID = prefix + randomHex(bytes: prefix.isEmpty ? 8 : 4)
        let secret = randomHex(bytes: 32)
        try await store.addDevice(deviceID, secretHash: hash(secret), at: date)
        return "\(deviceID).\(secret)"
    }

    /// Takes a device's new link: it replaces the device's previous one, is welcomed, and is sent
    /// what is stored for the device.
    package func attach(_ session: LinkSession) {
        let previous = links.withLock { links in
            defer { links[session.deviceID] = session }
            return links[session.deviceID]
        }
        if let previous {
            previous.close(code: .unknown(Self.replacedCloseCode), reason: "replaced")
        }
        core.setConnected(session.deviceID, true)
        logger.info("device linked", metadata: ["device": .string(session.deviceID)])
        session.send([.welcome(deviceID: session.deviceID, window: window)])
        pump(session)
    }

    /// Closes this node's links of devices that linked to another node since: replaced, as by a
    /// second link to this one.
    package func replacedElsewhere(_ devices: [String]) {
        let replaced = links.withLock { links in devices.compactMap { links[$0] } }
        for session in replaced {
            logger.info("device linked to another node; closing its link here", metadata: ["device": .string(session.deviceID)])
            session.close(code: .unknown(Self.replacedCloseCode), reason: "replaced")
        }
    }

    /// Forgets a link that closed.
    package func detach(_ session: LinkSession) {
        let isLast = links.withLock { links in
            guard links[session.deviceID] === session else { return false }
            links[session.deviceID] = nil
            return true
        }
        let (unacknowledged, notTaken) = session.withState { $0.close() }
        if isLast { core.setConnected(session.deviceID, false) }
        // Sent and never acknowledged on this link: the log still shows it was sent.
        if !unacknowledged.isEmpty || notTaken != nil {
            tasks.start { [store, logger, clock, triesPerPush, metrics] in
                do {
                    if !unacknowledged.isEmpty { try await store.recordStages(unacknowledged.sorted { $0.at < $1.at }) }
                    if let (sequence, reason) = notTaken,
                       try await store.noteNotTaken(deviceID: session.deviceID, sequence: sequence, reason: reason, limit: triesPerPush, at: clock()) {
                        logger.notice("dropped a push its device did not take in \(triesPerPush) tries", metadata: [
                            "device": .string(session.deviceID), "sequence": .stringConvertible(sequence), "reason": .string(reason),
                        ])
                        metrics.droppedNotTaken.increment()
                    }
                } catch {
                    logger.error("could not record pushes sent on a closed link", metadata: ["error": .string("\(error)")])
                }
            }
        }
        logger.info("device unlinked", metadata: ["device": .string(session.deviceID)])
    }

    /// Handles a device's message after those before it; cuts off a device with too many waiting.
    package func received(_ message: DeviceLink.DeviceMessage, on session: LinkSession) {
        let receipt = session.withState { $0.receive(message, inboxLimit: Self.inboxLimit) }
        switch receipt {
        case .queued:
            return
        case .overflows:
            logger.notice("closed a device link that sent faster than it was answered", metadata: ["device": .string(session.deviceID)])
            session.close(code: .policyViolation, reason: "too many messages")
        case .startsHandling:
            tasks.start {
                while let next = session.withState({ $0.nextMessage() }) {
                    await self.handle(next, session: session)
                }
            }
        }
    }

    /// Closes every link, as the gateway stops.
    func closeAll(code: WebSocketErrorCode, reason: String) {
        for session in links.withLock({ Array($0.values) }) { session.close(code: code, reason: reason) }
    }

    func ignoredMalformedMessage(on session: LinkSession) {
        logger.notice("ignored a malformed message on a device link", metadata: ["device": .string(session.deviceID)])
    }

    /// Sends what is stored for the link's device, within the window; one send at a time per link,
    /// and once more if something changed meanwhile.
    private func pump(_ session: LinkSession) {
        guard session.withState({ $0.startTurn() }) else { return }
        tasks.start { await self.keepPumping(session) }
    }

    private func keepPumping(_ session: LinkSession) async {
        repeat {
            await sendWithinWindow(session)
        } while pumpsAgain(session)
    }

    /// Ends a turn of sending, unless something changed during it: then the link reads the store again.
    private func pumpsAgain(_ session: LinkSession) -> Bool {
        session.withState { $0.endTurn() }
    }

    /// Sends pushes the core has just stored for the link's device, as a read of the store would
    /// find them (in their order, unexpired), when the link had sent everything stored before them,
    /// is not reading now, and has room for them in its window. Otherwise sends nothing and returns
    /// false: the link then reads them.
    ///
    /// Safe because, with one node, pushes reach the store by the core's batches (told here in the
    /// order they were written), by broadcasts (none being stored, see ``stored(_:)``), and by the
    /// link's own promotions of held pushes (done while it reads): a link caught up after a read has
    /// missed nothing stored before these.
    private func handOver(_ pushes: [QueuedPush], to session: LinkSession) -> Bool {
        guard let first = pushes.first, let last = pushes.last else { return true }
        let now = clock()
        let unexpired = pushes.filter { $0.expiresAt > now }
        guard session.withState({ $0.handOver(first: first.sequence, last: last.sequence, count: unexpired.count, window: window) }) else {
            return false
        }
        send(unexpired, on: session)
        handedOver.add(unexpired.count, ordering: .relaxed)
        if pumpsAgain(session) { tasks.start { await self.keepPumping(session) } }
        return true
    }

    /// Sends the device's pushes in their order, within the window. Once those run out, the pushes
    /// held while the device was not linked get their places, highest priority first, and follow.
    private func sendWithinWindow(_ session: LinkSession) async {
        let deviceID = session.deviceID
        while let (after, room) = session.withState({ $0.nextRead(window: window) }) {
            let pushes: [QueuedPush]
            do {
                pushes = try await store.pushes(for: deviceID, after: after, now: clock(), limit: room)
                if pushes.isEmpty {
                    guard session.withState({ $0.foundNothingStored() }) else { return }
                    let promoted = try await store.promoteHeld(deviceID: deviceID, now: clock(), limit: room)
                    guard session.withState({ $0.promoted(promoted, of: room) }) else { return }
                    continue
                }
            } catch {
                logger.error("could not read a device's pushes", metadata: ["device": .string(deviceID), "error": .string("\(error)")])
                // Looked for again at the next wake.
                session.withState { $0.readFailed() }
                return
            }
            guard let last = pushes.last else { return }
            session.withState { $0.read(through: last.sequence) }
            send(pushes, on: session)
        }
    }

    /// Sends pushes on the link, noting them as unacknowledged (the caller has advanced the link's
    /// `sent` past them, and is the link's one sender now).
    private func send(_ pushes: [QueuedPush], on session: LinkSession) {
        guard !pushes.isEmpty else { return }
        let now = clock()
        session.withState { $0.sending(pushes, at: now) }
        metrics.sent.increment(by: pushes.count)
        session.send(pushes.map { push in
            .push(DeviceLink.Push(
                sequence: push.sequence, token: push.token, bundleIdentifier: push.bundleIdentifier,
                environment: push.environment, apnsID: push.apnsID, pushType: push.pushType,
                priority: push.priority, expiresAt: push.expiresAt.timeIntervalSince1970, collapseID: push.collapseID,
                payload: String(decoding: push.payload, as: UTF8.self), receivedAt: push.receivedAt.timeIntervalSince1970,
                uniqueID: push.uniqueID
            ))
        })
    }

    private func handle(_ message: DeviceLink.DeviceMessage, session: LinkSession) async {
        let deviceID = session.deviceID
        switch message {
        case .ack(let through):
            // Only what was sent on this link can be acknowledged.
            let acknowledged = session.withState { $0.acknowledge(through: through) }
            guard let (acknowledged, pushes) = acknowledged else { return }
            let now = clock()
            for push in pushes {
                metrics.delivery.recordNanoseconds(Int64(max(0, now.timeIntervalSince(push.receivedAt)) * 1_000_000_000))
            }
            // The window has room again now: what follows is read after the last sequence sent, so it
            // need not wait for the acknowledgement to be written. A link that has sent everything
            // stored has nothing to read.
            if !session.withState(\.isCaughtUp) { pump(session) }
            await acknowledgements.write(Acknowledgement(deviceID: deviceID, through: acknowledged, at: now,
                                                         sent: pushes.compactMap { push in push.uniqueID.map { ($0, push.sentAt) } }))
        case .register(let requestID, let bundleIdentifier, let environment):
            guard RequestRules.violation(inBundleIdentifier: bundleIdentifier) == nil else {
                session.send([.error(requestID: requestID, code: "invalidRequest", message: "\(bundleIdentifier) is not a bundle identifier.")])
                return
            }
            do {
                let registration = try await core.register(deviceID: deviceID, bundleIdentifier: bundleIdentifier, environment: environment, at: clock())
                session.send([.registered(requestID: requestID, token: registration.token, bundleIdentifier: bundleIdentifier, environment: environment)])
            } catch {
                session.send([.error(requestID: requestID, code: "internal", message: "The gateway could not register \(bundleIdentifier).")])
            }
        case .report(let through, let reports):
            do {
                try await store.recordDeviceReports(Array(reports.prefix(Self.reportsPerMessage)), from: deviceID, through: through)
                session.send([.reported(through: through)])
            } catch {
                logger.error("could not record a device's delivery reports", metadata: ["device": .string(deviceID), "error": .string("\(error)")])
            }
        case .subscribe(let requestID, let bundleIdentifier, let environment, let channelID, let subscribe):
            do {
                try await store.setSubscribed(subscribe, deviceID: deviceID, bundleIdentifier: bundleIdentifier, environment: environment,
                                              channelID: channelID, at: clock())
                session.send([.subscription(requestID: requestID, channelID: channelID, subscribed: subscribe)])
            } catch where error.code == .notFound {
                session.send([.error(requestID: requestID, code: "notFound", message: "\(bundleIdentifier) has no channel \(channelID) in \(environment.rawValue).")])
            } catch {
                session.send([.error(requestID: requestID, code: "internal", message: "The gateway could not change the subscription to \(channelID).")])
            }
        case .apps(let requestID, let bundleIdentifiers):
            do {
                try await core.keepApps(deviceID: deviceID, Set(bundleIdentifiers), at: clock())
                session.send([.appsNoted(requestID: requestID)])
            } catch {
                session.send([.error(requestID: requestID, code: "internal", message: "The gateway could not note the device's apps.")])
            }
        case .unregister(let requestID, let bundleIdentifier):
            do {
                try await core.unregister(deviceID: deviceID, bundleIdentifier: bundleIdentifier, at: clock())
                session.send([.unregistered(requestID: requestID, bundleIdentifier: bundleIdentifier)])
            } catch {
                session.send([.error(requestID: requestID, code: "internal", message: "The gateway could not unregister \(bundleIdentifier).")])
            }
        }
    }
}

/// Every link's acknowledgements, written together (group commit): while one batch is written, the
/// next gathers. After a broadcast, thousands of devices acknowledge at once; one transaction each
/// would hold every other write behind them.
final class AcknowledgementWriter: Sendable {
    private struct Pending {
        var acknowledgement: Acknowledgement
        var written: CheckedContinuation<Void, Never>
    }

    private let state = Mutex<(pending: [Pending], isWriting: Bool)>(([], false))
    private let store: any GatewayStore
    private let tasks: OwnedTasks
    private let logger: Logger

    init(store: any GatewayStore, tasks: OwnedTasks, logger: Logger) {
        self.store = store
        self.tasks = tasks
        self.logger = logger
    }

    /// Returns once the acknowledgement is written (or failed to be: it is logged, and the pushes
    /// are sent again on the device's next link, which it recognizes).
    func write(_ acknowledgement: Acknowledgement) async {
        await withCheckedContinuation { continuation in
            let starts = state.withLock { state -> Bool in
                state.pending.append(Pending(acknowledgement: acknowledgement, written: continuation))
                guard !state.isWriting else { return false }
                state.isWriting = true
                return true
            }
            if starts { tasks.start { await self.writeBatches() } }
        }
    }

    private func writeBatches() async {
        while true {
            let batch = state.withLock { state in
                defer { state.pending.removeAll(keepingCapacity: true) }
                if state.pending.isEmpty { state.isWriting = false }
                return state.pending
            }
            guard !batch.isEmpty else { return }
            do {
                try await store.acknowledge(batch.map(\.acknowledgement))
            } catch {
                logger.error("could not record acknowledgements", metadata: ["devices": .stringConvertible(batch.count), "error": .string("\(error)")])
            }
            for pending in batch { pending.written.resume() }
        }
    }
}
