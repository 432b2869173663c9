package import Foundation

/// What a provider's test needs to reach a running emulator, as `GET /v1/emulator` gives it and the
/// emulator writes it to its endpoints file (`Docs/emulator.md`).
package struct EmulatorDocument: Codable, Sendable, Hashable {
    /// A simulated device's tokens.
    package struct Device: Codable, Sendable, Hashable {
        package var deviceID: String
        /// Each topic's token.
        package var tokens: [String: String]
        package var environment: String
        /// `immediately`, `never`, or a duration such as `2s`.
        package var acknowledge: String
        package var online: Bool
    }

    /// The emulator's process.
    package var pid: Int32
    /// The provider API's sandbox endpoint, such as `https://localhost:41235`.
    package var sandbox: String
    /// The provider API's production endpoint.
    package var production: String
    /// Where a real daemon links, such as `wss://localhost:41237`.
    package var deviceLink: String
    /// The control API, such as `http://127.0.0.1:41238`.
    package var control: String
    /// The certificate authority the endpoints' certificate is issued by: a client trusts it.
    package var caFile: String
    package var caPEM: String
    /// The team whose key signs the provider's tokens (the JWT's `iss`).
    package var teamID: String
    /// The signing key's identifier (the JWT's `kid`).
    package var keyID: String
    /// The signing key, a `.p8` file.
    package var keyFile: String
    package var keyPEM: String
    /// Each topic's tokens, one per simulated device, in the order the devices were made.
    package var topics: [String: [String]]
    package var devices: [Device]
    /// Whether the emulator's clock moves only when told.
    package var frozenClock: Bool
    /// The folder the emulator keeps its state in while it runs; removed when it stops.
    package var folder: String

    /// The document as pretty JSON, keys sorted.
    package func json() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)) ?? Data("{}".utf8)
    }

    /// The document as shell variables (`UNOTIFY_EMULATOR_SANDBOX=…`), for `source` in a script.
    package func shellVariables() -> String {
        var lines = [
            ("SANDBOX", sandbox), ("PRODUCTION", production), ("DEVICE_LINK", deviceLink), ("CONTROL", control), ("CA_FILE", caFile),
            ("TEAM_ID", teamID), ("KEY_ID", keyID), ("KEY_FILE", keyFile),
        ].map { "UNOTIFY_EMULATOR_\($0.0)=\(Self.quoted($0.1))" }
        for (topic, tokens) in topics.sorted(by: { $0.key < $1.key }) {
            let name = topic.uppercased().map { $0.isLetter || $0.isNumber ? String($0) : "_" }.joined()
            lines.append("UNOTIFY_EMULATOR_TOKENS_\(name)=\(Self.quoted(tokens.joined(separator: " ")))")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func quoted(_ value: String) -> String {
        "'" + value.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
