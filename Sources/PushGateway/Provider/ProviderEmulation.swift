import Foundation
package import NIOCore
package import NotificationCore

/// What an emulator of APNs changes of the provider API (`Docs/emulator.md`): faults scripted for
/// chosen pushes, provider tokens aged on a clock that moves when told, and the faults shown in the
/// delivery log. A gateway has none: its answers are the provider API's alone.
package struct ProviderEmulation: Sendable {
    /// The fault scripted for a push that passed every check of the provider API (headers, token,
    /// topic), if any; asked once for each such push, which it counts against its fault.
    package var fault: @Sendable (ProviderPush) -> InjectedFault?
    /// When a provider token was issued on the gateway's clock, given its text and its `iat` (seconds
    /// since 1970 on the provider's clock).
    package var tokenIssuedAt: @Sendable (_ token: Substring, _ issuedAt: Int64) -> Int64
    /// The delivery log's records of the faults injected for pushes whose `apns-id` or
    /// `apns-unique-id` is `id`, oldest first.
    package var injectedRecords: @Sendable (_ id: String) -> [DeliveryRecord]

    package init(
        fault: @escaping @Sendable (ProviderPush) -> InjectedFault?,
        tokenIssuedAt: @escaping @Sendable (Substring, Int64) -> Int64,
        injectedRecords: @escaping @Sendable (String) -> [DeliveryRecord]
    ) {
        self.fault = fault
        self.tokenIssuedAt = tokenIssuedAt
        self.injectedRecords = injectedRecords
    }
}

/// A fault the provider API injects for one push, in place of (or before) its own answer.
package enum InjectedFault: Sendable, Equatable {
    /// Answered with this status and reason; the push is not taken.
    case refuse(APNs.Rejection)
    /// Taken and answered as usual, that much later.
    case delay(TimeAmount)
    /// The connection is sent GOAWAY with `{"reason":…}`, naming the stream before the push's as
    /// the last processed (the push is not taken, and may be sent again), and closes.
    case goAway(reason: APNs.Reason)
    /// The push's stream is reset (RST_STREAM `INTERNAL_ERROR`) without an answer; it is not taken.
    case resetStream
    /// The connection is closed at once, without GOAWAY; the push is not taken.
    case closeConnection
}

/// The delivery log as a provider reads it from an emulator: the gateway's records, with the faults
/// injected for the same pushes among their stages, and a record of its own for each push a fault
/// kept from being taken.
package struct EmulatedDeliveryLog: DeliveryLogReader {
    let log: any DeliveryLogReader
    let injected: @Sendable (String) -> [DeliveryRecord]

    package init(log: any DeliveryLogReader, injected: @escaping @Sendable (String) -> [DeliveryRecord]) {
        self.log = log
        self.injected = injected
    }

    package func deliveryRecords(matching id: String) async throws(GatewayError) -> [DeliveryRecord] {
        var records = try await log.deliveryRecords(matching: id)
        for record in injected(id) {
            if let index = records.firstIndex(where: { $0.uniqueID == record.uniqueID }) {
                records[index].stages = (records[index].stages + record.stages).sorted { $0.at < $1.at }
            } else {
                records.append(record)
            }
        }
        return records.sorted { ($0.stages.first?.at ?? .distantPast) < ($1.stages.first?.at ?? .distantPast) }
    }
}
