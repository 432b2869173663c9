import Foundation
import ProcessSpawning
import Synchronization
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// The daemon starts apps and their extensions, and the tests start everything else, with
/// `SpawnedProcess`: what a child gets, how its end is reported, and starts that must not fail.
@Suite(.timeLimit(.minutes(2))) struct SpawnedProcessTests {
    @Test func aChildGetsItsArgumentsEnvironmentFolderAndOutput() throws {
        let folder = try makeTestDirectory()
        let run = try Program.run("/bin/sh", ["-c", #"printf '%s|%s|%s' "$1" "$GREETING" "$(pwd)"; echo oops >&2; exit 3"#, "sh", "first argument"],
                                  environment: ["GREETING": "hello there"], directory: folder.path)
        #expect(run.termination == .exited(3))
        #expect(run.output == "first argument|hello there|\(folder.resolvingSymlinksInPath().path)")
        #expect(run.errors == "oops\n")
    }

    @Test func aChildSeesOnlyTheDescriptorsItIsGiven() throws {
        // Not close-on-exec: a child started the old way would inherit it.
        let leaked = open("/dev/null", O_RDONLY)
        defer { close(leaked) }
        let run = try Program.run("/bin/sh", ["-c", "ls /proc/self/fd"])
        let descriptors = Set(run.output.split(separator: "\n").compactMap { Int32($0) })
        #expect(!descriptors.contains(leaked))
        #expect(descriptors.isSuperset(of: [0, 1, 2]))
        #expect(descriptors.count <= 4, "0, 1, 2 and the folder ls reads: \(descriptors.sorted())")
    }

    /// A standard descriptor of this process given as the source of another is the one this
    /// process has, not what an earlier redirection made of it in the child.
    @Test func aStandardDescriptorGivenAsASourceIsThisProcesss() throws {
        let folder = try makeTestDirectory()
        let path = folder.appendingPathComponent("output").path
        let file = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        defer { close(file) }
        let process = try SpawnedProcess.spawn("/bin/sh", arguments: ["-c", "echo out; echo 'SpawnedProcessTests: this line belongs in the test output' >&2"],
                                               standardOutput: .descriptor(file), standardError: .descriptor(STDOUT_FILENO))
        #expect(process.waitUntilExit() == .exited(0))
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "out\n")
    }

    @Test func aChildLeadsAProcessGroupOfItsOwn() throws {
        let run = try Program.run("/bin/sh", ["-c", "ps -o pgid= -p $$"])
        let group = Int32(run.output.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(group != nil && group != getpgrp(), "its group: \(run.output), this process's: \(getpgrp())")
    }

    @Test func aSignalThatEndsAChildIsReportedAndLaterSignalsGoNowhere() async throws {
        let process = try SpawnedProcess.spawn("/bin/sleep", arguments: ["60"], standardOutput: .null)
        #expect(process.isRunning)
        process.send(SIGTERM)
        #expect(await process.exit() == .signalled(SIGTERM))
        #expect(!process.isRunning)
        #expect(process.waitUntilExit() == .signalled(SIGTERM), "asked again, the same answer")
        process.send(SIGKILL)
    }

    @Test func aProgramThatCannotStartSaysWhy() throws {
        let error = #expect(throws: SpawnedProcess.SpawnError.self) {
            try SpawnedProcess.spawn("/nonexistent/program")
        }
        #expect(error?.code == ENOENT)
        #expect(error?.description == "/nonexistent/program: No such file or directory")
    }

    @Test func aProgramStillOpenForWritingIsRefusedWithTextFileBusy() throws {
        let folder = try makeTestDirectory()
        let path = folder.appendingPathComponent("still-writing.sh").path
        let writer = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o755)
        defer { close(writer) }
        _ = "#!/bin/sh\nexit 0\n".withCString { write(writer, $0, strlen($0)) }
        let error = #expect(throws: SpawnedProcess.SpawnError.self) { try SpawnedProcess.spawn(path) }
        #expect(error?.code == ETXTBSY)
    }

    /// A script written and started at once, while other threads start processes, starts every time.
    /// Each child started at the moment the script's writer is open holds a copy of it until its own
    /// program replaces it; that makes `ETXTBSY`, which the start waits out.
    @Test func aScriptJustWrittenStartsWhileOtherThreadsStartProcesses() throws {
        let folder = try makeTestDirectory()
        // Threads, not tasks: each blocks while its child runs.
        let stop = Atomic(false)
        let finished = DispatchSemaphore(value: 0)
        for _ in 0..<2 {
            Thread {
                while !stop.load(ordering: .relaxed) {
                    _ = try? SpawnedProcess.spawn("/bin/true").waitUntilExit()
                }
                finished.signal()
            }.start()
        }
        defer {
            stop.store(true, ordering: .relaxed)
            finished.wait()
            finished.wait()
        }
        for index in 0..<500 {
            let path = folder.appendingPathComponent("script-\(index).sh").path
            let writer = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o755)
            _ = "#!/bin/sh\nexit 7\n".withCString { write(writer, $0, strlen($0)) }
            close(writer)
            #expect(try SpawnedProcess.spawn(path).waitUntilExit() == .exited(7))
        }
    }
}
