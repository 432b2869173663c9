package import Dispatch
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
package final class LogSyncer: Sendable {
    package struct Failure: Error, CustomStringConvertible {
        package let path: String
        package let errno: Int32
        package var description: String { "syncing \(path) failed: \(String(cString: strerror(errno)))" }
    }

    private struct State {
        /// The calls so far; a sync begun after call `n` covers every call up to `n`.
        var calls: UInt64 = 0
        var isSyncing = false
        var waiting: [(call: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []
        /// Syncs run so far.
        var syncs = 0
    }

    private let path: String
    private let queue: DispatchQueue
    private let state = Mutex(State())
    private let syncFile: @Sendable (Int32) -> Int32
    /// The log, opened at the first sync; used only on `queue`.
    nonisolated(unsafe) private var descriptor: Int32 = -1

    /// - Parameters:
    ///   - databasePath: the database whose log (`<path>-wal`) is synced.
    ///   - syncFile: syncs the open log, as `fdatasync` (for tests to watch or hold syncs).
    package init(databasePath: String, syncFile: @escaping @Sendable (Int32) -> Int32 = { fdatasync($0) }) {
        path = databasePath + "-wal"
        queue = DispatchQueue(label: "syncs of \(path)")
        self.syncFile = syncFile
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
            let covered = state.withLock(\.calls)
            let result = syncLog()
            let (finished, goesOn) = state.withLock { state in
                state.syncs += 1
                let finished = state.waiting.filter { $0.call <= covered }
                state.waiting.removeAll { $0.call <= covered }
                state.isSyncing = !state.waiting.isEmpty
                return (finished, state.isSyncing)
            }
            for waiter in finished { waiter.continuation.resume(with: result) }
            if !goesOn { return }
        }
    }

    private func syncLog() -> Result<Void, any Error> {
        // A log removed (the last connection closed it) and made again is another file.
        var status = stat()
        if descriptor >= 0, fstat(descriptor, &status) == 0, status.st_nlink == 0 {
            close(descriptor)
            descriptor = -1
        }
        if descriptor < 0 {
            descriptor = open(path, O_RDONLY | O_CLOEXEC)
            // No log: nothing was committed to one since the database was last closed, and the
            // closing connection copied the last one into the database and synced it.
            if descriptor < 0 { return errno == ENOENT ? .success(()) : .failure(Failure(path: path, errno: errno)) }
        }
        while syncFile(descriptor) != 0 {
            guard errno == EINTR else { return .failure(Failure(path: path, errno: errno)) }
        }
        return .success(())
    }
}
