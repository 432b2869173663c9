import Foundation
import NotificationCore

/// The body of `GET /1/delivery-log/<id>` on the provider API: every logged push with that `apns-id`
/// (or `apns-unique-id`) that the asking provider could have sent, each with its stages
/// (`Docs/delivery-log.md`). Timestamps are milliseconds since 1970, as in APNs' `410` bodies.
package struct DeliveryLogResponse: Sendable, Hashable, Codable {
    package struct Push: Sendable, Hashable, Codable {
        package var apnsId: String
        package var apnsUniqueId: String
        package var topic: String
        package var deviceToken: String
        package var pushType: String
        package var priority: Int
        package var payloadBytes: Int
        package var collapseId: String?
        /// Milliseconds since 1970: until when it could be delivered.
        package var expiration: Int64
        package var stages: [Stage]
    }

    package struct Stage: Sendable, Hashable, Codable {
        package var stage: String
        package var timestamp: Int64
        package var detail: String?
    }

    package var id: String
    package var pushes: [Push]

    /// Where the log is read: `GET /1/delivery-log/<apns-id or apns-unique-id>`.
    package static let pathPrefix = "/1/delivery-log/"

    /// The answer for an identifier the provider has no logged push under.
    package static let notFound = Array(#"{"reason":"NotFound"}"#.utf8)

    package init(id: String, records: [DeliveryRecord]) {
        self.id = id
        pushes = records.map { record in
            Push(
                apnsId: record.apnsID, apnsUniqueId: record.uniqueID, topic: record.bundleIdentifier + (record.pushType.topicSuffix ?? ""),
                deviceToken: record.token, pushType: record.pushType.rawValue, priority: record.priority, payloadBytes: record.payloadBytes,
                collapseId: record.collapseID, expiration: Self.milliseconds(record.expiresAt),
                stages: record.stages.map { Stage(stage: $0.stage.rawValue, timestamp: Self.milliseconds($0.at), detail: $0.detail) }
            )
        }
    }

    package static func json(id: String, records: [DeliveryRecord]) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return Array((try? encoder.encode(DeliveryLogResponse(id: id, records: records))) ?? Data(notFound))
    }

    private static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded(.down)) }
}
