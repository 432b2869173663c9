import Foundation
import HTTPTypes
import NIOCore
import NIOHTTPTypes
import NotificationEngine
import Synchronization
import NotificationCore

/// Answers the local API's busiest call, an app's `POST /v1/requests`, on its connection, without the
/// router: the request's head and body are read here and handed to the same add as the route's
/// (``AppRoutes/add(key:body:)``), and the answer written as the route would write it (`201`, or the
/// same problem document). Every other request goes on to the router unchanged.
///
/// Answers leave in the order their requests came: an add is taken here only when the router owes no
/// answer on the connection, and what arrives while an add waits for the engine is held (at most one
/// read's worth) until its answer is written. A connection asked to close closes after the answer; one
/// asked to quiesce (the server stopping), or whose client has finished sending, does once the add in
/// progress is answered.
///
/// The router's own part of an add was about a sixth of the daemon's CPU at a million pending (its
/// async request and response streams, its request context and logger, its middleware).
final class RequestAddHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// The largest body read, as the router's (Hummingbird's default upload size).
    static let maximumBodySize = 2 * 1024 * 1024

    private enum Add {
        /// Its body is being read; `tooLarge` once it grew past ``maximumBodySize`` (the rest is skipped, and the add refused).
        case reading(key: String?, closes: Bool, body: ByteBuffer, tooLarge: Bool)
        /// Handed to the engine; the answer comes back on the event loop.
        case waiting
    }

    private let engine: DaemonEngine
    private var add: Add?
    /// Requests handed on to the router whose answers have not ended yet.
    private var answersOwed = 0
    /// What arrived while an add waited, replayed once it is answered.
    private var held: [HTTPRequestPart] = []
    private var readHeld = false
    /// The events that end the connection, held while an add is under way and passed on once it is
    /// answered: the server quiescing, and the client's end of input (a client that sends its add
    /// and shuts its side still gets its answer).
    private var eventsHeld: [Any] = []

    init(engine: DaemonEngine) {
        self.engine = engine
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        take(unwrapInboundIn(data), context: context)
    }

    private func take(_ part: HTTPRequestPart, context: ChannelHandlerContext) {
        switch (part, add) {
        case (_, .waiting):
            held.append(part)
        case (.head(let head), _):
            if answersOwed == 0, head.method == .post, head.path == "/v1/requests", head.headerFields[.upgrade] == nil,
               head.headerFields[.expect] == nil {
                add = .reading(
                    key: bearerKey(head.headerFields[.authorization]),
                    closes: head.headerFields[.connection]?.lowercased().contains("close") ?? false,
                    body: context.channel.allocator.buffer(capacity: min(Int(head.headerFields[.contentLength] ?? "") ?? 1024, 64 * 1024)),
                    tooLarge: false
                )
            } else {
                answersOwed += 1
                context.fireChannelRead(wrapInboundOut(part))
            }
        case (.body(var bytes), .reading(let key, let closes, var body, var tooLarge)):
            add = nil  // the buffer is uniquely referenced while it grows
            if !tooLarge, body.readableBytes + bytes.readableBytes <= Self.maximumBodySize {
                body.writeBuffer(&bytes)
            } else {
                tooLarge = true
            }
            add = .reading(key: key, closes: closes, body: body, tooLarge: tooLarge)
        case (.end, .reading(let key, let closes, let body, let tooLarge)):
            add = .waiting
            let engine = self.engine
            let answer = context.eventLoop.makePromise(of: Answer.self)
            answer.completeWithTask { await Self.answer(key: key, body: body, tooLarge: tooLarge, engine: engine) }
            answer.futureResult.assumeIsolated().whenSuccess { [self] in write($0, closes: closes, context: context) }
        case (.body, nil), (.end, nil):
            context.fireChannelRead(wrapInboundOut(part))
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { answersOwed -= 1 }
        context.write(data, promise: promise)
    }

    func read(context: ChannelHandlerContext) {
        // While an add waits, reading goes on until something arrives: what a client sends ahead is
        // held (one read's worth at most), not buffered without end. A client that waits for its
        // answer sends nothing meanwhile, and its socket stays registered for reading (stopping and
        // starting again cost two `epoll_ctl` calls per add).
        if isWaiting, !held.isEmpty { readHeld = true } else { context.read() }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // The end of input is held only while an add waits: one still being read when the input ends is
        // cut short, which the HTTP decoder reports as an error, and the connection closes with a 400.
        let holds = switch event {
        case is ChannelShouldQuiesceEvent: add != nil
        case let event as ChannelEvent: event == .inputClosed && isWaiting
        default: false
        }
        if holds { eventsHeld.append(event) } else { context.fireUserInboundEventTriggered(event) }
    }

    /// An add's answer: its status, and its problem document when refused.
    struct Answer: Sendable {
        var status: HTTPResponse.Status
        var problem: ByteBuffer?
    }

    private static func answer(key: String?, body: ByteBuffer, tooLarge: Bool, engine: DaemonEngine) async -> Answer {
        do {
            try await AppRoutes(engine: engine).add(key: key) {
                guard !tooLarge else { throw bodyTooLarge }
                return body
            }
            return Answer(status: .created)
        } catch let error as DaemonError {
            let problem = ProblemMiddleware<LocalAPIRouter.Context>.problem(for: error)
            return Answer(status: HTTPResponse.Status(code: problem.status), problem: ByteBuffer(bytes: encodeProblem(problem)))
        } catch {
            // What the router answers for an error it does not know.
            return Answer(status: .internalServerError)
        }
    }

    private func write(_ answer: Answer, closes: Bool, context: ChannelHandlerContext) {
        var fields = HTTPFields()
        if answer.problem != nil { fields[.contentType] = "application/problem+json" }
        fields[.contentLength] = String(answer.problem?.readableBytes ?? 0)
        fields[.date] = HTTPDate.now
        fields[.server] = "unotify"
        context.write(wrapOutboundOut(.head(HTTPResponse(status: answer.status, headerFields: fields))), promise: nil)
        if let problem = answer.problem { context.write(wrapOutboundOut(.body(problem)), promise: nil) }
        add = nil
        if closes {
            context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
            return
        }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        // What came meanwhile, in order, until another add waits again; what is handed on is read
        // at the end of a read, which passed while it was held.
        if !held.isEmpty {
            while !isWaiting, !held.isEmpty {
                take(held.removeFirst(), context: context)
            }
            context.fireChannelReadComplete()
        }
        // A quiesce or the input's end waits for every add to be answered, one being read included.
        if add == nil, !eventsHeld.isEmpty {
            let events = eventsHeld
            eventsHeld.removeAll()
            for event in events { context.fireUserInboundEventTriggered(event) }
        }
        if readHeld, !isWaiting || held.isEmpty {
            readHeld = false
            context.read()
        }
    }

    private var isWaiting: Bool {
        if case .waiting = add { true } else { false }
    }
}

/// The `Date` header's value, made once a second.
enum HTTPDate {
    private static let cache = Mutex<(second: Int, value: String)>((-1, ""))

    static var now: String {
        let seconds = Int(Date().timeIntervalSince1970)
        return cache.withLock { cached in
            if cached.second != seconds {
                var time = time_t(seconds)
                var parts = tm()
                gmtime_r(&time, &parts)
                let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
                let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
                func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
                cached = (seconds, "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
                    + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT")
            }
            return cached.value
        }
    }
}
