import Foundation
import OpenUserNotifications
import OpenUserNotificationsTesting

extension NotificationTestHarness {
    /// A harness whose app is already authorized for alerts, sounds and badges (and, when asked, the
    /// in-app settings button).
    static func authorized(
        appState: SimulatedAppState = .background,
        options: UNAuthorizationOptions = [.alert, .sound, .badge],
        timeZone: TimeZone = TimeZone(identifier: "UTC")!,
        pendingRequestLimit: Int? = 64,
        attachmentStore: URL? = nil
    ) async throws -> NotificationTestHarness {
        let harness = NotificationTestHarness(
            timeZone: timeZone,
            appState: appState,
            pendingRequestLimit: pendingRequestLimit,
            attachmentStore: attachmentStore
        )
        harness.person.willAnswerAuthorization(allow: true)
        _ = try await harness.center.requestAuthorization(options: options)
        return harness
    }

    /// Adds a request with a title (and optionally a category) and the given trigger.
    func add(
        _ identifier: String,
        title: String = "title",
        category: String = "",
        badge: Int? = nil,
        sound: UNNotificationSound? = nil,
        trigger: UNNotificationTrigger? = nil
    ) async throws {
        let content = UNMutableNotificationContent()
        content.title = title
        content.categoryIdentifier = category
        content.badge = badge.map { NSNumber(value: $0) }
        content.sound = sound
        try await center.add(UNNotificationRequest(identifier: identifier, content: content, trigger: trigger))
    }

    /// The kinds of event recorded so far, by name, for compact assertions on order.
    var eventNames: [String] {
        history.events.map { event in
            let text = event.description
            return String(text[..<(text.firstIndex(of: "(") ?? text.endIndex)])
        }
    }
}

/// Runs `body` and returns the `UNError` code it threw, or `nil` if it did not throw one.
func unErrorCode(_ body: () async throws -> Void) async -> UNError.Code? {
    do {
        try await body()
        return nil
    } catch let error as UNError {
        return error.code
    } catch {
        return nil
    }
}
