internal import Dispatch
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
        var isScheduled = false
        var completed = 0
    }

    private let path: String
    private let pagesBeforeCheckpoint: Int32
    private let queue: DispatchQueue
    private let state = Mutex(State())
    /// Opened at the first checkpoint, used only on `queue`.
    nonisolated(unsafe) private var connection: OpaquePointer?

    /// - Parameter pagesBeforeCheckpoint: the pages in the log that start a checkpoint (SQLite's own default is 1,000).
    package init(path: String, pagesBeforeCheckpoint: Int32 = 1000) {
        self.path = path
        self.pagesBeforeCheckpoint = max(1, pagesBeforeCheckpoint)
        queue = DispatchQueue(label: "checkpoints of \(path)")
    }

    deinit {
        if let connection { sqlite3_close_v2(connection) }
    }

    /// The checkpoints run so far.
    package var completedCheckpoints: Int { state.withLock(\.completed) }

    /// Makes `writer` leave its checkpoints to this checkpointer, for as long as the checkpointer
    /// lives (the connection holds it weakly).
    ///
    /// A log can only start again from its beginning when a write begins after a checkpoint that
    /// copied all of it; under a steady stream of commits, one running beside the writer may keep
    /// missing that moment. So once the log holds four times `pagesBeforeCheckpoint` (or the
    /// checkpointer is gone), the writer checkpoints in its commit, as SQLite's own checkpoints do:
    /// the log stays bounded, and only under that load does a commit pay for it.
    package func takeCheckpoints(of writer: Database) {
        let hook = Unmanaged.passRetained(Hook(self, writerCheckpointsAt: pagesBeforeCheckpoint.multipliedReportingOverflow(by: 4).partialValue)).toOpaque()
        // The hook's few bytes stay with the connection for good: SQLite has no destructor for them,
        // and a commit may come after the checkpointer is gone.
        sqlite3_wal_hook(writer.sqliteConnection, { context, connection, _, pages in
            guard let context else { return SQLITE_OK }
            let hook = Unmanaged<Hook>.fromOpaque(context).takeUnretainedValue()
            if pages >= hook.writerCheckpointsAt {
                // Called after the commit, with the write lock released: as SQLite's own hook does.
                // Busy: the checkpointer's own is under way, and copies only what was committed when it
                // began; one more after it copies this commit (else, on a slow disk, the last commits
                // of a burst stayed in the log until the next write).
                if sqlite3_wal_checkpoint_v2(connection, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil) == SQLITE_BUSY {
                    hook.checkpointer?.schedule()
                }
            } else if let checkpointer = hook.checkpointer, pages >= checkpointer.pagesBeforeCheckpoint {
                checkpointer.schedule()
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

    private func schedule() {
        let starts = state.withLock { state -> Bool in
            guard !state.isScheduled else { return false }
            state.isScheduled = true
            return true
        }
        guard starts else { return }
        // The work item keeps this checkpointer alive until it has run.
        queue.async { self.checkpoint() }
    }

    private func checkpoint() {
        state.withLock { $0.isScheduled = false }
        guard let connection = openedConnection() else { return }
        // Passive: copies what it can without waiting for readers or writers, and never calls the
        // busy handler. A busy result (another checkpoint under way) is left for the next commit.
        var logged: Int32 = 0
        var copied: Int32 = 0
        let result = sqlite3_wal_checkpoint_v2(connection, nil, SQLITE_CHECKPOINT_PASSIVE, &logged, &copied)
        if result == SQLITE_OK { state.withLock { $0.completed += 1 } }
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
