import Dispatch
import DequeModule
import Foundation
import Synchronization
import NIOHTTP1
package import NotificationCore
package import NotificationDaemonClient
import NIOCore
package import OpenUserNotifications

/// The notification daemon as the backend of `UNUserNotificationCenter`: every call goes over the local
/// API, in the order it was made, and the app's event stream brings the delegate calls.
package final class DaemonBackend: NotificationBackend, @unchecked Sendable {
    // Sendable: `attached`, `workers`, `currentState` and `knownBadge` change only under `lock`; everything else is immutable.
    private let client: LocalAPIClient
    /// The push environment the app's device token is for, as an iOS app's `aps-environment`.
    private let pushEnvironment: APNs.Environment
    private let eventHandled: (@Sendable (LocalAPI.AppEvent) -> Void)?
    private let operations: AsyncStream<@Sendable () async -> Void>.Continuation
    /// What the app tells the daemon, queued while it is not connected.
    private let replies = ReplyQueue()
    private let delegateQueue = DispatchQueue(label: "OpenUserNotificationsLink.delegate")
    private let lock = NSLock()
    private weak var attached: UNUserNotificationCenter?
    /// The task that makes the app's calls in order, and the one that keeps the event stream open.
    private var workers: (serial: Task<Void, Never>, events: Task<Void, Never>)?
    /// The app's latest state, told to the daemon again whenever the link reconnects.
    private var currentState: AppState
    /// The app's badge as the daemon last told it, or as the app last set it.
    private var knownBadge = 0
    /// Whether the daemon said, when the app last connected, that it shows content extensions.
    private var daemonHostsContentExtensions = false
    /// Responses and settings requests that arrived before the app set its delegate, in order; used only
    /// on `delegateQueue`. An app that starts for a response connects first and sets its delegate just
    /// after: what the daemon handed over meanwhile waits for it.
    private var heldForDelegate: [LocalAPI.AppEvent] = []
    /// Set once another process of the app took over (under `lock`); the link then stops reconnecting.
    private var replaced = false
    /// Callers of ``waitUntilReplaced()``, resumed when another process takes over (under `lock`).
    private var replacedWaiters: [CheckedContinuation<Void, Never>] = []

    /// - Parameter eventHandled: called on the delegate queue after each event from the daemon has been
    ///   handed to the delegate, or held for it, and after each `connected`; for tests.
    package init(
        client: LocalAPIClient,
        initialState: AppState,
        pushEnvironment: APNs.Environment = .sandbox,
        eventHandled: (@Sendable (LocalAPI.AppEvent) -> Void)? = nil
    ) {
        self.client = client
        self.pushEnvironment = pushEnvironment
        self.eventHandled = eventHandled
        self.currentState = initialState
        let (operationStream, operations) = AsyncStream<@Sendable () async -> Void>.makeStream()
        self.operations = operations
        // The calls run one after the other, in the order the app made them, as Apple's center does.
        // This task and the event-stream task live as long as the backend: for the app's lifetime.
        let serial = Task {
            for await operation in operationStream { await operation() }
        }
        let events = startEventStream()
        lock.lock()
        workers = (serial, events)
        lock.unlock()
    }

    deinit {
        lock.lock()
        workers?.serial.cancel()
        workers?.events.cancel()
        lock.unlock()
        operations.finish()
        replies.finish()
    }

    /// Closes the link: the app's event stream closes (the daemon sees the app stop). Calls already made
    /// still complete, in order, before this returns; calls made afterwards go straight to the daemon.
    package func close() async {
        let running = lock.withLock { workers }
        operations.finish()
        replies.finish()
        guard let running else { return }
        running.events.cancel()
        await running.serial.value
        await running.events.value
    }

    package var environment: NotificationEnvironment {
        NotificationEnvironment(now: Date(), calendar: .current, timeZone: .current)
    }

    package func attach(_ center: UNUserNotificationCenter) {
        lock.lock()
        defer { lock.unlock() }
        if attached == nil { attached = center }
    }

    private var center: UNUserNotificationCenter? {
        lock.lock()
        defer { lock.unlock() }
        return attached
    }

    // MARK: - Calls

    private func enqueue(_ operation: @escaping @Sendable () async -> Void) {
        if case .terminated = operations.yield(operation) {
            // Closed: no queue to keep the order any more, but every call still gets its answer.
            Task { await operation() }
        }
    }

    package func registerForRemoteNotifications(completion: @escaping @Sendable (Result<String, RemoteRegistrationFailure>) -> Void) {
        let client = self.client
        let environment = pushEnvironment
        enqueue {
            do {
                let token = try await client.call(.POST, "/v1/remote-notifications", body: LocalAPI.RemoteNotificationRegistration(environment: environment),
                                                  as: LocalAPI.DeviceToken.self)
                completion(.success(token.token))
            } catch {
                completion(.failure(Self.registrationFailure(error)))
            }
        }
    }

    package func unregisterForRemoteNotifications(completion: @escaping @Sendable (RemoteRegistrationFailure?) -> Void) {
        let client = self.client
        enqueue {
            do {
                try await client.call(.DELETE, "/v1/remote-notifications")
                completion(nil)
            } catch {
                completion(Self.registrationFailure(error))
            }
        }
    }

    package func setSubscribed(_ subscribed: Bool, toChannel channelID: String, completion: @escaping @Sendable (RemoteRegistrationFailure?) -> Void) {
        let client = self.client
        let segment = channelID.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/+="))) ?? channelID
        let path = "/v1/remote-notifications/channels/\(segment)?environment=\(pushEnvironment.rawValue)"
        enqueue {
            do {
                try await client.call(subscribed ? .PUT : .DELETE, path)
                completion(nil)
            } catch {
                completion(Self.registrationFailure(error))
            }
        }
    }

    private static func registrationFailure(_ error: any Error) -> RemoteRegistrationFailure {
        if case LocalAPIClientError.problem(let problem) = error {
            return problem.code == "gatewayNotConfigured" ? .notConfigured(problem.detail) : .unavailable(problem.detail)
        }
        return .unavailable("The notification daemon could not be reached: \(error)")
    }

    /// The refusal an answer carries: its `UNError` code, or (the daemon unreachable) not allowed.
    private static func failure(_ error: any Error) -> NotificationFailure {
        if case LocalAPIClientError.problem(let problem) = error,
           let raw = problem.unErrorCode, let code = NotificationErrorCode(rawValue: raw) {
            return NotificationFailure(code, detail: problem.detail)
        }
        return NotificationFailure(.notificationsNotAllowed, detail: "The notification daemon refused or could not be reached: \(error)")
    }

    package func requestAuthorization(options: AuthorizationOptions, completion: @escaping @Sendable (Bool) -> Void) {
        let client = self.client
        enqueue {
            let result = try? await client.call(.POST, "/v1/authorization", body: LocalAPI.AuthorizationRequest(options: options.rawValue),
                                                timeout: .hours(24), as: LocalAPI.AuthorizationResult.self)
            completion(result?.granted ?? false)
        }
    }

    package func setCategories(_ categories: [NotificationCategory]) {
        let client = self.client
        enqueue { try? await client.call(.PUT, "/v1/categories", body: categories) }
    }

    package func categories(completion: @escaping @Sendable ([NotificationCategory]) -> Void) {
        let client = self.client
        enqueue { completion((try? await client.call(.GET, "/v1/categories", as: [NotificationCategory].self)) ?? []) }
    }

    package func settings(completion: @escaping @Sendable (NotificationSettings) -> Void) {
        let client = self.client
        enqueue { completion((try? await client.call(.GET, "/v1/settings", as: NotificationSettings.self)) ?? .notDetermined) }
    }

    package func add(_ request: NotificationRequest, completion: @escaping @Sendable (NotificationFailure?) -> Void) {
        let client = self.client
        enqueue {
            do {
                try await client.call(.POST, "/v1/requests", body: request)
                completion(nil)
            } catch {
                completion(Self.failure(error))
            }
        }
    }

    package func pendingRequests(completion: @escaping @Sendable ([LocalAPI.PendingRequest]) -> Void) {
        let client = self.client
        enqueue {
            let pending = (try? await client.call(.GET, "/v1/requests", as: [LocalAPI.PendingRequest].self)) ?? []
            completion(pending)
        }
    }

    package func removePendingRequests(_ identifiers: [String]?) {
        let client = self.client
        let query = Self.query(identifiers)
        enqueue { try? await client.call(.DELETE, "/v1/requests" + query) }
    }

    package func deliveredNotifications(completion: @escaping @Sendable ([DeliveredNotification]) -> Void) {
        let client = self.client
        enqueue { completion((try? await client.call(.GET, "/v1/delivered", as: [DeliveredNotification].self)) ?? []) }
    }

    package func removeDeliveredNotifications(_ identifiers: [String]?) {
        let client = self.client
        let query = Self.query(identifiers)
        enqueue { try? await client.call(.DELETE, "/v1/delivered" + query) }
    }

    package func setBadgeCount(_ count: Int, completion: @escaping @Sendable (NotificationFailure?) -> Void) {
        let client = self.client
        // Read back at once, as on iOS; the daemon's `badge` events correct it if the call is refused.
        if count >= 0 { lock.withLock { knownBadge = count } }
        enqueue {
            do {
                try await client.call(.PUT, "/v1/badge", body: LocalAPI.BadgeRequest(count: count))
                completion(nil)
            } catch {
                completion(Self.failure(error))
            }
        }
    }

    private static func query(_ identifiers: [String]?) -> String {
        guard let identifiers, !identifiers.isEmpty else { return identifiers == nil ? "" : "?identifier=" }
        return "?" + identifiers.map { "identifier=\($0.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed.subtracting(CharacterSet(charactersIn: "&=+"))) ?? $0)" }
            .joined(separator: "&")
    }

    /// Tells the daemon the app moved to the foreground or the background.
    package func setAppState(_ state: AppState) {
        lock.withLock {
            currentState = state
            replies.yield(.state(state))
        }
    }

    package var appState: AppState { lock.withLock { currentState } }

    package var badgeCount: Int { lock.withLock { knownBadge } }

    package var supportsContentExtensions: Bool { lock.withLock { daemonHostsContentExtensions } }

    /// Whether another process of the app connected to the daemon and took over from this one.
    package var wasReplaced: Bool { lock.withLock { replaced } }

    /// Returns once another process of the app has taken over from this one (at once if it has).
    package func waitUntilReplaced() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let already = lock.withLock {
                if !replaced { replacedWaiters.append(continuation) }
                return replaced
            }
            if already { continuation.resume() }
        }
    }

    /// Another process of the app took over: confirm what was finished (the replies already queued go
    /// first), let go, and stop reconnecting.
    private func noteReplaced() {
        let waiters = lock.withLock {
            replaced = true
            replies.yield(.released)
            defer { replacedWaiters.removeAll() }
            return replacedWaiters
        }
        waiters.forEach { $0.resume() }
    }

    // MARK: - The event stream

    /// Keeps the app's event stream open, reconnecting when it drops, and carries its messages to the
    /// delegate on the delegate queue.
    private func startEventStream() -> Task<Void, Never> {
        let client = self.client
        let replies = self.replies
        let handle: @Sendable (LocalAPI.AppEvent) -> Void = { [weak self] event in self?.handle(event) }
        let noteReplaced: @Sendable () -> Void = { [weak self] in self?.noteReplaced() }
        let currentState: @Sendable () -> AppState? = { [weak self] in self?.appState }
        let noteBadge: @Sendable (Int) -> Void = { [weak self] count in self?.lock.withLock { self?.knownBadge = count } }
        let isReplaced: @Sendable () -> Bool = { [weak self] in self?.wasReplaced ?? true }
        let noteContentExtensions: @Sendable (Bool) -> Void = { [weak self] hosted in
            self?.lock.withLock { self?.daemonHostsContentExtensions = hosted }
            // Tests hear of the connection too, in order with the delegate's events.
            guard let self, let eventHandled = self.eventHandled else { return }
            self.delegateQueue.async { eventHandled(.connected(contentExtensions: hosted)) }
        }
        return Task {
            var backoff = ReconnectBackoff()
            while !Task.isCancelled && !isReplaced() {
                do {
                    let sawConnected = ConnectedFlag()
                    // Each event is read on the socket's event loop and handed to the delegate's queue
                    // from there: no task is woken between the socket and the delegate.
                    let receive: @Sendable (String) -> Void = { text in
                        // A `willPresent` event, one per notification in the foreground, has a decoder
                        // of its own (`NotificationJSONReader`); every other event, `JSONDecoder`.
                        guard let event = try? NotificationJSONReader.willPresentEvent(from: text.utf8)
                            ?? JSONDecoder().decode(LocalAPI.AppEvent.self, from: Data(text.utf8)) else { return }
                        switch event {
                        case .connected(let contentExtensions):
                            // A badge follows unless it is 0.
                            noteBadge(0)
                            noteContentExtensions(contentExtensions)
                            sawConnected.set()
                        case .replaced: noteReplaced()
                        case .badge(let count): noteBadge(count)
                        default: handle(event)
                        }
                    }
                    let connected = try await LocalAPIWebSocket.withConnection(
                        socketPath: client.socketPath,
                        path: "/v1/events",
                        key: client.key,
                        receive: receive
                    ) { connection -> Bool in
                        // The app speaks first: its state now, which may have changed since it last connected.
                        guard let state = currentState(), let hello = try? StreamingJSONEncoder().encode(LocalAPI.AppReply.state(state)) else { return false }
                        try await connection.send(String(decoding: hello, as: UTF8.self))
                        // Each connection takes what is queued from where the last one stopped, then each
                        // reply as it is given (on the delegate's queue): written to the socket from there.
                        let (ended, end) = AsyncStream.makeStream(of: Void.self)
                        let taking = replies.attach(ReplyQueue.Sink(
                            send: { reply in
                                // The daemon reads no larger reply: one would end the connection, again at each reconnection.
                                guard let data = try? StreamingJSONEncoder().encode(reply), data.count <= LocalAPI.maximumReplySize else { return }
                                connection.write(String(decoding: data, as: UTF8.self))
                            },
                            // After `released` this connection sends nothing more; the daemon closes it.
                            end: { end.finish() }
                        ))
                        defer { replies.detach(taking) }
                        await withTaskGroup(of: Void.self) { group in
                            group.addTask {
                                for await _ in ended {}
                            }
                            group.addTask {
                                // The events go to `receive`; the stream only ends, with the socket.
                                do { for try await _ in connection.messages {} } catch {}
                            }
                            _ = await group.next()
                            group.cancelAll()
                        }
                        return sawConnected.isSet
                    }
                    // A connection that was established starts the back-off afresh; one that was closed
                    // before it was (the daemon starting or stopping) counts as a failed attempt.
                    if connected { backoff.reset() }
                } catch {
                    // The daemon is not there (yet): try again, backing off.
                }
                guard !isReplaced() else { return }
                try? await Task.sleep(for: backoff.next())
            }
        }
    }

    package func delegateDidChange() {
        delegateQueue.async { [weak self] in
            guard let self, let center = self.center, center.effectiveDelegate != nil, !self.heldForDelegate.isEmpty else { return }
            let held = self.heldForDelegate
            self.heldForDelegate.removeAll()
            for event in held { self.deliver(event, to: center) }
        }
    }

    private func handle(_ event: LocalAPI.AppEvent) {
        delegateQueue.async { [weak self] in
            guard let self, let center = self.center else { return }
            self.deliver(event, to: center)
            self.eventHandled?(event)
        }
    }

    /// Calls the delegates for one event; on `delegateQueue`.
    private func deliver(_ event: LocalAPI.AppEvent, to center: UNUserNotificationCenter) {
        // Bound for the token's handler too, which may call `current()` as a delegate does.
        UNUserNotificationCenter.withBound(center) {
            switch event {
            case .call(let call):
                // Unconfirmed, a held response is handed over again if the app stops before it sets a delegate.
                if center.hand(call, reply: replies.yield) == .needsDelegate { heldForDelegate.append(event) }
            case .deviceToken(let token, _):
                RemoteNotificationInbox.deviceTokenChanged(token)
            case .connected, .replaced, .badge:
                break
            }
        }
    }
}

/// How long the link waits before it reconnects: doubling from 100 ms to 5 s, each wait drawn at random
/// from its upper half, so that many apps reconnecting to a restarted daemon do not all come at once.
struct ReconnectBackoff {
    static let first: Duration = .milliseconds(100)
    static let ceiling: Duration = .seconds(5)
    private var current = first

    mutating func reset() { current = Self.first }

    /// The next wait, which also doubles the one after it (up to the ceiling).
    mutating func next<G: RandomNumberGenerator>(using generator: inout G) -> Duration {
        let upper = current
        current = min(current * 2, Self.ceiling)
        return upper * Double.random(in: 0.5...1.0, using: &generator)
    }

    mutating func next() -> Duration {
        var generator = SystemRandomNumberGenerator()
        return next(using: &generator)
    }
}

/// Whether a connection got as far as `connected`.
private final class ConnectedFlag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .relaxed) }
    var isSet: Bool { value.load(ordering: .relaxed) }
}

/// The replies an app sends the daemon, in order, kept while no connection is open: each connection
/// takes them in turn, from where the one before it stopped, and then each reply as it is given.
///
/// A reply given while a connection takes them is written to its socket at once, by whoever gives it
/// (the delegate's queue), under the queue's lock, so that replies leave in the order they were given:
/// no task is woken between the delegate's answer and the socket.
final class ReplyQueue: Sendable {
    /// How a connection sends the replies it takes: `send` must not block; `end` is called once after
    /// `released`, the last reply a connection sends, or when the queue is finished.
    struct Sink: Sendable {
        let send: @Sendable (LocalAPI.AppReply) -> Void
        let end: @Sendable () -> Void
    }

    private struct State {
        var queued: Deque<LocalAPI.AppReply> = []
        /// The connection taking the replies now, and its number.
        var sink: (id: UInt64, sink: Sink)?
        var lastID: UInt64 = 0
        var isFinished = false
    }

    private let state = Mutex(State())

    /// Sends a reply on the connection taking them, or queues it for the next one. Ignored once finished.
    func yield(_ reply: LocalAPI.AppReply) {
        state.withLock { state in
            guard !state.isFinished else { return }
            guard let (_, sink) = state.sink else {
                state.queued.append(reply)
                return
            }
            Self.send(reply, to: sink, &state)
        }
    }

    /// A connection takes the replies from now on, the queued ones first, until it sends `released` or
    /// calls ``detach(_:)``; returns its number for that call.
    func attach(_ sink: Sink) -> UInt64 {
        state.withLock { state in
            state.lastID += 1
            guard !state.isFinished else {
                sink.end()
                return state.lastID
            }
            // One connection takes replies at a time: an earlier one still attached takes no more.
            state.sink?.sink.end()
            state.sink = (state.lastID, sink)
            while state.sink?.id == state.lastID, let reply = state.queued.popFirst() {
                Self.send(reply, to: sink, &state)
            }
            return state.lastID
        }
    }

    /// The connection numbered `id` takes no more replies (it closed); what follows is queued.
    func detach(_ id: UInt64) {
        state.withLock { state in
            if state.sink?.id == id { state.sink = nil }
        }
    }

    /// Ends the queue: the connection taking replies is ended, and later replies are ignored.
    func finish() {
        state.withLock { state in
            state.isFinished = true
            state.sink?.sink.end()
            state.sink = nil
        }
    }

    private static func send(_ reply: LocalAPI.AppReply, to sink: Sink, _ state: inout State) {
        sink.send(reply)
        if case .released = reply {
            sink.end()
            state.sink = nil
        }
    }
}
