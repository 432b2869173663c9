package import Foundation
internal import GRDB
internal import GRDBSQLite
package import NotificationEngine
internal import SQLiteDurability
internal import Synchronization
package import NotificationCore

/// The daemon's store in one SQLite file (WAL mode), through GRDB.
///
/// Each app is a row with its key hash, launch command, its machine's time and sequence, its small
/// core, its categories, and the time it next has something due (indexed, so finding what is due costs
/// a B-tree lookup however many apps there are). Its pending requests, the notifications the person
/// can see and what waits for the app are rows of their own tables, keyed by the app: a step writes
/// the rows it changed, the app's time and sequence, and its core and categories only when they
/// changed, never the app's whole state. Every save is one transaction, so a crash at any moment leaves
/// either the state before a step or the state after it.
///
/// The schema is versioned by its migrations. A pending request's trigger is in columns (its kind,
/// whether it repeats, its interval; date components and regions as JSON); the other payloads are JSON
/// of the model types (`NotificationContent`, `VisibleNotification`, the machine's `Core`), decoded
/// lazily or once for identical bytes. `StoreFormatTests` pins the stored form, so a change to those
/// types that would make stored rows unreadable fails a test.
package final class SQLiteDaemonStore: DaemonStore {
    private let database: DatabasePool
    private let checkpointer: BackgroundCheckpointer
    /// Syncs the log beside the writer, for ``waitForTheDisk()``.
    private let syncer: LogSyncer
    /// Where the database file is.
    package let path: String

    /// The size the write-ahead log is cut back to once a checkpoint has copied it into the database:
    /// without a limit, the file keeps the size of its largest burst of writes for good.
    package static let defaultWALSizeLimit = 64 << 20

    /// The pages in the write-ahead log that start a checkpoint (SQLite's own default is 1,000).
    ///
    /// A checkpoint copies the log into the database file and syncs it, beside the writer; while
    /// that sync runs, the syncs the pushes wait for (the gateway's, in `unotify serve`, on the same
    /// disk) wait behind it. At 1,000 pages a checkpoint came every ~85 ms at 1,000 pushes/s, and
    /// the pushes that met one were several times as likely to reach their app after more than
    /// 3.5 ms; a quarter of that copies and syncs a quarter as much at a time.
    package static let pagesBeforeCheckpoint: Int32 = 250

    /// Opens (creating if needed) the database at `path`.
    ///
    /// - Parameter walSizeLimit: the bytes the write-ahead log keeps after a checkpoint.
    /// - Throws: `databaseUnreadable` when the file exists but is not a readable daemon database; the
    ///   message says which file and what to do. Nothing in it is changed.
    package init(path: String, walSizeLimit: Int = SQLiteDaemonStore.defaultWALSizeLimit) throws(DaemonError) {
        self.path = path
        checkpointer = BackgroundCheckpointer(path: path, pagesBeforeCheckpoint: Self.pagesBeforeCheckpoint)
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        do {
            database = try DatabasePool(path: path, configuration: configuration)
            // Every commit synced before a call is answered (but for what a power cut may undo:
            // see `AppSave.waitsForTheDisk`): NORMAL is durable across a process crash in WAL mode,
            // FULL also across a power loss. Set on the writer after the pool
            // opens, because opening a pool in WAL mode sets NORMAL (after `prepareDatabase` runs).
            // The writer restarts the log after a checkpoint, so it is the one that cuts it back.
            // Its checkpoints run on a connection of their own, outside its commits.
            let logPath = try database.writeWithoutTransaction { [checkpointer] db in
                try db.execute(sql: "PRAGMA synchronous = FULL")
                try db.execute(sql: "PRAGMA journal_size_limit = \(max(0, walSizeLimit))")
                checkpointer.takeCheckpoints(of: db)
                return LogSyncer.logPath(of: db)
            }
            syncer = LogSyncer(logPath: logPath ?? path + "-wal")
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
        migrator.registerMigration("v4: an app's requests, notifications and queue as rows") { db in
            try db.execute(sql: """
                ALTER TABLE app RENAME TO app_v3;
                DROP INDEX app_nextWakeUp;
                DROP INDEX app_watchesLocation;
                DROP INDEX app_showsNotifications;
                CREATE TABLE app (
                    bundleIdentifier TEXT PRIMARY KEY NOT NULL,
                    keyHash TEXT NOT NULL UNIQUE,
                    launchCommand TEXT,
                    now DOUBLE NOT NULL,
                    nextSequence INTEGER NOT NULL,
                    core BLOB NOT NULL,
                    categories BLOB NOT NULL,
                    nextWakeUp DOUBLE,
                    bootID TEXT NOT NULL,
                    watchesLocation BOOLEAN NOT NULL,
                    showsNotifications BOOLEAN NOT NULL
                );
                CREATE INDEX app_nextWakeUp ON app(nextWakeUp) WHERE nextWakeUp IS NOT NULL;
                CREATE INDEX app_watchesLocation ON app(bundleIdentifier) WHERE watchesLocation;
                CREATE INDEX app_showsNotifications ON app(bundleIdentifier) WHERE showsNotifications;
                CREATE TABLE pending (
                    app TEXT NOT NULL REFERENCES app(bundleIdentifier) ON DELETE CASCADE,
                    identifier TEXT NOT NULL,
                    sequence INTEGER NOT NULL,
                    nextFireDate DOUBLE,
                    insideRegion BOOLEAN,
                    triggerKind TEXT CHECK (triggerKind IN ('timeInterval', 'calendar', 'location', 'push')),
                    triggerRepeats BOOLEAN NOT NULL,
                    triggerInterval DOUBLE,
                    triggerDetail BLOB,
                    content BLOB NOT NULL,
                    PRIMARY KEY (app, identifier)
                ) WITHOUT ROWID;
                CREATE TABLE delivered (
                    app TEXT NOT NULL REFERENCES app(bundleIdentifier) ON DELETE CASCADE,
                    identifier TEXT NOT NULL,
                    position INTEGER NOT NULL,
                    notification BLOB NOT NULL,
                    PRIMARY KEY (app, identifier)
                ) WITHOUT ROWID;
                CREATE TABLE queued (
                    app TEXT NOT NULL REFERENCES app(bundleIdentifier) ON DELETE CASCADE,
                    position INTEGER NOT NULL,
                    item BLOB NOT NULL,
                    PRIMARY KEY (app, position)
                ) WITHOUT ROWID;
                """)
            // Each app's whole machine, as earlier versions stored it, becomes its core and rows.
            let rows = try Row.fetchCursor(db, sql: "SELECT * FROM app_v3")
            while let row = try rows.next() {
                let bundleIdentifier: String = row["bundleIdentifier"]
                var machine = try decoder.decode(NotificationCenterMachine.self, from: row["machine"] as Data)
                try insertRow(
                    db, bundleIdentifier: bundleIdentifier, keyHash: row["keyHash"], launchCommand: row["launchCommand"],
                    machine: &machine, nextWakeUp: row["nextWakeUp"], bootID: row["bootID"]
                )
            }
            try db.execute(sql: "DROP TABLE app_v3")
        }
        migrator.registerMigration("v5: the device link's progress") { db in
            try db.execute(sql: """
                CREATE TABLE link (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    sequence INTEGER NOT NULL
                );
                """)
        }
        migrator.registerMigration("v6: apps whose service extension prepares a push") { db in
            try db.execute(sql: """
                ALTER TABLE app ADD COLUMN preparesContent BOOLEAN NOT NULL DEFAULT 0;
                CREATE INDEX app_preparesContent ON app(bundleIdentifier) WHERE preparesContent;
                """)
        }
        migrator.registerMigration("v7: delivery-log reports waiting for the gateway") { db in
            try db.execute(sql: """
                CREATE TABLE link_report (
                    number INTEGER PRIMARY KEY AUTOINCREMENT,
                    report BLOB NOT NULL
                );
                """)
        }
        migrator.registerMigration("v8: the device's passcode") { db in
            try db.execute(sql: """
                ALTER TABLE device ADD COLUMN passcodeSalt BLOB;
                ALTER TABLE device ADD COLUMN passcodeKey BLOB;
                ALTER TABLE device ADD COLUMN passcodeRounds INTEGER;
                ALTER TABLE device ADD COLUMN passcodeFailures INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE device ADD COLUMN passcodeRetryAfter DOUBLE;
                """)
        }
        migrator.registerMigration("v9: the device's Focus") { db in
            // The Focus as JSON (its name, whether time-sensitive notifications break through, the apps
            // allowed); NULL when none is on.
            try db.execute(sql: "ALTER TABLE device ADD COLUMN focus BLOB")
        }
        migrator.registerMigration("v10: the Scheduled Summary") { db in
            // The summary as JSON (its times, whether the next one shows early); NULL while it is off.
            try db.execute(sql: "ALTER TABLE device ADD COLUMN summary BLOB")
        }
        migrator.registerMigration("v11: delivery-log reports in columns") { db in
            // Each report was a JSON object, decoded again when read: a hundred at a time every tenth
            // of a second while pushes keep coming, and most of the read's time. The numbering goes
            // on where it was: the gateway skips reports numbered up to what it has recorded.
            try db.execute(sql: """
                CREATE TABLE link_report_columns (
                    number INTEGER PRIMARY KEY AUTOINCREMENT,
                    uniqueID TEXT NOT NULL,
                    stage TEXT NOT NULL,
                    at DOUBLE NOT NULL,
                    detail TEXT
                );
                INSERT INTO link_report_columns (number, uniqueID, stage, at, detail)
                    SELECT number, report ->> 'uniqueID', report ->> 'stage', report ->> 'at', report ->> 'detail' FROM link_report
                    WHERE json_valid(report) AND report ->> 'uniqueID' IS NOT NULL AND report ->> 'stage' IS NOT NULL AND report ->> 'at' IS NOT NULL;
                DELETE FROM sqlite_sequence WHERE name = 'link_report_columns';
                INSERT INTO sqlite_sequence (name, seq) SELECT 'link_report_columns', seq FROM sqlite_sequence WHERE name = 'link_report';
                DROP TABLE link_report;
                ALTER TABLE link_report_columns RENAME TO link_report;
                """)
        }
        migrator.registerMigration("v12: apps whose stored state cannot be read, and what a reset set aside") { db in
            // An app quarantined keeps its rows as they were, for inspection, until it is reset: then
            // they are copied into set_aside (each part's bytes as stored) and the app starts afresh.
            try db.execute(sql: """
                ALTER TABLE app ADD COLUMN quarantineReason TEXT;
                ALTER TABLE app ADD COLUMN quarantinedSince DOUBLE;
                CREATE TABLE set_aside (
                    number INTEGER PRIMARY KEY AUTOINCREMENT,
                    app TEXT NOT NULL,
                    setAsideAt DOUBLE NOT NULL,
                    reason TEXT NOT NULL,
                    part TEXT NOT NULL,
                    identifier TEXT,
                    bytes BLOB
                );
                CREATE INDEX set_aside_app ON set_aside(app);
                """)
        }
        migrator.registerMigration("v13: an app's strings and extensions") { db in
            // Not a reference to the app row: a reset replaces that row, and keeps these. Earlier
            // versions kept them as files beside the database; the engine moves those in as it starts.
            try db.execute(sql: """
                CREATE TABLE app_resource (
                    app TEXT NOT NULL,
                    kind TEXT NOT NULL CHECK (kind IN ('strings', 'serviceExtension', 'contentExtension')),
                    value BLOB NOT NULL,
                    PRIMARY KEY (app, kind)
                ) WITHOUT ROWID;
                """)
        }
        migrator.registerMigration("v14: an app's name and icon among its resources") { db in
            // A table's CHECK cannot be changed in place: the table is made anew with the wider one.
            try db.execute(sql: """
                CREATE TABLE app_resource_new (
                    app TEXT NOT NULL,
                    kind TEXT NOT NULL CHECK (kind IN ('strings', 'serviceExtension', 'contentExtension', 'identity')),
                    value BLOB NOT NULL,
                    PRIMARY KEY (app, kind)
                ) WITHOUT ROWID;
                INSERT INTO app_resource_new SELECT app, kind, value FROM app_resource;
                DROP TABLE app_resource;
                ALTER TABLE app_resource_new RENAME TO app_resource;
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

    private func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(DaemonError) -> T {
        do {
            return try await database.write(body)
        } catch let error as DaemonError {
            throw error
        } catch {
            throw DaemonError(.storageFailed, "Writing to \(path) failed: \(Self.describe(error)).")
        }
    }

    /// A transaction committed without waiting for the disk, for bookkeeping that is safe to lose in
    /// a power cut (see `DatabaseWriter.writeWithoutWaitingForTheDisk(_:)`).
    private func writeUnsynced(_ body: @escaping @Sendable (Database) throws -> Void) async throws(DaemonError) {
        do {
            try await database.writeWithoutWaitingForTheDisk(body)
        } catch {
            throw DaemonError(.storageFailed, "Writing to \(path) failed: \(Self.describe(error)).")
        }
    }

    private func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(DaemonError) -> T {
        do {
            return try await database.read(body)
        } catch let error as DaemonError {
            throw error
        } catch {
            throw DaemonError(.databaseUnreadable, "Reading \(path) failed: \(Self.describe(error)).")
        }
    }

    /// The same state is stored as the same bytes, whatever the order of a dictionary (sorted keys);
    /// contents without their default fields, since a pending request's row is mostly its content.
    fileprivate static let encoder = StreamingJSONEncoder(sortsKeys: true, userInfo: [.omitsDefaultContent: true])
    fileprivate static let decoder = JSONDecoder()
    /// Decoded cores and category lists by their stored bytes: most apps of a device hold the same
    /// core (the same settings, calendar and time zone, nothing open), and many the same categories,
    /// so loading one rarely decodes them.
    private static let cores = DecodedMemo<NotificationCenterMachine.Core>()
    static let coreJSON = CoreJSON()
    private static let categoryLists = DecodedMemo<[NotificationCategory]>()

    package func insert(_ app: StoredApp) async throws(DaemonError) {
        try await write { db in
            if try Bool.fetchOne(db, sql: "SELECT 1 FROM app WHERE bundleIdentifier = ?", arguments: [app.bundleIdentifier]) == true {
                throw DaemonError(.appAlreadyRegistered, "An app with the bundle identifier \(app.bundleIdentifier) is already registered.")
            }
            var machine = app.machine
            try Self.insertRow(
                db, bundleIdentifier: app.bundleIdentifier, keyHash: app.keyHash, launchCommand: app.launchCommand,
                machine: &machine, nextWakeUp: machine.nextWakeUpDate()?.timeIntervalSince1970, bootID: app.bootID
            )
        }
    }

    /// Writes a new app's row and all of its machine's rows.
    private static func insertRow(
        _ db: Database, bundleIdentifier: String, keyHash: String, launchCommand: String?,
        machine: inout NotificationCenterMachine, nextWakeUp: Double?, bootID: String
    ) throws {
        let whole = machine.takeWhole()
        guard let core = whole.core else { preconditionFailure("a whole machine always has its core") }
        try db.execute(
            sql: """
                INSERT INTO app (bundleIdentifier, keyHash, launchCommand, now, nextSequence, core, categories, nextWakeUp, bootID, watchesLocation, showsNotifications)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                bundleIdentifier, keyHash, launchCommand, whole.now.timeIntervalSinceReferenceDate, Int64(bitPattern: whole.nextSequence),
                try coreJSON.encode(core, with: encoder), try encoder.encode(whole.categories ?? []),
                nextWakeUp, bootID, machine.watchesLocation, machine.showsSomethingToThePerson,
            ]
        )
        try writeRows(db, of: bundleIdentifier, whole)
    }

    /// Writes the rows in `changes`: removed ones first, then the written ones over what was there.
    private static func writeRows(_ db: Database, of app: String, _ changes: NotificationCenterMachine.Changes) throws {
        if !changes.removedPending.isEmpty {
            let statement = try db.cachedStatement(sql: "DELETE FROM pending WHERE app = ? AND identifier = ?")
            for identifier in changes.removedPending { try statement.execute(arguments: [app, identifier]) }
        }
        if !changes.pending.isEmpty {
            let statement = try db.cachedStatement(sql: """
                INSERT OR REPLACE INTO pending
                (app, identifier, sequence, nextFireDate, insideRegion, triggerKind, triggerRepeats, triggerInterval, triggerDetail, content)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
            for entry in changes.pending {
                let request = entry.request
                let trigger = try StoredTrigger(request.trigger)
                try statement.execute(arguments: [
                    app, request.identifier, Int64(bitPattern: entry.sequence), entry.nextFireDate?.timeIntervalSince1970, entry.insideRegion,
                    trigger.kind, trigger.repeats, trigger.interval, trigger.detail,
                    try request.encodedContent.map { Data($0) } ?? encoder.encode(request.content),
                ])
            }
        }
        if !changes.removedVisible.isEmpty {
            let statement = try db.cachedStatement(sql: "DELETE FROM delivered WHERE app = ? AND identifier = ?")
            for identifier in changes.removedVisible { try statement.execute(arguments: [app, identifier]) }
        }
        if !changes.visible.isEmpty {
            let statement = try db.cachedStatement(sql: """
                INSERT OR REPLACE INTO delivered (app, identifier, position, notification) VALUES (?, ?, ?, ?)
                """)
            for row in changes.visible {
                try statement.execute(arguments: [
                    app, row.shown.notification.request.identifier, Int64(bitPattern: row.position), try encoder.encode(row.shown),
                ])
            }
        }
        if !changes.removedQueued.isEmpty {
            let statement = try db.cachedStatement(sql: "DELETE FROM queued WHERE app = ? AND position = ?")
            for position in changes.removedQueued { try statement.execute(arguments: [app, position]) }
        }
        if !changes.queued.isEmpty {
            let statement = try db.cachedStatement(sql: "INSERT OR REPLACE INTO queued (app, position, item) VALUES (?, ?, ?)")
            for row in changes.queued { try statement.execute(arguments: [app, row.position, try encoder.encode(row.item)]) }
        }
    }

    package func app(_ bundleIdentifier: String) async throws(DaemonError) -> StoredApp? {
        try await apps([bundleIdentifier])[bundleIdentifier]?.get()
    }

    /// Many apps in one read: one hand-off to a reader and one transaction for all, where a read of
    /// each would wait for a reader's thread of its own (what warming the cache after a start costs).
    package func apps(_ bundleIdentifiers: [String]) async throws(DaemonError) -> [String: Result<StoredApp, DaemonError>] {
        let path = self.path
        do {
            return try await database.read { db in
                var apps: [String: Result<StoredApp, DaemonError>] = [:]
                apps.reserveCapacity(bundleIdentifiers.count)
                for bundleIdentifier in bundleIdentifiers {
                    do {
                        if let app = try Self.readApp(bundleIdentifier, in: db) { apps[bundleIdentifier] = .success(app) }
                    } catch let error as DecodingError {
                        // This app's rows alone: the others of the read go on.
                        apps[bundleIdentifier] = .failure(.quarantined(bundleIdentifier, because: "its stored state in \(path) cannot be read: \(error)"))
                    } catch let error as DaemonError where error.code == .appQuarantined {
                        apps[bundleIdentifier] = .failure(error)
                    }
                }
                return apps
            }
        } catch let error as DaemonError {
            throw error
        } catch {
            throw DaemonError(.databaseUnreadable, "Reading \(path) failed: \(Self.describe(error)).")
        }
    }

    /// One app, read within a transaction under way.
    private static func readApp(_ bundleIdentifier: String, in db: Database) throws -> StoredApp? {
        // Every row read straight from SQLite's columns: GRDB's generic rows copy each one
        // with a dictionary of its column names, and its generic decoding looks up type
        // metadata for every column; together they were a quarter of the cost of loading an app.
        let apps = try ColumnReader.rows(db, """
            SELECT now, nextSequence, core, categories, keyHash, launchCommand, bootID, quarantineReason FROM app WHERE bundleIdentifier = ?
            """, [bundleIdentifier]) { app in
            (now: Date(timeIntervalSinceReferenceDate: app.double(0) ?? 0), nextSequence: UInt64(bitPattern: app.integer(1) ?? 0),
             core: app.blob(2) ?? Data(), categories: app.blob(3) ?? Data(), keyHash: app.text(4) ?? "", launchCommand: app.text(5),
             bootID: app.text(6) ?? "", quarantineReason: app.text(7))
        }
        guard let app = apps.first else { return nil }
        if let reason = app.quarantineReason { throw DaemonError.quarantined(bundleIdentifier, because: reason) }

        let decoder = Self.decoder
        // Up to 64 rows per app.
        let pending = try ColumnReader.rows(db, """
            SELECT identifier, sequence, nextFireDate, insideRegion, triggerKind, triggerRepeats, triggerInterval, triggerDetail, content
            FROM pending WHERE app = ?
            """, [bundleIdentifier]) { columns in
            let trigger = StoredTrigger(kind: columns.text(4), repeats: columns.integer(5) != 0, interval: columns.double(6), detail: columns.blob(7))
            return NotificationCenterMachine.PendingRequest(
                // The content is decoded when first read: most steps never read it.
                request: NotificationRequest(identifier: columns.text(0) ?? "", encodedContent: columns.bytes(8), trigger: try trigger.decoded()),
                nextFireDate: columns.double(2).map(Date.init(timeIntervalSince1970:)),
                insideRegion: columns.integer(3).map { $0 != 0 },
                sequence: UInt64(bitPattern: columns.integer(1) ?? 0)
            )
        }
        let visible = try ColumnReader.rows(db, "SELECT position, notification FROM delivered WHERE app = ?", [bundleIdentifier]) { columns in
            NotificationCenterMachine.VisibleRow(
                shown: try decoder.decode(NotificationCenterMachine.VisibleNotification.self, from: columns.blob(1) ?? Data()),
                position: UInt64(bitPattern: columns.integer(0) ?? 0)
            )
        }
        let queued = try ColumnReader.rows(db, "SELECT position, item FROM queued WHERE app = ?", [bundleIdentifier]) { columns in
            NotificationCenterMachine.QueuedRow(
                position: columns.integer(0) ?? 0,
                item: try decoder.decode(NotificationCenterMachine.QueuedForApp.self, from: columns.blob(1) ?? Data())
            )
        }
        let machine = NotificationCenterMachine(
            now: app.now,
            nextSequence: app.nextSequence,
            core: try Self.cores.decode(app.core, with: decoder),
            categories: try Self.categoryLists.decode(app.categories, with: decoder),
            pending: pending,
            visible: visible,
            queued: queued
        )
        return StoredApp(bundleIdentifier: bundleIdentifier, keyHash: app.keyHash, launchCommand: app.launchCommand, machine: machine, bootID: app.bootID)
    }

    package func bundleIdentifier(forKeyHash keyHash: String) async throws(DaemonError) -> String? {
        try await read { db in
            try String.fetchOne(db.cachedStatement(sql: "SELECT bundleIdentifier FROM app WHERE keyHash = ?"), arguments: [keyHash])
        }
    }

    package func save(_ saves: [AppSave], bootID: String) async throws(DaemonError) {
        guard !saves.isEmpty else { return }
        do {
            // Encoded and written on GRDB's writer, off the caller's thread: one transaction, one sync.
            // The batch holds other callers' steps: the caller that writes it being cancelled (a
            // service stopping) must not fail them all.
            try await database.writeUninterrupted(waitingForTheDisk: saves.contains(where: \.waitsForTheDisk)) { db in
                let app = try db.cachedStatement(sql: """
                    UPDATE app SET now = ?, nextSequence = ?, nextWakeUp = ?, bootID = ?, watchesLocation = ?, showsNotifications = ?,
                        preparesContent = ?
                    WHERE bundleIdentifier = ?
                    """)
                let core = try db.cachedStatement(sql: "UPDATE app SET core = ? WHERE bundleIdentifier = ?")
                let categories = try db.cachedStatement(sql: "UPDATE app SET categories = ? WHERE bundleIdentifier = ?")
                let exists = try db.cachedStatement(sql: "SELECT 1 FROM app WHERE bundleIdentifier = ?")
                for save in saves {
                    let changes = save.changes
                    // An app removed meanwhile has no record to change, and no rows to write.
                    if save.writesAppRecord {
                        try app.execute(arguments: [
                            changes.now.timeIntervalSinceReferenceDate, Int64(bitPattern: save.reservedSequence), save.nextWakeUp?.timeIntervalSince1970,
                            bootID, save.watchesLocation, save.showsNotifications, save.preparesContent, save.bundleIdentifier,
                        ])
                        guard db.changesCount == 1 else { continue }
                    } else {
                        // Rewriting the record would dirty a page of its table (and copy its core) for
                        // nothing: at a million pending it was a page written, copied and read again per add.
                        guard try Bool.fetchOne(exists, arguments: [save.bundleIdentifier]) != nil else { continue }
                    }
                    if let changed = changes.core {
                        try core.execute(arguments: [try Self.coreJSON.encode(changed, with: Self.encoder), save.bundleIdentifier])
                    }
                    if let changed = changes.categories {
                        try categories.execute(arguments: [try Self.encoder.encode(changed), save.bundleIdentifier])
                    }
                    try Self.writeRows(db, of: save.bundleIdentifier, changes)
                }
                // Pushes received from the gateway: with the steps that delivered them, in one transaction.
                try Self.insertReports(saves.flatMap(\.deliveryReports), in: db)
                if let sequence = saves.compactMap(\.linkSequence).max() {
                    try Self.recordLinkSequence(sequence, in: db)
                }
            }
        } catch {
            throw DaemonError(.storageFailed, "Writing to \(path) failed: \(Self.describe(error)).")
        }
    }

    package func resources(of bundleIdentifier: String) async throws(DaemonError) -> [AppResource: Data] {
        try await read { db in
            var resources: [AppResource: Data] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT kind, value FROM app_resource WHERE app = ?", arguments: [bundleIdentifier]) {
                if let kind = AppResource(rawValue: row["kind"]) { resources[kind] = row["value"] }
            }
            return resources
        }
    }

    package func setResource(_ resource: AppResource, of bundleIdentifier: String, to value: Data?) async throws(DaemonError) {
        try await write { db in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM app WHERE bundleIdentifier = ?", arguments: [bundleIdentifier]) == true else {
                throw DaemonError(.appNotFound, "No app is registered as \(bundleIdentifier).")
            }
            if let value {
                try db.execute(sql: "INSERT OR REPLACE INTO app_resource (app, kind, value) VALUES (?, ?, ?)",
                               arguments: [bundleIdentifier, resource.rawValue, value])
            } else {
                try db.execute(sql: "DELETE FROM app_resource WHERE app = ? AND kind = ?", arguments: [bundleIdentifier, resource.rawValue])
            }
        }
    }

    package func replaceKey(of bundleIdentifier: String, with keyHash: String) async throws(DaemonError) {
        try await write { db in
            try db.execute(sql: "UPDATE app SET keyHash = ? WHERE bundleIdentifier = ?", arguments: [keyHash, bundleIdentifier])
            guard db.changesCount == 1 else {
                throw DaemonError(.appNotFound, "No app is registered as \(bundleIdentifier).")
            }
        }
    }

    package func delete(_ bundleIdentifier: String) async throws(DaemonError) {
        try await write { db in
            try db.execute(sql: "DELETE FROM app WHERE bundleIdentifier = ?", arguments: [bundleIdentifier])
            guard db.changesCount == 1 else {
                throw DaemonError(.appNotFound, "No app is registered as \(bundleIdentifier).")
            }
            try db.execute(sql: "DELETE FROM set_aside WHERE app = ?", arguments: [bundleIdentifier])
            try db.execute(sql: "DELETE FROM app_resource WHERE app = ?", arguments: [bundleIdentifier])
        }
    }

    package func apps() async throws(DaemonError) -> [(bundleIdentifier: String, launchCommand: String?, quarantined: Quarantine?)] {
        try await read { db in
            try Row.fetchAll(db, sql: "SELECT bundleIdentifier, launchCommand, quarantineReason, quarantinedSince FROM app ORDER BY bundleIdentifier").map { row in
                let reason: String? = row["quarantineReason"]
                let since: Double? = row["quarantinedSince"]
                return (bundleIdentifier: row["bundleIdentifier"] as String, launchCommand: row["launchCommand"] as String?,
                        quarantined: reason.map { Quarantine(reason: $0, since: Date(timeIntervalSince1970: since ?? 0)) })
            }
        }
    }

    package func quarantine(_ bundleIdentifier: String, reason: String, at date: Date) async throws(DaemonError) {
        try await write { db in
            try db.execute(sql: """
                UPDATE app SET quarantineReason = ?, quarantinedSince = ?, nextWakeUp = NULL, watchesLocation = 0, showsNotifications = 0,
                    preparesContent = 0
                WHERE bundleIdentifier = ? AND quarantineReason IS NULL
                """, arguments: [reason, date.timeIntervalSince1970, bundleIdentifier])
        }
    }

    package func reset(_ app: StoredApp, at date: Date) async throws(DaemonError) -> Int {
        try await write { db in
            let bundleIdentifier = app.bundleIdentifier
            guard let row = try Row.fetchOne(db, sql: "SELECT keyHash, launchCommand, quarantineReason FROM app WHERE bundleIdentifier = ?",
                                             arguments: [bundleIdentifier]) else {
                throw DaemonError(.appNotFound, "No app is registered as \(bundleIdentifier).")
            }
            guard let reason = row["quarantineReason"] as String? else {
                throw DaemonError(.invalidRequest, "\(bundleIdentifier) is not quarantined: its state can be read, and is kept.")
            }
            // Each part as it is stored, with what the quarantine said of it.
            let arguments: StatementArguments = [date.timeIntervalSince1970, reason, bundleIdentifier]
            try db.execute(sql: """
                INSERT INTO set_aside (app, setAsideAt, reason, part, identifier, bytes)
                    SELECT bundleIdentifier, ?, ?, 'core', NULL, core FROM app WHERE bundleIdentifier = ?;
                """, arguments: arguments)
            try db.execute(sql: """
                INSERT INTO set_aside (app, setAsideAt, reason, part, identifier, bytes)
                    SELECT bundleIdentifier, ?, ?, 'categories', NULL, categories FROM app WHERE bundleIdentifier = ?;
                """, arguments: arguments)
            try db.execute(sql: """
                INSERT INTO set_aside (app, setAsideAt, reason, part, identifier, bytes)
                    SELECT app, ?, ?, 'pending', identifier, content FROM pending WHERE app = ?;
                """, arguments: arguments)
            try db.execute(sql: """
                INSERT INTO set_aside (app, setAsideAt, reason, part, identifier, bytes)
                    SELECT app, ?, ?, 'pendingTrigger', identifier, triggerDetail FROM pending WHERE app = ? AND triggerDetail IS NOT NULL;
                """, arguments: arguments)
            try db.execute(sql: """
                INSERT INTO set_aside (app, setAsideAt, reason, part, identifier, bytes)
                    SELECT app, ?, ?, 'delivered', identifier, notification FROM delivered WHERE app = ?;
                """, arguments: arguments)
            try db.execute(sql: """
                INSERT INTO set_aside (app, setAsideAt, reason, part, identifier, bytes)
                    SELECT app, ?, ?, 'queued', CAST(position AS TEXT), item FROM queued WHERE app = ?;
                """, arguments: arguments)
            let setAside = try Int.fetchOne(db, sql: "SELECT count(*) FROM set_aside WHERE app = ? AND setAsideAt = ?",
                                            arguments: [bundleIdentifier, date.timeIntervalSince1970]) ?? 0
            try db.execute(sql: "DELETE FROM app WHERE bundleIdentifier = ?", arguments: [bundleIdentifier])
            var machine = app.machine
            try Self.insertRow(
                db, bundleIdentifier: bundleIdentifier, keyHash: row["keyHash"], launchCommand: row["launchCommand"],
                machine: &machine, nextWakeUp: machine.nextWakeUpDate()?.timeIntervalSince1970, bootID: app.bootID
            )
            return setAside
        }
    }

    package func appsDue(by date: Date, limit: Int) async throws(DaemonError) -> [String] {
        try await read { db in
            try String.fetchAll(
                db.cachedStatement(sql: "SELECT bundleIdentifier FROM app WHERE nextWakeUp IS NOT NULL AND nextWakeUp <= ? ORDER BY nextWakeUp LIMIT ?"),
                arguments: [date.timeIntervalSince1970, limit]
            )
        }
    }

    package func appsWatchingLocation() async throws(DaemonError) -> [String] {
        try await read { db in try String.fetchAll(db, sql: "SELECT bundleIdentifier FROM app WHERE watchesLocation ORDER BY bundleIdentifier") }
    }

    package func appsShowingNotifications() async throws(DaemonError) -> [String] {
        try await read { db in try String.fetchAll(db, sql: "SELECT bundleIdentifier FROM app WHERE showsNotifications ORDER BY bundleIdentifier") }
    }

    package func appsPreparingContent() async throws(DaemonError) -> [String] {
        try await read { db in try String.fetchAll(db, sql: "SELECT bundleIdentifier FROM app WHERE preparesContent ORDER BY bundleIdentifier") }
    }

    package func postponeWakeUp(of bundleIdentifier: String, to date: Date) async throws(DaemonError) {
        try await write { db in
            try db.execute(sql: "UPDATE app SET nextWakeUp = ? WHERE bundleIdentifier = ?", arguments: [date.timeIntervalSince1970, bundleIdentifier])
        }
    }

    package func deviceState() async throws(DaemonError) -> DeviceState? {
        try await read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM device WHERE id = 1").map { row in
                let latitude: Double? = row["latitude"]
                let longitude: Double? = row["longitude"]
                var passcode: DevicePasscode?
                if let salt = row["passcodeSalt"] as Data?, let key = row["passcodeKey"] as Data?, let rounds = row["passcodeRounds"] as Int? {
                    let retryAfter = (row["passcodeRetryAfter"] as Double?).map(Date.init(timeIntervalSince1970:))
                    passcode = DevicePasscode(salt: salt, key: key, rounds: rounds, failures: row["passcodeFailures"], retryAfter: retryAfter)
                }
                return DeviceState(
                    isLocked: row["locked"],
                    location: latitude.flatMap { latitude in longitude.map { Coordinate(latitude: latitude, longitude: $0) } },
                    timeZoneIdentifier: row["timeZone"],
                    passcode: passcode,
                    focus: try (row["focus"] as Data?).map { try Self.decoder.decode(Focus.self, from: $0) },
                    summary: try (row["summary"] as Data?).map { try Self.decoder.decode(ScheduledSummary.self, from: $0) }
                )
            }
        }
    }

    /// Waits until no checkpoint of the write-ahead log is running or waiting to run (for tests).
    package func waitUntilCheckpointsAreDone() {
        checkpointer.waitUntilIdle()
    }

    /// The writer's `PRAGMA synchronous` level (2 = FULL: each commit is synced before it returns).
    package func writerSynchronousLevel() async throws(DaemonError) -> Int {
        try await write { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? -1 }
    }

    package func saveDeviceState(_ state: DeviceState) async throws(DaemonError) {
        try await write { db in
            try db.execute(
                sql: """
                    INSERT OR REPLACE INTO device
                    (id, locked, latitude, longitude, timeZone, passcodeSalt, passcodeKey, passcodeRounds, passcodeFailures, passcodeRetryAfter, focus, summary)
                    VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    state.isLocked, state.location?.latitude, state.location?.longitude, state.timeZoneIdentifier,
                    state.passcode?.salt, state.passcode?.key, state.passcode?.rounds, state.passcode?.failures ?? 0,
                    state.passcode?.retryAfter?.timeIntervalSince1970, try state.focus.map { try JSONEncoder().encode($0) },
                    try state.summary.map { try JSONEncoder().encode($0) },
                ]
            )
        }
    }

    /// Syncs the write-ahead log beside the writer, which goes on committing (see `LogSyncer`).
    package func waitForTheDisk() async throws(DaemonError) {
        do {
            try await syncer.sync()
        } catch {
            throw DaemonError(.storageFailed, "Writing to \(path) failed: \(Self.describe(error)).")
        }
    }

    package func linkSequence() async throws(DaemonError) -> Int64 {
        try await read { db in try Int64.fetchOne(db, sql: "SELECT sequence FROM link WHERE id = 1") ?? 0 }
    }

    package func saveLinkSequence(_ sequence: Int64, reports: [DeliveryLog.Report]) async throws(DaemonError) {
        try await write { db in
            try Self.insertReports(reports, in: db)
            try Self.recordLinkSequence(sequence, in: db)
        }
    }

    private static func insertReports(_ reports: [DeliveryLog.Report], in db: Database) throws {
        guard !reports.isEmpty else { return }
        let insert = try db.cachedStatement(sql: "INSERT INTO link_report (uniqueID, stage, at, detail) VALUES (?, ?, ?, ?)")
        for report in reports { try insert.execute(arguments: [report.uniqueID, report.stage.rawValue, report.at, report.detail]) }
        // Bounded while the gateway is out of reach: the oldest go first.
        try db.cachedStatement(sql: "DELETE FROM link_report WHERE number <= (SELECT MAX(number) FROM link_report) - ?")
            .execute(arguments: [deliveryReportLimit])
    }

    package func deliveryReports(limit: Int) async throws(DaemonError) -> (through: Int64, reports: [DeliveryLog.Report])? {
        try await read { db in
            let rows = try ColumnReader.rows(db, "SELECT number, uniqueID, stage, at, detail FROM link_report ORDER BY number LIMIT ?", [limit]) { columns in
                // A stage this version does not know (written by a later one) is skipped, and forgotten with the rest.
                let report = DeliveryLog.Stage(rawValue: columns.text(2) ?? "").map { stage in
                    DeliveryLog.Report(uniqueID: columns.text(1) ?? "", stage: stage, secondsSince1970: columns.double(3) ?? 0, detail: columns.text(4))
                }
                return (number: columns.integer(0) ?? 0, report: report)
            }
            guard let last = rows.last else { return nil }
            return (last.number, rows.compactMap(\.report))
        }
    }

    package func forgetDeliveryReports(through number: Int64) async throws(DaemonError) {
        // Not synced: reports forgotten and back after a power cut are sent again, and the gateway
        // skips those it has.
        try await writeUnsynced { db in try db.cachedStatement(sql: "DELETE FROM link_report WHERE number <= ?").execute(arguments: [number]) }
    }

    package func waitingCounts() async throws(DaemonError) -> (appMessages: Int, deliveryReports: Int) {
        try await read { db in
            (try Int.fetchOne(db, sql: "SELECT count(*) FROM queued") ?? 0, try Int.fetchOne(db, sql: "SELECT count(*) FROM link_report") ?? 0)
        }
    }

    private static func recordLinkSequence(_ sequence: Int64, in db: Database) throws {
        try db.cachedStatement(sql: """
            INSERT INTO link (id, sequence) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET sequence = max(sequence, excluded.sequence)
            """).execute(arguments: [sequence])
    }

    package func earliestWakeUp() async throws(DaemonError) -> Date? {
        try await read { db in
            try Double.fetchOne(db.cachedStatement(sql: "SELECT MIN(nextWakeUp) FROM app WHERE nextWakeUp IS NOT NULL"))
        }.map { Date(timeIntervalSince1970: $0) }
    }

    package func earliestWakeUps(limit: Int) async throws(DaemonError) -> [(bundleIdentifier: String, date: Date)] {
        try await read { db in
            try ColumnReader.rows(
                db, "SELECT bundleIdentifier, nextWakeUp FROM app WHERE nextWakeUp IS NOT NULL ORDER BY nextWakeUp, bundleIdentifier LIMIT ?", [limit]
            ) { columns in (bundleIdentifier: columns.text(0) ?? "", date: Date(timeIntervalSince1970: columns.double(1) ?? 0)) }
        }
    }
}

/// The columns of the row a statement is on, read with SQLite's own accessors; `nil` for NULL.
private struct ColumnReader {
    let statement: SQLiteStatement

    init(_ statement: SQLiteStatement) {
        self.statement = statement
    }

    /// Each row `sql` selects, read straight from its columns by `read`.
    static func rows<Value>(_ db: Database, _ sql: String, _ arguments: StatementArguments,
                            _ read: (ColumnReader) throws -> Value) throws -> [Value] {
        let statement = try db.cachedStatement(sql: sql)
        let cursor = try Row.fetchCursor(statement, arguments: arguments)
        let columns = ColumnReader(statement.sqliteStatement)
        var values: [Value] = []
        while try cursor.next() != nil { values.append(try read(columns)) }
        return values
    }

    private func isNull(_ index: Int32) -> Bool { sqlite3_column_type(statement, index) == SQLITE_NULL }

    func integer(_ index: Int32) -> Int64? {
        isNull(index) ? nil : sqlite3_column_int64(statement, index)
    }

    func double(_ index: Int32) -> Double? {
        isNull(index) ? nil : sqlite3_column_double(statement, index)
    }

    func text(_ index: Int32) -> String? {
        guard let bytes = sqlite3_column_text(statement, index) else { return nil }
        return String(decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(statement, index))), as: UTF8.self)
    }

    /// A blob's bytes in an array (empty for NULL): one allocation where `Data` takes two.
    func bytes(_ index: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(statement, index))
        guard count > 0, let bytes = sqlite3_column_blob(statement, index) else { return [] }
        return Array(UnsafeRawBufferPointer(start: bytes, count: count))
    }

    func blob(_ index: Int32) -> Data? {
        guard !isNull(index) else { return nil }
        let count = Int(sqlite3_column_bytes(statement, index))
        guard count > 0, let bytes = sqlite3_column_blob(statement, index) else { return Data() }
        return Data(bytes: bytes, count: count)
    }
}

/// A trigger as the `pending` table keeps it: its kind, whether it repeats and a time interval in
/// columns of their own (no decoding for the most common kind), and the rest (date components, a
/// region) as JSON.
private struct StoredTrigger {
    var kind: String?
    var repeats: Bool
    var interval: Double?
    var detail: Data?

    init(kind: String?, repeats: Bool, interval: Double?, detail: Data?) {
        self.kind = kind
        self.repeats = repeats
        self.interval = interval
        self.detail = detail
    }

    init(_ trigger: NotificationTrigger?) throws {
        repeats = trigger?.repeats ?? false
        switch trigger {
        case nil:
            kind = nil
        case .timeInterval(let seconds, _):
            kind = "timeInterval"
            interval = seconds
        case .calendar:
            kind = "calendar"
            detail = try SQLiteDaemonStore.encoder.encode(trigger)
        case .location:
            kind = "location"
            detail = try SQLiteDaemonStore.encoder.encode(trigger)
        case .push:
            kind = "push"
        }
    }

    func decoded() throws -> NotificationTrigger? {
        switch kind {
        case nil: return nil
        case "timeInterval": return .timeInterval(interval ?? 0, repeats: repeats)
        case "push": return .push
        default: return try SQLiteDaemonStore.decoder.decode(NotificationTrigger.self, from: detail ?? Data())
        }
    }
}

/// A core as JSON, its settled half encoded once for every app and step that share it.
///
/// A core holds the app's configuration, calendar, time zone, notification settings and the options
/// its prompt asked for: they hardly ever change and are alike on most apps of a device. Beside them
/// is what moves at nearly every step: the badge, the app's state, what waits for its delegate and
/// until when. A push shown to an app in the foreground changes the core twice (the `willPresent`
/// question, then its answer), and encoding the settled half was half of encoding the core. That
/// half is kept by value; the moving half is encoded each time, and the two JSON objects are joined
/// into one with the same keys as the core's own encoding, so it decodes as before and as rows
/// written by earlier versions do.
final class CoreJSON: Sendable {
    private typealias Core = NotificationCenterMachine.Core
    private static var capacity: Int { 64 }
    private let settled = Mutex<[Settled: Data]>([:])

    func encode(_ core: NotificationCenterMachine.Core, with encoder: StreamingJSONEncoder) throws -> Data {
        let key = Settled(core)
        let head: Data
        if let known = settled.withLock({ $0[key] }) {
            head = known
        } else {
            head = try encoder.encode(key)
            settled.withLock { settled in
                if settled.count >= Self.capacity { settled.removeAll(keepingCapacity: true) }
                settled[key] = head
            }
        }
        let tail = try encoder.encode(Moving(core))
        // `{"a":…}` and `{"b":…}` make `{"a":…,"b":…}`: both halves always have keys.
        var joined = Data(capacity: head.count + tail.count)
        joined.append(head.dropLast())
        joined.append(UInt8(ascii: ","))
        joined.append(tail.dropFirst())
        return joined
    }

    private struct Settled: Hashable, Encodable {
        var configuration: NotificationCenterMachine.Configuration
        var calendar: Calendar
        var timeZone: TimeZone
        var settings: NotificationSettings
        var promptOptions: AuthorizationOptions

        init(_ core: Core) {
            (configuration, calendar, timeZone, settings, promptOptions) = (core.configuration, core.calendar, core.timeZone, core.settings, core.promptOptions)
        }
    }

    /// The rest of the core, with the keys and the omitted absent values of its own encoding.
    private struct Moving: Encodable {
        let core: Core

        init(_ core: Core) { self.core = core }

        private enum CodingKeys: String, CodingKey {
            case badge, appState, location, isDeviceLocked, isAppReachable, promptCalls, awaitingPresentation, awaitingResponse, deadlines
            case awaitingRemoteNotification, heldRemoteNotification, backgroundBudget, preparing
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(core.badge, forKey: .badge)
            try container.encode(core.appState, forKey: .appState)
            try container.encodeIfPresent(core.location, forKey: .location)
            try container.encode(core.isDeviceLocked, forKey: .isDeviceLocked)
            try container.encode(core.isAppReachable, forKey: .isAppReachable)
            try container.encodeIfPresent(core.promptCalls, forKey: .promptCalls)
            try container.encode(core.awaitingPresentation, forKey: .awaitingPresentation)
            try container.encode(core.awaitingResponse, forKey: .awaitingResponse)
            try container.encode(core.deadlines, forKey: .deadlines)
            try container.encode(core.awaitingRemoteNotification, forKey: .awaitingRemoteNotification)
            try container.encodeIfPresent(core.heldRemoteNotification, forKey: .heldRemoteNotification)
            try container.encodeIfPresent(core.backgroundBudget, forKey: .backgroundBudget)
            try container.encodeIfPresent(core.preparing, forKey: .preparing)
        }
    }
}

/// A bounded memo of decoded values, keyed by their stored bytes.
private final class DecodedMemo<Value: Decodable & Sendable>: Sendable {
    private static var capacity: Int { 256 }
    private let values = Mutex<[Data: Value]>([:])

    func decode(_ data: Data, with decoder: JSONDecoder) throws -> Value {
        if let value = values.withLock({ $0[data] }) { return value }
        let value = try decoder.decode(Value.self, from: data)
        values.withLock { values in
            if values.count >= Self.capacity { values.removeAll(keepingCapacity: true) }
            values[data] = value
        }
        return value
    }
}
