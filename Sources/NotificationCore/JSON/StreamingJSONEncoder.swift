package import Foundation

/// Encodes a value as compact JSON, writing it out as the value's `encode(to:)` goes.
///
/// `JSONEncoder` first builds a tree of the whole value (an object per container, a string per key)
/// and then writes the tree out. On a push's way through `unotify serve` a handful of values are
/// encoded (the notification stored, the core awaiting the delegate, the message to the app, the
/// link's messages), and encoding them was an eighth of its CPU. This encoder writes each key and
/// value into one buffer as it comes; when keys are to be sorted, an object's members are reordered
/// in place as it closes.
///
/// The output is the JSON `JSONEncoder` writes with its default strategies: dates as seconds since
/// 2001, data as base64, URLs as their absolute string, a value inside another that encodes nothing
/// as `{}`; non-finite numbers, and a value that encodes nothing at all, are refused
/// (`EncodingError.invalidValue`). With ``sortsKeys``, the keys of every object are in the order of
/// their UTF-8 bytes (for keys of ASCII letters and digits, the order `.sortedKeys` gives). A value
/// that nests deeper than ``JSONLimits/maximumDocumentDepth`` is refused too
/// (`EncodingError.invalidValue`): no reader would take it back. A value that writes to a container after a later sibling began, asks for a
/// `superEncoder`, or writes a key twice cannot be written out as it goes: it is encoded by
/// `JSONEncoder` with the same options instead.
package struct StreamingJSONEncoder: Sendable {
    /// Whether every object's keys are written in order, so that a value is always the same bytes.
    package var sortsKeys: Bool
    /// What the values' `encode(to:)` can read from their encoder's `userInfo`.
    package var userInfo: [CodingUserInfoKey: any Sendable]

    package init(sortsKeys: Bool = false, userInfo: [CodingUserInfoKey: any Sendable] = [:]) {
        self.sortsKeys = sortsKeys
        self.userInfo = userInfo
    }

    /// The JSON of `value`.
    package func encode(_ value: some Encodable) throws -> Data {
        Data(try encodeBytes(value))
    }

    /// The JSON of `value`, as bytes.
    package func encodeBytes(_ value: some Encodable) throws -> [UInt8] {
        let output = JSONOutput(sortsKeys: sortsKeys, userInfo: userInfo)
        do {
            try output.writeValue(value, level: 0)
            output.close(downTo: 0)
            // A failure the value's own code caught and went on from leaves the output incomplete.
            guard !output.isOutOfOrder else { throw JSONOutput.OutOfOrder() }
            return output.bytes
        } catch is JSONOutput.OutOfOrder {
            if output.isTooDeep { throw Self.tooDeep(value) }
            let encoder = JSONEncoder()
            if sortsKeys { encoder.outputFormatting = .sortedKeys }
            encoder.userInfo = userInfo
            let bytes = Array(try encoder.encode(value))
            // `JSONEncoder` writes any depth; what is written here, Foundation's readers read.
            if case .tooDeep? = StrictJSONReader(maximumDepth: JSONLimits.maximumDocumentDepth).check(bytes) { throw Self.tooDeep(value) }
            return bytes
        }
    }

    private static func tooDeep(_ value: Any) -> EncodingError {
        EncodingError.invalidValue(value, EncodingError.Context(
            codingPath: [], debugDescription: "The value nests deeper than \(JSONLimits.maximumDocumentDepth) levels, more than a JSON reader takes."
        ))
    }
}

/// A JSON object written member by member straight to its bytes, with ``StreamingJSONEncoder``'s
/// strings and numbers: the same bytes a `Codable` value encoding the same members in the same order
/// gives it. For a message written for every push, where `Codable`'s containers cost more than the
/// writing.
package struct JSONObjectWriter {
    private let output = JSONOutput(sortsKeys: false, userInfo: [:])
    private var isEmpty = true

    package init(capacity: Int = 512) {
        output.bytes.reserveCapacity(capacity)
        output.bytes.append(UInt8(ascii: "{"))
    }

    private mutating func key(_ key: String) {
        if !isEmpty { output.bytes.append(UInt8(ascii: ",")) }
        isEmpty = false
        output.writeString(key)
        output.bytes.append(UInt8(ascii: ":"))
    }

    package mutating func add(_ key: String, _ value: String) {
        self.key(key)
        output.writeString(value)
    }

    package mutating func add(_ key: String, _ value: some FixedWidthInteger) {
        self.key(key)
        output.writeInteger(value)
    }

    /// - Throws: `EncodingError.invalidValue` for a value that is not finite, as the encoder does.
    package mutating func add(_ key: String, _ value: Double) throws {
        self.key(key)
        try output.writeDouble(value, level: 0)
    }

    /// The object's bytes, closed.
    package func finish() -> [UInt8] {
        output.bytes.append(UInt8(ascii: "}"))
        return output.bytes
    }
}

/// The buffer a value is written into, and the containers open in it, outermost first.
///
/// A value's place in its container (its *slot*) is opened by writing its key, or the comma before
/// it in an array; an encoder fills one slot, at the level of the containers open when it was made.
/// A container stays open until its parent writes its next member or the value holding it ends.
private final class JSONOutput {
    /// A container's use that this buffer cannot follow as it goes.
    struct OutOfOrder: Error {}

    struct Frame {
        var isObject: Bool
        /// A number no other frame of this encoding has: a container held after its frame closed is
        /// told apart from the one open now at its level.
        var id: Int
        /// The slot this container fills.
        var slot: Int
        var count = 0
        /// Where its first member starts in `bytes`.
        var start: Int
        /// Where its members' keys start in `keys` and `keyStarts`.
        var keysBase: Int
        /// The key of the member being written, for coding paths.
        var currentKey: (any CodingKey)?
    }

    // Unchecked: one encoding uses one buffer, on one thread, and no access to it overlaps another
    // (the checks were a fifth of the encoder's time).
    @exclusivity(unchecked) var bytes: [UInt8] = []
    @exclusivity(unchecked) var frames: [Frame] = []
    /// The keys of the open objects' members, and where each member starts in `bytes`.
    @exclusivity(unchecked) var keys: [String] = []
    @exclusivity(unchecked) var keyStarts: [Int] = []
    /// Whether a slot is open and not yet filled, and its number.
    @exclusivity(unchecked) var slotIsOpen = true
    @exclusivity(unchecked) var slot = 0
    @exclusivity(unchecked) private var nextFrameID = 0
    /// Whether a container was used in a way this buffer cannot follow (or an object wrote a key
    /// twice, whose last value `JSONEncoder` keeps): the value is then encoded by `JSONEncoder`.
    @exclusivity(unchecked) private(set) var isOutOfOrder = false
    /// Whether a container would have opened deeper than ``JSONLimits/maximumDocumentDepth``.
    @exclusivity(unchecked) private(set) var isTooDeep = false
    let sortsKeys: Bool
    private let sendableUserInfo: [CodingUserInfoKey: any Sendable]
    /// Converted when a value first asks for it.
    lazy var userInfo: [CodingUserInfoKey: Any] = sendableUserInfo

    init(sortsKeys: Bool, userInfo: [CodingUserInfoKey: any Sendable]) {
        self.sortsKeys = sortsKeys
        sendableUserInfo = userInfo
        bytes.reserveCapacity(512)
    }

    /// Notes that the encoding cannot go on as it goes, and returns the error that says so.
    func outOfOrder() -> OutOfOrder {
        isOutOfOrder = true
        return OutOfOrder()
    }

    // MARK: Slots and containers

    /// Checks that the encoder of `slot` at `level` may fill it now.
    func checkSlot(_ slot: Int, level: Int) throws {
        guard slotIsOpen, self.slot == slot, frames.count == level else { throw outOfOrder() }
    }

    /// Opens a container in the slot of `slot` (or returns the one it opened already, as a class and
    /// its superclass asking for the same encoder's container do); returns its frame's index and id.
    func openContainer(isObject: Bool, slot: Int, level: Int) throws -> (index: Int, id: Int) {
        if level >= 0, frames.count > level, frames[level].slot == slot, frames[level].isObject == isObject {
            close(downTo: level + 1)
            return (level, frames[level].id)
        }
        try checkSlot(slot, level: level)
        guard frames.count < JSONLimits.maximumDocumentDepth else {
            isTooDeep = true
            throw outOfOrder()
        }
        slotIsOpen = false
        bytes.append(isObject ? UInt8(ascii: "{") : UInt8(ascii: "["))
        nextFrameID += 1
        frames.append(Frame(isObject: isObject, id: nextFrameID, slot: slot, start: bytes.count, keysBase: keys.count))
        return (level, nextFrameID)
    }

    /// Opens the slot of the next member of the container at `index`, closing what its previous
    /// member left open.
    func beginMember(of index: Int, id: Int, key: (any CodingKey)?) throws {
        close(downTo: index + 1)
        guard index < frames.count, frames[index].id == id else { throw outOfOrder() }
        // The previous member's slot was filled (or is an empty value, written now as `{}`).
        if slotIsOpen { writeEmptyValue() }
        if frames[index].count > 0 { bytes.append(UInt8(ascii: ",")) }
        frames[index].count += 1
        if let key {
            let name = key.stringValue
            keys.append(name)
            keyStarts.append(bytes.count)
            writeString(name)
            bytes.append(UInt8(ascii: ":"))
            frames[index].currentKey = key
        }
        slotIsOpen = true
        slot += 1
    }

    /// Ends a slot's value: what its encoder left open closes, and a value that wrote nothing is `{}`.
    func endValue(level: Int) {
        close(downTo: level)
        if slotIsOpen { writeEmptyValue() }
    }

    private func writeEmptyValue() {
        bytes.append(UInt8(ascii: "{"))
        bytes.append(UInt8(ascii: "}"))
        slotIsOpen = false
    }

    /// Closes the containers from the innermost down to `level` (`level` of them stay open).
    func close(downTo level: Int) {
        while frames.count > level {
            if slotIsOpen { writeEmptyValue() }
            let frame = frames.removeLast()
            if frame.isObject {
                finishObject(frame)
                bytes.append(UInt8(ascii: "}"))
            } else {
                bytes.append(UInt8(ascii: "]"))
            }
        }
    }

    /// Checks an object's keys, and puts its members in the order of their keys when asked to.
    private func finishObject(_ frame: Frame) {
        let base = frame.keysBase
        defer {
            keys.removeSubrange(base...)
            keyStarts.removeSubrange(base...)
        }
        let count = keys.count - base
        guard count > 1 else { return }
        // Written in order already (no key twice, then): nothing to check or move.
        if (1..<count).allSatisfy({ Self.precedes(keys[base + $0 - 1], keys[base + $0]) }) { return }
        let order = (base..<keys.count).sorted { Self.precedes(keys[$0], keys[$1]) }
        for position in 1..<count where keys[order[position - 1]] == keys[order[position]] {
            // Written twice: `JSONEncoder` keeps the last.
            isOutOfOrder = true
            return
        }
        guard sortsKeys else { return }
        let end = bytes.count
        var sorted: [UInt8] = []
        sorted.reserveCapacity(end - frame.start)
        for (position, member) in order.enumerated() {
            if position > 0 { sorted.append(UInt8(ascii: ",")) }
            let from = keyStarts[member]
            // A member ends where the comma before the next one is, or where the object ends.
            let to = member + 1 < keys.count ? keyStarts[member + 1] - 1 : end
            sorted.append(contentsOf: bytes[from..<to])
        }
        // The object is the end of the buffer: its members are written over in place. (Replaced
        // through the array while a slice of it was held, the whole buffer was copied for each such
        // object: quadratic in a long array, a second for a list of 4,800 notifications.)
        sorted.withUnsafeBufferPointer { sorted in
            bytes.withUnsafeMutableBufferPointer { bytes in
                _ = UnsafeMutableBufferPointer(rebasing: bytes[frame.start..<end]).update(fromContentsOf: sorted)
            }
        }
    }

    private static func precedes(_ left: String, _ right: String) -> Bool {
        left.utf8.lexicographicallyPrecedes(right.utf8)
    }

    /// The coding path of the slot at `level`: the keys being written by the containers below it.
    func codingPath(level: Int) -> [any CodingKey] {
        var path: [any CodingKey] = []
        for index in 0..<min(level, frames.count) {
            if let key = frames[index].currentKey {
                path.append(key)
            } else {
                path.append(IndexKey(intValue: max(0, frames[index].count - 1)))
            }
        }
        return path
    }

    // MARK: Values

    /// Writes `value` into the open slot at `level`.
    ///
    /// The types `JSONEncoder` writes itself rather than through their `encode(to:)` (data, URLs,
    /// decimals), and the common ones written faster here; compared by type, not cast one by one.
    func writeValue<T: Encodable>(_ value: T, level: Int) throws {
        let slot = self.slot
        if T.self == String.self {
            try checkSlot(slot, level: level)
            writeString(Self.same(value, as: String.self))
        } else if T.self == Int.self {
            try checkSlot(slot, level: level)
            writeInteger(Self.same(value, as: Int.self))
        } else if T.self == Bool.self {
            try checkSlot(slot, level: level)
            writeBool(Self.same(value, as: Bool.self))
        } else if T.self == Double.self {
            try checkSlot(slot, level: level)
            try writeDouble(Self.same(value, as: Double.self), level: level)
        } else if T.self == Date.self {
            try checkSlot(slot, level: level)
            try writeDouble(Self.same(value, as: Date.self).timeIntervalSinceReferenceDate, level: level)
        } else if T.self == Data.self {
            try checkSlot(slot, level: level)
            writeString(Self.same(value, as: Data.self).base64EncodedString())
        } else if T.self == URL.self {
            try checkSlot(slot, level: level)
            writeString(Self.same(value, as: URL.self).absoluteString)
        } else if T.self == Decimal.self {
            try checkSlot(slot, level: level)
            bytes.append(contentsOf: Self.same(value, as: Decimal.self).description.utf8)
            slotIsOpen = false
        } else {
            try value.encode(to: StreamingEncoder(output: self, level: level, slot: slot))
            if level == 0, slotIsOpen, frames.isEmpty {
                throw EncodingError.invalidValue(value, EncodingError.Context(codingPath: [], debugDescription: "Top-level \(T.self) did not encode any values."))
            }
            endValue(level: level)
        }
    }

    /// `value` as the type it is (checked by the caller).
    private static func same<T, U>(_ value: T, as type: U.Type) -> U {
        withUnsafePointer(to: value) { $0.withMemoryRebound(to: U.self, capacity: 1) { $0.pointee } }
    }

    func writeNull() {
        bytes.append(contentsOf: "null".utf8)
        slotIsOpen = false
    }

    func writeBool(_ value: Bool) {
        bytes.append(contentsOf: value ? "true".utf8 : "false".utf8)
        slotIsOpen = false
    }

    func writeInteger(_ value: some FixedWidthInteger) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        // The digits from the last, then turned around in place.
        let start = bytes.count
        var magnitude = value.magnitude
        repeat {
            bytes.append(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: magnitude % 10))
            magnitude /= 10
        } while magnitude > 0
        bytes[start...].reverse()
        slotIsOpen = false
    }

    func writeDouble(_ value: Double, level: Int) throws {
        guard value.isFinite else { throw nonFinite(value, level: level) }
        writeNumber(value.description)
    }

    func writeFloat(_ value: Float, level: Int) throws {
        guard value.isFinite else { throw nonFinite(value, level: level) }
        writeNumber(value.description)
    }

    /// A number as Swift describes it, without the `.0` of a whole one (as `JSONEncoder` writes it).
    private func writeNumber(_ description: String) {
        let utf8 = description.utf8
        if utf8.count > 2, utf8.last == UInt8(ascii: "0"), utf8[utf8.index(utf8.endIndex, offsetBy: -2)] == UInt8(ascii: ".") {
            bytes.append(contentsOf: utf8.dropLast(2))
        } else {
            bytes.append(contentsOf: utf8)
        }
        slotIsOpen = false
    }

    private func nonFinite(_ value: Any, level: Int) -> EncodingError {
        EncodingError.invalidValue(value, EncodingError.Context(
            codingPath: codingPath(level: level),
            debugDescription: "Unable to encode \(value) directly in JSON."
        ))
    }

    /// A string, quoted and escaped as `JSONEncoder` escapes it (slashes included).
    func writeString(_ string: String) {
        bytes.append(UInt8(ascii: "\""))
        let utf8 = string.utf8
        let needsEscaping = utf8.withContiguousStorageIfAvailable { buffer in buffer.contains(where: Self.needsEscaping) }
            ?? utf8.contains(where: Self.needsEscaping)
        if !needsEscaping {
            bytes.append(contentsOf: utf8)
        } else {
            for byte in utf8 {
                guard Self.needsEscaping(byte) else {
                    bytes.append(byte)
                    continue
                }
                bytes.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): bytes.append(byte)
                case 0x08: bytes.append(UInt8(ascii: "b"))
                case 0x0C: bytes.append(UInt8(ascii: "f"))
                case 0x0A: bytes.append(UInt8(ascii: "n"))
                case 0x0D: bytes.append(UInt8(ascii: "r"))
                case 0x09: bytes.append(UInt8(ascii: "t"))
                default:
                    let hex = Array("0123456789abcdef".utf8)
                    bytes.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
                }
            }
        }
        bytes.append(UInt8(ascii: "\""))
        slotIsOpen = false
    }

    private static func needsEscaping(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte == UInt8(ascii: "/")
    }
}

extension JSONOutput {
    /// The keyed container opened in `slot` at `level`; when that cannot be followed, one whose every
    /// write fails (the value is then encoded again by `JSONEncoder`).
    func keyedContainer<Key: CodingKey>(_ type: Key.Type, slot: Int, level: Int) -> KeyedEncodingContainer<Key> {
        let opened = try? openContainer(isObject: true, slot: slot, level: level)
        return KeyedEncodingContainer(StreamingKeyedContainer(output: self, index: opened?.index ?? -1, id: opened?.id ?? -1))
    }

    /// The unkeyed container opened in `slot` at `level`, as ``keyedContainer(_:slot:level:)``.
    func unkeyedContainer(slot: Int, level: Int) -> any UnkeyedEncodingContainer {
        let opened = try? openContainer(isObject: false, slot: slot, level: level)
        return StreamingUnkeyedContainer(output: self, index: opened?.index ?? -1, id: opened?.id ?? -1)
    }

    /// A superclass's encoder is not followed as it goes: the value is encoded again by `JSONEncoder`.
    func superEncoder() -> any Encoder {
        _ = outOfOrder()
        return StreamingEncoder(output: self, level: -1, slot: -1)
    }
}

/// An array's element position in a coding path.
private struct IndexKey: CodingKey {
    var intValue: Int?
    var stringValue: String { "Index \(intValue ?? 0)" }
    init(intValue: Int) { self.intValue = intValue }
    init?(stringValue: String) { nil }
}

/// The encoder of one slot.
private struct StreamingEncoder: Encoder {
    let output: JSONOutput
    let level: Int
    let slot: Int

    var codingPath: [any CodingKey] { output.codingPath(level: level) }
    var userInfo: [CodingUserInfoKey: Any] { output.userInfo }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        output.keyedContainer(Key.self, slot: slot, level: level)
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        output.unkeyedContainer(slot: slot, level: level)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        StreamingSingleValueContainer(output: output, level: level, slot: slot)
    }
}

private struct StreamingKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let output: JSONOutput
    let index: Int
    let id: Int

    var codingPath: [any CodingKey] { output.codingPath(level: max(0, index)) }

    private func begin(_ key: Key) throws {
        guard index >= 0 else { throw output.outOfOrder() }
        try output.beginMember(of: index, id: id, key: key)
    }

    mutating func encodeNil(forKey key: Key) throws {
        try begin(key)
        output.writeNull()
    }

    mutating func encode(_ value: Bool, forKey key: Key) throws {
        try begin(key)
        output.writeBool(value)
    }

    mutating func encode(_ value: String, forKey key: Key) throws {
        try begin(key)
        output.writeString(value)
    }

    mutating func encode(_ value: Double, forKey key: Key) throws {
        try begin(key)
        try output.writeDouble(value, level: index + 1)
    }

    mutating func encode(_ value: Float, forKey key: Key) throws {
        try begin(key)
        try output.writeFloat(value, level: index + 1)
    }

    mutating func encode(_ value: Int, forKey key: Key) throws {
        try begin(key)
        output.writeInteger(value)
    }

    mutating func encode(_ value: Int8, forKey key: Key) throws { try begin(key); output.writeInteger(value) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try begin(key); output.writeInteger(value) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try begin(key); output.writeInteger(value) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try begin(key); output.writeInteger(value) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try begin(key); output.writeInteger(value) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try begin(key); output.writeInteger(value) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try begin(key); output.writeInteger(value) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try begin(key); output.writeInteger(value) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try begin(key); output.writeInteger(value) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try begin(key)
        try output.writeValue(value, level: index + 1)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        let began = (try? begin(key)) != nil
        return output.keyedContainer(NestedKey.self, slot: began ? output.slot : -1, level: index + 1)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let began = (try? begin(key)) != nil
        return output.unkeyedContainer(slot: began ? output.slot : -1, level: index + 1)
    }

    mutating func superEncoder() -> any Encoder { output.superEncoder() }
    mutating func superEncoder(forKey key: Key) -> any Encoder { output.superEncoder() }
}

private struct StreamingUnkeyedContainer: UnkeyedEncodingContainer {
    let output: JSONOutput
    let index: Int
    let id: Int

    var codingPath: [any CodingKey] { output.codingPath(level: max(0, index)) }
    var count: Int { index >= 0 && index < output.frames.count && output.frames[index].id == id ? output.frames[index].count : 0 }

    private func begin() throws {
        guard index >= 0 else { throw output.outOfOrder() }
        try output.beginMember(of: index, id: id, key: nil)
    }

    mutating func encodeNil() throws {
        try begin()
        output.writeNull()
    }

    mutating func encode(_ value: Bool) throws { try begin(); output.writeBool(value) }
    mutating func encode(_ value: String) throws { try begin(); output.writeString(value) }
    mutating func encode(_ value: Double) throws { try begin(); try output.writeDouble(value, level: index + 1) }
    mutating func encode(_ value: Float) throws { try begin(); try output.writeFloat(value, level: index + 1) }
    mutating func encode(_ value: Int) throws { try begin(); output.writeInteger(value) }
    mutating func encode(_ value: Int8) throws { try begin(); output.writeInteger(value) }
    mutating func encode(_ value: Int16) throws { try begin(); output.writeInteger(value) }
    mutating func encode(_ value: Int32) throws { try begin(); output.writeInteger(value) }
    mutating func encode(_ value: Int64) throws { try begin(); output.writeInteger(value) }
    mutating func encode(_ value: UInt) throws { try begin(); output.writeInteger(value) }
    mutating func encode(_ value: UInt8) throws { try begin(); output.writeInteger(value) }
    mutating func encode(_ value: UInt16) throws { try begin(); output.writeInteger(value) }
    mutating func encode(_ value: UInt32) throws { try begin(); output.writeInteger(value) }
    mutating func encode(_ value: UInt64) throws { try begin(); output.writeInteger(value) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try begin()
        try output.writeValue(value, level: index + 1)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let began = (try? begin()) != nil
        return output.keyedContainer(NestedKey.self, slot: began ? output.slot : -1, level: index + 1)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let began = (try? begin()) != nil
        return output.unkeyedContainer(slot: began ? output.slot : -1, level: index + 1)
    }

    mutating func superEncoder() -> any Encoder { output.superEncoder() }
}

private struct StreamingSingleValueContainer: SingleValueEncodingContainer {
    let output: JSONOutput
    let level: Int
    let slot: Int

    var codingPath: [any CodingKey] { output.codingPath(level: level) }

    private func check() throws { try output.checkSlot(slot, level: level) }

    mutating func encodeNil() throws { try check(); output.writeNull() }
    mutating func encode(_ value: Bool) throws { try check(); output.writeBool(value) }
    mutating func encode(_ value: String) throws { try check(); output.writeString(value) }
    mutating func encode(_ value: Double) throws { try check(); try output.writeDouble(value, level: level) }
    mutating func encode(_ value: Float) throws { try check(); try output.writeFloat(value, level: level) }
    mutating func encode(_ value: Int) throws { try check(); output.writeInteger(value) }
    mutating func encode(_ value: Int8) throws { try check(); output.writeInteger(value) }
    mutating func encode(_ value: Int16) throws { try check(); output.writeInteger(value) }
    mutating func encode(_ value: Int32) throws { try check(); output.writeInteger(value) }
    mutating func encode(_ value: Int64) throws { try check(); output.writeInteger(value) }
    mutating func encode(_ value: UInt) throws { try check(); output.writeInteger(value) }
    mutating func encode(_ value: UInt8) throws { try check(); output.writeInteger(value) }
    mutating func encode(_ value: UInt16) throws { try check(); output.writeInteger(value) }
    mutating func encode(_ value: UInt32) throws { try check(); output.writeInteger(value) }
    mutating func encode(_ value: UInt64) throws { try check(); output.writeInteger(value) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try check()
        try output.writeValue(value, level: level)
    }
}
