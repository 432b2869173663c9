internal import Foundation
public import OpenUserNotifications
internal import Synchronization

/// Everything that happened in a harness, in order: prompts, presentations, and everything the app's
/// delegate received. Tests assert on it instead of on timing.
public final class NotificationHistory: Sendable {
    private struct State {
        var events: [NotificationEvent] = []
        var waiters: [UInt64: Waiter] = [:]
        var nextWaiter: UInt64 = 0
    }

    private struct Waiter {
        var matches: @Sendable (NotificationEvent) -> Bool
        var continuation: CheckedContinuation<NotificationEvent?, Never>
    }

    private let state = Mutex(State())

    init() {}

    /// Every event so far, oldest first.
    public var events: [NotificationEvent] { state.withLock { $0.events } }

    /// The responses the app's delegate received, in order.
    public var responses: [UNNotificationResponse] {
        events.compactMap { if case .didReceive(let response) = $0 { response } else { nil } }
    }

    /// The notifications presented, with how, in order (suppressed ones included with `.none`).
    public var presentations: [(notification: UNNotification, presentation: NotificationPresentation)] {
        events.compactMap { if case .presented(let n, let p) = $0 { (n, p) } else { nil } }
    }

    /// The notifications the delegate was asked about in `willPresent`, in order.
    public var willPresentQuestions: [UNNotification] {
        events.compactMap { if case .willPresent(let n) = $0 { n } else { nil } }
    }

    /// Forgets every event so far.
    public func clear() {
        state.withLock { $0.events.removeAll() }
    }

    func record(_ event: NotificationEvent) {
        let woken = state.withLock { state -> [CheckedContinuation<NotificationEvent?, Never>] in
            state.events.append(event)
            let ready = state.waiters.filter { $0.value.matches(event) }
            for id in ready.keys { state.waiters.removeValue(forKey: id) }
            return ready.values.map(\.continuation)
        }
        woken.forEach { $0.resume(returning: event) }
    }

    /// Waits for the first event, recorded so far or from now on, that matches `predicate`.
    ///
    /// - Parameter timeout: how long to wait in real time before failing.
    /// - Throws: ``HistoryTimeout`` when no such event happens in time.
    @discardableResult
    public func waitFor(
        timeout: Duration = .seconds(10),
        _ predicate: @escaping @Sendable (NotificationEvent) -> Bool
    ) async throws -> NotificationEvent {
        let id = state.withLock { state -> UInt64 in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        let found: NotificationEvent? = await withTaskGroup(of: NotificationEvent?.self) { group in
            group.addTask {
                await withTaskCancellationHandler {
                    await withCheckedContinuation { continuation in
                        let immediate = self.state.withLock { state -> NotificationEvent?? in
                            if let event = state.events.first(where: predicate) { return .some(event) }
                            if Task.isCancelled { return .some(nil) }
                            state.waiters[id] = Waiter(matches: predicate, continuation: continuation)
                            return .none
                        }
                        if let immediate { continuation.resume(returning: immediate) }
                    }
                } onCancel: {
                    self.state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume(returning: nil)
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next()!
            group.cancelAll()
            return first
        }
        guard let found else { throw HistoryTimeout(timeout: timeout, events: events) }
        return found
    }

    /// Waits until the app's delegate has received `count` responses in all, and returns them.
    @discardableResult
    public func waitForResponses(_ count: Int, timeout: Duration = .seconds(10)) async throws -> [UNNotificationResponse] {
        // The predicate sees every event exactly once, in order, so it can count.
        let seen = Mutex(0)
        try await waitFor(timeout: timeout) { event in
            guard case .didReceive = event else { return false }
            return seen.withLock { seen in
                seen += 1
                return seen >= count
            }
        }
        return Array(responses.prefix(count))
    }
}

/// No matching event happened in time.
public struct HistoryTimeout: Error, CustomStringConvertible {
    /// How long the wait lasted.
    public var timeout: Duration
    /// What did happen meanwhile.
    public var events: [NotificationEvent]

    public var description: String {
        "No matching notification event within \(timeout). Events so far: \(events.map(\.description))"
    }
}
