import DBus
import DesktopNotifications
import DaemonTestSupport
import Foundation
import Logging
import NotificationCore
import NotificationDaemon
import NotificationEngine
import TestSupport
import Testing

/// Notifications on a real Linux desktop: a session bus, an X server and dunst, started by the test;
/// the person clicks and closes through `dunstctl`. A screenshot of the screen is kept in
/// `.build/screenshots/`.
@Suite(.serialized, .timeLimit(.minutes(2))) struct DesktopTests {
    static let screenshots = Screenshots.folder

    /// The README's example app, with `unotify serve` on a desktop: its reminder appears in dunst with
    /// its Done button, and pressing it reaches the app's delegate.
    @Test func theRemindersButtonOnTheDesktopReachesTheApp() async throws {
        let desktop = try await DesktopEnvironment.start()
        defer { Task { await desktop.stop() } }
        let directory = try makeTestDirectory()
        let environment = ServedSystem.environment(directory).merging(desktop.environment) { $1 }
        let unotify = ChildProcess.built("unotify")
        let serve = try ChildProcess(unotify, ["serve", "--sandbox-port", "0", "--production-port", "0", "--device-link-port", "0",
                                               "--metrics-port", "0", "--web-port", "0"], environment: environment, name: "unotify serve")
        let ready = try await serve.line(containing: "desktop notifications on")
        #expect(ready.contains("server=dunst"))
        // Registered with its name and icon, as a person shipping it does.
        let icon = directory.appendingPathComponent("todo.png")
        try MediaFiles.png(width: 32, height: 32) { _, _ in (0x30, 0x7A, 0xF6) }.write(to: icon)
        #expect(await (try ChildProcess(unotify, ["apps", "add", "com.example.todo", "--name", "Todo", "--icon", icon.path],
                                        environment: environment)).waitUntilExit() == 0)
        #expect(await (try ChildProcess(unotify, ["authorize", "--app", "com.example.todo", "grant"], environment: environment)).waitUntilExit() == 0)

        let app = try ChildProcess(ChildProcess.built("todo-example"), ["--schedule", "1"],
                                   environment: environment.merging(["UNOTIFY_APP_ID": "com.example.todo"]) { $1 }, name: "todo-example")
        let shown = try await desktop.shown(number: 1)
        #expect(shown == .init(appName: "Todo", summary: "📌 Daily reminder", body: "Write the report!",
                               icon: icon.path, urgency: "NORMAL", id: shown.id))
        try await desktop.waitUntilDisplayed(1)
        try desktop.screenshot(to: Self.screenshots.appendingPathComponent("desktop-reminder.png"))

        try await desktop.pick("Done")
        try await app.line(containing: "the person marked \"daily-report\" done")
        // The menu offered the category's button and the tap; dunst has no reply field, so "Reply…"
        // opens the reply in the web notification center.
        let menu = try String(contentsOf: desktop.directory.appendingPathComponent("menu.txt"), encoding: .utf8)
        #expect(menu.contains("#Done (📌 Daily reminder)"))
        #expect(menu.contains("#Open (📌 Daily reminder)"))
        #expect(menu.contains("#Reply… (📌 Daily reminder)"))
        // Answered, it leaves the desktop.
        try await desktop.waitUntilDisplayed(0)

        await app.interrupt()
        #expect(await serve.stop() == 0)
    }

    /// The presenter against dunst with an in-process daemon: a replaced notification replaces the
    /// desktop's, a removed one closes it, closing it gives the app the dismiss response its category
    /// asks for, a click opens it, and a signal forged by another client of the bus is ignored.
    @Test func replacedRemovedClosedAndClickedNotificationsDoWhatTheyShould() async throws {
        let desktop = try await DesktopEnvironment.start()
        defer { Task { await desktop.stop() } }
        let categories = [NotificationCategory(identifier: "MESSAGE", actions: [
            NotificationAction(identifier: "LIKE", title: "Like"),
            NotificationAction(identifier: "DELETE", title: "Delete", options: [.destructive]),
        ], options: [.customDismissAction])]
        try await Self.withPresenter(on: desktop, categories: categories) { engine in
            let app = Self.chat
            // The presenter is ready once it listens to the bus: a first notification shows that.
            try await waitFor("the presenter to find dunst", within: 20) {
                try? await engine.add(app, Self.message("warm-up", "Ready?"))
                return !desktop.shown.isEmpty
            }
            try await engine.removeDeliveredNotifications(app, nil)
            try await desktop.waitUntilDisplayed(0)
            let before = desktop.shown.count

            try await engine.add(app, Self.message("m1", "Hi"))
            let first = try await desktop.shown(number: before + 1)
            #expect(first.summary == "Ada" && first.body == "Hi")
            try await engine.add(app, Self.message("m1", "Hi again"))
            let replaced = try await desktop.shown(number: before + 2)
            #expect(replaced.body == "Hi again")
            #expect(replaced.id == first.id)
            try await desktop.waitUntilDisplayed(1)
            try await engine.removeDeliveredNotifications(app, ["m1"])
            try await desktop.waitUntilDisplayed(0)

            // Dismissed on another surface (the watch, the web): it leaves the desktop too, though
            // without `customDismissAction` the app hears nothing of it.
            var plain = Self.message("m4", "Swipe me away")
            plain.content.categoryIdentifier = ""
            try await engine.add(app, plain)
            _ = try await desktop.shown(number: before + 3)
            try await desktop.waitUntilDisplayed(1)
            try await engine.respond(app, to: "m4", with: .dismiss)
            // Well before dunst lets it expire by itself (10 s).
            try await desktop.waitUntilDisplayed(0, within: 5)

            // Closed while the app is not running: the dismissal waits for it.
            try await engine.add(app, Self.message("m2", "Closing"))
            _ = try await desktop.shown(number: before + 4)
            try await desktop.close()
            try await desktop.waitUntilDisplayed(0)
            try await waitFor("the dismissal to be taken", within: 20) { (try? await engine.deliveredNotifications(app).isEmpty) == true }
            let (connection, messages) = try await engine.connect(app, state: .background)
            var responses = messages.makeAsyncIterator()
            let dismissed = try await Self.nextResponse(&responses, engine: engine, app: app)
            #expect(dismissed.notification.request.identifier == "m2")
            #expect(dismissed.actionIdentifier == "com.apple.UNNotificationDismissActionIdentifier")

            try await engine.add(app, Self.message("m3", "Click me"))
            let clickable = try await desktop.shown(number: before + 5)
            // Another program on the bus claims the person pressed Delete: not the server, so ignored.
            let forger = try await DBusConnection.connect(to: desktop.busAddress)
            try await forger.send(.signal(path: "/org/freedesktop/Notifications", interface: "org.freedesktop.Notifications",
                                          member: "ActionInvoked", body: [.uint32(UInt32(clickable.id)), .string("DELETE")]))
            await forger.close()
            try await desktop.click()
            let opened = try await Self.nextResponse(&responses, engine: engine, app: app)
            #expect(opened.notification.request.identifier == "m3")
            #expect(opened.actionIdentifier == "com.apple.UNNotificationDefaultActionIdentifier")
            #expect(try await engine.deliveredNotifications(app).isEmpty)

            // The app's badge, for the docks that show counts.
            let dock = try await DBusConnection.connect(to: desktop.busAddress)
            try await dock.callBus("AddMatch", [.string("type='signal',interface='com.canonical.Unity.LauncherEntry'")])
            var updates = dock.incoming.filter { $0.member == "Update" }.makeAsyncIterator()
            try await engine.setBadgeCount(app, 3)
            let update = await updates.next()
            #expect(update?.body.first == .string("application://com.example.chat.desktop"))
            #expect(update?.body.last?.stringKeyedDictionary == ["count": .int64(3), "count-visible": .boolean(true)])
            await dock.close()
            try await engine.disconnect(app, connection: connection)
        }
    }

    /// Where the server has no reply field (dunst), "Reply…" opens the web center at the notification's
    /// reply field; the notification leaves the desktop, and stays in the list until the person replies.
    @Test func replyOnADesktopWithoutAReplyFieldOpensTheWebCenter() async throws {
        let desktop = try await DesktopEnvironment.start()
        defer { Task { await desktop.stop() } }
        let categories = [NotificationCategory(identifier: "MESSAGE", actions: [
            NotificationAction(identifier: "REPLY", title: "Reply", textInput: .init(buttonTitle: "Send", placeholder: "Answer Ada")),
        ])]
        let (opened, open) = AsyncStream<String>.makeStream()
        try await Self.withPresenter(on: desktop, categories: categories, configure: {
            $0.centerAddress = { "http://127.0.0.1:2202/" }
            $0.openURL = { open.yield($0) }
        }) { engine in
            let app = Self.chat
            try await waitFor("the presenter to find dunst", within: 20) {
                try? await engine.add(app, Self.message("lunch", "Lunch?"))
                return !desktop.shown.isEmpty
            }
            try await desktop.pick("Reply…")
            var urls = opened.makeAsyncIterator()
            #expect(await urls.next() == "http://127.0.0.1:2202/#reply/com.example.chat/lunch/REPLY")
            try await desktop.waitUntilDisplayed(0)
            // Not a dismissal: it waits in the list for the reply.
            #expect(try await engine.deliveredNotifications(app).map(\.request.identifier) == ["lunch"])
        }
    }

    /// The desktop's server started by the bus (as Debian installs dunst) is killed while the system
    /// runs: the next notification asks the bus to start it again, and is shown.
    @Test func aNotificationServerThatDiedIsStartedAgainForTheNextNotification() async throws {
        let desktop = try await DesktopEnvironment.start(activated: true)
        defer { Task { await desktop.stop() } }
        let directory = try makeTestDirectory()
        let environment = ServedSystem.environment(directory).merging(desktop.environment) { $1 }
        let unotify = ChildProcess.built("unotify")
        let serve = try FreedesktopServerTests.serve(directory, on: desktop, [])
        try await serve.line(containing: "desktop notifications on")
        let first = try #require(try await desktop.activatedServer())
        #expect(await (try ChildProcess(unotify, ["apps", "add", "com.example.todo"], environment: environment)).waitUntilExit() == 0)
        #expect(await (try ChildProcess(unotify, ["authorize", "--app", "com.example.todo", "grant"], environment: environment)).waitUntilExit() == 0)
        func push(_ title: String) async throws {
            let command = try ChildProcess(unotify, ["push", "com.example.todo", "--payload", #"{"aps":{"alert":{"title":"\#(title)"}}}"#],
                                           environment: environment, name: "unotify push")
            #expect(await command.waitUntilExit() == 0)
        }
        try await push("Before")
        #expect(try await desktop.shown(number: 1).summary == "Before")

        try await desktop.killActivatedServer()
        try await serve.line(containing: "the desktop's notification server went away")
        try await push("After")
        #expect(try await desktop.shown(number: 2).summary == "After")
        let second = try #require(try await desktop.activatedServer())
        #expect(second != first)
        // What the new server shows is known: a click on it opens the notification, which leaves the list.
        try await desktop.click()
        try await waitFor("the opened notification to leave the list", within: 20) {
            let listed = try? ChildProcess(unotify, ["delivered", "--app", "com.example.todo"], environment: environment, name: "unotify delivered")
            guard let lines = await listed?.completeOutput() else { return false }
            return lines.contains { $0.hasSuffix("\tBefore") } && !lines.contains { $0.hasSuffix("\tAfter") }
        }
        #expect(await serve.stop() == 0)
    }

    /// Hidden previews stay hidden on the desktop: the category's placeholder, no buttons.
    @Test func aHiddenPreviewShowsThePlaceholderAndNoButtons() async throws {
        let desktop = try await DesktopEnvironment.start()
        defer { Task { await desktop.stop() } }
        let categories = [NotificationCategory(identifier: "MESSAGE", actions: [NotificationAction(identifier: "LIKE", title: "Like")],
                                               hiddenPreviewsBodyPlaceholder: "%u new messages", options: [.hiddenPreviewsShowTitle])]
        try await Self.withPresenter(on: desktop, categories: categories) { engine in
            let app = Self.chat
            _ = try await engine.changeSettings(app) { $0.showPreviewsSetting = .never }
            try await waitFor("the presenter to find dunst", within: 20) {
                try? await engine.add(app, Self.message("secret", "The code is 1234"))
                return !desktop.shown.isEmpty
            }
            let shown = desktop.shown[0]
            #expect(shown.summary == "Ada")
            #expect(shown.body == "1 new messages")
            try await desktop.pick("Like")
            let menuFile = desktop.directory.appendingPathComponent("menu.txt")
            try await waitFor("dunst's menu", within: 20) { FileManager.default.fileExists(atPath: menuFile.path) }
            // No button to pick: the menu holds the tap alone.
            let menu = try String(contentsOf: desktop.directory.appendingPathComponent("menu.txt"), encoding: .utf8)
            #expect(!menu.contains("Like"))
        }
    }

    /// Runs `body` with an in-process daemon whose desktop presenter shows on `desktop`, and its app
    /// `com.example.chat` allowed, with `categories`.
    static func withPresenter(
        on desktop: DesktopEnvironment, categories: [NotificationCategory], configure: @Sendable (inout DesktopPresenter.Configuration) -> Void = { _ in },
        _ body: @Sendable (DaemonEngine) async throws -> Void
    ) async throws {
        try await withDaemon { daemon in
            let engine = daemon.engine
            _ = try await daemon.authorizedApp(chat)
            try await engine.setCategories(chat, categories)
            var logger = Logger(label: "test.desktop")
            logger.logLevel = .critical
            var configuration = DesktopPresenter.Configuration(busAddress: desktop.busAddress)
            configure(&configuration)
            let presenter = DesktopPresenter(engine: engine, configuration: configuration, logger: logger)
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await presenter.run() }
                defer { tasks.cancelAll() }
                try await body(engine)
            }
        }
    }

    static let chat = "com.example.chat"

    static func message(_ identifier: String, _ body: String) -> NotificationRequest {
        var content = NotificationContent()
        content.title = "Ada"
        content.body = body
        content.categoryIdentifier = "MESSAGE"
        return NotificationRequest(identifier: identifier, content: content, trigger: nil)
    }

    static func nextResponse(_ messages: inout AsyncStream<LocalAPI.AppEvent>.Iterator, engine: DaemonEngine, app: String) async throws -> NotificationResponse {
        while let message = await messages.next() {
            if case .call(.response(let ticket, let response)) = message {
                try await engine.completeResponse(app, ticket: ticket)
                return response
            }
        }
        throw DesktopEnvironment.Unavailable(description: "the app's messages ended")
    }
}

/// The daemon as the desktop's notification server (`unotify serve --freedesktop`) on a real session
/// bus: `notify-send` and other programs' notifications are listed, and the person's answers reach
/// them as the specification's signals.
@Suite(.serialized, .timeLimit(.minutes(2))) struct FreedesktopServerTests {
    static func serve(_ directory: URL, on desktop: DesktopEnvironment, _ extra: [String] = ["--freedesktop"]) throws -> ChildProcess {
        try ChildProcess(ChildProcess.built("unotify"), ["serve", "--sandbox-port", "0", "--production-port", "0", "--device-link-port", "0",
                                                         "--metrics-port", "0", "--web-port", "0"] + extra,
                         environment: ServedSystem.environment(directory).merging(desktop.environment) { $1 }, name: "unotify serve")
    }

    /// A session bus with no notification server, and `unotify serve --freedesktop` serving on it.
    static func startServer() async throws -> (DesktopEnvironment, URL, ChildProcess) {
        let desktop = try await DesktopEnvironment.start(notificationServer: false)
        let directory = try makeTestDirectory()
        let serve = try serve(directory, on: desktop)
        try await serve.line(containing: "serving desktop notifications")
        return (desktop, directory, serve)
    }

    static func unotify(_ arguments: [String], _ directory: URL, on desktop: DesktopEnvironment) async throws -> [String] {
        let command = try ChildProcess(ChildProcess.built("unotify"), arguments,
                                       environment: ServedSystem.environment(directory).merging(desktop.environment) { $1 }, name: "unotify \(arguments[0])")
        #expect(await command.waitUntilExit() == 0, "unotify \(arguments.joined(separator: " "))")
        return await command.completeOutput()
    }

    @Test func notifySendsActionComesBackFromUnotifyRespond() async throws {
        let (desktop, directory, serve) = try await Self.startServer()
        defer { Task { await desktop.stop() } }

        let notifySend = try ChildProcess(URL(fileURLWithPath: "/usr/bin/notify-send"), ["-A", "yes=Yes", "-A", "no=No", "Deploy?", "Ship build 42"],
                                          environment: desktop.environment, name: "notify-send")
        try await waitFor("the notification to be listed", within: 20) {
            (try? await Self.unotify(["notifications"], directory, on: desktop).joined(separator: "\n").contains("Deploy? — Ship build 42")) == true
        }
        let listed = try await Self.unotify(["notifications"], directory, on: desktop).joined(separator: "\n")
        #expect(listed.contains("[desktop.notify-send] desktop-1"))
        #expect(listed.contains("actions: yes (Yes), no (No)"))

        _ = try await Self.unotify(["respond", "desktop-1", "--action", "yes"], directory, on: desktop)
        try await notifySend.line(containing: "yes")
        #expect(await notifySend.waitUntilExit() == 0)
        #expect(try await Self.unotify(["notifications"], directory, on: desktop).joined().contains("desktop-1") == false)
        #expect(await serve.stop() == 0)
    }

    /// A program speaking D-Bus itself: a reply typed for its `inline-reply` action comes back as
    /// `NotificationReplied`, a dismissal and `CloseNotification` as `NotificationClosed` with their reasons.
    @Test func repliesDismissalsAndClosesReachTheProgramAsSignals() async throws {
        let (desktop, directory, serve) = try await Self.startServer()
        defer { Task { await desktop.stop() } }
        let program = try await DBusConnection.connect(to: desktop.busAddress)
        // The server's signals to this program (the bus's own, such as NameAcquired, left out).
        var signals = program.incoming.filter { $0.interface == "org.freedesktop.Notifications" }.makeAsyncIterator()
        func notify(_ summary: String, actions: [String], hints: [(String, DBusValue)] = []) async throws -> UInt32 {
            let reply = try await program.call(.methodCall(
                destination: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications", interface: "org.freedesktop.Notifications",
                member: "Notify", body: [.string("Chat"), .uint32(0), .string(""), .string(summary), .string("Are you coming?"),
                                         .strings(actions), .variantDictionary(hints + [("desktop-entry", .string("org.example.Chat"))]), .int32(-1)]))
            return try #require(reply.body.first?.uint32Value)
        }
        let capabilities = try await program.call(.methodCall(destination: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications",
                                                              interface: "org.freedesktop.Notifications", member: "GetCapabilities"))
        #expect(capabilities.body.first?.stringArray?.contains("inline-reply") == true)

        let asked = try await notify("Ada", actions: ["default", "Open", "inline-reply", "Reply"],
                                     hints: [("x-kde-reply-placeholder-text", .string("Answer Ada")), ("x-kde-reply-submit-button-text", .string("Send"))])
        let listed = try await Self.unotify(["notifications", "--app", "org.example.Chat"], directory, on: desktop).joined(separator: "\n")
        #expect(listed.contains("desktop-\(asked)"))
        _ = try await Self.unotify(["respond", "desktop-\(asked)", "--text", "on my way"], directory, on: desktop)
        let replied = await signals.next()
        #expect(replied?.member == "NotificationReplied" && replied?.body == [.uint32(asked), .string("on my way")])
        let closedAfterReply = await signals.next()
        #expect(closedAfterReply?.member == "NotificationClosed" && closedAfterReply?.body == [.uint32(asked), .uint32(2)])

        let dismissed = try await notify("Ben", actions: [])
        _ = try await Self.unotify(["respond", "desktop-\(dismissed)", "--dismiss"], directory, on: desktop)
        let closed = await signals.next()
        #expect(closed?.member == "NotificationClosed" && closed?.body == [.uint32(dismissed), .uint32(2)])

        let withdrawn = try await notify("Carl", actions: [])
        try await program.call(.methodCall(destination: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications",
                                           interface: "org.freedesktop.Notifications", member: "CloseNotification", body: [.uint32(withdrawn)]))
        let withdrawal = await signals.next()
        #expect(withdrawal?.member == "NotificationClosed" && withdrawal?.body == [.uint32(withdrawn), .uint32(3)])
        #expect(try await Self.unotify(["notifications"], directory, on: desktop).joined().contains("desktop-\(withdrawn)") == false)

        // Bad arguments get the D-Bus error a program expects, and nothing is kept.
        await #expect(throws: DBusError.self) {
            try await program.call(.methodCall(destination: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications",
                                               interface: "org.freedesktop.Notifications", member: "Notify", body: [.string("only one")]))
        }
        await program.close()
        #expect(await serve.stop() == 0)
    }

    /// A program waiting on its notification (`notify-send --wait`) is released when the notification
    /// leaves, however it leaves: here pushed out of the list by a hundred newer ones.
    @Test func aWaitingProgramIsReleasedWhenItsNotificationIsPushedOut() async throws {
        let (desktop, directory, serve) = try await Self.startServer()
        defer { Task { await desktop.stop() } }
        let waiting = try ChildProcess(URL(fileURLWithPath: "/usr/bin/notify-send"), ["--wait", "First"], environment: desktop.environment, name: "notify-send --wait")
        try await waitFor("the first notification to be listed", within: 20) {
            (try? await Self.unotify(["notifications"], directory, on: desktop).joined().contains("desktop-1")) == true
        }
        let program = try await DBusConnection.connect(to: desktop.busAddress)
        for index in 1...100 {
            _ = try await program.call(.methodCall(
                destination: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications", interface: "org.freedesktop.Notifications",
                member: "Notify", body: [.string("notify-send"), .uint32(0), .string(""), .string("Newer \(index)"), .string(""),
                                         .strings([]), .variantDictionary([]), .int32(-1)]))
        }
        await program.close()
        #expect(await waiting.waitUntilExit(within: 20) == 0, "notify-send --wait was not released")
        #expect(try await Self.unotify(["notifications"], directory, on: desktop).joined().contains("desktop-1 ") == false)
        #expect(await serve.stop() == 0)
    }

    /// Inline replies through both halves: an app of one daemon, shown through its desktop presenter on
    /// a desktop whose server is another daemon (`--freedesktop`); the person replies there, and the
    /// first daemon's app receives the text.
    @Test func aReplyTypedOnTheDesktopReachesTheApp() async throws {
        let (desktop, serverDirectory, server) = try await Self.startServer()
        defer { Task { await desktop.stop() } }
        let categories = [NotificationCategory(identifier: "MESSAGE", actions: [
            NotificationAction(identifier: "REPLY", title: "Reply", textInput: .init(buttonTitle: "Send", placeholder: "Say something")),
        ])]
        try await DesktopTests.withPresenter(on: desktop, categories: categories) { engine in
            let app = DesktopTests.chat
            let (connection, messages) = try await engine.connect(app, state: .background)
            var responses = messages.makeAsyncIterator()
            try await waitFor("the notification on the desktop", within: 20) {
                try? await engine.add(app, DesktopTests.message("m1", "Lunch?"))
                return (try? await Self.unotify(["notifications"], serverDirectory, on: desktop).joined().contains("Ada — Lunch?")) == true
            }
            let listed = try await Self.unotify(["notifications", "--app", "com.example.chat"], serverDirectory, on: desktop).joined(separator: "\n")
            #expect(listed.contains("actions: inline-reply (Reply, typed reply)"))
            let identifier = try #require(listed.split(separator: " ").first { $0.hasPrefix("desktop-") }.map(String.init))
            _ = try await Self.unotify(["respond", identifier, "--text", "yes, at noon"], serverDirectory, on: desktop)
            let reply = try await DesktopTests.nextResponse(&responses, engine: engine, app: app)
            #expect(reply.actionIdentifier == "REPLY")
            #expect(reply.userText == "yes, at noon")
            try await engine.disconnect(app, connection: connection)
        }
        #expect(await server.stop() == 0)
    }

    @Test func anotherServerKeepsTheNameAndNoBusLeavesTheRestRunning() async throws {
        let desktop = try await DesktopEnvironment.start()
        defer { Task { await desktop.stop() } }
        let beside = try makeTestDirectory()
        let serve = try Self.serve(beside, on: desktop)
        try await serve.line(containing: "not the desktop's notification server: another one owns the name")
        try await serve.line(containing: "local API listening")
        // The daemon's own notifications are shown on the server that owns the name.
        try await serve.line(containing: "desktop notifications on")
        _ = try await Self.unotify(["apps", "add", "com.example.todo"], beside, on: desktop)
        _ = try await Self.unotify(["authorize", "--app", "com.example.todo", "grant"], beside, on: desktop)
        _ = try await Self.unotify(["push", "com.example.todo", "--payload", #"{"aps":{"alert":{"title":"Shown on dunst"}}}"#], beside, on: desktop)
        #expect(try await desktop.shown(number: 1).summary == "Shown on dunst")
        #expect(await serve.stop() == 0)

        let directory = try makeTestDirectory()
        let alone = try ChildProcess(ChildProcess.built("unotify"), ["serve", "--sandbox-port", "0", "--production-port", "0", "--device-link-port", "0",
                                                                     "--metrics-port", "0", "--web-port", "0"],
                                     environment: ServedSystem.environment(directory).merging(["DBUS_SESSION_BUS_ADDRESS": "unix:path=\(directory.path)/no-bus"]) { $1 },
                                     name: "unotify serve")
        try await alone.line(containing: "desktop notifications off: no session bus")
        try await alone.line(containing: "local API listening")
        #expect(await (try ChildProcess(ChildProcess.built("unotify"), ["apps", "add", "com.example.todo"],
                                        environment: ServedSystem.environment(directory))).waitUntilExit() == 0)
        #expect(await alone.stop() == 0)
        #expect(alone.lines.count { $0.contains("desktop notifications off") } == 1)
    }
}

extension DesktopTests {
    /// The desktop session ends under a running daemon: the presenter says so, and the rest goes on.
    @Test func theSystemOutlivesTheDesktopSession() async throws {
        let desktop = try await DesktopEnvironment.start()
        let directory = try makeTestDirectory()
        let environment = ServedSystem.environment(directory).merging(desktop.environment) { $1 }
        let serve = try ChildProcess(ChildProcess.built("unotify"), ["serve", "--sandbox-port", "0", "--production-port", "0", "--device-link-port", "0",
                                                                     "--metrics-port", "0", "--web-port", "0"], environment: environment, name: "unotify serve")
        try await serve.line(containing: "desktop notifications on")
        await desktop.stop()
        try await serve.line(containing: "desktop notifications off: the session bus closed")
        #expect(await (try ChildProcess(ChildProcess.built("unotify"), ["apps", "add", "com.example.todo"],
                                        environment: ServedSystem.environment(directory))).waitUntilExit() == 0)
        #expect(serve.isRunning)
        #expect(await serve.stop() == 0)
    }
}
