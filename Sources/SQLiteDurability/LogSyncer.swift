internal import Dispatch
package import GRDB
internal import GRDBSQLite
internal import Synchronization

#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// Makes what a database's writer committed without waiting for the disk durable: syncs its
/// write-ahead log on a queue of its own, beside the writer, which goes on committing meanwhile.
///
/// A commit with `synchronous = FULL` syncs the log before it returns, and every write queued
/// behind it waits for that sync (half a millisecond to a few here, under load). A writer that
/// commits with `NORMAL` and needs durability only later (before it tells another machine that it
/// holds something, say) asks here instead: each ``sync()`` returns once a sync of the log begun
/// after the call ended, so every commit made before the call is then on the disk, as SQLite's own
/// sync of the log would have left it. Calls that come while a sync runs share the next one.
///
/// The log's frames carry their own checksums: SQLite's recovery keeps the commits whose frames
/// all reached the disk, so a log synced from here is recovered as one synced by SQLite.
///
/// A failed sync fails every later one too. The system may have dropped the pages it could not
/// write, marked clean: a later sync would succeed without them, and what waits for the disk would
/// go on as if they were there. Only a process that opens the database again knows what it holds.
package final class LogSyncer: Sendable {
    package struct Failure: Error, CustomStringConvertible {
        package let path: String
        package let errno: Int32
        package var description: String {
            errno == ENOENT
                ? "syncing \(path) failed: the log is not there (its database is not open)"
                : "syncing \(path) failed (\(String(cString: strerror(errno)))); nothing is synced from here on: open the database again"
        }
    }

    private struct State {
        /// The calls so far; a sync begun after call `n` covers every call up to `n`.
        var calls: UInt64 = 0
        var isSyncing = false
        var waiting: [(call: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []
        /// Syncs run so far.
        var syncs = 0
        /// The first sync that failed: every later call fails with it.
        var failure: Failure?
    }

    private let path: String
    private let queue: DispatchQueue
    private let state = Mutex(State())
    private let syncFile: @Sendable (Int32) -> Int32
    /// The log, opened at the first sync; used only on `queue`.
    nonisolated(unsafe) private var descriptor: Int32 = -1

    /// - Parameters:
    ///   - logPath: the write-ahead log to sync, as SQLite names it (``logPath(of:)``).
    ///   - syncFile: syncs the open log, as `fdatasync` (for tests to watch or hold syncs).
    package init(logPath: String, syncFile: @escaping @Sendable (Int32) -> Int32 = { fdatasync($0) }) {
        path = logPath
        queue = DispatchQueue(label: "syncs of \(path)")
        self.syncFile = syncFile
    }

    /// The path of the write-ahead log of `db`'s main database, as SQLite itself names it (from the
    /// database's full path, links resolved).
    package static func logPath(of db: Database) -> String? {
        guard let name = sqlite3_db_filename(db.sqliteConnection, "main"), let log = sqlite3_filename_wal(name) else { return nil }
        let path = String(cString: log)
        return path.isEmpty ? nil : path
    }

    deinit {
        // SQLite takes no lock on the log file itself (its locks are in the database and the
        // shared-memory file), so closing this descriptor releases none of SQLite's.
        if descriptor >= 0 { close(descriptor) }
    }

    /// The syncs run so far.
    package var syncs: Int { state.withLock(\.syncs) }
    /// The calls of ``sync()`` waiting now.
    package var waiting: Int { state.withLock(\.waiting.count) }

    /// Returns once everything committed to the log before this call is on the disk.
    package func sync() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let starts = state.withLock { state in
                state.calls += 1
                state.waiting.append((state.calls, continuation))
                defer { state.isSyncing = true }
                return !state.isSyncing
            }
            if starts { queue.async { self.syncWhileAsked() } }
        }
    }

    /// Syncs until every call has been covered by a sync begun after it.
    private func syncWhileAsked() {
        while true {
            let (covered, failed) = state.withLock { ($0.calls, $0.failure) }
            let result: Result<Void, Failure> = failed.map { .failure($0) } ?? syncLog()
            let (finished, goesOn) = state.withLock { state in
                state.syncs += 1
                // A log not there wrote nothing: only a failed write of the disk stays.
                if case .failure(let failure) = result, failure.errno != ENOENT, state.failure == nil { state.failure = failure }
                let finished = state.waiting.filter { $0.call <= covered }
                state.waiting.removeAll { $0.call <= covered }
                state.isSyncing = !state.waiting.isEmpty
                return (finished, state.isSyncing)
            }
            for waiter in finished { waiter.continuation.resume(with: result.mapError { $0 }) }
            if !goesOn { return }
        }
    }

    private func syncLog() -> Result<Void, Failure> {
        // A log removed (the last connection closed it) and made again is another file.
        var status = stat()
        if descriptor >= 0, fstat(descriptor, &status) == 0, status.st_nlink == 0 {
            close(descriptor)
            descriptor = -1
        }
        if descriptor < 0 {
            // No log (ENOENT): its database is not open, and nothing waits for it.
            descriptor = open(path, O_RDONLY | O_CLOEXEC)
            if descriptor < 0 { return .failure(Failure(path: path, errno: errno)) }
        }
        while syncFile(descriptor) != 0 {
            guard errno == EINTR else { return .failure(Failure(path: path, errno: errno)) }
        }
        return .success(())
    }
}
