/// One pass over the bytes of a JSON document by the rules ``StrictJSONReader`` states (RFC 8259's
/// grammar, valid UTF-8, surrogates in pairs, finite numbers, no key twice, a depth limit): the
/// tokens both of the system's readers of outside JSON are made of. ``StrictJSONReader`` builds
/// ``PropertyListValue``s with it; ``NotificationJSONReader`` builds the model's messages.
///
/// Every check throws its ``StrictJSONReader/Failure``. With `builds`, ``value(depth:)`` returns each
/// value as it is read; without, `nil` (a value only checked).
package struct JSONScanner {
    package typealias Failure = StrictJSONReader.Failure

    package let bytes: UnsafeRawBufferPointer
    package let maximumDepth: Int
    var builds: Bool
    package var index = 0
    /// The keys of the objects open, outermost first.
    private var keys: [[Key]] = []
    /// The bytes of the string being read, unescaped, when it has escapes.
    private var unescaped: [UInt8] = []

    /// A key as its object needs it to tell it from the others: a hash of its unescaped bytes,
    /// where its bytes are, and its unescaped bytes when it had escapes.
    private struct Key {
        var hash: UInt64
        var range: Range<Int>
        var unescaped: [UInt8]?
    }

    /// A string read: where its bytes are, and whether they had escapes (then in `unescaped`).
    private struct StringSpan {
        var range: Range<Int>
        var hasEscapes: Bool
    }

    package init(bytes: UnsafeRawBufferPointer, maximumDepth: Int, builds: Bool) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
        self.builds = builds
    }

    package mutating func skipSpace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    /// The byte at ``index``, `nil` at the end.
    package var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    /// One value, with white space around it only.
    package mutating func document() throws(Failure) -> PropertyListValue? {
        let value = try value(depth: 0)
        try end()
        return value
    }

    /// Nothing but white space left.
    package mutating func end() throws(Failure) {
        skipSpace()
        guard index == bytes.count else { throw .malformed(offset: index) }
    }

    /// A value inside `depth` open arrays and objects, white space before it skipped.
    package mutating func value(depth: Int) throws(Failure) -> PropertyListValue? {
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
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            let number = try number()
            return builds ? number.propertyListValue(in: bytes) : nil
        default: throw .malformed(offset: index)
        }
    }

    /// A value inside `depth` open arrays and objects, checked and passed over.
    package mutating func skipValue(depth: Int) throws(Failure) {
        let built = builds
        builds = false
        defer { builds = built }
        _ = try value(depth: depth)
    }

    /// `text` (`true`, `false` or `null`) at ``index``.
    package mutating func literal(_ text: StaticString) throws(Failure) {
        let count = text.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw .malformed(offset: index) }
        for offset in 0..<count where bytes[index + offset] != text.utf8Start[offset] {
            throw .malformed(offset: index + offset)
        }
        index += count
    }

    /// Checks that an array or object opened inside `depth` others may be.
    package func enter(depth: Int) throws(Failure) {
        guard depth <= maximumDepth else { throw .tooDeep(limit: maximumDepth) }
    }

    private mutating func object(depth: Int) throws(Failure) -> PropertyListValue? {
        try enter(depth: depth)
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
            let key = Key(hash: hash(of: span), range: span.range, unescaped: span.hasEscapes ? unescaped : nil)
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
        try enter(depth: depth)
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

    /// The string at ``index`` (its opening quote), as text.
    package mutating func text() throws(Failure) -> String {
        // In two steps: `text(of: try string())` would read `self` (and `unescaped`) before the string.
        let span = try string()
        return text(of: span)
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
    /// unescaped bytes in `unescaped`. Runs of plain ASCII are passed over (and copied, after an
    /// escape) a run at a time.
    private mutating func string() throws(Failure) -> StringSpan {
        let start = index
        index += 1
        let contentStart = index
        var hasEscapes = false
        // Where the bytes not yet copied to `unescaped` begin, once there are escapes.
        var copiedTo = contentStart
        while true {
            while index < bytes.count, bytes[index] >= 0x20, bytes[index] < 0x80, bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\") {
                index += 1
            }
            guard index < bytes.count else { throw .malformed(offset: index) }
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                let range = contentStart..<index
                if hasEscapes { unescaped.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[copiedTo..<index])) }
                index += 1
                return StringSpan(range: range, hasEscapes: hasEscapes)
            case UInt8(ascii: "\\"):
                if !hasEscapes {
                    hasEscapes = true
                    unescaped.removeAll(keepingCapacity: true)
                }
                unescaped.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[copiedTo..<index]))
                try escape(stringStart: start)
                copiedTo = index
            case 0..<0x20:
                throw .invalidString(offset: start)
            default:
                index = try utf8Scalar(stringStart: start)
            }
        }
    }

    /// An escape, from its backslash: the bytes of the scalar it stands for, appended to `unescaped`.
    private mutating func escape(stringStart: Int) throws(Failure) {
        guard index + 1 < bytes.count else { throw .malformed(offset: index) }
        let letter = bytes[index + 1]
        index += 2
        switch letter {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): unescaped.append(letter)
        case UInt8(ascii: "b"): unescaped.append(0x08)
        case UInt8(ascii: "f"): unescaped.append(0x0C)
        case UInt8(ascii: "n"): unescaped.append(0x0A)
        case UInt8(ascii: "r"): unescaped.append(0x0D)
        case UInt8(ascii: "t"): unescaped.append(0x09)
        case UInt8(ascii: "u"):
            let unit = try hexUnit()
            let scalar: Unicode.Scalar
            switch unit {
            case 0xD800...0xDBFF:
                // A high surrogate: a low one must follow, as its own escape.
                guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                    throw .invalidString(offset: stringStart)
                }
                index += 2
                let low = try hexUnit()
                guard (0xDC00...0xDFFF).contains(low) else { throw .invalidString(offset: stringStart) }
                scalar = Unicode.Scalar(0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00))!
            case 0xDC00...0xDFFF:
                throw .invalidString(offset: stringStart)
            default:
                scalar = Unicode.Scalar(unit)!
            }
            UTF8.encode(scalar) { unescaped.append($0) }
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
    /// a `Double` holds: neither infinite, nor a zero that a number not written as zero rounded to.
    package mutating func number() throws(Failure) -> Number {
        let start = index
        if current == UInt8(ascii: "-") { index += 1 }
        guard let first = current, Self.isDigit(first) else { throw .malformed(offset: index) }
        index += 1
        var digits = 1
        var nonZero = first != UInt8(ascii: "0")
        if first != UInt8(ascii: "0") {
            while let byte = current, Self.isDigit(byte) {
                index += 1
                digits += 1
            }
        }
        var isPlainInteger = true
        if current == UInt8(ascii: ".") {
            isPlainInteger = false
            index += 1
            guard let byte = current, Self.isDigit(byte) else { throw .malformed(offset: index) }
            while let byte = current, Self.isDigit(byte) {
                if byte != UInt8(ascii: "0") { nonZero = true }
                index += 1
            }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            isPlainInteger = false
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard let byte = current, Self.isDigit(byte) else { throw .malformed(offset: index) }
            while let byte = current, Self.isDigit(byte) { index += 1 }
        }
        var number = Number(range: start..<index, isPlainInteger: isPlainInteger, isShortInteger: isPlainInteger && digits <= 18, double: 0)
        if number.isShortInteger {
            // Up to 18 digits: an `Int` holds it, and a `Double` holds it rounded.
            number.double = number.shortInteger(in: bytes)
        } else {
            let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[number.range]), as: UTF8.self)
            guard let double = Double(text), double.isFinite, double != 0 || !nonZero else { throw .numberOutOfRange(offset: start) }
            number.double = double
        }
        return number
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}

extension JSONScanner {
    /// A number read (its bytes in the document, and its value as a `Double`), and what it is as each
    /// of Swift's number types, as `JSONDecoder` reads them.
    package struct Number {
        /// Where its literal is in the document.
        package var range: Range<Int>
        /// Written without a fraction or an exponent.
        package var isPlainInteger: Bool
        /// A plain integer of 18 digits at most.
        var isShortInteger: Bool
        /// Its value, correctly rounded (`-0` is negative zero).
        package var double: Double

        /// The value of a short integer, as a `Double`.
        fileprivate func shortInteger(in bytes: UnsafeRawBufferPointer) -> Double {
            let value = shortIntegerValue(in: bytes)
            return value == 0 && bytes[range.lowerBound] == UInt8(ascii: "-") ? -0.0 : Double(value)
        }

        private func shortIntegerValue(in bytes: UnsafeRawBufferPointer) -> Int {
            var value = 0
            var negative = false
            for byte in UnsafeRawBufferPointer(rebasing: bytes[range]) {
                if byte == UInt8(ascii: "-") { negative = true } else { value = value &* 10 &+ Int(byte &- UInt8(ascii: "0")) }
            }
            return negative ? -value : value
        }

        /// The whole number it is, when an `Int` holds it, as `JSONDecoder` reads an `Int`: a plain
        /// integer exactly; with a fraction or an exponent, a value within ±2⁵³ when its `Double` is
        /// whole (`1.0`, `1e2`, and `1.00000000000000000001`, which rounds to 1), and a larger one
        /// when its decimal digits write a whole number exactly (`4.0883853195200164e+18` is
        /// 4088385319520016400, not the `Double` near it).
        package func integer(in bytes: UnsafeRawBufferPointer) -> Int? {
            if isShortInteger { return shortIntegerValue(in: bytes) }
            if isPlainInteger { return Int(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[range]), as: UTF8.self)) }
            if double.magnitude <= 9_007_199_254_740_992 { return Int(exactly: double) }
            guard let (negative, magnitude) = wholeMagnitude(in: bytes), magnitude <= UInt64(Int.max) else { return nil }
            return negative ? -Int(magnitude) : Int(magnitude)
        }

        /// The whole number it is, when a `UInt64` holds it, by the rules of ``integer(in:)``; `-0` is 0.
        package func unsignedInteger(in bytes: UnsafeRawBufferPointer) -> UInt64? {
            let negative = bytes[range.lowerBound] == UInt8(ascii: "-")
            if isPlainInteger {
                let digits = UnsafeRawBufferPointer(rebasing: bytes[(negative ? range.lowerBound + 1 : range.lowerBound)..<range.upperBound])
                guard let value = UInt64(String(decoding: digits, as: UTF8.self)) else { return nil }
                return negative && value != 0 ? nil : value
            }
            if double.magnitude <= 9_007_199_254_740_992 { return UInt64(exactly: double) }
            guard let (negative, magnitude) = wholeMagnitude(in: bytes), !negative || magnitude == 0 else { return nil }
            return magnitude
        }

        /// What `JSONDecoder` reads into a ``PropertyListValue``: an integer when an `Int` holds the
        /// whole number it is, else a `Double`.
        package func propertyListValue(in bytes: UnsafeRawBufferPointer) -> PropertyListValue {
            integer(in: bytes).map(PropertyListValue.integer) ?? .double(double)
        }

        /// The whole number its decimal digits write exactly, when a `UInt64` holds its magnitude.
        private func wholeMagnitude(in bytes: UnsafeRawBufferPointer) -> (negative: Bool, magnitude: UInt64)? {
            let literal = UnsafeRawBufferPointer(rebasing: bytes[range])
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
            guard !digits.isEmpty else { return (isNegative, 0) }
            guard exponent >= 0, digits.count + exponent <= 20 else { return nil }
            var magnitude: UInt64 = 0
            for digit in digits + Array(repeating: 0, count: exponent) {
                let (times, overflowTimes) = magnitude.multipliedReportingOverflow(by: 10)
                let (sum, overflowSum) = times.addingReportingOverflow(UInt64(digit))
                guard !overflowTimes, !overflowSum else { return nil }
                magnitude = sum
            }
            return (isNegative, magnitude)
        }
    }
}
