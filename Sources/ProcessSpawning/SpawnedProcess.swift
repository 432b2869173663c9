import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A process started with `posix_spawn`, reaped by a thread of its own.
///
/// Foundation's `Process` is not used for two reasons seen here: its start reads past the end of a
/// `/proc/self/fd` entry and now and then crashes the process that starts a child (fixed in
/// swift-corelibs-foundation after the toolchain in use), and it gives no way to retry a start that
/// failed with `ETXTBSY` (below). The child gets only the standard descriptors it is given: every other
/// descriptor is closed in it before its program runs. Its signals start at their defaults, and it
/// leads a process group of its own.
package final class SpawnedProcess: Sendable {
    /// How a process ended.
    package enum Termination: Sendable, Equatable, CustomStringConvertible {
        /// It exited with this status.
        case exited(Int32)
        /// A signal ended it.
        case signalled(Int32)

        /// The exit status, or the number of the signal that ended it.
        package var status: Int32 {
            switch self {
            case .exited(let status), .signalled(let status): status
            }
        }

        package var description: String {
            switch self {
            case .exited(let status): "exit status \(status)"
            case .signalled(let signal): "signal \(signal)"
            }
        }
    }

    /// What one of the child's standard descriptors is.
    package enum Stream: Sendable {
        /// The same as this process's.
        case inherit
        /// `/dev/null`.
        case null
        /// A descriptor of this process (a pipe's end, a file); this process keeps its own copy.
        case descriptor(Int32)
    }

    /// Why a process could not be started.
    package struct SpawnError: Error, CustomStringConvertible {
        /// The program that was to run.
        package let executable: String
        /// The `errno` value `posix_spawn` reported.
        package let code: Int32

        package var description: String {
            "\(executable): \(String(cString: strerror(code)))"
        }
    }

    private struct State {
        var termination: Termination?
        var waiters: [CheckedContinuation<Termination, Never>] = []
        var blockedWaiters: [DispatchSemaphore] = []
    }

    /// The child's process identifier.
    package let pid: Int32
    private let state = Mutex(State())

    private init(pid: Int32) {
        self.pid = pid
    }

    /// Starts `executable` (a path; `PATH` is not searched).
    ///
    /// - Parameters:
    ///   - arguments: its arguments, after its own path (`argv[0]`).
    ///   - environment: its whole environment; `nil` passes this process's on.
    ///   - directory: its working directory; `nil` keeps this process's.
    ///   - standardInput, standardOutput, standardError: its descriptors 0, 1 and 2.
    /// - Throws: `SpawnError` when it cannot be started (no such file, not executable, a bad directory).
    package static func spawn(
        _ executable: String,
        arguments: [String] = [],
        environment: [String: String]? = nil,
        directory: String? = nil,
        standardInput: Stream = .inherit,
        standardOutput: Stream = .inherit,
        standardError: Stream = .inherit
    ) throws -> SpawnedProcess {
        guard let functions = GNUSpawnFunctions.shared else {
            throw SpawnError(executable: executable, code: ENOSYS)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // The actions run in order in the child: a standard descriptor given as the source of another
        // (stderr to this process's stdout) is copied above 2 first, so an earlier action cannot have
        // replaced it. A descriptor given as itself is duplicated onto itself, which keeps it open
        // across exec even if it is close-on-exec.
        var copies: [Int32] = []
        defer { for copy in copies { close(copy) } }
        for (stream, target) in [(standardInput, STDIN_FILENO), (standardOutput, STDOUT_FILENO), (standardError, STDERR_FILENO)] {
            switch stream {
            case .inherit:
                break
            case .null:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == STDIN_FILENO ? O_RDONLY : O_WRONLY, 0)
            case .descriptor(var descriptor):
                if descriptor <= STDERR_FILENO, descriptor != target {
                    descriptor = fcntl(descriptor, F_DUPFD_CLOEXEC, STDERR_FILENO + 1)
                    guard descriptor >= 0 else { throw SpawnError(executable: executable, code: errno) }
                    copies.append(descriptor)
                }
                posix_spawn_file_actions_adddup2(&actions, descriptor, target)
            }
        }
        if let directory {
            _ = directory.withCString { functions.addChangeDirectory(&actions, $0) }
        }
        _ = functions.addCloseFrom(&actions, STDERR_FILENO + 1)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        // A process group of its own, as Foundation's `Process` gives: Ctrl-C or a hang-up at the
        // terminal of this process does not reach its children, which it stops itself.
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))

        let argv = CStrings([executable] + arguments)
        let envp = environment.map { CStrings($0.map { "\($0.key)=\($0.value)" }) }
        var pid: pid_t = 0
        var attempt = 0
        while true {
            let result = argv.withPointers { argv in
                if let envp {
                    envp.withPointers { posix_spawn(&pid, executable, &actions, &attributes, argv, $0) }
                } else {
                    posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
                }
            }
            if result == 0 { break }
            // A program file that is open for writing somewhere cannot run. Besides a program still
            // being written, this happens for a moment after it was: another thread of this process
            // starting a child at that instant gives the child a copy of the writer's descriptor until
            // the child's own program replaces it. Trying again a few milliseconds later succeeds.
            attempt += 1
            guard result == ETXTBSY, attempt < 20 else { throw SpawnError(executable: executable, code: result) }
            usleep(useconds_t(attempt) * 2_000)
        }
        let process = SpawnedProcess(pid: pid)
        let reaper = Thread { process.reap() }
        reaper.name = "reaper \(pid)"
        reaper.stackSize = 256 * 1024
        reaper.start()
        return process
    }

    /// How it ended, once it has.
    package var termination: Termination? { state.withLock { $0.termination } }

    /// Whether it still runs (or has ended and is not yet reaped).
    package var isRunning: Bool { termination == nil }

    /// Sends `signal` to the process, unless it has ended: its identifier is then free for another.
    package func send(_ signal: Int32) {
        state.withLock { state in
            // Under the lock: the reaper marks the end before it frees the identifier.
            if state.termination == nil { _ = Glibc.kill(pid, signal) }
        }
    }

    /// Blocks the calling thread until the process has ended.
    @discardableResult
    package func waitUntilExit() -> Termination {
        let semaphore = DispatchSemaphore(value: 0)
        if let termination = state.withLock({ state -> Termination? in
            if state.termination == nil { state.blockedWaiters.append(semaphore) }
            return state.termination
        }) {
            return termination
        }
        semaphore.wait()
        return termination!
    }

    /// Waits until the process has ended.
    @discardableResult
    package func exit() async -> Termination {
        await withCheckedContinuation { continuation in
            let ended = state.withLock { state -> Termination? in
                if state.termination == nil { state.waiters.append(continuation) }
                return state.termination
            }
            if let ended { continuation.resume(returning: ended) }
        }
    }

    /// Waits for the end without reaping (`WNOWAIT`), records it, then reaps: until the record is
    /// made, the zombie keeps the identifier, so `send(_:)` never reaches another process.
    private func reap() {
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) != 0, errno == EINTR {}
        var status: Int32 = 0
        let (waiters, blocked) = state.withLock { state in
            while waitpid(pid, &status, 0) < 0, errno == EINTR {}
            let termination: Termination = status & 0x7f == 0 ? .exited((status >> 8) & 0xff) : .signalled(status & 0x7f)
            state.termination = termination
            defer {
                state.waiters.removeAll()
                state.blockedWaiters.removeAll()
            }
            return (state.waiters.map { ($0, termination) }, state.blockedWaiters)
        }
        for (continuation, termination) in waiters { continuation.resume(returning: termination) }
        for semaphore in blocked { semaphore.signal() }
    }
}

/// NUL-terminated copies of strings, as the `char *const []` that `posix_spawn` takes.
private final class CStrings {
    private let pointers: [UnsafeMutablePointer<CChar>?]

    init(_ strings: [String]) {
        pointers = strings.map { strdup($0) } + [nil]
    }

    func withPointers<Result>(_ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> Result) -> Result {
        pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
    }

    deinit {
        for pointer in pointers { free(pointer) }
    }
}

/// glibc's `posix_spawn_file_actions_addchdir_np` (2.29) and `…_addclosefrom_np` (2.34), which Swift's
/// Glibc module leaves out (they are GNU extensions), looked up by name. With an older glibc every
/// start fails with `ENOSYS` (the README names the glibc needed).
private struct GNUSpawnFunctions: Sendable {
    typealias AddChangeDirectory = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32
    typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

    let addChangeDirectory: AddChangeDirectory
    let addCloseFrom: AddCloseFrom

    static let shared: GNUSpawnFunctions? = {
        let process = UnsafeMutableRawPointer(bitPattern: 0)
        guard let changeDirectory = dlsym(process, "posix_spawn_file_actions_addchdir_np"),
              let closeFrom = dlsym(process, "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return GNUSpawnFunctions(addChangeDirectory: unsafeBitCast(changeDirectory, to: AddChangeDirectory.self),
                                 addCloseFrom: unsafeBitCast(closeFrom, to: AddCloseFrom.self))
    }()
}
