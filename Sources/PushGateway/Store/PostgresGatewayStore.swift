package import Foundation
package import Logging
import NIOCore
import NIOPosix
package import NotificationCore
import PostgresNIO
import Synchronization
import ServiceLifecycle

/// The gateway's store in a PostgreSQL database, for several gateway nodes sharing one state
/// (`unotify gateway --database postgres://…`): the same tables and rules as ``SQLiteGatewayStore``,
/// passing the same conformance suite.
///
/// Every method runs in one transaction, committed (and so, with PostgreSQL's default
/// `synchronous_commit`, flushed to its write-ahead log) before it returns. The schema is versioned:
/// each migration runs once, in order, under an advisory lock, so that nodes starting together agree.
/// The connection pool runs as a `Service` (``run()``); the store answers once it runs.
package final class PostgresGatewayStore: GatewayStore, Service {
    private let client: PostgresClient
    private let logger: Logger
    /// Opened when ``run()`` starts the connection pool.
    private let poolStarted = PoolStarted()
    /// The calls under way, each in a task of its own (see ``withTimeout(_:what:_:)``).
    private let calls = OwnedTasks()
    /// This node's name among the nodes sharing the database: made anew at each start.
    package let nodeID = UUID().uuidString.lowercased()
    /// Where the database is, for messages (no password).
    package let location: String

    /// A store on the database at `url` (`postgres://user[:password]@host[:port]/database`, or
    /// `postgres:///database?host=/var/run/postgresql` for a Unix socket).
    ///
    /// - Throws: a `GatewayError` with code `invalidArgument` for a URL it cannot read.
    /// - Parameter answerTimeout: how long one call may wait for the database before it is said to
    ///   be unavailable.
    /// - Parameter pauses: waits a test puts in a batch's way (``StoringPauses``); none by default.
    package init(url: String, logger: Logger, answerTimeout: Duration = PostgresGatewayStore.defaultAnswerTimeout,
                 pauses: StoringPauses = StoringPauses()) throws(GatewayError) {
        let (configuration, location) = try Self.configuration(from: url)
        self.location = location
        self.answerTimeout = answerTimeout
        self.pauses = pauses
        self.logger = logger
        client = PostgresClient(configuration: configuration, eventLoopGroup: Self.connectionThread, backgroundLogger: logger)
    }

    /// The database's connections have a thread of their own: on the event loops of the provider
    /// API, busy with its connections, each answer of the database waited for its turn, and a query
    /// of microseconds took milliseconds (with batches waiting on it, a third of the pushes a second).
    private static let connectionThread = MultiThreadedEventLoopGroup(numberOfThreads: 1)

    /// Runs the connection pool until the service is cancelled.
    package func run() async {
        await cancelWhenGracefulShutdown {
            // Said just before the pool starts, in the same task: nothing in between suspends.
            self.poolStarted.open()
            await self.client.run()
        }
        // The pool is closed: a call still waiting for it has nothing more to wait for.
        calls.cancelAll()
    }

    /// Creates or updates the schema; call once the pool runs (it waits for ``run()`` to start it,
    /// so that the pool is not asked for a connection before it runs).
    package func migrate() async throws(GatewayError) {
        await poolStarted.wait()
        try await transaction("migrating", timeout: Self.migrationTimeout) { connection, logger in
            // One node at a time: the others wait here, then find the migrations done.
            try await connection.query("SELECT pg_advisory_xact_lock(\(Self.migrationLock))", logger: logger)
            try await connection.query("CREATE TABLE IF NOT EXISTS schema_migration (version INTEGER PRIMARY KEY NOT NULL)", logger: logger)
            var applied: Set<Int> = []
            for try await version in try await connection.query("SELECT version FROM schema_migration", logger: logger).decode(Int.self) {
                applied.insert(version)
            }
            for (version, statements) in Self.migrations.enumerated() where !applied.contains(version + 1) {
                for statement in statements { try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger) }
                try await connection.query("INSERT INTO schema_migration (version) VALUES (\(version + 1))", logger: logger)
            }
        }
    }

    // MARK: - Running statements

    /// How long one call may wait for the database before it is said to be unavailable, unless told.
    package static let defaultAnswerTimeout: Duration = .seconds(10)
    private let answerTimeout: Duration
    private let pauses: StoringPauses

    /// Waits put in a batch's way as it is stored, for tests that make one batch of several written at
    /// once slower than another: before it locks its devices, and after it committed.
    package struct StoringPauses: Sendable {
        package var beforeLocking: (@Sendable ([QueuedPush]) async -> Void)?
        package var afterCommit: (@Sendable ([QueuedPush]) async -> Void)?

        package init(beforeLocking: (@Sendable ([QueuedPush]) async -> Void)? = nil, afterCommit: (@Sendable ([QueuedPush]) async -> Void)? = nil) {
            self.beforeLocking = beforeLocking
            self.afterCommit = afterCommit
        }
    }
    /// How long the schema's migration may take (many statements, and other nodes' turns first).
    static let migrationTimeout: Duration = .seconds(300)

    /// How a call runs on its connection.
    private enum Scope {
        /// In one transaction: committed when the body returns, rolled back when it throws. Without
        /// `waitsForDisk`, for what a crash may lose without harm (a token's bucket, which links a node
        /// holds, that it runs), the commit does not wait for the write-ahead log's flush.
        case transaction(waitsForDisk: Bool)
        /// One statement on its own (atomic by itself): no `BEGIN` and `COMMIT` round trips around a read.
        case statement
    }

    /// Runs `body` in one transaction; see ``Scope/transaction(waitsForDisk:)``.
    private func transaction<T: Sendable>(
        _ what: String, timeout: Duration? = nil, waitsForDisk: Bool = true,
        _ body: @escaping @Sendable (PostgresConnection, Logger) async throws -> T
    ) async throws(GatewayError) -> T {
        try await run(what, .transaction(waitsForDisk: waitsForDisk), timeout: timeout ?? answerTimeout, body)
    }

    /// Runs one statement's work outside a transaction; see ``Scope/statement``.
    private func statement<T: Sendable>(
        _ what: String, _ body: @escaping @Sendable (PostgresConnection, Logger) async throws -> T
    ) async throws(GatewayError) -> T {
        try await run(what, .statement, timeout: answerTimeout, body)
    }

    private func run<T: Sendable>(
        _ what: String, _ scope: Scope, timeout: Duration, _ body: @escaping @Sendable (PostgresConnection, Logger) async throws -> T
    ) async throws(GatewayError) -> T {
        do {
            let logger = self.logger
            let client = self.client
            // A database that is gone makes the pool wait for a connection: after the timeout the
            // caller hears it is unavailable (a provider gets 503 and sends again) instead of waiting.
            // The call is cancelled then, and left to end on its own: the pool may not let go of a
            // waiting lease at once, and the caller must not wait for it.
            return try await withTimeout(timeout, what: "\(what) failed in \(location)") {
                switch scope {
                case .transaction(let waitsForDisk):
                    try await client.withTransaction(logger: logger) { connection in
                        if !waitsForDisk { try await connection.query("SET LOCAL synchronous_commit = off", logger: logger) }
                        return try await body(connection, logger)
                    }
                case .statement:
                    try await client.withConnection { connection in try await body(connection, logger) }
                }
            }
        } catch let error as GatewayError {
            throw error
        } catch let error as PostgresTransactionError {
            if let gatewayError = error.closureError as? GatewayError { throw gatewayError }
            let cause: any Error = error.closureError ?? error.commitError ?? error.beginError ?? error.rollbackError ?? error
            throw GatewayError(Self.isUnreachable(cause) ? .unavailable : .storageFailed, "\(what) failed in \(location): \(String(reflecting: cause))")
        } catch {
            throw GatewayError(Self.isUnreachable(error) ? .unavailable : .storageFailed, "\(what) failed in \(location): \(String(reflecting: error))")
        }
    }

    /// The result of `operation`, or `GatewayError(.unavailable)` once `timeout` passed, whichever
    /// comes first; the operation is then cancelled and not waited for. The operation runs in a task
    /// of ``calls``; the timeout is an alarm of the system clock, with no task waiting for it.
    private func withTimeout<T: Sendable>(
        _ timeout: Duration, what: String, _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let race = TimeoutRace<T>()
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        return try await withCheckedThrowingContinuation { continuation in
            race.start(continuation)
            race.setTimer(SystemClock().alarm(at: Date().addingTimeInterval(seconds)) {
                race.finish(.failure(GatewayError(.unavailable, "\(what): no answer within \(timeout).")))
            })
            race.setWork(calls.start {
                do {
                    race.finish(.success(try await operation()))
                } catch {
                    race.finish(.failure(error))
                }
            })
        }
    }

    /// Whether `error` says the database cannot be reached now (down, restarting, the connection cut),
    /// rather than that it refused what was asked.
    private static func isUnreachable(_ error: any Error) -> Bool {
        guard let error = error as? PSQLError else {
            // The pool's own errors (no connection could be made in time): the server is not there.
            return !(error is PostgresDecodingError)
        }
        switch error.code {
        case .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .poolClosed:
            return true
        case .server:
            // Class 57 (operator intervention: shutting down, cannot connect now) and 08 (connection).
            let state = error.serverInfo?[.sqlState] ?? ""
            return state.hasPrefix("57P") || state.hasPrefix("08")
        default:
            return false
        }
    }

    /// The rows of a query, decoded as a tuple of its columns' types each.
    private static func all<each Column: PostgresDecodable & Sendable>(
        _ rows: PostgresRowSequence, as type: (repeat each Column).Type
    ) async throws -> [(repeat each Column)] {
        var values: [(repeat each Column)] = []
        for try await row in rows.decode(type) { values.append(row) }
        return values
    }

    /// The rows of a one-column query, decoded as `Column` each.
    private static func column<Column: PostgresDecodable & Sendable>(_ rows: PostgresRowSequence, as type: Column.Type) async throws -> [Column] {
        var values: [Column] = []
        for try await value in rows.decode(type) { values.append(value) }
        return values
    }

    /// How many rows a statement ending in `RETURNING 1` changed.
    private static func count(_ rows: PostgresRowSequence) async throws -> Int {
        var count = 0
        for try await _ in rows { count += 1 }
        return count
    }

    /// Runs a statement ending in `RETURNING 1` that must change exactly one row; throws `notFound`
    /// with `message` when it changes none.
    private func changeOne(_ what: String, _ statement: PostgresQuery, notFound message: String) async throws(GatewayError) {
        try await transaction(what) { connection, logger in
            guard try await Self.count(connection.query(statement, logger: logger)) == 1 else { throw GatewayError(.notFound, message) }
        }
    }

    /// Locks the devices' rows until the transaction ends, in one order (no deadlock between two
    /// transactions locking several).
    private static func lockDevices(_ devices: Set<String>, on connection: PostgresConnection, logger: Logger) async throws {
        let sorted = devices.sorted()
        try await connection.query("SELECT 1 FROM device WHERE device_id = ANY(\(sorted)) ORDER BY device_id FOR UPDATE", logger: logger)
    }

    // MARK: - Providers

    package func addTeam(_ teamID: String, name: String) async throws(GatewayError) {
        try await transaction("adding a team") { connection, logger in
            let inserted = try await Self.count(connection.query(
                "INSERT INTO team (team_id, name) VALUES (\(teamID), \(name)) ON CONFLICT DO NOTHING RETURNING 1", logger: logger))
            guard inserted == 1 else { throw GatewayError(.alreadyExists, "A team \(teamID) exists already.") }
        }
    }

    package func teams() async throws(GatewayError) -> [(teamID: String, name: String)] {
        try await statement("reading teams") { connection, logger in
            try await Self.all(connection.query("SELECT team_id, name FROM team ORDER BY team_id", logger: logger), as: (String, String).self)
                .map { (teamID: $0.0, name: $0.1) }
        }
    }

    package func addKey(_ key: StoredKey) async throws(GatewayError) {
        try await transaction("adding a key") { connection, logger in
            guard try await Self.count(connection.query("SELECT 1 FROM team WHERE team_id = \(key.teamID)", logger: logger)) == 1 else {
                throw GatewayError(.notFound, "No team \(key.teamID). Add it first with `unotify gateway teams add`.")
            }
            let apps = key.bundleIdentifiers.map { $0.sorted().joined(separator: " ") }
            let inserted = try await Self.count(connection.query("""
                INSERT INTO signing_key (key_id, team_id, environment, bundle_identifiers, public_key)
                VALUES (\(key.keyID), \(key.teamID), \(key.environment?.rawValue), \(apps), \(key.publicKeyPEM)) ON CONFLICT DO NOTHING RETURNING 1
                """, logger: logger))
            guard inserted == 1 else { throw GatewayError(.alreadyExists, "A key \(key.keyID) exists already.") }
        }
    }

    package func removeKey(_ keyID: String) async throws(GatewayError) {
        try await changeOne("removing a key", "DELETE FROM signing_key WHERE key_id = \(keyID) RETURNING 1", notFound: "No key \(keyID).")
    }

    package func addApp(_ bundleIdentifier: String, team teamID: String) async throws(GatewayError) {
        try await transaction("adding an app") { connection, logger in
            guard try await Self.count(connection.query("SELECT 1 FROM team WHERE team_id = \(teamID)", logger: logger)) == 1 else {
                throw GatewayError(.notFound, "No team \(teamID). Add it first with `unotify gateway teams add`.")
            }
            if let owner = try await Self.column(connection.query("SELECT team_id FROM app WHERE bundle_identifier = \(bundleIdentifier)", logger: logger),
                                               as: String.self).first {
                throw GatewayError(.alreadyExists, "\(bundleIdentifier) belongs to team \(owner) already.")
            }
            try await connection.query("INSERT INTO app (bundle_identifier, team_id) VALUES (\(bundleIdentifier), \(teamID))", logger: logger)
        }
    }

    package func removeApp(_ bundleIdentifier: String) async throws(GatewayError) {
        try await changeOne("removing an app", "DELETE FROM app WHERE bundle_identifier = \(bundleIdentifier) RETURNING 1",
                            notFound: "No app \(bundleIdentifier).")
    }

    package func setKeepsLatestOnly(_ bundleIdentifier: String, _ latestOnly: Bool) async throws(GatewayError) {
        try await changeOne("changing an app", "UPDATE app SET latest_only = \(latestOnly) WHERE bundle_identifier = \(bundleIdentifier) RETURNING 1",
                            notFound: "No app \(bundleIdentifier).")
    }

    package func appsKeepingLatestOnly() async throws(GatewayError) -> Set<String> {
        try await statement("reading apps") { connection, logger in
            Set(try await Self.column(connection.query("SELECT bundle_identifier FROM app WHERE latest_only", logger: logger), as: String.self))
        }
    }

    package func providers() async throws(GatewayError) -> (keys: [StoredKey], appsByTeam: [String: Set<String>]) {
        try await transaction("reading providers") { connection, logger in
            let keys = try await Self.all(connection.query("""
                SELECT key_id, team_id, environment, bundle_identifiers, public_key FROM signing_key ORDER BY key_id
                """, logger: logger), as: (String, String, String?, String?, String).self).map { row in
                StoredKey(keyID: row.0, teamID: row.1, environment: row.2.flatMap(APNs.Environment.init(rawValue:)),
                          bundleIdentifiers: row.3.map { Set($0.split(separator: " ").map(String.init)) }, publicKeyPEM: row.4)
            }
            var apps: [String: Set<String>] = [:]
            for (app, team) in try await Self.all(connection.query("SELECT bundle_identifier, team_id FROM app", logger: logger), as: (String, String).self) {
                apps[team, default: []].insert(app)
            }
            return (keys, apps)
        }
    }

    // MARK: - Devices and tokens

    package func addDevice(_ deviceID: String, secretHash: String, at date: Date) async throws(GatewayError) {
        try await transaction("adding a device") { connection, logger in
            let inserted = try await Self.count(connection.query("""
                INSERT INTO device (device_id, secret_hash, created_at) VALUES (\(deviceID), \(secretHash), \(date.timeIntervalSince1970))
                ON CONFLICT DO NOTHING RETURNING 1
                """, logger: logger))
            guard inserted == 1 else { throw GatewayError(.alreadyExists, "A device \(deviceID) exists already.") }
        }
    }

    package func deviceSecretHash(_ deviceID: String) async throws(GatewayError) -> String? {
        try await statement("reading a device") { connection, logger in
            try await Self.column(connection.query("SELECT secret_hash FROM device WHERE device_id = \(deviceID) AND removed_at IS NULL", logger: logger),
                               as: String.self).first
        }
    }

    package func removeDevice(_ deviceID: String, at date: Date) async throws(GatewayError) {
        try await transaction("removing a device") { connection, logger in
            guard try await Self.count(connection.query("""
                UPDATE device SET removed_at = \(date.timeIntervalSince1970) WHERE device_id = \(deviceID) AND removed_at IS NULL RETURNING 1
                """, logger: logger)) == 1 else {
                throw GatewayError(.notFound, "No device \(deviceID), or it was removed already.")
            }
            try await connection.query("""
                INSERT INTO delivery_stage (unique_id, at, stage, detail)
                SELECT d.unique_id, \(date.timeIntervalSince1970), 'dropped', 'the device was removed'
                FROM push p JOIN delivery d ON d.unique_id = p.unique_id WHERE p.device_id = \(deviceID) ORDER BY p.sequence
                """, logger: logger)
            try await connection.query("DELETE FROM push WHERE device_id = \(deviceID)", logger: logger)
        }
    }

    package func setDeviceDisabled(_ deviceID: String, _ disabled: Bool) async throws(GatewayError) {
        try await changeOne("changing a device", "UPDATE device SET disabled = \(disabled) WHERE device_id = \(deviceID) AND removed_at IS NULL RETURNING 1",
                            notFound: "No device \(deviceID).")
    }

    package func deviceStandings() async throws(GatewayError) -> [String: DeviceStanding] {
        try await statement("reading devices") { connection, logger in
            let rows = try await Self.all(connection.query(
                "SELECT device_id, removed_at, disabled FROM device WHERE removed_at IS NOT NULL OR disabled", logger: logger),
                as: (String, Double?, Bool).self)
            return Dictionary(uniqueKeysWithValues: rows.map { ($0.0, DeviceStanding(removedAt: $0.1.map(Date.init(timeIntervalSince1970:)), isDisabled: $0.2)) })
        }
    }

    private typealias RegistrationRow = (String, String, String, String, Double, Double?)

    private static func registration(_ row: RegistrationRow) -> Registration {
        Registration(token: row.0, deviceID: row.1, bundleIdentifier: row.2, environment: APNs.Environment(rawValue: row.3) ?? .sandbox,
                     registeredAt: Date(timeIntervalSince1970: row.4), unregisteredAt: row.5.map(Date.init(timeIntervalSince1970:)))
    }

    package func register(_ registration: Registration) async throws(GatewayError) -> Registration {
        try await transaction("registering a token") { connection, logger in
            // The device's row locked: two nodes registering the same app at once agree on one token.
            guard try await Self.count(connection.query("SELECT 1 FROM device WHERE device_id = \(registration.deviceID) FOR UPDATE", logger: logger)) == 1 else {
                throw GatewayError(.notFound, "No device \(registration.deviceID).")
            }
            if let row = try await Self.all(connection.query("""
                SELECT token, device_id, bundle_identifier, environment, registered_at, unregistered_at FROM registration
                WHERE device_id = \(registration.deviceID) AND bundle_identifier = \(registration.bundleIdentifier)
                AND environment = \(registration.environment.rawValue) AND unregistered_at IS NULL
                """, logger: logger), as: RegistrationRow.self).first {
                return Self.registration(row)
            }
            try await connection.query("""
                INSERT INTO registration (token, device_id, bundle_identifier, environment, registered_at)
                VALUES (\(registration.token), \(registration.deviceID), \(registration.bundleIdentifier), \(registration.environment.rawValue),
                        \(registration.registeredAt.timeIntervalSince1970))
                """, logger: logger)
            var stored = registration
            stored.unregisteredAt = nil
            return stored
        }
    }

    package func registrations(tokens: [String]) async throws(GatewayError) -> [String: Registration] {
        guard !tokens.isEmpty else { return [:] }
        return try await statement("reading tokens") { connection, logger in
            let rows = try await Self.all(connection.query("""
                SELECT r.token, r.device_id, r.bundle_identifier, r.environment, r.registered_at, r.unregistered_at, d.last_linked_at
                FROM registration r LEFT JOIN device d ON d.device_id = r.device_id WHERE r.token = ANY(\(tokens))
                """, logger: logger), as: (String, String, String, String, Double, Double?, Double?).self)
            return Dictionary(rows.map { row in
                var registration = Self.registration((row.0, row.1, row.2, row.3, row.4, row.5))
                registration.deviceLastLinkedAt = row.6.map(Date.init(timeIntervalSince1970:))
                return (registration.token, registration)
            }, uniquingKeysWith: { first, _ in first })
        }
    }

    package func unregister(deviceID: String, bundleIdentifier: String, at date: Date, because reason: String) async throws(GatewayError) {
        try await transaction("unregistering a token") { connection, logger in
            let at = date.timeIntervalSince1970
            let tokens = try await Self.column(connection.query("""
                UPDATE registration SET unregistered_at = \(at)
                WHERE device_id = \(deviceID) AND bundle_identifier = \(bundleIdentifier) AND unregistered_at IS NULL
                RETURNING token
                """, logger: logger), as: String.self)
            // Nodes that read these tokens forget them: the next push to one answers `410`.
            if !tokens.isEmpty {
                try await connection.query("SELECT pg_notify(\(Self.unregisteredChannel), \(tokens.joined(separator: "\n")))", logger: logger)
            }
            // What was queued for the app will not be delivered.
            try await connection.query("""
                INSERT INTO delivery_stage (unique_id, at, stage, detail)
                SELECT d.unique_id, \(at), 'dropped', \(reason)
                FROM push p JOIN delivery d ON d.unique_id = p.unique_id WHERE p.device_id = \(deviceID) AND p.bundle_identifier = \(bundleIdentifier)
                ORDER BY p.sequence
                """, logger: logger)
            try await connection.query("DELETE FROM push WHERE device_id = \(deviceID) AND bundle_identifier = \(bundleIdentifier)", logger: logger)
        }
    }

    // MARK: - Changes announced

    package func announceChange() async throws(GatewayError) -> Int64 {
        try await transaction("announcing a change") { connection, logger in
            try await Self.column(connection.query("UPDATE gateway_change SET number = number + 1 WHERE id = 1 RETURNING number", logger: logger),
                                  as: Int64.self).first ?? 0
        }
    }

    package func changeNumber() async throws(GatewayError) -> Int64 {
        try await statement("reading the last change") { connection, logger in
            try await Self.column(connection.query("SELECT number FROM gateway_change WHERE id = 1", logger: logger), as: Int64.self).first ?? 0
        }
    }

    package func noteChangeRead(_ number: Int64) async throws(GatewayError) {
        let nodeID = self.nodeID
        _ = try await statement("noting a change read") { connection, logger in
            try await connection.query("""
                INSERT INTO gateway_node (node_id, seen_at, change_read) VALUES (\(nodeID), extract(epoch FROM clock_timestamp()), \(number))
                ON CONFLICT (node_id) DO UPDATE SET seen_at = EXCLUDED.seen_at, change_read = GREATEST(gateway_node.change_read, EXCLUDED.change_read)
                """, logger: logger)
        }
    }

    package func nodesBehind(_ number: Int64) async throws(GatewayError) -> Int {
        let nodeID = self.nodeID
        let liveness = Self.liveness
        return try await statement("reading which nodes read a change") { connection, logger in
            try await Self.count(connection.query("""
                SELECT 1 FROM gateway_node WHERE node_id <> \(nodeID) AND seen_at > extract(epoch FROM clock_timestamp()) - \(liveness)
                AND change_read >= 0 AND change_read < \(number)
                """, logger: logger))
        }
    }

    package func leave() async {
        let nodeID = self.nodeID
        _ = try? await statement("leaving") { connection, logger in
            try await connection.query("DELETE FROM gateway_node WHERE node_id = \(nodeID)", logger: logger)
        }
    }

    package func noteLinked(_ deviceIDs: [String], at date: Date) async throws(GatewayError) {
        guard !deviceIDs.isEmpty else { return }
        _ = try await statement("noting linked devices") { connection, logger in
            try await connection.query("UPDATE device SET last_linked_at = \(date.timeIntervalSince1970) WHERE device_id = ANY(\(deviceIDs))", logger: logger)
        }
    }

    package func registeredApps(of deviceID: String) async throws(GatewayError) -> Set<String> {
        try await transaction("reading a device's apps") { connection, logger in
            Set(try await Self.column(connection.query("""
                SELECT DISTINCT bundle_identifier FROM registration WHERE device_id = \(deviceID) AND unregistered_at IS NULL
                """, logger: logger), as: String.self))
        }
    }

    // MARK: - Pushes

    package func enqueue(_ pushes: [QueuedPush], at date: Date) async throws(GatewayError) -> [QueuedPush] {
        try await enqueue(pushes, at: date, ordered: {})
    }

    package func enqueue(_ pushes: [QueuedPush], at date: Date, ordered: @escaping @Sendable () -> Void) async throws(GatewayError) -> [QueuedPush] {
        guard !pushes.isEmpty else {
            ordered()
            return []
        }
        let now = date.timeIntervalSince1970
        let nodeID = self.nodeID
        // Said once whatever happens: a batch waiting for this one's places must not wait forever.
        let once = OrderedOnce(ordered)
        defer { once.call() }
        // Each device's pushes in its order get their sequence, and commit, one transaction at a time:
        // a link that follows the sequence never passes one that commits later with a smaller number.
        // So do those that replace others (two batches must not each keep theirs). A held push (its
        // device linked nowhere) gets its place when the device links: its device is not locked, and
        // a batch for devices away is written beside the others (a device that links meanwhile is
        // woken to promote it once it is committed).
        let ordered = Set(pushes.lazy.filter { !$0.held || $0.collapseID != nil || $0.replacesQueued }.map(\.deviceID))
        // Most batches replace nothing and drop nothing: written by one statement, its own transaction
        // (after one that locks their devices, for pushes in their devices' order). Each round trip
        // to the database is a wait on a loaded machine, for the batch and the providers behind it.
        if let pause = pauses.beforeLocking { await pause(pushes) }
        if !pushes.contains(where: { $0.replacesQueued || $0.collapseID != nil || $0.droppedBecause != nil }) {
            let stored: [QueuedPush]
            if ordered.isEmpty {
                once.call()
                stored = try await statement("storing pushes") { connection, logger in
                    try await Self.store(pushes, at: now, from: nodeID, on: connection, logger: logger)
                }
            } else {
                stored = try await transaction("storing pushes") { connection, logger in
                    try await Self.lockDevices(ordered, on: connection, logger: logger)
                    once.call()
                    return try await Self.store(pushes, at: now, from: nodeID, on: connection, logger: logger)
                }
            }
            if let pause = pauses.afterCommit { await pause(pushes) }
            return stored
        }
        return try await transaction("storing pushes") { connection, logger in
            if !ordered.isEmpty { try await Self.lockDevices(ordered, on: connection, logger: logger) }
            // Another batch may lock its devices from now: those it shares with this one wait for its commit.
            once.call()
            try await Self.logAccepted(pushes, at: now, on: connection, logger: logger)
            // A batch is a few statements, not a few per push: pushes go in together, in runs; one that
            // replaces others ends a run, so that what it replaces earlier in the batch is written first.
            var stored: [QueuedPush] = []
            stored.reserveCapacity(pushes.count)
            var run: [QueuedPush] = []
            for push in pushes where push.droppedBecause == nil {
                if push.replacesQueued || push.collapseID != nil {
                    stored += try await Self.insert(run, on: connection, logger: logger)
                    run.removeAll(keepingCapacity: true)
                    try await Self.removeReplaced(by: push, at: now, on: connection, logger: logger)
                }
                run.append(push)
            }
            stored += try await Self.insert(run, on: connection, logger: logger)
            // Every node hears of them once they are committed: the one holding a device's link sends them.
            try await Self.notifyStored(stored, from: nodeID, on: connection, logger: logger)
            return stored
        }
    }

    /// Logs and stores pushes that replace nothing and are not dropped, and tells every node, in one
    /// statement: the delivery log's entries, the pushes with sequences taken in their order, and the
    /// notifications (sent at its commit). Returns the pushes with their sequences.
    private static func store(_ pushes: [QueuedPush], at now: Double, from nodeID: String, on connection: PostgresConnection,
                              logger: Logger) async throws -> [QueuedPush] {
        var devices: [String: Bool] = [:]
        for push in pushes { devices[push.deviceID, default: false] = devices[push.deviceID, default: false] || push.held }
        let statement = StorePushes(pushes: pushes, now: now, notifications: storedNotifications(devices, from: nodeID))
        var sequences: [Int64] = []
        sequences.reserveCapacity(pushes.count)
        for try await sequence in try await connection.execute(statement, logger: logger) { sequences.append(sequence) }
        guard sequences.count == pushes.count else {
            throw GatewayError(.storageFailed, "The database gave \(sequences.count) sequences for \(pushes.count) pushes.")
        }
        var stored = pushes
        for index in stored.indices { stored[index].sequence = sequences[index] }
        return stored
    }

    /// Logs the pushes that have a sender as accepted, and those only logged as dropped.
    private static func logAccepted(_ pushes: [QueuedPush], at now: Double, on connection: PostgresConnection, logger: Logger) async throws {
        let logged = pushes.filter { $0.sender != nil && $0.uniqueID != nil }
        guard !logged.isEmpty else { return }
        // Arrays cannot hold NULL here: an absent collapse identifier is the empty string, made NULL again.
        try await connection.query("""
            INSERT INTO delivery (unique_id, apns_id, team_id, credential, bundle_identifier, environment, device_id, token, push_type,
                                  priority, payload_bytes, collapse_id, expires_at, accepted_at, stored_at, held)
            SELECT u, a, tm, cr, b, e, d, t, pt, p, pb, NULLIF(c, ''), x, r, CASE WHEN dr THEN NULL ELSE \(now) END, h
            FROM unnest(\(logged.map { $0.uniqueID ?? "" })::text[], \(logged.map(\.apnsID))::text[],
                        \(logged.map { $0.sender?.teamID ?? "" })::text[], \(logged.map { $0.sender?.credential ?? "" })::text[],
                        \(logged.map(\.bundleIdentifier))::text[], \(logged.map(\.environment.rawValue))::text[], \(logged.map(\.deviceID))::text[],
                        \(logged.map(\.token))::text[], \(logged.map(\.pushType.rawValue))::text[], \(logged.map(\.priority))::int8[],
                        \(logged.map(\.payload.count))::int8[], \(logged.map { $0.collapseID ?? "" })::text[],
                        \(logged.map(\.expiresAt.timeIntervalSince1970))::float8[], \(logged.map(\.receivedAt.timeIntervalSince1970))::float8[],
                        \(logged.map { $0.droppedBecause != nil })::bool[], \(logged.map(\.held))::bool[])
                 AS v(u, a, tm, cr, b, e, d, t, pt, p, pb, c, x, r, dr, h)
            ON CONFLICT DO NOTHING
            """, logger: logger)
        let dropped = logged.filter { $0.droppedBecause != nil }
        guard !dropped.isEmpty else { return }
        try await connection.query("""
            INSERT INTO delivery_stage (unique_id, at, stage, detail)
            SELECT u, \(now), 'dropped', dt
            FROM unnest(\(dropped.map { $0.uniqueID ?? "" })::text[], \(dropped.map { $0.droppedBecause ?? "" })::text[]) WITH ORDINALITY AS v(u, dt, n)
            ORDER BY n
            """, logger: logger)
    }

    /// Forgets what `push` replaces (logged as collapsed): every queued push of its token when its app
    /// keeps only the latest, else those of its token with its collapse identifier.
    private static func removeReplaced(by push: QueuedPush, at now: Double, on connection: PostgresConnection, logger: Logger) async throws {
        if push.replacesQueued {
            let detail = "replaced by \(push.apnsID): the app keeps only its latest push"
            try await connection.query("""
                INSERT INTO delivery_stage (unique_id, at, stage, detail)
                SELECT d.unique_id, \(now), 'collapsed', \(detail) FROM push p JOIN delivery d ON d.unique_id = p.unique_id
                WHERE p.device_id = \(push.deviceID) AND p.token = \(push.token) ORDER BY p.sequence
                """, logger: logger)
            // A token is one device's: its pushes are found through push_device (no index has tokens alone).
            try await connection.query("DELETE FROM push WHERE device_id = \(push.deviceID) AND token = \(push.token)", logger: logger)
        } else if let collapseID = push.collapseID {
            let detail = "replaced by \(push.apnsID), with the same collapse id"
            try await connection.query("""
                INSERT INTO delivery_stage (unique_id, at, stage, detail)
                SELECT d.unique_id, \(now), 'collapsed', \(detail) FROM push p JOIN delivery d ON d.unique_id = p.unique_id
                WHERE p.token = \(push.token) AND p.collapse_id = \(collapseID) ORDER BY p.sequence
                """, logger: logger)
            try await connection.query("DELETE FROM push WHERE token = \(push.token) AND collapse_id = \(collapseID)", logger: logger)
        }
    }

    /// Takes `count` numbers of the pushes' sequence, in increasing order.
    private static func takeSequences(_ count: Int, on connection: PostgresConnection, logger: Logger) async throws -> [Int64] {
        try await column(connection.query("""
            SELECT nextval(pg_get_serial_sequence('push', 'sequence')) FROM generate_series(1, \(count)) ORDER BY 1
            """, logger: logger), as: Int64.self)
    }

    /// Inserts pushes in one statement, with sequences taken in their order; returns them with theirs.
    private static func insert(_ pushes: [QueuedPush], on connection: PostgresConnection, logger: Logger) async throws -> [QueuedPush] {
        guard !pushes.isEmpty else { return [] }
        let sequences = try await takeSequences(pushes.count, on: connection, logger: logger)
        try await connection.query("""
            INSERT INTO push (sequence, device_id, token, bundle_identifier, environment, apns_id, push_type, priority, expires_at, collapse_id,
                              payload, received_at, held, unique_id, channel_id)
            SELECT s, d, t, b, e, a, pt, p, x, NULLIF(c, ''), pl, r, h, NULLIF(u, ''), NULLIF(ch, '')
            FROM unnest(\(sequences)::int8[], \(pushes.map(\.deviceID))::text[], \(pushes.map(\.token))::text[],
                        \(pushes.map(\.bundleIdentifier))::text[], \(pushes.map(\.environment.rawValue))::text[], \(pushes.map(\.apnsID))::text[],
                        \(pushes.map(\.pushType.rawValue))::text[], \(pushes.map(\.priority))::int8[],
                        \(pushes.map(\.expiresAt.timeIntervalSince1970))::float8[], \(pushes.map { $0.collapseID ?? "" })::text[],
                        \(pushes.map { ByteBuffer(bytes: $0.payload) })::bytea[], \(pushes.map(\.receivedAt.timeIntervalSince1970))::float8[],
                        \(pushes.map(\.held))::bool[], \(pushes.map { $0.uniqueID ?? "" })::text[], \(pushes.map { $0.channelID ?? "" })::text[])
                 AS v(s, d, t, b, e, a, pt, p, x, c, pl, r, h, u, ch)
            """, logger: logger)
        return zip(pushes, sequences).map { push, sequence in
            var push = push
            push.sequence = sequence
            return push
        }
    }

    package func pushes(for deviceID: String, after sequence: Int64, now: Date, limit: Int) async throws(GatewayError) -> [QueuedPush] {
        try await statement("reading pushes") { connection, logger in
            var pushes: [QueuedPush] = []
            // The statement every link runs each time it is woken: prepared once per connection.
            let rows = try await connection.execute(
                ReadPushes(deviceID: deviceID, after: sequence, now: now.timeIntervalSince1970, limit: limit), logger: logger)
            for try await row in rows {
                var push = QueuedPush(
                    sequence: row.0, deviceID: row.1, token: row.2, bundleIdentifier: row.3, environment: APNs.Environment(rawValue: row.4) ?? .sandbox,
                    apnsID: row.5, pushType: APNs.PushType(rawValue: row.6) ?? .alert, priority: row.7, expiresAt: Date(timeIntervalSince1970: row.8),
                    collapseID: row.9, payload: Array(buffer: row.10), receivedAt: Date(timeIntervalSince1970: row.11))
                push.uniqueID = row.12
                pushes.append(push)
            }
            return pushes
        }
    }

    package func noteNotTaken(deviceID: String, sequence: Int64, reason: String, limit: Int, at date: Date) async throws(GatewayError) -> Bool {
        try await transaction("noting a push its device did not take") { connection, logger in
            let attempts = try await Self.column(connection.query("""
                UPDATE push SET attempts = attempts + 1 WHERE device_id = \(deviceID) AND sequence = \(sequence) RETURNING attempts
                """, logger: logger), as: Int32.self).first.map(Int.init)
            guard let attempts, attempts >= limit else { return false }
            let detail = "the device did not take it in \(attempts) tries: \(reason)"
            try await connection.query("""
                INSERT INTO delivery_stage (unique_id, at, stage, detail)
                SELECT d.unique_id, \(date.timeIntervalSince1970), 'dropped', \(detail)
                FROM push p JOIN delivery d ON d.unique_id = p.unique_id WHERE p.device_id = \(deviceID) AND p.sequence = \(sequence)
                """, logger: logger)
            try await connection.query("DELETE FROM push WHERE device_id = \(deviceID) AND sequence = \(sequence)", logger: logger)
            return true
        }
    }

    package func acknowledge(_ acknowledgements: [Acknowledgement]) async throws(GatewayError) {
        let merged = Acknowledgement.merged(acknowledgements)
        guard !merged.isEmpty else { return }
        let sent = merged.flatMap(\.sent)
        let (devices, throughs, ats) = (merged.map(\.deviceID), merged.map(\.through), merged.map(\.at.timeIntervalSince1970))
        // Not waiting for the disk: pushes acknowledged and back after a crash of the server are sent
        // again, and the device recognizes them by their sequence.
        try await transaction("acknowledging pushes", waitsForDisk: false) { connection, logger in
            if !sent.isEmpty {
                try await connection.query("""
                    INSERT INTO delivery_stage (unique_id, at, stage)
                    SELECT d.unique_id, v.at, 'sent' FROM unnest(\(sent.map(\.uniqueID))::text[], \(sent.map(\.at.timeIntervalSince1970))::float8[])
                        WITH ORDINALITY AS v(u, at, n) JOIN delivery d ON d.unique_id = v.u
                    ORDER BY v.n
                    """, logger: logger)
            }
            try await connection.query("""
                INSERT INTO delivery_stage (unique_id, at, stage)
                SELECT d.unique_id, a.at, 'acknowledged'
                FROM unnest(\(devices)::text[], \(throughs)::int8[], \(ats)::float8[]) AS a(device, through, at)
                JOIN push p ON p.device_id = a.device AND p.sequence <= a.through AND NOT p.held
                JOIN delivery d ON d.unique_id = p.unique_id
                ORDER BY p.sequence
                """, logger: logger)
            try await connection.query("""
                DELETE FROM push p USING unnest(\(devices)::text[], \(throughs)::int8[]) AS a(device, through)
                WHERE p.device_id = a.device AND p.sequence <= a.through AND NOT p.held
                """, logger: logger)
        }
    }

    package func promoteHeld(deviceID: String, now: Date, limit: Int) async throws(GatewayError) -> Int {
        try await transaction("promoting held pushes") { connection, logger in
            try await Self.lockDevices([deviceID], on: connection, logger: logger)
            // In the order they came: when they were accepted. Held pushes lock no device as they
            // are stored, so two batches written at once may take their sequences in either order.
            let held = try await Self.column(connection.query("""
                SELECT sequence FROM push WHERE device_id = \(deviceID) AND held AND expires_at > \(now.timeIntervalSince1970)
                ORDER BY priority DESC, received_at, sequence LIMIT \(limit) FOR UPDATE
                """, logger: logger), as: Int64.self)
            guard !held.isEmpty else { return 0 }
            // Each is written again with a new sequence (the sequence never gives one twice), in the
            // order chosen, all in one statement; then the old rows go.
            let sequences = try await Self.takeSequences(held.count, on: connection, logger: logger)
            try await connection.query("""
                INSERT INTO push (sequence, device_id, token, bundle_identifier, environment, apns_id, push_type, priority, expires_at, collapse_id,
                                  payload, received_at, held, unique_id, channel_id)
                SELECT h.new, p.device_id, p.token, p.bundle_identifier, p.environment, p.apns_id, p.push_type, p.priority, p.expires_at,
                       p.collapse_id, p.payload, p.received_at, FALSE, p.unique_id, p.channel_id
                FROM unnest(\(held)::int8[], \(sequences)::int8[]) AS h(old, new) JOIN push p ON p.sequence = h.old
                """, logger: logger)
            try await connection.query("DELETE FROM push WHERE sequence = ANY(\(held))", logger: logger)
            return held.count
        }
    }

    // MARK: - Broadcast channels

    private typealias ChannelRow = (String, String, String, Bool, String, Double)

    private static func channel(_ row: ChannelRow) -> BroadcastChannel {
        BroadcastChannel(channelID: row.0, bundleIdentifier: row.1, environment: APNs.Environment(rawValue: row.2) ?? .sandbox,
                         settings: APNs.ChannelSettings(storesMostRecent: row.3, pushType: APNs.PushType(rawValue: row.4) ?? .alert),
                         createdAt: Date(timeIntervalSince1970: row.5))
    }

    package func createChannel(_ channel: BroadcastChannel, limit: Int) async throws(GatewayError) {
        try await transaction("creating a channel") { connection, logger in
            // One app's channels are counted and added one transaction at a time, whichever node.
            try await connection.query("SELECT pg_advisory_xact_lock(hashtext(\(channel.bundleIdentifier + " " + channel.environment.rawValue)))",
                                       logger: logger)
            let count = try await Self.column(connection.query("""
                SELECT count(*) FROM broadcast_channel WHERE bundle_identifier = \(channel.bundleIdentifier) AND environment = \(channel.environment.rawValue)
                """, logger: logger), as: Int.self).first ?? 0
            guard count < limit else {
                throw GatewayError(.limitReached, "\(channel.bundleIdentifier) has \(limit) channels in \(channel.environment.rawValue) already.")
            }
            try await connection.query("""
                INSERT INTO broadcast_channel (channel_id, bundle_identifier, environment, stores_most_recent, push_type, created_at)
                VALUES (\(channel.channelID), \(channel.bundleIdentifier), \(channel.environment.rawValue), \(channel.settings.storesMostRecent),
                        \(channel.settings.pushType.rawValue), \(channel.createdAt.timeIntervalSince1970))
                """, logger: logger)
        }
    }

    package func channel(_ channelID: String) async throws(GatewayError) -> BroadcastChannel? {
        try await statement("reading a channel") { connection, logger in
            try await Self.all(connection.query("""
                SELECT channel_id, bundle_identifier, environment, stores_most_recent, push_type, created_at FROM broadcast_channel
                WHERE channel_id = \(channelID)
                """, logger: logger), as: ChannelRow.self).first.map(Self.channel)
        }
    }

    package func deleteChannel(_ channelID: String) async throws(GatewayError) {
        try await changeOne("deleting a channel", "DELETE FROM broadcast_channel WHERE channel_id = \(channelID) RETURNING 1", notFound: "No channel \(channelID).")
    }

    package func channels(of bundleIdentifier: String, environment: APNs.Environment) async throws(GatewayError) -> [String] {
        try await statement("listing channels") { connection, logger in
            try await Self.column(connection.query("""
                SELECT channel_id FROM broadcast_channel WHERE bundle_identifier = \(bundleIdentifier) AND environment = \(environment.rawValue)
                ORDER BY created_at, channel_id
                """, logger: logger), as: String.self)
        }
    }

    package func setSubscribed(_ subscribed: Bool, deviceID: String, bundleIdentifier: String, environment: APNs.Environment, channelID: String,
                               at date: Date) async throws(GatewayError) {
        try await transaction("changing a subscription") { connection, logger in
            guard try await Self.count(connection.query("""
                SELECT 1 FROM broadcast_channel WHERE channel_id = \(channelID) AND bundle_identifier = \(bundleIdentifier)
                AND environment = \(environment.rawValue) FOR SHARE
                """, logger: logger)) == 1 else {
                throw GatewayError(.notFound, "No channel \(channelID) of \(bundleIdentifier) in \(environment.rawValue).")
            }
            if subscribed {
                try await connection.query("""
                    INSERT INTO channel_subscription (channel_id, device_id, subscribed_at) VALUES (\(channelID), \(deviceID), \(date.timeIntervalSince1970))
                    ON CONFLICT DO NOTHING
                    """, logger: logger)
            } else {
                try await connection.query("DELETE FROM channel_subscription WHERE channel_id = \(channelID) AND device_id = \(deviceID)", logger: logger)
            }
        }
    }

    package func enqueue(_ broadcast: Broadcast, linked: Set<String>) async throws(GatewayError) -> [String: Bool] {
        let channel = broadcast.channel
        let limit = Self.nodeSilenceLimit
        let nodeID = self.nodeID
        return try await transaction("storing a broadcast") { connection, logger in
            // The subscribers' rows locked, in one order: their pushes get their sequences as a device push's do.
            let subscribers = try await Self.column(connection.query("""
                SELECT d.device_id FROM channel_subscription s JOIN device d ON d.device_id = s.device_id
                WHERE s.channel_id = \(channel.channelID) AND d.removed_at IS NULL AND NOT d.disabled
                ORDER BY d.device_id FOR UPDATE OF d
                """, logger: logger), as: String.self)
            guard !subscribers.isEmpty else { return [:] }
            let elsewhere = Set(try await Self.column(connection.query("""
                SELECT l.device_id FROM device_link l JOIN gateway_node n ON n.node_id = l.node_id
                WHERE l.device_id = ANY(\(subscribers)) AND n.seen_at > extract(epoch FROM clock_timestamp()) - \(limit)
                """, logger: logger), as: String.self))
            var pushes: [QueuedPush] = []
            pushes.reserveCapacity(subscribers.count)
            for device in subscribers {
                let held = !linked.contains(device) && !elsewhere.contains(device)
                if held, !channel.settings.storesMostRecent { continue }
                var push = QueuedPush(
                    deviceID: device, token: broadcast.token, bundleIdentifier: channel.bundleIdentifier, environment: channel.environment,
                    apnsID: broadcast.requestID, pushType: channel.settings.pushType, priority: broadcast.priority, expiresAt: broadcast.expiresAt,
                    collapseID: nil, payload: broadcast.payload, receivedAt: broadcast.receivedAt)
                push.held = held
                push.channelID = channel.channelID
                pushes.append(push)
            }
            // The most recent message replaces the one still stored for each subscriber.
            if channel.settings.storesMostRecent {
                try await connection.query("DELETE FROM push WHERE channel_id = \(channel.channelID)", logger: logger)
            }
            let stored = try await Self.insert(pushes, on: connection, logger: logger)
            var devices: [String: Bool] = [:]
            for push in stored { devices[push.deviceID] = push.held }
            try await Self.notifyStored(devices, from: nodeID, on: connection, logger: logger)
            return devices
        }
    }

    package func removeExpired(before date: Date) async throws(GatewayError) -> Int {
        try await transaction("removing expired pushes") { connection, logger in
            let at = date.timeIntervalSince1970
            try await connection.query("""
                INSERT INTO delivery_stage (unique_id, at, stage)
                SELECT d.unique_id, p.expires_at, 'expired' FROM push p JOIN delivery d ON d.unique_id = p.unique_id
                WHERE p.expires_at <= \(at) ORDER BY p.sequence
                """, logger: logger)
            return try await Self.count(connection.query("DELETE FROM push WHERE expires_at <= \(at) RETURNING 1", logger: logger))
        }
    }

    package func storedPushCounts() async throws(GatewayError) -> (queued: Int, held: Int) {
        try await statement("counting pushes") { connection, logger in
            let counts = try await Self.all(connection.query(
                "SELECT count(*) FILTER (WHERE NOT held), count(*) FILTER (WHERE held) FROM push", logger: logger), as: (Int, Int).self)
            return (counts.first?.0 ?? 0, counts.first?.1 ?? 0)
        }
    }

    // MARK: - Several nodes

    /// The channel on which nodes hear of the pushes other nodes stored (a node wakes its own links
    /// itself): each notification's payload is the storing node's identifier, then lines of a
    /// device's identifier, and `\theld` when some of its pushes were stored held; or `*` for pushes
    /// stored for many devices (a broadcast), which any device may have.
    static let storedChannel = "unotify_stored_pushes"

    private static func notifyStored(_ pushes: [QueuedPush], from nodeID: String, on connection: PostgresConnection, logger: Logger) async throws {
        var devices: [String: Bool] = [:]
        for push in pushes { devices[push.deviceID, default: false] = devices[push.deviceID, default: false] || push.held }
        try await notifyStored(devices, from: nodeID, on: connection, logger: logger)
    }

    /// Pushes stored for more devices than this wake every link of every node (`*`) instead of naming each.
    static let devicesNamedInNotifications = 1_000

    private static func notifyStored(_ devices: [String: Bool], from nodeID: String, on connection: PostgresConnection, logger: Logger) async throws {
        for notification in storedNotifications(devices, from: nodeID) {
            try await connection.query("SELECT pg_notify(\(storedChannel), \(notification))", logger: logger)
        }
    }

    /// The payloads that tell every node of pushes stored for `devices` (`true`: held).
    private static func storedNotifications(_ devices: [String: Bool], from nodeID: String) -> [String] {
        guard !devices.isEmpty else { return [] }
        guard devices.count <= devicesNamedInNotifications else { return [nodeID + "\n*"] }
        // A notification's payload is under 8000 bytes: the devices go in as many as it takes.
        var notifications: [String] = []
        var lines = [nodeID]
        var size = nodeID.utf8.count + 1
        for (device, held) in devices.sorted(by: { $0.key < $1.key }) {
            let line = held ? device + "\theld" : device
            if size + line.utf8.count + 1 > 7_000 {
                notifications.append(lines.joined(separator: "\n"))
                lines = [nodeID]
                size = nodeID.utf8.count + 1
            }
            lines.append(line)
            size += line.utf8.count + 1
        }
        if lines.count > 1 { notifications.append(lines.joined(separator: "\n")) }
        return notifications
    }

    /// The channel on which nodes hear of unregistered tokens: each notification's payload is lines of tokens.
    static let unregisteredChannel = "unotify_unregistered_tokens"
    /// The channel on which nodes hear of devices linked to another: each notification's payload is
    /// the node's identifier, then lines of devices.
    static let linkedChannel = "unotify_device_links"

    /// How often a node says it runs.
    static let heartbeatInterval: Duration = .seconds(5)
    /// How long after its last word a node's links no longer count (it was killed, or cut off).
    static let nodeSilenceLimit: Double = 15

    /// Listens on ``storedChannel``, ``unregisteredChannel`` and ``linkedChannel`` (a connection of its
    /// own), again after any failure, and says every ``heartbeatInterval`` that this node runs, until
    /// cancelled.
    package func followChanges(_ changed: @escaping @Sendable (GatewayStoreChange) -> Void) async {
        let nodeID = self.nodeID
        await withDiscardingTaskGroup { group in
            group.addTask { await self.beatHeart() }
            while !Task.isCancelled {
                do {
                    try await client.withConnection { connection in
                        try await Self.listen([Self.storedChannel, Self.unregisteredChannel, Self.linkedChannel], on: connection) { channels in
                            // What changed before this listened (at start, or while it was down) is looked for too.
                            changed(.tokensUnregistered(nil))
                            changed(.pushesStored(nil))
                            try await withThrowingTaskGroup(of: Void.self) { listeners in
                                for (channel, notifications) in channels {
                                    listeners.addTask {
                                        for try await notification in notifications {
                                            if let change = Self.change(on: channel, payload: notification.payload, seenBy: nodeID) { changed(change) }
                                        }
                                    }
                                }
                                // A channel that ends ends them all: the connection is gone.
                                try await listeners.next()
                                listeners.cancelAll()
                            }
                        }
                    }
                } catch {
                    guard !Task.isCancelled else { break }
                    logger.warning("lost the database's notifications of other nodes' changes; listening again", metadata: ["error": .string("\(error)")])
                }
                try? await Task.sleep(for: .seconds(1))
            }
            group.cancelAll()
        }
    }

    /// Listens on each of `channels`, then runs `body` with their notifications.
    private static func listen(
        _ channels: ArraySlice<String>, on connection: PostgresConnection, listening: [(String, PostgresNotificationSequence)] = [],
        _ body: @Sendable ([(String, PostgresNotificationSequence)]) async throws -> Void
    ) async throws {
        guard let channel = channels.first else { return try await body(listening) }
        try await connection.listen(on: channel) { notifications in
            try await listen(channels.dropFirst(), on: connection, listening: listening + [(channel, notifications)], body)
        }
    }

    /// What a notification on `channel` says, for the node `nodeID`.
    static func change(on channel: String, payload: String, seenBy nodeID: String) -> GatewayStoreChange? {
        let lines = payload.split(separator: "\n").map(String.init)
        switch channel {
        case storedChannel:
            // The storing node, then what it stored: news only for the other nodes.
            guard let node = lines.first, node != nodeID else { return nil }
            if lines.dropFirst() == ["*"] { return .pushesStored(nil) }
            var devices: [String: Bool] = [:]
            for line in lines.dropFirst() {
                let parts = line.split(separator: "\t")
                devices[String(parts[0])] = parts.count > 1
            }
            return .pushesStored(devices)
        case unregisteredChannel:
            return .tokensUnregistered(lines)
        case linkedChannel:
            // The node that took the links, then their devices: news only for the other nodes.
            guard let node = lines.first, node != nodeID else { return nil }
            return .devicesLinkedElsewhere(Array(lines.dropFirst()))
        default:
            return nil
        }
    }

    /// Says every ``heartbeatInterval`` that this node runs, and forgets what nodes silent for long
    /// left behind (their links) and tokens' buckets long full again.
    private func beatHeart() async {
        let nodeID = self.nodeID
        var beats = 0
        while !Task.isCancelled {
            beats += 1
            // Full buckets are forgotten once a minute: a scan of them all (no index on their time,
            // which every take would write).
            let forgetsBuckets = beats % 12 == 1
            do {
                try await transaction("recording that this node runs", waitsForDisk: false) { connection, logger in
                    try await Self.recordNode(nodeID, on: connection, logger: logger)
                    try await connection.query("""
                        DELETE FROM device_link WHERE node_id IN (SELECT node_id FROM gateway_node WHERE seen_at < extract(epoch FROM clock_timestamp()) - 60)
                        """, logger: logger)
                    try await connection.query("DELETE FROM gateway_node WHERE seen_at < extract(epoch FROM clock_timestamp()) - 86400", logger: logger)
                    // A bucket refills within seconds: one untouched for ten minutes is full, as a missing one.
                    if forgetsBuckets {
                        try await connection.query("""
                            DELETE FROM token_bucket WHERE updated_at < extract(epoch FROM clock_timestamp()) - 600
                            """, logger: logger)
                    }
                }
            } catch {
                logger.warning("could not record that this node runs", metadata: ["error": .string("\(error)")])
            }
            try? await Task.sleep(for: Self.heartbeatInterval)
        }
    }

    /// Says the node runs, by the database's clock (the one clock every node agrees on).
    private static func recordNode(_ nodeID: String, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("""
            INSERT INTO gateway_node (node_id, seen_at) VALUES (\(nodeID), extract(epoch FROM clock_timestamp()))
            ON CONFLICT (node_id) DO UPDATE SET seen_at = EXCLUDED.seen_at
            """, logger: logger)
    }

    package func setLinked(_ devices: [String: Bool]) async throws(GatewayError) {
        let linked = devices.filter(\.value).keys.sorted()
        let unlinked = devices.filter { !$0.value }.keys.sorted()
        let nodeID = self.nodeID
        try await transaction("recording device links", waitsForDisk: false) { connection, logger in
            try await Self.recordNode(nodeID, on: connection, logger: logger)
            if !linked.isEmpty {
                try await connection.query("""
                    INSERT INTO device_link (device_id, node_id, linked_at)
                    SELECT device_id, \(nodeID), extract(epoch FROM clock_timestamp()) FROM unnest(\(linked)::text[]) AS device_id
                    ON CONFLICT (device_id) DO UPDATE SET node_id = EXCLUDED.node_id, linked_at = EXCLUDED.linked_at
                    """, logger: logger)
                // A node still holding a link of one of them closes it: one link per device, whichever node.
                for chunk in stride(from: 0, to: linked.count, by: 200).map({ linked[$0..<min($0 + 200, linked.count)] }) {
                    try await connection.query("SELECT pg_notify(\(Self.linkedChannel), \(([nodeID] + chunk).joined(separator: "\n")))", logger: logger)
                }
            }
            if !unlinked.isEmpty {
                try await connection.query("DELETE FROM device_link WHERE device_id = ANY(\(unlinked)) AND node_id = \(nodeID)", logger: logger)
            }
        }
    }

    /// ``sharedRules(linkedElsewhere:take:at:burst:perSecond:)``'s reading of the links alone: one query
    /// of the links for both.
    package func devicesLinkedElsewhere(_ devices: Set<String>) async throws(GatewayError) -> Set<String> {
        guard !devices.isEmpty else { return [] }
        return try await sharedRules(linkedElsewhere: devices, take: [:], at: Date(), burst: 0, perSecond: 0).elsewhere
    }

    package var isSharedByNodes: Bool { true }

    package func takeFromTokenBuckets(_ counts: [String: Int], at date: Date, burst: Int, perSecond: Double) async throws(GatewayError) -> [String: Int] {
        try await sharedRules(linkedElsewhere: [], take: counts, at: date, burst: burst, perSecond: perSecond).granted
    }

    package func sharedRules(linkedElsewhere devices: Set<String>, take counts: [String: Int], at date: Date, burst: Int, perSecond: Double)
        async throws(GatewayError) -> (elsewhere: Set<String>, granted: [String: Int])
    {
        guard !counts.isEmpty || !devices.isEmpty else { return ([], [:]) }
        let tokens = counts.keys.sorted()
        let asked = tokens.map { Int32(min(counts[$0] ?? 0, burst)) }
        let now = date.timeIntervalSince1970
        let capacity = Double(burst)
        let (nodeID, silence) = (self.nodeID, Self.nodeSilenceLimit)
        return try await statement("reading device links and counting pushes per token") { connection, logger in
            // One statement (``SharedRules``), its own transaction.
            var rows: [(String, Int32)] = []
            let statement = SharedRules(capacity: capacity, now: now, perSecond: perSecond, tokens: tokens, asked: asked,
                                        devices: devices.sorted(), nodeID: nodeID, silence: silence)
            for try await row in try await connection.execute(statement, logger: logger) { rows.append(row) }
            var elsewhere: Set<String> = []
            var granted: [String: Int] = [:]
            for (name, taken) in rows {
                if taken < 0 { elsewhere.insert(name) } else { granted[name] = Int(taken) }
            }
            return (elsewhere, granted)
        }
    }

    // MARK: - Delivery log

    /// The columns of reports, for a statement that reads them with `unnest` (in their order, by
    /// `WITH ORDINALITY`): a report without a detail has an empty one and `has_detail` false.
    private struct ReportColumns {
        var uniqueIDs: [String] = []
        var times: [Double] = []
        var stages: [String] = []
        var details: [String] = []
        var hasDetail: [Bool] = []

        init(_ reports: [DeliveryLog.Report]) {
            for report in reports {
                uniqueIDs.append(report.uniqueID)
                times.append(report.at)
                stages.append(report.stage.rawValue)
                details.append(report.detail.map { String($0.prefix(DeliveryLog.maximumDetailLength)) } ?? "")
                hasDetail.append(report.detail != nil)
            }
        }
    }

    /// Inserts stages of pushes in the log (those of pushes it does not hold are skipped), details
    /// cut to their longest, in one statement.
    private static func insertStages(_ reports: [DeliveryLog.Report], on connection: PostgresConnection, logger: Logger) async throws {
        guard !reports.isEmpty else { return }
        let columns = ReportColumns(reports)
        try await connection.query("""
            INSERT INTO delivery_stage (unique_id, at, stage, detail)
            SELECT d.unique_id, r.at, r.stage, CASE WHEN r.has_detail THEN r.detail END
            FROM unnest(\(columns.uniqueIDs)::text[], \(columns.times)::float8[], \(columns.stages)::text[], \(columns.details)::text[],
                        \(columns.hasDetail)::bool[]) WITH ORDINALITY AS r(unique_id, at, stage, detail, has_detail, n)
            JOIN delivery d ON d.unique_id = r.unique_id
            ORDER BY r.n
            """, logger: logger)
    }

    /// Inserts a device's reports as ``insertStages(_:on:logger:)`` does, in one statement, but only
    /// for the device's own pushes, at most ``DeliveryLog/maximumStagesPerPush`` stages a push, and
    /// none its push has already (the same stage at the same time, in the log or earlier in `reports`).
    private static func insertDeviceReports(_ reports: [DeliveryLog.Report], deviceID: String, on connection: PostgresConnection,
                                            logger: Logger) async throws {
        guard !reports.isEmpty else { return }
        let columns = ReportColumns(reports)
        try await connection.query("""
            WITH r AS (
                SELECT * FROM unnest(\(columns.uniqueIDs)::text[], \(columns.times)::float8[], \(columns.stages)::text[],
                                     \(columns.details)::text[], \(columns.hasDetail)::bool[])
                    WITH ORDINALITY AS r(unique_id, at, stage, detail, has_detail, n)
            ), fresh AS (
                SELECT DISTINCT ON (r.unique_id, r.stage, r.at) r.* FROM r
                JOIN delivery d ON d.unique_id = r.unique_id AND d.device_id = \(deviceID)
                WHERE NOT EXISTS (SELECT 1 FROM delivery_stage s WHERE s.unique_id = r.unique_id AND s.stage = r.stage AND s.at = r.at)
                ORDER BY r.unique_id, r.stage, r.at, r.n
            ), numbered AS (
                SELECT f.*, row_number() OVER (PARTITION BY f.unique_id ORDER BY f.n) AS k,
                       (SELECT count(*) FROM delivery_stage s WHERE s.unique_id = f.unique_id) AS recorded
                FROM fresh f
            )
            INSERT INTO delivery_stage (unique_id, at, stage, detail)
            SELECT unique_id, at, stage, CASE WHEN has_detail THEN detail END FROM numbered
            WHERE recorded + k <= \(DeliveryLog.maximumStagesPerPush)
            ORDER BY n
            """, logger: logger)
    }

    package func recordStages(_ reports: [DeliveryLog.Report]) async throws(GatewayError) {
        guard !reports.isEmpty else { return }
        try await transaction("recording stages") { connection, logger in try await Self.insertStages(reports, on: connection, logger: logger) }
    }

    package func recordDeviceReports(_ reports: [DeliveryLog.Report], from deviceID: String, through: Int64) async throws(GatewayError) {
        // Not waiting for the disk: what a crash of the server takes back is the newest of the log, not a push.
        try await transaction("recording a device's reports", waitsForDisk: false) { connection, logger in
            // The device's row locked: the same reports from two links of one device are recorded once.
            guard let recorded = try await Self.column(connection.query(
                "SELECT reported_through FROM device WHERE device_id = \(deviceID) FOR UPDATE", logger: logger), as: Int64.self).first,
                  through > recorded
            else { return }
            // Only the stages a device reports (and, in the statement, only for its own pushes).
            try await Self.insertDeviceReports(reports.filter(\.stage.isReportedByDevice), deviceID: deviceID, on: connection, logger: logger)
            try await connection.query("UPDATE device SET reported_through = \(through) WHERE device_id = \(deviceID)", logger: logger)
        }
    }

    private typealias DeliveryRow = (String, String, String, String, String, String, String, String, String, Int, Int, String?, Double, Double, Double?, Bool)

    package func deliveryRecords(matching id: String) async throws(GatewayError) -> [DeliveryRecord] {
        try await transaction("reading the delivery log") { connection, logger in
            let lowered = id.lowercased()
            let rows = try await Self.all(connection.query("""
                SELECT unique_id, apns_id, team_id, credential, bundle_identifier, environment, device_id, token, push_type, priority, payload_bytes,
                       collapse_id, expires_at, accepted_at, stored_at, held
                FROM delivery WHERE unique_id = \(lowered) OR apns_id = \(lowered) ORDER BY accepted_at, unique_id LIMIT 100
                """, logger: logger), as: DeliveryRow.self)
            var records: [DeliveryRecord] = []
            for row in rows {
                var entries = [DeliveryLog.Entry(.accepted, at: Date(timeIntervalSince1970: row.13), detail: row.3)]
                if let storedAt = row.14 {
                    entries.append(DeliveryLog.Entry(.stored, at: Date(timeIntervalSince1970: storedAt),
                                                     detail: row.15 ? "held: the device was not linked" : "queued for the linked device"))
                }
                // In the order the gateway learned of them.
                for stage in try await Self.all(connection.query(
                    "SELECT at, stage, detail FROM delivery_stage WHERE unique_id = \(row.0) ORDER BY id", logger: logger), as: (Double, String, String?).self) {
                    guard let kind = DeliveryLog.Stage(rawValue: stage.1) else { continue }
                    entries.append(DeliveryLog.Entry(kind, at: Date(timeIntervalSince1970: stage.0), detail: stage.2))
                }
                records.append(DeliveryRecord(
                    uniqueID: row.0, apnsID: row.1, teamID: row.2, credential: row.3, bundleIdentifier: row.4,
                    environment: APNs.Environment(rawValue: row.5) ?? .sandbox, deviceID: row.6, token: row.7,
                    pushType: APNs.PushType(rawValue: row.8) ?? .alert, priority: row.9, payloadBytes: row.10, collapseID: row.11,
                    expiresAt: Date(timeIntervalSince1970: row.12), stages: entries))
            }
            return records
        }
    }

    package func pruneDeliveryLog(acceptedBefore date: Date, keepingAtMost limit: Int) async throws(GatewayError) -> Int {
        try await transaction("pruning the delivery log") { connection, logger in
            var removed = try await Self.count(connection.query("""
                DELETE FROM delivery WHERE accepted_at < \(date.timeIntervalSince1970)
                AND NOT EXISTS (SELECT 1 FROM push WHERE push.unique_id = delivery.unique_id) RETURNING 1
                """, logger: logger))
            let count = try await Self.column(connection.query("SELECT count(*) FROM delivery", logger: logger), as: Int.self).first ?? 0
            if count > limit {
                removed += try await Self.count(connection.query("""
                    DELETE FROM delivery WHERE unique_id IN (SELECT unique_id FROM delivery ORDER BY accepted_at LIMIT \(count - limit)) RETURNING 1
                    """, logger: logger))
            }
            return removed
        }
    }

    // MARK: - The database's address

    /// The client's configuration from a `postgres://` URL, and where it points, without a password.
    static func configuration(from url: String) throws(GatewayError) -> (PostgresClient.Configuration, String) {
        guard let components = URLComponents(string: url), components.scheme == "postgres" || components.scheme == "postgresql" else {
            throw GatewayError(.invalidArgument, "\"\(url)\" is not a PostgreSQL URL: write postgres://user:password@host:port/database.")
        }
        let database = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        let username = components.user ?? ProcessInfo.processInfo.environment["USER"] ?? "postgres"
        let query = Dictionary((components.queryItems ?? []).map { ($0.name, $0.value ?? "") }) { _, last in last }
        var configuration: PostgresClient.Configuration
        let location: String
        if let socketFolder = query["host"], socketFolder.hasPrefix("/") {
            let port = components.port ?? query["port"].flatMap { Int($0) } ?? 5432
            configuration = PostgresClient.Configuration(unixSocketPath: "\(socketFolder)/.s.PGSQL.\(port)", username: username,
                                                         password: components.password, database: database.isEmpty ? nil : database)
            location = "postgres://\(username)@\(socketFolder):\(port)/\(database)"
        } else {
            let host = components.host ?? "localhost"
            let tls: PostgresClient.Configuration.TLS
            switch query["sslmode"] {
            case "disable": tls = .disable
            case "require", "verify-ca", "verify-full": tls = .require(.makeClientConfiguration())
            default: tls = .prefer(.makeClientConfiguration())
            }
            configuration = PostgresClient.Configuration(host: host, port: components.port ?? 5432, username: username,
                                                         password: components.password, database: database.isEmpty ? nil : database, tls: tls)
            location = "postgres://\(username)@\(host):\(components.port ?? 5432)/\(database)"
        }
        configuration.options.maximumConnections = 8
        configuration.options.connectTimeout = .seconds(3)
        return (configuration, location)
    }
}

/// An operation and its deadline, each in a task: the first to finish answers the caller and cancels
/// the other.
private final class TimeoutRace<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var work: Task<Void, Never>?
        var timer: ClockAlarm?
        var finished = false
    }

    private let state = Mutex(State())

    func start(_ continuation: CheckedContinuation<T, any Error>) {
        state.withLock { $0.continuation = continuation }
    }

    func setWork(_ task: Task<Void, Never>) {
        if state.withLock({ state in state.work = task; return state.finished }) { task.cancel() }
    }

    func setTimer(_ alarm: ClockAlarm) {
        if state.withLock({ state in state.timer = alarm; return state.finished }) { alarm.cancel() }
    }

    func finish(_ result: Result<T, any Error>) {
        let (continuation, work, timer) = state.withLock { state -> (CheckedContinuation<T, any Error>?, Task<Void, Never>?, ClockAlarm?) in
            guard !state.finished else { return (nil, nil, nil) }
            state.finished = true
            defer { state.continuation = nil }
            return (state.continuation, state.work, state.timer)
        }
        work?.cancel()
        timer?.cancel()
        continuation?.resume(with: result)
    }
}

/// Opened once the connection pool runs; those waiting for it go on then.
private final class PoolStarted: Sendable {
    private let state = Mutex<(isOpen: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))

    func wait() async {
        await withCheckedContinuation { continuation in
            let isOpen = state.withLock { state -> Bool in
                if !state.isOpen { state.waiting.append(continuation) }
                return state.isOpen
            }
            if isOpen { continuation.resume() }
        }
    }

    func open() {
        let waiting = state.withLock { state in
            state.isOpen = true
            defer { state.waiting.removeAll() }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }
}

/// A device's pushes after a sequence, unexpired and not held, in order: a prepared statement.
/// Logs and stores pushes that replace nothing and are not dropped, and tells every node, in one
/// statement prepared once per connection (a batch's statement is parsed and planned once, not at
/// each batch): the delivery log's entries, the pushes with sequences taken in their order, and the
/// notifications (sent at its commit). Its rows are the pushes' sequences, in their order.
///
/// Data-modifying parts run once, to their end, whether read or not; `seq` (volatile) is made once;
/// the notifications' count ties them to the result.
private struct StorePushes: PostgresPreparedStatement {
    typealias Row = Int64

    static let sql = """
        WITH v AS MATERIALIZED (
            SELECT * FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::int8[], $10::float8[],
                                 $11::bytea[], $12::float8[], $13::bool[], $14::text[], $15::text[], $16::bool[], $17::text[], $18::text[])
                 WITH ORDINALITY AS v(d, t, b, e, a, pt, p, x, pl, r, h, u, ch, lg, tm, cr, n)
        ),
        logged AS (
            INSERT INTO delivery (unique_id, apns_id, team_id, credential, bundle_identifier, environment, device_id, token, push_type,
                                  priority, payload_bytes, collapse_id, expires_at, accepted_at, stored_at, held)
            SELECT u, a, tm, cr, b, e, d, t, pt, p, octet_length(pl), NULL, x, r, $1, h FROM v WHERE lg
            ON CONFLICT DO NOTHING
        ),
        seq AS (
            SELECT row_number() OVER (ORDER BY s) AS n, s
            FROM (SELECT nextval(pg_get_serial_sequence('push', 'sequence')) AS s FROM generate_series(1, $2::int8)) AS taken
        ),
        stored AS (
            INSERT INTO push (sequence, device_id, token, bundle_identifier, environment, apns_id, push_type, priority, expires_at, collapse_id,
                              payload, received_at, held, unique_id, channel_id)
            SELECT seq.s, d, t, b, e, a, pt, p, x, NULL, pl, r, h, NULLIF(u, ''), NULLIF(ch, '')
            FROM v JOIN seq ON seq.n = v.n
        ),
        told AS (SELECT count(pg_notify('\(PostgresGatewayStore.storedChannel)', m)) AS c FROM unnest($19::text[]) AS m)
        SELECT seq.s FROM seq CROSS JOIN told ORDER BY seq.n
        """

    var pushes: [QueuedPush]
    var now: Double
    var notifications: [String]

    /// Each push once: the delivery log's entry (for those `lg`, logged: a sender and an identifier)
    /// is made of the same values as the stored push.
    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 19)
        bindings.append(now)
        bindings.append(Int64(pushes.count))
        bindings.append(pushes.map(\.deviceID))
        bindings.append(pushes.map(\.token))
        bindings.append(pushes.map(\.bundleIdentifier))
        bindings.append(pushes.map(\.environment.rawValue))
        bindings.append(pushes.map(\.apnsID))
        bindings.append(pushes.map(\.pushType.rawValue))
        bindings.append(pushes.map { Int64($0.priority) })
        bindings.append(pushes.map(\.expiresAt.timeIntervalSince1970))
        bindings.append(pushes.map { ByteBuffer(bytes: $0.payload) })
        bindings.append(pushes.map(\.receivedAt.timeIntervalSince1970))
        bindings.append(pushes.map(\.held))
        bindings.append(pushes.map { $0.uniqueID ?? "" })
        bindings.append(pushes.map { $0.channelID ?? "" })
        bindings.append(pushes.map { $0.sender != nil && $0.uniqueID != nil })
        bindings.append(pushes.map { $0.sender?.teamID ?? "" })
        bindings.append(pushes.map { $0.sender?.credential ?? "" })
        bindings.append(notifications)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        try row.decode(Row.self)
    }
}

/// A batch's reads of what nodes share, in one statement prepared once per connection: each token's
/// take from its bucket (rows `token, taken`), then the devices linked to another running node (rows
/// `device, -1`). A missing bucket is made full less what is taken; an existing one, locked (in the
/// tokens' order: two nodes taking from one bucket take in turn), is refilled for the time since, and
/// gives what it holds of what is asked. Both sides of each SET read the bucket as it was.
private struct SharedRules: PostgresPreparedStatement {
    typealias Row = (String, Int32)

    static let sql = """
        WITH taken AS (
            INSERT INTO token_bucket AS b (token, tokens, updated_at, taken)
            SELECT t, $1::float8 - a, $2::float8, a FROM unnest($4::text[], $5::int4[]) WITH ORDINALITY AS v(t, a, n) ORDER BY n
            ON CONFLICT (token) DO UPDATE SET
                taken = LEAST(EXCLUDED.taken, floor(LEAST($1::float8, b.tokens + GREATEST(0, $2::float8 - b.updated_at) * $3::float8))::int4),
                tokens = LEAST($1::float8, b.tokens + GREATEST(0, $2::float8 - b.updated_at) * $3::float8)
                    - LEAST(EXCLUDED.taken, floor(LEAST($1::float8, b.tokens + GREATEST(0, $2::float8 - b.updated_at) * $3::float8))::int4),
                updated_at = GREATEST(b.updated_at, $2::float8)
            RETURNING token, taken
        )
        SELECT token, taken FROM taken
        UNION ALL
        SELECT l.device_id, -1 FROM device_link l JOIN gateway_node n ON n.node_id = l.node_id
        WHERE l.device_id = ANY($6::text[]) AND l.node_id <> $7::text AND n.seen_at > extract(epoch FROM clock_timestamp()) - $8::float8
        """

    var capacity: Double
    var now: Double
    var perSecond: Double
    var tokens: [String]
    var asked: [Int32]
    var devices: [String]
    var nodeID: String
    var silence: Double

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 8)
        bindings.append(capacity)
        bindings.append(now)
        bindings.append(perSecond)
        bindings.append(tokens)
        bindings.append(asked)
        bindings.append(devices)
        bindings.append(nodeID)
        bindings.append(silence)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        try row.decode(Row.self)
    }
}

private struct ReadPushes: PostgresPreparedStatement {
    typealias Row = (Int64, String, String, String, String, String, String, Int, Double, String?, ByteBuffer, Double, String?)

    static let sql = """
        SELECT sequence, device_id, token, bundle_identifier, environment, apns_id, push_type, priority, expires_at, collapse_id,
               payload, received_at, unique_id
        FROM push WHERE device_id = $1 AND sequence > $2 AND expires_at > $3 AND NOT held
        ORDER BY sequence LIMIT $4
        """

    var deviceID: String
    var after: Int64
    var now: Double
    var limit: Int

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 4)
        bindings.append(deviceID)
        bindings.append(after)
        bindings.append(now)
        bindings.append(limit)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        try row.decode(Row.self)
    }
}

/// A call made at most once, from whichever path gets there first.
private final class OrderedOnce: Sendable {
    private let body: Mutex<(@Sendable () -> Void)?>

    init(_ body: @escaping @Sendable () -> Void) {
        self.body = Mutex(body)
    }

    func call() {
        let body = self.body.withLock { body in
            defer { body = nil }
            return body
        }
        body?()
    }
}
