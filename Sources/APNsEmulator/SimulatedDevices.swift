package import Foundation
package import Logging
package import NotificationCore
import NIOWebSocket
package import PushGateway
import Synchronization

/// When a simulated device acknowledges the pushes it receives.
package enum AcknowledgementTiming: Sendable, Hashable {
    /// As soon as they arrive.
    case immediately
    /// This many seconds (of the system's clock) after they arrive: a slow device.
    case after(TimeInterval)
    /// Never: they stay unacknowledged, and the device's window (64 pushes) fills.
    case never

    /// `immediately`, `never`, or a duration such as `2s` (``EmulatorDuration``).
    package init?(_ text: String) {
        switch text {
        case "immediately": self = .immediately
        case "never": self = .never
        default:
            guard let seconds = EmulatorDuration.seconds(text) else { return nil }
            self = seconds == 0 ? .immediately : .after(seconds)
        }
    }

    package var text: String {
        switch self {
        case .immediately: "immediately"
        case .never: "never"
        case .after(let seconds): EmulatorDuration.text(seconds)
        }
    }
}

/// A push a simulated device received, as it received it.
package struct ReceivedPush: Sendable, Hashable {
    package var token: String
    /// The app it is for (the topic without its push type's suffix).
    package var bundleIdentifier: String
    package var environment: APNs.Environment
    package var apnsID: String
    /// The gateway's `apns-unique-id` for it.
    package var uniqueID: String?
    package var pushType: APNs.PushType
    package var priority: Int
    package var collapseID: String?
    /// When it expires, on the emulator's clock.
    package var expiresAt: Date
    /// The payload, as the provider sent it.
    package var payload: String
    /// When the provider's request was accepted, on the emulator's clock.
    package var acceptedAt: Date
    /// When the device received it, on the emulator's clock.
    package var receivedAt: Date
}

/// A device the emulator simulates: linked to the gateway as a real device is (its pushes come down
/// the same link, in the same order, within the same window), with an app for each topic and a token
/// for each, keeping what it receives.
package struct SimulatedDevice: Sendable, Hashable {
    package var deviceID: String
    /// Each topic's token.
    package var tokens: [String: String]
    package var environment: APNs.Environment
    package var acknowledgement: AcknowledgementTiming
    /// Whether it holds its link now (an `offline` fault unlinks it).
    package var isOnline: Bool
    /// The apps uninstalled from it, by an `uninstalled` fault.
    package var uninstalled: Set<String>
}

/// The devices the emulator simulates, their links, and what each received.
package final class SimulatedDevices: Sendable {
    private struct Device {
        var device: SimulatedDevice
        var transport: SimulatedLink?
    }

    private struct State {
        var devices: [String: Device] = [:]
        /// The order the devices were made in.
        var order: [String] = []
        var deviceByToken: [String: String] = [:]
        var inbox: [String: [ReceivedPush]] = [:]
        /// Requests waiting for a token's inbox to hold a count of pushes.
        var waiters: [UUID: (token: String, count: Int, arrived: CheckedContinuation<Void, Never>)] = [:]
    }

    private let state = Mutex(State())
    private let links: DeviceLinks
    private let core: GatewayCore
    private let store: any GatewayStore
    private let clock: EmulatorClock
    private let logger: Logger

    package init(links: DeviceLinks, core: GatewayCore, store: any GatewayStore, clock: EmulatorClock, logger: Logger) {
        self.links = links
        self.core = core
        self.store = store
        self.clock = clock
        self.logger = logger
    }

    /// Makes `count` devices, each with an app of each topic, linked; returns them.
    ///
    /// - Parameter maximum: the most devices made at once (the control API makes at most 1,000 a request).
    package func make(count: Int, topics: [String], environment: APNs.Environment = .sandbox,
                      acknowledgement: AcknowledgementTiming = .immediately, maximum: Int = 100_000) async throws(EmulatorError) -> [SimulatedDevice] {
        guard count >= 1, count <= maximum else { throw EmulatorError(.invalidRequest, "Make 1 to \(maximum) devices at a time, not \(count).") }
        guard !topics.isEmpty, topics.count <= 100 else { throw EmulatorError(.invalidRequest, "Name the topics (apps) each device has: 1 to 100.") }
        for topic in topics {
            if let violation = RequestRules.violation(inBundleIdentifier: topic) { throw EmulatorError(.invalidRequest, violation.message) }
        }
        // Eight at a time: each is two writes of the store, whose waits overlap.
        let made: [SimulatedDevice]
        do {
            made = try await withThrowingTaskGroup(of: (Int, SimulatedDevice).self) { group in
                var made = [SimulatedDevice?](repeating: nil, count: count)
                var started = 0
                while started < min(8, count) {
                    let index = started
                    group.addTask { (index, try await self.makeOne(topics: topics, environment: environment, acknowledgement: acknowledgement)) }
                    started += 1
                }
                while let (index, device) = try await group.next() {
                    made[index] = device
                    guard started < count else { continue }
                    let next = started
                    group.addTask { (next, try await self.makeOne(topics: topics, environment: environment, acknowledgement: acknowledgement)) }
                    started += 1
                }
                return made.compactMap { $0 }
            }
        } catch {
            throw EmulatorError(.internalError, "The emulator could not make its devices: \(error)")
        }
        // Kept in the order asked for, whichever was written first.
        state.withLock { state in
            for device in made {
                state.devices[device.deviceID] = Device(device: device)
                state.order.append(device.deviceID)
                for token in device.tokens.values { state.deviceByToken[token] = device.deviceID }
            }
        }
        for device in made { setOnline(device.deviceID, true) }
        return made.map { device in state.withLock { $0.devices[device.deviceID]?.device } ?? device }
    }

    /// Enrolls one device in the store and registers its apps: a simulated device, not linked yet.
    private func makeOne(topics: [String], environment: APNs.Environment, acknowledgement: AcknowledgementTiming) async throws -> SimulatedDevice {
        let credential = try await DeviceLinks.enroll(in: store, prefix: "sim-", at: clock.now())
        let deviceID = String(credential.prefix { $0 != "." })
        var tokens: [String: String] = [:]
        for topic in topics {
            tokens[topic] = try await core.register(deviceID: deviceID, bundleIdentifier: topic, environment: environment, at: clock.now()).token
        }
        return SimulatedDevice(deviceID: deviceID, tokens: tokens, environment: environment, acknowledgement: acknowledgement, isOnline: false,
                               uninstalled: [])
    }

    /// Every simulated device, in the order they were made.
    package var all: [SimulatedDevice] {
        state.withLock { state in state.order.compactMap { state.devices[$0]?.device } }
    }

    /// The simulated device holding `token`, if any.
    package func device(holding token: String) -> SimulatedDevice? {
        state.withLock { state in state.deviceByToken[token].flatMap { state.devices[$0]?.device } }
    }

    /// Links every device that no `offline` fault names, and unlinks those one names.
    package func reconcile(offline faults: [Fault]) {
        let changes = state.withLock { state -> [(String, Bool)] in
            state.order.compactMap { deviceID in
                guard let device = state.devices[deviceID]?.device else { return nil }
                let offline = faults.contains { fault in Self.names(fault, device) }
                return offline == !device.isOnline ? nil : (deviceID, !offline)
            }
        }
        for (deviceID, online) in changes { setOnline(deviceID, online) }
    }

    /// Removes the app of each of the fault's devices and topics: its tokens answer `410 Unregistered`.
    package func uninstall(_ fault: Fault) async throws(EmulatorError) -> [String] {
        let targets = state.withLock { state in
            state.order.compactMap { state.devices[$0]?.device }.filter { Self.names(fault, $0) }
        }
        var ended: [String] = []
        for device in targets {
            for (topic, token) in device.tokens.sorted(by: { $0.key < $1.key }) where !device.uninstalled.contains(topic) {
                if let wanted = fault.token, wanted != token { continue }
                if let wanted = fault.topic, wanted != topic { continue }
                do {
                    try await core.unregister(deviceID: device.deviceID, bundleIdentifier: topic, at: clock.now(),
                                              because: "the app was uninstalled (emulator fault \(fault.id))")
                } catch {
                    throw EmulatorError(.internalError, "The emulator could not uninstall \(topic): \(error.message)")
                }
                state.withLock { _ = $0.devices[device.deviceID]?.device.uninstalled.insert(topic) }
                ended.append(token)
            }
        }
        return ended
    }

    /// Whether a device fault names the device: one of its tokens or topics, or every device.
    private static func names(_ fault: Fault, _ device: SimulatedDevice) -> Bool {
        if let token = fault.token, !device.tokens.values.contains(token) { return false }
        if let topic = fault.topic, device.tokens[topic] == nil { return false }
        return true
    }

    /// The pushes the device holding `token` received for it, in order: at once, or once there are
    /// `count` of them, or what there is after `wait` seconds.
    package func received(token: String, count: Int = 0, wait: TimeInterval = 0) async throws(EmulatorError) -> [ReceivedPush] {
        guard device(holding: token) != nil else {
            throw EmulatorError(.notFound, "No simulated device holds the token \(token).")
        }
        if wait > 0 {
            // Whichever comes first: the pushes, or the end of the wait.
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await self.arrival(of: count, for: token) }
                group.addTask { try? await Task.sleep(for: .milliseconds(Int64(min(wait, 300) * 1000))) }
                await group.next()
                group.cancelAll()
            }
        }
        return state.withLock { $0.inbox[token] ?? [] }
    }

    /// Returns once the inbox of `token` holds `count` pushes, or when cancelled.
    private func arrival(of count: Int, for token: String) async {
        let id = UUID()
        await withTaskCancellationHandler {
            await withCheckedContinuation { arrived in
                let now = state.withLock { state -> Bool in
                    // Cancelled before it waited: the cancellation found no waiter to resume.
                    if Task.isCancelled || state.inbox[token, default: []].count >= count { return true }
                    state.waiters[id] = (token, count, arrived)
                    return false
                }
                if now { arrived.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.arrived.resume()
        }
    }

    /// How many pushes each token's device received for it, for the tokens that received any.
    package var receivedCounts: [String: Int] {
        state.withLock { $0.inbox.mapValues(\.count) }
    }

    /// Forgets what every device received.
    package func clearInboxes() {
        state.withLock { $0.inbox.removeAll() }
    }

    private func setOnline(_ deviceID: String, _ online: Bool) {
        if online {
            let link = SimulatedLink(deviceID: deviceID, devices: self, links: links)
            let linked = state.withLock { state -> Bool in
                guard state.devices[deviceID] != nil, state.devices[deviceID]?.transport == nil else { return false }
                state.devices[deviceID]?.transport = link
                state.devices[deviceID]?.device.isOnline = true
                return true
            }
            if linked { links.attach(link.start()) }
        } else {
            let link = state.withLock { state -> SimulatedLink? in
                defer {
                    state.devices[deviceID]?.transport = nil
                    state.devices[deviceID]?.device.isOnline = false
                }
                return state.devices[deviceID]?.transport
            }
            link?.session?.close(code: .goingAway, reason: "offline")
        }
    }

    /// A link's pushes reached the device: kept in its inbox, then acknowledged as the device does.
    fileprivate func received(_ pushes: [DeviceLink.Push], on link: SimulatedLink) {
        let now = clock.now()
        let (acknowledgement, arrived) = state.withLock { state -> (AcknowledgementTiming, [CheckedContinuation<Void, Never>]) in
            for push in pushes {
                let received = ReceivedPush(
                    token: push.token, bundleIdentifier: push.bundleIdentifier, environment: push.environment, apnsID: push.apnsID,
                    uniqueID: push.uniqueID, pushType: push.pushType, priority: push.priority, collapseID: push.collapseID,
                    expiresAt: Date(timeIntervalSince1970: push.expiresAt), payload: push.payload,
                    acceptedAt: Date(timeIntervalSince1970: push.receivedAt), receivedAt: now
                )
                state.inbox[push.token, default: []].append(received)
            }
            let arrived = state.waiters.filter { _, waiter in state.inbox[waiter.token, default: []].count >= waiter.count }
            for id in arrived.keys { state.waiters[id] = nil }
            return (state.devices[link.deviceID]?.device.acknowledgement ?? .immediately, arrived.values.map(\.arrived))
        }
        for waiter in arrived { waiter.resume() }
        guard let last = pushes.last?.sequence, let session = link.session else { return }
        switch acknowledgement {
        case .immediately:
            links.received(.ack(through: last), on: session)
        case .after(let seconds):
            let links = self.links
            core.tasks.start {
                try? await Task.sleep(for: .milliseconds(Int64(seconds * 1000)))
                links.received(.ack(through: last), on: session)
            }
        case .never:
            break
        }
    }
}

/// A simulated device's link: what the gateway sends it goes to its inbox.
private final class SimulatedLink: DeviceLinkTransport {
    let deviceID: String
    private let devices: SimulatedDevices
    private let links: DeviceLinks
    private let attached = Mutex<LinkSession?>(nil)

    init(deviceID: String, devices: SimulatedDevices, links: DeviceLinks) {
        self.deviceID = deviceID
        self.devices = devices
        self.links = links
    }

    /// Starts the link: its session, with this link as its transport, until it closes.
    func start() -> LinkSession {
        let session = LinkSession(deviceID: deviceID, transport: self)
        attached.withLock { $0 = session }
        return session
    }

    /// The link's session while it is open.
    var session: LinkSession? { attached.withLock { $0 } }

    func send(_ messages: [DeviceLink.GatewayMessage]) {
        let pushes = messages.compactMap { message -> DeviceLink.Push? in
            if case .push(let push) = message { return push }
            return nil
        }
        if !pushes.isEmpty { devices.received(pushes, on: self) }
    }

    func close(code: WebSocketErrorCode, reason: String) {
        let closed = attached.withLock { attached in
            defer { attached = nil }
            return attached
        }
        if let closed { links.detach(closed) }
    }
}
