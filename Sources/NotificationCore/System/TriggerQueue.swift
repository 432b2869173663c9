import HeapModule
package import Foundation

/// The dates at which scheduled items are due, soonest first.
///
/// Scheduling, rescheduling and removing an item cost O(log n); so does taking the next due item.
/// Items due at the same instant come out in the order they were scheduled.
package struct TriggerQueue<Key: Hashable & Sendable>: Sendable {
    private struct Entry: Comparable, Sendable {
        var date: Date
        var sequence: UInt64
        var key: Key

        static func < (lhs: Entry, rhs: Entry) -> Bool {
            (lhs.date, lhs.sequence) < (rhs.date, rhs.sequence)
        }

        static func == (lhs: Entry, rhs: Entry) -> Bool {
            lhs.date == rhs.date && lhs.sequence == rhs.sequence
        }
    }

    /// Heap entries are not removed in place: a removed or rescheduled key leaves a stale entry behind,
    /// recognised by its sequence number and skipped. The heap is rebuilt when stale entries outnumber
    /// live ones, so its size stays within twice the number of scheduled keys.
    private var heap = Heap<Entry>()
    private var live: [Key: (date: Date, sequence: UInt64)] = [:]
    private var nextSequence: UInt64 = 0

    package init() {}

    /// A queue of these keys and dates, scheduled in the order given: built at once (one hash table
    /// of the right size, one heapify), not by a schedule call each.
    package init(_ scheduled: some Collection<(key: Key, date: Date)>) {
        live.reserveCapacity(scheduled.count)
        var entries: [Entry] = []
        entries.reserveCapacity(scheduled.count)
        for (key, date) in scheduled {
            let entry = Entry(date: date, sequence: nextSequence, key: key)
            nextSequence += 1
            // A key given twice keeps its later date, as with two schedule calls: the earlier entry
            // stays in the heap, stale, and is dropped when it comes up.
            live[key] = (date, entry.sequence)
            entries.append(entry)
        }
        heap = Heap(entries)
    }

    /// The number of scheduled keys.
    package var count: Int { live.count }

    package var isEmpty: Bool { live.isEmpty }

    /// When `key` is due, if it is scheduled.
    package func date(of key: Key) -> Date? { live[key]?.date }

    /// Schedules `key` at `date`, replacing any earlier schedule of the same key.
    package mutating func schedule(_ key: Key, at date: Date) {
        let sequence = nextSequence
        nextSequence += 1
        live[key] = (date, sequence)
        heap.insert(Entry(date: date, sequence: sequence, key: key))
        compactIfNeeded()
    }

    /// Unschedules `key`; does nothing if it is not scheduled.
    package mutating func remove(_ key: Key) {
        guard live.removeValue(forKey: key) != nil else { return }
        compactIfNeeded()
    }

    /// Unschedules everything.
    package mutating func removeAll() {
        heap = Heap()
        live.removeAll()
    }

    /// The soonest date anything is due.
    package mutating func nextDate() -> Date? {
        dropStaleMinimums()
        return heap.min?.date
    }

    /// Takes the soonest item if it is due at or before `now`.
    package mutating func popDue(at now: Date) -> (key: Key, date: Date)? {
        dropStaleMinimums()
        guard let first = heap.min, first.date <= now else { return nil }
        _ = heap.popMin()
        live.removeValue(forKey: first.key)
        return (first.key, first.date)
    }

    private mutating func dropStaleMinimums() {
        while let first = heap.min, live[first.key]?.sequence != first.sequence {
            _ = heap.popMin()
        }
    }

    private mutating func compactIfNeeded() {
        guard heap.count > 64, heap.count > 2 * live.count else { return }
        heap = Heap(live.map { Entry(date: $0.value.date, sequence: $0.value.sequence, key: $0.key) })
    }
}

extension TriggerQueue: Codable where Key: Codable {
    private struct Scheduled: Codable {
        var key: Key
        var date: Date
        var sequence: UInt64
    }

    private enum CodingKeys: String, CodingKey {
        case scheduled, nextSequence
    }

    /// Stored as the scheduled keys with their dates and order; the heap is rebuilt on decoding.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let scheduled = try container.decode([Scheduled].self, forKey: .scheduled)
        nextSequence = try container.decode(UInt64.self, forKey: .nextSequence)
        live = Dictionary(scheduled.map { ($0.key, (date: $0.date, sequence: $0.sequence)) }, uniquingKeysWith: { first, _ in first })
        heap = Heap(scheduled.map { Entry(date: $0.date, sequence: $0.sequence, key: $0.key) })
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        let scheduled = live.map { Scheduled(key: $0.key, date: $0.value.date, sequence: $0.value.sequence) }
            .sorted { $0.sequence < $1.sequence }
        try container.encode(scheduled, forKey: .scheduled)
        try container.encode(nextSequence, forKey: .nextSequence)
    }
}
