import AsyncHTTPClient
import DaemonTestSupport
import Foundation
import NotificationCore
@testable import NotificationDaemon
import NotificationDaemonClient
@testable import NotificationEngine
import TestSupport
import Testing

/// Pushes marked `mutable-content` through an app's service extension: a real process the daemon
/// starts, fed by a provider's push through the gateway and the device link. The daemon's clock is a
/// manual one, so an extension's time runs out only when a test moves it.
@Suite(.timeLimit(.minutes(2))) struct ServiceExtensionTests {
    /// A PNG of one pixel.
    static let png = Data(base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")!

    /// Registers the app for pushes and returns its token.
    func token(of app: LocalAPIClient) async throws -> String {
        let registered = try await app.raw(.POST, "/v1/remote-notifications", body: LocalAPI.RemoteNotificationRegistration(environment: .sandbox))
        #expect(registered.status == 200)
        return try JSONDecoder().decode(LocalAPI.DeviceToken.self, from: registered.body).token
    }

    /// Waits for the next `contentPrepared` of the push `identifier` and what was then presented.
    func ending(of identifier: String, in events: inout AsyncStream<DaemonEvent>.AsyncIterator)
        async -> (outcome: PreparationOutcome?, shown: NotificationRequest?, preparing: Bool) {
        var preparing = false
        var outcome: PreparationOutcome?
        while let event = await events.next() {
            switch event {
            case .app(_, .contentPreparing(let request)) where request.identifier == identifier:
                preparing = true
            case .app(_, .contentPrepared(let request, let ended)) where request.identifier == identifier:
                outcome = ended
            case .app(_, .presented(let shown)) where shown.notification.request.identifier == identifier:
                return (outcome, shown.notification.request, preparing)
            default:
                continue
            }
        }
        return (outcome, nil, preparing)
    }

    /// Waits until the push `identifier` is with the extension.
    func waitUntilPreparing(_ identifier: String, in events: inout AsyncStream<DaemonEvent>.AsyncIterator) async {
        while let event = await events.next() {
            if case .app(_, .contentPreparing(let request)) = event, request.identifier == identifier { return }
        }
    }

    @Test func theTutorialsExtensionAppendsToTheBodyAndAttachesTheImageItDownloads() async throws {
        let site = try makeTestDirectory()
        try Self.png.write(to: site.appendingPathComponent("cover.png"))
        let server = try ChildProcess(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-u", "-m", "http.server", "--bind", "127.0.0.1", "0"],
                                      in: site, name: "http.server")
        let serving = try await server.line(containing: "Serving HTTP on")
        let port = try #require(serving.split(separator: " ").firstIndex(of: "port").map { serving.split(separator: " ")[$0 + 1] })

        do {
            try await tutorialsExtension(imagesOn: port)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    func tutorialsExtension(imagesOn port: Substring) async throws {
        try await RemotePushTests().withLinkedSystem { system in
            let app = try await system.daemon.authorizedApp("com.example.todo")
            let token = try await token(of: app)
            // The app registers its extension itself, through the local API.
            let executable = ChildProcess.built("push-example-service").path
            let registered = try await app.raw(.PUT, "/v1/service-extension", body: LocalAPI.ServiceExtension(executable: executable))
            #expect(registered.status == 204)
            #expect(try OpenAPISpec().problems(method: "PUT", path: "/v1/service-extension", status: registered.status,
                                               contentType: registered.contentType, body: registered.body) == [])
            var events = await system.daemon.engine.watch().events.makeAsyncIterator()
            var confirmations = system.link.reportsConfirmed.makeAsyncIterator()

            let payload = #"{"aps":{"alert":{"title":"Image Notification","body":"Show me an image from web!"},"mutable-content":1},"image":"http://127.0.0.1:\#(port)/cover.png"}"#
            let response = try await system.send(to: token, payload, headers: ["apns-collapse-id": "mutableContent"])
            #expect(response.status.code == 200)

            let (outcome, shown, preparing) = await ending(of: "mutableContent", in: &events)
            #expect(preparing)
            #expect(outcome == .prepared)
            let request = try #require(shown)
            #expect(request.content.title == "Image Notification")
            #expect(request.content.body == "Show me an image from web!, 科比·布莱恩特")
            #expect(request.trigger == .push)
            let attachment = try #require(request.content.attachments.first)
            #expect(attachment.identifier == "image_downloaded")
            #expect(attachment.type == "public.png")
            // The daemon's own copy, in the app's attachment store, with the bytes the server sent.
            #expect(attachment.url.path.hasPrefix(system.daemon.directory.appendingPathComponent("attachments/com.example.todo").path))
            #expect(try Data(contentsOf: attachment.url) == Self.png)
            // The extension's folder for that run is gone; what it cached stays.
            let folder = system.daemon.directory.appendingPathComponent("extensions/com.example.todo")
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("tmp").path).isEmpty)
            let cached = try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("Caches").path)
            #expect(cached.filter { $0.hasSuffix(".png") }.count == 1, "\(cached)")
            // The delivery log shows the extension's work between the link and the person.
            let apnsID = try #require(response.headers.first(name: "apns-id"))
            let stages = try await system.stages(of: apnsID, once: "presented", confirmations: &confirmations)
            #expect(stages.filter { !["sent", "acknowledged"].contains($0.stage) }.map { "\($0.stage) \($0.detail ?? "")" } == [
                "accepted key KEY1234567", "stored queued for the linked device", "preparing service extension started", "prepared prepared",
                "presented banner, list, lock screen",
            ])

            // A push without `mutable-content` is shown as it comes, without the extension.
            let plain = try await system.send(to: token, #"{"aps":{"alert":{"title":"Plain","body":"As sent"}}}"#, headers: ["apns-collapse-id": "plain"])
            #expect(plain.status.code == 200)
            let (plainOutcome, plainShown, plainPreparing) = await ending(of: "plain", in: &events)
            #expect(!plainPreparing)
            #expect(plainOutcome == nil)
            #expect(plainShown?.content.body == "As sent")
        }
    }

    @Test func anExtensionThatFailsOrRunsOutOfTimeLeavesTheOriginalShown() async throws {
        let outside = try makeTestDirectory().appendingPathComponent("outside.png")
        try Self.png.write(to: outside)
        try await RemotePushTests().withLinkedSystem { system in
            let app = try await system.daemon.authorizedApp("com.example.todo")
            let token = try await token(of: app)
            // The person's administrator registers it, with ten seconds per push.
            let executable = ChildProcess.built("ServiceExtensionFixture").path
            let registered = try await system.daemon.admin.raw(.PUT, "/v1/admin/apps/com.example.todo/service-extension",
                                                               body: LocalAPI.ServiceExtension(executable: executable, timeLimit: 10))
            #expect(registered.status == 204)
            var events = await system.daemon.engine.watch().events.makeAsyncIterator()

            func push(_ behaviour: String, extra: String = "") async throws {
                let payload = #"{"aps":{"alert":{"title":"Title","body":"Body"},"mutable-content":1},"behaviour":"\#(behaviour)"\#(extra)}"#
                let response = try await system.send(to: token, payload, headers: ["apns-collapse-id": behaviour])
                #expect(response.status.code == 200)
            }

            try await push("append")
            let appended = await ending(of: "append", in: &events)
            #expect(appended.outcome == .prepared)
            #expect(appended.shown?.content.title == "Title (prepared)")
            #expect(appended.shown?.content.body == "Body (prepared)")

            for behaviour in ["crash", "twice"] {
                try await push(behaviour)
                let (outcome, shown, _) = await ending(of: behaviour, in: &events)
                #expect(outcome?.reason != nil, "\(behaviour): \(String(describing: outcome))")
                #expect(shown?.content.title == "Title", "the original is shown when the extension \(behaviour)es")
                #expect(shown?.content.body == "Body")
            }

            try await push("escape", extra: #","file":"\#(outside.path)""#)
            let escaped = await ending(of: "escape", in: &events)
            #expect(escaped.outcome?.reason?.contains("not a file the service extension wrote") == true)
            #expect(escaped.shown?.content.attachments == [])

            // Its best attempt, handed back when it hears its time is nearly up (two seconds before).
            try await push("late")
            await waitUntilPreparing("late", in: &events)
            system.daemon.clock.advance(by: 8)
            let late = await ending(of: "late", in: &events)
            #expect(late.outcome == .prepared)
            #expect(late.shown?.content.body == "Body (best attempt)")

            // No answer at all: the original once the time is up, and not before.
            try await push("never")
            await waitUntilPreparing("never", in: &events)
            system.daemon.clock.advance(by: 8)
            // Reading brings the app up to the clock first: the warning has passed, the deadline not.
            #expect(try await system.daemon.engine.deliveredNotifications("com.example.todo").contains { $0.request.identifier == "never" } == false)
            system.daemon.clock.advance(by: 2)
            let never = await ending(of: "never", in: &events)
            #expect(never.outcome == .timedOut)
            #expect(never.shown?.content.body == "Body")
        }
    }

    @Test func anExtensionRunsWithinItsLimitsAndNoMoreRunAtOnceThanAllowed() async throws {
        try await withDaemon(configure: { $0.engine.serviceExtensionsAtOnce = 1 }) { daemon in
            _ = try await daemon.authorizedApp("com.example.todo")
            try await daemon.engine.setServiceExtension("com.example.todo", ServiceExtensionRegistration(
                executable: ChildProcess.built("ServiceExtensionFixture").path, timeLimit: 10))
            var events = await daemon.engine.watch().events.makeAsyncIterator()
            func push(_ behaviour: String, as identifier: String) async throws {
                let payload = #"{"aps":{"alert":{"body":"Body"},"mutable-content":1},"behaviour":"\#(behaviour)"}"#
                try await daemon.engine.deliverPush("com.example.todo", payload: Array(payload.utf8), collapseID: identifier)
            }

            try await push("limits", as: "limits")
            let limits = await ending(of: "limits", in: &events)
            #expect(limits.outcome == .prepared)
            // Ten seconds, and one more (the soft limit; the hard one is a second above it); 512 MiB of data.
            #expect(limits.shown?.content.body == "Max cpu time 11 12 seconds; Max data size 536870912 536870912 bytes")

            // One at a time here: the second waits for the first, which never answers.
            try await push("never", as: "first")
            try await push("never", as: "second")
            await waitUntilPreparing("first", in: &events)
            await waitUntilPreparing("second", in: &events)
            #expect(daemon.engine.serviceExtensionRuns == (running: 1, waiting: 1))
            daemon.clock.advance(by: 10)
            #expect(await ending(of: "first", in: &events).outcome == .timedOut)
            #expect(await ending(of: "second", in: &events).outcome == .timedOut)
        }
    }

    @Test func anExtensionThatAnswersGarbageLeavesTheOriginalShown() async throws {
        let script = try makeTestDirectory().appendingPathComponent("garbage-extension")
        try "#!/bin/sh\nread request\necho 'this is not a message'\n".write(to: script, atomically: true, encoding: .utf8)
        _ = chmod(script.path, 0o755)
        try await RemotePushTests().withLinkedSystem { system in
            let app = try await system.daemon.authorizedApp("com.example.todo")
            let token = try await token(of: app)
            try await system.daemon.engine.setServiceExtension("com.example.todo", ServiceExtensionRegistration(executable: script.path))
            var events = await system.daemon.engine.watch().events.makeAsyncIterator()
            let response = try await system.send(to: token, #"{"aps":{"alert":{"body":"Body"},"mutable-content":1}}"#, headers: ["apns-collapse-id": "garbage"])
            #expect(response.status.code == 200)
            let (outcome, shown, _) = await ending(of: "garbage", in: &events)
            #expect(outcome == .failed("its answer is not a message the daemon reads"))
            #expect(shown?.content.body == "Body")
        }
    }

    @Test func aRegistrationThatCannotWorkIsRefused() async throws {
        try await withDaemon { daemon in
            let app = try await daemon.authorizedApp("com.example.todo")
            for (body, status, rule) in [
                (LocalAPI.ServiceExtension(executable: "relative/path"), 400, "must be an absolute path"),
                (LocalAPI.ServiceExtension(executable: "/nonexistent/extension"), 422, "is not an executable file"),
                (LocalAPI.ServiceExtension(executable: "/tmp"), 422, "is not an executable file"),
                (LocalAPI.ServiceExtension(executable: "/bin/sh", timeLimit: 0), 400, "time limit is 1 to 300 seconds"),
                (LocalAPI.ServiceExtension(executable: "/bin/sh", timeLimit: 3600), 400, "time limit is 1 to 300 seconds"),
            ] {
                let answer = try await app.raw(.PUT, "/v1/service-extension", body: body)
                #expect(answer.status == status)
                #expect(String(decoding: answer.body, as: UTF8.self).contains(rule))
                #expect(try OpenAPISpec().problems(method: "PUT", path: "/v1/service-extension", status: answer.status,
                                                   contentType: answer.contentType, body: answer.body) == [])
            }
            #expect(try await daemon.engine.serviceExtension(of: "com.example.todo") == nil)
            let removed = try await app.raw(.DELETE, "/v1/service-extension")
            #expect(removed.status == 204)
        }
    }
}

/// A push being prepared survives the daemon stopping: the extension runs again once when it
/// restarts, and a push interrupted twice is shown as it came. Never lost, never shown twice.
@Suite(.timeLimit(.minutes(2))) struct ServiceExtensionRestartTests {
    let payload = Array(#"{"aps":{"alert":{"title":"Title","body":"Body"},"mutable-content":1},"behaviour":"late"}"#.utf8)

    func prepare(_ daemon: RunningDaemon) async throws {
        _ = try await daemon.authorizedApp("com.example.todo")
        try await daemon.engine.setServiceExtension("com.example.todo", ServiceExtensionRegistration(
            executable: ChildProcess.built("ServiceExtensionFixture").path, timeLimit: 10))
    }

    /// Runs a daemon over `directory` that receives the push and stops while its extension works on it.
    func stopWhilePreparing(directory: URL, clock: ManualDaemonClock) async throws {
        try await withDaemon(directory: directory, clock: clock) { (daemon: RunningDaemon) async throws in
            try await prepare(daemon)
            var events = await daemon.engine.watch().events.makeAsyncIterator()
            try await daemon.engine.deliverPush("com.example.todo", payload: payload, collapseID: "restart")
            await ServiceExtensionTests().waitUntilPreparing("restart", in: &events)
            #expect(try await shown(daemon).isEmpty)
        }
    }

    func shown(_ daemon: RunningDaemon) async throws -> [NotificationRequest] {
        try await daemon.engine.deliveredNotifications("com.example.todo").map(\.request).filter { $0.identifier == "restart" }
    }

    @Test func aPushBeingPreparedIsPreparedAgainAfterARestart() async throws {
        let directory = try makeTestDirectory()
        let clock = ManualDaemonClock()
        try await stopWhilePreparing(directory: directory, clock: clock)
        // The daemon stopped while the extension waited: it starts it again as it starts.
        try await withDaemon(directory: directory, clock: clock) { (daemon: RunningDaemon) async throws in
            var events = await daemon.engine.watch().events.makeAsyncIterator()
            #expect(try await shown(daemon).isEmpty)
            clock.advance(by: 8)
            let (outcome, request, _) = await ServiceExtensionTests().ending(of: "restart", in: &events)
            #expect(outcome == .prepared)
            #expect(request?.content.body == "Body (best attempt)")
            #expect(try await shown(daemon).count == 1)
        }
        try await withDaemon(directory: directory, clock: clock) { (daemon: RunningDaemon) async throws in
            #expect(try await shown(daemon).map(\.content.body) == ["Body (best attempt)"])
        }
    }

    @Test func aPushInterruptedTwiceIsShownAsItCame() async throws {
        let directory = try makeTestDirectory()
        let clock = ManualDaemonClock()
        try await stopWhilePreparing(directory: directory, clock: clock)
        try await withDaemon(directory: directory, clock: clock) { (daemon: RunningDaemon) async throws in
            #expect(try await shown(daemon).isEmpty)
        }
        try await withDaemon(directory: directory, clock: clock) { (daemon: RunningDaemon) async throws in
            #expect(try await shown(daemon).map(\.content.body) == ["Body"])
        }
    }
}
