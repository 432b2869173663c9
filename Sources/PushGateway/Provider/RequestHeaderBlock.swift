import NIOHPACK

/// HTTP/2's rules for a request's header block and its trailers (RFC 9113 §8.2 and §8.3), checked
/// on the bytes of each field in one pass. A block that breaks one makes its request malformed: the
/// provider API resets the stream with `PROTOCOL_ERROR`, as the RFC asks.
///
/// Checked on the fields as HPACK decoded them, in one pass (a check through `Substring`s and lookups,
/// as NIOHTTP2 makes, was a tenth of the provider API's event loops' time); the provider API's own
/// answers are well-formed by construction. The rules, and what each means here:
///
/// - field names are lower-case tokens (`tchar` without `A-Z`); pseudo-header fields come first,
///   once each, and are the request's (`:method`, `:scheme`, `:path` not empty, `:authority`);
///   `:method`, `:scheme` and `:path` are all present, except in a `CONNECT` (`:method` and
///   `:authority` only), and trailers have none;
/// - no connection-specific field (`connection`, `keep-alive`, `proxy-connection`,
///   `transfer-encoding`, `upgrade`), and `te` only as `trailers` (not checked in trailers);
/// - no NUL, CR or LF in a value, and no control character, space or DEL in a pseudo-header's.
enum RequestHeaderBlock {
    /// Whether `block` is a well-formed request header block (`isTrailers`: a trailer block).
    static func isWellFormed(_ block: HPACKHeaders, isTrailers: Bool) -> Bool {
        var seen = PseudoHeaders()
        var regularFieldSeen = false
        var isConnect = false
        for (name, value, _) in block {
            guard let first = name.utf8.first else { return false }
            if first == UInt8(ascii: ":") {
                guard !isTrailers, !regularFieldSeen else { return false }
                let field: PseudoHeaders
                switch name {
                case ":method":
                    field = .method
                    isConnect = value == "CONNECT"
                case ":scheme": field = .scheme
                case ":path":
                    guard !value.isEmpty else { return false }
                    field = .path
                case ":authority": field = .authority
                default: return false
                }
                guard !seen.contains(field), allBytes(of: value, satisfy: isPseudoHeaderValueByte) else { return false }
                seen.insert(field)
            } else {
                regularFieldSeen = true
                guard allBytes(of: name, satisfy: isLowerCaseTokenByte) else { return false }
                switch name {
                case "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade": return false
                case "te" where !isTrailers && value != "trailers": return false
                default: break
                }
                guard allBytes(of: value, satisfy: isFieldValueByte) else { return false }
            }
        }
        if isTrailers { return true }
        return isConnect ? seen == [.method, .authority] : seen.isSuperset(of: [.method, .scheme, .path])
    }

    private struct PseudoHeaders: OptionSet {
        var rawValue: UInt8
        static let method = PseudoHeaders(rawValue: 1)
        static let scheme = PseudoHeaders(rawValue: 2)
        static let path = PseudoHeaders(rawValue: 4)
        static let authority = PseudoHeaders(rawValue: 8)
    }

    private static func allBytes(of string: String, satisfy rule: (UInt8) -> Bool) -> Bool {
        if let result = string.utf8.withContiguousStorageIfAvailable({ bytes in bytes.allSatisfy(rule) }) { return result }
        return string.utf8.allSatisfy(rule)
    }

    /// RFC 9110's `tchar` without upper-case letters: `!#$%&'*+-.^_`|~`, digits, `a-z`.
    private static func isLowerCaseTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x21, 0x23...0x27, 0x2A, 0x2B, 0x2D, 0x2E, 0x30...0x39, 0x5E...0x7A, 0x7C, 0x7E: true
        default: false
        }
    }

    private static func isFieldValueByte(_ byte: UInt8) -> Bool {
        byte != 0x00 && byte != 0x0A && byte != 0x0D
    }

    /// No pseudo-header's grammar admits a control character, a space or DEL.
    private static func isPseudoHeaderValueByte(_ byte: UInt8) -> Bool {
        byte > 0x20 && byte != 0x7F
    }
}
