package import Hummingbird
import Foundation
import NotificationCore
import NotificationEngine

extension Parameters {
    /// A path parameter as the client wrote it before percent-encoding it: the router matches the raw
    /// path, so a notification identifier with a space or a slash arrives as `%20` or `%2F`.
    ///
    /// - Throws: `invalidRequest` for a segment whose percent-encoding is not UTF-8, or that names a
    ///   control character (`%00` ends a string on disk, so `com.example.todo%00x` would address
    ///   `com.example.todo`).
    package func decoded(_ name: String) throws -> String {
        let raw = try require(name)
        guard let decoded = raw.removingPercentEncoding else {
            throw DaemonError(.invalidRequest, "The path segment \(raw.debugDescription) is not percent-encoded UTF-8.")
        }
        if let control = decoded.unicodeScalars.first(where: RequestRules.isControl) {
            throw DaemonError(
                .invalidRequest,
                "A path segment has no control characters; \(raw.debugDescription) has U+\(String(control.value, radix: 16, uppercase: true))."
            )
        }
        return decoded
    }
}
