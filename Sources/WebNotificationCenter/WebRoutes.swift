import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOWebSocket
import NotificationCore
import NotificationDaemon
import NotificationEngine

/// The web notification center's routes: the page and its files, what is on screen now, the person's
/// actions, and the live events.
enum WebRoutes {
    typealias Context = BasicWebSocketRequestContext

    /// What the page shows when it (re)connects: every notification the person can see (previews
    /// hidden as the settings say), the authorization prompts on screen, each app's badge, and the lock.
    struct State: Encodable {
        var notifications: [AsShown<LocalAPI.VisibleNotification>]
        var prompts: [LocalAPI.AuthorizationPrompt]
        var badges: [String: Int]
        var device: Device
        /// The apps whose notifications are provisional: the person keeps them or turns them off.
        var provisionalApps: [String]
        /// The categories each app's content extension draws: their notifications expand to its interface.
        var contentExtensions: [String: [String]]
        /// How the apps on screen are shown: their names and icons.
        var apps: [String: PageApp]
    }

    /// An app as the page shows it: its name, and the link to its icon when it has one.
    struct PageApp: Encodable {
        var bundleIdentifier: String
        var name: String
        var icon: String?

        init(_ bundleIdentifier: String, _ identity: ShownAppIdentity) {
            self.bundleIdentifier = bundleIdentifier
            name = identity.name
            icon = identity.iconFile == nil ? nil : "/api/apps/\(bundleIdentifier.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/"))) ?? bundleIdentifier)/icon"
        }
    }

    struct Device: Encodable {
        var locked: Bool
        var hasPasscode: Bool
        /// The Focus that is on, if any.
        var focus: Focus?
        /// The Scheduled Summary, if it is on.
        var summary: ScheduledSummary?
        /// The device's time zone (an identifier such as `Europe/Paris`): the page tells times in it.
        var timeZone: String
        /// The device's time now: the page tells how long ago a notification came by it, not by the browser's clock.
        var now: Date
    }

    /// `POST /api/device/unlock`.
    struct Unlock: Decodable {
        var passcode: String?
    }

    /// `PUT /api/device/passcode`: the new passcode (`null` turns it off) and the current one.
    struct PasscodeChange: Decodable {
        var passcode: String?
        var current: String?

        enum CodingKeys: CodingKey { case passcode, current }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            // `passcode` must be there, `null` or a string: a body without it does not turn the passcode off.
            passcode = try container.decodeNullable(String.self, requiredFor: .passcode)
            current = try container.decodeIfPresent(String.self, forKey: .current)
        }
    }

    static func make(engine: DaemonEngine, access: WebAccess, logger: Logger) -> Router<Context> {
        let router = Router(context: Context.self)
        router.middlewares.add(WebAccessMiddleware(access: access))
        router.middlewares.add(ProblemMiddleware())
        let page = WebPage.load()
        let files = AttachmentFiles(engine: engine)
        let relay = ContentExtensionRoutes.EventRelay()
        let sessions = ContentExtensionSessions(logger: logger) { relay.relay($0) }
        ContentExtensionRoutes.add(to: router, engine: engine, sessions: sessions, relay: relay, files: files, logger: logger)

        router.get("/") { _, _ in page.response(for: "index.html") }
        router.get("/:file") { _, context in page.response(for: try context.parameters.require("file")) }

        router.get("/api/state") { _, _ in
            let lock = await engine.lockState
            var notifications: [AsShown<LocalAPI.VisibleNotification>] = []
            var badges: [String: Int] = [:]
            var provisional: [String] = []
            var contentExtensions: [String: [String]] = [:]
            var apps: [String: PageApp] = [:]
            for app in try await engine.appsShowingNotifications() {
                apps[app] = PageApp(app, await engine.shownIdentity(of: app))
                let settings = try await engine.settings(app)
                if let registration = await engine.contentExtension(of: app) { contentExtensions[app] = registration.attributes.categories }
                if settings.authorizationStatus == .provisional { provisional.append(app) }
                let visible = try await engine.visibleNotifications(app).map { LocalAPI.VisibleNotification(bundleIdentifier: app, $0) }
                notifications += visible.map { PagePreview.shown($0, among: visible, settings: settings, locked: lock.isLocked, files: files) }
                badges[app] = try await engine.badge(app)
            }
            let prompts = try await engine.authorizationPrompts().map {
                LocalAPI.AuthorizationPrompt(bundleIdentifier: $0.bundleIdentifier, options: $0.options.rawValue)
            }
            for prompt in prompts where apps[prompt.bundleIdentifier] == nil {
                apps[prompt.bundleIdentifier] = PageApp(prompt.bundleIdentifier, await engine.shownIdentity(of: prompt.bundleIdentifier))
            }
            return jsonResponse(State(
                notifications: notifications.sorted { $0.value.notification.date > $1.value.notification.date },
                prompts: prompts, badges: badges, device: Device(locked: lock.isLocked, hasPasscode: lock.hasPasscode, focus: await engine.focus,
                              summary: await engine.scheduledSummary, timeZone: await engine.timeZone.identifier,
                              now: engine.now),
                provisionalApps: provisional, contentExtensions: contentExtensions, apps: apps
            ))
        }
        // The lock: locking needs nothing; unlocking needs the passcode once the person set one.
        router.post("/api/device/lock") { _, _ in
            try await engine.setDeviceLocked(true)
            return Response(status: .noContent)
        }
        router.post("/api/device/unlock") { request, context in
            let body = try await decode(Unlock.self, request, context)
            try await engine.unlockDevice(passcode: body.passcode)
            return Response(status: .noContent)
        }
        router.put("/api/device/passcode") { request, context in
            let body = try await decode(PasscodeChange.self, request, context)
            try await engine.setPasscode(body.passcode, current: body.current)
            return Response(status: .noContent)
        }
        // Focus: on (or changed) with a Focus, off with null.
        router.put("/api/device/focus") { request, context in
            let body = try await decode(LocalAPI.DeviceFocus.self, request, context)
            try await engine.setFocus(body.focus)
            return jsonResponse(LocalAPI.DeviceFocus(focus: await engine.focus))
        }
        // "Sign Out Other Browsers": a new secret; this browser gets it, every other one is signed out.
        router.post("/api/pairing/replace") { _, _ in
            let secret = try access.credential.rotate()
            logger.notice("the notification center's secret was replaced from its page: other browsers are signed out")
            var response = Response(status: .noContent)
            response.setCookie(access.pairingCookie(secret))
            return response
        }
        // The person acts on a notification: the same actions, checked the same way, as any surface's.
        router.post("/api/apps/:app/notifications/:identifier/respond") { request, context in
            let body = try await decode(LocalAPI.Respond.self, request, context)
            try await AdminRoutes.perform(body, on: try context.parameters.decoded("identifier"), of: try context.parameters.decoded("app"), engine: engine)
            return Response(status: .noContent)
        }
        // The person answers an app's authorization prompt.
        router.post("/api/apps/:app/authorization") { request, context in
            let app = try context.parameters.decoded("app")
            let body = try await decode(LocalAPI.AuthorizationDecision.self, request, context)
            guard let decision = DaemonEngine.AuthorizationDecision(rawValue: body.decision) else {
                throw DaemonError(.invalidRequest, "decision must be grant, deny, provisional or reset; got \"\(body.decision)\".")
            }
            return jsonResponse(try await engine.authorize(app, decision))
        }
        // "Keep…" on a provisional notification: deliver quietly from now on, at once or in the Scheduled
        // Summary. ("Turn Off…" denies, above.)
        router.post("/api/apps/:app/keep") { request, context in
            // No body at all is "Deliver Immediately", as before the summary existed.
            let body = try await decode(LocalAPI.KeepProvisional.self, request, context, ifEmpty: LocalAPI.KeepProvisional())
            return jsonResponse(try await engine.keepProvisionalNotifications(try context.parameters.decoded("app"), inSummary: body.inSummary))
        }
        // The Scheduled Summary: on (or changed) with its times, off with null.
        router.put("/api/device/summary") { request, context in
            let body = try await decode(LocalAPI.DeviceSummary.self, request, context)
            try await engine.setScheduledSummary(body.summary)
            return jsonResponse(LocalAPI.DeviceSummary(summary: await engine.scheduledSummary))
        }
        // The composer, for developers: a local notification added as the app adds it (the local API's
        // `POST /v1/requests`, checked by the same rules), or a push delivered as the gateway delivers it.
        router.post("/api/apps/:app/requests") { request, context in
            let body = try await decodeNotificationRequest(request, context)
            try await engine.add(try context.parameters.decoded("app"), body)
            return Response(status: .created)
        }
        router.post("/api/apps/:app/pushes") { request, context in
            let body = try await decode(LocalAPI.LocalPush.self, request, context)
            try await engine.deliverPush(try context.parameters.decoded("app"), payload: Array(body.payload.utf8), collapseID: body.collapseID)
            return Response(status: .noContent)
        }
        // The settings the person has for each app, as iOS's Settings › Notifications shows them.
        router.get("/api/apps") { _, _ in
            var apps: [PageApp] = []
            for app in try await engine.apps() where app.quarantined == nil {
                apps.append(PageApp(app.bundleIdentifier, await engine.shownIdentity(of: app.bundleIdentifier)))
            }
            return jsonResponse(apps)
        }
        // An app's icon: the file registered for it, or its `.desktop` entry's.
        router.get("/api/apps/:app/icon") { _, context in
            let identity = await engine.shownIdentity(of: try context.parameters.decoded("app"))
            guard let file = identity.iconFile, let type = AppIdentity.iconTypes[(file as NSString).pathExtension.lowercased()],
                  let size = (try? FileManager.default.attributesOfItem(atPath: file)[.size]) as? Int, size <= AppIdentity.maximumIconBytes,
                  let data = FileManager.default.contents(atPath: file) else {
                return ProblemMiddleware<Context>.response(for: LocalAPI.Problem(status: 404, code: "iconNotFound", title: "Not Found",
                                                                                 detail: "The app has no icon that can be read."))
            }
            // An SVG is a document: opened by itself, it runs nothing and loads nothing.
            return Response(status: .ok, headers: [.contentType: type, .contentSecurityPolicy: "default-src 'none'; style-src 'unsafe-inline'; sandbox; frame-ancestors 'none'"],
                            body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
        }
        router.get("/api/apps/:app/settings") { _, context in
            jsonResponse(try await engine.settings(try context.parameters.decoded("app")))
        }
        router.patch("/api/apps/:app/settings") { request, context in
            let change = try await decode(LocalAPI.SettingsChange.self, request, context)
            return jsonResponse(try await engine.changeSettings(try context.parameters.decoded("app")) { change.apply(to: &$0) })
        }
        // The app's own notification settings (`openSettingsFor`), for an app that says it has them.
        router.post("/api/apps/:app/open-settings") { _, context in
            try await engine.openAppSettings(try context.parameters.decoded("app"), from: nil)
            return Response(status: .noContent)
        }
        // An attachment's file, for the page's players and thumbnails: only the daemon's own copy of a
        // file of a notification on screen, and only while its preview is shown.
        router.get("/api/apps/:app/notifications/:identifier/attachments/:index") { request, context in
            try await files.serve(
                app: try context.parameters.decoded("app"), notification: try context.parameters.decoded("identifier"),
                index: try context.parameters.require("index", as: Int.self), request: request, context: context
            )
        }
        // The page listens from the start: the events of `/v1/admin/events`, until either side goes.
        // Only what the page uses: a presented notification (its preview hidden as on the page), and
        // for the rest the event's kind (and a summary's time), on which the page reads what is on screen again. Other events
        // carry notifications' contents (responses, requests) that a locked screen must not receive.
        @Sendable func serveEvents(inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter) async throws {
            try await AdminRoutes.servePresenter(engine: engine, remaining: inbound.messages(maxSize: 1 << 16).makeAsyncIterator(), outbound: outbound) { event in
                var sent = PageEvent(type: event.type, bundleIdentifier: event.bundleIdentifier)
                // When a summary came, the page is told which (its time, none of its notifications' contents).
                if case .app(_, .summaryDelivered(let notifications)) = event { sent.date = notifications.first?.summary?.date }
                guard case .app(let app, .presented(let presented)) = event, let settings = try? await engine.settings(app) else {
                    return try? AdminRoutes.eventEncoder.encode(sent)
                }
                let visible = LocalAPI.VisibleNotification(bundleIdentifier: app, presented)
                let shown = PagePreview.shown(visible, among: [visible], settings: settings, locked: await engine.lockState.isLocked, files: files)
                sent.notification = shown.value
                sent.app = PageApp(app, await engine.shownIdentity(of: app))
                return try? AdminRoutes.eventEncoder.encode(AsShown(value: sent, previewHidden: shown.previewHidden, onLockScreen: shown.onLockScreen,
                                                                    attachments: shown.attachments))
            }
        }
        router.ws("/api/events") { request, _ in
            try requireWebSocketUpgrade(request)
            return .upgrade([:])
        } onUpgrade: { inbound, outbound, context in
            // A browser signed out (its secret replaced) stops receiving at once: its events end, with a
            // close code the page reads as "no longer paired".
            let secret = context.request.cookies[access.cookieName]?.value ?? ""
            await withTaskGroup(of: Void.self) { group in
                group.addTask { try? await serveEvents(inbound: inbound, outbound: outbound) }
                group.addTask {
                    await access.waitUntilReplaced(secret)
                    // Closing ends the events too, once the page answers the close.
                    if !Task.isCancelled { try? await outbound.close(.unknown(WebAccess.signedOutCloseCode), reason: "signed out") }
                }
                _ = await group.next()
                group.cancelAll()
            }
        }
        return router
    }
}

/// An event as the page receives it (the presenter stream's, reduced): its kind and app, the time of a
/// Scheduled Summary that came, and a notification presented, as ``PagePreview`` lets the page see it.
struct PageEvent: Encodable {
    var type: String
    var bundleIdentifier: String
    var notification: LocalAPI.VisibleNotification?
    /// How the presented notification's app is shown, for its banner.
    var app: WebRoutes.PageApp?
    var date: Date?
}

/// A notification as the page receives it: its content hidden when the person's settings hide its
/// preview (`Show Previews`: never, or when unlocked while the device is locked), as iOS hides it.
/// What is hidden never reaches the page. Attachments are given as the page's own links to them.
enum PagePreview {
    /// `visible` as the page may see it, among the notifications its app shows (for the `%u` of the
    /// placeholder: how many share its thread), and whether its preview is hidden.
    static func shown(
        _ visible: LocalAPI.VisibleNotification, among all: [LocalAPI.VisibleNotification], settings: NotificationSettings, locked: Bool,
        files: AttachmentFiles
    ) -> AsShown<LocalAPI.VisibleNotification> {
        var redacted = visible
        // The daemon's paths stay in the daemon; the page has links.
        redacted.notification.request.content.attachments = []
        let onLockScreen = PresentationPolicy.showsOnLockScreen(visible.presentation, settings: settings)
        guard PreviewPolicy.hidesPreviews(settings, locked: locked) else {
            return AsShown(value: redacted, previewHidden: false, onLockScreen: onLockScreen, attachments: files.links(of: visible))
        }
        let content = visible.notification.request.content
        let count = all.count(where: { $0.notification.request.content.threadIdentifier == content.threadIdentifier })
        redacted.notification.request.content = PreviewPolicy.hiddenContent(
            of: content, categoryOptions: visible.categoryOptions, placeholder: visible.hiddenPreviewsBodyPlaceholder, inThread: count)
        return AsShown(value: redacted, previewHidden: true, onLockScreen: onLockScreen, attachments: [])
    }
}

/// A notification, or a `presented` event, with `previewHidden`, whether the lock screen shows it
/// (``PresentationPolicy/showsOnLockScreen(_:settings:)``) and the page's `attachments` beside its own fields.
struct AsShown<Value: Encodable>: Encodable {
    var value: Value
    var previewHidden: Bool
    var onLockScreen: Bool
    var attachments: [AttachmentFiles.Link]

    enum CodingKeys: CodingKey { case previewHidden, onLockScreen, attachments }

    func encode(to encoder: any Encoder) throws {
        try value.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(previewHidden, forKey: .previewHidden)
        try container.encode(onLockScreen, forKey: .onLockScreen)
        try container.encode(attachments, forKey: .attachments)
    }
}

/// The page's files, read once from the resources that ship with `unotify`.
struct WebPage: Sendable {
    /// File name → contents; only these are served.
    let files: [String: Data]
    /// Why the files could not be read, when they could not.
    let problem: String?

    static let contentTypes = [
        "html": "text/html; charset=utf-8",
        "js": "text/javascript; charset=utf-8",
        "css": "text/css; charset=utf-8",
        "svg": "image/svg+xml",
    ]

    /// The files of `Page/` in the module's resource bundle, found beside the executable (where the
    /// package manager puts it) without `Bundle.module`, which stops the process when it is missing.
    static func load() -> WebPage {
        let bundleName = "OpenUserNotifications_WebNotificationCenter.resources"
        let executable = URL(fileURLWithPath: CommandLine.arguments.first ?? "").resolvingSymlinksInPath().deletingLastPathComponent()
        let candidates = [Bundle.main.bundleURL, executable].map { $0.appendingPathComponent(bundleName).appendingPathComponent("Page") }
        for folder in candidates {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path), names.contains("index.html") else { continue }
            var files: [String: Data] = [:]
            for name in names where contentTypes[(name as NSString).pathExtension] != nil {
                files[name] = FileManager.default.contents(atPath: folder.appendingPathComponent(name).path)
            }
            return WebPage(files: files, problem: nil)
        }
        return WebPage(files: [:], problem: "The page's files (\(bundleName)) are not beside the unotify executable: install them with it.")
    }

    func response(for name: String) -> Response {
        guard let data = files[name], let type = Self.contentTypes[(name as NSString).pathExtension] else {
            let detail = problem ?? "No such file: \(name)."
            return Response(status: problem == nil ? .notFound : .internalServerError, headers: [.contentType: "text/plain; charset=utf-8"],
                             body: ResponseBody(byteBuffer: ByteBuffer(string: detail)))
        }
        return Response(status: .ok, headers: [.contentType: type], body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }
}
