import Crypto
package import Foundation
package import Logging
package import NotificationCore
import Synchronization

/// The gateway's core: it admits the pushes the provider API accepted (``PushAdmission``), makes
/// them durable before they are answered, and hands them to whatever delivers them to devices.
///
/// Concurrent pushes share one transaction (group commit): while one batch is written, the next
/// gathers; each provider request is answered when the batch holding its push is durable.
package final class GatewayCore: PushAcceptor, DeliveryLogReader {
    /// Pushes accepted and not yet written, in order, and beside each (same index) what its provider
    /// waits for. Apart, so that the pushes go to the store as they are, without a copy of each.
    private struct Batch {
        var pushes: [QueuedPush] = []
        var waiters: [Waiter] = []

        var isEmpty: Bool { pushes.isEmpty }

        mutating func append(_ push: QueuedPush, _ waiter: Waiter) {
            pushes.append(push)
            waiters.append(waiter)
        }

        /// Keeps the pushes (and their waiters) for which `keeps` is true, in order.
        mutating func keep(where keeps: (inout QueuedPush, Waiter) -> Bool) {
            var kept = 0
            for index in pushes.indices where keeps(&pushes[index], waiters[index]) {
                if kept != index {
                    pushes.swapAt(kept, index)
                    waiters.swapAt(kept, index)
                }
                kept += 1
            }
            pushes.removeSubrange(kept...)
            waiters.removeSubrange(kept...)
        }
    }

    private struct Waiter {
        /// For now only: dropped unless the device is linked to this node or another.
        var onlyIfLinked = false
        var completion: @Sendable (APNs.Rejection?) -> Void
    }

    private struct State {
        var admission: PushAdmission
        /// The tokens read so far, and the pushes waiting for theirs to be read.
        var tokens = TokenCache<UnreadPush>()
        var credentials = ProviderCredentials()
        var connectedDevices: Set<String> = []
        /// Devices removed or disabled, as last read (every other device is in good standing).
        var standings: [String: DeviceStanding] = [:]
        /// Apps that keep only their latest push per device, as last read.
        var latestOnlyApps: Set<String> = []
        var batch = Batch()
        /// Batches being written (at most ``GatewayCore/maximumWrites``), each numbered in the order
        /// it was cut; their providers are answered, and their pushes handed on, in that order.
        var writesInFlight = 0
        var nextBatchNumber = 0
        var nextAnswered = 0
        var answers: [Int: @Sendable () -> Void] = [:]
        var isAnswering = false
        /// Said by the last batch cut once its places in its devices' orders are taken: the next
        /// batch's write waits for it.
        var lastOrdered: OrderedGate?
        /// Pushes accepted and not yet durable: gathering in `batch`, or in a batch being written.
        var unwritten = 0
        var lastRefresh: ContinuousClock.Instant?
        /// Changes of `connectedDevices` not yet recorded in the store (for other nodes), the latest
        /// of each device; and whether they are being written.
        var unrecordedLinks: [String: Bool] = [:]
        /// When the latest of them happened: the time their devices last held a link.
        var lastLinkChange = Date.distantPast
        var isRecordingLinks = false
    }

    /// A push waiting for its token to be read.
    private struct UnreadPush {
        var push: ProviderPush
        var completion: @Sendable (APNs.Rejection?) -> Void
    }

    private let store: any GatewayStore
    /// The tasks this core and the device links start (``OwnedTasks``).
    package let tasks = OwnedTasks()
    private let state: Mutex<State>
    private let logger: Logger
    private let queued: @Sendable ([QueuedPush]) -> Void
    private let wake: @Sendable ([String: Bool]) -> Void
    private let logsDeliveries: Bool
    private let clock: @Sendable () -> Date
    /// Broadcasts being written now: until each has woken its devices' links, the core's pushes are
    /// not handed to links directly (see ``DeviceLinks/stored(_:)``).
    private let broadcastsBeingStored = Atomic<Int>(0)
    /// How many batches are written at once: one for a store of one node (its writer takes one at a
    /// time, SQLite's); two for a database shared by nodes, whose round trips and commit one batch
    /// waits for while the other is written (``PushQueueStore/enqueue(_:at:ordered:)``).
    private let maximumWrites: Int

    /// - Parameters:
    ///   - logsDeliveries: whether accepted pushes are written to the delivery log.
    ///   - queued: called with the pushes of each durable batch, in order, for delivery.
    ///   - wake: called with the devices a broadcast was stored for (`true`: held), for delivery.
    package init(
        store: any GatewayStore,
        admission: PushAdmission.Configuration = .init(),
        logsDeliveries: Bool = true,
        clock: @escaping @Sendable () -> Date = { Date() },
        logger: Logger,
        queued: @escaping @Sendable ([QueuedPush]) -> Void = { _ in },
        wake: @escaping @Sendable ([String: Bool]) -> Void = { _ in }
    ) {
        self.store = store
        self.wake = wake
        self.logger = logger
        self.queued = queued
        self.logsDeliveries = logsDeliveries
        self.clock = clock
        maximumWrites = store.isSharedByNodes ? 2 : 1
        state = Mutex(State(admission: PushAdmission(configuration: admission)))
    }

    // MARK: - Providers

    /// The keys and apps the provider API checks requests against, as last loaded.
    package var credentials: ProviderCredentials { state.withLock { $0.credentials } }

    /// Reads the providers' keys and apps, and the devices removed or disabled, from the store again;
    /// call after changing them.
    package func reloadProviders() async throws(GatewayError) {
        let (keys, appsByTeam) = try await store.providers()
        var usable: [ProviderKey] = []
        for key in keys {
            guard let publicKey = try? P256.Signing.PublicKey(pemRepresentation: key.publicKeyPEM) else {
                logger.error("a stored key is not a P-256 public key; it is ignored", metadata: ["key": .string(key.keyID)])
                continue
            }
            usable.append(ProviderKey(keyID: key.keyID, teamID: key.teamID, environment: key.environment,
                                      bundleIdentifiers: key.bundleIdentifiers, publicKey: publicKey))
        }
        let credentials = ProviderCredentials(keys: usable, appsByTeam: appsByTeam)
        // Devices are removed or disabled with the same tools as keys: read with them.
        let standings = try await store.deviceStandings()
        let latestOnlyApps = try await store.appsKeepingLatestOnly()
        state.withLock {
            $0.credentials = credentials
            $0.standings = standings
            $0.latestOnlyApps = latestOnlyApps
        }
    }

    /// Reads the providers' keys and apps again for a token the gateway does not know, at most ten
    /// times a second (made-up tokens cannot make it read more), then calls `done`.
    package func refreshProviders(_ done: @escaping @Sendable () -> Void) {
        let now = ContinuousClock.now
        let reads = state.withLock { state -> Bool in
            if let last = state.lastRefresh, now - last < .milliseconds(100) { return false }
            state.lastRefresh = now
            return true
        }
        guard reads else { return done() }
        tasks.start {
            try? await self.reloadProviders()
            done()
        }
    }

    // MARK: - Tokens

    /// Issues the token of an app on a device in an environment (the same one while it stays
    /// registered): 32 random bytes, as hexadecimal.
    package func register(deviceID: String, bundleIdentifier: String, environment: APNs.Environment, at date: Date) async throws(GatewayError) -> Registration {
        let token = randomHex(bytes: 32)
        let registration = try await store.register(Registration(token: token, deviceID: deviceID, bundleIdentifier: bundleIdentifier,
                                                                 environment: environment, registeredAt: date))
        state.withLock { $0.tokens.remember(registration) }
        return registration
    }

    /// Ends every token of the app on the device: pushes to them answer `410 Unregistered` from now.
    package func unregister(deviceID: String, bundleIdentifier: String, at date: Date,
                            because reason: String = "the app unregistered") async throws(GatewayError) {
        try await store.unregister(deviceID: deviceID, bundleIdentifier: bundleIdentifier, at: date, because: reason)
        state.withLock { $0.tokens.unregister(deviceID: deviceID, bundleIdentifier: bundleIdentifier, at: date) }
    }

    /// Takes note of every app on the device: the tokens of any other app of it end, as
    /// ``unregister(deviceID:bundleIdentifier:at:because:)`` ends them, the app having left the
    /// device (removed while it was linked, or while it was not). Returns the apps whose tokens ended.
    @discardableResult
    package func keepApps(deviceID: String, _ bundleIdentifiers: Set<String>, at date: Date) async throws(GatewayError) -> Set<String> {
        let gone = try await store.registeredApps(of: deviceID).subtracting(bundleIdentifiers)
        for bundleIdentifier in gone.sorted() {
            try await unregister(deviceID: deviceID, bundleIdentifier: bundleIdentifier, at: date, because: "the app was removed from the device")
        }
        if !gone.isEmpty {
            logger.info("apps removed from a device: their tokens answer 410 Unregistered",
                        metadata: ["device": .string(deviceID), "apps": .string(gone.sorted().joined(separator: ","))])
        }
        return gone
    }

    /// Notes whether a device holds a link to this node now (a push for now only reaches a linked
    /// device), and records it in the store for the other nodes, in the order of the changes.
    package func setConnected(_ deviceID: String, _ connected: Bool) {
        let now = clock()
        let startsRecording = state.withLock { state -> Bool in
            if connected { state.connectedDevices.insert(deviceID) } else { state.connectedDevices.remove(deviceID) }
            state.unrecordedLinks[deviceID] = connected
            state.lastLinkChange = max(state.lastLinkChange, now)
            guard !state.isRecordingLinks else { return false }
            state.isRecordingLinks = true
            return true
        }
        if startsRecording { tasks.start { await self.recordLinks() } }
    }

    /// Records the links' changes in the store until none is left; after a failure, tries again
    /// a second later (what changed meanwhile is recorded with it).
    private func recordLinks() async {
        while true {
            let (changes, changedAt) = state.withLock { state in
                defer { state.unrecordedLinks.removeAll() }
                if state.unrecordedLinks.isEmpty { state.isRecordingLinks = false }
                return (state.unrecordedLinks, state.lastLinkChange)
            }
            guard !changes.isEmpty else { return }
            do {
                try await store.setLinked(changes)
                // Linked or unlinked, each held a link when it changed: its tokens' expiry counts from then.
                try await store.noteLinked(changes.keys.sorted(), at: changedAt)
            } catch {
                logger.warning("could not record device links for the other nodes", metadata: ["error": .string("\(error)")])
                state.withLock { state in
                    for (device, linked) in changes where state.unrecordedLinks[device] == nil { state.unrecordedLinks[device] = linked }
                }
                try? await Task.sleep(for: .seconds(1))
                // The gateway's stop was cut short: what is left stays unrecorded (the other nodes
                // see this node's links expire).
                if Task.isCancelled {
                    state.withLock { $0.isRecordingLinks = false }
                    return
                }
            }
        }
    }

    /// Records that the devices linked to this node now held a link now, so that a device linked for
    /// weeks on end keeps its tokens from expiring on every node (``PushAdmission/Configuration/tokenExpiry``).
    package func noteLinksHeld() async {
        let held = state.withLock { $0.connectedDevices.sorted() }
        do {
            try await store.noteLinked(held, at: clock())
        } catch {
            logger.warning("could not record the devices' links", metadata: ["error": .string("\(error)")])
        }
    }

    /// Forgets what it read of these tokens (nil: of every token): another node unregistered them.
    package func forgetTokens(_ tokens: [String]?) {
        state.withLock { $0.tokens.forget(tokens) }
    }

    // MARK: - Pushes

    /// Whether a broadcast is being stored now (and has not woken its devices' links yet).
    var isStoringBroadcasts: Bool { broadcastsBeingStored.load(ordering: .sequentiallyConsistent) > 0 }

    /// Pushes accepted and not yet durable.
    package var unwrittenPushes: Int { state.withLock { $0.unwritten } }

    package func accept(_ push: ProviderPush, completion: @escaping @Sendable (APNs.Rejection?) -> Void) {
        admit(push, .cached, completion: completion)
    }

    /// Reads the tokens pushes wait for, all of them in one read, round after round until none
    /// waits. After a start, the first thousand pushes of a busy provider are each to a token not
    /// read yet: read one by one, they took the gateway's first seconds. Unknown tokens are not
    /// remembered: a flood of made-up tokens costs reads, and the provider's connection is closed
    /// after a few of them.
    private func readTokens() async {
        while let read = state.withLock({ $0.tokens.nextRead() }) {
            do {
                let registrations = try await store.registrations(tokens: read.tokens)
                // Decided before the tokens are remembered: a push to one of them arriving meanwhile
                // (known from an earlier round or not) waits for the next round, behind these.
                for (unread, registration) in read.answered(by: registrations) {
                    admit(unread.push, .read(registration), completion: unread.completion)
                }
                state.withLock { $0.tokens.finish(read, with: registrations) }
            } catch {
                state.withLock { $0.tokens.finish(read, with: nil) }
                logger.error("could not read tokens", metadata: ["tokens": .stringConvertible(read.count), "error": .string("\(error)")])
                let reason = Self.reason(for: error)
                for (unread, _) in read.answered(by: [:]) { unread.completion(APNs.Rejection(reason)) }
            }
        }
    }

    /// Where ``admit(_:_:completion:)`` finds the push's token: among those read before, or as just read.
    private enum TokenLookup {
        case cached
        case read(Registration?)
    }

    /// What became of a push under the core's lock.
    private enum Admitted {
        /// Its token was not read before: it waits for the token to be read, which may need starting.
        case waitsForToken(startsReading: Bool)
        /// Answered now: refused, or accepted and not kept (nil).
        case answered(APNs.Rejection?)
        /// In the batch, answered once it is written; the batch needs its writer started.
        case batched(startsWriting: Bool)
    }

    /// Decides on a push and puts it in the batch, under one hold of the lock (the usual case, a
    /// token read before, takes it once per push); a push to a token not read yet, or still being
    /// read for earlier pushes, waits for the next read of tokens.
    private func admit(_ push: ProviderPush, _ lookup: TokenLookup, completion: @escaping @Sendable (APNs.Rejection?) -> Void) {
        let sender = logsDeliveries
            ? QueuedPush.Sender(teamID: push.teamID, credential: push.keyID.isEmpty ? "certificate" : "key \(push.keyID)") : nil
        let admitted = state.withLock { state -> Admitted in
            let registration: Registration?
            switch lookup {
            case .cached:
                // Behind pushes to the same token that still wait for it, if any.
                switch state.tokens.lookUp(push.headers.deviceToken, for: UnreadPush(push: push, completion: completion)) {
                case .known(let known): registration = known
                case .waits(let startsReading): return .waitsForToken(startsReading: startsReading)
                }
            case .read(let read):
                registration = read
            }
            let standing = registration.flatMap { state.standings[$0.deviceID] }
            let decision = state.admission.admit(push, registration: registration,
                                                 deviceIsConnected: registration.map { state.connectedDevices.contains($0.deviceID) } ?? false,
                                                 standing: standing)
            if case .cached = lookup, case .failure(let rejection) = decision, rejection.reason == .expiredToken, standing?.removedAt == nil {
                // Expired as last read: the device may have linked to another node since. Read again.
                state.tokens.forget([push.headers.deviceToken])
                if case .waits(let startsReading) = state.tokens.lookUp(push.headers.deviceToken, for: UnreadPush(push: push, completion: completion)) {
                    return .waitsForToken(startsReading: startsReading)
                }
            }
            let deviceID: String, expiresAt: Date
            var droppedBecause: String? = nil
            var onlyIfLinked = false
            switch decision {
            case .failure(let rejection):
                return .answered(rejection)
            case .success(.drop(let reason)):
                // Accepted and not kept: only the delivery log hears of it.
                guard logsDeliveries, let registration else { return .answered(nil) }
                (deviceID, expiresAt, droppedBecause) = (registration.deviceID, push.receivedAt, reason)
            case .success(.queue(let device, let expiry)):
                (deviceID, expiresAt) = (device, expiry)
            case .success(.queueIfLinkedElsewhere(let device, let expiry)):
                (deviceID, expiresAt, onlyIfLinked) = (device, expiry, true)
            }
            guard state.unwritten < state.admission.configuration.maximumUnwrittenPushes else { return .answered(APNs.Rejection(.serviceUnavailable)) }
            var queued = QueuedPush(
                deviceID: deviceID, token: push.headers.deviceToken, bundleIdentifier: push.bundleIdentifier, environment: push.environment,
                apnsID: push.headers.apnsID,
                pushType: push.headers.pushType, priority: push.headers.priority, expiresAt: expiresAt, collapseID: push.headers.collapseID,
                payload: push.payload, receivedAt: push.receivedAt
            )
            queued.uniqueID = push.uniqueID
            queued.droppedBecause = droppedBecause
            queued.sender = sender
            queued.replacesQueued = state.latestOnlyApps.contains(push.bundleIdentifier)
            // For a device not linked now: its place in the order is given when it links.
            queued.held = !state.connectedDevices.contains(deviceID)
            state.unwritten += 1
            state.batch.append(queued, Waiter(onlyIfLinked: onlyIfLinked, completion: completion))
            guard state.writesInFlight < maximumWrites else { return .batched(startsWriting: false) }
            state.writesInFlight += 1
            return .batched(startsWriting: true)
        }
        switch admitted {
        case .waitsForToken(let startsReading): if startsReading { tasks.start { await self.readTokens() } }
        case .answered(let rejection): completion(rejection)
        case .batched(let startsWriting): if startsWriting { writeBatches() }
        }
    }

    package func deliveryRecords(matching id: String) async throws(GatewayError) -> [DeliveryRecord] {
        try await store.deliveryRecords(matching: id)
    }

    /// What a provider is told when the store fails: `503 ServiceUnavailable` while it cannot be
    /// reached (try again later), `500 InternalServerError` otherwise.
    static func reason(for error: any Error) -> APNs.Reason {
        (error as? GatewayError)?.code == .unavailable ? .serviceUnavailable : .internalServerError
    }

    /// Writes what gathered, batch after batch, until nothing waits: each batch once the one before
    /// it is written (with a store shared by nodes, two at once: ``maximumWrites``). A batch goes
    /// from the thread that admitted its first push (a provider's connection) to the store, and is
    /// handed on from where the store finishes it (its writer), without a task between: each hop
    /// through the concurrency pool is a wait for a core under load, on the way of every push to its
    /// device. Only a store shared by nodes, whose rules read it first, takes a task.
    private func writeBatches() {
        let isShared = store.isSharedByNodes
        let cut = state.withLock { state -> (batch: Batch, number: Int, after: OrderedGate?, gate: OrderedGate?)? in
            let batch = state.batch
            state.batch = Batch()
            guard !batch.isEmpty else {
                state.writesInFlight -= 1
                return nil
            }
            defer { state.nextBatchNumber += 1 }
            guard isShared else { return (batch, state.nextBatchNumber, nil, nil) }
            let gate = OrderedGate()
            defer { state.lastOrdered = gate }
            return (batch, state.nextBatchNumber, state.lastOrdered, gate)
        }
        guard let (cutBatch, number, after, gate) = cut else { return }
        let count = cutBatch.pushes.count
        guard isShared, let gate else {
            var batch = cutBatch
            keepOnlyIfLinked(&batch, elsewhere: [])
            return write(batch, count: count, number: number)
        }
        tasks.start { [self] in
            var batch = cutBatch
            let result: Result<[QueuedPush], any Error>
            do {
                try await applySharedRules(to: &batch)
                // The batch cut before this one takes its devices' places first: where they share a
                // device, this one's pushes come after its pushes, and commit after them.
                await after?.opened()
                let pushes = batch.pushes
                result = pushes.isEmpty ? .success([]) : .success(try await store.enqueue(pushes, at: clock(), ordered: { gate.open() }))
            } catch {
                result = .failure(error)
            }
            // A batch that failed before its turn lets the next one go only after the one before it.
            await after?.opened()
            gate.open()
            answer(number) { [self, batch] in finish(batch, stored: result, count: count) }
        }
    }

    /// Stores a batch of `count` pushes (fewer if rules dropped some), hands it on for delivery, then
    /// answers its providers, and goes on to the next batch.
    private func write(_ batch: Batch, count: Int, number: Int) {
        guard !batch.isEmpty else { return answer(number) { [self] in finish(batch, stored: .success([]), count: count) } }
        store.enqueue(batch.pushes, at: clock(), tasks: tasks) { result in
            self.answer(number) { self.finish(batch, stored: result.mapError { $0 }, count: count) }
        }
    }

    /// Runs each batch's `answer` in the order the batches were cut, whichever is written first: a
    /// device's link is handed a batch's pushes only after those of the batches before it.
    private func answer(_ number: Int, _ answer: @escaping @Sendable () -> Void) {
        let answers = state.withLock { state in
            state.answers[number] = answer
            guard !state.isAnswering else { return false }
            state.isAnswering = true
            return true
        }
        guard answers else { return }
        while let next = state.withLock({ state -> (@Sendable () -> Void)? in
            guard let next = state.answers.removeValue(forKey: state.nextAnswered) else {
                state.isAnswering = false
                return nil
            }
            state.nextAnswered += 1
            return next
        }) {
            next()
        }
    }

    /// Hands a written batch on for delivery, answers its providers (refused with the failure's
    /// reason if it failed), and writes the next batch.
    private func finish(_ batch: Batch, stored: Result<[QueuedPush], any Error>, count: Int) {
        state.withLock { $0.unwritten -= count }
        switch stored {
        case .success(let pushes):
            // Handed on for delivery before the providers hear of it.
            if !pushes.isEmpty { queued(pushes) }
            for waiter in batch.waiters { waiter.completion(nil) }
        case .failure(let failure):
            logger.error("could not store pushes", metadata: ["pushes": .stringConvertible(batch.pushes.count), "error": .string("\(failure)")])
            let rejection = APNs.Rejection(Self.reason(for: failure))
            for waiter in batch.waiters { waiter.completion(rejection) }
        }
        writeBatches()
    }

    /// The first of the rules below, which needs no read of the store: a push for now only is
    /// dropped when the device is linked nowhere (`elsewhere`: the devices linked to other nodes).
    private func keepOnlyIfLinked(_ batch: inout Batch, elsewhere: Set<String>) {
        let logsDeliveries = self.logsDeliveries
        batch.keep { push, waiter in
            if push.held, elsewhere.contains(push.deviceID) { push.held = false }
            guard waiter.onlyIfLinked, push.held else { return true }
            // Accepted and not kept: only the delivery log hears of it.
            guard logsDeliveries else {
                waiter.completion(nil)
                return false
            }
            push.droppedBecause = "for now only (apns-expiration 0), and the device was not linked"
            return true
        }
    }

    /// The rules that need the other nodes' knowledge (for a store of one node, only the first): a
    /// push for now only is dropped when the device is linked nowhere; a push for a device linked to
    /// another node gets its place in the device's order now, as one for a device linked here; and
    /// each token takes from its bucket shared by every node (beyond it, `429 TooManyRequests`).
    ///
    /// The pushes it answers itself leave the batch before anything that may throw after them, so
    /// that a failure answers each of the others once.
    private func applySharedRules(to batch: inout Batch) async throws(GatewayError) {
        guard store.isSharedByNodes else { return keepOnlyIfLinked(&batch, elsewhere: []) }
        // Both reads in one trip: every push takes from its token's bucket, those for now only that
        // the first rule then drops too (each is a request to the token, as APNs counts them).
        let notHere = Set(batch.pushes.lazy.filter(\.held).map(\.deviceID))
        var counts: [String: Int] = [:]
        for push in batch.pushes where push.droppedBecause == nil { counts[push.token, default: 0] += 1 }
        let configuration = state.withLock { $0.admission.configuration }
        let read = try await store.sharedRules(linkedElsewhere: notHere, take: counts, at: clock(), burst: configuration.burstPerToken,
                                               perSecond: configuration.sustainedPerTokenPerSecond)
        var granted = read.granted
        keepOnlyIfLinked(&batch, elsewhere: read.elsewhere)
        batch.keep { push, waiter in
            guard push.droppedBecause == nil else { return true }
            guard granted[push.token, default: 0] > 0 else {
                waiter.completion(APNs.Rejection(.tooManyRequests))
                return false
            }
            granted[push.token, default: 0] -= 1
            return true
        }
    }
}

extension GatewayCore: BroadcastChannels {
    package func createChannel(bundleIdentifier: String, environment: APNs.Environment, settings: APNs.ChannelSettings, at date: Date)
        async throws(GatewayError) -> BroadcastChannel
    {
        var bytes = SystemRandomNumberGenerator()
        let identifier = Data((0..<16).map { _ in UInt8.random(in: .min ... .max, using: &bytes) }).base64EncodedString()
        let channel = BroadcastChannel(channelID: identifier, bundleIdentifier: bundleIdentifier, environment: environment, settings: settings,
                                       createdAt: date)
        try await store.createChannel(channel, limit: state.withLock { $0.admission.configuration.channelsPerApp })
        return channel
    }

    package func channel(_ channelID: String) async throws(GatewayError) -> BroadcastChannel? {
        try await store.channel(channelID)
    }

    package func deleteChannel(_ channelID: String) async throws(GatewayError) {
        try await store.deleteChannel(channelID)
    }

    package func channels(of bundleIdentifier: String, environment: APNs.Environment) async throws(GatewayError) -> [String] {
        try await store.channels(of: bundleIdentifier, environment: environment)
    }

    /// A message for now only (`apns-expiration: 0`) reaches the subscribers linked now, and leaves
    /// the channel's stored message as it was; any other is kept at most APNs' 8 hours for the others.
    package func broadcast(to channel: BroadcastChannel, headers: APNs.BroadcastHeaders, payload: [UInt8], at date: Date) async throws(GatewayError) -> Int {
        var target = channel
        let expiresAt: Date
        if headers.expiration == 0 {
            target.settings.storesMostRecent = false
            expiresAt = date.addingTimeInterval(state.withLock { $0.admission.configuration.deliverNowWindow })
        } else {
            expiresAt = min(Date(timeIntervalSince1970: TimeInterval(headers.expiration)), date.addingTimeInterval(APNs.channelMessageLifetime))
            // Expired already: accepted, and stored for no one.
            guard expiresAt > date else { return 0 }
        }
        broadcastsBeingStored.add(1, ordering: .sequentiallyConsistent)
        defer { broadcastsBeingStored.subtract(1, ordering: .sequentiallyConsistent) }
        let linked = state.withLock { $0.connectedDevices }
        let stored = try await store.enqueue(Broadcast(channel: target, requestID: headers.requestID, priority: headers.priority, expiresAt: expiresAt,
                                                       payload: payload, receivedAt: date), linked: linked)
        wake(stored)
        return stored.count
    }
}

/// Opened once; what waits for it goes on then (at once, if it is open already).
final class OrderedGate: Sendable {
    private let state = Mutex<(isOpen: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))

    func open() {
        let waiting = state.withLock { state in
            defer { state = (true, []) }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }

    func opened() async {
        await withCheckedContinuation { continuation in
            let isOpen = state.withLock { state in
                if !state.isOpen { state.waiting.append(continuation) }
                return state.isOpen
            }
            if isOpen { continuation.resume() }
        }
    }
}
