import Foundation
import GRDB
import SQLiteCheckpoints
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
}
