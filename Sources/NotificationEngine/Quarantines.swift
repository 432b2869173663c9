import Foundation

/// The apps found quarantined in this run (their stored state cannot be read), and the resets that
/// start them afresh: a value with no I/O, which the engine changes on its actor.
///
/// A read of an app that failed is a reason to quarantine it only if no reset was under way when it
/// began, nor began since: each read carries the ``readEpoch(of:)`` it began in.
struct Quarantines {
    private var found: Set<String> = []
    /// Quarantines being written to the store, waited for by a reset of the same app.
    private var writes: [String: Task<Void, Never>] = [:]
    private var resetsBegun: [String: Int] = [:]
    private var resetsUnderway: [String: Int] = [:]

    /// Notes that `app` is quarantined; `false` when it already was in this run.
    mutating func note(_ app: String) -> Bool {
        found.insert(app).inserted
    }

    /// The store is writing the app's quarantine.
    mutating func writing(_ app: String, _ write: Task<Void, Never>) {
        writes[app] = write
    }

    /// The app's quarantine `write` is written.
    mutating func written(_ app: String, _ write: Task<Void, Never>) {
        if writes[app] == write { writes.removeValue(forKey: app) }
    }

    /// The write of the app's quarantine under way, if one is.
    func write(of app: String) -> Task<Void, Never>? {
        writes[app]
    }

    /// A reset of `app` begins.
    mutating func beginReset(_ app: String) {
        resetsBegun[app, default: 0] += 1
        resetsUnderway[app, default: 0] += 1
    }

    /// A reset of `app` ended, whether it succeeded or not.
    mutating func endReset(_ app: String) {
        resetsUnderway[app, default: 1] -= 1
        if resetsUnderway[app] == 0 { resetsUnderway.removeValue(forKey: app) }
    }

    /// `app` was reset: it is no longer quarantined (and is quarantined again if found unreadable).
    mutating func lift(_ app: String) {
        found.remove(app)
    }

    /// How many resets of `app` have begun, or `nil` while one is under way.
    func readEpoch(of app: String) -> Int? {
        resetsUnderway[app] == nil ? resetsBegun[app, default: 0] : nil
    }
}
