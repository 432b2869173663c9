/// A dictionary that can remember which keys changed since the changes were last taken: how the
/// machine tells a store which rows a step wrote, so the store writes only those.
///
/// It remembers nothing until ``isRecording`` is set, so a machine that is never stored (the
/// in-process system) keeps no journal that grows.
struct Journaled<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private(set) var dictionary: [Key: Value] = [:]
    private var changed: Set<Key> = []
    var isRecording = false

    init() {}

    init(_ values: [Key: Value]) {
        self.dictionary = values
    }

    subscript(key: Key) -> Value? {
        get { dictionary[key] }
        set {
            dictionary[key] = newValue
            if isRecording { changed.insert(key) }
        }
    }

    var values: Dictionary<Key, Value>.Values { dictionary.values }
    var count: Int { dictionary.count }
    var isEmpty: Bool { dictionary.isEmpty }

    @discardableResult
    mutating func removeValue(forKey key: Key) -> Value? {
        guard let removed = dictionary.removeValue(forKey: key) else { return nil }
        if isRecording { changed.insert(key) }
        return removed
    }

    mutating func removeAll() {
        if isRecording { changed.formUnion(dictionary.keys) }
        dictionary.removeAll()
    }

    /// What changed since the last call: the keys now holding a value, with it, and the keys removed.
    mutating func takeChanges() -> (written: [Key: Value], removed: [Key]) {
        defer { changed.removeAll(keepingCapacity: true) }
        var written: [Key: Value] = [:]
        var removed: [Key] = []
        for key in changed {
            if let value = dictionary[key] { written[key] = value } else { removed.append(key) }
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
        dictionary = try decoder.singleValueContainer().decode([Key: Value].self)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(dictionary)
    }
}
