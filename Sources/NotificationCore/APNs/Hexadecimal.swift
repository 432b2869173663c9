import Foundation

/// `bytes` as lower-case hexadecimal, two digits each: device tokens, hashes kept of keys and secrets,
/// and, with a `-` before each byte whose position is in `dashesBefore` (ascending), UUIDs.
///
/// One pass into the string's own storage, over the bytes as one buffer: called from other modules,
/// a generic loop went through the sequence's witness table for every byte.
package func hexadecimal(_ bytes: some Sequence<UInt8>, dashesBefore: [Int] = []) -> String {
    if let text = bytes.withContiguousStorageIfAvailable({ hexadecimal(UnsafeRawBufferPointer($0), dashesBefore: dashesBefore) }) {
        return text
    }
    return Array(bytes).withUnsafeBytes { hexadecimal($0, dashesBefore: dashesBefore) }
}

private func hexadecimal(_ bytes: UnsafeRawBufferPointer, dashesBefore: [Int]) -> String {
    String(unsafeUninitializedCapacity: bytes.count * 2 + dashesBefore.count) { text in
        var written = 0
        var dashes = dashesBefore.makeIterator()
        var nextDash = dashes.next()
        for (position, byte) in bytes.enumerated() {
            if position == nextDash {
                text[written] = UInt8(ascii: "-")
                written += 1
                nextDash = dashes.next()
            }
            text[written] = hexadecimalDigit(byte >> 4)
            text[written + 1] = hexadecimalDigit(byte & 0x0F)
            written += 2
        }
        return written
    }
}

private func hexadecimalDigit(_ value: UInt8) -> UInt8 {
    value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
}

/// `count` random bytes, as lower-case hexadecimal: device tokens (32 bytes, as APNs gives them),
/// device identifiers and secrets.
package func randomHex(bytes count: Int) -> String {
    var generator = SystemRandomNumberGenerator()
    return hexadecimal((0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
}
