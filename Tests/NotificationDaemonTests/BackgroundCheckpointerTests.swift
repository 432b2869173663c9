import Foundation
import GRDB
import SQLiteDurability
import TestSupport
import Testing

/// The write-ahead log is copied back into the database by a connection of its own, not by the
/// writer in its commits.
@Suite struct BackgroundCheckpointerTests {
    /// A pool whose writer leaves its checkpoints to `checkpointer`, with a table of blobs.
    static func pool(at path: String, _ checkpointer: BackgroundCheckpointer?) throws -> DatabasePool {
        let pool = try DatabasePool(path: path)
        try pool.writeWithoutTransaction { db in
            checkpointer?.takeCheckpoints(of: db)
            try db.execute(sql: "CREATE TABLE blob (data BLOB NOT NULL)")
        }
        return pool
    }

    static func fileSize(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
    }

    /// 40 commits of 8 KiB each: about 100 pages, far below the 1,000 of SQLite's own checkpoints.
    static func write(_ pool: DatabasePool) throws {
        for _ in 0..<40 {
            try pool.write { db in try db.execute(sql: "INSERT INTO blob (data) VALUES (?)", arguments: [Data(count: 8192)]) }
        }
    }

    @Test func theLogIsCopiedIntoTheDatabaseOnceItHoldsEnoughPages() throws {
        let path = try makeTestDirectory().appendingPathComponent("db.sqlite").path
        let checkpointer = BackgroundCheckpointer(path: path, pagesBeforeCheckpoint: 16)
        let pool = try Self.pool(at: path, checkpointer)
        try Self.write(pool)
        checkpointer.waitUntilIdle()

        #expect(checkpointer.completedCheckpoints >= 1)
        // The database file itself now holds (nearly) all the blobs, not only the log.
        #expect(try Self.fileSize(path) >= 30 * 8192)
        #expect(try pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM blob") } == 40)
    }

    /// The same writes without the checkpointer: nothing reaches the database file before SQLite's
    /// own threshold, so what the test above sees is the checkpointer's doing.
    @Test func withoutItTheSameWritesStayInTheLog() throws {
        let path = try makeTestDirectory().appendingPathComponent("db.sqlite").path
        let pool = try Self.pool(at: path, nil)
        try Self.write(pool)

        #expect(try Self.fileSize(path) < 8 * 8192)
        #expect(try pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM blob") } == 40)
    }

    /// The writer no longer checkpoints in its commits while its log is small: with the checkpointer
    /// gone, the log keeps its 100 or so pages at a threshold of 64. Past four times the threshold it
    /// checkpoints itself, so the log stays bounded whatever happens beside it.
    @Test func theWriterCheckpointsOnlyWhenTheLogOutgrowsFourTimesTheThreshold() throws {
        let path = try makeTestDirectory().appendingPathComponent("db.sqlite").path
        var checkpointer: BackgroundCheckpointer? = BackgroundCheckpointer(path: path, pagesBeforeCheckpoint: 64)
        let pool = try Self.pool(at: path, checkpointer)
        checkpointer = nil
        try Self.write(pool)
        #expect(try Self.fileSize(path) < 8 * 8192)

        for _ in 0..<4 { try Self.write(pool) }
        #expect(try Self.fileSize(path) >= 100 * 8192)
        #expect(try pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM blob") } == 200)
    }

    /// A write that does not wait for the disk leaves the writer syncing every other commit, whether
    /// it commits or fails (and is then rolled back).
    @Test func aWriteThatDoesNotWaitForTheDiskLeavesTheWriterSyncingTheRest() async throws {
        let path = try makeTestDirectory().appendingPathComponent("db.sqlite").path
        let pool = try Self.pool(at: path, nil)
        try await pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }

        try await pool.writeWithoutWaitingForTheDisk { db in
            #expect(try Int.fetchOne(db, sql: "PRAGMA synchronous") == 1)
            try db.execute(sql: "INSERT INTO blob (data) VALUES (x'01')")
        }
        struct Refused: Error {}
        await #expect(throws: Refused.self) {
            try await pool.writeWithoutWaitingForTheDisk { db in
                try db.execute(sql: "INSERT INTO blob (data) VALUES (x'02')")
                throw Refused()
            }
        }

        #expect(try await pool.write { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") } == 2)
        #expect(try await pool.read { db in try Data.fetchAll(db, sql: "SELECT data FROM blob") } == [Data([1])])
    }
}
