import Foundation
import NotificationCore
import PushGateway
import Testing

/// The identifiers the gateway makes (`apns-unique-id`, and `apns-id` when the provider sends none):
/// canonical UUIDs, as APNs', that sort in the order they were made.
@Suite struct TimeOrderedUUIDsTests {
    @Test func theyAreCanonicalVersion7UUIDsInTheOrderTheyWereMade() {
        let maker = TimeOrderedUUIDs()
        let start = Date(timeIntervalSince1970: 1_795_000_000.123)
        let ids = (0..<1000).map { maker.make(at: start.addingTimeInterval(Double($0) / 1000)) }
        for id in ids {
            #expect(APNs.isCanonicalUUID(id), "\(id)")
            #expect(id == id.lowercased())
            #expect(UUID(uuidString: id)?.uuidString.lowercased() == id, "the same UUID read back")
            let characters = Array(id)
            #expect(characters[14] == "7", "version 7: \(id)")
            #expect("89ab".contains(characters[19]), "variant 10: \(id)")
        }
        #expect(ids == ids.sorted(), "out of order at \(zip(ids, ids.dropFirst()).first { $0 >= $1 }.map { "\($0)" } ?? "")")
        #expect(Set(ids).count == ids.count)
        // The first 48 bits are the milliseconds since 1970.
        let milliseconds = UInt64(String(ids[0].replacingOccurrences(of: "-", with: "").prefix(12)), radix: 16)
        #expect(milliseconds == 1_795_000_000_123)
        // Made in the same millisecond (or with the clock set back), they still differ and sort in order.
        let later = (0..<5000).map { _ in maker.make(at: start) }
        #expect(later.first! > ids.last!)
        #expect(later == later.sorted() && Set(later).count == later.count)
        // Their last 62 bits are random: read from the system ahead, never handed out twice.
        let tails = (ids + later).map { $0.suffix(12) }
        #expect(Set(tails).count == tails.count)
    }
}
