import Foundation
import Logging
import NotificationCore
import NotificationDaemon
import Synchronization
import Testing

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
                     _ notification: DeliveredNotification = notification()) async throws -> ContentExtensionSessions.Session {
        let run = folder.appendingPathComponent("run-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: run, withIntermediateDirectories: true)
        return try await sessions.open(app: "com.example.push", notification: notification,
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
