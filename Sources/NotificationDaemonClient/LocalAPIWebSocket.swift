import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket

/// A WebSocket of the daemon's local API (an app's event stream or a presenter's), over the daemon's
/// Unix domain socket.
package enum LocalAPIWebSocket {
    /// The open socket: the text messages received, and a way to send text messages.
    package struct Connection: Sendable {
        /// The text messages received, in order; the stream ends when the socket closes. With a
        /// `receive` handler (``withConnection(socketPath:path:key:receive:_:)``), the messages go to it
        /// instead, and the stream only ends.
        package let messages: AsyncThrowingStream<String, any Error>
        private let channel: any Channel

        init(messages: AsyncThrowingStream<String, any Error>, channel: any Channel) {
            self.messages = messages
            self.channel = channel
        }

        /// Sends one text message.
        package func send(_ text: String) async throws {
            try await channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: ByteBuffer(string: text)))
        }

        /// Sends one text message without waiting for it to be written: messages written this way
        /// leave in the order of the calls. A failed write closes the socket, which ends ``messages``.
        package func write(_ text: String) {
            channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: ByteBuffer(string: text)), promise: nil)
        }
    }

    private enum Upgrade {
        case upgraded(any Channel)
        case refused
    }

    /// Opens the WebSocket at `path` and runs `body` with it; closes it when `body` returns.
    ///
    /// - Parameter receive: when given, called with each text message on the socket's event loop as
    ///   it arrives, in order (it must not block): a reader that hands each message on to a queue of
    ///   its own (an app's delegate queue) does so with no task woken between. Without it, the
    ///   messages are put in ``Connection/messages`` by the event loop.
    /// - Throws: `LocalAPIClientError.transport` when the daemon cannot be reached or refuses the
    ///   upgrade (a wrong key, for instance).
    package static func withConnection<T: Sendable>(
        socketPath: String,
        path: String,
        key: String,
        receive: (@Sendable (String) -> Void)? = nil,
        _ body: @Sendable (Connection) async throws -> T
    ) async throws -> T {
        let (messages, continuation) = AsyncThrowingStream<String, any Error>.makeStream()
        let upgrade: EventLoopFuture<Upgrade>
        do {
            upgrade = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connect(unixDomainSocketPath: socketPath) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let upgrader = NIOTypedWebSocketClientUpgrader<Upgrade>(maxFrameSize: 1 << 24) { channel, _ in
                            channel.eventLoop.makeCompletedFuture {
                                try channel.pipeline.syncOperations.addHandler(TextMessages(continuation: continuation, receive: receive))
                                return .upgraded(channel)
                            }
                        }
                        var headers = HTTPHeaders()
                        headers.add(name: "Host", value: "localhost")
                        headers.add(name: "Authorization", value: "Bearer \(key)")
                        headers.add(name: "Content-Length", value: "0")
                        let configuration = NIOTypedHTTPClientUpgradeConfiguration<Upgrade>(
                            upgradeRequestHead: HTTPRequestHead(version: .http1_1, method: .GET, uri: path, headers: headers),
                            upgraders: [upgrader],
                            notUpgradingCompletionHandler: { channel in channel.eventLoop.makeCompletedFuture { .refused } }
                        )
                        return try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(
                            configuration: .init(upgradeConfiguration: configuration)
                        )
                    }
                }
        } catch {
            continuation.finish()
            throw LocalAPIClientError.transport("The daemon at \(socketPath) could not be reached (\(error)). Is `unotify daemon` running?")
        }
        let channel: any Channel
        switch try await upgrade.get() {
        case .upgraded(let upgraded):
            channel = upgraded
        case .refused:
            continuation.finish()
            throw LocalAPIClientError.transport("The daemon refused to open \(path): check the key.")
        }
        defer { channel.close(promise: nil) }
        let result = try await body(Connection(messages: messages, channel: channel))
        try? await channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .connectionClose, maskKey: .random(), data: ByteBuffer(bytes: [0x03, 0xE8])))
        return result
    }

    /// Puts each whole text message of the socket in the stream (or hands it to `receive`), on the
    /// event loop, answers pings, and ends the stream when the daemon closes the socket (or it fails).
    private final class TextMessages: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = WebSocketFrame
        typealias OutboundOut = WebSocketFrame

        private let continuation: AsyncThrowingStream<String, any Error>.Continuation
        private let receive: (@Sendable (String) -> Void)?
        private var pending = ByteBuffer()

        init(continuation: AsyncThrowingStream<String, any Error>.Continuation, receive: (@Sendable (String) -> Void)?) {
            self.continuation = continuation
            self.receive = receive
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let frame = unwrapInboundIn(data)
            switch frame.opcode {
            case .text, .continuation:
                var data = frame.unmaskedData
                pending.writeBuffer(&data)
                if frame.fin {
                    let message = String(buffer: pending)
                    pending.clear()
                    if let receive { receive(message) } else { continuation.yield(message) }
                }
            case .ping:
                context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, maskKey: .random(), data: frame.unmaskedData)),
                                      promise: nil)
            case .connectionClose:
                continuation.finish()
            default:
                break
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            continuation.finish()
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            continuation.finish(throwing: error)
            context.close(promise: nil)
        }
    }
}
