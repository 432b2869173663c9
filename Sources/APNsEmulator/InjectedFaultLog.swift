import Foundation
import NotificationCore
import PushGateway
import Synchronization

/// The faults the emulator injected, push by push, for the delivery log: each an `injected` stage
/// with what the fault did, on a record of the push (``ProviderEmulation/injectedRecords``).
final class InjectedFaultLog: Sendable {
    private let records = Mutex<[DeliveryRecord]>([])
    /// Records kept at most; the oldest go first.
    static let capacity = 100_000

    /// Notes that `fault` met `push` at `now`.
    func record(_ fault: Fault, for push: ProviderPush, at now: Date) {
        // As the gateway would have kept it: 30 days without apns-expiration, for now only with 0.
        let expiresAt: Date = switch push.headers.expiration {
        case nil: now.addingTimeInterval(30 * 86_400)
        case 0?: now
        case let seconds?: Date(timeIntervalSince1970: TimeInterval(seconds))
        }
        let record = DeliveryRecord(
            uniqueID: push.uniqueID, apnsID: push.headers.apnsID, teamID: push.teamID, credential: push.keyID.isEmpty ? "certificate" : "key \(push.keyID)",
            bundleIdentifier: push.bundleIdentifier, environment: push.environment, deviceID: "", token: push.headers.deviceToken,
            pushType: push.headers.pushType, priority: push.headers.priority, payloadBytes: push.payload.count, collapseID: push.headers.collapseID,
            expiresAt: expiresAt, stages: [DeliveryLog.Entry(.injected, at: now, detail: "\(fault.summary) (emulator fault \(fault.id))")]
        )
        records.withLock { records in
            if let index = records.lastIndex(where: { $0.uniqueID == record.uniqueID }) {
                records[index].stages += record.stages
                return
            }
            if records.count >= Self.capacity { records.removeFirst(Self.capacity / 10) }
            records.append(record)
        }
    }

    /// The records of the pushes whose `apns-id` or `apns-unique-id` is `id`, oldest first.
    func records(matching id: String) -> [DeliveryRecord] {
        let lowered = id.lowercased()
        return records.withLock { records in records.filter { $0.apnsID.lowercased() == lowered || $0.uniqueID.lowercased() == lowered } }
    }
}
