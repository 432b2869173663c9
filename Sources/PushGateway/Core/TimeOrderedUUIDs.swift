package import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
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

    /// The millisecond and the 12-bit counter of the last one made (RFC 9562 §6.2, method 1), and
    /// random bytes read from the system ahead, so that an identifier costs no system call of its own.
    private let state = Mutex(State())

    private struct State: ~Copyable {
        var milliseconds: UInt64 = 0
        var counter: UInt16 = 0
        var random = RandomPool()
    }

    package init() {}

    /// A new identifier, after every one this maker made before.
    package func make(at date: Date = Date()) -> String {
        let now = UInt64(max(0, (date.timeIntervalSince1970 * 1000).rounded(.down)))
        let (milliseconds, counter, random) = state.withLock { state -> (UInt64, UInt16, UInt64) in
            if now > state.milliseconds {
                // A new millisecond: the counter starts low and random, leaving room to count up.
                state.milliseconds = now
                state.counter = UInt16(truncatingIfNeeded: state.random.next()) & 0x3FF
            } else if state.counter < 0xFFF {
                state.counter += 1
            } else {
                // The counter ran out within the millisecond: borrow the next one.
                state.milliseconds += 1
                state.counter = 0
            }
            return (state.milliseconds, state.counter, state.random.next())
        }
        var bytes = [UInt8](repeating: 0, count: 16)
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

/// The system's random bytes, read 4 KiB at a time: one system call for 512 identifiers instead of
/// one each (a system call per push was 2 % of the provider API's event loops under load).
private struct RandomPool: ~Copyable {
    private let words = UnsafeMutableBufferPointer<UInt64>.allocate(capacity: 512)
    /// The next word to hand out; all are used once `words.count`.
    private var position = 512

    deinit { words.deallocate() }

    mutating func next() -> UInt64 {
        if position == words.count {
            refill()
            position = 0
        }
        defer { position += 1 }
        return words[position]
    }

    private func refill() {
        // The system's generator (getrandom on Linux), 4 KiB in one call.
        arc4random_buf(words.baseAddress!, words.count * MemoryLayout<UInt64>.size)
    }
}
