import Foundation
import OpenUserNotifications
import Synchronization
import TestSupport

/// An app's delegate that answers `willPresent` with options the test chooses, finishes every response
/// at once, and keeps a log of every call, which tests can wait on.
final class RecordingDelegate: NSObject, UNUserNotificationCenterDelegate, Sendable {
    /// One call the delegate received.
    enum Call: Sendable, Equatable {
        case willPresent(String)
        case didReceive(String, action: String, text: String?)
        case openSettings(String?)
    }

    private struct State {
        var options: UNNotificationPresentationOptions = [.banner, .list, .sound, .badge]
        var calls: [Call] = []
        var notifications: [String: UNNotification] = [:]
        var waiters: [UUID: (ready: @Sendable ([Call]) -> Bool, continuation: CheckedContinuation<Void, Never>)] = [:]
    }

    private let state = Mutex(State())

    /// The options `willPresent` answers with; banner, list, sound and badge until changed.
    var presentationOptions: UNNotificationPresentationOptions {
        get { state.withLock { $0.options } }
        set { state.withLock { $0.options = newValue } }
    }

    /// Every call so far, in order.
    var calls: [Call] { state.withLock { $0.calls } }

    /// The responses received so far.
    var responses: [Call] { calls.filter { if case .didReceive = $0 { true } else { false } } }

    /// The last notification the delegate heard of with this identifier, as the app received it.
    func notification(_ identifier: String) -> UNNotification? { state.withLock { $0.notifications[identifier] } }

    func userNotificationCenter(_ center: UNUserNotificationCenter, willPresent notification: UNNotification,
                                withCompletionHandler completionHandler: @escaping @Sendable (UNNotificationPresentationOptions) -> Void) {
        let options = state.withLock { $0.options }
        record(.willPresent(notification.request.identifier), notification)
        completionHandler(options)
    }

    func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse,
                                withCompletionHandler completionHandler: @escaping @Sendable () -> Void) {
        let text = (response as? UNTextInputNotificationResponse)?.userText
        record(.didReceive(response.notification.request.identifier, action: response.actionIdentifier, text: text), response.notification)
        completionHandler()
    }

    func userNotificationCenter(_ center: UNUserNotificationCenter, openSettingsFor notification: UNNotification?) {
        record(.openSettings(notification?.request.identifier), notification)
    }

    private func record(_ call: Call, _ notification: UNNotification?) {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.calls.append(call)
            if let notification { state.notifications[notification.request.identifier] = notification }
            let calls = state.calls
            let ready = state.waiters.filter { $0.value.ready(calls) }
            for id in ready.keys { state.waiters.removeValue(forKey: id) }
            return ready.values.map(\.continuation)
        }
        ready.forEach { $0.resume() }
    }

    /// Waits until `count` responses have arrived, and returns every response so far.
    @discardableResult
    func waitForResponses(_ count: Int) async throws -> [Call] {
        try await waitUntil("\(count) responses") { calls in calls.filter { if case .didReceive = $0 { true } else { false } }.count >= count }
        return responses
    }

    /// Waits, up to 10 s of real time, until the log satisfies `ready`.
    func waitUntil(_ what: String, _ ready: @escaping @Sendable ([Call]) -> Bool) async throws {
        let id = UUID()
        try await withDeadline(what) {
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let now = self.state.withLock { state -> Bool in
                        if ready(state.calls) || Task.isCancelled { return true }
                        state.waiters[id] = (ready, continuation)
                        return false
                    }
                    if now { continuation.resume() }
                }
            } onCancel: {
                self.state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume()
            }
        }
    }
}
