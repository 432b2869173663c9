import Foundation

/// Runs `body` and returns its result, failing when it has not finished within `timeout` of real time.
@discardableResult
package func withDeadline<T: Sendable>(_ what: String, timeout: Duration = .seconds(10), _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: timeout)
            return nil
        }
        let first = try await group.next()!
        group.cancelAll()
        guard let first else { throw DeadlinePassed("timed out after \(timeout) waiting for \(what)") }
        return first
    }
}

/// Waits, with a deadline, until `condition` holds.
package func eventually(_ what: String, _ condition: @escaping @Sendable () async throws -> Bool) async throws {
    try await withDeadline(what) {
        while try await !condition() { try await Task.sleep(for: .milliseconds(1)) }
    }
}

/// What ``withDeadline(_:timeout:_:)`` throws when its body has not finished in time.
package struct DeadlinePassed: Error, CustomStringConvertible {
    package let description: String
    init(_ description: String) { self.description = description }
}

/// A fresh folder for one test. Unix socket paths are limited to about 100 bytes, so the folder is
/// short and directly under /tmp.
package func makeTestDirectory() throws -> URL {
    try TemporaryFolders.make("un-", in: URL(fileURLWithPath: "/tmp", isDirectory: true))
}
