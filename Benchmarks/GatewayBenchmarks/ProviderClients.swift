import ArgumentParser
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL
import Synchronization

/// How the benchmark sends as a provider: `POST`s over HTTP/2 and TLS, each answered with its status
/// and body.
protocol ProviderClient: Sendable {
    func post(port: Int, path: String, headers: [(String, String)], body: ByteBuffer) async throws -> (status: Int, body: String)
    func shutdown() async throws
}

/// A provider's `POST`, to a port of this machine.
struct ProviderRequest: Sendable {
    var port: Int
    var path: String
    var headers: [(String, String)]
    var body: ByteBuffer
}

/// A request answered otherwise than `200`.
struct NotAccepted: Error, CustomStringConvertible {
    var status: Int
    var body: String
    var description: String { "the push was answered \(status) \(body)" }
}

extension ProviderClient {
    /// Sends `request`; throws ``NotAccepted`` unless it is answered `200`.
    func send(_ request: ProviderRequest) async throws {
        let answer = try await post(port: request.port, path: request.path, headers: request.headers, body: request.body)
        guard answer.status == 200 else { throw NotAccepted(status: answer.status, body: answer.body) }
    }
}

/// Which provider client sends: `lean` writes HTTP/2 frames on one connection per port and nothing
/// more, so that the load costs the two cores it shares with the system as little as it can;
/// `async-http-client`, the library, as providers in Swift use it (a child channel and a request's
/// state machines per push).
enum ProviderClientKind: String, CaseIterable, Sendable, ExpressibleByArgument {
    case lean
    case asyncHTTPClient = "async-http-client"

    func make(trusting authority: String) throws -> any ProviderClient {
        let roots = try NIOSSLCertificate.fromPEMFile(authority)
        return switch self {
        case .lean: try LeanProviderClient(trusting: roots)
        case .asyncHTTPClient: LibraryProviderClient(trusting: roots)
        }
    }
}

/// async-http-client, configured as a provider would: HTTP/2 when the server offers it.
struct LibraryProviderClient: ProviderClient {
    let http: HTTPClient

    init(trusting roots: [NIOSSLCertificate]) {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(roots)
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        configuration.httpVersion = .automatic
        http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    func post(port: Int, path: String, headers: [(String, String)], body: ByteBuffer) async throws -> (status: Int, body: String) {
        var request = HTTPClientRequest(url: "https://localhost:\(port)\(path)")
        request.method = .POST
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        request.body = .bytes(body)
        let response = try await http.execute(request, timeout: .seconds(30))
        let text = response.status == .ok ? "" : String(buffer: try await response.body.collect(upTo: 1024))
        return (Int(response.status.code), text)
    }

    func shutdown() async throws {
        try await http.shutdown()
    }
}

/// One HTTP/2 connection per port, opened at the first request to it and again after the server
/// closed it (a GOAWAY, as the gateway sends to a connection with too many errors); each request is
/// a HEADERS and a DATA frame written on the connection's channel, and its answer the frames that
/// come back on its stream.
final class LeanProviderClient: ProviderClient {
    private let context: NIOSSLContext
    private let connections = Mutex<[Int: EventLoopFuture<Channel>]>([:])

    init(trusting roots: [NIOSSLCertificate]) throws {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(roots)
        tls.applicationProtocols = ["h2"]
        context = try NIOSSLContext(configuration: tls)
    }

    func post(port: Int, path: String, headers: [(String, String)], body: ByteBuffer) async throws -> (status: Int, body: String) {
        let request = Self.frames(of: ProviderRequest(port: port, path: path, headers: headers, body: body))
        // A request that a closing connection did not take goes once more, on a new one.
        for attempt in 1...2 {
            let opening = connection(to: port)
            let channel = try await opening.get()
            do {
                return try await withCheckedThrowingContinuation { continuation in
                    channel.eventLoop.execute {
                        guard let handler = try? channel.pipeline.syncOperations.handler(type: FrameResponses.self) else {
                            continuation.resume(throwing: FrameResponses.NotTaken())
                            return
                        }
                        handler.send(request) { continuation.resume(with: $0) }
                    }
                }
            } catch is FrameResponses.NotTaken where attempt == 1 {
                forget(opening, of: port)
            }
        }
        throw FrameResponses.NotTaken()
    }

    fileprivate static func frames(of request: ProviderRequest) -> FrameResponses.Request {
        var all = HPACKHeaders([(":method", "POST"), (":scheme", "https"), (":authority", "localhost:\(request.port)"), (":path", request.path)])
        all.add(contentsOf: request.headers)
        return FrameResponses.Request(headers: all, body: request.body)
    }

    /// Sends `count` requests, one every `1/rate` s from `start` (uptime nanoseconds), each made by
    /// `make` with a new id as it leaves, and times each to its answer; those after the first
    /// `warmUp` are counted. Each leaves at its time whether or not earlier ones were answered.
    ///
    /// All from the event loop of the connection to `port`, where every request goes: a timer of the loop
    /// writes each request (those whose time has come together, when the loop was late) and the
    /// loop times its answer. A task per request, sleeping until its time and woken again by its
    /// answer, woke two threads a push in the process the benchmark shares the two cores with.
    func pace(port: Int, rate: Int, count: Int, warmUp: Int, start: UInt64, _ make: @escaping @Sendable (String) -> ProviderRequest) async throws -> Pacer.Result {
        let results = Pacer.Collected()
        guard count > 0 else { return results.state.withLock { $0 } }
        let channel = try await connection(to: port).get()
        let interval = 1_000_000_000 / UInt64(rate)
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
            channel.eventLoop.execute {
                guard let handler = try? channel.pipeline.syncOperations.handler(type: FrameResponses.self) else {
                    return done.resume(throwing: FrameResponses.NotTaken())
                }
                PacedRequests(loop: channel.eventLoop, handler: handler, port: port, count: count, warmUp: warmUp, start: start, interval: interval,
                              make: make, results: results, done: done).sendDue()
            }
        }
        return results.state.withLock { $0 }
    }

    private func connection(to port: Int) -> EventLoopFuture<Channel> {
        connections.withLock { connections in
            if let open = connections[port] { return open }
            let context = self.context
            // Set once the future exists: the handler only calls it from the channel's event loop,
            // after the connection is up.
            let forget = CloseAction()
            let opening = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(try NIOSSLClientHandler(context: context, serverHostname: "localhost"))
                        try channel.pipeline.syncOperations.addHandler(NIOHTTP2Handler(mode: .client))
                        try channel.pipeline.syncOperations.addHandler(FrameResponses { forget.run() })
                    }
                }
                .connect(host: "127.0.0.1", port: port)
            // A connection the server is closing takes no more requests: the next one opens another.
            forget.set { [weak self] in self?.forget(opening, of: port) }
            opening.whenFailure { [weak self] _ in self?.forget(opening, of: port) }
            connections[port] = opening
            return opening
        }
    }

    private func forget(_ connection: EventLoopFuture<Channel>, of port: Int) {
        connections.withLock { connections in
            if connections[port] === connection { connections.removeValue(forKey: port) }
        }
    }

    func shutdown() async throws {
        let open = connections.withLock { connections in
            defer { connections.removeAll() }
            return Array(connections.values)
        }
        for opening in open { try? await opening.get().close() }
    }
}

/// What a connection does once it stops taking requests, known only after it was started.
private final class CloseAction: Sendable {
    private let action = Mutex<(@Sendable () -> Void)?>(nil)

    func set(_ action: @escaping @Sendable () -> Void) {
        self.action.withLock { $0 = action }
    }

    func run() {
        action.withLock { $0 }?()
    }
}

/// The answers on a client connection's streams, matched to the requests sent on them.
private final class FrameResponses: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    struct Request {
        var headers: HPACKHeaders
        var body: ByteBuffer
    }

    typealias Answer = (Result<(status: Int, body: String), any Error>) -> Void

    private struct Pending {
        var answer: Answer
        var status: Int?
        var body = ""
    }

    struct Refused: Error, CustomStringConvertible {
        var description: String
    }

    /// The connection was closing: the request was not sent.
    struct NotTaken: Error, CustomStringConvertible {
        var description: String { "the connection was closing; the request was not sent" }
    }

    private var context: ChannelHandlerContext?
    private var pending: [HTTP2StreamID: Pending] = [:]
    private var nextStream = 1
    private var closedReason: String? {
        didSet { if oldValue == nil, closedReason != nil { onClose() } }
    }
    /// Called once, when the connection stops taking requests.
    private let onClose: () -> Void

    init(onClose: @escaping () -> Void) {
        self.onClose = onClose
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    /// Writes `request` on a new stream; `answer` is called on the event loop with its answer.
    func send(_ request: Request, answer: @escaping Answer) {
        guard let context, closedReason == nil else {
            answer(.failure(NotTaken()))
            return
        }
        let stream = HTTP2StreamID(nextStream)
        nextStream += 2
        pending[stream] = Pending(answer: answer)
        context.write(wrapOutboundOut(HTTP2Frame(streamID: stream, payload: .headers(.init(headers: request.headers)))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(HTTP2Frame(streamID: stream, payload: .data(.init(data: .byteBuffer(request.body), endStream: true)))),
                              promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.payload {
        case .headers(let headers):
            if let status = headers.headers.first(name: ":status").flatMap(Int.init) { pending[frame.streamID]?.status = status }
            if headers.endStream { finish(frame.streamID) }
        case .data(let data):
            if case .byteBuffer(let bytes) = data.data, bytes.readableBytes > 0 {
                pending[frame.streamID]?.body += String(buffer: bytes)
                // The connection's window back, for the next answers' bodies.
                context.writeAndFlush(wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: bytes.readableBytes))),
                                      promise: nil)
            }
            if data.endStream { finish(frame.streamID) }
        case .rstStream(let code):
            pending.removeValue(forKey: frame.streamID)?.answer(.failure(Refused(description: "stream reset (\(code))")))
        case .goAway(let last, let code, _):
            closedReason = "GOAWAY (\(code))"
            for stream in pending.keys where stream > last {
                pending.removeValue(forKey: stream)?.answer(.failure(Refused(description: "GOAWAY (\(code)) before its answer")))
            }
        default:
            break
        }
    }

    private func finish(_ stream: HTTP2StreamID) {
        guard let done = pending.removeValue(forKey: stream) else { return }
        done.answer(.success((done.status ?? 0, done.body)))
    }

    func channelInactive(context: ChannelHandlerContext) {
        closedReason = closedReason ?? "closed"
        for (_, waiting) in pending { waiting.answer(.failure(Refused(description: "the connection closed before its answer"))) }
        pending.removeAll()
        self.context = nil
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        closedReason = "\(error)"
        for (_, waiting) in pending { waiting.answer(.failure(error)) }
        pending.removeAll()
        context.close(promise: nil)
    }
}

/// ``LeanProviderClient/pace(port:rate:count:warmUp:start:_:)``'s run, on its connection's event loop.
private final class PacedRequests {
    private let loop: any EventLoop
    private let handler: FrameResponses
    private let port: Int
    private let count: Int
    private let warmUp: Int
    private let start: UInt64
    private let interval: UInt64
    private let make: @Sendable (String) -> ProviderRequest
    private let results: Pacer.Collected
    private let done: CheckedContinuation<Void, any Error>
    private var next = 0
    private var answered = 0

    init(loop: any EventLoop, handler: FrameResponses, port: Int, count: Int, warmUp: Int, start: UInt64, interval: UInt64,
         make: @escaping @Sendable (String) -> ProviderRequest, results: Pacer.Collected, done: CheckedContinuation<Void, any Error>) {
        (self.loop, self.handler, self.port, self.count, self.warmUp, self.start, self.interval) = (loop, handler, port, count, warmUp, start, interval)
        (self.make, self.results, self.done) = (make, results, done)
    }

    /// Sends every request whose time has come, then waits on the loop's timer for the next.
    func sendDue() {
        let now = DispatchTime.now().uptimeNanoseconds
        while next < count, start + UInt64(next) * interval <= now {
            send(next)
            next += 1
        }
        guard next < count else { return }
        let due = start + UInt64(next) * interval
        // The run is only touched on its loop, where the timer runs too.
        let run = NIOLoopBound(self, eventLoop: loop)
        loop.scheduleTask(deadline: .uptimeNanoseconds(due)) { run.value.sendDue() }
    }

    private func send(_ index: Int) {
        let id = UUID().uuidString.lowercased()
        let began = DispatchTime.now().uptimeNanoseconds
        let request = make(id)
        precondition(request.port == port, "a paced request goes to the run's port")
        let counted = index >= warmUp
        handler.send(LeanProviderClient.frames(of: request)) { [self] answer in
            let took = DispatchTime.now().uptimeNanoseconds - began
            if counted {
                switch answer {
                case .success(let reply) where reply.status == 200:
                    results.noteAnswered(id: id, took: took)
                case .success(let reply):
                    results.noteFailure(NotAccepted(status: reply.status, body: reply.body), id: id)
                case .failure(let error):
                    results.noteFailure(error, id: id)
                }
            }
            answered += 1
            if answered == count { done.resume() }
        }
    }
}
