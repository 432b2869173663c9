/// Why bytes could not be read as D-Bus values, or values could not be written.
package struct DBusWireError: Error, Sendable, Hashable, CustomStringConvertible {
    package var description: String

    package init(_ description: String) {
        self.description = description
    }
}

/// The D-Bus signature grammar: complete types, their alignment, and their validity.
package enum DBusSignature {
    /// The longest signature the specification allows.
    package static let maximumLength = 255
    /// How deeply containers may nest (arrays and structures, 32 each).
    package static let maximumDepth = 64

    /// Splits a signature into its complete types: `"susssasa{sv}i"` → `["s", "u", "s", "s", "s", "as", "a{sv}", "i"]`.
    ///
    /// - Throws: a `DBusWireError` for a signature that is not valid.
    package static func completeTypes(_ signature: String) throws(DBusWireError) -> [String] {
        guard signature.utf8.count <= maximumLength else { throw DBusWireError("signature longer than 255 bytes") }
        var types: [String] = []
        var rest = Substring(signature)
        while !rest.isEmpty {
            let first = try completeTypeLength(rest, depth: 0, inArray: false)
            types.append(String(rest.prefix(first)))
            rest = rest.dropFirst(first)
        }
        return types
    }

    /// The length, in characters, of the complete type at the start of `signature`.
    private static func completeTypeLength(_ signature: Substring, depth: Int, inArray: Bool) throws(DBusWireError) -> Int {
        guard depth <= maximumDepth else { throw DBusWireError("signature nests too deeply") }
        guard let first = signature.first else { throw DBusWireError("signature ends inside a type") }
        switch first {
        case "y", "b", "n", "q", "i", "u", "x", "t", "d", "s", "o", "g", "v", "h":
            return 1
        case "a":
            return 1 + (try completeTypeLength(signature.dropFirst(), depth: depth + 1, inArray: true))
        case "(":
            var length = 1
            var rest = signature.dropFirst()
            guard rest.first != ")" else { throw DBusWireError("empty structure in signature") }
            while rest.first != ")" {
                let inner = try completeTypeLength(rest, depth: depth + 1, inArray: false)
                length += inner
                rest = rest.dropFirst(inner)
            }
            return length + 1
        case "{":
            guard inArray else { throw DBusWireError("dictionary entry outside an array") }
            let rest = signature.dropFirst()
            guard let key = rest.first, "ybnqiuxtdsogh".contains(key) else { throw DBusWireError("dictionary key must be a basic type") }
            let value = try completeTypeLength(rest.dropFirst(), depth: depth + 1, inArray: false)
            guard rest.dropFirst(1 + value).first == "}" else { throw DBusWireError("dictionary entry must hold exactly two types") }
            return 3 + value
        default:
            throw DBusWireError("unknown type code \"\(first)\" in signature")
        }
    }

    /// The boundary a value of this complete type starts on.
    package static func alignment(of type: Substring) -> Int {
        switch type.first {
        case "y", "g", "v": 1
        case "n", "q": 2
        case "x", "t", "d", "(", "{": 8
        default: 4
        }
    }
}

/// Writes D-Bus values in little-endian order, aligned as the specification says relative to the start
/// of the message.
package struct DBusWriter {
    package private(set) var bytes: [UInt8] = []

    package init() {}

    package mutating func align(_ boundary: Int) {
        while bytes.count % boundary != 0 { bytes.append(0) }
    }

    private mutating func append<T: FixedWidthInteger>(_ value: T) {
        align(MemoryLayout<T>.size)
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// Overwrites the 4 bytes at `offset` with `value`.
    package mutating func patchUInt32(at offset: Int, _ value: UInt32) {
        withUnsafeBytes(of: value.littleEndian) { raw in
            for (index, byte) in raw.enumerated() { bytes[offset + index] = byte }
        }
    }

    package mutating func write(_ value: DBusValue) throws(DBusWireError) {
        switch value {
        case .byte(let byte): bytes.append(byte)
        case .boolean(let flag): append(UInt32(flag ? 1 : 0))
        case .int16(let number): append(number)
        case .uint16(let number): append(number)
        case .int32(let number): append(number)
        case .uint32(let number): append(number)
        case .int64(let number): append(number)
        case .uint64(let number): append(number)
        case .double(let number): append(number.bitPattern)
        case .string(let text), .objectPath(let text):
            let utf8 = Array(text.utf8)
            guard !utf8.contains(0) else { throw DBusWireError("a string cannot hold a NUL character") }
            append(UInt32(utf8.count))
            bytes.append(contentsOf: utf8)
            bytes.append(0)
        case .signature(let text):
            let utf8 = Array(text.utf8)
            guard utf8.count <= DBusSignature.maximumLength else { throw DBusWireError("signature longer than 255 bytes") }
            bytes.append(UInt8(utf8.count))
            bytes.append(contentsOf: utf8)
            bytes.append(0)
        case .array(let elementSignature, let elements):
            append(UInt32(0))
            let lengthOffset = bytes.count - 4
            align(DBusSignature.alignment(of: Substring(elementSignature)))
            let start = bytes.count
            for element in elements {
                guard element.signature == elementSignature else {
                    throw DBusWireError("array of \(elementSignature) holds a \(element.signature)")
                }
                try write(element)
            }
            guard bytes.count - start <= 1 << 26 else { throw DBusWireError("array longer than 64 MiB") }
            patchUInt32(at: lengthOffset, UInt32(bytes.count - start))
        case .structure(let fields):
            align(8)
            for field in fields { try write(field) }
        case .dictEntry(let key, let value):
            align(8)
            try write(key)
            try write(value)
        case .variant(let inner):
            try write(.signature(inner.signature))
            try write(inner)
        }
    }
}

/// Reads D-Bus values from a message, in the byte order the message declares.
package struct DBusReader {
    private let bytes: [UInt8]
    private let littleEndian: Bool
    /// Where the next value starts, from the start of the message.
    package private(set) var offset: Int
    private let end: Int

    package init(bytes: [UInt8], littleEndian: Bool, offset: Int = 0, end: Int? = nil) {
        self.bytes = bytes
        self.littleEndian = littleEndian
        self.offset = offset
        self.end = end ?? bytes.count
    }

    package var isAtEnd: Bool { offset >= end }

    package mutating func align(_ boundary: Int) throws(DBusWireError) {
        let aligned = (offset + boundary - 1) / boundary * boundary
        guard aligned <= end else { throw DBusWireError("message ends in padding") }
        for index in offset..<aligned where bytes[index] != 0 {
            throw DBusWireError("padding byte is not zero")
        }
        offset = aligned
    }

    private mutating func take(_ count: Int) throws(DBusWireError) -> ArraySlice<UInt8> {
        guard count >= 0, offset + count <= end else { throw DBusWireError("message ends inside a value") }
        defer { offset += count }
        return bytes[offset..<(offset + count)]
    }

    private mutating func integer<T: FixedWidthInteger>(_: T.Type) throws(DBusWireError) -> T {
        try align(MemoryLayout<T>.size)
        var value: T = 0
        for (index, byte) in try take(MemoryLayout<T>.size).enumerated() {
            value |= T(truncatingIfNeeded: byte) << (8 * index)
        }
        return littleEndian ? value : value.byteSwapped
    }

    package mutating func readUInt32() throws(DBusWireError) -> UInt32 { try integer(UInt32.self) }

    private mutating func text(lengthBytes: Int) throws(DBusWireError) -> String {
        let length = lengthBytes == 1 ? Int(try integer(UInt8.self)) : Int(try integer(UInt32.self))
        let utf8 = try take(length)
        guard try take(1).first == 0 else { throw DBusWireError("string is not NUL-terminated") }
        guard let text = String(validating: utf8, as: UTF8.self), !utf8.contains(0) else {
            throw DBusWireError("string is not valid UTF-8")
        }
        return text
    }

    /// Reads one value of the complete type `type`.
    package mutating func read(_ type: String, depth: Int = 0) throws(DBusWireError) -> DBusValue {
        guard depth <= DBusSignature.maximumDepth else { throw DBusWireError("values nest too deeply") }
        guard let code = type.first else { throw DBusWireError("empty type") }
        switch code {
        case "y": return .byte(try integer(UInt8.self))
        case "b":
            switch try integer(UInt32.self) {
            case 0: return .boolean(false)
            case 1: return .boolean(true)
            default: throw DBusWireError("boolean is neither 0 nor 1")
            }
        case "n": return .int16(try integer(Int16.self))
        case "q": return .uint16(try integer(UInt16.self))
        case "i": return .int32(try integer(Int32.self))
        case "u", "h": return .uint32(try integer(UInt32.self))
        case "x": return .int64(try integer(Int64.self))
        case "t": return .uint64(try integer(UInt64.self))
        case "d": return .double(Double(bitPattern: try integer(UInt64.self)))
        case "s": return .string(try text(lengthBytes: 4))
        case "o": return .objectPath(try text(lengthBytes: 4))
        case "g": return .signature(try text(lengthBytes: 1))
        case "v":
            let signature = try text(lengthBytes: 1)
            let types = try DBusSignature.completeTypes(signature)
            guard types.count == 1 else { throw DBusWireError("variant signature must hold one complete type") }
            return .variant(try read(types[0], depth: depth + 1))
        case "a":
            let length = Int(try integer(UInt32.self))
            guard length <= 1 << 26 else { throw DBusWireError("array longer than 64 MiB") }
            let elementType = String(type.dropFirst())
            try align(DBusSignature.alignment(of: Substring(elementType)))
            let arrayEnd = offset + length
            guard arrayEnd <= end else { throw DBusWireError("array runs past the message") }
            var elements: [DBusValue] = []
            while offset < arrayEnd {
                elements.append(try read(elementType, depth: depth + 1))
            }
            guard offset == arrayEnd else { throw DBusWireError("array length does not match its elements") }
            return .array(elementSignature: elementType, elements)
        case "(":
            try align(8)
            let fields = try DBusSignature.completeTypes(String(type.dropFirst().dropLast()))
            var values: [DBusValue] = []
            for field in fields { values.append(try read(field, depth: depth + 1)) }
            return .structure(values)
        case "{":
            try align(8)
            let parts = try DBusSignature.completeTypes(String(type.dropFirst().dropLast()))
            guard parts.count == 2 else { throw DBusWireError("dictionary entry must hold two types") }
            return .dictEntry(try read(parts[0], depth: depth + 1), try read(parts[1], depth: depth + 1))
        default:
            throw DBusWireError("unknown type code \"\(code)\"")
        }
    }
}
