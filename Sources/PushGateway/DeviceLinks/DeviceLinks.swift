import Crypto
package import Foundation
import HummingbirdWebSocket
package import Logging
import NIOWebSocket
import NotificationCore
import Synchronization

/// The devices linked to the gateway right now, and the work of each link (`Docs/device-link.md`):
/// the pushes stored for the device, in order, at most a window of them unacknowledged; then each
/// new one as it is stored; acknowledgements; apps' registrations.
package final class DeviceLinks: Sendable {
    private enum Wake: Sendable {
        case pushes
        case replaced
    }

    private struct Link: Sendable {
        let id: UUID
        let wake: AsyncStream<Wake>.Continuation
        let progress: SharedProgress
    }

    /// What one link knows of its device's pushes; shared by its reading and sending tasks.
    private struct Progress: Sendable {
        /// The highest sequence sent on this link.
        var sent: Int64 = 0
        /// The sequences sent and not yet acknowledged, in order.
        var unacknowledged: [Int64] = []
        /// Whether held pushes may wait for the device: at first, and when some are stored.
        var mayHaveHeld = true
    }

    private final class SharedProgress: Sendable {
        let state = Mutex(Progress())
        func withLock<T>(_ body: (inout Progress) -> T) -> T { state.withLock { body(&$0) } }
    }

    private let links = Mutex<[String: Link]>([:])
    private let store: any GatewayStore
    private let core: GatewayCore
    /// Pushes a device may hold unacknowledged.
    package let window: Int
    private let logger: Logger
    private let clock: @Sendable () -> Date

    package init(store: any GatewayStore, core: GatewayCore, window: Int = 64, logger: Logger, clock: @escaping @Sendable () -> Date = { Date() }) {
        self.store = store
        self.core = core
        self.window = window
        self.logger = logger
        self.clock = clock
    }

    /// The close code a replaced link gets: the device does not reconnect.
    package static let replacedCloseCode: UInt16 = 4001

    /// Tells the links of these pushes' devices that more is stored for them.
    package func stored(_ pushes: [QueuedPush]) {
        var devices: [String: Bool] = [:]
        for push in pushes { devices[push.deviceID, default: false] = devices[push.deviceID, default: false] || push.held }
        let woken = links.withLock { links in devices.compactMap { device, held in links[device].map { ($0, held) } } }
        for (link, held) in woken {
            // Stored held (the device was not linked yet when they came): the link promotes them.
            if held { link.progress.withLock { $0.mayHaveHeld = true } }
            link.wake.yield(.pushes)
        }
    }

    /// Checks a device's credential, `<device id>.<secret>`; returns the device's identifier.
    package func authenticate(_ credential: String) async -> String? {
        guard let dot = credential.firstIndex(of: ".") else { return nil }
        let deviceID = String(credential[..<dot])
        let secret = credential[credential.index(after: dot)...]
        guard !deviceID.isEmpty, !secret.isEmpty, let stored = try? await store.deviceSecretHash(deviceID) else { return nil }
        return Self.hash(secret) == stored ? deviceID : nil
    }

    /// The hash the store keeps of a device's secret.
    package static func hash(_ secret: some StringProtocol) -> String {
        SHA256.hash(data: Data(secret.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// Enrolls a new device in `store` and returns its credential, `<device id>.<secret>`: a random
    /// identifier (after `prefix`) and a 32-byte secret, of which the store keeps only the hash.
    package static func enroll(in store: any GatewayStore, prefix: String = "", at date: Date) async throws(GatewayError) -> String {
        let deviceID = prefix + randomHex(bytes: prefix.isEmpty ? 8 : 4)
        let secret = randomHex(bytes: 32)
        try await store.addDevice(deviceID, secretHash: hash(secret), at: date)
        return "\(deviceID).\(secret)"
    }

    /// Runs one device's link until it closes or is replaced.
    func run(deviceID: String, inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter) async {
        let (wakes, wake) = AsyncStream.makeStream(of: Wake.self, bufferingPolicy: .bufferingNewest(4))
        let id = UUID()
        let progress = SharedProgress()
        let previous = links.withLock { links in
            defer { links[deviceID] = Link(id: id, wake: wake, progress: progress) }
            return links[deviceID]
        }
        previous?.wake.yield(.replaced)
        core.setConnected(deviceID, true)
        logger.info("device linked", metadata: ["device": .string(deviceID)])
        defer {
            let isLast = links.withLock { links in
                guard links[deviceID]?.id == id else { return false }
                links[deviceID] = nil
                return true
            }
            if isLast { core.setConnected(deviceID, false) }
            logger.info("device unlinked", metadata: ["device": .string(deviceID)])
        }

        // Two tasks per link, and no queue between them and the socket: with many thousands of devices
        // linked, what each link holds is what the gateway's memory is made of.
        let post = LinkWriter(outbound: outbound)
        await post.send(.welcome(deviceID: deviceID, window: window))
        wake.yield(.pushes)

        let remaining = UncheckedInbound(iterator: inbound.messages(maxSize: 1 << 16).makeAsyncIterator())
        await withTaskGroup(of: Void.self) { group in
            // Sends what is stored, within the window, whenever something may have changed.
            group.addTask {
                for await reason in wakes {
                    if case .replaced = reason {
                        try? await outbound.close(.unknown(Self.replacedCloseCode), reason: "replaced")
                        break
                    }
                    await self.sendWithinWindow(deviceID: deviceID, progress: progress, post: post)
                }
            }
            // Reads the device's messages.
            group.addTask {
                var iterator = remaining.iterator
                let decoder = JSONDecoder()
                while let frame = try? await iterator.next() {
                    guard case .text(let text) = frame, let message = try? decoder.decode(DeviceLink.DeviceMessage.self, from: Data(text.utf8)) else {
                        self.logger.notice("ignored a malformed message on a device link", metadata: ["device": .string(deviceID)])
                        continue
                    }
                    await self.handle(message, deviceID: deviceID, progress: progress, post: post, wake: wake)
                }
                // The device went away: the link ends.
                wake.finish()
            }
            await group.next()
            wake.finish()
            await group.waitForAll()
        }
    }

    /// Sends the device's pushes in their order, within the window. Once those run out, the pushes
    /// held while the device was not linked get their places, highest priority first, and follow.
    private func sendWithinWindow(deviceID: String, progress: SharedProgress, post: LinkWriter) async {
        while true {
            let (after, room) = progress.withLock { ($0.sent, window - $0.unacknowledged.count) }
            guard room > 0 else { return }
            let pushes: [QueuedPush]
            do {
                pushes = try await store.pushes(for: deviceID, after: after, now: clock(), limit: room)
                if pushes.isEmpty {
                    // Cleared before looking: pushes stored held meanwhile set it again, and are looked for.
                    guard progress.withLock({ progress in defer { progress.mayHaveHeld = false }; return progress.mayHaveHeld }) else { return }
                    let promoted = try await store.promoteHeld(deviceID: deviceID, now: clock(), limit: room)
                    // As many as there was room for: there may be more.
                    if promoted == room { progress.withLock { $0.mayHaveHeld = true } }
                    guard promoted > 0 else { return }
                    continue
                }
            } catch {
                logger.error("could not read a device's pushes", metadata: ["device": .string(deviceID), "error": .string("\(error)")])
                // Looked for again at the next wake.
                progress.withLock { $0.mayHaveHeld = true }
                return
            }
            guard let last = pushes.last else { return }
            progress.withLock { progress in
                progress.sent = last.sequence
                progress.unacknowledged += pushes.map(\.sequence)
            }
            for push in pushes {
                await post.send(.push(DeviceLink.Push(
                    sequence: push.sequence, token: push.token, bundleIdentifier: push.bundleIdentifier,
                    environment: push.environment, apnsID: push.apnsID, pushType: push.pushType,
                    priority: push.priority, expiresAt: push.expiresAt.timeIntervalSince1970, collapseID: push.collapseID,
                    payload: String(decoding: push.payload, as: UTF8.self), receivedAt: push.receivedAt.timeIntervalSince1970
                )))
            }
        }
    }

    private func handle(
        _ message: DeviceLink.DeviceMessage, deviceID: String, progress: SharedProgress,
        post: LinkWriter, wake: AsyncStream<Wake>.Continuation
    ) async {
        switch message {
        case .ack(let through):
            // Only what was sent on this link can be acknowledged.
            let acknowledged = progress.withLock { progress -> Int64? in
                let covered = progress.unacknowledged.prefix { $0 <= through }
                guard let last = covered.last else { return nil }
                progress.unacknowledged.removeFirst(covered.count)
                return last
            }
            guard let acknowledged else { return }
            do {
                try await store.acknowledge(deviceID: deviceID, through: acknowledged)
            } catch {
                logger.error("could not record an acknowledgement", metadata: ["device": .string(deviceID), "error": .string("\(error)")])
            }
            wake.yield(.pushes)
        case .register(let requestID, let bundleIdentifier, let environment):
            guard RequestRules.violation(inBundleIdentifier: bundleIdentifier) == nil else {
                await post.send(.error(requestID: requestID, code: "invalidRequest", message: "\(bundleIdentifier) is not a bundle identifier."))
                return
            }
            do {
                let registration = try await core.register(deviceID: deviceID, bundleIdentifier: bundleIdentifier, environment: environment, at: clock())
                await post.send(.registered(requestID: requestID, token: registration.token, bundleIdentifier: bundleIdentifier, environment: environment))
            } catch {
                await post.send(.error(requestID: requestID, code: "internal", message: "The gateway could not register \(bundleIdentifier)."))
            }
        case .unregister(let requestID, let bundleIdentifier):
            do {
                try await core.unregister(deviceID: deviceID, bundleIdentifier: bundleIdentifier, at: clock())
                await post.send(.unregistered(requestID: requestID, bundleIdentifier: bundleIdentifier))
            } catch {
                await post.send(.error(requestID: requestID, code: "internal", message: "The gateway could not unregister \(bundleIdentifier)."))
            }
        }
    }
}

/// Writes a link's messages to its socket; a write to a closed link is dropped (the link is ending).
private struct LinkWriter: Sendable {
    let outbound: WebSocketOutboundWriter

    func send(_ message: DeviceLink.GatewayMessage) async {
        guard let data = try? JSONEncoder().encode(message) else { return }
        try? await outbound.write(.text(String(decoding: data, as: UTF8.self)))
    }
}

/// Carries a link's inbound messages into the task that reads them.
private struct UncheckedInbound: @unchecked Sendable {
    // Sendable: the iterator is handed over once, to the one task that reads it from then on.
    var iterator: WebSocketInboundMessageStream.AsyncIterator
}
