import Foundation
import ProcessSpawning

#if canImport(Glibc)
import Glibc
#endif

/// A program a test runs to its end (a validator, curl, nghttp, a PyPI client, PostgreSQL's tools),
/// and what it printed.
package enum Program {
    package struct Run: Sendable {
        package let termination: SpawnedProcess.Termination
        /// What it wrote to its standard output (and its standard error, when merged).
        package let output: String
        /// What it wrote to its standard error, unless merged into `output`.
        package let errors: String

        package var succeeded: Bool { termination == .exited(0) }
    }

    /// Runs `executable` with `arguments` and waits for it to end. Its output goes to files, not
    /// pipes: a process it leaves running in the background cannot hold the wait open.
    ///
    /// - Parameters:
    ///   - environment: added to this process's own.
    ///   - mergingErrors: standard error written into `output`, in the order printed.
    package static func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:],
                            directory: String? = nil, mergingErrors: Bool = false) throws -> Run {
        let started = try Started(executable, arguments, environment: environment, directory: directory, mergingErrors: mergingErrors)
        return started.run(started.process.waitUntilExit())
    }

    /// Runs `executable` with `arguments` and waits for it to end without blocking a thread.
    package static func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:],
                            directory: String? = nil, mergingErrors: Bool = false) async throws -> Run {
        let started = try Started(executable, arguments, environment: environment, directory: directory, mergingErrors: mergingErrors)
        return started.run(await started.process.exit())
    }

    private struct Started {
        let process: SpawnedProcess
        let output: CapturedOutput
        let errors: CapturedOutput

        init(_ executable: String, _ arguments: [String], environment: [String: String], directory: String?, mergingErrors: Bool) throws {
            output = try CapturedOutput()
            errors = try CapturedOutput()
            process = try SpawnedProcess.spawn(
                executable,
                arguments: arguments,
                environment: ProcessInfo.processInfo.environment.merging(environment) { _, new in new },
                directory: directory,
                standardInput: .null,
                standardOutput: .descriptor(output.descriptor),
                standardError: .descriptor(mergingErrors ? output.descriptor : errors.descriptor)
            )
        }

        func run(_ termination: SpawnedProcess.Termination) -> Run {
            Run(termination: termination, output: output.text, errors: errors.text)
        }
    }
}

/// A temporary file a child writes into, removed from its folder as soon as it is open.
private final class CapturedOutput: Sendable {
    let descriptor: Int32

    init() throws {
        var template = Array((NSTemporaryDirectory() + "/program-output-XXXXXX").utf8CString)
        descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
    }

    var text: String {
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        var offset: off_t = 0
        while true {
            let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, offset) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            data += buffer[..<count]
            offset += off_t(count)
        }
        return String(decoding: data, as: UTF8.self)
    }

    deinit { close(descriptor) }
}
