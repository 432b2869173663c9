package import GRDB

extension DatabaseWriter {
    /// Runs `body` in a transaction committed without waiting for the disk (`synchronous = NORMAL`
    /// for that commit alone; the writer's own level, `FULL`, is set again after it), for what is safe
    /// to lose in a power cut. A crash of the process loses none of it, as its pages are in the
    /// write-ahead log; the next synced commit syncs the log whole, and makes it durable too.
    package func writeWithoutWaitingForTheDisk(_ body: @escaping @Sendable (Database) throws -> Void) async throws {
        try await writeWithoutTransaction { db in
            try db.cachedStatement(sql: "PRAGMA synchronous = NORMAL").execute()
            let written = Result { try db.inTransaction { try body(db); return .commit } }
            try db.cachedStatement(sql: "PRAGMA synchronous = FULL").execute()
            try written.get()
        }
    }
}
