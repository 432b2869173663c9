import Foundation
import NotificationCore
import PropertyBased
import Testing

private let t0 = Date(timeIntervalSince1970: 1_767_225_600)

private func at(_ seconds: TimeInterval) -> Date { t0.addingTimeInterval(seconds) }

/// Takes everything due by `now`, in the order the queue gives it.
private func drain<Key>(_ queue: inout TriggerQueue<Key>, at now: Date) -> [Key] {
    var keys: [Key] = []
    while let (key, _) = queue.popDue(at: now) { keys.append(key) }
    return keys
}

@Suite("Trigger queue")
struct TriggerQueueTests {
    @Test func emptyQueueHasNothingDue() {
        var queue = TriggerQueue<String>()
        #expect(queue.isEmpty)
        #expect(queue.count == 0)
        #expect(queue.nextDate() == nil)
        #expect(queue.popDue(at: .distantFuture) == nil)
    }

    @Test func itemsComeOutSoonestFirst() {
        var queue = TriggerQueue<String>()
        queue.schedule("c", at: at(30))
        queue.schedule("a", at: at(10))
        queue.schedule("b", at: at(20))
        #expect(queue.count == 3)
        #expect(queue.nextDate() == at(10))
        #expect(drain(&queue, at: at(100)) == ["a", "b", "c"])
        #expect(queue.isEmpty)
    }

    @Test func tiesComeOutInSchedulingOrder() {
        var queue = TriggerQueue<String>()
        for key in ["x", "b", "y", "a"] { queue.schedule(key, at: at(5)) }
        queue.schedule("early", at: at(4))
        #expect(drain(&queue, at: at(5)) == ["early", "x", "b", "y", "a"])
    }

    @Test("rescheduling a key puts it at the back of its new date's ties")
    func rescheduleCountsAsNewScheduling() {
        var queue = TriggerQueue<String>()
        queue.schedule("a", at: at(5))
        queue.schedule("b", at: at(5))
        queue.schedule("a", at: at(5))
        #expect(drain(&queue, at: at(5)) == ["b", "a"])
    }

    @Test func rescheduleReplacesTheEarlierDate() {
        var queue = TriggerQueue<String>()
        queue.schedule("a", at: at(10))
        queue.schedule("b", at: at(20))
        queue.schedule("a", at: at(30))
        #expect(queue.count == 2)
        #expect(queue.date(of: "a") == at(30))
        #expect(queue.nextDate() == at(20))
        #expect(drain(&queue, at: at(25)) == ["b"])
        #expect(drain(&queue, at: at(30)) == ["a"])
        #expect(queue.isEmpty)
    }

    @Test func rescheduleEarlierMovesItForward() {
        var queue = TriggerQueue<String>()
        queue.schedule("a", at: at(30))
        queue.schedule("b", at: at(20))
        queue.schedule("a", at: at(10))
        #expect(drain(&queue, at: at(100)) == ["a", "b"])
    }

    @Test func removeUnschedules() {
        var queue = TriggerQueue<String>()
        queue.schedule("a", at: at(10))
        queue.schedule("b", at: at(20))
        queue.remove("a")
        #expect(queue.count == 1)
        #expect(queue.date(of: "a") == nil)
        #expect(queue.nextDate() == at(20))
        #expect(drain(&queue, at: at(100)) == ["b"])
    }

    @Test func removingAnUnscheduledKeyDoesNothing() {
        var queue = TriggerQueue<String>()
        queue.schedule("a", at: at(10))
        queue.remove("nope")
        queue.remove("nope")
        #expect(queue.count == 1)
        #expect(drain(&queue, at: at(10)) == ["a"])
    }

    @Test func removeThenScheduleAgain() {
        var queue = TriggerQueue<String>()
        queue.schedule("a", at: at(10))
        queue.remove("a")
        queue.schedule("a", at: at(40))
        #expect(queue.popDue(at: at(10)) == nil)
        #expect(queue.popDue(at: at(40))?.key == "a")
    }

    @Test func removeAllEmptiesTheQueue() {
        var queue = TriggerQueue<String>()
        for index in 0..<100 { queue.schedule("k\(index)", at: at(TimeInterval(index))) }
        queue.removeAll()
        #expect(queue.isEmpty)
        #expect(queue.nextDate() == nil)
        #expect(queue.popDue(at: .distantFuture) == nil)
        queue.schedule("k1", at: at(1))
        #expect(drain(&queue, at: at(1)) == ["k1"])
    }

    @Test("an item due exactly now pops; one a nanosecond later does not")
    func popDueAtExactBoundary() {
        var queue = TriggerQueue<String>()
        let due = at(60)
        queue.schedule("a", at: due)
        #expect(queue.popDue(at: due.addingTimeInterval(-0.001)) == nil)
        #expect(queue.popDue(at: Date(timeIntervalSinceReferenceDate: due.timeIntervalSinceReferenceDate.nextDown)) == nil)
        #expect(queue.count == 1)
        let popped = queue.popDue(at: due)
        #expect(popped?.key == "a")
        #expect(popped?.date == due)
        #expect(queue.isEmpty)
    }

    @Test("popDue reports the scheduled date, not the time it was asked at")
    func popDueReportsScheduledDate() {
        var queue = TriggerQueue<String>()
        queue.schedule("a", at: at(10))
        #expect(queue.popDue(at: at(1000))?.date == at(10))
    }

    @Test("a queue built at once gives what scheduling one by one gives, repeated keys included")
    func builtAtOnceMatchesScheduledOneByOne() {
        let scheduled: [(key: String, date: Date)] = [
            ("c", at(30)), ("a", at(10)), ("b", at(10)), ("a", at(20)), ("d", at(10)), ("e", at(40)),
        ]
        var oneByOne = TriggerQueue<String>()
        for (key, date) in scheduled { oneByOne.schedule(key, at: date) }
        var atOnce = TriggerQueue<String>(scheduled)
        #expect(atOnce.count == 5)
        #expect(atOnce.date(of: "a") == at(20))
        // Later schedules still come after the built ones among ties.
        oneByOne.schedule("f", at: at(10))
        atOnce.schedule("f", at: at(10))
        let expected = drain(&oneByOne, at: at(100))
        #expect(expected == ["b", "d", "f", "a", "c", "e"])
        #expect(drain(&atOnce, at: at(100)) == expected)
    }

    // MARK: - Churn against a model

    /// What the queue should do, kept the obvious way: a list searched and sorted on every question.
    struct Model {
        var entries: [(key: Int, date: Int, order: Int)] = []
        var nextOrder = 0

        mutating func schedule(_ key: Int, at date: Int) {
            entries.removeAll { $0.key == key }
            entries.append((key, date, nextOrder))
            nextOrder += 1
        }

        mutating func remove(_ key: Int) { entries.removeAll { $0.key == key } }

        var sorted: [(key: Int, date: Int, order: Int)] {
            entries.sorted { ($0.date, $0.order) < ($1.date, $1.order) }
        }

        mutating func popDue(at now: Int) -> (key: Int, date: Int)? {
            guard let first = sorted.first, first.date <= now else { return nil }
            remove(first.key)
            return (first.key, first.date)
        }
    }

    enum Operation: Sendable, CustomStringConvertible {
        case schedule(key: Int, date: Int)
        case remove(key: Int)
        case popDue(now: Int)

        var description: String {
            switch self {
            case .schedule(let key, let date): "schedule(\(key), \(date))"
            case .remove(let key): "remove(\(key))"
            case .popDue(let now): "popDue(\(now))"
            }
        }
    }

    /// A run of operations, described briefly: a failure names the failing step itself.
    struct Churn: Sendable, CustomStringConvertible {
        var operations: [Operation]
        var description: String { "\(operations.count) operations" }
    }

    /// Mostly reschedules and removes among few keys and few dates, so that stale entries pile up, ties are
    /// common and compaction runs many times; a sprinkling of pops checks the order as it goes.
    static let churn = zip(Gen.int(in: 0..<100), Gen.int(in: 0..<200), Gen.int(in: 0..<500)).map { kind, key, date in
        switch kind {
        case 0..<70: Operation.schedule(key: key, date: date)
        case 70..<95: Operation.remove(key: key)
        default: Operation.popDue(now: date)
        }
    }.array(of: 10_000).map(Churn.init)

    /// Shrinking is off: shrinking ten thousand operations one at a time takes far longer than it helps;
    /// the failure names the step and operation, and the seed replays it.
    @Test("10,000 random reschedules, removals and pops agree with a sorted list", .shrinking(false))
    func churnMatchesModel() async throws {
        await propertyCheck(count: 8, input: Self.churn) { churn in
            var queue = TriggerQueue<Int>()
            var model = Model()
            for (step, operation) in churn.operations.enumerated() {
                switch operation {
                case .schedule(let key, let date):
                    queue.schedule(key, at: at(TimeInterval(date)))
                    model.schedule(key, at: date)
                case .remove(let key):
                    queue.remove(key)
                    model.remove(key)
                case .popDue(let now):
                    let popped = queue.popDue(at: at(TimeInterval(now)))
                    let expected = model.popDue(at: now)
                    guard popped?.key == expected?.key, popped?.date == expected.map({ at(TimeInterval($0.date)) }) else {
                        Issue.record("step \(step) \(operation): got \(String(describing: popped)), expected \(String(describing: expected))")
                        return
                    }
                }
                guard queue.count == model.entries.count else {
                    Issue.record("step \(step) \(operation): count \(queue.count), expected \(model.entries.count)")
                    return
                }
            }
            for entry in model.entries {
                #expect(queue.date(of: entry.key) == at(TimeInterval(entry.date)))
            }
            #expect(queue.nextDate() == model.sorted.first.map { at(TimeInterval($0.date)) })
            let remaining = drain(&queue, at: .distantFuture)
            #expect(remaining == model.sorted.map(\.key))
        }
    }
}
