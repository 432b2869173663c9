import Foundation
import NotificationCore

/// The apps' connections, at most one per app, with what a takeover is waiting for: a value with no
/// I/O and no clock, which the engine changes on its actor.
///
/// A new connection of an app takes over from the previous one: the previous is told it was replaced
/// and its stream ends (``takeOver(_:)``), and its successor waits until it lets go (it closes:
/// ``released(_:)``) or a grace passes. Each replaced connection is in one of three states until the
/// wait ends: `pending` (its successor is about to wait), `waiting` (its successor waits on a
/// continuation), `released` (it let go before its successor waited).
struct AppConnections {
    /// An app's open connection: what takes its events, in order, and what ends it.
    struct Connection {
        let id: UUID
        let deliver: @Sendable (LocalAPI.AppEvent) -> Void
        let finish: @Sendable () -> Void
    }

    /// Where a replaced connection is in letting go.
    private enum Release {
        case pending
        case waiting(CheckedContinuation<Void, Never>)
        case released
    }

    private var open: [String: Connection] = [:]
    private var replaced: [UUID: Release] = [:]

    /// How many apps are connected.
    var count: Int { open.count }
    /// The apps connected now.
    var apps: [String] { Array(open.keys) }

    /// Whether `app` is connected (by `connection`, when one is named).
    func isConnected(_ app: String, by connection: UUID? = nil) -> Bool {
        guard let current = open[app] else { return false }
        return connection.map { $0 == current.id } ?? true
    }

    /// Sends a message to the app, when it is connected.
    func send(_ message: LocalAPI.AppEvent, to app: String) {
        open[app]?.deliver(message)
    }

    /// Ends the app's connection, if it has one, and returns whether it had.
    @discardableResult
    mutating func close(_ app: String) -> Bool {
        guard let connection = open.removeValue(forKey: app) else { return false }
        connection.finish()
        return true
    }

    /// Connects `app` on `connection`.
    mutating func connect(_ app: String, _ connection: Connection) {
        open[app] = connection
    }

    /// Ends the app's connection because a new one takes over: it is told so. Returns its identifier,
    /// for the successor to wait on (``beginWaiting(for:)``), or `nil` when the app was not connected.
    mutating func takeOver(_ app: String) -> UUID? {
        guard let previous = open.removeValue(forKey: app) else { return nil }
        previous.deliver(.replaced)
        previous.finish()
        replaced[previous.id] = .pending
        return previous.id
    }

    /// The successor of a replaced connection waits on `continuation` for it to let go; resumed at
    /// once when it already did, or when nobody waits for it any more.
    mutating func wait(for connection: UUID, _ continuation: CheckedContinuation<Void, Never>) {
        switch replaced[connection] {
        case .pending: replaced[connection] = .waiting(continuation)
        case .released, .waiting, nil: continuation.resume()
        }
    }

    /// The wait for a replaced connection is over (it let go, or the grace passed): nobody waits any more.
    mutating func endWaiting(for connection: UUID) {
        if case .waiting(let waiter) = replaced.removeValue(forKey: connection) { waiter.resume() }
    }

    /// A replaced connection closed: its successor, if it waits, goes on.
    mutating func released(_ connection: UUID) {
        switch replaced[connection] {
        case .waiting(let waiter):
            replaced.removeValue(forKey: connection)
            waiter.resume()
        case .pending:
            replaced[connection] = .released
        case .released, nil:
            break
        }
    }
}

/// Those waiting for an app to settle (``DaemonEngine/waitUntilAnswered(_:)``), by app: each resumed
/// once, when the app has nothing open, when it is gone, or when the waiter stops waiting.
struct AnswerWaiters {
    private var waiting: [String: [UUID: CheckedContinuation<Void, Never>]] = [:]

    mutating func add(_ id: UUID, for app: String, _ continuation: CheckedContinuation<Void, Never>) {
        waiting[app, default: [:]][id] = continuation
    }

    /// Resumes everyone waiting for `app`.
    mutating func resumeAll(of app: String) {
        waiting.removeValue(forKey: app)?.values.forEach { $0.resume() }
    }

    /// Resumes one waiter, who stopped waiting.
    mutating func resume(_ id: UUID, of app: String) {
        waiting[app]?.removeValue(forKey: id)?.resume()
    }
}
