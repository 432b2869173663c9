/// One value of the D-Bus type system, as it travels in a message body.
///
/// Containers carry the signatures of their elements, so that an empty array still says what it would
/// hold. A dictionary is an array of ``dictEntry(_:_:)`` values, as on the wire (`a{sv}`).
package indirect enum DBusValue: Sendable, Hashable {
    case byte(UInt8)
    case boolean(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    case signature(String)
    /// An array of values that all have `elementSignature`.
    case array(elementSignature: String, [DBusValue])
    case structure([DBusValue])
    /// One entry of a dictionary; only inside an ``array(elementSignature:_:)`` whose signature is `{…}`.
    case dictEntry(DBusValue, DBusValue)
    case variant(DBusValue)

    /// The value's complete type, as in a message's signature.
    package var signature: String {
        switch self {
        case .byte: "y"
        case .boolean: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .array(let element, _): "a" + element
        case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
        case .dictEntry(let key, let value): "{" + key.signature + value.signature + "}"
        case .variant: "v"
        }
    }
}

// MARK: - Building and reading values

extension DBusValue {
    /// An array of strings (`as`).
    package static func strings(_ strings: [String]) -> DBusValue {
        .array(elementSignature: "s", strings.map(DBusValue.string))
    }

    /// A dictionary of strings to variants (`a{sv}`), as the hints of a notification; keys in order.
    package static func variantDictionary(_ entries: [(String, DBusValue)]) -> DBusValue {
        .array(elementSignature: "{sv}", entries.map { .dictEntry(.string($0.0), .variant($0.1)) })
    }

    package var stringValue: String? {
        switch self {
        case .string(let value), .objectPath(let value), .signature(let value): value
        case .variant(let inner): inner.stringValue
        default: nil
        }
    }

    package var uint32Value: UInt32? {
        switch self {
        case .uint32(let value): value
        case .variant(let inner): inner.uint32Value
        default: nil
        }
    }

    package var int32Value: Int32? {
        switch self {
        case .int32(let value): value
        case .variant(let inner): inner.int32Value
        default: nil
        }
    }

    /// An integer of any width, as a hint's value may come (`urgency` is a byte, some senders use `i`).
    package var integerValue: Int? {
        switch self {
        case .byte(let value): Int(value)
        case .int16(let value): Int(value)
        case .uint16(let value): Int(value)
        case .int32(let value): Int(value)
        case .uint32(let value): Int(value)
        case .int64(let value): Int(value)
        case .uint64(let value): Int(exactly: value)
        case .variant(let inner): inner.integerValue
        default: nil
        }
    }

    package var boolValue: Bool? {
        switch self {
        case .boolean(let value): value
        case .variant(let inner): inner.boolValue
        default: nil
        }
    }

    /// The elements of an array, or nil.
    package var arrayElements: [DBusValue]? {
        switch self {
        case .array(_, let elements): elements
        case .variant(let inner): inner.arrayElements
        default: nil
        }
    }

    /// The strings of an array of strings, or nil when it is not one.
    package var stringArray: [String]? {
        guard let elements = arrayElements else { return nil }
        let strings = elements.compactMap(\.stringValue)
        return strings.count == elements.count ? strings : nil
    }

    /// The entries of a dictionary with string keys (`a{s…}`), the variants unwrapped one level; nil
    /// when it is not one.
    package var stringKeyedDictionary: [String: DBusValue]? {
        guard let elements = arrayElements else { return nil }
        var dictionary: [String: DBusValue] = [:]
        for element in elements {
            guard case .dictEntry(let key, let value) = element, let name = key.stringValue else { return nil }
            if case .variant(let inner) = value { dictionary[name] = inner } else { dictionary[name] = value }
        }
        return dictionary
    }
}
