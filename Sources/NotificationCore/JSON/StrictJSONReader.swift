/// Reads JSON that comes from outside the system, a push's payload above all, strictly: what it takes,
/// every reader of the system reads, and reads the same way; what it reads, the system can keep and
/// read back. The gateway checks a payload with it (building nothing) before storing it, and the
/// device reads the same payload with it into the values an app finds in `userInfo`.
///
/// It takes RFC 8259's grammar, and less than Foundation's readers do where they would disagree or
/// where the system could not keep the value:
/// - strings of valid UTF-8 without control characters, escapes as the RFC spells them, `\u`
///   escapes of UTF-16 surrogates only in pairs (Foundation refuses a lone one);
/// - numbers in the RFC's form whose value is a finite `Double` (Foundation refuses `1e400`), and not
///   a zero that a number not written as zero rounded to (`JSONDecoder` refuses `1e-400`);
/// - no key twice in one object (`JSONSerialization` keeps the last, `JSONDecoder` the first);
/// - no trailing comma and no byte-order mark (Foundation takes both; the RFC neither);
/// - nesting at most ``maximumDepth`` deep (``JSONLimits``).
///
/// Numbers are read as `JSONDecoder` reads them into a ``PropertyListValue``: a whole number that an
/// `Int` holds is an integer (`1.0` and `1e2` too), anything else a `Double`, correctly rounded
/// (`JSONSerialization` on Linux rounds some long fractions differently).
package struct StrictJSONReader: Sendable {
    /// Why bytes are not a document the system takes.
    package enum Failure: Error, Sendable, Hashable, CustomStringConvertible {
        /// Not JSON at `offset` (a byte the grammar does not allow there, or the end too soon).
        case malformed(offset: Int)
        /// A string with bytes that are not UTF-8, a control character, or a lone surrogate.
        case invalidString(offset: Int)
        /// A number that is not finite, or that rounds to zero, as a `Double`.
        case numberOutOfRange(offset: Int)
        /// A key that comes twice in one object.
        case duplicateKey(offset: Int)
        /// Nesting deeper than allowed.
        case tooDeep(limit: Int)
        /// Valid JSON, but not an object where one is wanted.
        case notAnObject

        package var description: String {
            switch self {
            case .malformed(let offset): "The JSON is malformed at byte \(offset)."
            case .invalidString(let offset): "The JSON has a string at byte \(offset) that is not valid UTF-8 text (a control character or a lone surrogate)."
            case .numberOutOfRange(let offset): "The JSON has a number at byte \(offset) that is too large or too small to keep."
            case .duplicateKey(let offset): "The JSON has a key at byte \(offset) that its object has already."
            case .tooDeep(let limit): "The JSON nests deeper than \(limit) levels."
            case .notAnObject: "The JSON is not an object."
            }
        }
    }

    /// The deepest the document may nest (the outermost array or object counted).
    package var maximumDepth: Int

    package init(maximumDepth: Int = JSONLimits.maximumValueDepth) {
        self.maximumDepth = maximumDepth
    }

    /// Checks that `bytes` are one JSON value, with white space around it only, building nothing.
    package func check(_ bytes: some Collection<UInt8>) -> Failure? {
        withBytes(bytes) { bytes in
            var scanner = JSONScanner(bytes: bytes, maximumDepth: maximumDepth, builds: false)
            do throws(Failure) {
                _ = try scanner.document()
                return nil
            } catch {
                return error
            }
        }
    }

    /// Checks that `bytes` are one JSON object, building nothing (a push's payload must be one).
    package func checkObject(_ bytes: some Collection<UInt8>) -> Failure? {
        withBytes(bytes) { bytes in
            var scanner = JSONScanner(bytes: bytes, maximumDepth: maximumDepth, builds: false)
            scanner.skipSpace()
            guard scanner.index < bytes.count, bytes[scanner.index] == UInt8(ascii: "{") else {
                return scanner.index < bytes.count && Self.startsValue(bytes[scanner.index]) ? .notAnObject : .malformed(offset: scanner.index)
            }
            return check(bytes)
        }
    }

    /// Reads the JSON object in `bytes`.
    package func object(_ bytes: some Collection<UInt8>) -> Result<[String: PropertyListValue], Failure> {
        withBytes(bytes) { bytes in
            var scanner = JSONScanner(bytes: bytes, maximumDepth: maximumDepth, builds: true)
            do throws(Failure) {
                guard case .dictionary(let object)? = try scanner.document() else { return .failure(.notAnObject) }
                return .success(object)
            } catch {
                return .failure(error)
            }
        }
    }

    private static func startsValue(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "["), UInt8(ascii: "\""), UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "-"),
             UInt8(ascii: "0")...UInt8(ascii: "9"): true
        default: false
        }
    }

    private func withBytes<T>(_ bytes: some Collection<UInt8>, _ body: (UnsafeRawBufferPointer) -> T) -> T {
        bytes.withContiguousStorageIfAvailable { body(UnsafeRawBufferPointer($0)) } ?? Array(bytes).withUnsafeBytes(body)
    }
}
