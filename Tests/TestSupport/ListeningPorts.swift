import Synchronization

/// The ports a test's servers report as they start listening, by name, for the test to wait for
/// before it connects.
///
/// The task that runs the servers calls ``end()`` when they stop: a wait for a port that will never
/// come (a server that failed to start) then fails at once, as does one whose task is cancelled.
package final class ListeningPorts: Sendable {
    private let values = Mutex<[String: Int]>([:])
    private let (changes, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))

    package init() {}

    package func set(_ name: String, _ port: Int) {
        values.withLock { $0[name] = port }
        continuation.yield()
    }

    /// No port will be set any more: the servers have stopped.
    package func end() {
        continuation.finish()
    }

    /// Returns every port set so far once `names` all are; throws if they never will be.
    package func waitFor(_ names: [String]) async throws -> [String: Int] {
        var iterator = changes.makeAsyncIterator()
        while true {
            let current = values.withLock { $0 }
            if names.allSatisfy({ current[$0] != nil }) { return current }
            guard await iterator.next() != nil else {
                let last = values.withLock { $0 }
                let missing = names.filter { last[$0] == nil }
                if missing.isEmpty { return last }
                throw TimedOut(description: "the servers stopped (or the wait was cancelled) before listening on \(missing.joined(separator: ", "))")
            }
        }
    }
}
