/// A table of values by key that can remember which keys changed since the changes were last taken:
/// how the machine tells a store which rows a step wrote, so the store writes only those.
///
/// It remembers nothing until ``isRecording`` is set, so a machine that is never stored (the
/// in-process system) keeps no journal that grows.
///
/// The values are kept in an array, in no particular order, and a hash table maps each key to its
/// place: a daemon keeps thousands of apps' tables in memory, and a dictionary of 64 pending requests
/// has 128 buckets, each as large as a request, where this one has 64 values and 128 small indices.
struct Journaled<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// The keys and the values, in the same order: two arrays rather than one of pairs, so that the
    /// values can be handed out whole and looked through without copying each pair.
    private(set) var keys: ContiguousArray<Key> = []
    private(set) var values: ContiguousArray<Value> = []
    private var places: [Key: Int32] = [:]
    private var changed: Set<Key> = []
    var isRecording = false

    init() {}

    init(_ values: [Key: Value]) {
        self.init(keysAndValues: values.lazy.map { ($0.key, $0.value) }, count: values.count)
    }

    /// A table of these keys and values; a key given twice keeps its later value.
    init(keysAndValues: some Sequence<(Key, Value)>, count: Int) {
        keys.reserveCapacity(count)
        values.reserveCapacity(count)
        places.reserveCapacity(count)
        for (key, value) in keysAndValues { put(value, for: key) }
    }

    /// Every key with its value.
    var elements: Zip2Sequence<ContiguousArray<Key>, ContiguousArray<Value>> { zip(keys, values) }

    subscript(key: Key) -> Value? {
        get { places[key].map { values[Int($0)] } }
        set {
            if let newValue { put(newValue, for: key) } else { remove(key) }
            if isRecording { changed.insert(key) }
        }
    }

    var count: Int { keys.count }
    var isEmpty: Bool { keys.isEmpty }

    @discardableResult
    mutating func removeValue(forKey key: Key) -> Value? {
        guard let removed = remove(key) else { return nil }
        if isRecording { changed.insert(key) }
        return removed
    }

    /// Sets `key`'s value in its place, or adds it at the end.
    private mutating func put(_ value: Value, for key: Key) {
        if let place = places[key] {
            values[Int(place)] = value
        } else {
            places[key] = Int32(keys.count)
            keys.append(key)
            values.append(value)
        }
    }

    /// Takes `key`'s entry out, the last entry taking its place.
    @discardableResult
    private mutating func remove(_ key: Key) -> Value? {
        guard let place = places.removeValue(forKey: key).map(Int.init) else { return nil }
        let last = keys.count - 1
        if place != last {
            keys.swapAt(place, last)
            values.swapAt(place, last)
            places[keys[place]] = Int32(place)
        }
        keys.removeLast()
        return values.removeLast()
    }

    mutating func removeAll() {
        if isRecording { changed.formUnion(keys) }
        keys.removeAll()
        values.removeAll()
        places.removeAll()
    }

    /// What changed since the last call: the keys now holding a value, with it, and the keys removed.
    mutating func takeChanges() -> (written: [Key: Value], removed: [Key]) {
        defer { changed.removeAll(keepingCapacity: true) }
        var written: [Key: Value] = [:]
        var removed: [Key] = []
        for key in changed {
            if let value = self[key] { written[key] = value } else { removed.append(key) }
        }
        return (written, removed)
    }

    /// Forgets what changed: everything is about to be written whole.
    mutating func forgetChanges() {
        changed.removeAll()
    }
}

extension Journaled: Codable where Key: Codable, Value: Codable {
    init(from decoder: any Decoder) throws {
        self.init(try decoder.singleValueContainer().decode([Key: Value].self))
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(Dictionary(uniqueKeysWithValues: elements))
    }
}
