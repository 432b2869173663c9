package import GRDB

extension DatabaseWriter {
    /// Runs `updates` in a transaction as `write` does, but neither refuses to start nor interrupts
    /// the transaction when the calling task is cancelled (`write` does both): for a write that is
    /// not only its caller's, such as a group commit, whose every step would otherwise fail with the
    /// one caller that writes it.
    package func writeUninterrupted<T: Sendable>(_ updates: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await withUnsafeThrowingContinuation { continuation in
            asyncWrite(updates) { _, result in continuation.resume(with: result) }
        }
    }
}
