import Foundation

/// Polls `condition` until it holds; throws at the deadline. For what no event announces (a file
/// another program writes, a name on the bus, a row another process commits).
package func waitFor(_ what: String, within seconds: Double, _ condition: @Sendable () async -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while !(await condition()) {
        guard ContinuousClock.now < deadline else { throw TimedOut(description: "timed out waiting for \(what)") }
        try await Task.sleep(for: .milliseconds(50))
    }
}

/// What ``waitFor(_:within:_:)`` throws at its deadline.
package struct TimedOut: Error, CustomStringConvertible {
    package let description: String
}
