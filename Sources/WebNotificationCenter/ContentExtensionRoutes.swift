import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdWebSocket
import Logging
import NotificationCore
import NotificationDaemon
import NotificationEngine
import Synchronization

/// The expanded notifications that show their app's content extension: the extension runs while the
/// page shows its interface, in a frame that is sandboxed from the page.
///
/// - `POST /api/apps/{app}/notifications/{identifier}/content-extension` starts the extension for a
///   notification on screen whose category it draws, and answers with an ``Opened`` interface.
/// - `GET /api/content-extensions/{session}/events` (WebSocket) keeps it open: closing the socket
///   closes the interface and stops the extension. It says when the interface changed, closed or ended.
/// - `POST …/{session}/respond` hands an action to the extension first; what its completion answers
///   decides whether the app hears of it. `POST …/{session}/media` presses the media button.
/// - `GET /frames/{session}` is the interface's document, `GET /frames/{session}/attachments/{index}`
///   the notification's attachments it shows. The session's identifier is their only credential (the
///   frame has no origin of its own, so no cookie), and the document runs no scripts.
enum ContentExtensionRoutes {
    typealias Context = BasicWebSocketRequestContext

    /// An interface as the page receives it.
    struct Opened: Encodable {
        var session: String
        /// Where the frame reads the interface's document; it changes with each new interface.
        var frame: String
        var attributes: ContentExtensionAttributes
        var title: String?
        var preferredContentSize: ContentExtensionInterface.Size?
        var mediaButton: ContentExtensionInterface.MediaButton?
        /// The actions shown, when the extension replaced its category's.
        var actions: [NotificationAction]?

        init(_ session: ContentExtensionSessions.Session) {
            self.session = session.id
            frame = "/frames/\(session.id)?v=\(session.version)"
            attributes = session.attributes
            title = session.interface.title
            preferredContentSize = session.interface.preferredContentSize
            mediaButton = session.interface.mediaButton
            actions = session.interface.actions
        }
    }

    /// What the extension made of an action: `doNotDismiss` (the interface stays, as it is now),
    /// `dismiss` or `dismissAndForwardAction` (it closed).
    struct Handled: Encodable {
        var option: String
        var interface: Opened?
    }

    /// `POST …/media`.
    struct Media: Decodable {
        var play: Bool
    }

    /// The extensions' own events, to the page that keeps each interface open.
    final class EventRelay: Sendable {
        private let listeners = Mutex<[String: AsyncStream<ContentExtensionSessions.Event>.Continuation]>([:])

        func listen(_ session: String) -> AsyncStream<ContentExtensionSessions.Event> {
            let (stream, continuation) = AsyncStream<ContentExtensionSessions.Event>.makeStream(bufferingPolicy: .bufferingNewest(64))
            listeners.withLock { $0.updateValue(continuation, forKey: session) }?.finish()
            return stream
        }

        func forget(_ session: String) {
            listeners.withLock { $0.removeValue(forKey: session) }?.finish()
        }

        func relay(_ event: ContentExtensionSessions.Event) {
            let session: String
            switch event {
            case .changed(let id), .defaultAction(let id), .dismiss(let id), .ended(let id): session = id
            }
            let listener = listeners.withLock { $0[session] }
            listener?.yield(event)
            if case .ended = event { listener?.finish() }
        }
    }

    static func add(to router: Router<Context>, engine: DaemonEngine, sessions: ContentExtensionSessions, relay: EventRelay, files: AttachmentFiles, logger: Logger) {
        router.post("/api/apps/:app/notifications/:identifier/content-extension") { _, context in
            let app = try context.parameters.decoded("app")
            let identifier = try context.parameters.decoded("identifier")
            guard let shown = try await engine.visibleNotifications(app).first(where: { $0.notification.request.identifier == identifier }),
                  shown.summary?.held != true else {
                throw DaemonError(PersonActionRejection.notificationNotFound(identifier))
            }
            let category = shown.notification.request.content.categoryIdentifier
            guard let registration = await engine.contentExtension(of: app), registration.draws(category) else {
                throw DaemonError(.noContentExtension, "\(app) has no content extension for the category \"\(category)\".")
            }
            // An interface shows the notification's content: not while the settings hide its preview.
            guard !PreviewPolicy.hidesPreviews(try await engine.settings(app), locked: await engine.lockState.isLocked) else {
                throw DaemonError(.noContentExtension, "The person's settings hide this notification's preview; unlock the device to expand it.")
            }
            let folders = try await engine.contentExtensionFolders(of: app)
            let actions = try await engine.categories(app).first { $0.identifier == category }?.actions ?? []
            let session = try await sessions.open(app: app, notification: shown.notification, actions: actions, registration: registration,
                                                  folder: folders.run, caches: folders.caches)
            return jsonResponse(Opened(session), status: .created)
        }
        router.get("/api/content-extensions/:session") { _, context in
            jsonResponse(Opened(try session(context.parameters.require("session"), in: sessions)))
        }
        router.delete("/api/content-extensions/:session") { _, context in
            let id = try context.parameters.require("session")
            sessions.close(id)
            relay.forget(id)
            return Response(status: .noContent)
        }
        // An action chosen in the expanded notification: the extension's answer decides what the app hears.
        router.post("/api/content-extensions/:session/respond") { request, context in
            let open = try session(try context.parameters.require("session"), in: sessions)
            let body = try await decode(LocalAPI.Respond.self, request, context)
            let action = try AdminRoutes.action(body)
            switch action {
            case .action, .reply: break
            case .open, .dismiss:
                throw DaemonError(.invalidRequest, "An expanded notification's extension handles actions and replies; open and dismiss the notification itself.")
            }
            return try await handle(action, of: open, engine: engine, sessions: sessions, relay: relay, logger: logger)
        }
        router.post("/api/content-extensions/:session/media") { request, context in
            let id = try context.parameters.require("session")
            let body = try await decode(Media.self, request, context)
            try await sessions.media(id, play: body.play)
            return jsonResponse(Opened(try session(id, in: sessions)))
        }
        router.ws("/api/content-extensions/:session/events") { request, context in
            try requireWebSocketUpgrade(request)
            _ = try session(try context.parameters.require("session"), in: sessions)
            return .upgrade([:])
        } onUpgrade: { inbound, outbound, context in
            guard let id = context.requestContext.parameters.get("session"), let open = sessions.session(id) else { return }
            let events = relay.listen(id)
            defer {
                // The page let go of the interface: it closes, and its extension stops (once it has
                // answered the action it may be handling).
                relay.forget(id)
                sessions.closeWhenAnswered(id)
            }
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await event in events {
                        let type: String
                        switch event {
                        case .changed: type = "changed"
                        case .defaultAction:
                            // As tapping the notification: the app opens with the default action.
                            do {
                                try await engine.respond(open.app, to: open.notification.request.identifier, with: .open)
                            } catch {
                                logger.notice("a content extension's default action was refused", metadata: ["reason": .string("\(error)")])
                            }
                            sessions.closeWhenAnswered(id)
                            type = "closed"
                        case .dismiss:
                            sessions.closeWhenAnswered(id)
                            type = "closed"
                        case .ended:
                            type = "ended"
                        }
                        do {
                            try await outbound.write(.text(#"{"type":"\#(type)"}"#))
                        } catch {
                            return
                        }
                        if type != "changed" { return }
                    }
                }
                group.addTask {
                    // The page sends nothing; its socket closing ends the interface.
                    do {
                        for try await _ in inbound.messages(maxSize: 1 << 12) {}
                    } catch {}
                }
                _ = await group.next()
                group.cancelAll()
            }
        }
        router.get("/frames/:session") { request, context in
            let open = try session(try context.parameters.require("session"), in: sessions)
            let origin = "http://\(request.head.authority ?? "127.0.0.1")"
            let body = document(open, origin: origin)
            return Response(status: .ok, headers: [
                .contentType: "text/html; charset=utf-8",
                .contentSecurityPolicy: frameSecurityPolicy(origin: origin),
                HTTPField.Name("X-Frame-Options")!: "SAMEORIGIN",
            ], body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
        }
        router.get("/frames/:session/attachments/:index") { request, context in
            let open = try session(try context.parameters.require("session"), in: sessions)
            return try await files.serve(app: open.app, notification: open.notification.request.identifier,
                                         index: try context.parameters.require("index", as: Int.self), request: request, context: context)
        }
    }

    /// The open interface, or `noContentExtension` when it closed.
    private static func session(_ id: String, in sessions: ContentExtensionSessions) throws -> ContentExtensionSessions.Session {
        guard let open = sessions.session(id) else {
            throw DaemonError(.noContentExtension, "This notification's interface is closed; expand the notification again.")
        }
        return open
    }

    /// Hands the person's action to the extension, then does what its completion says. An extension
    /// that fails to answer does not lose the person's action: it goes to the app, as without one.
    private static func handle(_ action: PersonAction, of open: ContentExtensionSessions.Session, engine: DaemonEngine,
                               sessions: ContentExtensionSessions, relay: EventRelay, logger: Logger) async throws -> Response {
        let identifier = open.notification.request.identifier
        let offered = open.interface.actions
        // Checked first, as the app would be handed it: an unknown action never reaches the extension.
        guard let response = try await engine.response(open.app, to: identifier, with: action, offeredActions: offered) else {
            throw DaemonError(.invalidRequest, "This action gives the app no response.")
        }
        let option: ContentExtensionResponseOption
        do {
            option = try await sessions.respond(open.id, with: response)
        } catch {
            logger.notice("a content extension did not handle an action; it goes to the app", metadata: ["app": .string(open.app), "reason": .string("\(error)")])
            option = .dismissAndForwardAction
        }
        switch option {
        case .doNotDismiss:
            guard let now = sessions.session(open.id) else { return jsonResponse(Handled(option: "dismiss", interface: nil)) }
            return jsonResponse(Handled(option: "doNotDismiss", interface: Opened(now)))
        case .dismiss, .dismissAndForwardAction:
            sessions.close(open.id)
            relay.forget(open.id)
            try await engine.respond(open.app, to: identifier, with: action, offeredActions: offered, forwardingToApp: option == .dismissAndForwardAction)
            return jsonResponse(Handled(option: option == .dismiss ? "dismiss" : "dismissAndForwardAction", interface: nil))
        }
    }

    /// The frame's policy: nothing runs, nothing is sent, and images and media come only from the
    /// frame's own attachment links or `data:` URLs.
    static func frameSecurityPolicy(origin: String) -> String {
        "sandbox allow-scripts; default-src 'none'; script-src 'none'; connect-src 'none'; style-src 'unsafe-inline'; img-src \(origin) data:; media-src \(origin) data:; font-src data:; "
            + "base-uri 'none'; form-action 'none'; frame-ancestors 'self'"
    }

    /// The interface's document: the extension's HTML, whole or a fragment, with the notification's
    /// attachments' file URLs turned into the frame's links to them.
    static func document(_ open: ContentExtensionSessions.Session, origin: String) -> String {
        var html = open.interface.html
        for (index, attachment) in open.notification.request.content.attachments.enumerated() {
            let link = "\(origin)/frames/\(open.id)/attachments/\(index)"
            html = html.replacingOccurrences(of: attachment.url.absoluteString, with: link)
        }
        if html.range(of: "<html", options: .caseInsensitive) != nil { return html }
        return """
            <!doctype html><html><head><meta charset="utf-8"><meta name="color-scheme" content="light dark">\
            <style>html,body{margin:0;font:15px/1.35 system-ui,sans-serif}img,video{max-width:100%}</style></head>\
            <body>\(html)</body></html>
            """
    }
}
