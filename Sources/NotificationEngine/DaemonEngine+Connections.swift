package import Foundation
import Logging
package import NotificationCore

/// Apps' connections: one per app, a new one taking over from the previous after a grace, and the
/// answers an app gives on it.
extension DaemonEngine {
    /// The app connected: from now on it receives its delegate calls on the returned stream, starting
    /// with everything that waited for it.
    ///
    /// An app runs as one process, as on iOS: a new connection takes over from the app's previous one.
    /// The previous connection is told it was replaced (``LocalAPI/AppEvent/replaced``) and is given
    /// ``Configuration/takeoverGrace`` to confirm what it had finished and let go; only then is the new
    /// one connected, and what the previous one had not confirmed is handed to the new one, with the same
    /// tickets. A connection that is itself replaced while it waits gets only ``LocalAPI/AppEvent/replaced``.
    package func connect(_ bundleIdentifier: String, state: AppState) async throws -> (id: UUID, messages: AsyncStream<LocalAPI.AppEvent>) {
        let (stream, continuation) = AsyncStream<LocalAPI.AppEvent>.makeStream()
        let id = try await connect(bundleIdentifier, state: state, deliver: { continuation.yield($0) }, finish: { continuation.finish() })
        return (id, stream)
    }

    /// The app connected, its events handed to `deliver` in order, on the engine, as they come (the
    /// system inside the app's own process hands them to its delegates so); `finish` is called when
    /// the connection ends. See ``connect(_:state:)``.
    package func connect(
        _ bundleIdentifier: String, state: AppState,
        deliver: @escaping @Sendable (LocalAPI.AppEvent) -> Void, finish: @escaping @Sendable () -> Void
    ) async throws -> UUID {
        let id = UUID()
        var tookOver = false
        if let previous = connections.takeOver(bundleIdentifier) {
            tookOver = true
            await waitForRelease(of: previous)
            // Another connection of the app came while this one waited: the newest one is the app.
            if connections.isConnected(bundleIdentifier) {
                deliver(.replaced)
                finish()
                return id
            }
        }
        connections.connect(bundleIdentifier, .init(id: id, deliver: deliver, finish: finish))
        do {
            try await step(bundleIdentifier) { machine in
                (tookOver || machine.isAppReachable ? machine.setAppReachable(false, state: .notRunning) : [])
                    + machine.setAppReachable(true, state: state == .notRunning ? .background : state)
            }
        } catch {
            if connections.isConnected(bundleIdentifier, by: id) { connections.close(bundleIdentifier) }
            finish()
            throw error
        }
        // The app learns its badge as it connects (`applicationIconBadgeNumber`; none means 0), then
        // of every change.
        if connections.isConnected(bundleIdentifier, by: id), let badge = cache[bundleIdentifier]?.machine.badge, badge != 0 {
            deliver(.badge(count: badge))
        }
        return id
    }

    /// Waits until a replaced connection has let go (``disconnect(_:connection:)``), at most for the
    /// takeover grace: a connection that does not read is not waited for longer.
    private func waitForRelease(of connection: UUID) async {
        let grace = configuration.takeoverGrace
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    Task { await self.waitForRelease(of: connection, continuation) }
                }
            }
            group.addTask { try? await Task.sleep(for: grace) }
            _ = await group.next()
            group.cancelAll()
            // Whichever came first, nobody waits any more.
            connections.endWaiting(for: connection)
        }
    }

    private func waitForRelease(of connection: UUID, _ continuation: CheckedContinuation<Void, Never>) {
        connections.wait(for: connection, continuation)
    }

    /// The connected app moved to the foreground or the background.
    package func updateState(_ bundleIdentifier: String, connection: UUID, _ state: AppState) async throws {
        // Not running is what a closed connection says (``disconnect(_:connection:)``), not the app.
        guard state != .notRunning else { return }
        try await setState(of: bundleIdentifier, connection: connection, state)
    }

    /// The connected app is in `state`, `notRunning` included, and stays reachable on its connection:
    /// for the system inside an app's own process, whose app is the process, started again by
    /// whatever reaches it (a response, a push), as iOS starts an app.
    package func setState(of bundleIdentifier: String, connection: UUID, _ state: AppState) async throws {
        guard connections.isConnected(bundleIdentifier, by: connection) else { return }
        try await step(bundleIdentifier) { $0.setAppState(state) }
    }

    /// The app's connection closed: it is not running until it connects again. A replaced connection
    /// closing lets its successor connect.
    package func disconnect(_ bundleIdentifier: String, connection: UUID) async throws {
        guard connections.isConnected(bundleIdentifier, by: connection) else {
            connections.released(connection)
            return
        }
        connections.close(bundleIdentifier)
        try await step(bundleIdentifier) { $0.setAppReachable(false, state: .notRunning) }
    }

    /// The app's delegate answered `willPresent`. Saved without waiting for the disk (see
    /// ``AppSave/waitsForTheDisk``): a push shown to an app in the foreground took two synced commits,
    /// and the second, waited on by the next push's, was a third of the daemon's syncs.
    package func answerWillPresent(_ bundleIdentifier: String, ticket: UInt64, options: PresentationOptions?) async throws {
        try await step(bundleIdentifier, waitsForTheDisk: false) { (machine: inout NotificationCenterMachine) throws(Never) in
            ((), machine.answerWillPresent(ticket: ticket, options: options))
        }
    }

    /// The app's `didReceiveRemoteNotification` called its completion handler.
    package func completeRemoteNotification(_ bundleIdentifier: String, ticket: UInt64, result: BackgroundFetchResult) async throws {
        try await step(bundleIdentifier) { machine in
            if let remote = machine.completeRemoteNotification(ticket: ticket, result: result) {
                logger.debug("app finished with a background push", metadata: ["app": .string(bundleIdentifier), "apns-id": .string(remote.identifier), "result": .string("\(result)")])
            }
            return []
        }
    }

    /// The app's delegate finished with a response.
    package func completeResponse(_ bundleIdentifier: String, ticket: UInt64) async throws {
        try await step(bundleIdentifier) { machine in
            machine.completeResponse(ticket: ticket)
            return []
        }
    }

    /// Returns once the connected app has answered every `willPresent` question and confirmed every
    /// response handed to it (at once when nothing is open), or when the calling task is cancelled.
    /// For tools and tests that move the daemon's clock by hand and wait for the app's delegate.
    package func waitUntilAnswered(_ bundleIdentifier: String) async {
        guard !isAnswered(bundleIdentifier) else { return }
        let id = UUID()
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                if Task.isCancelled {
                    continuation.resume()
                } else {
                    answerWaiters.add(id, for: bundleIdentifier, continuation)
                }
            }
        } onCancel: {
            Task { await self.stopWaitingForAnswers(id, of: bundleIdentifier) }
        }
    }

    /// Whether the app has nothing open (what ``waitUntilAnswered(_:)`` waits for): no `willPresent`
    /// question or response unanswered, and its last step durable and carried out (files released,
    /// calls answered), as the cache holds a step's state before its save is done.
    package func isAnswered(_ bundleIdentifier: String) -> Bool {
        guard let machine = cache[bundleIdentifier]?.machine else { return true }
        return machine.openTickets == 0 && unsavedSteps[bundleIdentifier] == nil && !held.isHolding(bundleIdentifier)
    }

    private func stopWaitingForAnswers(_ id: UUID, of bundleIdentifier: String) {
        answerWaiters.resume(id, of: bundleIdentifier)
    }

    /// Tells the app, when it is connected, that its device token changed; an app not running hears
    /// of it when it next registers (iOS apps register at every launch).
    package func deviceTokenChanged(_ bundleIdentifier: String, token: String, environment: APNs.Environment) {
        connections.send(.deviceToken(token: token, environment: environment), to: bundleIdentifier)
    }

    /// Whether the app is in the foreground, in the background, or not running (not connected).
    package func appState(_ bundleIdentifier: String) async throws -> AppState {
        try await read(bundleIdentifier) { machine in machine.appState }
    }

    /// The state of each app connected now (an app not listed is not running).
    package func runningApps() async -> [String: AppState] {
        var states: [String: AppState] = [:]
        for bundleIdentifier in connections.apps {
            states[bundleIdentifier] = try? await appState(bundleIdentifier)
        }
        return states
    }
}
