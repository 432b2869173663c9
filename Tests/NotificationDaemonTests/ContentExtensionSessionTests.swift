import Foundation
import Logging
import NotificationCore
import NotificationDaemon
import NotificationEngine
import Synchronization
import Testing
import TestSupport

/// Content extensions as the daemon runs them: real processes (the push example's extension, and
/// scripts that misbehave), each refusal clear, none able to hold the daemon.
@Suite struct ContentExtensionSessionTests {
    static let attributes = ContentExtensionAttributes(categories: ["customUI"], initialContentSizeRatio: 0.6, overridesDefaultTitle: true)

    static func notification(_ identifier: String = "n", title: String = "Holiday") -> DeliveredNotification {
        var content = NotificationContent()
        content.title = title
        content.categoryIdentifier = "customUI"
        return DeliveredNotification(request: NotificationRequest(identifier: identifier, content: content, trigger: nil), date: Date(timeIntervalSince1970: 1_800_000_000))
    }

    /// A shell script as an extension's executable.
    static func script(_ body: String, in folder: URL) throws -> String {
        let path = folder.appendingPathComponent("extension-\(UUID().uuidString).sh").path
        try "#!/bin/sh\n\(body)\n".write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o755)
        return path
    }

    static func withSessions(_ limits: ContentExtensionSessions.Limits = .init(),
                             _ body: (ContentExtensionSessions, URL, AsyncStream<ContentExtensionSessions.Event>) async throws -> Void) async throws {
        let folder = try makeTestDirectory()
        var logger = Logger(label: "test.content-extensions")
        logger.logLevel = .critical
        let (events, continuation) = AsyncStream<ContentExtensionSessions.Event>.makeStream()
        let sessions = ContentExtensionSessions(limits: limits, logger: logger) { continuation.yield($0) }
        defer { sessions.closeAll() }
        try await body(sessions, folder, events)
    }

    static func open(_ sessions: ContentExtensionSessions, _ executable: String, in folder: URL,
                     _ notification: DeliveredNotification = notification(), actions: [NotificationAction] = []) async throws -> ContentExtensionSessions.Session {
        let run = folder.appendingPathComponent("run-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: run, withIntermediateDirectories: true)
        return try await sessions.open(app: "com.example.push", notification: notification, actions: actions,
                                       registration: ContentExtensionRegistration(executable: executable, attributes: attributes),
                                       folder: run, caches: folder)
    }

    @Test func theExampleExtensionDrawsTheNotificationAndHandlesAnAction() async throws {
        try await Self.withSessions { sessions, folder, _ in
            let session = try await Self.open(sessions, ChildProcess.built("push-example-content").path, in: folder)
            #expect(session.interface.title == "A custom notification interface!")
            #expect(session.interface.html.contains("<h2 id=\"title\">Holiday</h2>"))
            #expect(session.version == 1)
            let response = { (action: String) in NotificationResponse(notification: Self.notification(), actionIdentifier: action) }
            // With no items there is nothing to switch to: the interface stays as it was.
            #expect(try await sessions.respond(session.id, with: response("switch")) == .doNotDismiss)
            #expect(sessions.session(session.id)?.version == 2)
            #expect(try await sessions.respond(session.id, with: response("open")) == .dismissAndForwardAction)
            #expect(try await sessions.respond(session.id, with: response("dismiss")) == .dismiss)
        }
    }

    /// Every part of the extension context reaches the daemon, through the framework's host
    /// (`ContentExtensionFixture`): the category's actions as `notificationActions` first gives them,
    /// `preferredContentSize`, the media button and what it plays, replaced actions, and the calls that
    /// open the app or close the interface, each heard as the event the page acts on.
    @Test func theExtensionContextReachesTheDaemon() async throws {
        try await Self.withSessions { sessions, folder, events in
            let actions = [NotificationAction(identifier: "like", title: "Like"), NotificationAction(identifier: "listen", title: "Listen", options: [.foreground])]
            let session = try await Self.open(sessions, ChildProcess.built("ContentExtensionFixture").path, in: folder, actions: actions)
            let id = session.id
            #expect(session.interface.html.contains(#"data-actions="like,listen""#), "\(session.interface.html)")
            #expect(session.interface.preferredContentSize == .init(width: 320, height: 120))
            #expect(session.interface.actions == nil, "the category's actions are shown until the extension replaces them")
            #expect(session.interface.mediaButton == .init(type: 2, frame: .init(x: 12, y: 36, width: 48, height: 48),
                                                           tintColor: "rgba(255, 59, 48, 1.0)", playing: false))

            // The media button: mediaPlay() and mediaPause(), the button showing what plays.
            try await sessions.media(id, play: true)
            #expect(sessions.session(id)?.interface.mediaButton?.playing == true)
            #expect(sessions.session(id)?.interface.html.contains(#"data-playing="true""#) == true)
            try await sessions.media(id, play: false)
            #expect(sessions.session(id)?.interface.mediaButton?.playing == false)

            let respond = { (action: String) in
                try await sessions.respond(id, with: NotificationResponse(notification: Self.notification(), actionIdentifier: action))
            }
            var heard = events.makeAsyncIterator()
            // notificationActions replaced, then given back.
            #expect(try await respond("like") == .doNotDismiss)
            #expect(await heard.next() == .changed(id))
            #expect(sessions.session(id)?.interface.actions?.map(\.identifier) == ["unlike"])
            #expect(try await respond("unlike") == .doNotDismiss)
            #expect(await heard.next() == .changed(id))
            #expect(sessions.session(id)?.interface.actions == actions)
            // mediaPlayingStarted() and mediaPlayingPaused(): the media started and stopped on its own.
            #expect(try await respond("play") == .doNotDismiss)
            #expect(await heard.next() == .changed(id))
            #expect(sessions.session(id)?.interface.mediaButton?.playing == true)
            #expect(try await respond("stop") == .doNotDismiss)
            #expect(await heard.next() == .changed(id))
            #expect(sessions.session(id)?.interface.mediaButton?.playing == false)
            // performNotificationDefaultAction() and dismissNotificationContentExtension().
            #expect(try await respond("listen") == .doNotDismiss)
            #expect(await heard.next() == .defaultAction(id))
            #expect(try await respond("later") == .doNotDismiss)
            #expect(await heard.next() == .dismiss(id))
            #expect(try await respond("reply") == .dismissAndForwardAction)
        }
    }

    /// An extension that closes its interface (or opens the app) while handling an action still has its
    /// answer heard: the interface closes once it answered, and nothing new is asked of it meanwhile.
    @Test func anInterfaceClosedWhileHandlingAnActionClosesOnceItAnswered() async throws {
        try await Self.withSessions { sessions, folder, events in
            // It answers the action only once the test lets it, through a named pipe.
            let go = folder.appendingPathComponent("go").path
            #expect(mkfifo(go, 0o600) == 0)
            let executable = try Self.script("""
                read notification
                echo '{"type":"interface","replyTo":1,"interface":{"html":"<p>drawn</p>"}}'
                read response
                echo '{"type":"dismiss"}'
                read answer < '\(go)'
                echo '{"type":"interface","replyTo":2,"interface":{"html":"<p>handled</p>"},"option":0}'
                exec sleep 30
                """, in: folder)
            let session = try await Self.open(sessions, executable, in: folder)
            let answer = Task {
                try await sessions.respond(session.id, with: NotificationResponse(notification: Self.notification(), actionIdentifier: "later"))
            }
            var heard = events.makeAsyncIterator()
            #expect(await heard.next() == .dismiss(session.id))
            // What the center does on hearing it.
            sessions.closeWhenAnswered(session.id)
            let refusal = await #expect(throws: DaemonError.self) { try await sessions.media(session.id, play: true) }
            #expect(refusal?.code == .noContentExtension)
            #expect(sessions.session(session.id) != nil, "still open: its answer has not come")
            let pipe = try #require(FileHandle(forWritingAtPath: go))
            try pipe.write(contentsOf: Data("answer\n".utf8))
            try pipe.close()
            #expect(try await answer.value == .doNotDismiss)
            #expect(await heard.next() == .ended(session.id))
            #expect(sessions.session(session.id) == nil)
        }
    }

    @Test func anExtensionThatCrashesOnAnActionEndsItsInterface() async throws {
        try await Self.withSessions { sessions, folder, events in
            // Draws the notification, then crashes on the first action.
            let executable = try Self.script("""
                read notification
                echo '{"type":"interface","replyTo":1,"interface":{"html":"<p>drawn</p>"}}'
                read response
                kill -SEGV $$
                """, in: folder)
            let session = try await Self.open(sessions, executable, in: folder)
            #expect(session.interface.html == "<p>drawn</p>")
            let response = NotificationResponse(notification: Self.notification(), actionIdentifier: "switch")
            await #expect(throws: DaemonError.self) { try await sessions.respond(session.id, with: response) }
            var iterator = events.makeAsyncIterator()
            #expect(await iterator.next() == .ended(session.id))
            #expect(sessions.session(session.id) == nil)
        }
    }

    @Test func anExtensionThatEndsOrSaysNothingIsRefusedClearly() async throws {
        var limits = ContentExtensionSessions.Limits()
        limits.answerTimeout = .milliseconds(300)
        try await Self.withSessions(limits) { sessions, folder, _ in
            for (body, words) in [("exit 3", "ended"), ("exec sleep 30", "did not answer"), ("echo 'not a message'; exec sleep 30", "ended"),
                                  ("/bin/does-not-exist", "ended")] {
                do {
                    _ = try await Self.open(sessions, try Self.script(body, in: folder), in: folder)
                    Issue.record("\(body): opened")
                } catch let error as DaemonError {
                    #expect(error.code == .extensionFailed, "\(body): \(error)")
                    #expect(error.message.contains(words), "\(body): \(error.message)")
                }
            }
            #expect(sessions.count == 0)
        }
    }

    @Test func openingOneTooManyClosesTheLeastRecentlyUsed() async throws {
        var limits = ContentExtensionSessions.Limits()
        limits.sessions = 2
        try await Self.withSessions(limits) { sessions, folder, _ in
            let executable = ChildProcess.built("push-example-content").path
            let first = try await Self.open(sessions, executable, in: folder, Self.notification("a"))
            let second = try await Self.open(sessions, executable, in: folder, Self.notification("b"))
            let third = try await Self.open(sessions, executable, in: folder, Self.notification("c"))
            #expect(sessions.session(first.id) == nil)
            #expect(sessions.session(second.id) != nil && sessions.session(third.id) != nil)
            #expect(sessions.count == 2)
            sessions.close(second.id)
            #expect(sessions.count == 1)
        }
    }
}
