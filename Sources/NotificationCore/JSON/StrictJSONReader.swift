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
            var scanner = Scanner(bytes: bytes, maximumDepth: maximumDepth, builds: false)
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
            var scanner = Scanner(bytes: bytes, maximumDepth: maximumDepth, builds: false)
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
            var scanner = Scanner(bytes: bytes, maximumDepth: maximumDepth, builds: true)
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

extension StrictJSONReader {
    /// One pass over the bytes; every check throws its ``Failure``. With `builds`, each value is
    /// returned as it is read; without, `nil`.
    private struct Scanner {
        let bytes: UnsafeRawBufferPointer
        let maximumDepth: Int
        let builds: Bool
        var index = 0
        /// The keys of the objects open, outermost first.
        var keys: [[Key]] = []
        /// The bytes of the string being read, unescaped, when it has escapes.
        var unescaped: [UInt8] = []

        /// A key as its object needs it to tell it from the others: a hash of its unescaped bytes,
        /// where its bytes are, and its unescaped bytes when it had escapes.
        struct Key {
            var hash: UInt64
            var range: Range<Int>
            var unescaped: [UInt8]?
        }

        /// A string read: where its bytes are, and whether they had escapes (then in `unescaped`).
        struct StringSpan {
            var range: Range<Int>
            var hasEscapes: Bool
        }

        init(bytes: UnsafeRawBufferPointer, maximumDepth: Int, builds: Bool) {
            self.bytes = bytes
            self.maximumDepth = maximumDepth
            self.builds = builds
        }

        mutating func skipSpace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }

        private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        /// One value, with white space around it only.
        mutating func document() throws(Failure) -> PropertyListValue? {
            let value = try value(depth: 0)
            skipSpace()
            guard index == bytes.count else { throw .malformed(offset: index) }
            return value
        }

        private mutating func value(depth: Int) throws(Failure) -> PropertyListValue? {
            skipSpace()
            guard let byte = current else { throw .malformed(offset: index) }
            switch byte {
            case UInt8(ascii: "{"): return try object(depth: depth + 1)
            case UInt8(ascii: "["): return try array(depth: depth + 1)
            case UInt8(ascii: "\""):
                let span = try string()
                return builds ? .string(text(of: span)) : nil
            case UInt8(ascii: "t"):
                try literal("true")
                return .bool(true)
            case UInt8(ascii: "f"):
                try literal("false")
                return .bool(false)
            case UInt8(ascii: "n"):
                try literal("null")
                return .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
            default: throw .malformed(offset: index)
            }
        }

        private mutating func literal(_ text: StaticString) throws(Failure) {
            let count = text.utf8CodeUnitCount
            guard index + count <= bytes.count else { throw .malformed(offset: index) }
            for offset in 0..<count where bytes[index + offset] != text.utf8Start[offset] {
                throw .malformed(offset: index + offset)
            }
            index += count
        }

        private mutating func object(depth: Int) throws(Failure) -> PropertyListValue? {
            guard depth <= maximumDepth else { throw .tooDeep(limit: maximumDepth) }
            index += 1
            skipSpace()
            var members: [String: PropertyListValue] = [:]
            if current == UInt8(ascii: "}") {
                index += 1
                return builds ? .dictionary(members) : nil
            }
            keys.append([])
            defer { keys.removeLast() }
            while true {
                skipSpace()
                guard current == UInt8(ascii: "\"") else { throw .malformed(offset: index) }
                let start = index
                let span = try string()
                let key = Key(
                    hash: hash(of: span),
                    range: span.range,
                    unescaped: span.hasEscapes ? unescaped : nil
                )
                if keys[keys.count - 1].contains(where: { same($0, key) }) { throw .duplicateKey(offset: start) }
                keys[keys.count - 1].append(key)
                let name = builds ? text(of: span) : ""
                skipSpace()
                guard current == UInt8(ascii: ":") else { throw .malformed(offset: index) }
                index += 1
                let member = try value(depth: depth)
                if builds, let member { members[name] = member }
                skipSpace()
                switch current {
                case UInt8(ascii: ",")?: index += 1
                case UInt8(ascii: "}")?:
                    index += 1
                    return builds ? .dictionary(members) : nil
                default: throw .malformed(offset: index)
                }
            }
        }

        private mutating func array(depth: Int) throws(Failure) -> PropertyListValue? {
            guard depth <= maximumDepth else { throw .tooDeep(limit: maximumDepth) }
            index += 1
            skipSpace()
            var elements: [PropertyListValue] = []
            if current == UInt8(ascii: "]") {
                index += 1
                return builds ? .array(elements) : nil
            }
            while true {
                let element = try value(depth: depth)
                if builds, let element { elements.append(element) }
                skipSpace()
                switch current {
                case UInt8(ascii: ",")?: index += 1
                case UInt8(ascii: "]")?:
                    index += 1
                    return builds ? .array(elements) : nil
                default: throw .malformed(offset: index)
                }
            }
        }

        /// The text of a string read last (its escapes in `unescaped`).
        private func text(of span: StringSpan) -> String {
            span.hasEscapes
                ? String(decoding: unescaped, as: UTF8.self)
                : String(decoding: UnsafeRawBufferPointer(rebasing: bytes[span.range]), as: UTF8.self)
        }

        /// FNV-1a over a string's unescaped bytes.
        private func hash(of span: StringSpan) -> UInt64 {
            var hash = 0xcbf2_9ce4_8422_2325 as UInt64
            func mix(_ bytes: some Sequence<UInt8>) {
                for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
            }
            if span.hasEscapes { mix(unescaped) } else { mix(UnsafeRawBufferPointer(rebasing: bytes[span.range])) }
            return hash
        }

        private func same(_ left: Key, _ right: Key) -> Bool {
            guard left.hash == right.hash else { return false }
            if left.unescaped == nil, right.unescaped == nil {
                return bytes[left.range].elementsEqual(bytes[right.range])
            }
            return (left.unescaped ?? Array(bytes[left.range])) == (right.unescaped ?? Array(bytes[right.range]))
        }

        /// A string, from its opening quote to past its closing one. A string with escapes leaves its
        /// unescaped bytes in `unescaped`.
        private mutating func string() throws(Failure) -> StringSpan {
            let start = index
            index += 1
            let contentStart = index
            var hasEscapes = false
            while true {
                guard index < bytes.count else { throw .malformed(offset: index) }
                let byte = bytes[index]
                switch byte {
                case UInt8(ascii: "\""):
                    let range = contentStart..<index
                    index += 1
                    return StringSpan(range: range, hasEscapes: hasEscapes)
                case UInt8(ascii: "\\"):
                    if !hasEscapes {
                        hasEscapes = true
                        unescaped.removeAll(keepingCapacity: true)
                        unescaped.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[contentStart..<index]))
                    }
                    let scalar = try escape(stringStart: start)
                    unescaped.append(contentsOf: String(Character(scalar)).utf8)
                case 0..<0x20:
                    throw .invalidString(offset: start)
                case 0..<0x80:
                    if hasEscapes { unescaped.append(byte) }
                    index += 1
                default:
                    let end = try utf8Scalar(stringStart: start)
                    if hasEscapes { unescaped.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[index..<end])) }
                    index = end
                }
            }
        }

        /// An escape, from its backslash: the scalar it stands for.
        private mutating func escape(stringStart: Int) throws(Failure) -> Unicode.Scalar {
            guard index + 1 < bytes.count else { throw .malformed(offset: index) }
            let letter = bytes[index + 1]
            index += 2
            switch letter {
            case UInt8(ascii: "\""): return "\""
            case UInt8(ascii: "\\"): return "\\"
            case UInt8(ascii: "/"): return "/"
            case UInt8(ascii: "b"): return "\u{8}"
            case UInt8(ascii: "f"): return "\u{C}"
            case UInt8(ascii: "n"): return "\n"
            case UInt8(ascii: "r"): return "\r"
            case UInt8(ascii: "t"): return "\t"
            case UInt8(ascii: "u"):
                let unit = try hexUnit()
                switch unit {
                case 0xD800...0xDBFF:
                    // A high surrogate: a low one must follow, as its own escape.
                    guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                        throw .invalidString(offset: stringStart)
                    }
                    index += 2
                    let low = try hexUnit()
                    guard (0xDC00...0xDFFF).contains(low) else { throw .invalidString(offset: stringStart) }
                    return Unicode.Scalar(0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00))!
                case 0xDC00...0xDFFF:
                    throw .invalidString(offset: stringStart)
                default:
                    return Unicode.Scalar(unit)!
                }
            default:
                throw .malformed(offset: index - 1)
            }
        }

        /// The four hexadecimal digits of a `\u` escape.
        private mutating func hexUnit() throws(Failure) -> UInt16 {
            guard index + 4 <= bytes.count else { throw .malformed(offset: index) }
            var unit: UInt16 = 0
            for _ in 0..<4 {
                let byte = bytes[index]
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: throw .malformed(offset: index)
                }
                unit = unit << 4 | UInt16(digit)
                index += 1
            }
            return unit
        }

        /// A scalar of two to four bytes of UTF-8 from `index` (its first byte is 0x80 or more): where
        /// it ends. Overlong forms, surrogates and values past U+10FFFF are not UTF-8.
        private func utf8Scalar(stringStart: Int) throws(Failure) -> Int {
            let first = bytes[index]
            let count: Int
            var lowest: UInt8 = 0x80, highest: UInt8 = 0xBF
            switch first {
            case 0xC2...0xDF: count = 2
            case 0xE0: count = 3; lowest = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: count = 3
            case 0xED: count = 3; highest = 0x9F
            case 0xF0: count = 4; lowest = 0x90
            case 0xF1...0xF3: count = 4
            case 0xF4: count = 4; highest = 0x8F
            default: throw .invalidString(offset: stringStart)
            }
            guard index + count <= bytes.count, (lowest...highest).contains(bytes[index + 1]) else { throw .invalidString(offset: stringStart) }
            for offset in 2..<count where !(0x80...0xBF).contains(bytes[index + offset]) {
                throw .invalidString(offset: stringStart)
            }
            return index + count
        }

        /// A number in RFC 8259's form, `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`, whose value
        /// a `Double` holds.
        private mutating func number() throws(Failure) -> PropertyListValue? {
            let start = index
            if current == UInt8(ascii: "-") { index += 1 }
            guard let first = current, isDigit(first) else { throw .malformed(offset: index) }
            index += 1
            var digits = 1
            var nonZero = first != UInt8(ascii: "0")
            if first != UInt8(ascii: "0") {
                while let byte = current, isDigit(byte) {
                    index += 1
                    digits += 1
                }
            }
            var isPlainInteger = true
            if current == UInt8(ascii: ".") {
                isPlainInteger = false
                index += 1
                guard let byte = current, isDigit(byte) else { throw .malformed(offset: index) }
                while let byte = current, isDigit(byte) {
                    if byte != UInt8(ascii: "0") { nonZero = true }
                    index += 1
                }
            }
            if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
                isPlainInteger = false
                index += 1
                if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
                guard let byte = current, isDigit(byte) else { throw .malformed(offset: index) }
                while let byte = current, isDigit(byte) { index += 1 }
            }
            let literal = UnsafeRawBufferPointer(rebasing: bytes[start..<index])
            // An integer of up to 18 digits is an `Int`, and a `Double` holds it.
            if isPlainInteger, digits <= 18 {
                guard builds else { return nil }
                var value = 0
                for byte in literal where byte != UInt8(ascii: "-") { value = value * 10 + Int(byte - UInt8(ascii: "0")) }
                return .integer(literal.first == UInt8(ascii: "-") ? -value : value)
            }
            let text = String(decoding: literal, as: UTF8.self)
            guard let double = Double(text), double.isFinite, double != 0 || !nonZero else {
                throw .numberOutOfRange(offset: start)
            }
            guard builds else { return nil }
            if isPlainInteger, let integer = Int(text) { return .integer(integer) }
            return wholeNumber(literal).map(PropertyListValue.integer) ?? .double(double)
        }

        /// The number a literal writes, when it is a whole number an `Int` holds, read from its
        /// decimal digits exactly (`4.0883853195200164e+18` is 4088385319520016400), as `JSONDecoder`
        /// reads an `Int`; `Int.min` written with an exponent, which `JSONDecoder` reads as a
        /// `Double`, is not one.
        private func wholeNumber(_ literal: UnsafeRawBufferPointer) -> Int? {
            var digits: [UInt8] = []
            var exponent = 0
            var index = 0
            let isNegative = literal.first == UInt8(ascii: "-")
            if isNegative { index += 1 }
            var inFraction = false
            while index < literal.count {
                let byte = literal[index]
                if byte == UInt8(ascii: ".") {
                    inFraction = true
                } else if byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
                    guard let given = Int(String(decoding: UnsafeRawBufferPointer(rebasing: literal[(index + 1)...]), as: UTF8.self)) else { return nil }
                    exponent += given
                    break
                } else {
                    digits.append(byte - UInt8(ascii: "0"))
                    if inFraction { exponent -= 1 }
                }
                index += 1
            }
            while let first = digits.first, first == 0 { digits.removeFirst() }
            while let last = digits.last, last == 0, exponent < 0 {
                digits.removeLast()
                exponent += 1
            }
            guard !digits.isEmpty else { return 0 }
            guard exponent >= 0, digits.count + exponent <= 19 else { return nil }
            var magnitude: UInt64 = 0
            for digit in digits + Array(repeating: 0, count: exponent) {
                let (times, overflowTimes) = magnitude.multipliedReportingOverflow(by: 10)
                let (sum, overflowSum) = times.addingReportingOverflow(UInt64(digit))
                guard !overflowTimes, !overflowSum else { return nil }
                magnitude = sum
            }
            guard magnitude <= UInt64(Int.max) else { return nil }
            return isNegative ? -Int(magnitude) : Int(magnitude)
        }

        private func isDigit(_ byte: UInt8) -> Bool {
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
        }
    }
}
