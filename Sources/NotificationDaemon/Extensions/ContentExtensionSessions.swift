package import Foundation
package import Logging
package import NotificationEngine
import ProcessSpawning
package import NotificationCore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The content extensions whose interface is open: one process for each notification the person
/// expanded, as iOS runs one while the expanded notification is on screen.
///
/// The conversation is ``ContentExtensionMessage``s, one per line. Each thing the daemon asks (draw
/// this notification, handle this response, play, pause) has a sequence number, and the extension's
/// `interface` naming it answers it; the extension may also speak on its own (a new interface, the
/// default action, closing the interface), which ``Event``s report.
///
/// What keeps the device safe, as for service extensions: at most ``Limits/sessions`` run at once
/// (opening one more closes the least recently used), each with bounded memory and CPU time, each
/// answer read up to ``ContentExtensionMessage/maximumLineBytes``, and an extension that does not
/// answer within ``Limits/answerTimeout`` is stopped. Its environment holds only what it needs.
package final class ContentExtensionSessions: Sendable {
    package struct Limits: Sendable {
        /// Interfaces open at once.
        package var sessions = 4
        /// Bytes of memory for each (`RLIMIT_DATA`).
        package var memoryBytes: UInt64 = 512 * 1024 * 1024
        /// CPU seconds for each, over its whole life.
        package var cpuSeconds: UInt64 = 60
        /// How long the extension has to answer what it is asked.
        package var answerTimeout: Duration = .seconds(10)

        package init() {}
    }

    /// An open interface.
    package struct Session: Sendable {
        package let id: String
        package let app: String
        package let notification: DeliveredNotification
        package let attributes: ContentExtensionAttributes
        /// What the extension shows now.
        package fileprivate(set) var interface: ContentExtensionInterface
        /// Counts the interfaces the extension sent: a frame names the one it shows.
        package fileprivate(set) var version: Int
    }

    /// What an extension did on its own.
    package enum Event: Sendable, Hashable {
        /// It sent a new interface.
        case changed(String)
        /// It called `performNotificationDefaultAction()`.
        case defaultAction(String)
        /// It called `dismissNotificationContentExtension()`.
        case dismiss(String)
        /// Its process ended, or it was closed.
        case ended(String)
    }

    private final class Live: Sendable {
        let process: SpawnedProcess
        let input: FileHandle
        let sequence = Atomic<UInt64>(0)
        /// What waits for an answer, whether the process ended (nothing more will be answered), and
        /// whether the interface closes once nothing waits.
        let waiting = Mutex<Waiting>(Waiting())
        struct Waiting {
            var ended = false
            var closing = false
            var answers: [UInt64: CheckedContinuation<ContentExtensionMessage, any Error>] = [:]
        }
        init(process: SpawnedProcess, input: FileHandle) {
            self.process = process
            self.input = input
        }
    }

    private struct State {
        var sessions: [String: (session: Session, live: Live)] = [:]
        /// Least recently used first.
        var order: [String] = []
    }

    private let state = Mutex(State())
    private let limits: Limits
    private let logger: Logger
    private let onEvent: @Sendable (Event) -> Void

    package init(limits: Limits = Limits(), logger: Logger, onEvent: @escaping @Sendable (Event) -> Void) {
        self.limits = limits
        self.logger = logger
        self.onEvent = onEvent
        // A write to an extension that has exited must fail, not stop the daemon.
        signal(SIGPIPE, SIG_IGN)
    }

    /// Starts the extension for a notification the person expanded, and returns once it drew it.
    ///
    /// - Parameters:
    ///   - actions: the actions of the notification's category, as the extension context first gives them.
    ///   - folder: its folder for this interface, its `TMPDIR` and working directory, removed at the end.
    ///   - caches: its `XDG_CACHE_HOME`, kept from run to run.
    /// - Throws: `extensionFailed` when it cannot start, or does not draw the notification in time.
    package func open(app: String, notification: DeliveredNotification, actions: [NotificationAction] = [],
                      registration: ContentExtensionRegistration, folder: URL, caches: URL) async throws -> Session {
        let started: ExtensionProcess.Started
        do {
            started = try ExtensionProcess.start(registration.executable, folder: folder, caches: caches, app: app)
        } catch {
            try? FileManager.default.removeItem(at: folder)
            throw DaemonError(.extensionFailed, "The content extension of \(app) could not be started: \(error).")
        }
        let process = started.process
        ExtensionProcess.limit(process.pid, memoryBytes: limits.memoryBytes, cpuSeconds: limits.cpuSeconds, logger: logger)

        let live = Live(process: process, input: started.input)
        let id = DaemonEngine.makeKey()
        let session = Session(id: id, app: app, notification: notification, attributes: registration.attributes,
                              interface: ContentExtensionInterface(html: ""), version: 0)
        let evicted = state.withLock { state -> [Live] in
            var evicted: [Live] = []
            while state.order.count >= max(1, limits.sessions), let oldest = state.order.first {
                state.order.removeFirst()
                if let entry = state.sessions.removeValue(forKey: oldest) { evicted.append(entry.live) }
            }
            state.sessions[id] = (session, live)
            state.order.append(id)
            return evicted
        }
        for other in evicted { ExtensionProcess.kill(other.process) }
        let reader = Thread { [self] in
            read(started.output, of: id, live)
            process.waitUntilExit()
            try? started.output.close()
            try? live.input.close()
            try? FileManager.default.removeItem(at: folder)
        }
        reader.name = "content extension \(app)"
        reader.start()
        logger.debug("content extension started", metadata: ["app": .string(app), "pid": .stringConvertible(process.pid)])

        do {
            // To the process just started, not by the session's id: one that has already ended may
            // have had its session closed, and is refused as ended, not as an interface closed.
            _ = try await ask(live, ContentExtensionMessage(type: .notification, notification: notification, actions: actions))
        } catch {
            // Not drawn: the interface never opened.
            close(id)
            throw error
        }
        guard let opened = self.session(id) else {
            throw DaemonError(.extensionFailed, "The content extension of \(app) ended before it drew the notification.")
        }
        return opened
    }

    /// The open interface `id`, if it is still open.
    package func session(_ id: String) -> Session? {
        state.withLock { $0.sessions[id]?.session }
    }

    /// Hands the person's response to the extension (`didReceive(_:completionHandler:)`) and returns
    /// what its completion handler answered; the session then shows its interface after it.
    package func respond(_ id: String, with response: NotificationResponse) async throws -> ContentExtensionResponseOption {
        let answer = try await ask(id, ContentExtensionMessage(type: .response, response: response))
        return answer.option ?? .dismissAndForwardAction
    }

    /// The person pressed the media button: `mediaPlay()` or `mediaPause()`.
    package func media(_ id: String, play: Bool) async throws {
        _ = try await ask(id, ContentExtensionMessage(type: play ? .mediaPlay : .mediaPause))
    }

    /// Closes an interface: its process is stopped.
    package func close(_ id: String) {
        let live = state.withLock { state -> Live? in
            state.order.removeAll { $0 == id }
            return state.sessions.removeValue(forKey: id)?.live
        }
        if let live { ExtensionProcess.kill(live.process) }
    }

    /// Closes an interface once the extension answered what it is asking now: it closed its interface,
    /// or opened the app, while handling an action, and that action's answer still counts.
    package func closeWhenAnswered(_ id: String) {
        guard let live = state.withLock({ $0.sessions[id]?.live }) else { return }
        let now = live.waiting.withLock { waiting in
            waiting.closing = true
            return waiting.answers.isEmpty
        }
        if now { close(id) }
    }

    /// Closes every interface (the daemon is stopping).
    package func closeAll() {
        let all = state.withLock { state -> [Live] in
            defer { state = State() }
            return state.sessions.values.map(\.live)
        }
        for live in all { ExtensionProcess.kill(live.process) }
    }

    /// The interfaces open now.
    package var count: Int { state.withLock { $0.sessions.count } }

    // MARK: - The conversation

    /// Sends a message and waits for the interface that answers it; an extension that does not answer
    /// in time is stopped.
    private func ask(_ id: String, _ message: ContentExtensionMessage) async throws -> ContentExtensionMessage {
        guard let live = state.withLock({ state -> Live? in
            guard state.sessions[id] != nil else { return nil }
            state.order.removeAll { $0 == id }
            state.order.append(id)
            return state.sessions[id]?.live
        }) else {
            throw DaemonError(.noContentExtension, "This content extension's interface is closed.")
        }
        return try await ask(live, message)
    }

    /// Sends `message` to the extension and waits for its answer; fails if it has ended, or does not
    /// answer in time (it is then stopped).
    private func ask(_ live: Live, _ message: ContentExtensionMessage) async throws -> ContentExtensionMessage {
        let sequence = live.sequence.add(1, ordering: .relaxed).newValue
        var message = message
        message.sequence = sequence
        let line = try message.line()
        // Armed once the answer is waited for: a timer started before could fire first (a busy
        // machine), find nothing waiting, and leave the wait without a deadline.
        let timeout = Mutex<Task<Void, any Error>?>(nil)
        defer { timeout.withLock { $0?.cancel() } }
        return try await withCheckedThrowingContinuation { continuation in
            let refusal = live.waiting.withLock { waiting -> DaemonError? in
                if waiting.ended { return DaemonError(.extensionFailed, "The content extension ended without answering.") }
                if waiting.closing { return DaemonError(.noContentExtension, "This content extension's interface is closing.") }
                waiting.answers[sequence] = continuation
                return nil
            }
            if let refusal {
                continuation.resume(throwing: refusal)
                return
            }
            timeout.withLock { timer in
                timer = Task { [limits] in
                    try await Task.sleep(for: limits.answerTimeout)
                    let late = live.waiting.withLock { $0.answers.removeValue(forKey: sequence) }
                    guard let late else { return }
                    late.resume(throwing: DaemonError(.extensionFailed, "The content extension did not answer within \(limits.answerTimeout)."))
                    ExtensionProcess.kill(live.process)
                }
            }
            do {
                try live.input.write(contentsOf: line)
            } catch {
                // It exited: the reader fails what waits once it sees the end.
            }
        }
    }

    /// Reads the extension's messages until it exits, then fails what still waits for an answer.
    private func read(_ output: FileHandle, of id: String, _ live: Live) {
        var buffer = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        let descriptor = output.fileDescriptor
        reading: while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            buffer.append(contentsOf: chunk[0..<count])
            while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = Data(buffer[..<newline])
                buffer.removeSubrange(...newline)
                guard let message = try? JSONLimits.decode(ContentExtensionMessage.self, from: line) else {
                    logger.notice("a content extension said something that is not a message; it is stopped", metadata: ["app": .string(appOf(id))])
                    break reading
                }
                receive(message, in: id, live)
            }
            if buffer.count > ContentExtensionMessage.maximumLineBytes {
                logger.notice("a content extension's message is too long; it is stopped", metadata: ["app": .string(appOf(id))])
                break
            }
        }
        ExtensionProcess.kill(live.process)
        let stranded = live.waiting.withLock { waiting in
            defer {
                waiting.ended = true
                waiting.answers = [:]
            }
            return Array(waiting.answers.values)
        }
        for continuation in stranded {
            continuation.resume(throwing: DaemonError(.extensionFailed, "The content extension ended without answering."))
        }
        state.withLock { state in
            guard state.sessions[id]?.live === live else { return }
            state.sessions.removeValue(forKey: id)
            state.order.removeAll { $0 == id }
        }
        onEvent(.ended(id))
    }

    private func appOf(_ id: String) -> String {
        state.withLock { $0.sessions[id]?.session.app } ?? "?"
    }

    private func receive(_ message: ContentExtensionMessage, in id: String, _ live: Live) {
        if let interface = message.interface {
            state.withLock { state in
                guard state.sessions[id]?.live === live else { return }
                state.sessions[id]!.session.interface = interface
                state.sessions[id]!.session.version += 1
            }
        }
        if let replyTo = message.replyTo {
            let (waiter, done) = live.waiting.withLock { waiting in
                (waiting.answers.removeValue(forKey: replyTo), waiting.closing && waiting.answers.isEmpty)
            }
            waiter?.resume(returning: message)
            if done { close(id) }
            return
        }
        switch message.type {
        case .interface: onEvent(.changed(id))
        case .defaultAction: onEvent(.defaultAction(id))
        case .dismiss: onEvent(.dismiss(id))
        case .notification, .response, .mediaPlay, .mediaPause: break
        }
    }
}
