@testable import NotificationDaemon
@testable import NotificationEngine
import Testing

/// The group commit's ticket machine alone: which saves are written together, and whose callers
/// hear what, with no store and no engine.
@Suite struct GroupCommitMachineTests {
    struct Save: GroupCommitItem, Equatable {
        var app: String
        var isUrgent = false
        var namesLinkSequence = false
    }

    struct Refused: Error, Equatable {}

    /// The saves of a batch handed out for `ticket`; fails when the machine says anything else.
    func batch(for ticket: UInt64, in commits: inout GroupCommit<Save>) throws -> [GroupCommit<Save>.Entry] {
        guard case .write(let batch) = commits.next(for: ticket) else {
            Issue.record("ticket \(ticket) was not handed a batch to write")
            throw Refused()
        }
        return batch
    }

    func isWaiting(_ ticket: UInt64, _ commits: inout GroupCommit<Save>) -> Bool {
        if case .wait = commits.next(for: ticket) { return true }
        return false
    }

    func isResolvedWithoutError(_ ticket: UInt64, _ commits: inout GroupCommit<Save>) -> Bool {
        if case .resolved(nil) = commits.next(for: ticket) { return true }
        return false
    }

    @Test func savesQueuedWhileABatchIsWrittenAreWrittenTogetherNext() throws {
        var commits = GroupCommit<Save>()
        let first = commits.enqueue(Save(app: "a"))
        let written = try batch(for: first, in: &commits)
        #expect(written.map(\.ticket) == [first])
        let second = commits.enqueue(Save(app: "b"))
        let third = commits.enqueue(Save(app: "c"))
        #expect(isWaiting(second, &commits), "one batch at a time")
        #expect(isWaiting(third, &commits))
        commits.written(written)
        #expect(isResolvedWithoutError(first, &commits))
        // The first caller back writes everyone's saves; the other finds its own written.
        let together = try batch(for: third, in: &commits)
        #expect(together.map(\.item.app) == ["b", "c"])
        #expect(isWaiting(second, &commits))
        commits.written(together)
        #expect(isResolvedWithoutError(second, &commits))
        #expect(isResolvedWithoutError(third, &commits))
        #expect(commits.queued.isEmpty && !commits.isWriting)
    }

    @Test func theSchedulersSavesGoAheadWithTheirAppsEarlierSavesAndTheRestWait() throws {
        var commits = GroupCommit<Save>()
        let addA = commits.enqueue(Save(app: "a"))
        let addB = commits.enqueue(Save(app: "b"))
        let fireB = commits.enqueue(Save(app: "b", isUrgent: true))
        let urgent = try batch(for: fireB, in: &commits)
        #expect(urgent.map(\.ticket) == [addB, fireB], "b's saves, in order, and no other app's")
        #expect(commits.queued.map(\.ticket) == [addA])
        commits.written(urgent)
        #expect(commits.isResolved(fireB) && commits.isResolved(addB))
        #expect(!commits.isResolved(addA), "a ticket after an unresolved one is resolved on its own")
        let rest = try batch(for: addA, in: &commits)
        #expect(rest.map(\.ticket) == [addA])
        commits.written(rest)
        #expect(isResolvedWithoutError(addA, &commits))
    }

    @Test func aBatchNamingALinkSequenceIsNotSplit() throws {
        var commits = GroupCommit<Save>()
        let addA = commits.enqueue(Save(app: "a", namesLinkSequence: true))
        let pushB = commits.enqueue(Save(app: "b", isUrgent: true, namesLinkSequence: true))
        #expect(try batch(for: pushB, in: &commits).map(\.ticket) == [addA, pushB])
    }

    @Test func aFailedBatchFailsItAndEverythingQueuedSinceAndEachCallerHearsOnce() throws {
        var commits = GroupCommit<Save>()
        let first = commits.enqueue(Save(app: "a"))
        let written = try batch(for: first, in: &commits)
        let later = commits.enqueue(Save(app: "b"))
        let lost = commits.failed(written, Refused())
        #expect(lost.map(\.ticket) == [first, later], "the batch's first, then what was built on it")
        #expect(commits.queued.isEmpty && !commits.isWriting)
        for ticket in [first, later] {
            guard case .resolved(let failure?) = commits.next(for: ticket) else {
                Issue.record("ticket \(ticket) did not fail")
                continue
            }
            #expect(failure is Refused)
            #expect(isResolvedWithoutError(ticket, &commits), "the error is handed over once")
        }
        // The next save starts afresh.
        let next = commits.enqueue(Save(app: "a"))
        let batch = try batch(for: next, in: &commits)
        commits.written(batch)
        #expect(isResolvedWithoutError(next, &commits))
    }
}
