import Crypto
import CryptoExtras
import NotificationCore
package import Foundation

/// The device's passcode as the daemon keeps it: PBKDF2-SHA256 of the passcode with a random salt,
/// never the passcode itself, and the wrong attempts made since the last right one.
package struct DevicePasscode: Sendable, Hashable {
    package var salt: Data
    package var key: Data
    package var rounds: Int
    /// Wrong attempts in a row; a right one sets it back to 0.
    package var failures: Int
    /// No attempt is checked before this date, after too many wrong ones.
    package var retryAfter: Date?

    /// The lengths a passcode may have, in characters: iOS's shortest is 4 digits.
    package static let lengths = 4...32
    /// PBKDF2's rounds: the lowest the library accepts as safe.
    package static let defaultRounds = 210_000

    package init(salt: Data, key: Data, rounds: Int, failures: Int = 0, retryAfter: Date? = nil) {
        self.salt = salt
        self.key = key
        self.rounds = rounds
        self.failures = failures
        self.retryAfter = retryAfter
    }

    /// Refuses a passcode of the wrong length.
    package static func validate(_ passcode: String) throws(DaemonError) {
        guard lengths.contains(passcode.count) else {
            throw DaemonError(.invalidRequest, "A passcode has \(lengths.lowerBound) to \(lengths.upperBound) characters; this one has \(passcode.count).")
        }
    }

    /// Keeps `passcode`, with a new salt.
    package static func make(_ passcode: String) throws(DaemonError) -> DevicePasscode {
        try validate(passcode)
        var generator = SystemRandomNumberGenerator()
        let salt = Data((0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
        return DevicePasscode(salt: salt, key: derive(passcode, salt: salt, rounds: defaultRounds), rounds: defaultRounds)
    }

    /// Whether `candidate` is the passcode, compared in constant time.
    package func matches(_ candidate: String) -> Bool {
        constantTimeEqual(Self.derive(candidate, salt: salt, rounds: rounds), key)
    }

    /// How long the person waits after `failures` wrong attempts in a row, as iOS makes them wait:
    /// nothing for the first five, then 1, 5, 15 and 60 minutes.
    package static func wait(after failures: Int) -> TimeInterval {
        switch failures {
        case ..<6: 0
        case 6: 60
        case 7: 5 * 60
        case 8: 15 * 60
        default: 60 * 60
        }
    }

    private static func derive(_ passcode: String, salt: Data, rounds: Int) -> Data {
        // The parameters are fixed and valid, so this cannot fail.
        let key = try! KDF.Insecure.PBKDF2.deriveKey(from: Data(passcode.utf8), salt: salt, using: .sha256, outputByteCount: 32, unsafeUncheckedRounds: rounds)
        return key.withUnsafeBytes { Data($0) }
    }
}
