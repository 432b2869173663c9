package import Foundation
import Synchronization

/// When each provider token was issued on the emulator's clock, fixed the first time the token
/// is seen (``EmulatorClock``).
///
/// A provider signs its token with its own clock's `iat`: the system's clock, which the emulator's
/// runs ahead of once moved, or a clock moved with the emulator's (a test's fake time). Its `iat` is
/// read on whichever of the two it is nearer to when first seen, and the token ages on the emulator's
/// clock from there. So a token cached before the clock moved 61 minutes is an hour old afterwards
/// (`ExpiredProviderToken`), and one the provider signs after the move is new, whichever clock it
/// signs with. With the clocks together (the clock never moved) it is the `iat` itself.
package final class ProviderTokenIssues: Sendable {
    private let issued = Mutex<[String: Int64]>([:])
    private let clock: EmulatorClock
    /// Tokens remembered at most; then the oldest half are forgotten (a provider refreshes its token
    /// every 20 to 60 minutes: thousands are years of one provider's).
    static let capacity = 10_000

    package init(clock: EmulatorClock) {
        self.clock = clock
    }

    /// The token's issue time on the emulator's clock, in seconds since 1970.
    package func issuedAt(token: Substring, iat: Int64) -> Int64 {
        let key = String(token)
        if let known = issued.withLock({ $0[key] }) { return known }
        let issuedAt = Self.issuedAt(iat: iat, emulatorNow: clock.now(), systemNow: clock.systemNow())
        return issued.withLock { issued in
            if let known = issued[key] { return known }
            if issued.count >= Self.capacity {
                let ordered = issued.sorted { $0.value < $1.value }
                for (token, _) in ordered.prefix(Self.capacity / 2) { issued[token] = nil }
            }
            issued[key] = issuedAt
            return issuedAt
        }
    }

    /// A new token's issue time on the emulator's clock: its `iat`, read on the clock it is nearer
    /// to (the system's, shifted by how far the emulator's runs ahead of it; or the emulator's).
    package static func issuedAt(iat: Int64, emulatorNow: Date, systemNow: Date) -> Int64 {
        let emulator = emulatorNow.timeIntervalSince1970, system = systemNow.timeIntervalSince1970
        let value = Double(iat)
        guard abs(value - system) < abs(value - emulator) else { return iat }
        return iat + Int64((emulator - system).rounded(.down))
    }
}
