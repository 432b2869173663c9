package import Foundation
import GRDB
package import SQLiteDurability
package import NotificationCore

/// The gateway's store in one SQLite file (WAL mode, every commit synced but those of
/// acknowledgements and device reports), through GRDB: the embedded default of `unotify gateway`
/// and `unotify serve`.
///
/// The caller creates the file's folder private (0700) and the file 0600 before opening it, as the
/// daemon does for its own.
package final class SQLiteGatewayStore: GatewayStore {
    /// This store's node, as ``ChangeAnnouncement`` names it.
    private let nodeID = UUID().uuidString.lowercased()
    private let database: DatabasePool
    private let checkpointer: BackgroundCheckpointer
    /// The pushes held for devices not linked, by device (not indexed in SQLite).
    private let held = HeldPushes()
    package let path: String

    /// - Parameter busyTimeout: how long a write waits for another process's transaction (the CLI
    ///   writing beside a running gateway) before it fails.
    package init(path: String, busyTimeout: TimeInterval = 10) throws(GatewayError) {
        self.path = path
        checkpointer = BackgroundCheckpointer(path: path)
        var configuration = Configuration()
        configuration.busyMode = .timeout(busyTimeout)
        configuration.foreignKeysEnabled = true
        do {
            database = try DatabasePool(path: path, configuration: configuration)
            // Each commit synced (FULL: durable across a power loss too), and the write-ahead log cut
            // back to 64 MiB after a checkpoint instead of keeping its largest size for good.
            // Its checkpoints run on a connection of their own, outside the writer's commits.
            try database.writeWithoutTransaction { [checkpointer] db in
                try db.execute(sql: "PRAGMA synchronous = FULL")
                try db.execute(sql: "PRAGMA journal_size_limit = \(64 << 20)")
                // The writer's pages: the indexes a push is added to are written at any place (its
                // device's), and with SQLite's default 2 MiB a store of a few hundred thousand pushes
                // read most of those pages back from the file for each batch.
                try db.execute(sql: "PRAGMA cache_size = -\(32 << 10)")
                checkpointer.takeCheckpoints(of: db)
            }
            try Self.migrator.migrate(database)
        } catch {
            throw GatewayError(.databaseUnreadable, "The gateway's database at \(path) cannot be read (\(error)). Nothing was changed.")
        }
    }

    private static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: providers, devices, tokens, queued pushes") { db in
            try db.execute(sql: """
                CREATE TABLE team (
                    teamID TEXT PRIMARY KEY NOT NULL,
                    name TEXT NOT NULL
                );
                CREATE TABLE signingKey (
                    keyID TEXT PRIMARY KEY NOT NULL,
                    teamID TEXT NOT NULL REFERENCES team(teamID) ON DELETE CASCADE,
                    environment TEXT CHECK (environment IN ('sandbox', 'production')),
                    bundleIdentifiers TEXT,
                    publicKey TEXT NOT NULL
                );
                CREATE TABLE app (
                    bundleIdentifier TEXT PRIMARY KEY NOT NULL,
                    teamID TEXT NOT NULL REFERENCES team(teamID) ON DELETE CASCADE
                );
                CREATE TABLE device (
                    deviceID TEXT PRIMARY KEY NOT NULL,
                    secretHash TEXT NOT NULL,
                    createdAt DOUBLE NOT NULL
                );
                CREATE TABLE registration (
                    token TEXT PRIMARY KEY NOT NULL,
                    deviceID TEXT NOT NULL REFERENCES device(deviceID) ON DELETE CASCADE,
                    bundleIdentifier TEXT NOT NULL,
                    environment TEXT NOT NULL CHECK (environment IN ('sandbox', 'production')),
                    registeredAt DOUBLE NOT NULL,
                    unregisteredAt DOUBLE
                );
                CREATE INDEX registration_device ON registration(deviceID, bundleIdentifier, environment);
                CREATE TABLE push (
                    sequence INTEGER PRIMARY KEY AUTOINCREMENT,
                    deviceID TEXT NOT NULL REFERENCES device(deviceID) ON DELETE CASCADE,
                    token TEXT NOT NULL,
                    bundleIdentifier TEXT NOT NULL,
                    environment TEXT NOT NULL CHECK (environment IN ('sandbox', 'production')),
                    apnsID TEXT NOT NULL,
                    pushType TEXT NOT NULL,
                    priority INTEGER NOT NULL,
                    expiresAt DOUBLE NOT NULL,
                    collapseID TEXT,
                    payload BLOB NOT NULL,
                    receivedAt DOUBLE NOT NULL
                );
                CREATE INDEX push_device ON push(deviceID, sequence);
                CREATE INDEX push_collapse ON push(token, collapseID) WHERE collapseID IS NOT NULL;
                CREATE INDEX push_expiry ON push(expiresAt);
                """)
        }
        migrator.registerMigration("v2: removed and disabled devices") { db in
            try db.execute(sql: """
                ALTER TABLE device ADD COLUMN removedAt DOUBLE;
                ALTER TABLE device ADD COLUMN disabled INTEGER NOT NULL DEFAULT 0;
                """)
        }
        migrator.registerMigration("v3: apps that keep only their latest push") { db in
            try db.execute(sql: "ALTER TABLE app ADD COLUMN latestOnly INTEGER NOT NULL DEFAULT 0")
        }
        migrator.registerMigration("v4: pushes held for an offline device") { db in
            try db.execute(sql: """
                ALTER TABLE push ADD COLUMN held INTEGER NOT NULL DEFAULT 0;
                CREATE INDEX push_held ON push(deviceID, priority DESC, sequence) WHERE held;
                """)
        }
        migrator.registerMigration("v5: the delivery log") { db in
            // A logged push's `accepted` and `stored` stages are its row's acceptedAt and storedAt;
            // every later stage is a row of delivery_stage.
            try db.execute(sql: """
                CREATE TABLE delivery (
                    uniqueID TEXT PRIMARY KEY NOT NULL,
                    apnsID TEXT NOT NULL,
                    teamID TEXT NOT NULL,
                    credential TEXT NOT NULL,
                    bundleIdentifier TEXT NOT NULL,
                    environment TEXT NOT NULL CHECK (environment IN ('sandbox', 'production')),
                    deviceID TEXT NOT NULL,
                    token TEXT NOT NULL,
                    pushType TEXT NOT NULL,
                    priority INTEGER NOT NULL,
                    payloadBytes INTEGER NOT NULL,
                    collapseID TEXT,
                    expiresAt DOUBLE NOT NULL,
                    acceptedAt DOUBLE NOT NULL,
                    storedAt DOUBLE,
                    held INTEGER NOT NULL
                ) WITHOUT ROWID;
                CREATE INDEX delivery_apnsID ON delivery(apnsID);
                CREATE INDEX delivery_acceptedAt ON delivery(acceptedAt);
                CREATE TABLE delivery_stage (
                    uniqueID TEXT NOT NULL REFERENCES delivery(uniqueID) ON DELETE CASCADE,
                    at DOUBLE NOT NULL,
                    stage TEXT NOT NULL,
                    detail TEXT
                );
                CREATE INDEX delivery_stage_push ON delivery_stage(uniqueID);
                ALTER TABLE push ADD COLUMN uniqueID TEXT;
                ALTER TABLE device ADD COLUMN reportedThrough INTEGER NOT NULL DEFAULT 0;
                """)
        }
        migrator.registerMigration("v6: broadcast channels") { db in
            try db.execute(sql: """
                CREATE TABLE broadcastChannel (
                    channelID TEXT PRIMARY KEY NOT NULL,
                    bundleIdentifier TEXT NOT NULL,
                    environment TEXT NOT NULL CHECK (environment IN ('sandbox', 'production')),
                    storesMostRecent INTEGER NOT NULL,
                    pushType TEXT NOT NULL,
                    createdAt DOUBLE NOT NULL
                );
                CREATE INDEX broadcastChannel_app ON broadcastChannel(bundleIdentifier, environment, createdAt);
                CREATE TABLE channelSubscription (
                    channelID TEXT NOT NULL REFERENCES broadcastChannel(channelID) ON DELETE CASCADE,
                    deviceID TEXT NOT NULL REFERENCES device(deviceID) ON DELETE CASCADE,
                    subscribedAt DOUBLE NOT NULL,
                    PRIMARY KEY (channelID, deviceID)
                );
                ALTER TABLE push ADD COLUMN channelID TEXT;
                CREATE INDEX push_channel ON push(channelID) WHERE channelID IS NOT NULL;
                """)
        }
        migrator.registerMigration("v7: pushes indexed by device once, held or not") { db in
            // A push is in one of the two device indexes, not both: each is written at a place of
            // its own for every push (devices come in any order), one page more per push at commit.
            try db.execute(sql: """
                DROP INDEX push_device;
                CREATE INDEX push_device ON push(deviceID, sequence) WHERE NOT held;
                """)
        }
        migrator.registerMigration("v8: pushes found by their unique id") { db in
            // For the delivery log's housekeeping: whether an old entry's push is still stored. Unique
            // ids are made in time order, so the index grows at its end.
            try db.execute(sql: "CREATE INDEX push_unique ON push(uniqueID) WHERE uniqueID IS NOT NULL")
        }
        migrator.registerMigration("v9: held pushes indexed in memory") { db in
            // See `HeldPushes`: the index put every held push at its device's place in the file.
            try db.execute(sql: "DROP INDEX push_held")
        }
        migrator.registerMigration("v10: the tries of a push its device did not take") { db in
            try db.execute(sql: "ALTER TABLE push ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0")
        }
        migrator.registerMigration("v11: when each device last held a link") { db in
            try db.execute(sql: "ALTER TABLE device ADD COLUMN lastLinkedAt DOUBLE")
        }
        migrator.registerMigration("v12: changes announced to the running gateway") { db in
            try db.execute(sql: """
                CREATE TABLE gatewayChange (id INTEGER PRIMARY KEY CHECK (id = 1), number INTEGER NOT NULL);
                INSERT INTO gatewayChange (id, number) VALUES (1, 0);
                CREATE TABLE gatewayNode (nodeID TEXT PRIMARY KEY NOT NULL, changeRead INTEGER NOT NULL, seenAt DOUBLE NOT NULL);
                """)
        }
        return migrator
    }

    /// Deletes the device's pushes that match `filter` too (a condition on `push p`, with its
    /// arguments), each logged first with `stage` and `detail`. Its queued pushes are found in the
    /// index `push_device`, its held ones by their sequences in `held` (the rows checked to be the
    /// device's held ones too), and leave `held` with their rows.
    private static func removePushes(of deviceID: String, where filter: String, _ filterArguments: StatementArguments, logging stage: String,
                                     _ detail: String, at date: Double, held: HeldPushes, in db: Database) throws {
        let sets: [(condition: String, arguments: StatementArguments)] = [
            ("p.deviceID = ? AND NOT p.held", [deviceID]),
            ("p.sequence IN (SELECT value FROM json_each(?)) AND p.held AND p.deviceID = ?", [HeldPushes.list(held.sequences(of: deviceID)), deviceID]),
        ]
        for pushes in sets {
            let condition = "\(pushes.condition) AND \(filter)"
            let arguments = pushes.arguments + filterArguments
            try db.cachedStatement(sql: """
                INSERT INTO delivery_stage (uniqueID, at, stage, detail)
                SELECT d.uniqueID, ?, ?, ? FROM push p JOIN delivery d ON d.uniqueID = p.uniqueID WHERE \(condition)
                """).execute(arguments: [date, stage, detail] + arguments)
            held.remove(deleted: try Row.fetchAll(db.cachedStatement(sql: "DELETE FROM push AS p WHERE \(condition) RETURNING sequence, deviceID, held"),
                                                  arguments: arguments))
        }
    }

    private func write<T: Sendable>(_ body: @Sendable @escaping (Database) throws -> T) async throws(GatewayError) -> T {
        do {
            return try await database.writeWithoutTransaction { [held] db in try Self.commit(body, in: db, held: held) }
        } catch {
            throw Self.writeError(error, path: path)
        }
    }

    /// ``write(_:)``'s transaction, its result handed to `completion` on the writer's queue: no task
    /// waits for it.
    private func write<T: Sendable>(_ body: @Sendable @escaping (Database) throws -> T,
                                    completion: @escaping @Sendable (Result<T, GatewayError>) -> Void) {
        database.asyncWriteWithoutTransaction { [held, path] db in
            completion(Result { try Self.commit(body, in: db, held: held) }.mapError { Self.writeError($0, path: path) })
        }
    }

    /// Runs `body` in a transaction committed once it returns.
    private static func commit<T>(_ body: (Database) throws -> T, in db: Database, held: HeldPushes) throws -> T {
        do {
            return try db.committing { try body(db) }
        } catch {
            // What the transaction did to the index of held pushes is undone with its rows.
            held.invalidate()
            throw error
        }
    }

    /// A write's failure as the store's callers hear of it.
    private static func writeError(_ error: any Error, path: String) -> GatewayError {
        error as? GatewayError ?? GatewayError(.storageFailed, "Writing to \(path) failed: \(error).")
    }

    /// A transaction committed without waiting for the disk, for what is safe to lose in a power cut
    /// (see `DatabaseWriter.writeWithoutWaitingForTheDisk(_:)`).
    private func writeUnsynced(_ body: @Sendable @escaping (Database) throws -> Void) async throws(GatewayError) {
        do {
            try await database.writeWithoutWaitingForTheDisk(body)
        } catch {
            throw Self.writeError(error, path: path)
        }
    }

    private func read<T: Sendable>(_ body: @Sendable @escaping (Database) throws -> T) async throws(GatewayError) -> T {
        do {
            return try await database.read(body)
        } catch let error as GatewayError {
            throw error
        } catch {
            throw GatewayError(.storageFailed, "Reading \(path) failed: \(error).")
        }
    }

    // MARK: - Providers

    package func addTeam(_ teamID: String, name: String) async throws(GatewayError) {
        try await write { db in
            guard try Int.fetchOne(db, sql: "SELECT 1 FROM team WHERE teamID = ?", arguments: [teamID]) == nil else {
                throw GatewayError(.alreadyExists, "A team \(teamID) exists already.")
            }
            try db.execute(sql: "INSERT INTO team (teamID, name) VALUES (?, ?)", arguments: [teamID, name])
        }
    }

    package func teams() async throws(GatewayError) -> [(teamID: String, name: String)] {
        try await read { db in
            try Row.fetchAll(db, sql: "SELECT teamID, name FROM team ORDER BY teamID").map { ($0["teamID"] as String, $0["name"] as String) }
        }
    }

    package func addKey(_ key: StoredKey) async throws(GatewayError) {
        try await write { db in
            guard try Int.fetchOne(db, sql: "SELECT 1 FROM team WHERE teamID = ?", arguments: [key.teamID]) != nil else {
                throw GatewayError(.notFound, "No team \(key.teamID). Add it first with `unotify gateway teams add`.")
            }
            guard try Int.fetchOne(db, sql: "SELECT 1 FROM signingKey WHERE keyID = ?", arguments: [key.keyID]) == nil else {
                throw GatewayError(.alreadyExists, "A key \(key.keyID) exists already.")
            }
            try db.execute(
                sql: "INSERT INTO signingKey (keyID, teamID, environment, bundleIdentifiers, publicKey) VALUES (?, ?, ?, ?, ?)",
                arguments: [key.keyID, key.teamID, key.environment?.rawValue, key.bundleIdentifiers.map { $0.sorted().joined(separator: " ") }, key.publicKeyPEM]
            )
        }
    }

    package func removeKey(_ keyID: String) async throws(GatewayError) {
        try await write { db in
            try db.execute(sql: "DELETE FROM signingKey WHERE keyID = ?", arguments: [keyID])
            guard db.changesCount == 1 else { throw GatewayError(.notFound, "No key \(keyID).") }
        }
    }

    package func addApp(_ bundleIdentifier: String, team teamID: String) async throws(GatewayError) {
        try await write { db in
            guard try Int.fetchOne(db, sql: "SELECT 1 FROM team WHERE teamID = ?", arguments: [teamID]) != nil else {
                throw GatewayError(.notFound, "No team \(teamID). Add it first with `unotify gateway teams add`.")
            }
            if let owner = try String.fetchOne(db, sql: "SELECT teamID FROM app WHERE bundleIdentifier = ?", arguments: [bundleIdentifier]) {
                throw GatewayError(.alreadyExists, "\(bundleIdentifier) belongs to team \(owner) already.")
            }
            try db.execute(sql: "INSERT INTO app (bundleIdentifier, teamID) VALUES (?, ?)", arguments: [bundleIdentifier, teamID])
        }
    }

    package func removeApp(_ bundleIdentifier: String) async throws(GatewayError) {
        try await write { db in
            try db.execute(sql: "DELETE FROM app WHERE bundleIdentifier = ?", arguments: [bundleIdentifier])
            guard db.changesCount == 1 else { throw GatewayError(.notFound, "No app \(bundleIdentifier).") }
        }
    }

    package func setKeepsLatestOnly(_ bundleIdentifier: String, _ latestOnly: Bool) async throws(GatewayError) {
        try await write { db in
            try db.execute(sql: "UPDATE app SET latestOnly = ? WHERE bundleIdentifier = ?", arguments: [latestOnly, bundleIdentifier])
            guard db.changesCount == 1 else { throw GatewayError(.notFound, "No app \(bundleIdentifier).") }
        }
    }

    package func appsKeepingLatestOnly() async throws(GatewayError) -> Set<String> {
        try await read { db in Set(try String.fetchAll(db, sql: "SELECT bundleIdentifier FROM app WHERE latestOnly != 0")) }
    }

    package func providers() async throws(GatewayError) -> (keys: [StoredKey], appsByTeam: [String: Set<String>]) {
        try await read { db in
            let keys = try Row.fetchAll(db, sql: "SELECT * FROM signingKey ORDER BY keyID").map { row in
                StoredKey(
                    keyID: row["keyID"], teamID: row["teamID"],
                    environment: (row["environment"] as String?).flatMap(APNs.Environment.init(rawValue:)),
                    bundleIdentifiers: (row["bundleIdentifiers"] as String?).map { Set($0.split(separator: " ").map(String.init)) },
                    publicKeyPEM: row["publicKey"]
                )
            }
            var apps: [String: Set<String>] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT bundleIdentifier, teamID FROM app") {
                apps[row["teamID"], default: []].insert(row["bundleIdentifier"])
            }
            return (keys, apps)
        }
    }

    // MARK: - Devices and tokens

    package func addDevice(_ deviceID: String, secretHash: String, at date: Date) async throws(GatewayError) {
        try await write { db in
            guard try Int.fetchOne(db, sql: "SELECT 1 FROM device WHERE deviceID = ?", arguments: [deviceID]) == nil else {
                throw GatewayError(.alreadyExists, "A device \(deviceID) exists already.")
            }
            try db.execute(sql: "INSERT INTO device (deviceID, secretHash, createdAt) VALUES (?, ?, ?)",
                           arguments: [deviceID, secretHash, date.timeIntervalSince1970])
        }
    }

    package func deviceSecretHash(_ deviceID: String) async throws(GatewayError) -> String? {
        try await read { db in
            try String.fetchOne(db, sql: "SELECT secretHash FROM device WHERE deviceID = ? AND removedAt IS NULL", arguments: [deviceID])
        }
    }

    package func removeDevice(_ deviceID: String, at date: Date) async throws(GatewayError) {
        try await write { [held] db in
            try held.prepare(db)
            try db.execute(sql: "UPDATE device SET removedAt = ? WHERE deviceID = ? AND removedAt IS NULL", arguments: [date.timeIntervalSince1970, deviceID])
            guard db.changesCount == 1 else { throw GatewayError(.notFound, "No device \(deviceID), or it was removed already.") }
            try Self.removePushes(of: deviceID, where: "TRUE", [], logging: "dropped", "the device was removed", at: date.timeIntervalSince1970,
                                  held: held, in: db)
        }
    }

    package func setDeviceDisabled(_ deviceID: String, _ disabled: Bool) async throws(GatewayError) {
        try await write { db in
            try db.execute(sql: "UPDATE device SET disabled = ? WHERE deviceID = ? AND removedAt IS NULL", arguments: [disabled, deviceID])
            guard db.changesCount == 1 else { throw GatewayError(.notFound, "No device \(deviceID).") }
        }
    }

    package func deviceStandings() async throws(GatewayError) -> [String: DeviceStanding] {
        try await read { db in
            let rows = try Row.fetchAll(db, sql: "SELECT deviceID, removedAt, disabled FROM device WHERE removedAt IS NOT NULL OR disabled != 0")
            return Dictionary(uniqueKeysWithValues: rows.map { row in
                (row["deviceID"] as String, DeviceStanding(removedAt: (row["removedAt"] as Double?).map(Date.init(timeIntervalSince1970:)),
                                                           isDisabled: row["disabled"] as Bool))
            })
        }
    }

    package func register(_ registration: Registration) async throws(GatewayError) -> Registration {
        try await write { db in
            guard try Int.fetchOne(db, sql: "SELECT 1 FROM device WHERE deviceID = ?", arguments: [registration.deviceID]) != nil else {
                throw GatewayError(.notFound, "No device \(registration.deviceID).")
            }
            if let row = try Row.fetchOne(db, sql: """
                SELECT * FROM registration WHERE deviceID = ? AND bundleIdentifier = ? AND environment = ? AND unregisteredAt IS NULL
                """, arguments: [registration.deviceID, registration.bundleIdentifier, registration.environment.rawValue]) {
                return Self.registration(row)
            }
            try db.execute(sql: """
                INSERT INTO registration (token, deviceID, bundleIdentifier, environment, registeredAt) VALUES (?, ?, ?, ?, ?)
                """, arguments: [registration.token, registration.deviceID, registration.bundleIdentifier, registration.environment.rawValue,
                                 registration.registeredAt.timeIntervalSince1970])
            var stored = registration
            stored.unregisteredAt = nil
            return stored
        }
    }

    package func registrations(tokens: [String]) async throws(GatewayError) -> [String: Registration] {
        guard !tokens.isEmpty else { return [:] }
        // One statement for any number of tokens: they are bound as one JSON array.
        let list = String(decoding: (try? JSONEncoder().encode(tokens)) ?? Data("[]".utf8), as: UTF8.self)
        return try await read { db in
            let rows = try Row.fetchAll(db.cachedStatement(sql: """
                SELECT r.*, d.lastLinkedAt FROM registration r LEFT JOIN device d ON d.deviceID = r.deviceID
                WHERE r.token IN (SELECT value FROM json_each(?))
                """), arguments: [list])
            return Dictionary(rows.map { row in let registration = Self.registration(row); return (registration.token, registration) },
                              uniquingKeysWith: { first, _ in first })
        }
    }

    package func unregister(deviceID: String, bundleIdentifier: String, at date: Date, because reason: String) async throws(GatewayError) {
        try await write { [held] db in
            try held.prepare(db)
            try db.execute(sql: """
                UPDATE registration SET unregisteredAt = ? WHERE deviceID = ? AND bundleIdentifier = ? AND unregisteredAt IS NULL
                """, arguments: [date.timeIntervalSince1970, deviceID, bundleIdentifier])
            // What was queued for the app will not be delivered.
            try Self.removePushes(of: deviceID, where: "p.bundleIdentifier = ?", [bundleIdentifier], logging: "dropped", reason,
                                  at: date.timeIntervalSince1970, held: held, in: db)
        }
    }

    package func registeredApps(of deviceID: String) async throws(GatewayError) -> Set<String> {
        try await read { db in
            Set(try String.fetchAll(db, sql: "SELECT DISTINCT bundleIdentifier FROM registration WHERE deviceID = ? AND unregisteredAt IS NULL",
                                    arguments: [deviceID]))
        }
    }

    private static func registration(_ row: Row) -> Registration {
        Registration(
            token: row["token"], deviceID: row["deviceID"], bundleIdentifier: row["bundleIdentifier"],
            environment: APNs.Environment(rawValue: row["environment"]) ?? .sandbox,
            registeredAt: Date(timeIntervalSince1970: row["registeredAt"]),
            unregisteredAt: (row["unregisteredAt"] as Double?).map(Date.init(timeIntervalSince1970:)),
            deviceLastLinkedAt: row.hasColumn("lastLinkedAt") ? (row["lastLinkedAt"] as Double?).map(Date.init(timeIntervalSince1970:)) : nil
        )
    }

    // MARK: - Changes announced

    package func announceChange() async throws(GatewayError) -> Int64 {
        try await write { db in
            try db.execute(sql: "UPDATE gatewayChange SET number = number + 1 WHERE id = 1")
            return try Int64.fetchOne(db, sql: "SELECT number FROM gatewayChange WHERE id = 1") ?? 0
        }
    }

    package func changeNumber() async throws(GatewayError) -> Int64 {
        try await read { db in try Int64.fetchOne(db.cachedStatement(sql: "SELECT number FROM gatewayChange WHERE id = 1")) ?? 0 }
    }

    package func noteChangeRead(_ number: Int64) async throws(GatewayError) {
        let nodeID = self.nodeID
        try await write { db in
            try db.execute(sql: """
                INSERT INTO gatewayNode (nodeID, changeRead, seenAt) VALUES (?, ?, ?)
                ON CONFLICT (nodeID) DO UPDATE SET changeRead = max(changeRead, excluded.changeRead), seenAt = excluded.seenAt
                """, arguments: [nodeID, number, Date().timeIntervalSince1970])
            try db.execute(sql: "DELETE FROM gatewayNode WHERE seenAt < ?", arguments: [Date().timeIntervalSince1970 - 86_400])
        }
    }

    package func nodesBehind(_ number: Int64) async throws(GatewayError) -> Int {
        let nodeID = self.nodeID
        return try await read { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM gatewayNode WHERE nodeID != ? AND seenAt > ? AND changeRead < ?",
                             arguments: [nodeID, Date().timeIntervalSince1970 - Self.liveness, number]) ?? 0
        }
    }

    package func leave() async {
        let nodeID = self.nodeID
        _ = try? await write { db in try db.execute(sql: "DELETE FROM gatewayNode WHERE nodeID = ?", arguments: [nodeID]) }
    }

    package func noteLinked(_ deviceIDs: [String], at date: Date) async throws(GatewayError) {
        guard !deviceIDs.isEmpty else { return }
        let list = String(decoding: (try? JSONEncoder().encode(deviceIDs)) ?? Data("[]".utf8), as: UTF8.self)
        try await write { db in
            try db.execute(sql: "UPDATE device SET lastLinkedAt = ? WHERE deviceID IN (SELECT value FROM json_each(?))",
                           arguments: [date.timeIntervalSince1970, list])
        }
    }

    // MARK: - Pushes

    package func enqueue(_ pushes: [QueuedPush], at date: Date) async throws(GatewayError) -> [QueuedPush] {
        guard !pushes.isEmpty else { return [] }
        return try await write { [held] db in try Self.enqueue(pushes, at: date.timeIntervalSince1970, held: held, in: db) }
    }

    /// Stores pushes as ``enqueue(_:at:)`` does, and hands the result to `completion` on the writer's
    /// queue once the transaction is durable: no task waits for it, so the core's batches go from a
    /// provider's connection to the writer and on to the device links without a hop through the
    /// concurrency pool (each hop is a wait for a core under load).
    package func enqueue(_ pushes: [QueuedPush], at date: Date, tasks: OwnedTasks,
                         completion: @escaping @Sendable (Result<[QueuedPush], GatewayError>) -> Void) {
        guard !pushes.isEmpty else { return completion(.success([])) }
        write({ [held] db in try Self.enqueue(pushes, at: date.timeIntervalSince1970, held: held, in: db) }, completion: completion)
    }

    /// The work of ``enqueue(_:at:)``, in the writer's transaction.
    private static func enqueue(_ pushes: [QueuedPush], at now: Double, held: HeldPushes, in db: Database) throws -> [QueuedPush] {
        try held.prepare(db)
        let collapse = try db.cachedStatement(sql: "DELETE FROM push WHERE token = ? AND collapseID = ? RETURNING sequence, deviceID, held")
        let logCollapse = try db.cachedStatement(sql: """
            INSERT INTO delivery_stage (uniqueID, at, stage, detail)
            SELECT d.uniqueID, ?, 'collapsed', ? FROM push p JOIN delivery d ON d.uniqueID = p.uniqueID WHERE p.token = ? AND p.collapseID = ?
            """)
        let insert = try db.cachedStatement(sql: Self.insertPushSQL)
        let log = try db.cachedStatement(sql: Self.insertDeliveryEntrySQL)
        let logDrop = try db.cachedStatement(sql: "INSERT INTO delivery_stage (uniqueID, at, stage, detail) VALUES (?, ?, 'dropped', ?)")
        var stored: [QueuedPush] = []
        stored.reserveCapacity(pushes.count)
        for var push in pushes {
            if let sender = push.sender, let uniqueID = push.uniqueID {
                var row = BoundStatement(log)
                Self.bindDeliveryEntry(of: push, uniqueID: uniqueID, sender: sender, storedAt: push.droppedBecause == nil ? now : nil, to: &row)
                try row.run()
                if let reason = push.droppedBecause { try logDrop.execute(arguments: [uniqueID, now, reason]) }
            }
            guard push.droppedBecause == nil else { continue }
            if push.replacesQueued {
                // The token's pushes: one device's, found among its pushes.
                try Self.removePushes(of: push.deviceID, where: "p.token = ?", [push.token], logging: "collapsed",
                                      "replaced by \(push.apnsID): the app keeps only its latest push", at: now, held: held, in: db)
            } else if let collapseID = push.collapseID {
                try logCollapse.execute(arguments: [now, "replaced by \(push.apnsID), with the same collapse id", push.token, collapseID])
                held.remove(deleted: try Row.fetchAll(collapse, arguments: [push.token, collapseID]))
            }
            var row = BoundStatement(insert)
            Self.bindPush(push, to: &row)
            try row.run()
            push.sequence = db.lastInsertedRowID
            if push.held { held.add(push.sequence, priority: push.priority, device: push.deviceID) }
            stored.append(push)
        }
        return stored
    }

    /// A push's row, as ``enqueue(_:at:)`` writes it (`GatewayBenchmarks store` writes the same with
    /// SQLite alone).
    package static let insertPushSQL = """
        INSERT INTO push (deviceID, token, bundleIdentifier, environment, apnsID, pushType, priority, expiresAt, collapseID, payload, receivedAt, held, uniqueID)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """

    /// A push's delivery-log entry, its `accepted` and `stored` stages.
    package static let insertDeliveryEntrySQL = """
        INSERT OR IGNORE INTO delivery (uniqueID, apnsID, teamID, credential, bundleIdentifier, environment, deviceID, token, pushType, priority,
                                        payloadBytes, collapseID, expiresAt, acceptedAt, storedAt, held)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """

    /// Binds ``insertPushSQL``'s values.
    package static func bindPush(_ push: QueuedPush, to row: inout BoundStatement) {
        row.bind(push.deviceID)
        row.bind(push.token)
        row.bind(push.bundleIdentifier)
        row.bind(push.environment.rawValue)
        row.bind(push.apnsID)
        row.bind(push.pushType.rawValue)
        row.bind(push.priority)
        row.bind(push.expiresAt.timeIntervalSince1970)
        row.bind(push.collapseID)
        row.bind(push.payload)
        row.bind(push.receivedAt.timeIntervalSince1970)
        row.bind(push.held)
        row.bind(push.uniqueID)
    }

    /// Binds ``insertDeliveryEntrySQL``'s values; `storedAt` is nil for a push accepted and dropped.
    package static func bindDeliveryEntry(of push: QueuedPush, uniqueID: String, sender: QueuedPush.Sender, storedAt: Double?,
                                          to row: inout BoundStatement) {
        row.bind(uniqueID)
        row.bind(push.apnsID)
        row.bind(sender.teamID)
        row.bind(sender.credential)
        row.bind(push.bundleIdentifier)
        row.bind(push.environment.rawValue)
        row.bind(push.deviceID)
        row.bind(push.token)
        row.bind(push.pushType.rawValue)
        row.bind(push.priority)
        row.bind(push.payload.count)
        row.bind(push.collapseID)
        row.bind(push.expiresAt.timeIntervalSince1970)
        row.bind(push.receivedAt.timeIntervalSince1970)
        row.bind(storedAt)
        row.bind(push.held)
    }

    package func pushes(for deviceID: String, after sequence: Int64, now: Date, limit: Int) async throws(GatewayError) -> [QueuedPush] {
        try await read { db in
            try Row.fetchAll(db.cachedStatement(sql: """
                SELECT * FROM push WHERE deviceID = ? AND sequence > ? AND expiresAt > ? AND NOT held ORDER BY sequence LIMIT ?
                """), arguments: [deviceID, sequence, now.timeIntervalSince1970, limit]).map { row in
                var push = QueuedPush(
                    sequence: row["sequence"], deviceID: row["deviceID"], token: row["token"], bundleIdentifier: row["bundleIdentifier"],
                    environment: APNs.Environment(rawValue: row["environment"]) ?? .sandbox, apnsID: row["apnsID"], pushType: APNs.PushType(rawValue: row["pushType"]) ?? .alert, priority: row["priority"],
                    expiresAt: Date(timeIntervalSince1970: row["expiresAt"]), collapseID: row["collapseID"],
                    payload: Array(row["payload"] as Data), receivedAt: Date(timeIntervalSince1970: row["receivedAt"])
                )
                push.uniqueID = row["uniqueID"]
                return push
            }
        }
    }

    package func noteNotTaken(deviceID: String, sequence: Int64, reason: String, limit: Int, at date: Date) async throws(GatewayError) -> Bool {
        try await write { [held] db in
            try held.prepare(db)
            guard let attempts = try Int.fetchOne(db, sql: "UPDATE push SET attempts = attempts + 1 WHERE deviceID = ? AND sequence = ? RETURNING attempts",
                                                  arguments: [deviceID, sequence]),
                  attempts >= limit else { return false }
            try Self.removePushes(of: deviceID, where: "p.sequence = ?", [sequence], logging: "dropped",
                                  "the device did not take it in \(attempts) tries: \(reason)", at: date.timeIntervalSince1970, held: held, in: db)
            return true
        }
    }

    package func acknowledge(_ acknowledgements: [Acknowledgement]) async throws(GatewayError) {
        let merged = Acknowledgement.merged(acknowledgements)
        guard !merged.isEmpty else { return }
        // Not synced: pushes acknowledged and back after a power cut are sent again, and the device
        // recognizes them by their sequence.
        try await writeUnsynced { db in
            let logAcknowledged = try db.cachedStatement(sql: """
                INSERT INTO delivery_stage (uniqueID, at, stage)
                SELECT d.uniqueID, ?, 'acknowledged' FROM push p JOIN delivery d ON d.uniqueID = p.uniqueID
                WHERE p.deviceID = ? AND p.sequence <= ? AND NOT p.held
                """)
            let remove = try db.cachedStatement(sql: "DELETE FROM push WHERE deviceID = ? AND sequence <= ? AND NOT held")
            for acknowledgement in merged {
                try Self.insertStages(db, acknowledgement.sent.map { DeliveryLog.Report(uniqueID: $0.uniqueID, stage: .sent, at: $0.at) })
                try logAcknowledged.execute(arguments: [acknowledgement.at.timeIntervalSince1970, acknowledgement.deviceID, acknowledgement.through])
                try remove.execute(arguments: [acknowledgement.deviceID, acknowledgement.through])
            }
        }
    }

    package func promoteHeld(deviceID: String, now: Date, limit: Int) async throws(GatewayError) -> Int {
        try await write { [held] db in
            try held.prepare(db)
            // Each is written again with a new sequence (the table's AUTOINCREMENT never gives one
            // twice), in the order chosen; an expired one stays held until expired pushes are removed.
            let copy = try db.cachedStatement(sql: """
                INSERT INTO push (deviceID, token, bundleIdentifier, environment, apnsID, pushType, priority, expiresAt, collapseID, payload, receivedAt, held,
                                  uniqueID, channelID)
                SELECT deviceID, token, bundleIdentifier, environment, apnsID, pushType, priority, expiresAt, collapseID, payload, receivedAt, 0,
                       uniqueID, channelID
                FROM push WHERE sequence = ? AND held AND expiresAt > ?
                """)
            let remove = try db.cachedStatement(sql: "DELETE FROM push WHERE sequence = ?")
            var promoted: Set<Int64> = []
            for sequence in held.sequences(of: deviceID) where promoted.count < limit {
                try copy.execute(arguments: [sequence, now.timeIntervalSince1970])
                guard db.changesCount == 1 else { continue }
                try remove.execute(arguments: [sequence])
                promoted.insert(sequence)
            }
            held.remove(promoted, of: deviceID)
            return promoted.count
        }
    }

    // MARK: - Broadcast channels

    package func createChannel(_ channel: BroadcastChannel, limit: Int) async throws(GatewayError) {
        try await write { db in
            let count = try Int.fetchOne(db, sql: "SELECT count(*) FROM broadcastChannel WHERE bundleIdentifier = ? AND environment = ?",
                                         arguments: [channel.bundleIdentifier, channel.environment.rawValue]) ?? 0
            guard count < limit else {
                throw GatewayError(.limitReached, "\(channel.bundleIdentifier) has \(limit) channels in \(channel.environment.rawValue) already.")
            }
            try db.execute(sql: """
                INSERT INTO broadcastChannel (channelID, bundleIdentifier, environment, storesMostRecent, pushType, createdAt) VALUES (?, ?, ?, ?, ?, ?)
                """, arguments: [channel.channelID, channel.bundleIdentifier, channel.environment.rawValue, channel.settings.storesMostRecent,
                                 channel.settings.pushType.rawValue, channel.createdAt.timeIntervalSince1970])
        }
    }

    package func channel(_ channelID: String) async throws(GatewayError) -> BroadcastChannel? {
        try await read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM broadcastChannel WHERE channelID = ?", arguments: [channelID]).map { row in
                BroadcastChannel(
                    channelID: row["channelID"], bundleIdentifier: row["bundleIdentifier"],
                    environment: APNs.Environment(rawValue: row["environment"]) ?? .sandbox,
                    settings: APNs.ChannelSettings(storesMostRecent: row["storesMostRecent"], pushType: APNs.PushType(rawValue: row["pushType"]) ?? .alert),
                    createdAt: Date(timeIntervalSince1970: row["createdAt"]))
            }
        }
    }

    package func deleteChannel(_ channelID: String) async throws(GatewayError) {
        try await write { db in
            try db.execute(sql: "DELETE FROM broadcastChannel WHERE channelID = ?", arguments: [channelID])
            guard db.changesCount == 1 else { throw GatewayError(.notFound, "No channel \(channelID).") }
        }
    }

    package func channels(of bundleIdentifier: String, environment: APNs.Environment) async throws(GatewayError) -> [String] {
        try await read { db in
            try String.fetchAll(db, sql: """
                SELECT channelID FROM broadcastChannel WHERE bundleIdentifier = ? AND environment = ? ORDER BY createdAt, channelID
                """, arguments: [bundleIdentifier, environment.rawValue])
        }
    }

    package func setSubscribed(_ subscribed: Bool, deviceID: String, bundleIdentifier: String, environment: APNs.Environment, channelID: String,
                               at date: Date) async throws(GatewayError) {
        try await write { db in
            guard try Int.fetchOne(db, sql: "SELECT 1 FROM broadcastChannel WHERE channelID = ? AND bundleIdentifier = ? AND environment = ?",
                                   arguments: [channelID, bundleIdentifier, environment.rawValue]) != nil else {
                throw GatewayError(.notFound, "No channel \(channelID) of \(bundleIdentifier) in \(environment.rawValue).")
            }
            if subscribed {
                try db.execute(sql: "INSERT OR IGNORE INTO channelSubscription (channelID, deviceID, subscribedAt) VALUES (?, ?, ?)",
                               arguments: [channelID, deviceID, date.timeIntervalSince1970])
            } else {
                try db.execute(sql: "DELETE FROM channelSubscription WHERE channelID = ? AND deviceID = ?", arguments: [channelID, deviceID])
            }
        }
    }

    package func enqueue(_ broadcast: Broadcast, linked: Set<String>) async throws(GatewayError) -> [String: Bool] {
        let channel = broadcast.channel
        return try await write { [held] db in
            try held.prepare(db)
            let subscribers = try String.fetchAll(db, sql: """
                SELECT s.deviceID FROM channelSubscription s JOIN device d ON d.deviceID = s.deviceID
                WHERE s.channelID = ? AND d.removedAt IS NULL AND NOT d.disabled ORDER BY s.deviceID
                """, arguments: [channel.channelID])
            var stored: [String: Bool] = [:]
            for device in subscribers {
                let held = !linked.contains(device)
                if held, !channel.settings.storesMostRecent { continue }
                stored[device] = held
            }
            // The most recent message replaces the one still stored for each subscriber.
            if channel.settings.storesMostRecent {
                held.remove(deleted: try Row.fetchAll(db, sql: "DELETE FROM push WHERE channelID = ? RETURNING sequence, deviceID, held",
                                                      arguments: [channel.channelID]))
            }
            let insert = try db.cachedStatement(sql: """
                INSERT INTO push (deviceID, token, bundleIdentifier, environment, apnsID, pushType, priority, expiresAt, collapseID, payload, receivedAt,
                                  held, channelID)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?, ?, ?)
                """)
            let payload = Data(broadcast.payload)
            for (device, held) in stored.sorted(by: { $0.key < $1.key }) {
                try insert.execute(arguments: [
                    device, broadcast.token, channel.bundleIdentifier, channel.environment.rawValue, broadcast.requestID, channel.settings.pushType.rawValue,
                    broadcast.priority, broadcast.expiresAt.timeIntervalSince1970, payload, broadcast.receivedAt.timeIntervalSince1970, held,
                    channel.channelID,
                ])
                if held { self.held.add(db.lastInsertedRowID, priority: broadcast.priority, device: device) }
            }
            return stored
        }
    }

    package func removeExpired(before date: Date) async throws(GatewayError) -> Int {
        try await write { [held] db in
            try held.prepare(db)
            try db.execute(sql: """
                INSERT INTO delivery_stage (uniqueID, at, stage)
                SELECT d.uniqueID, p.expiresAt, 'expired' FROM push p JOIN delivery d ON d.uniqueID = p.uniqueID WHERE p.expiresAt <= ?
                """, arguments: [date.timeIntervalSince1970])
            let removed = try Row.fetchAll(db, sql: "DELETE FROM push WHERE expiresAt <= ? RETURNING sequence, deviceID, held",
                                           arguments: [date.timeIntervalSince1970])
            held.remove(deleted: removed)
            return removed.count
        }
    }

    package func storedPushCounts() async throws(GatewayError) -> (queued: Int, held: Int) {
        let heldCount = held.count
        return try await read { db in
            // Counted on the expiry index, not the rows; the held ones in memory (or on the rows, before
            // the store's first write needs them).
            let all = try Int.fetchOne(db, sql: "SELECT count(*) FROM push INDEXED BY push_expiry") ?? 0
            let held = try heldCount ?? Int.fetchOne(db, sql: "SELECT count(*) FROM push WHERE held") ?? 0
            return (all - held, held)
        }
    }

    // MARK: - Delivery log

    /// Inserts stages of pushes in the log (others are skipped), details cut to their longest.
    private static func insertStages(_ db: Database, _ reports: [DeliveryLog.Report]) throws {
        guard !reports.isEmpty else { return }
        let insert = try db.cachedStatement(sql: """
            INSERT INTO delivery_stage (uniqueID, at, stage, detail) SELECT uniqueID, ?, ?, ? FROM delivery WHERE uniqueID = ?
            """)
        for report in reports {
            let detail = report.detail.map { String($0.prefix(DeliveryLog.maximumDetailLength)) }
            try insert.execute(arguments: [report.at, report.stage.rawValue, detail, report.uniqueID])
        }
    }

    package func recordStages(_ reports: [DeliveryLog.Report]) async throws(GatewayError) {
        guard !reports.isEmpty else { return }
        try await write { db in try Self.insertStages(db, reports) }
    }

    package func recordDeviceReports(_ reports: [DeliveryLog.Report], from deviceID: String, through: Int64) async throws(GatewayError) {
        let reports = reports.filter(\.stage.isReportedByDevice)
        let recorded = await withCheckedContinuation { continuation in
            recordShare(from: reports.startIndex, of: reports, from: deviceID, through: through) { continuation.resume(returning: $0) }
        }
        try recorded.get()
    }

    /// Writes the share of `reports` that begins at `start` in a transaction of its own, then queues
    /// the next share on the writer, or hands the outcome to `completion` on the writer's queue.
    ///
    /// A message holds a few hundred reports, and the providers' pushes wait for the writer while
    /// they are written: a share at a time, the pushes that came meanwhile are written between two.
    /// A share already written when the gateway stopped is written again with the rest when the
    /// device sends the message again, and each report a push already has is skipped: nothing is
    /// recorded twice.
    private func recordShare(from start: Int, of reports: [DeliveryLog.Report], from deviceID: String, through: Int64,
                             completion: @escaping @Sendable (Result<Void, GatewayError>) -> Void) {
        database.asyncWriteWithoutTransaction { [path] db in
            let share = reports[start..<min(start + Self.reportsPerTransaction, reports.endIndex)]
            let isLast = share.endIndex == reports.endIndex
            // Not synced: what a power cut takes back is the newest of the log, not a push.
            let written = Result {
                try db.inTransactionWithoutWaitingForTheDisk { () throws -> Bool in
                    guard let recorded = try Int64.fetchOne(db.cachedStatement(sql: "SELECT reportedThrough FROM device WHERE deviceID = ?"), arguments: [deviceID]),
                          through > recorded
                    else { return false }
                    try Self.insertReports(share, from: deviceID, in: db)
                    if isLast {
                        try db.cachedStatement(sql: "UPDATE device SET reportedThrough = ? WHERE deviceID = ?").execute(arguments: [through, deviceID])
                    }
                    return true
                }
            }
            switch written {
            case .success(true) where !isLast:
                // Behind the writes queued meanwhile; no task in between.
                self.recordShare(from: share.endIndex, of: reports, from: deviceID, through: through, completion: completion)
            case .success:
                completion(.success(()))
            case .failure(let error):
                completion(.failure(Self.writeError(error, path: path)))
            }
        }
    }

    /// The reports written in one transaction by ``recordDeviceReports(_:from:through:)``: a few
    /// tenths of a millisecond of the writer's time.
    package static let reportsPerTransaction = 25

    /// Writes a device's reports: only for the device's own pushes, at most so many a push, and none
    /// a push has already (the same stage at the same time). Each push is looked up once, with the
    /// stages it has, and each report is one insert.
    private static func insertReports(_ reports: ArraySlice<DeliveryLog.Report>, from deviceID: String, in db: Database) throws {
        let lookUp = try db.cachedStatement(sql: """
            SELECT s.stage, s.at FROM delivery d LEFT JOIN delivery_stage s ON s.uniqueID = d.uniqueID WHERE d.uniqueID = ? AND d.deviceID = ?
            """)
        let insert = try db.cachedStatement(sql: "INSERT INTO delivery_stage (uniqueID, at, stage, detail) VALUES (?, ?, ?, ?)")
        // The stages each push has now; nil for a push that is not the device's.
        var pushes: [String: Set<RecordedStage>?] = [:]
        for report in reports {
            let known = try pushes[report.uniqueID] ?? RecordedStage.all(Row.fetchCursor(lookUp, arguments: [report.uniqueID, deviceID]))
            guard var stages = known, stages.count < DeliveryLog.maximumStagesPerPush,
                  stages.insert(RecordedStage(stage: report.stage.rawValue, at: report.at)).inserted
            else {
                pushes[report.uniqueID] = .some(known)
                continue
            }
            let detail = report.detail.map { String($0.prefix(DeliveryLog.maximumDetailLength)) }
            try insert.execute(arguments: [report.uniqueID, report.at, report.stage.rawValue, detail])
            pushes[report.uniqueID] = stages
        }
    }

    /// A stage in a push's log, as a device's report is recognized when it comes again.
    private struct RecordedStage: Hashable {
        var stage: String
        var at: Double

        /// The stages of the rows of a push joined with its stages (one row with none for a push
        /// that has none yet), or nil when there is no row: the push is not in the log.
        static func all(_ rows: RowCursor) throws -> Set<RecordedStage>? {
            var stages: Set<RecordedStage>?
            while let row = try rows.next() {
                if stages == nil { stages = [] }
                if let stage = row[0] as String?, let at = row[1] as Double? { stages?.insert(RecordedStage(stage: stage, at: at)) }
            }
            return stages
        }
    }

    package func deliveryRecords(matching id: String) async throws(GatewayError) -> [DeliveryRecord] {
        try await read { db in
            let rows = try Row.fetchAll(db, sql: """
                SELECT * FROM delivery WHERE uniqueID = ?1 OR apnsID = ?1 ORDER BY acceptedAt, uniqueID LIMIT 100
                """, arguments: [id.lowercased()])
            // In the order the gateway learned of them: times come from whoever recorded each stage
            // (the device's own clock for what it reports), and clocks disagree a little.
            let stages = try db.cachedStatement(sql: "SELECT at, stage, detail FROM delivery_stage WHERE uniqueID = ? ORDER BY rowid")
            return try rows.map { row in
                let acceptedAt = Date(timeIntervalSince1970: row["acceptedAt"])
                var entries = [DeliveryLog.Entry(.accepted, at: acceptedAt, detail: row["credential"])]
                if let storedAt = row["storedAt"] as Double? {
                    entries.append(DeliveryLog.Entry(.stored, at: Date(timeIntervalSince1970: storedAt),
                                                     detail: row["held"] as Bool ? "held: the device was not linked" : "queued for the linked device"))
                }
                for stage in try Row.fetchAll(stages, arguments: [row["uniqueID"] as String]) {
                    guard let kind = DeliveryLog.Stage(rawValue: stage["stage"]) else { continue }
                    entries.append(DeliveryLog.Entry(kind, at: Date(timeIntervalSince1970: stage["at"]), detail: stage["detail"]))
                }
                return DeliveryRecord(
                    uniqueID: row["uniqueID"], apnsID: row["apnsID"], teamID: row["teamID"], credential: row["credential"],
                    bundleIdentifier: row["bundleIdentifier"], environment: APNs.Environment(rawValue: row["environment"]) ?? .sandbox,
                    deviceID: row["deviceID"], token: row["token"], pushType: APNs.PushType(rawValue: row["pushType"]) ?? .alert,
                    priority: row["priority"], payloadBytes: row["payloadBytes"], collapseID: row["collapseID"],
                    expiresAt: Date(timeIntervalSince1970: row["expiresAt"]), stages: entries
                )
            }
        }
    }

    package func pruneDeliveryLog(acceptedBefore date: Date, keepingAtMost limit: Int) async throws(GatewayError) -> Int {
        // Counted on a reader: a count reads the whole log, and the writer is the pushes'.
        let count = try await read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM delivery") ?? 0 }
        return try await write { db in
            // Each old entry's push is looked up in push_unique: with `NOT IN (SELECT uniqueID FROM
            // push)`, SQLite listed every stored push first (a third of a second at 200,000, each
            // minute, with the writer held).
            try db.execute(sql: """
                DELETE FROM delivery WHERE acceptedAt < ? AND NOT EXISTS (SELECT 1 FROM push WHERE push.uniqueID = delivery.uniqueID)
                """, arguments: [date.timeIntervalSince1970])
            var removed = db.changesCount
            if count - removed > limit {
                try db.execute(sql: """
                    DELETE FROM delivery WHERE uniqueID IN (SELECT uniqueID FROM delivery ORDER BY acceptedAt LIMIT ?)
                    """, arguments: [count - removed - limit])
                removed += db.changesCount
            }
            return removed
        }
    }
}
