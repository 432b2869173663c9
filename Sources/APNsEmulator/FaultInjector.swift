import Foundation
import NIOCore
import NotificationCore
package import PushGateway
import Synchronization

/// The faults scripted on an emulator, and the provider API's side of them: what each push that
/// passed the API's checks meets (``ProviderEmulation``), and the delivery log's record of it.
package final class FaultInjector: Sendable {
    private let script = Mutex(FaultScript())
    private let log = InjectedFaultLog()
    private let clock: EmulatorClock
    private let tokenIssues: ProviderTokenIssues
    private let deviceFaultEnded: @Sendable () -> Void

    /// - Parameter deviceFaultEnded: called when a push ends a device fault (the last of the pushes
    ///   an `offline` fault was for): its devices come back.
    package init(clock: EmulatorClock, deviceFaultEnded: @escaping @Sendable () -> Void = {}) {
        self.clock = clock
        tokenIssues = ProviderTokenIssues(clock: clock)
        self.deviceFaultEnded = deviceFaultEnded
    }

    /// What the provider API of an emulator with these faults changes: the faults pushes meet,
    /// provider tokens aged on the emulator's clock, the faults in the delivery log.
    package var emulation: ProviderEmulation {
        ProviderEmulation(
            fault: { [self] push in meet(push) },
            tokenIssuedAt: { [tokenIssues] token, iat in tokenIssues.issuedAt(token: token, iat: iat) },
            injectedRecords: { [log] id in log.records(matching: id) }
        )
    }

    /// The delivery log's records of the faults injected for pushes whose `apns-id` or
    /// `apns-unique-id` is `id`.
    package func injectedRecords(matching id: String) -> [DeliveryRecord] {
        log.records(matching: id)
    }

    /// The faults scripted, in order.
    package var faults: [Fault] { script.withLock { $0.faults } }

    /// Adds a fault; returns it with its identifier.
    package func add(_ fault: Fault) -> Fault { script.withLock { $0.add(fault) } }

    /// Removes a fault; returns it, or nil when there is none with that identifier.
    package func remove(_ id: Int) -> Fault? { script.withLock { $0.remove(id) } }

    /// Removes every fault.
    package func removeAll() { script.withLock { $0.removeAll() } }

    /// The `offline` faults in force now.
    package var offline: [Fault] { script.withLock { $0.offline(at: clock.now()) } }

    /// What a push meets: the fault for its answer, if any; each fault it meets is noted in the
    /// delivery log.
    func meet(_ push: ProviderPush) -> InjectedFault? {
        let now = push.receivedAt
        let met = script.withLock {
            $0.meet(token: push.headers.deviceToken, topic: push.headers.topic, bundleIdentifier: push.bundleIdentifier, at: now)
        }
        for fault in met.device { log.record(fault, for: push, at: now) }
        if met.device.contains(where: { $0.remaining == 0 }) { deviceFaultEnded() }
        guard let fault = met.answer else { return nil }
        log.record(fault, for: push, at: now)
        switch fault.action {
        case .status(let reason):
            let timestamp = reason.status == 410 ? Int64((now.timeIntervalSince1970 * 1000).rounded(.down)) : nil
            return .refuse(APNs.Rejection(reason, timestamp: timestamp))
        case .delay(let seconds): return .delay(.nanoseconds(Int64(seconds * 1_000_000_000)))
        case .goAway(let reason): return .goAway(reason: reason)
        case .resetStream: return .resetStream
        case .closeConnection: return .closeConnection
        case .offline, .uninstalled: return nil
        }
    }
}
