#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's limit of open files, which bounds its connections: raised at start to what the
/// system allows it, then shared between its listeners (``ConnectionBudget``).
package enum OpenFilesLimit {
    /// Raises the soft limit of open files to the hard one; returns the soft limit in force after.
    /// (Most systems start a process at 1,024 while allowing it far more: each connection is a file.)
    @discardableResult
    package static func raiseToHardLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return current ?? Int(clamping: limit.rlim_cur)
    }

    /// The soft limit in force now.
    package static var current: Int? {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        return Int(clamping: limit.rlim_cur)
    }
}

/// How a process's open files are shared between its listeners: a share each of what is left once
/// ``reserved`` files are kept for everything else (the stores' files, pipes to extensions, outgoing
/// connections). The shares hold whichever listeners a process runs (`serve` runs them all), so that
/// exhausting one never starves another, nor the process.
package struct ConnectionBudget: Sendable, Hashable {
    /// Files kept for what is not an accepted connection.
    package static let reserved = 256

    package let openFiles: Int

    package init(openFiles: Int) {
        self.openFiles = openFiles
    }

    /// The budget of the process's limit now.
    package static var now: ConnectionBudget { ConnectionBudget(openFiles: OpenFilesLimit.current ?? 1024) }

    /// The listeners, and their shares of the files left.
    package enum Listener: Sendable, CaseIterable {
        /// Each of the provider API's two ports (sandbox, production).
        case providerPort
        case deviceLinks
        /// The daemon's local API, its Unix socket and its TCP port together.
        case localAPI
        case webCenter
        case metrics

        /// Its share, in percent; the shares add up to 100 (the provider API's twice).
        var percent: Int {
            switch self {
            case .providerPort: 25
            case .deviceLinks: 30
            case .localAPI: 10
            case .webCenter: 5
            case .metrics: 5
            }
        }
    }

    /// The most connections `listener` keeps at once (at least 16).
    package func capacity(of listener: Listener) -> Int {
        let available = max(0, min(openFiles, 1 << 24) - Self.reserved)
        return max(16, available * listener.percent / 100)
    }
}
