import GRDB
import Synchronization

/// The pushes held for devices not linked, by device, in the order they are promoted (highest
/// priority first, then as they came): kept in memory beside the SQLite store's rows.
///
/// An index of them in SQLite (device, priority, sequence) put each push of a batch at its device's
/// place, so that a commit wrote a page of the index for almost every push: a quarter of what a push
/// cost the store, and more as held pushes accumulated (under load, the provider API's rate fell by a
/// third in ten seconds, BENCHMARKS.md). Here a held push costs an append. The rows stay the truth:
/// the index is read from them by the first transaction that needs it (one pass over the pushes),
/// and again by the next one after a write transaction failed (``invalidate()``: whatever it did to
/// the index is undone with its rows), or after another process wrote to the file.
///
/// Changed and read only inside the store's write transactions (one at a time); its count is also
/// read from elsewhere.
final class HeldPushes: Sendable {
    private struct State {
        var devices: [String: DeviceHeld] = [:]
        var count = 0
        var isCurrent = false
        /// The writer's `PRAGMA data_version` when it was read: another process writing to the file
        /// (the command line removing a device) changes it, and the index is read again.
        var dataVersion: Int?
    }

    /// One device's held pushes: their sequences by priority, the highest first, each in the order
    /// they came (sequences only grow).
    private struct DeviceHeld {
        var byPriority: [(priority: Int, sequences: [Int64])] = []

        mutating func add(_ sequence: Int64, priority: Int) {
            if let index = byPriority.firstIndex(where: { $0.priority <= priority }), byPriority[index].priority == priority {
                byPriority[index].sequences.append(sequence)
            } else {
                let index = byPriority.firstIndex { $0.priority < priority } ?? byPriority.endIndex
                byPriority.insert((priority, [sequence]), at: index)
            }
        }

        /// Removes those of `sequences` it holds; returns how many.
        mutating func remove(_ sequences: Set<Int64>) -> Int {
            var removed = 0
            for index in byPriority.indices {
                let before = byPriority[index].sequences.count
                byPriority[index].sequences.removeAll { sequences.contains($0) }
                removed += before - byPriority[index].sequences.count
            }
            byPriority.removeAll { $0.sequences.isEmpty }
            return removed
        }
    }

    private let state = Mutex(State())

    /// Held pushes in all, or nil when the index is not read yet.
    var count: Int? { state.withLock { $0.isCurrent ? $0.count : nil } }

    /// Makes the index current for a write transaction that may change it, reading it from the rows
    /// if needed.
    func prepare(_ db: Database) throws {
        let version = try Int.fetchOne(db.cachedStatement(sql: "PRAGMA data_version"))
        guard !state.withLock({ $0.isCurrent && $0.dataVersion == version }) else { return }
        var read = State()
        read.dataVersion = version
        let rows = try Row.fetchCursor(db, sql: "SELECT deviceID, priority, sequence FROM push WHERE held ORDER BY sequence")
        while let row = try rows.next() {
            read.devices[row[0] as String, default: DeviceHeld()].add(row[2], priority: row[1])
            read.count += 1
        }
        read.isCurrent = true
        state.withLock { $0 = read }
    }

    /// Has the index read again by the next transaction that needs it. Called, on the writer, when a
    /// write transaction failed in any way (a statement, its commit, SQLite rolling back by itself),
    /// before any other transaction runs.
    func invalidate() {
        state.withLock { $0.isCurrent = false }
    }

    func add(_ sequence: Int64, priority: Int, device: String) {
        state.withLock { state in
            state.devices[device, default: DeviceHeld()].add(sequence, priority: priority)
            state.count += 1
        }
    }

    /// The device's held pushes, in the order they are promoted.
    func sequences(of device: String) -> [Int64] {
        state.withLock { $0.devices[device]?.byPriority.flatMap(\.sequences) ?? [] }
    }

    func remove(_ sequences: Set<Int64>, of device: String) {
        guard !sequences.isEmpty else { return }
        state.withLock { state in
            guard var held = state.devices.removeValue(forKey: device) else { return }
            state.count -= held.remove(sequences)
            if !held.byPriority.isEmpty { state.devices[device] = held }
        }
    }

    /// Removes the pushes of rows deleted with `RETURNING sequence, deviceID, held`.
    func remove(deleted rows: [Row]) {
        var byDevice: [String: Set<Int64>] = [:]
        for row in rows where row[2] as Bool { byDevice[row[1] as String, default: []].insert(row[0]) }
        for (device, sequences) in byDevice { remove(sequences, of: device) }
    }

    /// Sequences as one SQL value, for `sequence IN (SELECT value FROM json_each(?))`.
    static func list(_ sequences: [Int64]) -> String {
        "[" + sequences.map(String.init).joined(separator: ",") + "]"
    }
}
