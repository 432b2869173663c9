import Dispatch
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
    static func write(_ pool: DatabasePool, afterEach: () -> Void = {}) throws {
        for _ in 0..<40 {
            try pool.write { db in try db.execute(sql: "INSERT INTO blob (data) VALUES (?)", arguments: [Data(count: 8192)]) }
            afterEach()
        }
    }

    @Test func theLogIsCopiedIntoTheDatabaseOnceItHoldsEnoughPages() throws {
        let path = try makeTestDirectory().appendingPathComponent("db.sqlite").path
        let checkpointer = BackgroundCheckpointer(path: path, pagesBeforeCheckpoint: 16)
        let pool = try Self.pool(at: path, checkpointer)
        // Each checkpoint ends before the next commit: what is left in the log at the end is less
        // than the threshold's worth (the rest of the test's other commits are left to chance).
        try Self.write(pool, afterEach: checkpointer.waitUntilIdle)

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

    /// Under a steady stream of commits a checkpoint beside the writer never copies the whole log
    /// (commits land while it runs, as here a reader's snapshot stops it), so the log could not
    /// start again, and grew to four times the threshold. Once a checkpoint has left only a few pages
    /// behind, the writer copies them in its commit, and the log starts again at the next write.
    @Test func theWriterFinishesALogNearlyCopiedAndItStartsAgain() async throws {
        let path = try makeTestDirectory().appendingPathComponent("db.sqlite").path
        let queue = DispatchQueue(label: "checkpoints held by the test")
        let checkpointer = BackgroundCheckpointer(path: path, pagesBeforeCheckpoint: 128, queue: queue)
        let pool = try Self.pool(at: path, checkpointer)
        // The log file is cut back when it starts again: its size shows where the log stands.
        try await pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA journal_size_limit = 0") }
        func commit() async throws {
            try await pool.write { db in try db.execute(sql: "INSERT INTO blob (data) VALUES (?)", arguments: [Data(count: 8192)]) }
        }
        /// Holds the checkpointer's queue until the returned semaphore is signalled.
        func hold() -> DispatchSemaphore {
            let release = DispatchSemaphore(value: 0)
            queue.async { release.wait() }
            return release
        }

        // Past the threshold, the checkpoint beside the writer held.
        var held = hold()
        for _ in 0..<50 { try await commit() }
        // A reader's snapshot from now, and one more commit: the checkpoint copies up to the snapshot.
        let reading = DispatchSemaphore(value: 0), readerDone = DispatchSemaphore(value: 0), endRead = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            _ = try? pool.read { db in
                _ = try Int.fetchOne(db, sql: "SELECT count(*) FROM blob")
                reading.signal()
                endRead.wait()
            }
            readerDone.signal()
        }
        reading.wait()
        try await commit()
        held.signal()
        checkpointer.waitUntilIdle()
        #expect(checkpointer.completedCheckpoints == 1)
        endRead.signal()
        readerDone.wait()

        // Nothing beside the writer runs now (held): the next commit copies the few pages left.
        held = hold()
        try await commit()
        #expect(try Self.fileSize(path + "-wal") > 128 * 4096)
        // So the log starts again at the following write.
        try await commit()
        #expect(try Self.fileSize(path + "-wal") < 16 * 4096)
        held.signal()
        checkpointer.waitUntilIdle()
        #expect(try await pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM blob") } == 53)
    }

    @Test func thePacingOfCheckpoints() {
        var pacing = CheckpointPacing(threshold: 1000)
        #expect(pacing.committed(logHolding: 999) == nil)
        #expect(pacing.committed(logHolding: 1000) == .beside)
        // One at a time.
        #expect(pacing.committed(logHolding: 1030) == nil)
        pacing.finished(copied: 1000)
        // It left 300 pages behind: too many for the writer's commit, so another beside it.
        #expect(pacing.committed(logHolding: 1300) == .beside)
        pacing.finished(copied: 1300)
        // That one left 100 behind, under an eighth: the writer copies them in its commit, once.
        #expect(pacing.committed(logHolding: 1400) == .inTheCommit)
        #expect(pacing.committed(logHolding: 1430) == .beside)
        pacing.finished(copied: nil)
        #expect(pacing.committed(logHolding: 1460) == .beside)
        // From four times the threshold the writer copies whatever is left, running or not.
        #expect(pacing.committed(logHolding: 4000) == .inTheCommit)
        pacing.finished(copied: 3900)
        // The log started again: nothing copied of the old one counts.
        #expect(pacing.committed(logHolding: 30) == nil)
        #expect(pacing.committed(logHolding: 1000) == .beside)
        #expect(pacing.isRunning)
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
