@testable import NotificationDaemon
import Synchronization
import Testing

/// When a device link acknowledges the pushes its engine made durable.
@Suite struct AcknowledgementPacerTests {
    final class Sent: Sendable {
        let values = Mutex<[Int64]>([])
        func append(_ value: Int64) { values.withLock { $0.append(value) } }
        var all: [Int64] { values.withLock { $0 } }
    }

    /// The interval is an hour here: nothing below waits for it to pass.
    @Test func theFirstGoesAtOnceThenOneIsHeldUntilHalfTheWindowWaits() {
        let sent = Sent()
        let pacer = AcknowledgementPacer(interval: .seconds(3600)) { sent.append($0) }
        defer { pacer.close() }
        pacer.setWindow(6)
        // After a quiet spell: at once.
        pacer.taken(through: 10, count: 1)
        #expect(sent.all == [10])
        // Within the interval: held, however many sequences they span.
        pacer.taken(through: 14, count: 1)
        pacer.taken(through: 20, count: 1)
        #expect(sent.all == [10])
        // Half the window (three pushes) waits: acknowledged at once, all of it.
        pacer.taken(through: 21, count: 1)
        #expect(sent.all == [10, 21])
        // Nothing new made durable (pushes it had already): nothing sent.
        pacer.taken(through: 21, count: 3)
        #expect(sent.all == [10, 21])
    }

    @Test func aClosedLinkSendsNothing() {
        let sent = Sent()
        let pacer = AcknowledgementPacer(interval: .seconds(3600)) { sent.append($0) }
        pacer.close()
        pacer.taken(through: 1, count: 64)
        #expect(sent.all.isEmpty)
    }
}
