import Foundation

/// `bytes` as lower-case hexadecimal, two digits each: device tokens, hashes kept of keys and secrets,
/// and, with a `-` before each byte whose position is in `dashesBefore`, UUIDs.
package func hexadecimal(_ bytes: some Sequence<UInt8>, dashesBefore: [Int] = []) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var text: [UInt8] = []
    text.reserveCapacity(bytes.underestimatedCount * 2 + dashesBefore.count)
    for (position, byte) in bytes.enumerated() {
        if dashesBefore.contains(position) { text.append(UInt8(ascii: "-")) }
        text.append(digits[Int(byte >> 4)])
        text.append(digits[Int(byte & 0x0F)])
    }
    return String(decoding: text, as: UTF8.self)
}

/// `count` random bytes, as lower-case hexadecimal: device tokens (32 bytes, as APNs gives them),
/// device identifiers and secrets.
package func randomHex(bytes count: Int) -> String {
    var generator = SystemRandomNumberGenerator()
    return hexadecimal((0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
}
