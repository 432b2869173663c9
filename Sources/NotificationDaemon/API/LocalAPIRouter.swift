import Foundation
package import Hummingbird
package import HummingbirdWebSocket
import Logging
import NIOCore
package import NotificationCore
package import NotificationEngine

/// The routes of the local API, version 1 (see `Docs/local-api.openapi.json`).
///
/// Every call is authenticated with `Authorization: Bearer <key>`: an app's key for the app routes,
/// which act on that app alone, and the administrator's key for `/v1/admin/…`, the routes of the person
/// and the developer (what `unotify` uses).
package enum LocalAPIRouter {
    package typealias Context = BasicWebSocketRequestContext

    /// Builds the router over `engine`; `adminKey` authenticates the administrator.
    package static func make(engine: DaemonEngine, adminKey: String, link: DeviceLinkClient? = nil) -> Router<Context> {
        let router = Router(context: Context.self)
        router.middlewares.add(ProblemMiddleware())
        let app = AppRoutes(engine: engine)
        let admin = AdminRoutes(engine: engine, adminKey: adminKey, link: link)

        router.get("/v1/health") { _, _ in jsonResponse(["status": "ok"]) }

        router.post("/v1/authorization") { request, context in
            let bundle = try await app.authenticate(request)
            let body = try await decode(LocalAPI.AuthorizationRequest.self, request, context)
            let granted = try await engine.requestAuthorization(bundle, options: AuthorizationOptions(rawValue: body.options))
            return jsonResponse(LocalAPI.AuthorizationResult(granted: granted))
        }
        router.get("/v1/settings") { request, _ in
            jsonResponse(try await engine.settings(try await app.authenticate(request)))
        }
        router.get("/v1/categories") { request, _ in
            jsonResponse(try await engine.categories(try await app.authenticate(request)))
        }
        router.put("/v1/categories") { request, context in
            let bundle = try await app.authenticate(request)
            let categories = try await decode([NotificationCategory].self, request, context)
            try await engine.setCategories(bundle, categories)
            return Response(status: .noContent)
        }
        // The busiest call is answered by `RequestAddHandler` on the connection; what it hands on (a
        // pipelined add, one with `Expect` or `Upgrade`) comes here, to the same `AppRoutes.add`.
        router.post("/v1/requests") { request, context in
            try await app.add(key: bearerKey(request), body: { try await collectBody(request, context) })
            return Response(status: .created)
        }
        router.get("/v1/requests") { request, _ in
            let pending = try await engine.pendingRequests(try await app.authenticate(request))
            return jsonResponse(pending.map { LocalAPI.PendingRequest(request: $0.request, nextFireDate: $0.nextFireDate) })
        }
        router.delete("/v1/requests") { request, _ in
            let bundle = try await app.authenticate(request)
            try await engine.removePendingRequests(bundle, identifiers(in: request))
            return Response(status: .noContent)
        }
        router.get("/v1/delivered") { request, _ in
            jsonResponse(try await engine.deliveredNotifications(try await app.authenticate(request)))
        }
        router.delete("/v1/delivered") { request, _ in
            let bundle = try await app.authenticate(request)
            try await engine.removeDeliveredNotifications(bundle, identifiers(in: request))
            return Response(status: .noContent)
        }
        // `registerForRemoteNotifications()` and `unregisterForRemoteNotifications()`: the app's
        // token from the gateway the daemon is linked to.
        router.post("/v1/remote-notifications") { request, context in
            let bundle = try await app.authenticate(request)
            let body = try await decode(LocalAPI.RemoteNotificationRegistration.self, request, context)
            guard let link else { throw Self.noGateway }
            let token = try await link.register(bundle, environment: body.environment)
            return jsonResponse(LocalAPI.DeviceToken(bundleIdentifier: bundle, environment: body.environment, token: token))
        }
        router.delete("/v1/remote-notifications") { request, _ in
            let bundle = try await app.authenticate(request)
            guard let link else { throw Self.noGateway }
            try await link.unregister(bundle)
            return Response(status: .noContent)
        }
        // A subscription to a broadcast channel of the app's, at the gateway: what the provider sends to
        // the channel reaches the app from then on.
        for subscribe in [true, false] {
            let handler: @Sendable (Request, LocalAPIRouter.Context) async throws -> Response = { request, context in
                let bundle = try await app.authenticate(request)
                guard let link else { throw Self.noGateway }
                try await link.setSubscribed(subscribe, bundle, environment: try Self.environment(in: request),
                                             channelID: try context.parameters.decoded("channel"))
                return Response(status: .noContent)
            }
            if subscribe { router.put("/v1/remote-notifications/channels/:channel", use: handler) } else { router.delete("/v1/remote-notifications/channels/:channel", use: handler) }
        }
        // The app's own strings, for its pushes' localization keys (its `Localizable.strings`).
        router.put("/v1/strings") { request, context in
            let bundle = try await app.authenticate(request)
            try await engine.setStrings(bundle, try await decode([String: String].self, request, context))
            return Response(status: .noContent)
        }
        // The app's service extension, which prepares its pushes marked `mutable-content`.
        router.put("/v1/service-extension") { request, context in
            let bundle = try await app.authenticate(request)
            let body = try await decode(LocalAPI.ServiceExtension.self, request, context)
            try await engine.setServiceExtension(bundle, ServiceExtensionRegistration(body))
            return Response(status: .noContent)
        }
        router.delete("/v1/service-extension") { request, _ in
            let bundle = try await app.authenticate(request)
            try await engine.setServiceExtension(bundle, nil)
            return Response(status: .noContent)
        }
        router.put("/v1/content-extension") { request, context in
            let bundle = try await app.authenticate(request)
            let body = try await decode(LocalAPI.ContentExtension.self, request, context)
            try await engine.setContentExtension(bundle, body)
            return Response(status: .noContent)
        }
        router.delete("/v1/content-extension") { request, _ in
            let bundle = try await app.authenticate(request)
            try await engine.setContentExtension(bundle, nil)
            return Response(status: .noContent)
        }
        router.put("/v1/badge") { request, context in
            let bundle = try await app.authenticate(request)
            let body = try await decode(LocalAPI.BadgeRequest.self, request, context)
            try await engine.setBadgeCount(bundle, body.count)
            return Response(status: .noContent)
        }
        router.ws("/v1/events") { request, _ in
            _ = try await app.authenticate(request)
            try requireWebSocketUpgrade(request)
            return .upgrade([:])
        } onUpgrade: { inbound, outbound, context in
            try await AppEventStream.run(engine: engine, request: context.request, inbound: inbound, outbound: outbound, logger: context.logger)
        }

        admin.addRoutes(to: router)
        return router
    }

    /// The refusal of a remote-notification call by a daemon that has no gateway.
    static let noGateway = DaemonError(.gatewayNotConfigured, "This daemon has no push gateway: start it with `unotify serve`, or `unotify daemon --gateway …`.")

    /// The `environment` query item of a request (`sandbox` or `production`), sandbox when absent.
    static func environment(in request: Request) throws -> APNs.Environment {
        guard let value = request.uri.queryParameters.get("environment") else { return .sandbox }
        guard let environment = APNs.Environment(rawValue: String(value)) else {
            throw DaemonError(.invalidRequest, "The environment is sandbox or production, not \(value).")
        }
        return environment
    }

    /// The `identifier` query items of a request, or `nil` (meaning all) when there are none.
    static func identifiers(in request: Request) -> [String]? {
        let values = request.uri.queryParameters.getAll("identifier").map { String($0) }
        return values.isEmpty ? nil : values
    }
}

/// Authenticates the app routes.
struct AppRoutes: Sendable {
    let engine: DaemonEngine

    static let missingKey = DaemonError(.unauthorized, "Send the app's key as `Authorization: Bearer <key>`; `unotify apps add` issues it.")

    func authenticate(_ request: Request) async throws -> String {
        try await authenticate(key: bearerKey(request))
    }

    func authenticate(key: String?) async throws -> String {
        guard let key else { throw Self.missingKey }
        return try await engine.authenticate(key: key)
    }

    /// An app's `POST /v1/requests`, wherever it was read: the app authenticated, then its body read
    /// (``bodyTooLarge`` when it is over the limit), decoded and added.
    func add(key: String?, body: () async throws -> ByteBuffer) async throws {
        let bundle = try await authenticate(key: key)
        try await engine.add(bundle, try decodeNotificationRequest(from: try await body()))
    }
}

/// Refuses a plain request to a WebSocket route: only an upgrade opens the stream.
package func requireWebSocketUpgrade(_ request: Request) throws {
    guard request.headers[.upgrade]?.lowercased() == "websocket" else {
        throw DaemonError(.upgradeRequired, "This route is a WebSocket: ask for the upgrade (`Connection: Upgrade`, `Upgrade: websocket`).")
    }
}

/// The key in a request's `Authorization: Bearer` header.
func bearerKey(_ request: Request) -> String? {
    bearerKey(request.headers[.authorization])
}

/// The key in an `Authorization: Bearer` header's value.
func bearerKey(_ value: String?) -> String? {
    guard let value, value.hasPrefix("Bearer ") else { return nil }
    // HTTP's optional white space, spaces and tabs (Foundation's `trimmingCharacters` went through
    // `NSString`: 2 % of the daemon's time under a load of adds).
    var key = value.dropFirst("Bearer ".count)
    while key.first == " " || key.first == "\t" { key.removeFirst() }
    while key.last == " " || key.last == "\t" { key.removeLast() }
    return key.isEmpty ? nil : String(key)
}

/// Decodes a JSON body, turning any decoding failure into an `invalidRequest` problem; a request with
/// no body at all gets `ifEmpty` when given.
package func decode<T: Decodable>(_ type: T.Type, _ request: Request, _ context: some RequestContext, ifEmpty: T? = nil) async throws -> T {
    let body = try await collectBody(request, context)
    if body.readableBytes == 0, let ifEmpty { return ifEmpty }
    return try decode(type, from: body)
}

/// Reads a notification request's JSON body with its one decoder, ``NotificationJSONReader`` (what apps
/// send most, and the local API's busiest call); a fault in it is refused as any body's is.
package func decodeNotificationRequest(_ request: Request, _ context: some RequestContext) async throws -> NotificationRequest {
    try decodeNotificationRequest(from: try await collectBody(request, context))
}

func decodeNotificationRequest(from body: ByteBuffer) throws -> NotificationRequest {
    do {
        return try body.withUnsafeReadableBytes { bytes in try NotificationJSONReader.request(from: bytes) }
    } catch let error as DecodingError {
        throw refusal(of: error, decoding: NotificationRequest.self)
    }
}

func collectBody(_ request: Request, _ context: some RequestContext) async throws -> ByteBuffer {
    do {
        return try await request.body.collect(upTo: context.maxUploadSize)
    } catch is NIOTooManyBytesError {
        throw bodyTooLarge
    } catch let error as HTTPError {
        throw DaemonError(.invalidRequest, error.body ?? "The body could not be read.")
    }
}

private func decode<T: Decodable>(_ type: T.Type, from body: ByteBuffer) throws -> T {
    do {
        return try JSONLimits.decode(T.self, from: body.readableBytesView)
    } catch let error as DecodingError {
        throw refusal(of: error, decoding: T.self)
    }
}

/// What a client is told of a body that did not decode: well-formed, but naming what does not exist
/// here (a time zone, a URL), refused as Apple refuses it; anything else an invalid request, saying
/// where.
private func refusal<T>(of error: DecodingError, decoding type: T.Type) -> DaemonError {
    if let failure = notificationFailure(in: error) { return DaemonError(failure) }
    return DaemonError(.invalidRequest, "The body is not a valid \(T.self): \(describe(error))")
}

/// The notification failure a decoding error was caused by, however deeply the decoders wrapped it.
private func notificationFailure(in error: DecodingError) -> NotificationFailure? {
    guard case .dataCorrupted(let context) = error, let underlying = context.underlyingError else { return nil }
    if let failure = underlying as? NotificationFailure { return failure }
    return (underlying as? DecodingError).flatMap(notificationFailure(in:))
}

private func describe(_ error: DecodingError) -> String {
    switch error {
    case .keyNotFound(let key, let context):
        "missing field \"\((context.codingPath + [key]).map(\.stringValue).joined(separator: "."))\"."
    case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
        "\(context.debugDescription) (at \"\(context.codingPath.map(\.stringValue).joined(separator: "."))\")."
    @unknown default:
        "\(error)"
    }
}

private let jsonEncoder = StreamingJSONEncoder(sortsKeys: true)

/// A `200 OK` JSON response.
package func jsonResponse(_ value: some Encodable, status: HTTPResponse.Status = .ok) -> Response {
    let data = (try? jsonEncoder.encode(value)) ?? Data("null".utf8)
    return Response(
        status: status,
        headers: [.contentType: "application/json"],
        body: ResponseBody(byteBuffer: ByteBuffer(bytes: data))
    )
}

/// A body past the most the local API reads (Hummingbird's upload limit, which the add handler keeps too).
let bodyTooLarge = DaemonError(.bodyTooLarge, "The body is larger than 2 MiB, the most the local API reads.")

/// A problem document's JSON.
func encodeProblem(_ problem: LocalAPI.Problem) -> Data {
    (try? jsonEncoder.encode(problem)) ?? Data()
}

/// Turns every error into an RFC 9457 problem document with a stable code.
package struct ProblemMiddleware<Context: RequestContext>: RouterMiddleware {
    package init() {}

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as DaemonError {
            return Self.response(for: Self.problem(for: error))
        } catch let error as HTTPError {
            let problem = LocalAPI.Problem(
                status: Int(error.status.code), code: error.status == .notFound ? "notFound" : "httpError",
                title: error.status.reasonPhrase, detail: error.body ?? error.status.reasonPhrase
            )
            return Self.response(for: problem)
        }
    }

    package static func response(for problem: LocalAPI.Problem) -> Response {
        let data = encodeProblem(problem)
        return Response(
            status: HTTPResponse.Status(code: problem.status),
            headers: [.contentType: "application/problem+json"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: data))
        )
    }

    static func problem(for error: DaemonError) -> LocalAPI.Problem {
        if let violation = error.violation {
            return LocalAPI.Problem(
                status: 400, code: error.code.description, title: violation.rule,
                detail: violation.message, unErrorCode: error.notificationFailure?.code.rawValue, reason: violation.rule
            )
        }
        if let failure = error.notificationFailure {
            let status = failure.code == .notificationsNotAllowed ? 403 : 422
            return LocalAPI.Problem(
                status: status, code: "notification", title: "\(failure.code)",
                detail: failure.message, unErrorCode: failure.code.rawValue
            )
        }
        if let rejection = error.personRejection {
            let reason: String
            let status: Int
            switch rejection {
            case .notificationNotFound: (reason, status) = ("notificationNotFound", 404)
            case .unknownAction: (reason, status) = ("unknownAction", 422)
            case .textInputRequired: (reason, status) = ("textInputRequired", 422)
            case .textInputNotAccepted: (reason, status) = ("textInputNotAccepted", 422)
            case .deviceLocked: (reason, status) = ("deviceLocked", 409)
            case .appSettingsNotProvided: (reason, status) = ("appSettingsNotProvided", 409)
            }
            return LocalAPI.Problem(status: status, code: "personAction", title: reason, detail: rejection.description, reason: reason)
        }
        let status: Int
        switch error.code {
        case .unauthorized: status = 401
        case .appNotFound: status = 404
        case .appAlreadyRegistered: status = 409
        case .invalidRequest: status = 400
        case .upgradeRequired: status = 426
        case .bodyTooLarge: status = 413
        case .gatewayUnavailable, .appQuarantined: status = 503
        case .gatewayNotConfigured: status = 409
        case .extensionNotExecutable: status = 422
        case .noContentExtension: status = 404
        case .extensionFailed: status = 502
        case .wrongPasscode: status = 403
        case .passcodeAttemptsExceeded: status = 429
        default: status = 500
        }
        return LocalAPI.Problem(status: status, code: error.code.description, title: error.code.description, detail: error.message)
    }
}
