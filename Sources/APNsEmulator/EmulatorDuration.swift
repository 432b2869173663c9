package import Foundation

/// Durations as people write them on a command line and in the control API: `61m`, `90s`, `2h`,
/// `1d`, `1h30m`, or a number of seconds.
package enum EmulatorDuration {
    /// The seconds `text` says, or nil when it is not a duration.
    package static func seconds(_ text: String) -> TimeInterval? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let plain = Double(trimmed) { return plain >= 0 && plain.isFinite ? plain : nil }
        var total: TimeInterval = 0
        var number = ""
        var sawUnit = false
        for character in trimmed {
            if character.isASCII, character.isNumber || character == "." {
                number.append(character)
                continue
            }
            let unit: TimeInterval
            switch character {
            case "s": unit = 1
            case "m": unit = 60
            case "h": unit = 3_600
            case "d": unit = 86_400
            default: return nil
            }
            guard let value = Double(number) else { return nil }
            total += value * unit
            number = ""
            sawUnit = true
        }
        guard sawUnit, number.isEmpty, total.isFinite else { return nil }
        return total
    }

    /// `seconds` as people write it: `1h1m`, `1m30s`, `1.5s`, `0s`.
    package static func text(_ seconds: TimeInterval) -> String {
        if seconds < 60, seconds != seconds.rounded() {
            return "\((seconds * 1000).rounded() / 1000)s"
        }
        var left = Int(seconds.rounded())
        guard left > 0 else { return "0s" }
        var text = ""
        for (unit, name) in [(86_400, "d"), (3_600, "h"), (60, "m"), (1, "s")] where left >= unit {
            text += "\(left / unit)\(name)"
            left %= unit
        }
        return text
    }
}
