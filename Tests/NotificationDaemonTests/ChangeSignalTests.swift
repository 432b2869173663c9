@testable import NotificationDaemon
@testable import NotificationEngine
import Testing

/// The engine tells each link to the gateway that delivery reports were saved through a stream of
/// its own: a link that ends while it waits (its task cancelled) must not end the next link's.
@Suite(.timeLimit(.minutes(1))) struct ChangeSignalTests {
    @Test func aReaderCancelledWhileWaitingEndsOnlyItsOwnStream() async throws {
        let signal = ChangeSignal()
        let first = signal.watch()
        let reader = Task {
            var iterator = first.makeAsyncIterator()
            return await iterator.next()
        }
        reader.cancel()
        #expect(await reader.value == nil)

        let second = signal.watch()
        signal.notify()
        var iterator = second.makeAsyncIterator()
        #expect(await iterator.next() != nil, "the next reader hears of what was saved")
    }
}
