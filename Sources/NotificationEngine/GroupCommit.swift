/// What the group commit needs to know of a queued save to choose the saves written together.
protocol GroupCommitItem {
    /// The app whose step it saves: an app's saves are written in the order they were queued.
    var app: String { get }
    /// Whether it is the scheduler's: written ahead of the others queued.
    var isUrgent: Bool { get }
    /// Whether it names a device-link sequence: the store keeps the highest one a batch names, so a
    /// batch holding one is never split (an earlier push's save must not be written after it).
    var namesLinkSequence: Bool { get }
}

/// The engine's group commit as a machine of tickets: every step's save is queued with a ticket; one
/// caller at a time writes a batch of what is queued; a ticket is resolved once its batch is written
/// (or failed). It does no I/O and never waits: ``DaemonEngine`` writes the batches it is handed,
/// reports how each went, and wakes the callers waiting whenever a batch ends.
///
/// A batch is every save queued, except when the scheduler's are among them: then only the saves of
/// the apps those steps stepped (each app's in order, so none is written before a state it was built
/// on), and the rest wait for the next batch. A notification falling due waits for the batch being
/// written and a small one of its own, not behind every add queued meanwhile.
struct GroupCommit<Item: GroupCommitItem> {
    struct Entry {
        let ticket: UInt64
        let item: Item
    }

    /// What the caller waiting for a ticket does next.
    enum Next {
        /// The ticket's save is written (or failed, with the error).
        case resolved((any Error)?)
        /// Another caller is writing: wait until a batch ends, then ask again.
        case wait
        /// Write these saves, then report ``written(_:)`` or ``failed(_:_:)``.
        case write([Entry])
    }

    /// The saves waiting for the next batch, in order.
    private(set) var queued: [Entry] = []
    /// Whether a caller is writing a batch now.
    private(set) var isWriting = false
    private var nextTicket: UInt64 = 1
    /// Every ticket up to this one is resolved.
    private var resolvedThrough: UInt64 = 0
    /// Tickets past `resolvedThrough` resolved ahead of earlier ones (an urgent batch's).
    private var resolvedAhead: Set<UInt64> = []
    /// The errors of failed tickets, until their callers take them.
    private var failures: [UInt64: any Error] = [:]

    /// Queues a save; returns its ticket.
    mutating func enqueue(_ item: Item) -> UInt64 {
        let ticket = nextTicket
        nextTicket += 1
        queued.append(Entry(ticket: ticket, item: item))
        return ticket
    }

    func isResolved(_ ticket: UInt64) -> Bool {
        ticket <= resolvedThrough || resolvedAhead.contains(ticket)
    }

    /// What the caller waiting for `ticket` does next. A resolved ticket's error is handed over once.
    mutating func next(for ticket: UInt64) -> Next {
        if isResolved(ticket) { return .resolved(failures.removeValue(forKey: ticket)) }
        if isWriting { return .wait }
        let batch = takeBatch()
        // Every ticket not yet resolved is queued or being written; nobody writes, so it is queued.
        precondition(!batch.isEmpty, "ticket \(ticket) is neither resolved, queued nor being written")
        isWriting = true
        return .write(batch)
    }

    /// The batch handed out by ``next(for:)`` is durable.
    mutating func written(_ batch: [Entry]) {
        resolve(batch)
    }

    /// The batch handed out by ``next(for:)`` failed: it and every save queued since (built on the
    /// states just lost) fail with `error`. Returns every entry failed, the batch's first.
    mutating func failed(_ batch: [Entry], _ error: any Error) -> [Entry] {
        let lost = batch + queued
        queued.removeAll()
        for entry in lost { failures[entry.ticket] = error }
        resolve(lost)
        return lost
    }

    private mutating func resolve(_ entries: [Entry]) {
        for entry in entries { resolvedAhead.insert(entry.ticket) }
        while resolvedAhead.remove(resolvedThrough + 1) != nil { resolvedThrough += 1 }
        isWriting = false
    }

    private mutating func takeBatch() -> [Entry] {
        guard queued.contains(where: \.item.isUrgent) else {
            defer { queued.removeAll(keepingCapacity: true) }
            return queued
        }
        let urgentApps = Set(queued.lazy.filter(\.item.isUrgent).map(\.item.app))
        var batch: [Entry] = []
        var rest: [Entry] = []
        for entry in queued {
            if urgentApps.contains(entry.item.app) { batch.append(entry) } else { rest.append(entry) }
        }
        if batch.contains(where: \.item.namesLinkSequence) {
            defer { queued.removeAll(keepingCapacity: true) }
            return queued
        }
        queued = rest
        return batch
    }
}
