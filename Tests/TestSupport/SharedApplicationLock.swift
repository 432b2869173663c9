import Dispatch
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `UIApplication.shared` and its delegate are one per process, as on iOS, and every test target
/// runs in one test process: the tests that use them take turns, across suites and targets, by
/// holding this lock (a file lock, which also keeps two test runs on one machine apart).
package enum SharedApplicationLock {
    static let path = "/tmp/unotify-tests-shared-application.lock"

    package static func withLock<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        let descriptor = open(path, O_CREAT | O_RDWR, 0o600)
        guard descriptor >= 0 else { throw POSIXError(.EACCES) }
        // Taken off the cooperative threads: waiting for the lock blocks.
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                _ = flock(descriptor, LOCK_EX)
                continuation.resume()
            }
        }
        defer {
            _ = flock(descriptor, LOCK_UN)
            close(descriptor)
        }
        return try await body()
    }
}
