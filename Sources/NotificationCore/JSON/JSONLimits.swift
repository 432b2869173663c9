package import Foundation

/// The limits every JSON reader and writer of the system shares, at every boundary: the provider API,
/// the local API, the device link, the web center's composer and the stores.
///
/// Foundation's readers (`JSONDecoder`, `JSONSerialization`) refuse a document that nests deeper than
/// ``maximumDocumentDepth``, so no writer of the system writes one (``StreamingJSONEncoder`` refuses
/// it). A value that comes from outside (a push's payload, an app's `userInfo`) travels inside the
/// system's own messages and stored forms, which wrap it in a few levels of their own; it may nest at
/// most ``maximumValueDepth``, so that every form it takes can be read back, always. What breaks a
/// limit is refused where it enters, before anything is stored: a provider gets `400
/// BadRequestPayload`, an app the rule it broke.
package enum JSONLimits {
    /// The deepest any JSON document of the system nests (arrays and objects inside one another, the
    /// outermost counted): what Foundation's readers take.
    package static let maximumDocumentDepth = 512

    /// The deepest a value from outside nests: a push's payload (its outer object counted) or a
    /// request's `userInfo` (itself counted). Far above what any notification carries, and far below
    /// ``maximumDocumentDepth``: the system's envelopes around a value take a dozen levels at most.
    package static let maximumValueDepth = 64
}

extension JSONLimits {
    /// The deepest a message of the system nests (a request an app adds, an app's reply, a device's
    /// report, an extension's answer): a value at ``maximumValueDepth`` inside its envelope.
    package static let maximumMessageDepth = maximumValueDepth + 16

    /// Decodes a message that comes from another process with `JSONDecoder`, after refusing, without
    /// reading it, one that nests deeper than ``maximumMessageDepth``: `JSONDecoder` spends time
    /// quadratic in the depth on a document it then refuses (a second of CPU for one 500 levels deep).
    ///
    /// - Throws: `DecodingError.dataCorrupted` for a message too deep, or `JSONDecoder`'s error.
    package static func decode<T: Decodable>(_ type: T.Type, from bytes: some Collection<UInt8>, with decoder: JSONDecoder = JSONDecoder()) throws -> T {
        guard !nests(bytes, deeperThan: maximumMessageDepth) else {
            throw DecodingError.dataCorrupted(DecodingError.Context(
                codingPath: [], debugDescription: "The JSON nests deeper than \(maximumMessageDepth) levels, more than any message of the system."
            ))
        }
        return try decoder.decode(T.self, from: Data(bytes))
    }

    /// Whether the JSON in `bytes` nests deeper than `limit`: its brackets outside strings counted,
    /// nothing else checked.
    package static func nests(_ bytes: some Collection<UInt8>, deeperThan limit: Int) -> Bool {
        var depth = 0
        var inString = false
        var escaped = false
        for byte in bytes {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                if depth > limit { return true }
            case UInt8(ascii: "]"), UInt8(ascii: "}"): depth -= 1
            default: break
            }
        }
        return false
    }
}
