import Foundation
import Testing

/// The README's quick start, as a person follows it: the real `unotify serve`, `unotify watch` typed
/// into, `unotify respond`, and the real example app, each its own process.
@Suite(.timeLimit(.minutes(2))) struct QuickStartTests {
    /// The environment the README's commands run in: one data directory and socket for all of them.
    static func environment(_ directory: URL) -> [String: String] {
        ["UNOTIFY_DATA_DIR": directory.path, "UNOTIFY_SOCKET": directory.appendingPathComponent("unotify.sock").path]
    }

    static func serve(_ directory: URL) async throws -> ChildProcess {
        // The gateway's ports are picked free, so that the test never meets a `unotify serve` running on the machine.
        let serve = try ChildProcess(ChildProcess.built("unotify"), ["serve", "--sandbox-port", "0", "--production-port", "0", "--device-link-port", "0"],
                                     environment: environment(directory), name: "unotify serve")
        try await serve.line(containing: "local API listening")
        return serve
    }

    @Test func theQuickStartWorksAsWrittenWatchIncluded() async throws {
        let directory = try makeTestDirectory()
        let environment = Self.environment(directory)
        let unotify = ChildProcess.built("unotify")
        let serve = try await Self.serve(directory)

        let add = try ChildProcess(unotify, ["apps", "add", "com.example.todo"], environment: environment, name: "unotify apps add")
        #expect(await add.waitUntilExit() == 0)

        // The app starts first and waits for the person's answer; a watch started afterwards shows the prompt.
        let app = try ChildProcess(ChildProcess.built("todo-example"), ["--schedule", "2"],
                                   environment: environment.merging(["UNOTIFY_APP_ID": "com.example.todo"]) { $1 }, name: "todo-example")
        try await app.line(containing: "asking for permission")
        let watch = try ChildProcess(unotify, ["watch"], environment: environment, name: "unotify watch")
        try await watch.line(containing: "[com.example.todo] would like to send you notifications")

        try watch.type("allow com.example.todo")
        try await app.line(containing: "scheduled \"daily-report\" in 2 s")
        // The reminder fires while the app is in the foreground: its delegate decides, and the watch shows it live.
        try await app.line(containing: "arrived while running: 📌 Daily reminder")
        let shown = try await watch.line(containing: "#1 [com.example.todo] daily-report")
        #expect(shown.contains("banner"))
        try await watch.line(containing: "actions: MARK_DONE (Done), INPUT (Reply, typed reply)")

        try watch.type("1 INPUT all done")
        try await app.line(containing: "the person replied to \"daily-report\": all done")
        try await watch.line(containing: "[com.example.todo] received INPUT \"all done\" for daily-report")
        await app.interrupt()

        // Then: the app schedules again and is stopped once the reminder arrived; the person acts on it
        // while the app is not running; the app started again receives what waited for it.
        let appEnvironment = environment.merging(["UNOTIFY_APP_ID": "com.example.todo"]) { $1 }
        let again = try ChildProcess(ChildProcess.built("todo-example"), ["--schedule", "2"], environment: appEnvironment, name: "todo-example again")
        try await again.line(containing: "arrived while running: 📌 Daily reminder")
        await again.interrupt()
        try await watch.line(containing: "[com.example.todo] is notRunning")
        let respond = try ChildProcess(unotify, ["respond", "daily-report", "--action", "MARK_DONE"], environment: environment, name: "unotify respond")
        try await respond.line(containing: "Done: action MARK_DONE on daily-report of com.example.todo.")
        #expect(await respond.waitUntilExit() == 0)
        let restarted = try ChildProcess(ChildProcess.built("todo-example"), [], environment: appEnvironment, name: "todo-example restarted")
        try await restarted.line(containing: "the person marked \"daily-report\" done")
        try await watch.line(containing: "[com.example.todo] received MARK_DONE for daily-report")

        try watch.endInput()
        #expect(await watch.waitUntilExit() == 0, "Ctrl-D ends the watch")
        await restarted.stop()
        await serve.stop()
    }

    /// An app runs as one process: a second one takes over, the first stops, and neither reconnects
    /// in a loop.
    @Test func aSecondProcessOfTheAppTakesOverWithoutALoop() async throws {
        let directory = try makeTestDirectory()
        let environment = Self.environment(directory)
        let unotify = ChildProcess.built("unotify")
        let serve = try await Self.serve(directory)
        #expect(await (try ChildProcess(unotify, ["apps", "add", "com.example.todo"], environment: environment)).waitUntilExit() == 0)
        #expect(await (try ChildProcess(unotify, ["authorize", "--app", "com.example.todo", "grant"], environment: environment)).waitUntilExit() == 0)
        let appEnvironment = environment.merging(["UNOTIFY_APP_ID": "com.example.todo"]) { $1 }

        let watch = try ChildProcess(unotify, ["watch"], environment: environment, name: "unotify watch")
        try await watch.line(containing: "Watching")
        let first = try ChildProcess(ChildProcess.built("todo-example"), [], environment: appEnvironment, name: "first todo-example")
        try await first.line(containing: "waiting for the person")
        try await watch.line(containing: "[com.example.todo] is foreground")

        let second = try ChildProcess(ChildProcess.built("todo-example"), [], environment: appEnvironment, name: "second todo-example")
        try await first.line(containing: "another todo-example took over; this one stops")
        #expect(await first.waitUntilExit() == 0)
        try await second.line(containing: "waiting for the person")

        // The takeover is one stop and one start; then the second process is the app, and stays it.
        let isState: @Sendable (String) -> Bool = { $0.hasPrefix("[com.example.todo] is ") }
        try await watch.line(number: 3, matching: isState, within: 10)
        // Had the first process come back, it would have taken over again within its back-off (≤ 5 s).
        let loop = try? await watch.line(number: 4, matching: isState, within: 6)
        #expect(loop == nil, "no reconnect loop")
        #expect(watch.lines.filter(isState) == [
            "[com.example.todo] is foreground", "[com.example.todo] is notRunning", "[com.example.todo] is foreground",
        ])
        #expect(first.lines.filter { $0.contains("took over") }.count == 1)

        await second.stop()
        try watch.endInput()
        _ = await watch.waitUntilExit()
        await serve.stop()
    }
}
