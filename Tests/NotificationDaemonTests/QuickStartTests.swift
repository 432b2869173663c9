import Foundation
import Testing
import TestSupport

/// The README's quick start, as a person follows it: the real `unotify serve`, `unotify watch` typed
/// into, `unotify respond`, and the real example app, each its own process.
@Suite(.timeLimit(.minutes(2))) struct QuickStartTests {
    @Test func theQuickStartWorksAsWrittenWatchIncluded() async throws {
        let directory = try makeTestDirectory()
        let environment = ServedSystem.environment(directory)
        let unotify = ChildProcess.built("unotify")
        let serve = try await ServedSystem.serve(directory)

        let add = try ChildProcess(unotify, ["apps", "add", "com.example.todo"], environment: environment, name: "unotify apps add")
        #expect(await add.waitUntilExit() == 0)

        // The app starts first and waits for the person's answer; a watch started afterwards shows the prompt.
        let app = try ChildProcess(ChildProcess.built("todo-example"), ["--schedule", "2"],
                                   environment: environment.merging(["UNOTIFY_APP_ID": "com.example.todo"]) { $1 }, name: "todo-example")
        try await app.line(containing: "asking for permission")
        let watch = try ChildProcess(unotify, ["watch"], environment: environment, name: "unotify watch")
        try await watch.line(containing: "[com.example.todo] would like to send you notifications")

        try watch.type("allow com.example.todo")
        try await watch.line(containing: "[com.example.todo] may send you notifications (authorized).")
        try await app.line(containing: "scheduled \"daily-report\" in 2 s")
        // The reminder fires while the app is in the foreground: its delegate decides, and the watch shows it live.
        try await app.line(containing: "arrived while running: 📌 Daily reminder")
        let shown = try await watch.line(containing: "#1 [com.example.todo] daily-report")
        #expect(shown.contains("banner"))
        try await watch.line(containing: "actions: MARK_DONE (Done), INPUT (Reply, typed reply)")

        try watch.type("1 INPUT all done")
        try await app.line(containing: "the person replied to \"daily-report\": all done")
        try await watch.line(containing: "[com.example.todo] #1 answered with INPUT")
        try await watch.line(containing: "[com.example.todo] received INPUT \"all done\" for daily-report")
        await app.interrupt()

        // Then: the app schedules again and is stopped once the reminder arrived; the person acts on it
        // while the app is not running; the app started again receives what waited for it.
        let appEnvironment = environment.merging(["UNOTIFY_APP_ID": "com.example.todo"]) { $1 }
        let again = try ChildProcess(ChildProcess.built("todo-example"), ["--schedule", "2"], environment: appEnvironment, name: "todo-example again")
        // Permission was given: the app says so, and asks nothing.
        try await again.line(containing: "notifications are allowed")
        try await again.line(containing: "arrived while running: 📌 Daily reminder")
        #expect(!again.lines.contains { $0.contains("asking for permission") })
        // The person sees it (the app's answer reached the daemon) before the app is stopped.
        try await watch.line(containing: "#2 [com.example.todo] daily-report")
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

    /// `unotify serve` with the example app registered and allowed, and a watch open: the app's
    /// environment, to start it in.
    static func serveAppAndWatch(directory: URL) async throws -> (serve: ChildProcess, watch: ChildProcess, appEnvironment: [String: String]) {
        let environment = ServedSystem.environment(directory)
        let unotify = ChildProcess.built("unotify")
        let serve = try await ServedSystem.serve(directory)
        #expect(await (try ChildProcess(unotify, ["apps", "add", "com.example.todo"], environment: environment)).waitUntilExit() == 0)
        #expect(await (try ChildProcess(unotify, ["authorize", "--app", "com.example.todo", "grant"], environment: environment)).waitUntilExit() == 0)
        let watch = try ChildProcess(unotify, ["watch"], environment: environment, name: "unotify watch")
        try await watch.line(containing: "Watching")
        return (serve, watch, environment.merging(["UNOTIFY_APP_ID": "com.example.todo"]) { $1 })
    }

    /// Each command that changes something says what it did in one line; a push whose alert is a
    /// string reaches the app with its words; local and gateway pushes' identifiers are of one form
    /// (lower-case UUIDs, as APNs makes them).
    @Test func commandsConfirmWhatTheyDidAndIdentifiersHaveOneForm() async throws {
        let directory = try makeTestDirectory()
        let (serve, watch, appEnvironment) = try await Self.serveAppAndWatch(directory: directory)
        let environment = ServedSystem.environment(directory)
        func said(_ arguments: [String]) async throws -> [String] {
            let command = try ChildProcess(ChildProcess.built("unotify"), arguments, environment: environment, name: "unotify \(arguments[0])")
            #expect(await command.waitUntilExit() == 0, "\(arguments): \(command.lines)")
            return await command.completeOutput()
        }
        #expect(try await said(["gateway", "teams", "add", "ABCDE12345"]) == ["ABCDE12345"])
        #expect(try await said(["gateway", "apps", "add", "com.example.todo", "--team", "ABCDE12345"]) == ["Team ABCDE12345 may push to com.example.todo."])
        let keyID = try #require(try await said(["gateway", "keys", "create", "--team", "ABCDE12345"]).first { !$0.hasPrefix("Key ") })
        #expect(try await said(["gateway", "keys", "remove", keyID]) == ["Key \(keyID) revoked: tokens it signed are refused now."])
        #expect(try await said(["gateway", "apps", "remove", "com.example.todo"]) == ["No team may push to com.example.todo now."])
        #expect(try await said(["location", "48.8566", "2.3522"]) == ["The device is at 48.8566, 2.3522 now."])
        #expect(try await said(["device", "--lock"]) == ["The device is locked now."])
        #expect(try await said(["device", "--unlock", "--time-zone", "Europe/Paris"]) == ["The device is unlocked and in the time zone Europe/Paris now."])

        let app = try ChildProcess(ChildProcess.built("todo-example"), [], environment: appEnvironment, name: "todo-example")
        try await app.line(containing: "waiting for the person")
        _ = try await said(["push", "com.example.todo", "--payload", #"{"aps":{"alert":"Just a string"}}"#])
        try await app.line(containing: "arrived while running: Just a string")
        let listed = try await said(["delivered", "--app", "com.example.todo"]).joined()
        let identifier = try #require(listed.split(separator: "\t").first.map(String.init))
        #expect(identifier == identifier.lowercased() && UUID(uuidString: identifier) != nil, "\(identifier)")

        // An app registered with a name is shown by it in the watch.
        #expect(try await said(["apps", "identity", "com.example.todo", "--name", "Todo"]) == ["com.example.todo is shown named \"Todo\" now."])
        let named = try ChildProcess(ChildProcess.built("unotify"), ["watch"], environment: environment, name: "unotify watch (named)")
        try await named.line(containing: "Watching")
        _ = try await said(["push", "com.example.todo", "--payload", #"{"aps":{"alert":"By name"}}"#])
        try await named.line(containing: "[Todo] ")
        try named.endInput()
        _ = await named.waitUntilExit()

        #expect(try await said(["apps", "remove", "com.example.todo"]) == ["Removed com.example.todo and all its notifications."])
        await app.stop()
        try watch.endInput()
        _ = await watch.waitUntilExit()
        await serve.stop()
    }

    /// A notification swiped away in the watch leaves it with a word, and the app, whose category asks
    /// for dismissals, hears of it; a second swipe finds it gone.
    @Test func aNotificationDismissedInTheWatchSaysSo() async throws {
        let (serve, watch, appEnvironment) = try await Self.serveAppAndWatch(directory: try makeTestDirectory())
        let app = try ChildProcess(ChildProcess.built("todo-example"), ["--schedule", "1"], environment: appEnvironment, name: "todo-example")
        try await app.line(containing: "arrived while running: 📌 Daily reminder")
        try await watch.line(containing: "#1 [com.example.todo] daily-report")
        try watch.type("1 dismiss")
        try await watch.line(containing: "[com.example.todo] #1 dismissed")
        try await app.line(containing: "the person dismissed \"daily-report\"")
        try watch.type("1 dismiss")
        try await watch.line(containing: "Refused:")

        await app.stop()
        try watch.endInput()
        _ = await watch.waitUntilExit()
        await serve.stop()
    }

    /// An app runs as one process: a second one takes over, the first stops, and neither reconnects
    /// in a loop.
    @Test func aSecondProcessOfTheAppTakesOverWithoutALoop() async throws {
        let (serve, watch, appEnvironment) = try await Self.serveAppAndWatch(directory: try makeTestDirectory())
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

    /// An app connected when its daemon restarts connects again, once, and stays connected: a push
    /// then reaches its `willPresent`, whose answer presents it. (Its replies were an `AsyncStream`
    /// that the first closed connection ended for good: every later connection closed at once, and
    /// the app reconnected in a loop, a start and a stop every few seconds.)
    @Test func anAppReconnectsOnceAfterTheDaemonRestarts() async throws {
        let directory = try makeTestDirectory()
        let environment = ServedSystem.environment(directory)
        var (serve, watch, appEnvironment) = try await Self.serveAppAndWatch(directory: directory)
        let app = try ChildProcess(ChildProcess.built("todo-example"), [], environment: appEnvironment, name: "todo-example")
        try await app.line(containing: "waiting for the person")
        try await watch.line(containing: "[com.example.todo] is foreground")

        await serve.stop()
        try await watch.line(containing: "went away; waiting for it to come back")
        serve = try await ServedSystem.serve(directory)
        try await watch.line(containing: "The daemon is back")
        // Back within the link's back-off (at most 5 s between attempts). The watch shows it whether
        // the app connected before it subscribed again (it lists the apps running) or after (the event).
        let foreground: @Sendable (String) -> Bool = { $0 == "[com.example.todo] is foreground" }
        try await watch.line(number: 2, matching: foreground, within: 15)
        let listed = try ChildProcess(ChildProcess.built("unotify"), ["apps", "list"], environment: environment, name: "unotify apps list")
        #expect(await listed.completeOutput().contains("com.example.todo  (foreground)"))

        let file = directory.appendingPathComponent("after.apns")
        try Data(#"{"Simulator Target Bundle":"com.example.todo","aps":{"alert":{"title":"After","body":"A push"}}}"#.utf8).write(to: file)
        #expect(await (try ChildProcess(ChildProcess.built("unotify"), ["push", file.path], environment: environment, name: "unotify push")).waitUntilExit() == 0)
        try await app.line(containing: "arrived while running: After")
        try await watch.line(containing: "After — A push")

        // A loop would have stopped the app again within its back-off.
        let stopped: @Sendable (String) -> Bool = { $0 == "[com.example.todo] is notRunning" }
        let loop = try? await watch.line(number: watch.lines.filter(stopped).count + 1, matching: stopped, within: 6)
        #expect(loop == nil, "no reconnect loop")

        await app.stop()
        try watch.endInput()
        _ = await watch.waitUntilExit()
        await serve.stop()
    }

    /// A watch outlives its daemon: killed, it says the daemon went away; started again, it says it is
    /// back, lists what is on screen (the notification shown before, under the same number) and goes
    /// on showing what happens.
    @Test func theWatchFollowsTheDaemonThroughARestart() async throws {
        let directory = try makeTestDirectory()
        let environment = ServedSystem.environment(directory)
        let unotify = ChildProcess.built("unotify")
        var serve = try await ServedSystem.serve(directory)
        #expect(await (try ChildProcess(unotify, ["apps", "add", "com.example.todo"], environment: environment)).waitUntilExit() == 0)
        #expect(await (try ChildProcess(unotify, ["authorize", "--app", "com.example.todo", "grant"], environment: environment)).waitUntilExit() == 0)
        let watch = try ChildProcess(unotify, ["watch"], environment: environment, name: "unotify watch")
        try await watch.line(containing: "Watching")
        let push = { (title: String) async throws in
            let file = directory.appendingPathComponent("\(title).apns")
            try Data(#"{"Simulator Target Bundle":"com.example.todo","aps":{"alert":{"title":"\#(title)","body":"A push"}}}"#.utf8).write(to: file)
            let sent = try ChildProcess(unotify, ["push", file.path], environment: environment, name: "unotify push")
            #expect(await sent.waitUntilExit() == 0)
        }
        try await push("Before")
        try await watch.line(containing: "Before — A push")

        await serve.stop(kill: true)
        try await watch.line(containing: "went away; waiting for it to come back")
        serve = try await ServedSystem.serve(directory)
        try await watch.line(containing: "The daemon is back")
        let listedFirst: @Sendable (String) -> Bool = { $0.hasPrefix("#1 [com.example.todo]") }
        try await watch.line(number: 2, matching: listedFirst, within: 20)
        try await push("After")
        try await watch.line(containing: "After — A push")
        #expect(watch.lines.filter { $0.contains("went away") }.count == 1, "said once, not at every attempt")

        try watch.endInput()
        #expect(await watch.waitUntilExit() == 0, "Ctrl-D still ends the watch")
        await serve.stop()
    }

    /// The README's push quick start: `unotify serve` runs a gateway its daemon is linked to; a
    /// provider's `curl`, Apple's command with our host, CA and a token from `unotify`, reaches the
    /// person, seen live in `unotify watch`.
    @Test func aPushSentWithCurlAsAppleDocumentsItReachesTheWatch() async throws {
        let system = try await ServedSystem.start(app: "com.example.todo")
        let (directory, environment, unotify, serve, port, keyID, jwt) = (system.directory, system.environment, system.unotify, system.serve, system.port, system.keyID, system.jwt)
        let run = system.run
        #expect(keyID.count == 10)
        let token = try await run(["apps", "token", "com.example.todo"], nil)
        let watch = try ChildProcess(unotify, ["watch"], environment: environment, name: "unotify watch")
        try await watch.line(containing: "Watching")

        let curl = try ChildProcess(URL(fileURLWithPath: "/usr/bin/curl"), [
            "-sS", "-i", "--http2", "--cacert", directory.appendingPathComponent("gateway/ca.pem").path,
            "-H", "apns-topic: com.example.todo", "-H", "apns-push-type: alert", "-H", "authorization: bearer \(jwt)",
            "-d", #"{"aps":{"alert":{"title":"Hello","body":"From curl"}}}"#, "https://localhost:\(port)/3/device/\(token)",
        ], name: "curl")
        #expect(await curl.waitUntilExit() == 0)
        let answer = await curl.completeOutput()
        #expect(answer.first?.hasPrefix("HTTP/2 200") == true, "\(answer) \(serve.lines.suffix(5))")
        let shown = try await watch.line(containing: "[com.example.todo]")
        #expect(shown.contains("banner"))
        try await watch.line(containing: "Hello — From curl")

        // A provider with a client certificate instead of a key: the curl command `unotify` prints works as printed.
        let printed = try await run(["gateway", "certificates", "create", "--app", "com.example.todo", "--environment", "sandbox"], directory)
        #expect(printed.contains("--cert PushCertificate_com.example.todo.pem --key PushCertificate_com.example.todo-key.pem"))
        // Standard error (merged here) says where the files went; the command follows.
        let printedCommand = printed.split(separator: "\n").drop { !$0.hasPrefix("curl ") }.joined(separator: "\n")
        let command = printedCommand.replacingOccurrences(of: "<device token>", with: token)
            .replacingOccurrences(of: "localhost:2197", with: "localhost:\(port)")
            .replacingOccurrences(of: #"{"aps":{"alert":"Hello"}}"#, with: #"{"aps":{"alert":{"title":"Certified","body":"From a client certificate"}}}"#)
        let certified = try ChildProcess(URL(fileURLWithPath: "/bin/sh"), ["-c", command.replacingOccurrences(of: "curl ", with: "curl -sS -i ")],
                                         in: directory, name: "curl with a certificate")
        #expect(await certified.waitUntilExit() == 0)
        let certifiedAnswer = await certified.completeOutput()
        #expect(certifiedAnswer.first?.hasPrefix("HTTP/2 200") == true, "\(certifiedAnswer) \(certified.lines) \(command)")
        try await watch.line(containing: "Certified — From a client certificate")

        // `unotify push`, as a provider through the gateway, and straight to the app as `simctl push` does.
        let remote = try await run(["push", "--token", token, "--key", directory.appendingPathComponent("AuthKey_\(keyID).p8").path, "--key-id", keyID,
                                    "--team", "ABCDE12345", "--gateway", "https://localhost:\(port)", "com.example.todo",
                                    "--payload", #"{"aps":{"alert":{"title":"Again","body":"From unotify push"}}}"#], nil)
        #expect(remote.contains("200 apns-id"))
        try await watch.line(containing: "Again — From unotify push")
        let apns = directory.appendingPathComponent("local.apns")
        try Data(#"{"Simulator Target Bundle":"com.example.todo","aps":{"alert":{"title":"Local","body":"From an .apns file"}}}"#.utf8).write(to: apns)
        #expect(try await run(["push", apns.path], nil).contains("Delivered to com.example.todo."))
        try await watch.line(containing: "Local — From an .apns file")

        try watch.endInput()
        _ = await watch.waitUntilExit()
        await serve.stop()
    }

    /// An app written as for iOS (`push-example`: an `@main` app delegate) gets its device token from the
    /// gateway, wakes for a background push, shows an alert push with its reply action, and gets the
    /// person's typed reply; every part its own process, the pushes sent with `curl`. Once stopped, it is
    /// started by the daemon for a background push, which it finds in its launch options.
    @Test func theUIKitStyleExampleAppGetsItsTokenItsPushesAndATypedReply() async throws {
        let system = try await ServedSystem.start(app: "com.example.push") { directory in
            // Notes its process, to be stopped by the test.
            "echo $$ > '\(directory.appendingPathComponent("launched.pid").path)' && exec env UNOTIFY_APP_ID=com.example.push '\(ChildProcess.built("push-example").path)'"
        }
        let (directory, environment, unotify, serve, port, jwt) = (system.directory, system.environment, system.unotify, system.serve, system.port, system.jwt)
        defer {
            // The app the daemon started, if it did.
            if let pid = Int32((try? String(contentsOf: directory.appendingPathComponent("launched.pid"), encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines) ?? "") {
                kill(pid, SIGTERM)
            }
        }

        let app = try ChildProcess(ChildProcess.built("push-example"), [],
                                   environment: environment.merging(["UNOTIFY_APP_ID": "com.example.push"]) { $1 }, name: "push-example")
        try await app.line(containing: "authorization granted")
        let registered = try await app.line(containing: "device token ")
        let token = String(registered.split(separator: " ").last ?? "")
        #expect(token.count == 64)

        func curl(_ headers: [String], _ payload: String) async throws {
            let curl = try ChildProcess(URL(fileURLWithPath: "/usr/bin/curl"), [
                "-sS", "-i", "--http2", "--cacert", directory.appendingPathComponent("gateway/ca.pem").path,
                "-H", "apns-topic: com.example.push", "-H", "authorization: bearer \(jwt)",
            ] + headers.flatMap { ["-H", $0] } + ["-d", payload, "https://localhost:\(port)/3/device/\(token)"], name: "curl")
            #expect(await curl.waitUntilExit() == 0)
            let answer = await curl.completeOutput()
            #expect(answer.first?.hasPrefix("HTTP/2 200") == true, "\(answer)")
        }
        try await curl(["apns-push-type: background", "apns-priority: 5"], #"{"aps":{"content-available":1},"acme1":"bar","acme2":42}"#)
        try await app.line(containing: "background push acme1=bar acme2=42")

        // A VoIP push, sent with `unotify push --push-type voip` to the token PushKit gave: the call reaches
        // the PushKit delegate, and the app delegate hears nothing of it.
        let voip = try await app.line(containing: "voip token ")
        #expect(voip.hasSuffix(token), "PushKit's token is the device's token on the gateway")
        let sent = try await system.run(["push", "--token", token, "--key", directory.appendingPathComponent("AuthKey_\(system.keyID).p8").path,
                                         "--key-id", system.keyID, "--team", "ABCDE12345", "--gateway", "https://localhost:\(port)",
                                         "--push-type", "voip", "com.example.push", "--payload", #"{"aps":{},"caller":"Ada"}"#], nil)
        #expect(sent.contains("200 apns-id"))
        try await app.line(containing: "incoming call caller=Ada")

        try await curl(["apns-push-type: alert", "apns-collapse-id: chat-1"], #"{"aps":{"alert":{"title":"Alice","body":"Lunch?"},"category":"MESSAGE"}}"#)
        try await app.line(containing: "willPresent Alice")
        let respond = try ChildProcess(unotify, ["respond", "chat-1", "--action", "REPLY", "--text", "Yes, at noon"], environment: environment, name: "unotify respond")
        #expect(await respond.waitUntilExit() == 0)
        try await app.line(containing: "reply \"Yes, at noon\" to Alice")
        let watch = try ChildProcess(unotify, ["watch"], environment: environment, name: "unotify watch")
        try await watch.line(containing: "Watching")
        await app.stop()
        try await watch.line(containing: "[com.example.push] is notRunning")

        // Stopped: the daemon starts the app for a background push (its output is the daemon's).
        try await curl(["apns-push-type: background", "apns-priority: 5"], #"{"aps":{"content-available":1},"wake":"yes"}"#)
        try await serve.line(containing: "launched for a push wake=yes")
        try await serve.line(containing: "background push wake=yes")
        #expect(!app.lines.contains { $0.hasPrefix("background push caller=") }, "a VoIP push never reaches the app delegate")
        await watch.stop()
        await serve.stop()
    }
}
