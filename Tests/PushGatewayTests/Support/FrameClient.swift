import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL

/// A provider's HTTP/2 connection driven stream by stream and frame by frame, for what higher-level
/// clients hide: a request whose end is sent later, the GOAWAY frame, a connection without ALPN.
final class FrameClient: Sendable {
    let channel: any Channel
    private let multiplexer: NIOHTTP2Handler.StreamMultiplexer
    /// The GOAWAY frames received: their JSON reason.
    let goAways: AsyncStream<String>

    private init(channel: any Channel, multiplexer: NIOHTTP2Handler.StreamMultiplexer, goAways: AsyncStream<String>) {
        self.channel = channel
        self.multiplexer = multiplexer
        self.goAways = goAways
    }

    /// Connects over TLS to `127.0.0.1:port` as `localhost`, trusting `authorityPEM`, offering the
    /// given ALPN protocols (none at all when empty).
    ///
    /// With `checksHeaders` false, the client sends header blocks as given, well-formed or not.
    static func connect(port: Int, authorityPEM: String, alpn: [String] = ["h2"], checksHeaders: Bool = true) async throws -> FrameClient {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates([try NIOSSLCertificate(bytes: Array(authorityPEM.utf8), format: .pem)])
        tls.applicationProtocols = alpn
        let context = try NIOSSLContext(configuration: tls)
        let (goAways, goAway) = AsyncStream.makeStream(of: String.self)
        let (channel, multiplexer) = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(try NIOSSLClientHandler(context: context, serverHostname: "localhost"))
                    var connection = NIOHTTP2Handler.ConnectionConfiguration()
                    connection.headerBlockValidation = checksHeaders ? .enabled : .disabled
                    let multiplexer = try channel.pipeline.syncOperations.configureHTTP2Pipeline(
                        mode: .client, connectionConfiguration: connection, streamConfiguration: .init()
                    ) { stream in stream.eventLoop.makeSucceededVoidFuture() }
                    try channel.pipeline.syncOperations.addHandler(GoAwayCatcher(continuation: goAway))
                    return (channel, multiplexer)
                }
            }
        return FrameClient(channel: channel, multiplexer: multiplexer, goAways: goAways)
    }

    /// Opens a stream and sends a push's headers on it; the request is not over until
    /// ``FrameStream/sendBody(_:)``. What the server answers comes through the stream's `answers`.
    func openStream(path: String, headers: [(String, String)]) async throws -> FrameStream {
        try await openStream(fields: [(":method", "POST"), (":path", path), (":scheme", "https"), (":authority", "localhost")] + headers)
    }

    /// Opens a stream and sends exactly these fields as its header block, without END_STREAM; with
    /// a body, sends it too, ending the request, in the same write.
    func openStream(fields: [(String, String)], body: String? = nil) async throws -> FrameStream {
        let (answers, continuation) = AsyncStream.makeStream(of: HTTP2Frame.FramePayload.self)
        let channel = try await multiplexer.createStreamChannel { stream in
            stream.eventLoop.makeCompletedFuture { try stream.pipeline.syncOperations.addHandler(AnswerCollector(continuation: continuation)) }
        }.get()
        let headers = channel.write(HTTP2Frame.FramePayload.headers(.init(headers: HPACKHeaders(fields), endStream: false)))
        if let body {
            channel.write(HTTP2Frame.FramePayload.data(.init(data: .byteBuffer(ByteBuffer(string: body)), endStream: true)), promise: nil)
        }
        channel.flush()
        try await headers.get()
        return FrameStream(channel: channel, answers: answers)
    }

    /// Sends a whole push on a stream of its own, its headers and body in one write (on a loaded
    /// machine, a body written later may come after the server's idle timeout), and returns the answer.
    func push(path: String, headers: [(String, String)], body: String) async throws -> (status: String?, body: String) {
        let fields = [(":method", "POST"), (":path", path), (":scheme", "https"), (":authority", "localhost")] + headers
        return try await openStream(fields: fields, body: body).answer()
    }

    func close() async {
        try? await channel.close()
    }

    private final class GoAwayCatcher: ChannelInboundHandler, Sendable {
        typealias InboundIn = HTTP2Frame
        let continuation: AsyncStream<String>.Continuation
        init(continuation: AsyncStream<String>.Continuation) { self.continuation = continuation }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            if case .goAway(_, _, let opaqueData) = unwrapInboundIn(data).payload {
                continuation.yield(opaqueData.map { String(buffer: $0) } ?? "")
            }
            context.fireChannelRead(data)
        }

        func channelInactive(context: ChannelHandlerContext) {
            continuation.finish()
            context.fireChannelInactive()
        }
    }

    private final class AnswerCollector: ChannelInboundHandler, Sendable {
        typealias InboundIn = HTTP2Frame.FramePayload
        let continuation: AsyncStream<HTTP2Frame.FramePayload>.Continuation
        init(continuation: AsyncStream<HTTP2Frame.FramePayload>.Continuation) { self.continuation = continuation }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            continuation.yield(unwrapInboundIn(data))
        }

        func channelInactive(context: ChannelHandlerContext) {
            continuation.finish()
            context.fireChannelInactive()
        }
    }
}

/// One stream of a ``FrameClient``.
struct FrameStream: Sendable {
    let channel: any Channel
    let answers: AsyncStream<HTTP2Frame.FramePayload>

    func sendBody(_ body: String) async throws {
        try await channel.writeAndFlush(HTTP2Frame.FramePayload.data(.init(data: .byteBuffer(ByteBuffer(string: body)), endStream: true)))
    }

    /// The answer, or nil when none came within `timeout`.
    func answer(within timeout: Duration) async -> (status: String?, body: String)? {
        await withTaskGroup(of: (status: String?, body: String)?.self) { group in
            group.addTask { await answer() }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    /// Sends trailers, ending the request.
    func sendTrailers(_ fields: [(String, String)]) async throws {
        try await channel.writeAndFlush(HTTP2Frame.FramePayload.headers(.init(headers: HPACKHeaders(fields), endStream: true)))
    }

    /// Sends part of the body, not ending the request.
    func sendPart(_ body: String) async throws {
        try await channel.writeAndFlush(HTTP2Frame.FramePayload.data(.init(data: .byteBuffer(ByteBuffer(string: body)), endStream: false)))
    }

    /// The error code of the RST_STREAM that ended the stream, or nil if it ended otherwise.
    func resetCode() async -> HTTP2ErrorCode? {
        for await frame in answers {
            if case .rstStream(let code) = frame { return code }
        }
        return nil
    }

    /// Reads the answer: its status and body, once the stream ends.
    func answer() async -> (status: String?, body: String) {
        var status: String?
        var body = ""
        for await frame in answers {
            switch frame {
            case .headers(let headers):
                status = status ?? headers.headers.first(name: ":status")
                if headers.endStream { return (status, body) }
            case .data(let data):
                if case .byteBuffer(let buffer) = data.data { body += String(buffer: buffer) }
                if data.endStream { return (status, body) }
            default:
                break
            }
        }
        return (status, body)
    }
}
