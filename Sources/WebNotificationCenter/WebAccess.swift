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

    /// The secret a paired browser holds as its cookie.
    let credential: WebCredential
    /// The address the center binds, as configured.
    let boundHost: String
    private let port = Mutex<Int?>(nil)

    init(credential: WebCredential, boundHost: String) {
        self.credential = credential
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

    /// Whether `value` is the secret now.
    func isSecret(_ value: String?) -> Bool {
        credential.accepts(value)
    }

    /// The cookie that pairs a browser: kept across the browser's restarts (for the 400 days browsers
    /// allow at most), sent to this center's own pages only, never readable by a script.
    func pairingCookie(_ secret: String) -> Cookie {
        Cookie(name: cookieName, value: secret, maxAge: 400 * 24 * 3600, path: "/", httpOnly: true, sameSite: .strict)
    }

    /// Returns once `secret`, which a page's live events were opened with, is no longer the credential:
    /// the credential is read again every second (another process may have replaced it).
    func waitUntilReplaced(_ secret: String) async {
        while !Task.isCancelled, isSecret(secret) {
            try? await Task.sleep(for: .seconds(1))
        }
    }

    /// The close code of a page's live events when its browser was signed out (a code of the range
    /// RFC 6455 leaves to applications).
    static let signedOutCloseCode: UInt16 = 4401

    /// Why a browser without the secret is refused, and the way back.
    static let unpaired = "This browser is not paired with the notification center, or its pairing was revoked. "
        + "Open the link `unotify serve` printed, or the one `unotify center link` prints."

    /// Why a link whose secret was replaced is refused, and the way back.
    static let replacedLink = "This link's secret was replaced (every browser paired with it was signed out). "
        + "Open the link `unotify center link` prints."

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
                return refusal(.forbidden, "wrongSecret", WebAccess.replacedLink, for: request)
            }
            var response = Response(status: .seeOther, headers: [.location: "/"])
            response.setCookie(access.pairingCookie(offered))
            return response
        }
        // A content extension's frame has no origin of its own, so no cookie: its unguessable session,
        // given only to the page, is its credential (checked by its routes). It only reads.
        if request.uri.path.hasPrefix("/frames/"), request.method == .get {
            return try await next(request, context)
        }
        guard access.isSecret(request.cookies[access.cookieName]?.value) else {
            return refusal(.unauthorized, "noSecret", WebAccess.unpaired, for: request)
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
