import Foundation
import GRDB
import SQLiteDurability
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The write-ahead log synced beside the writer: each wait covers what was committed before it.
@Suite(.timeLimit(.minutes(1))) struct LogSyncerTests {
    /// Syncs that wait for the test to let them through, noting the file each was for.
    final class HeldSyncs: Sendable {
        private struct State {
            var started: [ino_t] = []
            var gates: [DispatchSemaphore] = []
        }
        private let state = Mutex(State())

        /// How many syncs have started.
        var started: Int { state.withLock { $0.started.count } }
        /// The files (inodes) the syncs were for, in order.
        var files: [ino_t] { state.withLock { $0.started } }

        func sync(_ descriptor: Int32) -> Int32 {
            let gate = DispatchSemaphore(value: 0)
            state.withLock {
                $0.started.append(LogSyncerTests.inode(of: descriptor))
                $0.gates.append(gate)
            }
            gate.wait()
            return fdatasync(descriptor)
        }

        /// Lets sync `index` (counting from 0) finish.
        func finish(_ index: Int) { state.withLock { $0.gates[index] }.signal() }
    }

    /// A count shared with the tasks and syncs of a test.
    final class SharedCount: Sendable {
        let count = Atomic<Int>(0)
    }

    /// Syncs that note the file (inode) each was for.
    final class SyncedFiles: Sendable {
        private let files = Mutex<[ino_t]>([])
        var all: [ino_t] { files.withLock { $0 } }

        func sync(_ descriptor: Int32) -> Int32 {
            files.withLock { $0.append(LogSyncerTests.inode(of: descriptor)) }
            return fdatasync(descriptor)
        }
    }

    static func inode(of descriptor: Int32) -> ino_t {
        var status = stat()
        fstat(descriptor, &status)
        return status.st_ino
    }

    static func inode(_ path: String) throws -> ino_t {
        var status = stat()
        guard stat(path, &status) == 0 else { throw CocoaError(.fileNoSuchFile) }
        return status.st_ino
    }

    /// A wait that comes while a sync runs is not covered by it (that sync may have begun before the
    /// commit the caller waits for): it returns after the next, which also serves every wait that
    /// came meanwhile.
    @Test func aWaitIsCoveredOnlyByASyncBegunAfterIt() async throws {
        let path = try makeTestDirectory().appendingPathComponent("db.sqlite").path
        let pool = try DatabasePool(path: path)
        try await pool.write { db in try db.execute(sql: "CREATE TABLE item (value INTEGER)") }
        let held = HeldSyncs()
        let log = try #require(try await pool.writeWithoutTransaction { LogSyncer.logPath(of: $0) })
        let syncer = LogSyncer(logPath: log, syncFile: { held.sync($0) })

        let first = Task { try await syncer.sync() }
        try await eventually("the first sync to start") { held.started == 1 }
        try await pool.writeWithoutWaitingForTheDisk { db in try db.execute(sql: "INSERT INTO item VALUES (1)") }
        let returned = SharedCount()
        let later = (0..<3).map { _ in
            Task {
                try await syncer.sync()
                returned.count.add(1, ordering: .relaxed)
            }
        }
        try await eventually("the three waits") { syncer.waiting == 4 }
        held.finish(0)
        try await first.value
        // The three waits began during the first sync: they need a second, which starts once the
        // first ends, and which they share.
        try await eventually("a second sync to start") { held.started == 2 }
        #expect(returned.count.load(ordering: .relaxed) == 0)
        held.finish(1)
        for wait in later { try await wait.value }
        #expect(returned.count.load(ordering: .relaxed) == 3)
        #expect(held.started == 2)
        #expect(syncer.syncs == 2)
        // The file synced is the database's log.
        #expect(held.files == [try Self.inode(path + "-wal"), try Self.inode(path + "-wal")])
    }

    /// A log removed when its database was closed, and made again when it is opened, is the one
    /// synced next; with no log at all (the database is not open) the wait fails, and the next one,
    /// with the log back, syncs it.
    @Test func aLogMadeAgainIsTheOneSynced() async throws {
        let path = try makeTestDirectory().appendingPathComponent("db.sqlite").path
        let syncs = SyncedFiles()
        let syncer = LogSyncer(logPath: path + "-wal", syncFile: syncs.sync)
        await #expect(throws: LogSyncer.Failure.self) { try await syncer.sync() }

        var pool: DatabasePool? = try DatabasePool(path: path)
        try await pool!.write { db in try db.execute(sql: "CREATE TABLE item (value INTEGER)") }
        try await syncer.sync()
        let firstLog = try Self.inode(path + "-wal")
        pool = nil
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))

        // The old log is open in the syncer until it looks again: the new one cannot have its inode.
        pool = try DatabasePool(path: path)
        try await pool!.writeWithoutWaitingForTheDisk { db in try db.execute(sql: "INSERT INTO item VALUES (1)") }
        try await syncer.sync()
        let secondLog = try Self.inode(path + "-wal")
        #expect(syncs.all == [firstLog, secondLog])
        _ = pool
    }

    /// The log synced is the one SQLite writes: for a database opened through a symbolic link, the
    /// one beside the file linked to (SQLite resolves the link), not beside the link.
    @Test func theLogSyncedIsSQLitesOwnThroughALink() async throws {
        let directory = try makeTestDirectory()
        let target = directory.appendingPathComponent("data/db.sqlite").path
        try FileManager.default.createDirectory(atPath: directory.appendingPathComponent("data").path, withIntermediateDirectories: true)
        let link = directory.appendingPathComponent("link.sqlite").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        let pool = try DatabasePool(path: link)
        try await pool.write { db in try db.execute(sql: "CREATE TABLE item (value INTEGER)") }

        let log = try #require(try await pool.writeWithoutTransaction { LogSyncer.logPath(of: $0) })
        #expect(try Self.inode(log) == Self.inode(target + "-wal"))
        #expect(!FileManager.default.fileExists(atPath: link + "-wal"))
        let synced = SyncedFiles()
        let syncer = LogSyncer(logPath: log, syncFile: synced.sync)
        try await syncer.sync()
        #expect(synced.all == [try Self.inode(target + "-wal")])
    }

    /// A sync that failed fails every later wait too: the system may have dropped the pages it
    /// could not write, and a later sync would succeed without them.
    @Test func aFailedSyncFailsEveryLaterWait() async throws {
        let path = try makeTestDirectory().appendingPathComponent("db.sqlite").path
        let pool = try DatabasePool(path: path)
        try await pool.write { db in try db.execute(sql: "CREATE TABLE item (value INTEGER)") }
        let fails = SharedCount()
        fails.count.store(1, ordering: .relaxed)
        let log = try #require(try await pool.writeWithoutTransaction { LogSyncer.logPath(of: $0) })
        let syncer = LogSyncer(logPath: log) { descriptor in
            guard fails.count.load(ordering: .relaxed) == 1 else { return fdatasync(descriptor) }
            errno = EIO
            return -1
        }
        await #expect(throws: LogSyncer.Failure.self) { try await syncer.sync() }
        fails.count.store(0, ordering: .relaxed)
        try await pool.writeWithoutWaitingForTheDisk { db in try db.execute(sql: "INSERT INTO item VALUES (1)") }
        await #expect(throws: LogSyncer.Failure.self) { try await syncer.sync() }
    }
}
