import Foundation

/// Runs `body` and returns its result, failing when it has not finished within `timeout` of real time.
///
/// The deadline holds even for a body that does not end when cancelled (an awaited future, a
/// continuation no one resumes): at the deadline the body is cancelled and left behind, and the
/// caller gets ``DeadlinePassed`` at once, so a hung step fails its test instead of the whole run.
@discardableResult
package func withDeadline<T: Sendable>(_ what: String, timeout: Duration = .seconds(10), _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    let outcome = FirstOutcome<T>()
    let work = Task {
        do { await outcome.settle(.success(try await body())) } catch { await outcome.settle(.failure(error)) }
    }
    let timer = Task {
        try? await Task.sleep(for: timeout)
        await outcome.settle(.failure(DeadlinePassed("timed out after \(timeout) waiting for \(what)")))
    }
    defer {
        work.cancel()
        timer.cancel()
    }
    return try await withTaskCancellationHandler {
        try await outcome.value()
    } onCancel: {
        work.cancel()
    }
}

/// The first of several outcomes offered, handed to the one who waits for it.
private actor FirstOutcome<T: Sendable> {
    private var result: Result<T, any Error>?
    private var waiter: CheckedContinuation<T, any Error>?

    func settle(_ offered: Result<T, any Error>) {
        guard result == nil else { return }
        result = offered
        waiter?.resume(with: offered)
        waiter = nil
    }

    func value() async throws -> T {
        if let result { return try result.get() }
        return try await withCheckedThrowingContinuation { waiter = $0 }
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
