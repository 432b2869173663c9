import Foundation
import NotificationCore

/// One device link's state, with no I/O: what it has sent the device and what is unacknowledged
/// within the window, whether it has sent everything stored, the device's messages waiting to be
/// handled, and how it closed. ``DeviceLinks`` holds one per link (in ``LinkSession``, under its lock),
/// steps it with each event, and does what a step returns: start a turn of sending, read the store
/// from a sequence for so many pushes, handle the next message, record what a close leaves.
///
/// One turn of sending runs at a time per link: a wake during a turn asks for one more turn
/// (``wake(held:)``, ``startTurn()``, ``endTurn()``), so nothing stored meanwhile is missed.
struct LinkState {
    /// The highest sequence sent on this link.
    private(set) var sent: Int64 = 0
    /// The sequences sent and not yet acknowledged, in order.
    private(set) var unacknowledged: [Int64] = []
    /// The pushes sent and not yet acknowledged, by sequence: when each was sent is recorded in the
    /// delivery log with its acknowledgement (or when the link closes).
    private var inFlight: [Int64: InFlightPush] = [:]
    /// Whether held pushes may wait for the device: at first, and when some are stored.
    private var mayHaveHeld = true
    /// Whether everything stored for the device has been sent on this link, as of the last read of
    /// the store (which found nothing more) and what the core handed over since.
    private(set) var isCaughtUp = false
    private var isSending = false
    private var sendsAgain = false
    /// The device's messages not handled yet, in order.
    private var inbox: [DeviceLink.DeviceMessage] = []
    /// The highest sequence the device has acknowledged on this link, handled yet or not.
    private var acknowledgementReceived = Int64.min
    private var isHandling = false
    private(set) var isClosed = false
    /// Whether the gateway has sent its close frame.
    private var closeSent = false
    /// Whether the gateway closed the link (replaced, stopping, silent, too busy): no failure of the device's.
    private var closedByGateway = false
    /// The close the device sent, if it sent one: its code and reason.
    private var deviceClose: (code: UInt16?, reason: String)?

    // MARK: - Sending

    /// More is stored for the device (`held`: some of it stored held, while it was not linked).
    mutating func wake(held: Bool) {
        isCaughtUp = false
        // Stored held (the device was not linked yet when they came): the link promotes them.
        if held { mayHaveHeld = true }
    }

    /// Whether a turn of sending starts now; during one, it is asked for again once it ends.
    mutating func startTurn() -> Bool {
        guard !isClosed else { return false }
        guard !isSending else {
            sendsAgain = true
            return false
        }
        isSending = true
        return true
    }

    /// Ends a turn of sending, unless something changed during it: then another turn follows (true).
    mutating func endTurn() -> Bool {
        guard sendsAgain, !isClosed else {
            isSending = false
            return false
        }
        sendsAgain = false
        return true
    }

    /// Where a turn reads the store next: after `sent`, for as many pushes as the window has room
    /// for; nil when the window is full or the link closed. The link is caught up again only once a
    /// read finds nothing more.
    mutating func nextRead(window: Int) -> (after: Int64, room: Int)? {
        isCaughtUp = false
        let room = window - unacknowledged.count
        guard !isClosed, room > 0 else { return nil }
        return (sent, room)
    }

    /// A read found pushes up to `sequence`: they are sent.
    mutating func read(through sequence: Int64) {
        sent = sequence
    }

    /// A read found nothing more stored: whether held pushes may wait, to be promoted (the turn goes
    /// on) or not (caught up).
    mutating func foundNothingStored() -> Bool {
        // Cleared before looking: pushes stored held meanwhile set it again, and are looked for.
        defer { mayHaveHeld = false }
        isCaughtUp = !mayHaveHeld
        return mayHaveHeld
    }

    /// `count` held pushes got their places, of the `room` asked for: whether the turn reads again.
    mutating func promoted(_ count: Int, of room: Int) -> Bool {
        // As many as there was room for: there may be more.
        if count == room { mayHaveHeld = true }
        guard count > 0 else {
            // None held either: caught up, unless some were stored held meanwhile.
            isCaughtUp = !mayHaveHeld
            return false
        }
        return true
    }

    /// A read of the store failed: looked for again, held pushes included, at the next wake.
    mutating func readFailed() {
        mayHaveHeld = true
    }

    /// Takes pushes the core has just stored, `first` to `last`, `count` of them unexpired, without a
    /// read of the store: only when the link has sent everything stored before them, no turn runs,
    /// and the window has room for them. Then a turn runs, as for a read (``endTurn()`` ends it).
    mutating func handOver(first: Int64, last: Int64, count: Int, window: Int) -> Bool {
        guard isCaughtUp, !isSending, !isClosed, first > sent, count <= window - unacknowledged.count else { return false }
        isSending = true
        sent = last
        return true
    }

    /// Pushes are written to the device now: unacknowledged until it says so.
    mutating func sending(_ pushes: [QueuedPush], at date: Date) {
        unacknowledged.append(contentsOf: pushes.lazy.map(\.sequence))
        for push in pushes { inFlight[push.sequence] = InFlightPush(uniqueID: push.uniqueID, sentAt: date, receivedAt: push.receivedAt) }
    }

    /// The device acknowledged every sequence up to `through`: the last one sent on this link that it
    /// covers, and those pushes; nil when it covers none sent here.
    mutating func acknowledge(through: Int64) -> (through: Int64, pushes: [InFlightPush])? {
        let covered = unacknowledged.prefix { $0 <= through }
        guard let last = covered.last else { return nil }
        let pushes = covered.compactMap { inFlight.removeValue(forKey: $0) }
        unacknowledged.removeFirst(covered.count)
        return (last, pushes)
    }

    // MARK: - The device's messages

    /// What became of a message of the device.
    enum Receipt: Equatable {
        /// It waits behind others being handled.
        case queued
        /// Handling starts with it: ``nextMessage()`` until nil.
        case startsHandling
        /// Too many wait already: the device sends faster than it is answered.
        case overflows
    }

    mutating func receive(_ message: DeviceLink.DeviceMessage, inboxLimit: Int) -> Receipt {
        guard inbox.count < inboxLimit else { return .overflows }
        inbox.append(message)
        if case .ack(let through) = message { acknowledgementReceived = max(acknowledgementReceived, through) }
        guard !isHandling else { return .queued }
        isHandling = true
        return .startsHandling
    }

    /// The next message to handle; nil when none waits, which ends the handling.
    mutating func nextMessage() -> DeviceLink.DeviceMessage? {
        guard !inbox.isEmpty else {
            isHandling = false
            return nil
        }
        return inbox.removeFirst()
    }

    // MARK: - Closing

    /// The device sent its close: whether the gateway had sent its own already (then the connection
    /// just closes; else the gateway answers it).
    mutating func deviceClosed(code: UInt16?, reason: String) -> Bool {
        defer { closeSent = true }
        deviceClose = (code, reason)
        return closeSent
    }

    /// Whether the gateway sends its close now (once; a close of the device's, sent first, stays its
    /// own: answered, not the gateway's).
    mutating func gatewayCloses() -> Bool {
        guard !closeSent else { return false }
        closeSent = true
        closedByGateway = true
        return true
    }

    /// What a closed link leaves to record: the pushes sent on it and never acknowledged (the
    /// delivery log still shows them sent), and the oldest push the device did not take with why,
    /// when the link failed (one try of it, see ``GatewayStore/noteNotTaken(deviceID:sequence:reason:limit:at:)``).
    mutating func close() -> (sent: [DeliveryLog.Report], notTaken: (sequence: Int64, reason: String)?) {
        isClosed = true
        defer { inFlight.removeAll() }
        let sent = inFlight.values.compactMap { push in
            push.uniqueID.map { DeliveryLog.Report(uniqueID: $0, stage: .sent, at: push.sentAt) }
        }
        // The oldest push not taken holds back the others (acknowledgements are cumulative): a link
        // that failed with it counts as one try of it. An acknowledgement the device sent before it
        // closed, still waiting to be handled, has taken what it covers.
        let failure = closedByGateway ? nil : Self.failure(closedWith: deviceClose)
        let oldest = unacknowledged.first { $0 > acknowledgementReceived }
        return (sent, oldest.flatMap { oldest in failure.map { (oldest, $0) } })
    }

    /// Why a link the gateway did not close failed its oldest push: the device closed on an error
    /// (anything but a normal close or going away), or the connection ended without a close (the
    /// device's daemon died, or the network went). `nil` for a link that ended well.
    static func failure(closedWith close: (code: UInt16?, reason: String)?) -> String? {
        guard let close else { return "the link ended without a close" }
        switch close.code {
        case 1000?, 1001?: return nil
        case let code?: return close.reason.isEmpty ? "the device closed its link with \(code)" : "the device closed its link with \(code): \(close.reason)"
        case nil: return "the device closed its link without a code"
        }
    }
}

/// A push sent on a link and not acknowledged yet.
struct InFlightPush {
    /// Its delivery log's identifier, if it is logged.
    var uniqueID: String?
    var sentAt: Date
    /// When the gateway accepted it.
    var receivedAt: Date
}
