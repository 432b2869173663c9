/// Apple's 10-character identifiers of teams and signing keys (a JWT's `iss` and `kid`): upper-case
/// letters and digits, such as `ABCDE12345`.
package enum AppleIdentifier {
    /// Whether `text` is one.
    package static func isValid(_ text: String) -> Bool {
        text.count == 10 && text.allSatisfy { $0.isASCII && ($0.isUppercase || $0.isNumber) }
    }

    /// A new one, at random.
    package static func make() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        var generator = SystemRandomNumberGenerator()
        return String((0..<10).map { _ in alphabet.randomElement(using: &generator)! })
    }
}
