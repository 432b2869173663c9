package import Hummingbird
import Foundation

extension Parameters {
    /// A path parameter as the client wrote it before percent-encoding it: the router matches the raw
    /// path, so a notification identifier with a space or a slash arrives as `%20` or `%2F`.
    package func decoded(_ name: String) throws -> String {
        let raw = try require(name)
        return raw.removingPercentEncoding ?? raw
    }
}
