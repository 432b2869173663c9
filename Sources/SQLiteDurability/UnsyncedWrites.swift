package import GRDB

extension DatabaseWriter {
    /// Runs `body` in a transaction committed without waiting for the disk (`synchronous = NORMAL`
    /// for that commit alone; the writer's own level, `FULL`, is set again after it), for what is safe
    /// to lose in a power cut. A crash of the process loses none of it, as its pages are in the
    /// write-ahead log; the next synced commit syncs the log whole, and makes it durable too.
    package func writeWithoutWaitingForTheDisk(_ body: @escaping @Sendable (Database) throws -> Void) async throws {
        try await writeWithoutTransaction { db in try db.inTransactionWithoutWaitingForTheDisk { try body(db) } }
    }
}

extension Database {
    /// Runs `body` in a transaction committed with `synchronous = NORMAL` (see
    /// `DatabaseWriter.writeWithoutWaitingForTheDisk(_:)`), and sets the writer's own level, `FULL`,
    /// again after it, whether the transaction was written or not.
    package func inTransactionWithoutWaitingForTheDisk<T>(_ body: () throws -> T) throws -> T {
        try cachedStatement(sql: "PRAGMA synchronous = NORMAL").execute()
        let written = Result { try committing(body) }
        try cachedStatement(sql: "PRAGMA synchronous = FULL").execute()
        return try written.get()
    }

    /// Runs `body` in a transaction committed once it returns (rolled back if it throws), and
    /// returns its value.
    package func committing<T>(_ body: () throws -> T) throws -> T {
        var value: T?
        try inTransaction {
            value = try body()
            return .commit
        }
        return value!
    }
}
