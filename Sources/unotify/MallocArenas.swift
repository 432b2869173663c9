#if canImport(Glibc)
import Foundation
import Glibc

/// glibc's allocator gives threads that contend for it arenas of their own, up to eight per core,
/// and memory freed in one arena is not reused by another. A daemon's steps build an app on a
/// database thread and drop it on another, so its heap grew in several arenas at once: bounded to
/// as many arenas as threads can run at once, the daemon holds about a tenth less memory once a
/// million pending requests have been touched (BENCHMARKS.md), with no fewer adds a second.
enum MallocArenas {
    /// Limits the arenas of this process to the number of processors. Called first by the commands
    /// that serve, before their threads allocate; a libc without `mallopt` is left as it is.
    static func limitToProcessorCount() {
        // `mallopt` and `M_ARENA_MAX` are in <malloc.h>, which the Glibc module does not export.
        guard let symbol = dlsym(nil, "mallopt") else { return }
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        let mallopt = unsafeBitCast(symbol, to: Mallopt.self)
        let arenaMaximum: Int32 = -8
        _ = mallopt(arenaMaximum, Int32(max(1, ProcessInfo.processInfo.activeProcessorCount)))
    }
}
#else
enum MallocArenas {
    static func limitToProcessorCount() {}
}
#endif
