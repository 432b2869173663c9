package import Foundation
import NotificationCore
import Synchronization

/// Makes UUIDs of version 7 (RFC 9562), in APNs' lower-case canonical form: the time in milliseconds first,
/// then a counter within the millisecond, then randomness. Those made one after another in a process
/// sort in that order, so the store's indexes on them grow at their end instead of being written all
/// over (a random UUID dirties a different page for each push, and every dirty page is written again
/// at each commit).
package final class TimeOrderedUUIDs: Sendable {
    /// The gateway's.
    package static let shared = TimeOrderedUUIDs()

    /// The millisecond and the 12-bit counter of the last one made (RFC 9562 §6.2, method 1).
    private let last = Mutex<(milliseconds: UInt64, counter: UInt16)>((0, 0))

    package init() {}

    /// A new identifier, after every one this maker made before.
    package func make(at date: Date = Date()) -> String {
        var generator = SystemRandomNumberGenerator()
        let now = UInt64(max(0, (date.timeIntervalSince1970 * 1000).rounded(.down)))
        let (milliseconds, counter) = last.withLock { last -> (UInt64, UInt16) in
            if now > last.milliseconds {
                // A new millisecond: the counter starts low and random, leaving room to count up.
                last = (now, UInt16.random(in: 0..<0x400, using: &generator))
            } else if last.counter < 0xFFF {
                last.counter += 1
            } else {
                // The counter ran out within the millisecond: borrow the next one.
                last = (last.milliseconds + 1, 0)
            }
            return last
        }
        var bytes = [UInt8](repeating: 0, count: 16)
        let random = generator.next() as UInt64
        for index in 0..<6 { bytes[index] = UInt8(truncatingIfNeeded: milliseconds >> (8 * (5 - index))) }
        bytes[6] = 0x70 | UInt8(truncatingIfNeeded: counter >> 8)  // version 7, then the counter
        bytes[7] = UInt8(truncatingIfNeeded: counter)
        for index in 8..<16 { bytes[index] = UInt8(truncatingIfNeeded: random >> (8 * (index - 8))) }
        bytes[8] = 0x80 | (bytes[8] & 0x3F)  // variant 10
        return Self.canonical(bytes)
    }

    /// The canonical text of a UUID's 16 bytes: lower-case hexadecimal in groups of 8, 4, 4, 4 and 12.
    /// (`UUID.uuidString` formats with `snprintf`, and then it had to be lower-cased: 1 % of the
    /// gateway's time under a load of pushes.)
    private static func canonical(_ bytes: [UInt8]) -> String {
        hexadecimal(bytes, dashesBefore: [4, 6, 8, 10])
    }
}
