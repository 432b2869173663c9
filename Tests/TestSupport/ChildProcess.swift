import Foundation
import ProcessSpawning
import Synchronization

/// A real process a test starts (`unotify`, the example app), typed into through its standard input
/// and read line by line from its output, as a person at a terminal would.
package final class ChildProcess: Sendable {
    /// An executable built beside the test bundle: `unotify`, `todo-example`.
    package static func built(_ name: String) -> URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name)
    }

    package struct Timeout: Error, CustomStringConvertible {
        package let description: String
    }

    private struct Output {
        var lines: [String] = []
        /// The bytes of a line not ended yet: decoded once whole, as a character may be split between reads.
        var partial: [UInt8] = []
        var waiters: [UUID: (predicate: @Sendable (String) -> Bool, continuation: CheckedContinuation<String?, Never>)] = [:]
        var ended = false
    }

    package let name: String
    private let process: SpawnedProcess
    private let input: Pipe
    private let output = Locked(Output())

    /// Starts `executable` with `arguments`, with `environment` added to this process's own.
    package init(_ executable: URL, _ arguments: [String], environment: [String: String] = [:], in directory: URL? = nil, name: String? = nil) throws {
        self.name = name ?? executable.lastPathComponent
        // A desktop session's bus only when the test gives one: a developer's own desktop never sees
        // the tests' notifications.
        var inherited = ProcessInfo.processInfo.environment
        inherited["DBUS_SESSION_BUS_ADDRESS"] = nil
        inherited["XDG_RUNTIME_DIR"] = nil
        // Nor its configuration file (`unotify.toml`): a test's `unotify` has the options it gives.
        inherited["UNOTIFY_CONFIG"] = "/dev/null"
        let input = Pipe()
        let combined = Pipe()
        self.process = try SpawnedProcess.spawn(
            executable.path,
            arguments: arguments,
            environment: inherited.merging(environment) { _, new in new },
            directory: directory?.path,
            standardInput: .descriptor(input.fileHandleForReading.fileDescriptor),
            standardOutput: .descriptor(combined.fileHandleForWriting.fileDescriptor),
            standardError: .descriptor(combined.fileHandleForWriting.fileDescriptor)
        )
        try? input.fileHandleForReading.close()
        try? combined.fileHandleForWriting.close()
        self.input = input
        let output = self.output
        PipeReader.start(combined.fileHandleForReading, name: self.name) { data in
            let ready = output.withLock { state -> [(CheckedContinuation<String?, Never>, String?)] in
                if data.isEmpty {
                    state.ended = true
                    if !state.partial.isEmpty { state.lines.append(String(decoding: state.partial, as: UTF8.self)) }
                    defer { state.waiters.removeAll() }
                    return state.waiters.values.map { ($0.continuation, nil) }
                }
                state.partial += data
                var fresh: [String] = []
                while let newline = state.partial.firstIndex(of: UInt8(ascii: "\n")) {
                    fresh.append(String(decoding: state.partial[..<newline], as: UTF8.self))
                    state.partial.removeSubrange(...newline)
                }
                state.lines += fresh
                var resumed: [(CheckedContinuation<String?, Never>, String?)] = []
                for (id, waiter) in state.waiters {
                    if let line = fresh.first(where: waiter.predicate) {
                        state.waiters.removeValue(forKey: id)
                        resumed.append((waiter.continuation, line))
                    }
                }
                return resumed
            }
            for (continuation, line) in ready { continuation.resume(returning: line) }
        }
    }

    /// Everything printed so far, one line an element.
    package var lines: [String] { output.withLock { $0.lines } }

    /// The process's identifier, to read what the system says of it (`/proc/<pid>`).
    package var pid: Int32 { process.pid }

    /// Everything the process printed, once its output closed (it exited and the last bytes were
    /// read); at the deadline, what it printed so far. `waitUntilExit()` can return before then.
    package func completeOutput(within seconds: Double = 30) async -> [String] {
        _ = try? await line(within: seconds, "the end of its output") { _ in false }
        return lines
    }

    /// Types a line, as a person pressing return.
    package func type(_ line: String) throws {
        try input.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8))
    }

    /// Closes standard input (Ctrl-D).
    package func endInput() throws {
        try input.fileHandleForWriting.close()
    }

    /// The first line, printed before or after this call, containing `text`; throws at the deadline.
    @discardableResult
    package func line(containing text: String, within seconds: Double = 30) async throws -> String {
        try await line(within: seconds, "\"\(text)\"") { $0.contains(text) }
    }

    /// The `number`th line matching `predicate` (counting from 1, and from the first line printed);
    /// throws at the deadline.
    @discardableResult
    package func line(number: Int, matching predicate: @escaping @Sendable (String) -> Bool, within seconds: Double) async throws -> String {
        let seen = Counter()
        return try await line(within: seconds, "match number \(number)") { line in
            predicate(line) && seen.increment() == number
        }
    }

    /// The first line matching `predicate`, printed before or after this call; throws at the deadline.
    package func line(within seconds: Double, _ what: String, where predicate: @escaping @Sendable (String) -> Bool) async throws -> String {
        let id = UUID()
        let found: String? = await withTaskGroup(of: String?.self) { group in
            group.addTask {
                await withCheckedContinuation { (continuation: CheckedContinuation<String?, Never>) in
                    let (now, ended) = self.output.withLock { state -> (String?, Bool) in
                        if let line = state.lines.first(where: predicate) { return (line, false) }
                        if state.ended { return (nil, true) }
                        state.waiters[id] = (predicate, continuation)
                        return (nil, false)
                    }
                    if now != nil || ended { continuation.resume(returning: now) }
                }
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(seconds))
                return nil
            }
            let first = await group.next()!
            group.cancelAll()
            self.output.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume(returning: nil)
            return first
        }
        guard let found else {
            throw Timeout(description: "\(name) printed no line with \(what) within \(seconds) s. It printed:\n\(lines.joined(separator: "\n"))")
        }
        return found
    }

    package var isRunning: Bool { process.isRunning }

    /// Sends Ctrl-C (SIGINT), as a person stops a program in a terminal, and waits until it has exited.
    package func interrupt() async {
        process.send(SIGINT)
        await waitUntilExit()
    }

    /// Stops the process (SIGTERM, or SIGKILL) and waits until it has exited; returns its status, or
    /// `nil` if it had not exited within 30 seconds (it is then killed).
    @discardableResult
    package func stop(kill: Bool = false) async -> Int32? {
        process.send(kill ? SIGKILL : SIGTERM)
        return await waitUntilExit()
    }

    /// Waits until the process has exited; returns its status, or `nil` at the deadline (the process is
    /// then killed).
    @discardableResult
    package func waitUntilExit(within seconds: Double = 30) async -> Int32? {
        do {
            return try await withDeadline("\(name) to exit", timeout: .seconds(seconds)) { await self.process.exit().status }
        } catch {
            process.send(SIGKILL)
            return nil
        }
    }

    deinit {
        process.send(SIGTERM)
    }
}

private final class Counter: Sendable {
    private let value = Mutex(0)
    func increment() -> Int { value.withLock { $0 += 1; return $0 } }
}

/// A value behind a lock, shared by reference with the handlers of a process.
package final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    package init(_ value: Value) { mutex = Mutex(value) }
    package func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T { try mutex.withLock { try body(&$0) } }
}
