import PushGateway
import Synchronization
import Testing
import TestSupport

/// The tasks the gateway's core and links start are owned: a stop waits for every one of them, those
/// started while it waits included, and a stop cut short cancels them.
@Suite(.timeLimit(.minutes(1))) struct OwnedTasksTests {
    @Test func drainingWaitsForEveryTaskAndThoseTheyStart() async throws {
        let tasks = OwnedTasks()
        let (release, releaser) = AsyncStream.makeStream(of: Void.self)
        let finished = Mutex<[String]>([])
        tasks.start {
            for await _ in release { break }
            // Started while the stop waits: it is waited for too.
            tasks.start { finished.withLock { $0.append("second") } }
            finished.withLock { $0.append("first") }
        }
        #expect(tasks.count == 1)
        let drained = Task { await tasks.drain() }
        releaser.yield()
        try await withDeadline("the tasks to end") { await drained.value }
        #expect(Set(finished.withLock { $0 }) == ["first", "second"])
        #expect(tasks.count == 0)
        // With nothing running, a drain returns at once.
        await tasks.drain()
    }

    @Test func cancellingEndsTheTasksThatWaitForNothingElse() async throws {
        let tasks = OwnedTasks()
        let sawCancel = Mutex(false)
        let (started, starter) = AsyncStream.makeStream(of: Void.self)
        // What the task waits for, which never comes (a store that does not answer); it ends only
        // when its waiting is cancelled.
        let (never, neverSent) = AsyncStream.makeStream(of: Void.self)
        tasks.start {
            starter.yield()
            await withTaskCancellationHandler {
                for await _ in never {}
            } onCancel: {
                sawCancel.withLock { $0 = true }
                neverSent.finish()
            }
        }
        try await withDeadline("the task to start") { for await _ in started { break } }
        #expect(tasks.count == 1)
        tasks.cancelAll()
        try await withDeadline("the cancelled task to end") { await tasks.drain() }
        #expect(sawCancel.withLock { $0 })
        #expect(tasks.count == 0)
    }
}
