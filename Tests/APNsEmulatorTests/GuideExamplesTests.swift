import Foundation
import Testing
import TestSupport

/// The guide's examples in other languages (`Examples/emulator`, `Docs/emulator.md`), run as a
/// provider's CI runs them against the real `unotify emulator`: pytest with aioapns, and the shell
/// with curl. Each takes a few seconds of wall-clock time for an hour and more of the emulator's.
@Suite(.timeLimit(.minutes(2))) struct GuideExamplesTests {
    static let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Examples/emulator")
    static let environment = ["UNOTIFY": ChildProcess.built("unotify").path, "PYTHONDONTWRITEBYTECODE": "1"]

    @Test func thePythonBackendsTestsPassWithPytestAndAioapns() async throws {
        let run = try await Program.run("/usr/bin/env", [
            "python3", "-m", "pytest", "-q", "-p", "no:cacheprovider", Self.examples.appendingPathComponent("python").path,
        ], environment: Self.environment, mergingErrors: true)
        #expect(run.succeeded, "\(run.output)")
        #expect(run.output.contains("4 passed"), "\(run.output)")
    }

    @Test func theShellStepPassesWithCurl() async throws {
        let run = try await Program.run(Self.examples.appendingPathComponent("shell/provider-ci.sh").path, [], environment: Self.environment,
                                        mergingErrors: true)
        #expect(run.succeeded, "\(run.output)")
        #expect(run.output.contains("Every check passed."), "\(run.output)")
    }
}
