// Patterns that iOS code uses against Apple's framework, which must compile here unchanged.
import Foundation
import OpenUserNotifications
import OpenUserNotificationsTesting
import Testing

/// The "protocol over the center" pattern apps use to fake the center in their own tests.
protocol UserNotificationCenterProtocol {
    var delegate: (any UNUserNotificationCenterDelegate)? { get set }
    func requestAuthorization(options: UNAuthorizationOptions, completionHandler: @escaping (Bool, Error?) -> Void)
    func getNotificationSettings(completionHandler: @escaping (UNNotificationSettings) -> Void)
    func add(_ request: UNNotificationRequest, withCompletionHandler completionHandler: ((Error?) -> Void)?)
    func getPendingNotificationRequests(completionHandler: @escaping ([UNNotificationRequest]) -> Void)
    func removePendingNotificationRequests(withIdentifiers identifiers: [String])
    func notificationSettings() async -> UNNotificationSettings
}

extension UNUserNotificationCenter: UserNotificationCenterProtocol {}

/// Code that keeps state in a plain class and updates it from completion handlers.
final class ReminderScheduler {
    var center: any UserNotificationCenterProtocol
    var lastError: Error?
    var scheduled: [String] = []

    init(center: any UserNotificationCenterProtocol) { self.center = center }

    func schedule(_ identifier: String, completion: @escaping () -> Void) {
        let content = UNMutableNotificationContent()
        content.title = identifier
        let request = UNNotificationRequest(identifier: identifier, content: content,
                                            trigger: UNTimeIntervalNotificationTrigger(timeInterval: 60, repeats: false))
        center.add(request) { error in
            self.lastError = error
            if error == nil { self.scheduled.append(identifier) }
            completion()
        }
    }
}

@Suite struct SourceCompatibilityTests {
    @Test func theCenterConformsToAnAppsOwnProtocol() async throws {
        let harness = try await NotificationTestHarness.authorized()
        let scheduler = ReminderScheduler(center: harness.center)
        await withCheckedContinuation { continuation in
            scheduler.schedule("water the plants") { continuation.resume() }
        }
        #expect(scheduler.lastError == nil)
        #expect(scheduler.scheduled == ["water the plants"])
        #expect(await scheduler.center.notificationSettings().authorizationStatus == .authorized)
    }
}
