package import GRDB

extension DatabaseWriter {
    /// Runs `updates` in a transaction as `write` does, but neither refuses to start nor interrupts
    /// the transaction when the calling task is cancelled (`write` does both): for a write that is
    /// not only its caller's, such as a group commit, whose every step would otherwise fail with the
    /// one caller that writes it.
    ///
    /// Without `waitingForTheDisk`, the transaction is committed as by
    /// `writeWithoutWaitingForTheDisk(_:)`: safe from a crash of the process, not from a power cut.
    package func writeUninterrupted<T: Sendable>(waitingForTheDisk: Bool = true, _ updates: @escaping @Sendable (Database) throws -> T) async throws -> T {
        guard !waitingForTheDisk else {
            return try await withUnsafeThrowingContinuation { continuation in
                asyncWrite(updates) { _, result in continuation.resume(with: result) }
            }
        }
        return try await withUnsafeThrowingContinuation { continuation in
            asyncWriteWithoutTransaction { db in
                continuation.resume(with: Result { try db.inTransactionWithoutWaitingForTheDisk { try updates(db) } })
            }
        }
    }
}
