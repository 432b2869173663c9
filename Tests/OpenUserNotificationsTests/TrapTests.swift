import Foundation
import OpenUserNotifications
import Testing

/// Where Apple's framework raises an exception, this one stops the program the same way.
@Suite struct TrapTests {
    @Test func zeroIntervalTraps() async {
        await #expect(processExitsWith: .failure) {
            _ = UNTimeIntervalNotificationTrigger(timeInterval: 0, repeats: false)
        }
    }

    @Test func negativeIntervalTraps() async {
        await #expect(processExitsWith: .failure) {
            _ = UNTimeIntervalNotificationTrigger(timeInterval: -1, repeats: false)
        }
    }

    @Test func repeatingIntervalUnderAMinuteTraps() async {
        await #expect(processExitsWith: .failure) {
            _ = UNTimeIntervalNotificationTrigger(timeInterval: 59.9, repeats: true)
        }
    }

    @Test func repeatingIntervalOfAMinuteIsFine() {
        let trigger = UNTimeIntervalNotificationTrigger(timeInterval: 60, repeats: true)
        #expect(trigger.timeInterval == 60)
        #expect(trigger.repeats)
    }

    @Test func userInfoThatIsNotAPropertyListTrapsOnAdd() async {
        await #expect(processExitsWith: .failure) {
            let content = UNMutableNotificationContent()
            content.title = "x"
            content.userInfo = ["object": NSObject()]
            UNUserNotificationCenter.current().add(UNNotificationRequest(identifier: "x", content: content, trigger: nil))
        }
    }
}
