package import Foundation
internal import GRDB
package import NotificationCore

/// The daemon's store in one SQLite file (WAL mode), through GRDB.
///
/// Each app is one row: its key hash, launch command, the JSON of its notification state machine, and
/// the time it next has something due (indexed, so finding what is due costs a B-tree lookup however
/// many apps there are). Every save is one transaction, so a crash at any moment leaves either the
/// state before a step or the state after it.
package final class SQLiteDaemonStore: DaemonStore {
    private let database: DatabasePool
    /// Where the database file is.
    package let path: String

    /// Opens (creating if needed) the database at `path`.
    ///
    /// - Throws: `databaseUnreadable` when the file exists but is not a readable daemon database; the
    ///   message says which file and what to do. Nothing in it is changed.
    package init(path: String) throws(DaemonError) {
        self.path = path
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            // NORMAL is durable across a process crash in WAL mode; FULL also survives power loss.
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        do {
            database = try DatabasePool(path: path, configuration: configuration)
            try Self.migrator.migrate(database)
        } catch {
            throw DaemonError(
                .databaseUnreadable,
                "The database at \(path) cannot be read (\(Self.describe(error))). Nothing was changed. "
                    + "Move the file aside to start with an empty database, or restore it from a backup."
            )
        }
    }

    private static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: """
                CREATE TABLE app (
                    bundleIdentifier TEXT PRIMARY KEY NOT NULL,
                    keyHash TEXT NOT NULL UNIQUE,
                    launchCommand TEXT,
                    machine BLOB NOT NULL,
                    nextWakeUp DOUBLE,
                    bootID TEXT NOT NULL
                );
                CREATE INDEX app_nextWakeUp ON app(nextWakeUp) WHERE nextWakeUp IS NOT NULL;
                """)
        }
        migrator.registerMigration("v2: apps that watch the location or show notifications") { db in
            // Rows saved before this migration are marked as both until their next save, so none is missed.
            try db.execute(sql: """
                ALTER TABLE app ADD COLUMN watchesLocation BOOLEAN NOT NULL DEFAULT 1;
                ALTER TABLE app ADD COLUMN showsNotifications BOOLEAN NOT NULL DEFAULT 1;
                CREATE INDEX app_watchesLocation ON app(bundleIdentifier) WHERE watchesLocation;
                CREATE INDEX app_showsNotifications ON app(bundleIdentifier) WHERE showsNotifications;
                """)
        }
        migrator.registerMigration("v3: the device's state") { db in
            try db.execute(sql: """
                CREATE TABLE device (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    locked BOOLEAN NOT NULL,
                    latitude DOUBLE,
                    longitude DOUBLE,
                    timeZone TEXT
                );
                """)
        }
        return migrator
    }

    /// Checks every page of the database (`PRAGMA quick_check`), on GRDB's reader, off the caller's
    /// thread: it takes time in proportion to the database's size, so the daemon runs it after it has
    /// started, not before.
    ///
    /// - Throws: `databaseUnreadable` saying what SQLite found.
    package func checkIntegrity() async throws(DaemonError) {
        let result: String?
        do {
            result = try await database.read { db in try String.fetchOne(db, sql: "PRAGMA quick_check") }
        } catch {
            throw DaemonError(.databaseUnreadable, "Reading \(path) failed: \(Self.describe(error)).")
        }
        guard result == "ok" else {
            throw DaemonError(.databaseUnreadable, "The database at \(path) is damaged (\(result ?? "no answer")). Restore it from a backup.")
        }
    }

    private static func describe(_ error: any Error) -> String {
        if let error = error as? DatabaseError { return error.message ?? "\(error.resultCode)" }
        return "\(error)"
    }

    private func write<T>(_ body: (Database) throws -> T) throws(DaemonError) -> T {
        do {
            return try database.write(body)
        } catch let error as DaemonError {
            throw error
        } catch {
            throw DaemonError(.storageFailed, "Writing to \(path) failed: \(Self.describe(error)).")
        }
    }

    private func read<T>(_ body: (Database) throws -> T) throws(DaemonError) -> T {
        do {
            return try database.read(body)
        } catch let error as DaemonError {
            throw error
        } catch {
            throw DaemonError(.databaseUnreadable, "Reading \(path) failed: \(Self.describe(error)).")
        }
    }

    private static let encoder = JSONEncoder()
    private static let decoder = JSONDecoder()

    private static func encode(_ machine: NotificationCenterMachine) throws -> Data {
        try encoder.encode(machine)
    }

    package func insert(_ app: StoredApp) throws(DaemonError) {
        try write { db in
            if try Bool.fetchOne(db, sql: "SELECT 1 FROM app WHERE bundleIdentifier = ?", arguments: [app.bundleIdentifier]) == true {
                throw DaemonError(.appAlreadyRegistered, "An app with the bundle identifier \(app.bundleIdentifier) is already registered.")
            }
            var machine = app.machine
            try db.execute(
                sql: """
                    INSERT INTO app (bundleIdentifier, keyHash, launchCommand, machine, nextWakeUp, bootID, watchesLocation, showsNotifications)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    app.bundleIdentifier, app.keyHash, app.launchCommand, try Self.encode(app.machine),
                    machine.nextWakeUpDate()?.timeIntervalSince1970, app.bootID, machine.watchesLocation, machine.showsSomethingToThePerson,
                ]
            )
        }
    }

    package func app(_ bundleIdentifier: String) throws(DaemonError) -> StoredApp? {
        let row = try read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM app WHERE bundleIdentifier = ?", arguments: [bundleIdentifier])
        }
        guard let row else { return nil }
        let data: Data = row["machine"]
        let machine: NotificationCenterMachine
        do {
            machine = try Self.decoder.decode(NotificationCenterMachine.self, from: data)
        } catch {
            throw DaemonError(.databaseUnreadable, "The stored state of \(bundleIdentifier) in \(path) cannot be read: \(error).")
        }
        return StoredApp(
            bundleIdentifier: row["bundleIdentifier"],
            keyHash: row["keyHash"],
            launchCommand: row["launchCommand"],
            machine: machine,
            bootID: row["bootID"]
        )
    }

    package func bundleIdentifier(forKeyHash keyHash: String) throws(DaemonError) -> String? {
        try read { db in
            try String.fetchOne(db, sql: "SELECT bundleIdentifier FROM app WHERE keyHash = ?", arguments: [keyHash])
        }
    }

    package func save(_ saves: [AppSave], bootID: String) async throws(DaemonError) {
        guard !saves.isEmpty else { return }
        do {
            // Encoded and written on GRDB's writer, off the caller's thread: one transaction, one sync.
            try await database.write { db in
                let statement = try db.cachedStatement(sql: """
                    UPDATE app SET machine = ?, nextWakeUp = ?, bootID = ?, watchesLocation = ?, showsNotifications = ?
                    WHERE bundleIdentifier = ?
                    """)
                for save in saves {
                    try statement.execute(arguments: [
                        try Self.encode(save.machine), save.nextWakeUp?.timeIntervalSince1970, bootID,
                        save.machine.watchesLocation, save.machine.showsSomethingToThePerson, save.bundleIdentifier,
                    ])
                }
            }
        } catch {
            throw DaemonError(.storageFailed, "Writing to \(path) failed: \(Self.describe(error)).")
        }
    }

    package func replaceKey(of bundleIdentifier: String, with keyHash: String) throws(DaemonError) {
        try write { db in
            try db.execute(sql: "UPDATE app SET keyHash = ? WHERE bundleIdentifier = ?", arguments: [keyHash, bundleIdentifier])
            guard db.changesCount == 1 else {
                throw DaemonError(.appNotFound, "No app is registered as \(bundleIdentifier).")
            }
        }
    }

    package func delete(_ bundleIdentifier: String) throws(DaemonError) {
        try write { db in
            try db.execute(sql: "DELETE FROM app WHERE bundleIdentifier = ?", arguments: [bundleIdentifier])
            guard db.changesCount == 1 else {
                throw DaemonError(.appNotFound, "No app is registered as \(bundleIdentifier).")
            }
        }
    }

    package func apps() throws(DaemonError) -> [(bundleIdentifier: String, launchCommand: String?)] {
        try read { db in
            try Row.fetchAll(db, sql: "SELECT bundleIdentifier, launchCommand FROM app ORDER BY bundleIdentifier").map {
                (bundleIdentifier: $0["bundleIdentifier"] as String, launchCommand: $0["launchCommand"] as String?)
            }
        }
    }

    package func appsDue(by date: Date, limit: Int) throws(DaemonError) -> [String] {
        try read { db in
            try String.fetchAll(
                db,
                sql: "SELECT bundleIdentifier FROM app WHERE nextWakeUp IS NOT NULL AND nextWakeUp <= ? ORDER BY nextWakeUp LIMIT ?",
                arguments: [date.timeIntervalSince1970, limit]
            )
        }
    }

    package func appsWatchingLocation() throws(DaemonError) -> [String] {
        try read { db in try String.fetchAll(db, sql: "SELECT bundleIdentifier FROM app WHERE watchesLocation ORDER BY bundleIdentifier") }
    }

    package func appsShowingNotifications() throws(DaemonError) -> [String] {
        try read { db in try String.fetchAll(db, sql: "SELECT bundleIdentifier FROM app WHERE showsNotifications ORDER BY bundleIdentifier") }
    }

    package func postponeWakeUp(of bundleIdentifier: String, to date: Date) throws(DaemonError) {
        try write { db in
            try db.execute(sql: "UPDATE app SET nextWakeUp = ? WHERE bundleIdentifier = ?", arguments: [date.timeIntervalSince1970, bundleIdentifier])
        }
    }

    package func deviceState() throws(DaemonError) -> DeviceState? {
        try read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM device WHERE id = 1").map { row in
                let latitude: Double? = row["latitude"]
                let longitude: Double? = row["longitude"]
                return DeviceState(
                    isLocked: row["locked"],
                    location: latitude.flatMap { latitude in longitude.map { Coordinate(latitude: latitude, longitude: $0) } },
                    timeZoneIdentifier: row["timeZone"]
                )
            }
        }
    }

    package func saveDeviceState(_ state: DeviceState) throws(DaemonError) {
        try write { db in
            try db.execute(
                sql: "INSERT OR REPLACE INTO device (id, locked, latitude, longitude, timeZone) VALUES (1, ?, ?, ?, ?)",
                arguments: [state.isLocked, state.location?.latitude, state.location?.longitude, state.timeZoneIdentifier]
            )
        }
    }

    package func earliestWakeUp() throws(DaemonError) -> Date? {
        try read { db in
            try Double.fetchOne(db, sql: "SELECT MIN(nextWakeUp) FROM app WHERE nextWakeUp IS NOT NULL")
        }.map { Date(timeIntervalSince1970: $0) }
    }
}
