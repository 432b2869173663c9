package import Dispatch
package import GRDB
internal import GRDBSQLite
internal import Synchronization

/// Copies a database's write-ahead log back into its file on a connection and a queue of its own,
/// so that the writer does not do it inside a commit (unless the log outgrows four times the
/// threshold; see ``takeCheckpoints(of:)``).
///
/// SQLite's automatic checkpoint runs in the connection that commits, once the log holds 1,000
/// pages: that commit (and every write waiting behind it) then also copies the log's pages into the
/// database file and syncs it, several milliseconds on this kind of disk, a few times a second under
/// load. Here the writer only notes the log's size after each commit (`sqlite3_wal_hook`, which also
/// turns its automatic checkpoint off), and a passive checkpoint runs on another connection, which
/// SQLite lets run beside the writer: it takes no lock a writer or reader needs.
///
/// What a checkpoint does is unchanged: it syncs the log, copies what no reader still needs, and
/// syncs the database. The writer restarts the log (and cuts it back to its `journal_size_limit`) at
/// its first commit after a checkpoint that copied it all.
package final class BackgroundCheckpointer: Sendable {
    private struct State {
        var pacing: CheckpointPacing
        var completed = 0
    }

    private let path: String
    private let queue: DispatchQueue
    private let state: Mutex<State>
    /// Opened at the first checkpoint, used only on `queue`.
    nonisolated(unsafe) private var connection: OpaquePointer?

    /// - Parameters:
    ///   - pagesBeforeCheckpoint: the pages in the log that start a checkpoint (SQLite's own default is 1,000).
    ///   - queue: the serial queue checkpoints run on (by default, one of the checkpointer's own).
    package init(path: String, pagesBeforeCheckpoint: Int32 = 1000, queue: DispatchQueue? = nil) {
        self.path = path
        state = Mutex(State(pacing: CheckpointPacing(threshold: pagesBeforeCheckpoint)))
        self.queue = queue ?? DispatchQueue(label: "checkpoints of \(path)")
    }

    deinit {
        if let connection { sqlite3_close_v2(connection) }
    }

    /// The checkpoints run so far.
    package var completedCheckpoints: Int { state.withLock(\.completed) }

    /// Makes `writer` leave its checkpoints to this checkpointer, for as long as the checkpointer
    /// lives (the connection holds it weakly), at the times ``CheckpointPacing`` gives. With the
    /// checkpointer gone, the writer checkpoints in its commit once the log holds four times
    /// `pagesBeforeCheckpoint`, as SQLite's own checkpoints do, so the log stays bounded.
    package func takeCheckpoints(of writer: Database) {
        let hook = Unmanaged.passRetained(Hook(self, writerCheckpointsAt: state.withLock(\.pacing.writerCheckpointsAt))).toOpaque()
        // The hook's few bytes stay with the connection for good: SQLite has no destructor for them,
        // and a commit may come after the checkpointer is gone.
        sqlite3_wal_hook(writer.sqliteConnection, { context, connection, _, pages in
            guard let context else { return SQLITE_OK }
            // Called after the commit, with the write lock released (as SQLite's own hook is).
            let hook = Unmanaged<Hook>.fromOpaque(context).takeUnretainedValue()
            let action = hook.checkpointer.map { checkpointer in checkpointer.state.withLock { $0.pacing.committed(logHolding: pages) } }
                ?? (pages >= hook.writerCheckpointsAt ? .inTheCommit : nil)
            switch action {
            case .inTheCommit?: sqlite3_wal_checkpoint_v2(connection, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
            case .beside?: hook.checkpointer?.start()
            case nil: break
            }
            return SQLITE_OK
        }, hook)
    }

    private final class Hook: Sendable {
        weak let checkpointer: BackgroundCheckpointer?
        let writerCheckpointsAt: Int32
        init(_ checkpointer: BackgroundCheckpointer, writerCheckpointsAt: Int32) {
            self.checkpointer = checkpointer
            self.writerCheckpointsAt = writerCheckpointsAt
        }
    }

    /// Waits until no checkpoint is running or waiting to run.
    package func waitUntilIdle() {
        queue.sync {}
    }

    /// Runs a checkpoint on the queue (the pacing counts it as running).
    private func start() {
        // The work item keeps this checkpointer alive until it has run.
        queue.async { self.checkpoint() }
    }

    private func checkpoint() {
        // Passive: copies what it can without waiting for readers or writers, and never calls the
        // busy handler. A busy result (the writer's own checkpoint under way) is left to the pacing.
        var copied: Int32 = 0
        let result = openedConnection().map { sqlite3_wal_checkpoint_v2($0, nil, SQLITE_CHECKPOINT_PASSIVE, nil, &copied) }
        state.withLock { state in
            state.pacing.finished(copied: result == SQLITE_OK ? copied : nil)
            if result == SQLITE_OK { state.completed += 1 }
        }
    }

    private func openedConnection() -> OpaquePointer? {
        if let connection { return connection }
        var connection: OpaquePointer?
        guard sqlite3_open_v2(path, &connection, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK, let connection else {
            sqlite3_close_v2(connection)
            return nil
        }
        // The log synced before its pages are copied, and the database after: as the writer's own checkpoints did.
        sqlite3_exec(connection, "PRAGMA synchronous = FULL", nil, nil, nil)
        self.connection = connection
        return connection
    }
}

/// When a database's log is copied back, decided after each commit from the pages the log holds.
///
/// A log starts again from its beginning only at a write that follows a checkpoint that copied all
/// of it. A checkpoint beside a writer under a steady stream of commits never does (commits land
/// while it runs), so, left to it, the log grew to four times the threshold, and checkpoints ran
/// one after the other all the while, each syncing the log and the database for the few pages the
/// commits had added meanwhile: under `serve` at 1,000 pushes/s, about half of the process's syncs.
/// Here:
/// - below `threshold` pages, nothing (the log started again, or is young);
/// - from `threshold`, checkpoints beside the writer, one at a time, each copying what the commits
///   added while the last ran;
/// - once one has left less than an eighth of the threshold behind it, the writer copies the rest
///   in its next commit, so the log is copied whole and starts again at the following write;
/// - from four times the threshold, the writer copies whatever is left in its commit, so the log
///   stays bounded whatever happens beside it.
package struct CheckpointPacing: Sendable {
    package enum Action: Sendable, Equatable {
        /// A passive checkpoint on the checkpointer's own connection, beside the writer.
        case beside
        /// A passive checkpoint on the writer's connection, in the commit just made.
        case inTheCommit
    }

    package let threshold: Int32
    /// Whether a checkpoint beside the writer is queued or running.
    package private(set) var isRunning = false
    /// The pages of this log the last checkpoint beside the writer left copied.
    private var copied: Int32?

    package init(threshold: Int32) {
        self.threshold = max(1, threshold)
    }

    /// The pages from which the writer copies the log in its commit, whatever runs beside it.
    package var writerCheckpointsAt: Int32 { threshold.multipliedReportingOverflow(by: 4).partialValue }

    /// What to do after a commit that left `pages` in the log.
    package mutating func committed(logHolding pages: Int32) -> Action? {
        if pages >= writerCheckpointsAt { return .inTheCommit }
        guard pages >= threshold else {
            // A log that started again: what was copied of the last one says nothing of this one.
            copied = nil
            return nil
        }
        guard !isRunning else { return nil }
        if let copied, pages - copied < max(1, threshold / 8) {
            // Once: if this does not copy it all (a reader still needs the log), the next commit
            // starts one beside the writer again.
            self.copied = nil
            return .inTheCommit
        }
        isRunning = true
        return .beside
    }

    /// A checkpoint beside the writer ended, having copied the log's first `copied` pages (nil:
    /// it could not run).
    package mutating func finished(copied: Int32?) {
        isRunning = false
        if let copied { self.copied = copied }
    }
}
