import Foundation
import Hummingbird
import HummingbirdWebSocket
import NotificationCore
import NotificationDaemon

/// The web notification center's routes: the page and its files, what is on screen now, the person's
/// actions, and the live events.
enum WebRoutes {
    typealias Context = BasicWebSocketRequestContext

    /// What the page shows when it (re)connects: every notification the person can see, the
    /// authorization prompts on screen, and each app's badge.
    struct State: Encodable {
        var notifications: [LocalAPI.VisibleNotification]
        var prompts: [LocalAPI.AuthorizationPrompt]
        var badges: [String: Int]
    }

    static func make(engine: DaemonEngine, access: WebAccess) -> Router<Context> {
        let router = Router(context: Context.self)
        router.middlewares.add(WebAccessMiddleware(access: access))
        router.middlewares.add(ProblemMiddleware())
        let page = WebPage.load()

        router.get("/") { _, _ in page.response(for: "index.html") }
        router.get("/:file") { _, context in page.response(for: try context.parameters.require("file")) }

        router.get("/api/state") { _, _ in
            var notifications: [LocalAPI.VisibleNotification] = []
            var badges: [String: Int] = [:]
            for app in try await engine.appsShowingNotifications() {
                notifications += try await engine.visibleNotifications(app).map { LocalAPI.VisibleNotification(bundleIdentifier: app, $0) }
                badges[app] = try await engine.badge(app)
            }
            let prompts = try await engine.authorizationPrompts().map {
                LocalAPI.AuthorizationPrompt(bundleIdentifier: $0.bundleIdentifier, options: $0.options.rawValue)
            }
            return jsonResponse(State(notifications: notifications.sorted { $0.notification.date > $1.notification.date }, prompts: prompts, badges: badges))
        }
        // The person acts on a notification: the same actions, checked the same way, as any surface's.
        router.post("/api/apps/:app/notifications/:identifier/respond") { request, context in
            let body = try await decode(LocalAPI.Respond.self, request, context)
            try await AdminRoutes.perform(body, on: try context.parameters.require("identifier"), of: try context.parameters.require("app"), engine: engine)
            return Response(status: .noContent)
        }
        // The person answers an app's authorization prompt.
        router.post("/api/apps/:app/authorization") { request, context in
            let app = try context.parameters.require("app")
            let body = try await decode(LocalAPI.AuthorizationDecision.self, request, context)
            guard let decision = DaemonEngine.AuthorizationDecision(rawValue: body.decision) else {
                throw DaemonError(.invalidRequest, "decision must be grant, deny, provisional or reset; got \"\(body.decision)\".")
            }
            return jsonResponse(try await engine.authorize(app, decision))
        }
        // The settings the person has for each app, as iOS's Settings › Notifications shows them.
        router.get("/api/apps") { _, _ in
            jsonResponse(try await engine.apps().map(\.bundleIdentifier))
        }
        router.get("/api/apps/:app/settings") { _, context in
            jsonResponse(try await engine.settings(try context.parameters.require("app")))
        }
        router.patch("/api/apps/:app/settings") { request, context in
            let change = try await decode(LocalAPI.SettingsChange.self, request, context)
            return jsonResponse(try await engine.changeSettings(try context.parameters.require("app")) { change.apply(to: &$0) })
        }
        // The app's own notification settings (`openSettingsFor`), for an app that says it has them.
        router.post("/api/apps/:app/open-settings") { _, context in
            try await engine.openAppSettings(try context.parameters.require("app"), from: nil)
            return Response(status: .noContent)
        }
        router.ws("/api/events") { request, _ in
            try requireWebSocketUpgrade(request)
            return .upgrade([:])
        } onUpgrade: { inbound, outbound, _ in
            // The page listens from the start: the events of `/v1/admin/events`, until either side goes.
            try await AdminRoutes.servePresenter(engine: engine, remaining: inbound.messages(maxSize: 1 << 16).makeAsyncIterator(), outbound: outbound)
        }
        return router
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
