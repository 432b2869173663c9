internal import Synchronization

/// Keys and the apps they belong to, as found in the store (which keeps only the keys' hashes: the
/// keys themselves stay in the daemon's memory, where every call brings them anyway). A lookup that
/// started before the cache was last cleared is not remembered: its answer may be of a key since
/// renewed.
final class KeyCache: Sendable {
    private let state = Mutex<(generation: UInt64, apps: [String: String])>((0, [:]))

    var generation: UInt64 { state.withLock { $0.generation } }

    func bundleIdentifier(forKey key: String) -> String? {
        state.withLock { $0.apps[key] }
    }

    func remember(_ key: String, _ bundleIdentifier: String, ifStillAt generation: UInt64) {
        state.withLock { state in
            // Bounded: past this many keys the cache starts again.
            if state.apps.count >= 100_000 { state.apps.removeAll() }
            if state.generation == generation { state.apps[key] = bundleIdentifier }
        }
    }

    func forgetAll() {
        state.withLock { state in
            state.generation += 1
            state.apps.removeAll()
        }
    }
}
