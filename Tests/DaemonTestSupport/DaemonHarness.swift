import Foundation
import Logging
import NotificationCore
import NotificationDaemon
import NotificationDaemonClient
import NotificationEngine
import ServiceLifecycle
import Synchronization
import TestSupport

/// A clock that moves only when a test moves it; alarms go off when it passes their deadline.
package final class ManualDaemonClock: NotificationClock {
    private struct State {
        var now: Date
        var alarms: [UUID: (deadline: Date, action: @Sendable () -> Void)] = [:]
    }

    private let state: Mutex<State>

    package init(now: Date = Date(timeIntervalSince1970: 1_767_225_600)) {
        state = Mutex(State(now: now))
    }

    package var now: Date { state.withLock { $0.now } }

    package func advance(by seconds: TimeInterval) {
        let due = state.withLock { state -> [@Sendable () -> Void] in
            state.now = state.now.addingTimeInterval(seconds)
            let ready = state.alarms.filter { $0.value.deadline <= state.now }
            for id in ready.keys { state.alarms.removeValue(forKey: id) }
            return ready.values.sorted { $0.deadline < $1.deadline }.map(\.action)
        }
        due.forEach { $0() }
    }

    /// Moves the clock forward to `date`; a date in the past leaves it where it is.
    package func advance(to date: Date) {
        advance(by: max(0, date.timeIntervalSince(now)))
    }

    package func alarm(at deadline: Date, _ action: @escaping @Sendable () -> Void) -> ClockAlarm {
        let id = UUID()
        let isDue = state.withLock { state -> Bool in
            guard deadline > state.now else { return true }
            state.alarms[id] = (deadline, action)
            return false
        }
        if isDue { action() }
        return ClockAlarm { _ = self.state.withLock { $0.alarms.removeValue(forKey: id) } }
    }
}

/// A daemon running in the test process: a real SQLite file and a real Unix socket in a fresh folder.
package struct RunningDaemon: Sendable {
    package let directory: URL
    package let configuration: DaemonConfiguration
    package let engine: DaemonEngine
    package let clock: ManualDaemonClock
    package let adminKey: String
    /// The TCP port the local API also listens on, when configured.
    package let tcpPort: Int?
    /// The link to a push gateway, when configured.
    package let link: DeviceLinkClient?

    package var socketPath: String { configuration.socketPath }
    package var admin: LocalAPIClient { LocalAPIClient(socketPath: socketPath, key: adminKey) }

    /// Registers an app and returns a client authenticated as it.
    package func registerApp(_ bundleIdentifier: String) async throws -> LocalAPIClient {
        let key = try await admin.call(.POST, "/v1/admin/apps", body: LocalAPI.RegisterApp(bundleIdentifier: bundleIdentifier), as: LocalAPI.AppKey.self)
        return LocalAPIClient(socketPath: socketPath, key: key.key)
    }

    /// Registers an app and grants it alerts, sounds and badges.
    package func authorizedApp(_ bundleIdentifier: String) async throws -> LocalAPIClient {
        let app = try await registerApp(bundleIdentifier)
        _ = try await admin.call(.POST, "/v1/admin/apps/\(bundleIdentifier)/authorization",
                                 body: LocalAPI.AuthorizationDecision(decision: "grant"), as: NotificationSettings.self)
        return app
    }
}

/// Runs a daemon over `directory` for the duration of `body`, then shuts it down gracefully.
package func withDaemon<T: Sendable>(
    directory: URL? = nil,
    clock: ManualDaemonClock = ManualDaemonClock(),
    configure: (inout DaemonConfiguration) -> Void = { _ in },
    logHandler: (any LogHandler)? = nil,
    _ body: @Sendable (RunningDaemon) async throws -> T
) async throws -> T {
    let directory = try directory ?? makeTestDirectory()
    var configuration = DaemonConfiguration(dataDirectory: directory)
    configuration.engine.timeZone = TimeZone(identifier: "UTC")!
    // The tests move a manual clock to each wake-up and expect what falls due then; firing ahead of
    // the time has tests of its own (`FiringAheadTests`, and every test of the real binary).
    configuration.engine.firesAhead = 0
    configure(&configuration)
    var logger = logHandler.map { handler in Logger(label: "test.daemon", factory: { _ in handler }) } ?? Logger(label: "test.daemon")
    if logHandler == nil { logger.logLevel = .critical }
    let (listening, listeningContinuation) = AsyncStream<Int?>.makeStream()
    let services = try await NotificationDaemonServices(configuration: configuration, clock: clock, logger: logger) { port in
        listeningContinuation.yield(port)
    }
    let group = ServiceGroup(services: services.services, gracefulShutdownSignals: [], cancellationSignals: [], logger: logger)
    return try await withThrowingTaskGroup(of: T?.self) { tasks in
        tasks.addTask {
            defer { listeningContinuation.finish() }
            try await group.run()
            return nil
        }
        // Every listener: the Unix socket, and TCP when configured.
        var tcpPort: Int? = nil
        var iterator = listening.makeAsyncIterator()
        for _ in 0..<(configuration.tcpPort == nil ? 1 : 2) {
            guard let port = await iterator.next() else {
                // The daemon stopped before it listened: its error says why.
                try await tasks.waitForAll()
                throw LocalAPIClientError.transport("the daemon stopped before listening")
            }
            tcpPort = tcpPort ?? port
        }
        let daemon = RunningDaemon(directory: directory, configuration: configuration, engine: services.engine, clock: clock,
                                   adminKey: services.adminKey, tcpPort: tcpPort, link: services.link)
        do {
            let result = try await body(daemon)
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
            return result
        } catch {
            await group.triggerGracefulShutdown()
            try? await tasks.waitForAll()
            throw error
        }
    }
}

extension LocalAPIClient {
    /// Adds a request with a title and an optional trigger.
    package func add(_ identifier: String, title: String = "title", category: String = "", trigger: NotificationTrigger? = nil) async throws {
        var content = NotificationContent()
        content.title = title
        content.categoryIdentifier = category
        try await call(.POST, "/v1/requests", body: NotificationRequest(identifier: identifier, content: content, trigger: trigger))
    }

    package func pending() async throws -> [LocalAPI.PendingRequest] {
        try await call(.GET, "/v1/requests", as: [LocalAPI.PendingRequest].self)
    }

    package func delivered() async throws -> [DeliveredNotification] {
        try await call(.GET, "/v1/delivered", as: [DeliveredNotification].self)
    }
}

/// The problem a call failed with, or `nil` if it did not fail with one.
package func problem(_ body: () async throws -> Void) async -> LocalAPI.Problem? {
    do {
        try await body()
        return nil
    } catch LocalAPIClientError.problem(let problem) {
        return problem
    } catch {
        return nil
    }
}

/// A presenter's stream of what the person sees (`/v1/admin/events`), already subscribed.
package struct WatchStream: Sendable {
    package let connection: LocalAPIWebSocket.Connection

    /// The first event from now on that matches `predicate`.
    package func next(where predicate: (LocalAPI.WatchEvent) -> Bool = { _ in true }) async throws -> LocalAPI.WatchEvent {
        for try await text in connection.messages {
            let event = try JSONDecoder().decode(LocalAPI.WatchEvent.self, from: Data(text.utf8))
            if predicate(event) { return event }
        }
        throw LocalAPIClientError.transport("the presenters' stream ended")
    }
}

/// What the tests read of a presenter's event.
extension LocalAPI.WatchEvent {
    /// The app's event, if it is one.
    package var personEvent: PersonEvent? {
        if case .event(.app(_, let event)) = self { return event }
        return nil
    }

    /// The notification of a `presented` event.
    package var presented: NotificationCenterMachine.VisibleNotification? {
        if case .presented(let shown)? = personEvent { return shown }
        return nil
    }

    /// What an `authorizationPrompt` event asks for.
    package var promptOptions: UInt? {
        if case .authorizationPrompt(let options)? = personEvent { return options.rawValue }
        return nil
    }

    /// The app's state an `appStateChanged` event tells.
    package var appState: AppState? {
        if case .appStateChanged(let state)? = personEvent { return state }
        return nil
    }
}

/// An app's event stream (`/v1/events`), already connected.
package struct AppStream: Sendable {
    package let connection: LocalAPIWebSocket.Connection

    package func next() async throws -> LocalAPI.AppEvent {
        for try await text in connection.messages {
            return try JSONDecoder().decode(LocalAPI.AppEvent.self, from: Data(text.utf8))
        }
        throw LocalAPIClientError.transport("the app's stream ended")
    }

    package func reply(_ reply: LocalAPI.AppReply) async throws {
        try await connection.send(String(decoding: try JSONEncoder().encode(reply), as: UTF8.self))
    }
}

extension RunningDaemon {
    /// Opens the presenters' stream and waits until it is subscribed.
    package func withWatch<T: Sendable>(_ body: @Sendable (WatchStream) async throws -> T) async throws -> T {
        try await LocalAPIWebSocket.withConnection(socketPath: socketPath, path: "/v1/admin/events", key: adminKey) { connection in
            try await connection.send(#"{"type":"subscribe"}"#)
            let stream = WatchStream(connection: connection)
            _ = try await stream.next { $0.type == "subscribed" }
            return try await body(stream)
        }
    }

    /// Connects as the app with `key`, in `state`, and waits until it is connected.
    package func withApp<T: Sendable>(key: String, state: AppState = .background, _ body: @Sendable (AppStream) async throws -> T) async throws -> T {
        try await LocalAPIWebSocket.withConnection(socketPath: socketPath, path: "/v1/events", key: key) { connection in
            let stream = AppStream(connection: connection)
            try await stream.reply(.state(state))
            guard case .connected = try await stream.next() else {
                throw LocalAPIClientError.transport("the app's stream did not start with `connected`")
            }
            return try await body(stream)
        }
    }
}
