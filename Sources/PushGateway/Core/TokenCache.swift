import Foundation

/// What the gateway's core knows of device tokens, and what waits for a token to be read: a value
/// with no I/O. The core holds it under its lock, and carries out the one thing it asks for, a read
/// of tokens from the store, in rounds: all the tokens waiting at once, then those that came meanwhile.
///
/// Order is kept per token: a push to a token that is not known, or that earlier pushes still wait
/// for, waits behind them, so pushes to one device are decided in the order they came. A read that a
/// change of tokens overlapped (an unregistration here or on another node) is not remembered: it may
/// predate the change. Unknown tokens are never remembered, so made-up tokens cannot fill it.
struct TokenCache<Waiting> {
    /// Registrations read so far, by token; every change made on this node comes through here.
    private var registrations: [String: Registration] = [:]
    /// What waits for each token not read yet, in arrival order, for the next read.
    private var unread: [String: [Waiting]] = [:]
    /// The tokens of the read under way.
    private var beingRead: Set<String> = []
    private(set) var isReading = false
    /// Counts the changes of tokens: a read begun before one is not remembered.
    private var changes = 0

    /// Where a push's token stands.
    enum Lookup {
        /// Known, and nothing waits for it before this push.
        case known(Registration)
        /// The push waits for the token to be read; `startsReading`: no read is under way, so the
        /// caller starts one (``nextRead()`` until it returns nil).
        case waits(startsReading: Bool)
    }

    /// One round of reading: its tokens, and what waits for each.
    struct Read {
        let waiting: [String: [Waiting]]
        fileprivate let changesBefore: Int

        var tokens: [String] { Array(waiting.keys) }
        var count: Int { waiting.count }

        /// What waited, each with its token's registration as read (nil: no such token), in arrival
        /// order for each token.
        func answered(by read: [String: Registration]) -> [(Waiting, Registration?)] {
            waiting.flatMap { token, items in items.map { ($0, read[token]) } }
        }
    }

    /// Looks `token` up for a push; when the push must wait, `item` is kept for it.
    mutating func lookUp(_ token: String, for item: @autoclosure () -> Waiting) -> Lookup {
        if let known = registrations[token],
           unread.isEmpty || unread[token] == nil,
           beingRead.isEmpty || !beingRead.contains(token) {
            return .known(known)
        }
        unread[token, default: []].append(item())
        guard !isReading else { return .waits(startsReading: false) }
        isReading = true
        return .waits(startsReading: true)
    }

    /// The next round to read: everything waiting now; nil when nothing waits, which ends the reading.
    mutating func nextRead() -> Read? {
        let waiting = unread
        unread = [:]
        beingRead = Set(waiting.keys)
        guard !waiting.isEmpty else {
            isReading = false
            return nil
        }
        return Read(waiting: waiting, changesBefore: changes)
    }

    /// The round is over, once what waited was decided (``Read/answered(by:)``): with what was read
    /// (remembered unless tokens changed meanwhile), or nil when the read failed.
    mutating func finish(_ read: Read, with result: [String: Registration]?) {
        beingRead = []
        guard let result, changes == read.changesBefore else { return }
        for registration in result.values { registrations[registration.token] = registration }
    }

    /// A token issued here.
    mutating func remember(_ registration: Registration) {
        registrations[registration.token] = registration
    }

    /// The app's tokens on the device end at `date`.
    mutating func unregister(deviceID: String, bundleIdentifier: String, at date: Date) {
        changes += 1
        for (token, registration) in registrations
        where registration.deviceID == deviceID && registration.bundleIdentifier == bundleIdentifier && registration.unregisteredAt == nil {
            registrations[token]?.unregisteredAt = date
        }
    }

    /// Forgets what was read of these tokens (nil: of every token), changed elsewhere.
    mutating func forget(_ tokens: [String]?) {
        changes += 1
        guard let tokens else { return registrations.removeAll() }
        for token in tokens { registrations[token] = nil }
    }
}

extension TokenCache: Sendable where Waiting: Sendable {}
extension TokenCache.Read: Sendable where Waiting: Sendable {}
