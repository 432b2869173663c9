import Foundation
@testable import NotificationCore
import Testing

/// The alarms of the system clock (the daemon's scheduler, the in-process system's wake-ups) go off in
/// their order, and a cancelled one never does.
@Suite(.timeLimit(.minutes(1))) struct AlarmThreadTests {
    @Test func alarmsGoOffInTheirOrderAndACancelledOneDoesNot() async throws {
        let (fired, continuation) = AsyncStream.makeStream(of: String.self)
        let now = Date()
        let alarms = AlarmThread.shared
        // Cancelled on the next line: long before its time, however busy the machine.
        let cancelled = alarms.schedule(at: now.addingTimeInterval(0.3)) { continuation.yield("cancelled") }
        _ = alarms.schedule(at: now.addingTimeInterval(0.4)) { continuation.yield("third") }
        _ = alarms.schedule(at: now.addingTimeInterval(0.04)) { continuation.yield("second") }
        _ = alarms.schedule(at: now.addingTimeInterval(-1)) { continuation.yield("first") }
        alarms.cancel(cancelled)
        var order: [String] = []
        for await name in fired {
            order.append(name)
            if order.count == 3 { break }
        }
        #expect(order == ["first", "second", "third"])
        #expect(Date().timeIntervalSince(now) >= 0.4, "not before its time")
    }
}
