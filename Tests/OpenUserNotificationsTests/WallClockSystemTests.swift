import Foundation
import OpenUserNotifications
import NotificationCore
import Synchronization
import Testing

/// The in-process system a plain app gets from `current()` runs on the wall clock. This is the one
/// place where a test cannot use a manual clock: it checks that the system clock's alarm, not a test,
/// drives delivery. It waits for the event with a deadline.
@Suite struct WallClockSystemTests {
    @Test func aWallClockSystemDeliversDueTriggersByItself() async throws {
        let events = Mutex<[String]>([])
        let delivered = AsyncStream<Void>.makeStream()
        var configuration = InProcessNotificationSystem.Configuration()
        configuration.appState = .background
        let system = InProcessNotificationSystem(
            configuration: configuration,
            clock: SystemClock(),
            answerer: AllowingPromptAnswerer(),
            observer: { event in
                if case .effect(.presented(let shown)) = event {
                    events.withLock { $0.append(shown.notification.request.identifier) }
                    delivered.continuation.yield()
                }
            }
        )
        let center = system.center
        #expect(try await center.requestAuthorization(options: [.alert]))
        let content = UNMutableNotificationContent()
        content.title = "soon"
        try await center.add(UNNotificationRequest(identifier: "soon", content: content,
                                                   trigger: UNTimeIntervalNotificationTrigger(timeInterval: 0.05, repeats: false)))
        let arrived = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await _ in delivered.stream { return true }
                return false
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(10))
                return false
            }
            let first = await group.next()!
            group.cancelAll()
            delivered.continuation.finish()
            return first
        }
        #expect(arrived)
        #expect(events.withLock { $0 } == ["soon"])
    }

    @Test func currentOutsideAHarnessIsTheProcessWideCenter() {
        #expect(UNUserNotificationCenter.current() === UNUserNotificationCenter.current())
        #expect(UNUserNotificationCenter.current() === InProcessNotificationSystem.processDefault.center)
    }
}
