import Foundation
import Logging
import NotificationAttachmentStore
package import NotificationCore

/// The calls an app makes through its `UNUserNotificationCenter`.
extension DaemonEngine {
    /// Asks the person to allow notifications (the first time), and returns the answer once given.
    ///
    /// - Parameter asked: called once the request is among the app's steps, before the answer is
    ///   waited for: a caller that keeps the app's calls in order goes on with the next then.
    package func requestAuthorization(_ bundleIdentifier: String, options: AuthorizationOptions, asked: @Sendable () -> Void = {}) async throws -> Bool {
        let call = authorizationCalls.begin(bundleIdentifier)
        defer { authorizationCalls.end(call) }
        try await step(bundleIdentifier) { $0.requestAuthorization(options: options, call: call.number) }
        asked()
        // Answered at once (already decided, or provisional), or later by the person.
        if let granted = authorizationCalls.takeAnswer(call) { return granted }
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Bool, any Error>) in
            authorizationCalls.wait(call, continuation)
        }
    }

    /// Replaces the app's categories.
    ///
    /// - Throws: `invalidRequest` naming the rule the categories break; nothing changes then.
    package func setCategories(_ bundleIdentifier: String, _ categories: [NotificationCategory]) async throws {
        do {
            try await step(bundleIdentifier) { (machine: inout NotificationCenterMachine) throws(RuleViolation) in
                try machine.setCategories(categories)
                return ((), [])
            }
        } catch let violation as RuleViolation {
            throw DaemonError(violation)
        }
    }

    package func categories(_ bundleIdentifier: String) async throws -> [NotificationCategory] {
        try await read(bundleIdentifier) { machine in machine.categories.values.sorted { $0.identifier < $1.identifier } }
    }

    package func settings(_ bundleIdentifier: String) async throws -> NotificationSettings {
        try await read(bundleIdentifier) { machine in machine.settings }
    }

    package func badge(_ bundleIdentifier: String) async throws -> Int {
        try await read(bundleIdentifier) { machine in machine.badge }
    }

    /// The options the app's authorization prompt asks for, while it is on screen.
    package func promptedOptions(_ bundleIdentifier: String) async throws -> AuthorizationOptions? {
        try await read(bundleIdentifier) { machine in machine.promptedOptions }
    }

    /// Adds a request.
    ///
    /// - Throws: a `DaemonError` with code `notification` and the `UNError` code when it is refused.
    package func add(_ bundleIdentifier: String, _ request: NotificationRequest) async throws {
        var stored = request
        var copies: URL? = nil
        let store = request.content.attachments.isEmpty ? nil : attachmentStore(of: bundleIdentifier)
        if let store {
            // A request with files is checked before any is copied, and the files are copied off the
            // engine's actor (a large video takes a while, and every other app's steps go on meanwhile);
            // the machine's `add` applies the same rules again, and a refused request's copies go.
            if let failure = RequestRules.failure(for: request) { throw DaemonError(failure) }
            guard PresentationPolicy.allowsDelivery(try await settings(bundleIdentifier)) else {
                throw DaemonError(NotificationFailure(.notificationsNotAllowed))
            }
            (stored, copies) = try await Self.copyAttachments(of: request, into: store)
        }
        do {
            try await step(bundleIdentifier) { (machine: inout NotificationCenterMachine) throws(NotificationFailure) in
                ((), try machine.add(stored))
            }
        } catch let failure as NotificationFailure {
            store?.discard(copies)
            throw DaemonError(failure)
        } catch {
            store?.discard(copies)
            throw error
        }
    }

    /// Checks and copies a request's attachment files into the app's folder, on a thread of the global
    /// executor rather than the engine's.
    @concurrent
    nonisolated static func copyAttachments(
        of request: NotificationRequest, into store: AttachmentStore, from extensionFolder: URL? = nil
    ) async throws(DaemonError) -> (NotificationRequest, URL?) {
        do throws(NotificationFailure) {
            return try store.store(request, from: extensionFolder)
        } catch {
            throw DaemonError(error)
        }
    }

    package func pendingRequests(_ bundleIdentifier: String) async throws -> [NotificationCenterMachine.PendingRequest] {
        try await read(bundleIdentifier) { machine in machine.pendingRequests }
    }

    /// Removes pending requests by identifier, or all of them for `nil`.
    package func removePendingRequests(_ bundleIdentifier: String, _ identifiers: [String]?) async throws {
        try await step(bundleIdentifier) { machine in
            if let identifiers { machine.removePendingRequests(identifiers) } else { machine.removeAllPendingRequests() }
            return []
        }
    }

    package func deliveredNotifications(_ bundleIdentifier: String) async throws -> [DeliveredNotification] {
        try await read(bundleIdentifier) { machine in machine.deliveredNotifications }
    }

    /// Removes delivered notifications by identifier, or all of them for `nil`.
    package func removeDeliveredNotifications(_ bundleIdentifier: String, _ identifiers: [String]?) async throws {
        try await step(bundleIdentifier) { machine in
            if let identifiers { machine.removeDeliveredNotifications(identifiers) } else { machine.removeAllDeliveredNotifications() }
        }
    }

    package func setBadgeCount(_ bundleIdentifier: String, _ count: Int) async throws {
        do {
            try await step(bundleIdentifier) { (machine: inout NotificationCenterMachine) throws(NotificationFailure) in
                ((), try machine.setBadgeCount(count))
            }
        } catch let failure as NotificationFailure {
            throw DaemonError(failure)
        }
    }
}
