package import Foundation
package import Logging
package import ProcessSpawning
#if canImport(Glibc)
import Glibc
#endif

/// What every app extension process the daemon starts has in common: a small environment, its own
/// folders, bounded memory and CPU time, and a kill that cannot fail the daemon.
package enum ExtensionProcess {
    /// The extension's environment: what a program needs to run and reach the network, and its folders.
    package static func environment(folder: URL, caches: URL, app: String) -> [String: String] {
        let inherited = ProcessInfo.processInfo.environment
        var environment: [String: String] = [:]
        for name in ["PATH", "HOME", "LANG", "LC_ALL", "TZ", "http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY"] {
            if let value = inherited[name] { environment[name] = value }
        }
        environment["TMPDIR"] = folder.path
        environment["XDG_CACHE_HOME"] = caches.path
        environment["UNOTIFY_EXTENSION_FOR"] = app
        return environment
    }

    /// A started extension: its process, the daemon's end of its standard input, and of its output.
    package struct Started {
        package let process: SpawnedProcess
        package let input: FileHandle
        package let output: FileHandle
    }

    /// Starts an extension's executable, with no arguments, in `folder`, with its environment. What it
    /// prints to standard error goes to the daemon's, as an app's own output does.
    package static func start(_ executable: String, folder: URL, caches: URL, app: String) throws -> Started {
        let input = Pipe()
        let output = Pipe()
        let process: SpawnedProcess
        do {
            process = try SpawnedProcess.spawn(
                executable,
                environment: environment(folder: folder, caches: caches, app: app),
                directory: folder.path,
                standardInput: .descriptor(input.fileHandleForReading.fileDescriptor),
                standardOutput: .descriptor(output.fileHandleForWriting.fileDescriptor)
            )
        } catch {
            try? input.fileHandleForWriting.close()
            try? input.fileHandleForReading.close()
            try? output.fileHandleForWriting.close()
            try? output.fileHandleForReading.close()
            throw error
        }
        try? output.fileHandleForWriting.close()
        try? input.fileHandleForReading.close()
        return Started(process: process, input: input.fileHandleForWriting, output: output.fileHandleForReading)
    }

    /// Stops the process at once, if it still runs.
    package static func kill(_ process: SpawnedProcess) {
        process.send(SIGKILL)
    }

    /// Bounds a process's memory (`RLIMIT_DATA`, its heap and other private writable memory) and CPU
    /// time. Applied just after it starts, before it has read anything.
    package static func limit(_ pid: Int32, memoryBytes: UInt64, cpuSeconds: UInt64, logger: Logger) {
        var memory = rlimit(rlim_cur: rlim_t(memoryBytes), rlim_max: rlim_t(memoryBytes))
        var cpu = rlimit(rlim_cur: rlim_t(cpuSeconds), rlim_max: rlim_t(cpuSeconds) + 1)
        guard let prlimit,
              prlimit(pid, Int32(RLIMIT_DATA.rawValue), &memory, nil) == 0,
              prlimit(pid, Int32(RLIMIT_CPU.rawValue), &cpu, nil) == 0 else {
            logger.notice("could not limit an extension's memory and CPU time", metadata: ["errno": .stringConvertible(errno)])
            return
        }
    }

    /// glibc's `prlimit(2)`, which sets another process's limits; Swift's Glibc module leaves it out
    /// (it is a GNU extension), so it is looked up by name.
    private typealias PrlimitFunction = @convention(c) (pid_t, Int32, UnsafePointer<rlimit>?, UnsafeMutablePointer<rlimit>?) -> Int32
    private static let prlimit: PrlimitFunction? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "prlimit") else { return nil }
        return unsafeBitCast(symbol, to: PrlimitFunction.self)
    }()
}
