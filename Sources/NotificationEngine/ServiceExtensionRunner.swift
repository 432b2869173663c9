import DequeModule
package import Foundation
import Logging
import ProcessSpawning
package import NotificationCore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// An app's service extension as registered with the daemon (`unotify apps extension`, or the app's
/// own `PUT /v1/service-extension`).
package struct ServiceExtensionRegistration: Sendable, Hashable, Codable {
    /// The extension's executable, an absolute path; started with no arguments.
    package var executable: String
    /// How long it has for one push.
    package var timeLimit: TimeInterval

    package init(executable: String, timeLimit: TimeInterval = ServiceExtension().timeLimit) {
        self.executable = executable
        self.timeLimit = timeLimit
    }

    /// What the machine needs to know of it.
    package var serviceExtension: ServiceExtension { ServiceExtension(timeLimit: timeLimit) }

    /// The registration a local API call asks for.
    package init(_ body: LocalAPI.ServiceExtension) {
        self.init(executable: body.executable, timeLimit: body.timeLimit ?? ServiceExtension().timeLimit)
    }
}

/// What one run of an extension ended with.
enum ServiceExtensionResult: Sendable, Hashable {
    /// It handed back this content.
    case content(NotificationContent)
    /// It handed back nothing usable, for this reason.
    case failure(String)
}

/// Runs apps' service extensions, as iOS runs them: a process for each push, started by the daemon,
/// given the push's request on its standard input, and stopped once it has answered or its time is up
/// (the machine's deadline decides that, and ``stop(_:)`` carries it out).
///
/// What keeps the device safe: at most ``Limits/running`` extensions run at once (the others wait
/// their turn, their time running); each gets a memory limit (`RLIMIT_DATA`, its heap and other
/// private writable memory) and a CPU-time limit (`RLIMIT_CPU`, its time limit and a second) set
/// with `prlimit(2)` just after it starts; and its answer is read up to
/// ``ServiceExtensionMessage/maximumLineBytes``, past which it counts as garbage. Its environment
/// holds only what it needs; `TMPDIR` and `XDG_CACHE_HOME` point into its own folder, where the
/// files it attaches must be.
final class ServiceExtensionRunner: Sendable {
    /// One run: an app's push, by the machine's ticket.
    struct Key: Hashable, Sendable {
        var app: String
        var ticket: UInt64
    }

    struct Limits: Sendable {
        /// Extensions running at once.
        var running = 4
        /// Bytes of memory for each (`RLIMIT_DATA`).
        var memoryBytes: UInt64 = 512 * 1024 * 1024
    }

    /// A run asked for, waiting for its turn or running.
    private struct Run: Sendable {
        var key: Key
        var registration: ServiceExtensionRegistration
        var request: NotificationRequest
        var folder: URL
        var caches: URL
        var onEnd: @Sendable (ServiceExtensionResult) -> Void
    }

    private final class Running: Sendable {
        let process: SpawnedProcess
        let input: FileHandle
        let warned = Mutex(false)
        init(process: SpawnedProcess, input: FileHandle) {
            self.process = process
            self.input = input
        }
    }

    private struct State {
        var waiting = Deque<Run>()
        /// Runs taken from the queue whose process is being started.
        var launching: Set<Key> = []
        var running: [Key: Running] = [:]
        /// Runs stopped while starting or running: their end is not reported.
        var stopped: Set<Key> = []
        /// Runs warned before their process ran: warned as soon as it does.
        var warnedEarly: Set<Key> = []
    }

    private let state = Mutex(State())
    private let limits: Limits
    private let logger: Logger

    init(limits: Limits = Limits(), logger: Logger) {
        self.limits = limits
        self.logger = logger
        // A write to an extension that has exited must fail, not stop the daemon.
        signal(SIGPIPE, SIG_IGN)
    }

    /// Starts the app's extension for a push, now or when a slot frees; `onEnd` is called once, unless
    /// the run is stopped first.
    ///
    /// - Parameters:
    ///   - folder: the extension's folder for this run, its `TMPDIR` and working directory.
    ///   - caches: its `XDG_CACHE_HOME`, kept from run to run.
    func start(_ key: Key, registration: ServiceExtensionRegistration, request: NotificationRequest, folder: URL, caches: URL,
               onEnd: @escaping @Sendable (ServiceExtensionResult) -> Void) {
        let run = Run(key: key, registration: registration, request: request, folder: folder, caches: caches, onEnd: onEnd)
        let startNow = state.withLock { state -> Bool in
            guard state.running.count + state.launching.count < limits.running else {
                state.waiting.append(run)
                return false
            }
            state.launching.insert(key)
            return true
        }
        if startNow { launch(run) }
    }

    /// How many extensions run (or are being started) now, and how many wait for their turn.
    var counts: (running: Int, waiting: Int) {
        state.withLock { ($0.running.count + $0.launching.count, $0.waiting.count) }
    }

    /// Tells a running extension its time is nearly up (`serviceExtensionTimeWillExpire()`).
    func timeWillExpire(_ key: Key) {
        let running = state.withLock { state -> Running? in
            guard let running = state.running[key] else {
                if state.launching.contains(key) || state.waiting.contains(where: { $0.key == key }) { state.warnedEarly.insert(key) }
                return nil
            }
            return running
        }
        guard let running else { return }
        warn(running)
    }

    /// Stops a run: the extension is killed if it runs, or never started if it waits. Its end is not
    /// reported.
    func stop(_ key: Key) {
        let running = state.withLock { state -> Running? in
            state.warnedEarly.remove(key)
            if let index = state.waiting.firstIndex(where: { $0.key == key }) {
                state.waiting.remove(at: index)
                return nil
            }
            guard state.launching.contains(key) || state.running[key] != nil else { return nil }
            state.stopped.insert(key)
            return state.running[key]
        }
        if let running { ExtensionProcess.kill(running.process) }
    }

    /// Stops every run (the daemon is stopping); they start again, once, when it next runs.
    func stopAll() {
        let running = state.withLock { state -> [Running] in
            state.waiting.removeAll()
            state.stopped.formUnion(state.running.keys)
            state.stopped.formUnion(state.launching)
            return Array(state.running.values)
        }
        for run in running { ExtensionProcess.kill(run.process) }
    }

    // MARK: - One run

    /// Runs `run` on a thread of its own, from its start to its end: starting a process takes a while
    /// (up to 0.4 s when its file is being written, see `SpawnedProcess`), and the caller is the
    /// engine's actor, which every app's steps wait for.
    private func launch(_ run: Run) {
        let thread = Thread { [self] in self.runToItsEnd(run) }
        thread.name = "service extension \(run.key.app)"
        thread.start()
    }

    private func runToItsEnd(_ run: Run) {
        let started: ExtensionProcess.Started
        do {
            started = try ExtensionProcess.start(run.registration.executable, folder: run.folder, caches: run.caches, app: run.key.app)
        } catch {
            finish(run, nil, .failure("it could not be started (\(error))"))
            return
        }
        let process = started.process
        applyLimits(to: process.pid, timeLimit: run.registration.timeLimit)
        let running = Running(process: process, input: started.input)
        // The request goes first: until the run is registered below, a warning waits (`warnedEarly`).
        do {
            try running.input.write(contentsOf: ServiceExtensionMessage.request(run.request, timeLimit: run.registration.timeLimit).line())
        } catch {
            // It exited already: what it left says why.
        }
        let (warnNow, stopped) = state.withLock { state -> (Bool, Bool) in
            state.launching.remove(run.key)
            state.running[run.key] = running
            return (state.warnedEarly.remove(run.key) != nil, state.stopped.contains(run.key))
        }
        if stopped { ExtensionProcess.kill(process) }
        logger.debug("service extension started", metadata: ["app": .string(run.key.app), "pid": .stringConvertible(process.pid)])
        if warnNow { warn(running) }
        let result = Self.readAnswer(from: started.output, of: process)
        // Answered (or failed to): it has nothing more to do, as on iOS.
        ExtensionProcess.kill(process)
        process.waitUntilExit()
        try? started.output.close()
        try? running.input.close()
        finish(run, running, result)
    }

    private func warn(_ running: Running) {
        let first = running.warned.withLock { warned -> Bool in
            defer { warned = true }
            return !warned
        }
        guard first, let line = try? ServiceExtensionMessage.timeWillExpire.line() else { return }
        try? running.input.write(contentsOf: line)
    }

    /// Reports a run's end (unless it was stopped) and starts the next waiting run.
    private func finish(_ run: Run, _ running: Running?, _ result: ServiceExtensionResult?) {
        let (report, next) = state.withLock { state -> (Bool, Run?) in
            if let running, state.running[run.key] === running { state.running.removeValue(forKey: run.key) }
            state.launching.remove(run.key)
            state.warnedEarly.remove(run.key)
            let report = result != nil && state.stopped.remove(run.key) == nil
            guard state.running.count + state.launching.count < limits.running, let next = state.waiting.popFirst() else { return (report, nil) }
            state.launching.insert(next.key)
            return (report, next)
        }
        if report, let result { run.onEnd(result) }
        if let next { launch(next) }
    }

    /// Reads the extension's one answer: the first line it writes, or why there is none once it exits.
    private static func readAnswer(from output: FileHandle, of process: SpawnedProcess) -> ServiceExtensionResult {
        var buffer = [UInt8]()
        let descriptor = output.fileDescriptor
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            buffer.append(contentsOf: chunk[0..<count])
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                return answer(in: Array(buffer[..<newline]))
            }
            if buffer.count > ServiceExtensionMessage.maximumLineBytes {
                return .failure("it answered more than \(ServiceExtensionMessage.maximumLineBytes) bytes")
            }
        }
        let termination = process.waitUntilExit()
        if !buffer.isEmpty { return answer(in: buffer) }
        switch termination {
        case .signalled(let signal):
            return .failure("it crashed (signal \(signal)) without handing back content")
        case .exited(let status):
            return .failure("it exited with status \(status) without handing back content")
        }
    }

    private static func answer(in line: [UInt8]) -> ServiceExtensionResult {
        guard let message = try? JSONLimits.decode(ServiceExtensionMessage.self, from: line) else {
            return .failure("its answer is not a message the daemon reads")
        }
        switch message.type {
        case .content:
            guard let content = message.content else { return .failure("its answer has no content") }
            return .content(content)
        case .failure:
            return .failure(message.reason ?? "it reported a failure")
        case .request, .timeWillExpire:
            return .failure("its answer is not a message the daemon reads")
        }
    }

    /// Bounds the extension's memory and CPU time: its time limit and a second.
    private func applyLimits(to pid: Int32, timeLimit: TimeInterval) {
        ExtensionProcess.limit(pid, memoryBytes: limits.memoryBytes, cpuSeconds: UInt64(timeLimit.rounded(.up)) + 1, logger: logger)
    }
}
