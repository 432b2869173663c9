import ServiceLifecycle
import Synchronization

/// The tasks the gateway's core and its device links start from a synchronous call (a provider's
/// connection on its event loop, a link's callback, under a lock) and that must outlive that call:
/// writing a batch, reading tokens, recording links, a link's pump and inbox. Each is owned here
/// rather than left to run unseen, and costs no hop through a loop on the way of a push: it starts at
/// once, as `Task {}` does. As the gateway stops, ``OwnedTasksService`` (its last service to stop)
/// waits for the ones running and those they start meanwhile, and cancels them when it is cancelled.
package final class OwnedTasks: Sendable {
    private struct State {
        var running: [UInt64: Task<Void, Never>] = [:]
        var nextID: UInt64 = 0
        var drainWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    package init() {}

    /// Starts `work` in a task of its own, owned here until it ends; returns the task, for a caller
    /// that may cancel it.
    @discardableResult
    package func start(_ work: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
        state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            // Set under the lock: the task's end, which takes it, cannot come before.
            let task = Task {
                await work()
                self.finished(id)
            }
            state.running[id] = task
            return task
        }
    }

    /// The tasks running now.
    package var count: Int { state.withLock { $0.running.count } }

    private func finished(_ id: UInt64) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.running.removeValue(forKey: id)
            guard state.running.isEmpty else { return [] }
            defer { state.drainWaiters.removeAll() }
            return state.drainWaiters
        }
        waiters.forEach { $0.resume() }
    }

    /// Returns once no task runs, those started while it waits included.
    package func drain() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let idle = state.withLock { state -> Bool in
                guard !state.running.isEmpty else { return true }
                state.drainWaiters.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }

    /// Cancels every task running now.
    package func cancelAll() {
        for task in state.withLock({ Array($0.running.values) }) { task.cancel() }
    }
}

/// Runs while the gateway runs; as it stops, waits for the tasks its core and links own. First in the
/// gateway's services, so it stops after the listeners that start them. What the tasks wait for is
/// bounded by the store's own time limits, but one (recording links) retries while the store fails:
/// after `patience` they are cancelled, as they are when the stop itself is cancelled.
struct OwnedTasksService: Service {
    let tasks: OwnedTasks
    var patience: Duration = .seconds(10)

    func run() async throws {
        try? await gracefulShutdown()
        await withTaskCancellationHandler {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await tasks.drain() }
                group.addTask {
                    // Cancelled as soon as the tasks are drained.
                    guard (try? await Task.sleep(for: patience)) != nil else { return }
                    tasks.cancelAll()
                }
                _ = await group.next()
                group.cancelAll()
            }
        } onCancel: {
            tasks.cancelAll()
        }
    }
}
