import AsyncHTTPClient
import DaemonTestSupport
import Foundation
import NotificationCore
@testable import NotificationDaemon
import NotificationDaemonClient
import Testing
import TestSupport

/// The local API over a real Unix socket, against a daemon with a real SQLite file.
@Suite(.timeLimit(.minutes(2))) struct LocalAPITests {
    @Test func theSocketIsPrivateToItsUser() async throws {
        try await withDaemon { daemon in
            let attributes = try FileManager.default.attributesOfItem(atPath: daemon.socketPath)
            #expect((attributes[.posixPermissions] as? Int) == 0o600)
            let keyAttributes = try FileManager.default.attributesOfItem(atPath: daemon.configuration.adminKeyPath)
            #expect((keyAttributes[.posixPermissions] as? Int) == 0o600)
        }
    }

    @Test func everyCallNeedsAKeyThatBelongsToAnApp() async throws {
        try await withDaemon { daemon in
            _ = try await daemon.registerApp("com.example.todo")
            let stranger = LocalAPIClient(socketPath: daemon.socketPath, key: "not-a-key")
            let refused = await problem { _ = try await stranger.pending() }
            #expect(refused?.status == 401)
            #expect(refused?.code == "unauthorized")
            let notAdmin = await problem { _ = try await stranger.call(.GET, "/v1/admin/apps", as: [LocalAPI.AppSummary].self) }
            #expect(notAdmin?.status == 401)
        }
    }

    @Test func registeringTheSameAppTwiceIsAConflict() async throws {
        try await withDaemon { daemon in
            _ = try await daemon.registerApp("com.example.todo")
            let again = await problem { _ = try await daemon.registerApp("com.example.todo") }
            #expect(again?.status == 409)
            #expect(again?.code == "appAlreadyRegistered")
            let bad = await problem { _ = try await daemon.registerApp("not a bundle id!") }
            #expect(bad?.status == 400)
        }
    }

    @Test func anAppNeverSeesOrChangesAnotherAppsNotifications() async throws {
        try await withDaemon { daemon in
            let todo = try await daemon.authorizedApp("com.example.todo")
            let mail = try await daemon.authorizedApp("com.example.mail")
            try await todo.add("shared-id", title: "todo's", trigger: .timeInterval(60, repeats: false))
            try await mail.add("shared-id", title: "mail's", trigger: .timeInterval(120, repeats: false))
            try await mail.add("mail-only", trigger: .timeInterval(120, repeats: false))
            #expect(try await todo.pending().map(\.request.content.title) == ["todo's"])

            // Removing by identifier, or all, only touches the caller's own requests.
            try await todo.call(.DELETE, "/v1/requests?identifier=shared-id&identifier=mail-only")
            try await todo.call(.DELETE, "/v1/requests")
            #expect(try await todo.pending().isEmpty)
            #expect(try await mail.pending().map(\.request.identifier).sorted() == ["mail-only", "shared-id"])

            try await mail.add("now", title: "delivered to mail")
            #expect(try await todo.delivered().isEmpty)
            try await todo.call(.DELETE, "/v1/delivered")
            #expect(try await mail.delivered().map(\.request.identifier) == ["now"])
        }
    }

    @Test(arguments: [
        ("none", 403, 1),
        ("empty", 422, 1401),
        ("never", 422, 1400),
    ])
    func refusedRequestsCarryTheirUNErrorCode(kind: String, status: Int, unErrorCode: Int) async throws {
        try await withDaemon { daemon in
            let app = kind == "none" ? try await daemon.registerApp("com.example.app") : try await daemon.authorizedApp("com.example.app")
            var content = NotificationContent()
            if kind != "empty" { content.title = "t" }
            let trigger: NotificationTrigger? = kind == "never" ? .calendar(DateComponents(month: 2, day: 30), repeats: false) : nil
            let refused = await problem {
                try await app.call(.POST, "/v1/requests", body: NotificationRequest(identifier: "r", content: content, trigger: trigger))
            }
            #expect(refused?.status == status)
            #expect(refused?.code == "notification")
            #expect(refused?.unErrorCode == unErrorCode)
            #expect(try await app.pending().isEmpty)
        }
    }

    @Test func malformedBodiesAreRejectedWithAClearProblem() async throws {
        try await withDaemon { daemon in
            let app = try await daemon.authorizedApp("com.example.app")
            struct Wrong: Encodable { var nonsense = 1 }
            let refused = await problem { try await app.call(.POST, "/v1/requests", body: Wrong()) }
            #expect(refused?.status == 400)
            #expect(refused?.code == "invalidRequest")
            #expect(refused?.detail.contains("identifier") == true)
            let badge = await problem { try await app.call(.PUT, "/v1/badge", body: LocalAPI.BadgeRequest(count: -1)) }
            #expect(badge?.unErrorCode == 1600)
        }
    }

    @Test func authorizationWaitsForThePersonsAnswer() async throws {
        try await withDaemon { daemon in
            let app = try await daemon.registerApp("com.example.app")
            try await daemon.withWatch { watch in
                async let granted = app.call(.POST, "/v1/authorization", body: LocalAPI.AuthorizationRequest(options: 0b111),
                                             timeout: .seconds(60), as: LocalAPI.AuthorizationResult.self)
                // The person sees the prompt on the presenters' stream and answers it.
                let prompt = try await watch.next { $0.type == "authorizationPrompt" }
                #expect(prompt.promptOptions == 0b111)
                #expect(prompt.bundleIdentifier == "com.example.app")
                _ = try await daemon.admin.call(.POST, "/v1/admin/apps/com.example.app/authorization",
                                                body: LocalAPI.AuthorizationDecision(decision: "grant"), as: NotificationSettings.self)
                #expect(try await granted.granted)
            }
            let settings = try await app.call(.GET, "/v1/settings", as: NotificationSettings.self)
            #expect(settings.authorizationStatus == .authorized)
            #expect(settings.soundSetting == .enabled)
            // Asking again answers from the stored decision at once.
            let again = try await app.call(.POST, "/v1/authorization", body: LocalAPI.AuthorizationRequest(options: 0b111), as: LocalAPI.AuthorizationResult.self)
            #expect(again.granted)
        }
    }

    @Test func aResponseReachesTheConnectedAppAndIsConfirmed() async throws {
        try await withDaemon { daemon in
            let app = try await daemon.authorizedApp("com.example.todo")
            try await app.call(.PUT, "/v1/categories", body: [
                NotificationCategory(identifier: "TODO", actions: [
                    NotificationAction(identifier: "INPUT", title: "Reply", textInput: .init(buttonTitle: "Send", placeholder: "…")),
                ]),
            ])
            try await app.add("daily", category: "TODO")
            let response = try await daemon.withApp(key: app.key) { stream -> NotificationResponse? in
                try await daemon.admin.call(.POST, "/v1/admin/apps/com.example.todo/notifications/daily/respond",
                                            body: LocalAPI.Respond(kind: "reply", actionIdentifier: "INPUT", text: "done"))
                guard case .call(.response(let ticket, let response)) = try await stream.next() else { return nil }
                try await stream.reply(.responseCompleted(ticket: ticket))
                return response
            }
            #expect(response?.actionIdentifier == "INPUT")
            #expect(response?.userText == "done")
            #expect(try await app.delivered().isEmpty)
        }
    }

    @Test func invalidPersonActionsAreRefusedWithTheirReason() async throws {
        try await withDaemon { daemon in
            let app = try await daemon.authorizedApp("com.example.todo")
            try await app.add("n")
            let unknown = await problem {
                try await daemon.admin.call(.POST, "/v1/admin/apps/com.example.todo/notifications/n/respond",
                                            body: LocalAPI.Respond(kind: "action", actionIdentifier: "NOPE"))
            }
            #expect(unknown?.reason == "unknownAction")
            #expect(unknown?.status == 422)
            let missing = await problem {
                try await daemon.admin.call(.POST, "/v1/admin/apps/com.example.todo/notifications/gone/respond", body: LocalAPI.Respond(kind: "open"))
            }
            #expect(missing?.reason == "notificationNotFound")
            #expect(missing?.status == 404)
            #expect(try await app.delivered().count == 1, "a refused action changes nothing")
        }
    }

    @Test func responsesWaitForAStoppedAppAndArriveInOrderWhenItConnects() async throws {
        try await withDaemon { daemon in
            let app = try await daemon.authorizedApp("com.example.todo")
            for id in ["first", "second", "third"] { try await app.add(id) }
            for id in ["second", "first", "third"] {
                try await daemon.admin.call(.POST, "/v1/admin/apps/com.example.todo/notifications/\(id)/respond", body: LocalAPI.Respond(kind: "open"))
            }
            let order = try await daemon.withApp(key: app.key) { stream in
                var order: [String] = []
                while order.count < 3 {
                    guard case .call(.response(let ticket, let response)) = try await stream.next() else { continue }
                    order.append(response.notification.request.identifier)
                    try await stream.reply(.responseCompleted(ticket: ticket))
                }
                return order
            }
            #expect(order == ["second", "first", "third"])
        }
    }

    @Test func aForegroundAppIsAskedHowToPresent() async throws {
        try await withDaemon { daemon in
            let app = try await daemon.authorizedApp("com.example.chat")
            let presented = try await daemon.withApp(key: app.key, state: .foreground) { stream in
                try await daemon.withWatch { watch in
                    try await app.add("hello")
                    guard case .call(.willPresent(let ticket, _)) = try await stream.next() else { return nil as Presentation? }
                    try await stream.reply(.willPresentAnswer(ticket: ticket, options: PresentationOptions([.banner, .list]).rawValue))
                    return try await watch.next { $0.type == "presented" }.presented?.presentation
                }
            }
            #expect(presented == Presentation(banner: true, list: true))
        }
    }

    @Test func theSchedulerFiresTriggersOnTheDaemonsClock() async throws {
        try await withDaemon { daemon in
            let app = try await daemon.authorizedApp("com.example.todo")
            try await app.add("soon", trigger: .timeInterval(30, repeats: false))
            try await daemon.withWatch { watch in
                daemon.clock.advance(by: 29)
                daemon.clock.advance(by: 1)
                let event = try await watch.next { $0.type == "presented" }
                #expect(event.presented?.notification.request.identifier == "soon")
                #expect(event.presented?.notification.date == daemon.clock.now)
            }
            #expect(try await app.delivered().map(\.request.identifier) == ["soon"])
        }
    }
}

/// The daemon keeps its own copy of every attachment, as Apple's system does.
/// The local API over TCP on loopback, for clients that cannot reach a Unix socket.
@Suite(.timeLimit(.minutes(2))) struct TCPListenerTests {
    @Test func theLocalAPIAlsoListensOnLoopbackTCPWithTheSameKeys() async throws {
        try await withDaemon(configure: { $0.tcpPort = 0 }) { daemon in
            let port = try #require(daemon.tcpPort)
            #expect(port > 0)
            #expect(daemon.configuration.tcpHost == "127.0.0.1", "loopback unless told otherwise")
            let app = try await daemon.authorizedApp("com.example.tcp")
            try await app.add("over-the-socket")

            func get(_ path: String, key: String?) async throws -> (status: UInt, body: Data) {
                var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
                if let key { request.headers.add(name: "Authorization", value: "Bearer \(key)") }
                let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
                return (response.status.code, Data(buffer: try await response.body.collect(upTo: 1 << 20)))
            }
            #expect(try await get("/v1/health", key: nil).status == 200)
            #expect(try await get("/v1/requests", key: nil).status == 401)
            #expect(try await get("/v1/requests", key: "not-a-key").status == 401)
            #expect(try await get("/v1/requests", key: " ").status == 401)
            #expect(try await get("/v1/requests", key: "\t \(app.key) ").status == 200, "white space around the key is not part of it")
            let answer = try await get("/v1/requests", key: app.key)
            #expect(answer.status == 200)
            let pending = try JSONDecoder().decode([LocalAPI.PendingRequest].self, from: answer.body)
            #expect(pending.isEmpty, "an immediate request is delivered, not pending")
            let delivered = try await get("/v1/delivered", key: app.key)
            #expect(try JSONDecoder().decode([DeliveredNotification].self, from: delivered.body).map(\.request.identifier) == ["over-the-socket"])
        }
    }
}

@Suite(.timeLimit(.minutes(2))) struct DaemonAttachmentTests {
    @Test func attachmentsAreCopiedIntoTheDaemonsStore() async throws {
        try await withDaemon { daemon in
            let app = try await daemon.authorizedApp("com.example.media")
            let image = try makeTestDirectory().appendingPathComponent("photo.png")
            let bytes = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 1, 2, 3])
            try bytes.write(to: image)
            var content = NotificationContent()
            content.title = "photo"
            content.attachments = [NotificationAttachment(identifier: "p", url: image, type: "public.png")]
            try await app.call(.POST, "/v1/requests", body: NotificationRequest(identifier: "media", content: content, trigger: nil))
            try FileManager.default.removeItem(at: image)

            let stored = try #require(try await app.delivered().first?.request.content.attachments.first)
            #expect(stored.url.path.hasPrefix(daemon.directory.appendingPathComponent("attachments/com.example.media").path))
            #expect(try Data(contentsOf: stored.url) == bytes, "the app's file is gone, the daemon's copy is not")

            // A refused request leaves no copy behind.
            try bytes.write(to: image)
            let refused = await problem {
                try await app.call(.POST, "/v1/requests", body: NotificationRequest(identifier: "never", content: content,
                                                                                   trigger: .calendar(DateComponents(month: 2, day: 30), repeats: false)))
            }
            #expect(refused?.unErrorCode == 1400)
            let folders = try FileManager.default.contentsOfDirectory(atPath: daemon.directory.appendingPathComponent("attachments/com.example.media").path)
            #expect(folders.count == 1)
        }
    }
}
