import ConnectionLifecycle
import Foundation
import NIOCore
import NIOHPACK
import NotificationCore

/// The requests of one HTTP/2 provider connection: each stream one `POST /3/device/<token>`,
/// answered as APNs answers it.
///
/// Reads the connection's bytes (after TLS) through its own HTTP/2 layer (``HTTP2ServerConnection``),
/// where each stream's request is a value from its HEADERS to its answer. A `200` is a single
/// HEADERS frame with END_STREAM, an error is HEADERS then one DATA frame with Apple's JSON body, and
/// every answer carries `apns-id`. The answers of a turn of the event loop (a group commit accepts
/// many pushes at once) go out in one write.
final class ProviderConnectionHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// One stream's request as received so far.
    struct Request: HTTP2StreamRequest {
        var headers: HPACKHeaders?
        var body: [UInt8] = []
        /// The body's size as sent; only the first bytes up to the largest allowed payload are kept.
        var bodyBytes = 0
        var isAnswered = false
        /// Whether the request reads the delivery log (its refusals are not pushes refused).
        var readsDeliveryLog = false
        /// Whether the request is the broadcast API's: its answers carry `apns-request-id`, not `apns-id`.
        var isChannelRequest = false
        /// When the request's first frame arrived, while it is incomplete: one not ended within the
        /// idle timeout is answered `400 IdleTimeout` (see ``sweepIdleRequests(context:)``), however
        /// it trickles (a frame now and then does not keep it open).
        var startedAt: NIODeadline?
    }

    /// Sent through the pipeline when the server stops: the connection is sent GOAWAY with
    /// `{"reason":"Shutdown"}` and closes once its last stream ends.
    struct Stopping {}

    /// The connection's authentication and standing; the handler's alone, on its event loop.
    private let connection: ProviderConnection
    private let server: ProviderServer.Shared
    private var http2: HTTP2ServerConnection<Request>
    private var flushIsScheduled = false
    /// Close once what is written now is sent: too many errors, a connection error, or a stop
    /// (or the provider's GOAWAY) with no stream left.
    private var isClosing = false
    /// The server is stopping, or the provider has sent GOAWAY: the connection closes once its last
    /// stream ends.
    private var isStopping = false
    /// Whether the connection's deadlines were told it opened.
    private var toldOpened = false
    private var providerIsGoingAway = false
    /// The provider made too many errors: the connection takes no more requests, answers those it
    /// took (pushes being stored) and closes.
    private var isRefusingForErrors = false
    /// Reading waits while the connection cannot take what is written: a provider that does not
    /// read its answers (or its PING answers) does not get more of them queued here.
    private var readIsWaiting = false
    /// The connection's one timer for requests that stopped sending, set while any is incomplete:
    /// a timer per request cost more than the rest of its bookkeeping.
    private var idleSweep: Scheduled<Void>?

    init(connection: ProviderConnection, server: ProviderServer.Shared, allocator: ByteBufferAllocator) {
        self.connection = connection
        self.server = server
        // APNs' figures; one stream until the connection's first valid token.
        var settings = HTTP2ServerConnection<Request>.Settings()
        settings.maxConcurrentStreams = 1
        http2 = HTTP2ServerConnection(settings: settings, resetsPer30Seconds: server.configuration.cancelledRequestsPer30Seconds, allocator: allocator)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        // The server speaks first (its SETTINGS); over TLS the channel is active by now.
        if context.channel.isActive { writeOutput(context: context, flush: true) }
    }

    func channelActive(context: ChannelHandlerContext) {
        writeOutput(context: context, flush: true)
        context.fireChannelActive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        idleSweep?.cancel()
        idleSweep = nil
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event {
        case is Stopping:
            http2.goAway(code: .noError, debugData: APNs.Rejection(.shutdown).body)
        case is ConnectionIdle:
            // Nothing read for the listener's idle time: closed as a stop closes it, without a reason
            // (APNs gives none for it), once what is under way is answered.
            http2.goAway(code: .noError)
        default:
            return context.fireUserInboundEventTriggered(event)
        }
        isStopping = true
        writeOutput(context: context, flush: true)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        http2.receive(unwrapInboundIn(data))
        // A connection closing takes no more requests: those after the one that closed it go unanswered.
        while !isClosing, let event = http2.nextEvent() {
            if isRefusingForErrors, event.isPartOfARequest { continue }
            switch event {
            case .request(let stream, let headers, let endStream):
                received(stream, headers: headers, isTrailers: false, endStream: endStream, context: context)
            case .oversizedRequest(let stream, let endStream):
                headerListTooLarge(stream, endStream: endStream, context: context)
            case .trailers(let stream, let headers):
                received(stream, headers: headers, isTrailers: true, endStream: true, context: context)
            case .data(let stream, let bytes, let endStream):
                received(stream, body: bytes, endStream: endStream, context: context)
            case .goingAway:
                providerIsGoingAway = true
            case .failed:
                isClosing = true
            }
        }
        if !toldOpened, http2.clientSettingsReceived {
            // HTTP/2 is spoken: its opening's deadline is met; its first use is its first request a
            // token or certificate authenticates (``allowConcurrentStreams(context:)``).
            toldOpened = true
            context.triggerUserOutboundEvent(ConnectionOpened(), promise: nil)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        writeOutput(context: context, flush: true)
        context.fireChannelReadComplete()
    }

    func read(context: ChannelHandlerContext) {
        guard context.channel.isWritable else {
            readIsWaiting = true
            return
        }
        context.read()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable, readIsWaiting {
            readIsWaiting = false
            context.read()
        }
        context.fireChannelWritabilityChanged()
    }

    /// A request's header block, or its trailers.
    private func received(_ stream: UInt32, headers: HPACKHeaders, isTrailers: Bool, endStream: Bool, context: ChannelHandlerContext) {
        guard RequestHeaderBlock.isWellFormed(headers, isTrailers: isTrailers) else {
            // A malformed request: its stream is reset with `PROTOCOL_ERROR` (RFC 9113 §8.1.1).
            http2.reset(stream, code: .protocolError)
            return
        }
        var isComplete = false
        http2.updateRequest(of: stream) { request in
            guard !request.isAnswered else { return }
            // Trailers, if any, carry nothing APNs reads.
            if request.headers == nil { request.headers = headers }
            isComplete = endStream
        }
        progressed(stream, isComplete: isComplete, context: context)
    }

    /// A request whose header list is over the size the connection announces (8,000 bytes, as APNs
    /// announces): answered `431 Request Header Fields Too Large` at once, with an `apns-id` and
    /// without a reason (APNs has none for it), and a body still to come is refused once the answer
    /// is sent (RST_STREAM with NO_ERROR), as after an idle timeout. It counts against the
    /// connection as any refused request does (each such list is decoded whole, up to 64 KiB): a
    /// provider that keeps sending them is closed with GOAWAY, without a reason.
    private func headerListTooLarge(_ stream: UInt32, endStream: Bool, context: ChannelHandlerContext) {
        http2.updateRequest(of: stream) { $0.isAnswered = true }
        answer(status: 431, apnsID: UUID().uuidString.lowercased(), body: nil, stream: stream, context: context, thenReset: !endStream)
        guard connection.noteError(weight: 1, limit: server.configuration.errorLimit, period: server.configuration.errorPeriod, at: .now()) else { return }
        closeForErrors(debugData: "")
    }

    /// Part of a request's body.
    private func received(_ stream: UInt32, body: ByteBuffer, endStream: Bool, context: ChannelHandlerContext) {
        var isComplete = false
        http2.updateRequest(of: stream) { request in
            guard !request.isAnswered else { return }
            var body = body
            request.bodyBytes += body.readableBytes
            let room = APNs.PushType.voip.maximumPayloadBytes + 1 - request.body.count
            if room > 0, let bytes = body.readBytes(length: min(room, body.readableBytes)) { request.body += bytes }
            isComplete = endStream
        }
        progressed(stream, isComplete: isComplete, context: context)
    }

    /// A request has received a frame: it is answered once complete, or watched for idleness.
    private func progressed(_ stream: UInt32, isComplete: Bool, context: ChannelHandlerContext) {
        guard let request = http2.streams[stream]?.request, !request.isAnswered else { return }
        if isComplete {
            http2.updateRequest(of: stream) {
                $0.isAnswered = true
                $0.startedAt = nil
            }
            process(stream, context: context, refreshed: false)
        } else {
            guard request.startedAt == nil else { return }
            let now = NIODeadline.now()
            http2.updateRequest(of: stream) { $0.startedAt = now }
            if idleSweep == nil { scheduleIdleSweep(at: now + server.configuration.requestIdleTimeout, context: context) }
        }
    }

    private func scheduleIdleSweep(at deadline: NIODeadline, context: ChannelHandlerContext) {
        let loopBoundSelf = NIOLoopBound(self, eventLoop: context.eventLoop)
        let loopBoundContext = NIOLoopBound(context, eventLoop: context.eventLoop)
        idleSweep = context.eventLoop.scheduleTask(deadline: deadline) {
            loopBoundSelf.value.sweepIdleRequests(context: loopBoundContext.value)
        }
    }

    /// Answers the incomplete requests begun longer ago than the idle timeout, and waits for the
    /// next of the others to become so.
    private func sweepIdleRequests(context: ChannelHandlerContext) {
        idleSweep = nil
        let timeout = server.configuration.requestIdleTimeout
        let now = NIODeadline.now()
        var next: NIODeadline?
        for (stream, state) in http2.streams {
            guard let startedAt = state.request.startedAt, !state.request.isAnswered else { continue }
            if startedAt + timeout <= now {
                idleTimedOut(stream, context: context)
            } else {
                next = min(next ?? startedAt, startedAt)
            }
        }
        if let next { scheduleIdleSweep(at: next + timeout, context: context) }
    }

    /// The request stopped before its end: it is answered `400 IdleTimeout`, and the provider is
    /// asked to send no more of it (RST_STREAM with NO_ERROR, once the whole answer is written: a
    /// reset sent earlier would discard the part still waiting for the provider's window).
    private func idleTimedOut(_ stream: UInt32, context: ChannelHandlerContext) {
        guard let request = http2.streams[stream]?.request, !request.isAnswered else { return }
        http2.updateRequest(of: stream) {
            $0.isAnswered = true
            $0.startedAt = nil
        }
        refuse(APNs.Rejection(.idleTimeout), apnsID: request.headers?.first(name: "apns-id"), stream: stream, context: context, thenReset: true)
    }

    /// Answers the request; `refreshed` is true once the providers' keys were read again for it.
    private func process(_ stream: UInt32, context: ChannelHandlerContext, refreshed: Bool) {
        guard let request = http2.streams[stream]?.request, let headers = request.headers else { return }
        // Names as HTTP/2 has them, lower-case (the HTTP/2 handler refuses others).
        let fields = headers.map { (name: $0.name, value: $0.value) }
        func field(_ name: String) -> String? { fields.first { $0.name == name }?.value }
        let givenID = field("apns-id").flatMap { APNs.isCanonicalUUID($0) ? $0 : nil }
        let connection = self.connection

        // A request that ends once the server is stopping is not taken, as APNs answers then.
        if server.shutdown.isSet { return refuse(APNs.Rejection(.shutdown), apnsID: givenID, stream: stream, context: context) }

        let method = field(":method") ?? "", path = field(":path") ?? ""
        if method == "GET", path.hasPrefix(DeliveryLogResponse.pathPrefix) {
            http2.updateRequest(of: stream) { $0.readsDeliveryLog = true }
            return readDeliveryLog(String(path.dropFirst(DeliveryLogResponse.pathPrefix.count)), stream: stream, refreshed: refreshed, context: context)
        }

        if APNs.isChannelPath(path) {
            http2.updateRequest(of: stream) { $0.isChannelRequest = true }
            return processChannelRequest(stream, method: method, path: path, fields: fields, refreshed: refreshed, context: context)
        }

        let token: String
        switch APNs.checkTarget(method: method, path: path, headers: fields) {
        case .failure(let rejection): return refuse(rejection, apnsID: givenID, stream: stream, context: context)
        case .success(let value): token = value
        }

        let now = server.clock()
        guard authenticate(stream, now: now, apnsID: givenID, refreshed: refreshed, context: context) else { return }

        let pushHeaders: APNs.PushHeaders
        switch APNs.checkHeaders(deviceToken: token, headers: fields, payloadBytes: request.bodyBytes, newID: { TimeOrderedUUIDs.shared.make() }) {
        case .failure(let rejection): return refuse(rejection, apnsID: givenID, stream: stream, context: context)
        case .success(let value): pushHeaders = value
        }
        if let rejection = APNs.checkPayload(request.body) {
            return refuse(rejection, apnsID: pushHeaders.apnsID, stream: stream, context: context)
        }

        let authorized: ProviderConnectionAuthorization.Authorized
        switch connection.authorization.authorizeTopic(pushHeaders.topic, pushType: pushHeaders.pushType) {
        case .failure(let rejection): return refuse(rejection, apnsID: pushHeaders.apnsID, stream: stream, context: context)
        case .success(let value): authorized = value
        }

        let push = ProviderPush(
            headers: pushHeaders, bundleIdentifier: authorized.bundleIdentifier, teamID: authorized.teamID, keyID: authorized.keyID,
            environment: connection.authorization.environment, payload: request.body, receivedAt: now
        )
        // As APNs, only the development environment tells the provider its push's unique id.
        let uniqueID = connection.authorization.environment == .sandbox ? push.uniqueID : nil
        let delay: TimeAmount?
        switch server.emulation?.fault(push) {
        case nil: delay = nil
        case .refuse(let rejection)?: return refuse(rejection, apnsID: pushHeaders.apnsID, stream: stream, context: context)
        case .delay(let amount)?: delay = amount
        case .goAway(let reason)?: return injectGoAway(APNs.Rejection(reason), before: stream, context: context)
        case .resetStream?:
            http2.reset(stream, code: .internalError)
            return flushSoon(context: context)
        case .closeConnection?:
            isClosing = true
            return context.close(promise: nil)
        }
        let loopBoundSelf = NIOLoopBound(self, eventLoop: context.eventLoop)
        let loopBoundContext = NIOLoopBound(context, eventLoop: context.eventLoop)
        let eventLoop = context.eventLoop
        // The answer needs these alone (not the push, its payload and headers, kept until then).
        let (apnsID, environment, pushType) = (pushHeaders.apnsID, push.environment, pushHeaders.pushType)
        let answerOnLoop: @Sendable (APNs.Rejection?) -> Void = { rejection in
            let handler = loopBoundSelf.value
            let context = loopBoundContext.value
            if let rejection {
                handler.refuse(rejection, apnsID: apnsID, stream: stream, context: context)
            } else {
                handler.server.metrics.accepted(environment, pushType)
                handler.answer(status: 200, apnsID: apnsID, uniqueID: uniqueID, body: nil, stream: stream, context: context)
            }
        }
        server.acceptor.accept(push) { rejection in
            if let delay {
                eventLoop.scheduleTask(in: delay) { answerOnLoop(rejection) }
            } else {
                eventLoop.execute { answerOnLoop(rejection) }
            }
        }
    }

    /// An emulator's GOAWAY for a push (``InjectedFault/goAway(reason:)``): the last stream processed
    /// is the one before it, so that the push and those after it may be sent again elsewhere, and the
    /// connection closes once the streams before it are answered.
    private func injectGoAway(_ rejection: APNs.Rejection, before stream: UInt32, context: ChannelHandlerContext) {
        // Refused first: a client forgets the streams a GOAWAY puts beyond its last, and would not
        // see a reset sent after it.
        http2.refuseUnprocessed(stream)
        for (open, state) in http2.streams where open > stream && !state.request.isAnswered { http2.refuseUnprocessed(open) }
        http2.goAway(lastStream: stream > 2 ? stream - 2 : 0, code: .noError, debugData: rejection.body)
        isStopping = true
        writeOutput(context: context, flush: true)
    }

    /// Checks the request's provider token (or the connection's certificate) and returns whether it
    /// may go on. Otherwise the request is refused, or, for a token of a key not read yet, processed
    /// again once the keys are read again (a key created a moment ago).
    private func authenticate(_ stream: UInt32, now: Date, apnsID: String?, refreshed: Bool, context: ChannelHandlerContext) -> Bool {
        let connection = self.connection
        let authorization = http2.streams[stream]?.request.headers?.first(name: "authorization")
        switch connection.authorization.authenticate(authorization: authorization, now: now, credentials: server.credentials(),
                                                     tokenIssuedAt: server.emulation?.tokenIssuedAt) {
        case .failure(let rejection) where rejection.reason == .invalidProviderToken && !refreshed:
            let loopBoundSelf = NIOLoopBound(self, eventLoop: context.eventLoop)
            let loopBoundContext = NIOLoopBound(context, eventLoop: context.eventLoop)
            let eventLoop = context.eventLoop
            server.refreshCredentials {
                eventLoop.execute { loopBoundSelf.value.process(stream, context: loopBoundContext.value, refreshed: true) }
            }
            return false
        case .failure(let rejection):
            refuse(rejection, apnsID: apnsID, stream: stream, context: context)
            return false
        case .success(let isFirst):
            if isFirst { allowConcurrentStreams(context: context) }
            return true
        }
    }

    /// Raises the connection's stream limit once its first token is accepted.
    private func allowConcurrentStreams(context: ChannelHandlerContext) {
        let connection = self.connection
        guard !connection.isAuthenticated else { return }
        connection.isAuthenticated = true
        context.triggerUserOutboundEvent(ConnectionFirstUsed(), promise: nil)
        var settings = http2.announcedSettings
        settings.maxConcurrentStreams = server.configuration.maximumConcurrentStreams
        http2.announce(settings)
        flushSoon(context: context)
    }

    /// Answers the request with Apple's status and reason; `thenReset` resets its stream once the
    /// answer is sent (see ``HTTP2ServerConnection/answer(_:status:fields:body:thenReset:)``).
    private func refuse(_ rejection: APNs.Rejection, apnsID: String?, stream: UInt32, context: ChannelHandlerContext, thenReset: Bool = false) {
        guard let request = http2.streams[stream]?.request else { return }
        if !request.readsDeliveryLog { server.metrics.rejected(server.configuration.environment, rejection.reason) }
        var body = context.channel.allocator.buffer(capacity: 64)
        body.writeString(rejection.body)
        answer(status: rejection.reason.status, apnsID: apnsID ?? UUID().uuidString.lowercased(), body: body, stream: stream, context: context,
               thenReset: thenReset)
        guard connection.noteRefusal(rejection.reason, limit: server.configuration.errorLimit, period: server.configuration.errorPeriod,
                                     at: .now()) else { return }
        closeForErrors(debugData: rejection.body)
    }

    /// Too many errors: the connection is told why (the last refusal's body) and closed, as APNs
    /// does. The pushes it took are answered first: closing on them would leave the provider not
    /// knowing whether they were accepted (their streams are below GOAWAY's last), and a push sent
    /// again is shown twice. The requests not complete are refused unprocessed (REFUSED_STREAM: the
    /// provider may send them again elsewhere).
    private func closeForErrors(debugData: String) {
        http2.goAway(code: .noError, debugData: debugData)
        for (open, state) in http2.streams where !state.request.isAnswered { http2.refuseUnprocessed(open) }
        isRefusingForErrors = true
    }

    /// What a request of the broadcast API is answered: a status, a channel identifier for a channel
    /// created, a JSON body; or a refusal.
    private enum ChannelAnswer: Sendable {
        case answer(status: Int, channelID: String? = nil, uniqueID: String? = nil, json: [UInt8]? = nil)
        case refusal(APNs.Rejection)
    }

    /// A request of APNs' broadcast API: channels created, read, deleted and listed
    /// (`/1/apps/<bundle>/channels`, `/1/apps/<bundle>/all-channels`), and messages sent to one
    /// (`POST /4/broadcasts/apps/<bundle>`), for the provider's own apps in its connection's environment.
    private func processChannelRequest(_ stream: UInt32, method: String, path: String, fields: [(name: String, value: String)],
                                       refreshed: Bool, context: ChannelHandlerContext) {
        guard let request = http2.streams[stream]?.request else { return }
        let requestID = request.headers?.first(name: "apns-request-id").flatMap { APNs.isCanonicalUUID($0) ? $0 : nil } ?? TimeOrderedUUIDs.shared.make()
        let channelRequest: APNs.ChannelRequest
        switch APNs.checkChannelTarget(method: method, path: path, headers: fields) {
        case .failure(let rejection): return refuse(rejection, apnsID: requestID, stream: stream, context: context)
        case .success(let value): channelRequest = value
        }
        let now = server.clock()
        guard authenticate(stream, now: now, apnsID: requestID, refreshed: refreshed, context: context) else { return }
        guard let channels = server.channels else { return refuse(APNs.Rejection(.featureNotEnabled), apnsID: requestID, stream: stream, context: context) }
        let authorization = connection.authorization
        // Only the provider's own apps: its team's, or its certificate's.
        if case .failure(let rejection) = authorization.authorizeTopic(channelRequest.bundleIdentifier, pushType: .alert) {
            return refuse(rejection, apnsID: requestID, stream: stream, context: context)
        }
        start(channelRequest, of: request, stream: stream, channels: channels, environment: authorization.environment, requestID: requestID, now: now,
              context: context)
    }

    /// Does the broadcast API request's work away from the event loop, then answers on it.
    private func start(_ channelRequest: APNs.ChannelRequest, of request: Request, stream: UInt32, channels: any BroadcastChannels,
                       environment: APNs.Environment, requestID: String, now: Date, context: ChannelHandlerContext) {
        let body = request.body
        let bodyBytes = request.bodyBytes
        let requestHeaders = request.headers ?? HPACKHeaders()
        let loopBoundSelf = NIOLoopBound(self, eventLoop: context.eventLoop)
        let loopBoundContext = NIOLoopBound(context, eventLoop: context.eventLoop)
        let eventLoop = context.eventLoop
        server.tasks.start {
            let outcome = await ProviderConnectionHandler.answerChannelRequest(channelRequest, requestID: requestID, channels: channels,
                                                                               environment: environment, headers: requestHeaders, body: body,
                                                                               bodyBytes: bodyBytes, now: now)
            eventLoop.execute { loopBoundSelf.value.finish(outcome, requestID: requestID, stream: stream, context: loopBoundContext.value) }
        }
    }

    private func finish(_ outcome: ChannelAnswer, requestID: String, stream: UInt32, context: ChannelHandlerContext) {
        switch outcome {
        case .refusal(let rejection):
            refuse(rejection, apnsID: requestID, stream: stream, context: context)
        case .answer(let status, let channelID, let uniqueID, let json):
            answer(status: status, apnsID: requestID, uniqueID: uniqueID, channelID: channelID,
                   body: json.map { context.channel.allocator.buffer(bytes: $0) }, stream: stream, context: context)
        }
    }

    /// The app's channel in this environment; another app's, or the other environment's, is not registered here.
    private static func ownChannel(_ channelID: String, of bundle: String, in environment: APNs.Environment, channels: any BroadcastChannels)
        async throws(GatewayError) -> BroadcastChannel?
    {
        guard let channel = try await channels.channel(channelID), channel.bundleIdentifier == bundle, channel.environment == environment else { return nil }
        return channel
    }

    /// Does what a broadcast API request asks, as APNs answers it.
    private static func answerChannelRequest(
        _ request: APNs.ChannelRequest, requestID: String, channels: any BroadcastChannels, environment: APNs.Environment, headers: HPACKHeaders,
        body: [UInt8], bodyBytes: Int, now: Date
    ) async -> ChannelAnswer {
        let fields = headers.map { (name: $0.name, value: $0.value) }
        do {
            switch request {
            case .create(let bundle):
                guard bodyBytes <= APNs.maximumBroadcastBytes else { return .refusal(APNs.Rejection(.payloadTooLarge)) }
                switch APNs.checkChannelCreation(body: body) {
                case .failure(let rejection):
                    return .refusal(rejection)
                case .success(let settings):
                    do {
                        let channel = try await channels.createChannel(bundleIdentifier: bundle, environment: environment, settings: settings, at: now)
                        return .answer(status: 201, channelID: channel.channelID)
                    } catch {
                        guard error.code == .limitReached else { throw error }
                        return .refusal(APNs.Rejection(.cannotCreateChannelConfig))
                    }
                }
            case .read(let bundle, let channelID):
                guard let channel = try await ownChannel(channelID, of: bundle, in: environment, channels: channels) else { return .refusal(APNs.Rejection(.channelNotRegistered)) }
                let pushType = channel.settings.pushType == .liveactivity ? "LiveActivity" : channel.settings.pushType.rawValue
                return .answer(status: 200, json: Array(#"{"message-storage-policy":\#(channel.settings.storesMostRecent ? 1 : 0),"push-type":"\#(pushType)"}"#.utf8))
            case .delete(let bundle, let channelID):
                guard try await ownChannel(channelID, of: bundle, in: environment, channels: channels) != nil else { return .refusal(APNs.Rejection(.channelNotRegistered)) }
                try await channels.deleteChannel(channelID)
                return .answer(status: 204)
            case .list(let bundle):
                let list = try await channels.channels(of: bundle, environment: environment)
                let json = (try? JSONEncoder().encode(["channels": list])).map(Array.init) ?? Array(#"{"channels":[]}"#.utf8)
                return .answer(status: 200, json: json)
            case .broadcast(let bundle, let channelID):
                guard let channel = try await ownChannel(channelID, of: bundle, in: environment, channels: channels) else { return .refusal(APNs.Rejection(.channelNotRegistered)) }
                // The subscribers' pushes carry the request's identifier, the one its answer gives.
                switch APNs.checkBroadcastHeaders(headers: fields, payloadBytes: bodyBytes, channel: channel.settings, newID: { requestID }) {
                case .failure(let rejection):
                    return .refusal(rejection)
                case .success(let headers):
                    if let rejection = APNs.checkPayload(body) { return .refusal(rejection) }
                    _ = try await channels.broadcast(to: channel, headers: headers, payload: body, at: now)
                    return .answer(status: 200, uniqueID: TimeOrderedUUIDs.shared.make())
                }
            }
        } catch {
            return .refusal(APNs.Rejection(GatewayCore.reason(for: error)))
        }
    }

    /// `GET /1/delivery-log/<id>`: the delivery log of the pushes whose `apns-id` or `apns-unique-id`
    /// is `id`, those the connection's credentials could have sent (`Docs/delivery-log.md`).
    private func readDeliveryLog(_ id: String, stream: UInt32, refreshed: Bool, context: ChannelHandlerContext) {
        let connection = self.connection
        let loopBoundSelf = NIOLoopBound(self, eventLoop: context.eventLoop)
        let loopBoundContext = NIOLoopBound(context, eventLoop: context.eventLoop)
        let eventLoop = context.eventLoop
        guard authenticate(stream, now: server.clock(), apnsID: nil, refreshed: refreshed, context: context) else { return }
        guard let reader = server.deliveryLog, !id.isEmpty, !id.contains("/") else {
            return answer(status: 404, apnsID: UUID().uuidString.lowercased(), body: jsonBody(DeliveryLogResponse.notFound, context: context),
                          stream: stream, context: context)
        }
        let authorization = connection.authorization
        server.tasks.start {
            let records = (try? await reader.deliveryRecords(matching: id)) ?? []
            let readable = records.filter { authorization.mayRead(teamID: $0.teamID, bundleIdentifier: $0.bundleIdentifier, environment: $0.environment) }
            let body = readable.isEmpty ? DeliveryLogResponse.notFound : DeliveryLogResponse.json(id: id, records: readable)
            eventLoop.execute {
                let handler = loopBoundSelf.value
                let context = loopBoundContext.value
                handler.answer(status: readable.isEmpty ? 404 : 200, apnsID: UUID().uuidString.lowercased(),
                               body: handler.jsonBody(body, context: context), stream: stream, context: context)
            }
        }
    }

    private func jsonBody(_ bytes: [UInt8], context: ChannelHandlerContext) -> ByteBuffer {
        context.channel.allocator.buffer(bytes: bytes)
    }

    /// Writes the answer on its stream, unless the provider has reset the stream meanwhile.
    private func answer(status: Int, apnsID: String, uniqueID: String? = nil, channelID: String? = nil, body: ByteBuffer?,
                        stream: UInt32, context: ChannelHandlerContext, thenReset: Bool = false) {
        guard let request = http2.streams[stream]?.request else { return }
        var fields = [(name: request.isChannelRequest ? "apns-request-id" : "apns-id", value: apnsID)]
        if let uniqueID { fields.append((name: "apns-unique-id", value: uniqueID)) }
        if let channelID { fields.append((name: "apns-channel-id", value: channelID)) }
        if body != nil { fields.append((name: "content-type", value: "application/json")) }
        http2.answer(stream, status: status, fields: fields, body: body, thenReset: thenReset)
        flushSoon(context: context)
    }

    /// Writes and flushes once the event loop has run what is queued now: answers that come
    /// together (a group commit accepts many pushes at once) go out in one write.
    private func flushSoon(context: ChannelHandlerContext) {
        guard !flushIsScheduled else { return }
        flushIsScheduled = true
        let loopBoundSelf = NIOLoopBound(self, eventLoop: context.eventLoop)
        let loopBoundContext = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.eventLoop.execute {
            loopBoundSelf.value.flushIsScheduled = false
            loopBoundSelf.value.writeOutput(context: loopBoundContext.value, flush: true)
        }
    }

    /// Writes the frames the HTTP/2 layer has ready, and closes the connection once it is to close
    /// and what it was sent last is written.
    private func writeOutput(context: ChannelHandlerContext, flush: Bool) {
        let stopping = isStopping || providerIsGoingAway || isRefusingForErrors
        let closes = isClosing || http2.isFailed || stopping && http2.openStreams == 0
        guard let output = http2.takeOutput() else {
            if closes, context.channel.isActive { context.close(promise: nil) }
            return
        }
        guard closes else {
            context.write(wrapOutboundOut(output), promise: nil)
            if flush { context.flush() }
            return
        }
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(output)).whenComplete { _ in channel.close(promise: nil) }
    }
}
