package import Foundation

/// A value that can travel in a notification's `userInfo`: the property-list types Apple allows there,
/// and JSON's `null`, which a push's payload may carry (the app finds `NSNull` there, as on iOS).
///
/// `userInfo` is `[AnyHashable: Any]` in the public API; inside the system it is kept in this form so it
/// is `Sendable`, comparable and can be stored or sent over the wire unchanged.
package enum PropertyListValue: Sendable, Hashable {
    /// JSON's `null`, from a push's payload only: a local notification's `userInfo` holds
    /// property-list values alone (``init(any:)`` takes no `NSNull`).
    case null
    case string(String)
    case integer(Int)
    case double(Double)
    case bool(Bool)
    case date(Date)
    case data(Data)
    case array([PropertyListValue])
    case dictionary([String: PropertyListValue])
}

extension PropertyListValue {
    /// Converts a Swift or Foundation value into a property-list value, or returns `nil` when the value
    /// (or anything nested in it) is not a property-list type.
    package init?(any value: Any) {
        // An NSNumber (what this type hands back for numbers) would also cast to Bool, Int and Double,
        // so it is recognised by its own dynamic type first and read by the type it holds.
        if type(of: value) is NSNumber.Type, let number = value as? NSNumber {
            self.init(number: number)
            return
        }
        switch value {
        case let v as String: self = .string(v)
        case let v as Substring: self = .string(String(v))
        case let v as Bool: self = .bool(v)
        case let v as Int: self = .integer(v)
        case let v as Int8: self = .integer(Int(v))
        case let v as Int16: self = .integer(Int(v))
        case let v as Int32: self = .integer(Int(v))
        case let v as Int64: self = .integer(Int(v))
        case let v as UInt8: self = .integer(Int(v))
        case let v as UInt16: self = .integer(Int(v))
        case let v as UInt32: self = .integer(Int(v))
        case let v as UInt: 
            guard let int = Int(exactly: v) else { return nil }
            self = .integer(int)
        case let v as UInt64:
            guard let int = Int(exactly: v) else { return nil }
            self = .integer(int)
        case let v as Double: self = .double(v)
        case let v as Float: self = .double(Double(v))
        case let v as Date: self = .date(v)
        case let v as Data: self = .data(v)
        case let v as [Any]:
            var items: [PropertyListValue] = []
            items.reserveCapacity(v.count)
            for item in v {
                guard let converted = PropertyListValue(any: item) else { return nil }
                items.append(converted)
            }
            self = .array(items)
        case let v as [AnyHashable: Any]:
            guard let dictionary = PropertyListValue.dictionary(from: v) else { return nil }
            self = .dictionary(dictionary)
        default:
            return nil
        }
    }

    private init(number: NSNumber) {
        switch String(cString: number.objCType) {
        case "c", "B": self = .bool(number.boolValue)
        case "f", "d": self = .double(number.doubleValue)
        // An unsigned number past `Int.max` (JSONSerialization reads 9223372036854775808 so) is a
        // `Double`, as JSONDecoder reads it, rather than an `Int` that wrapped around.
        case "Q", "L": self = Int(exactly: number.uint64Value).map(Self.integer) ?? .double(number.doubleValue)
        default: self = .integer(number.intValue)
        }
    }

    /// Converts a `userInfo`-style dictionary; keys must be strings, as in a property list.
    package static func dictionary(from value: [AnyHashable: Any]) -> [String: PropertyListValue]? {
        var result: [String: PropertyListValue] = [:]
        result.reserveCapacity(value.count)
        for (key, item) in value {
            guard let key = key.base as? String, let converted = PropertyListValue(any: item) else { return nil }
            result[key] = converted
        }
        return result
    }

    /// The value as an app reads it out of `userInfo`: numbers and booleans as `NSNumber`, as on Apple's
    /// platforms, so `as? Int` and `as? Double` both work whichever way the number was stored.
    package var anyValue: Any {
        switch self {
        case .null: NSNull()
        case .string(let v): v
        case .integer(let v): NSNumber(value: v)
        case .double(let v): NSNumber(value: v)
        case .bool(let v): NSNumber(value: v)
        case .date(let v): v
        case .data(let v): v
        case .array(let v): v.map(\.anyValue)
        case .dictionary(let v): v.mapValues(\.anyValue) as [String: Any]
        }
    }

    /// Whether arrays and dictionaries nest in the value more than `limit` deep (the value itself
    /// counted: a dictionary of strings is 1 deep, a string 0). Stops looking past the limit.
    package func nests(deeperThan limit: Int) -> Bool {
        switch self {
        case .array(let values):
            limit < 1 || values.contains { $0.nests(deeperThan: limit - 1) }
        case .dictionary(let values):
            limit < 1 || values.values.contains { $0.nests(deeperThan: limit - 1) }
        case .null, .string, .integer, .double, .bool, .date, .data:
            false
        }
    }

    /// Whether `null` is anywhere in the value.
    package var containsNull: Bool {
        switch self {
        case .null: true
        case .array(let values): values.contains { $0.containsNull }
        case .dictionary(let values): values.values.contains { $0.containsNull }
        case .string, .integer, .double, .bool, .date, .data: false
        }
    }

    /// A `userInfo` dictionary rebuilt from stored values.
    package static func userInfo(from dictionary: [String: PropertyListValue]) -> [AnyHashable: Any] {
        var result: [AnyHashable: Any] = [:]
        result.reserveCapacity(dictionary.count)
        for (key, value) in dictionary {
            result[AnyHashable(key)] = value.anyValue
        }
        return result
    }
}
