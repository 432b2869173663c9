import Synchronization

/// Lines an example app writes where the seed's code printed or showed an alert, for tests to read.
final class LogBook: Sendable {
    private struct State {
        var lines: [String] = []
        var waiters: [UInt64: (count: Int, continuation: CheckedContinuation<Bool, Never>)] = [:]
        var nextWaiter: UInt64 = 0
    }

    private let state = Mutex(State())

    func append(_ line: String) {
        let ready = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            state.lines.append(line)
            let due = state.waiters.filter { $0.value.count <= state.lines.count }
            for key in due.keys { state.waiters.removeValue(forKey: key) }
            return due.values.map(\.continuation)
        }
        ready.forEach { $0.resume(returning: true) }
    }

    var lines: [String] { state.withLock { $0.lines } }

    /// Waits until the book holds at least `count` lines, or `timeout` passes.
    ///
    /// - Returns: whether it got there in time.
    @discardableResult
    func waitForLines(_ count: Int, timeout: Duration = .seconds(10)) async -> Bool {
        let id = state.withLock { state -> UInt64 in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                    let now = self.state.withLock { state -> Bool in
                        if state.lines.count >= count { return true }
                        state.waiters[id] = (count, continuation)
                        return false
                    }
                    if now { continuation.resume(returning: true) }
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                self.state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume(returning: false)
                return false
            }
            let first = await group.next()!
            group.cancelAll()
            return first
        }
    }
}
