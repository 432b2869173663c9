import Foundation

/// `count` random bytes, as lower-case hexadecimal: device tokens (32 bytes, as APNs gives them),
/// device identifiers and secrets.
package func randomHex(bytes count: Int) -> String {
    var generator = SystemRandomNumberGenerator()
    return (0..<count).map { _ in String(format: "%02x", UInt8.random(in: .min ... .max, using: &generator)) }.joined()
}
