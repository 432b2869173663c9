/// What waits for an app to be reachable, in order, each item at a numbered position: a store keeps
/// one row per item, and a step that adds or hands over items writes only those rows.
struct QueueForApp: Sendable {
    typealias Item = NotificationCenterMachine.QueuedForApp

    /// The items by position, ascending.
    private(set) var entries: [(position: Int64, item: Item)] = []
    private var added: [Int64: Item] = [:]
    private var removed: Set<Int64> = []
    var isRecording = false

    init() {}

    /// A queue as stored: its items at their positions, in any order.
    init(entries: [(position: Int64, item: Item)]) {
        self.entries = entries.sorted { $0.position < $1.position }
    }

    var items: [Item] { entries.map(\.item) }
    var count: Int { entries.count }

    mutating func append(_ item: Item) {
        let position = (entries.last?.position ?? 0) + 1
        entries.append((position, item))
        noteAdded(position, item)
    }

    /// Puts `items` before everything queued, in their order.
    mutating func prepend(_ items: [Item]) {
        guard !items.isEmpty else { return }
        let first = (entries.first?.position ?? 1) - Int64(items.count)
        let placed = items.enumerated().map { (position: first + Int64($0.offset), item: $0.element) }
        entries.insert(contentsOf: placed, at: 0)
        for entry in placed { noteAdded(entry.position, entry.item) }
    }

    /// Takes every item out, in order.
    mutating func removeAll() -> [Item] {
        let taken = entries
        entries.removeAll()
        if isRecording {
            for entry in taken where added.removeValue(forKey: entry.position) == nil { removed.insert(entry.position) }
        }
        return taken.map(\.item)
    }

    private mutating func noteAdded(_ position: Int64, _ item: Item) {
        guard isRecording else { return }
        removed.remove(position)
        added[position] = item
    }

    /// What changed since the last call: the items added, by position, and the positions removed.
    mutating func takeChanges() -> (added: [Int64: Item], removed: [Int64]) {
        defer {
            added.removeAll()
            removed.removeAll()
        }
        return (added, removed.sorted())
    }

    mutating func forgetChanges() {
        added.removeAll()
        removed.removeAll()
    }
}

/// As earlier daemons stored it: the items in order, without positions.
extension QueueForApp: Codable {
    init(from decoder: any Decoder) throws {
        let items = try decoder.singleValueContainer().decode([Item].self)
        entries = items.enumerated().map { (position: Int64($0.offset + 1), item: $0.element) }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(items)
    }
}
