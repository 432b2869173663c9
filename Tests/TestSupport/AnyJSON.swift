/// Any JSON value as Foundation's `JSONDecoder` reads it, `null` included: a whole number as an
/// integer when it fits one, any other as a double. Encoded back, it is the same JSON in meaning.
package indirect enum AnyJSON: Codable, Equatable, Sendable {
    case null, bool(Bool), integer(Int), double(Double), string(String), array([AnyJSON]), object([String: AnyJSON])

    package init(from decoder: any Decoder) throws {
        let single = try decoder.singleValueContainer()
        if single.decodeNil() { self = .null }
        else if let value = try? single.decode(Bool.self) { self = .bool(value) }
        else if let value = try? single.decode(Int.self) { self = .integer(value) }
        else if let value = try? single.decode(Double.self) { self = .double(value) }
        else if let value = try? single.decode(String.self) { self = .string(value) }
        else if let value = try? single.decode([AnyJSON].self) { self = .array(value) }
        else { self = .object(try single.decode([String: AnyJSON].self)) }
    }

    package func encode(to encoder: any Encoder) throws {
        var single = encoder.singleValueContainer()
        switch self {
        case .null: try single.encodeNil()
        case .bool(let value): try single.encode(value)
        case .integer(let value): try single.encode(value)
        case .double(let value): try single.encode(value)
        case .string(let value): try single.encode(value)
        case .array(let value): try single.encode(value)
        case .object(let value): try single.encode(value)
        }
    }
}
