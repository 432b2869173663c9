import Foundation
import HTTPTypes
import Hummingbird
import NotificationCore
import NotificationDaemon
import Synchronization

/// Who may use the web notification center, and from where: the rules of ``WebAccessMiddleware``.
final class WebAccess: Sendable {
    /// The cookie the secret becomes, named for the port: browsers keep cookies per host, not per
    /// port, so two centers on one machine would otherwise overwrite each other's.
    var cookieName: String { "unotify-center-\(port.withLock { $0 } ?? 0)" }

    let secret: String
    /// The address the center binds, as configured.
    let boundHost: String
    private let port = Mutex<Int?>(nil)

    init(secret: String, boundHost: String) {
        self.secret = secret
        self.boundHost = boundHost
    }

    /// Records the port the center listens on, once it does.
    func setPort(_ port: Int) {
        self.port.withLock { $0 = port }
    }

    /// The `Host` values the center answers to: its own address, and loopback's names for it.
    func isAllowed(host: String) -> Bool {
        guard let port = port.withLock({ $0 }) else { return false }
        let names = ["127.0.0.1", "localhost", "[::1]", Self.urlHost(boundHost)]
        return names.contains { "\($0):\(port)" == host.lowercased() }
    }

    /// Whether `value` is this start's secret.
    func isSecret(_ value: String?) -> Bool {
        guard let value else { return false }
        return constantTimeEqual(value, secret)
    }

    /// An address as it is written in a URL: IPv6 in brackets.
    static func urlHost(_ host: String) -> String {
        host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
    }
}

/// Applies ``WebAccess`` to every request, and gives every answer the center's security headers.
struct WebAccessMiddleware<Context: RequestContext>: RouterMiddleware {
    let access: WebAccess

    /// Scripts, styles and media from the center itself only; frames only the center's own (content
    /// extensions' interfaces); no forms, plugins or base URLs.
    static var contentSecurityPolicy: String {
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; media-src 'self'; "
            + "frame-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await checked(request, context: context, next: next)
        // A content extension's frame has its own policy, stricter still, and may be framed by the page.
        if response.headers[.contentSecurityPolicy] == nil {
            response.headers[.contentSecurityPolicy] = Self.contentSecurityPolicy
            response.headers[HTTPField.Name("X-Frame-Options")!] = "DENY"
        }
        response.headers[HTTPField.Name("X-Content-Type-Options")!] = "nosniff"
        response.headers[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
        response.headers[.cacheControl] = "no-store"
        return response
    }

    private func checked(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        // A page of another site that a DNS name was pointed at loopback for reaches here with that
        // name: refused, whatever else the request holds.
        guard let host = request.head.authority, access.isAllowed(host: host) else {
            return refusal(.forbidden, "forbiddenHost", "This notification center answers only at its own address, as `unotify serve` printed it.", for: request)
        }
        // Whatever acts (a POST, the WebSocket) must come from the center's own page.
        let isUpgrade = request.headers[.upgrade]?.lowercased() == "websocket"
        if request.method != .get && request.method != .head || isUpgrade {
            guard request.headers[.origin] == "http://\(host.lowercased())" else {
                return refusal(.forbidden, "forbiddenOrigin", "Only the notification center's own page may act here.", for: request)
            }
        }
        // The printed URL: its secret becomes the cookie, and the address bar loses it.
        if request.uri.path == "/", let offered = request.uri.queryParameters.get("secret") {
            guard access.isSecret(offered) else {
                return refusal(.forbidden, "wrongSecret", "This link is from an earlier start: open the URL `unotify serve` printed this time.", for: request)
            }
            var response = Response(status: .seeOther, headers: [.location: "/"])
            response.setCookie(Cookie(name: access.cookieName, value: access.secret, path: "/", httpOnly: true, sameSite: .strict))
            return response
        }
        // A content extension's frame has no origin of its own, so no cookie: its unguessable session,
        // given only to the page, is its credential (checked by its routes). It only reads.
        if request.uri.path.hasPrefix("/frames/"), request.method == .get {
            return try await next(request, context)
        }
        guard access.isSecret(request.cookies[access.cookieName]?.value) else {
            return refusal(.unauthorized, "noSecret", "Open the URL `unotify serve` printed: it holds this start's secret.", for: request)
        }
        return try await next(request, context)
    }

    /// A refusal: a problem document for the page's calls, a short page for a person's browser.
    private func refusal(_ status: HTTPResponse.Status, _ code: String, _ detail: String, for request: Request) -> Response {
        if request.uri.path.hasPrefix("/api/") {
            return ProblemMiddleware<Context>.response(for: LocalAPI.Problem(status: Int(status.code), code: code, title: status.reasonPhrase, detail: detail))
        }
        let page = """
            <!doctype html><html lang="en"><head><meta charset="utf-8"><title>Notification Center</title></head>
            <body><h1>\(status.reasonPhrase)</h1><p>\(detail)</p></body></html>
            """
        return Response(status: status, headers: [.contentType: "text/html; charset=utf-8"], body: ResponseBody(byteBuffer: ByteBuffer(string: page)))
    }
}
