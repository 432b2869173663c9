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
    }

    private enum Upgrade {
        case upgraded(any Channel)
        case refused
    }

    /// Opens the WebSocket at `path` and runs `body` with it; closes it when `body` returns.
    ///
    /// - Throws: `LocalAPIClientError.transport` when the daemon cannot be reached or refuses the
    ///   upgrade (a wrong key, for instance).
    package static func withConnection<T: Sendable>(
        socketPath: String,
        path: String,
        key: String,
        _ body: @Sendable (Connection) async throws -> T
    ) async throws -> T {
        // Messages are put in the stream by the socket's event loop as they arrive: the reader
        // (an app's event stream) is woken once per message, with no task between.
        let (messages, continuation) = AsyncThrowingStream<String, any Error>.makeStream()
        let upgrade: EventLoopFuture<Upgrade>
        do {
            upgrade = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connect(unixDomainSocketPath: socketPath) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let upgrader = NIOTypedWebSocketClientUpgrader<Upgrade>(maxFrameSize: 1 << 24) { channel, _ in
                            channel.eventLoop.makeCompletedFuture {
                                try channel.pipeline.syncOperations.addHandler(TextMessages(continuation: continuation))
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

    /// Puts each whole text message of the socket in the stream, on the event loop, answers pings,
    /// and ends the stream when the daemon closes the socket (or it fails).
    private final class TextMessages: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = WebSocketFrame
        typealias OutboundOut = WebSocketFrame

        private let continuation: AsyncThrowingStream<String, any Error>.Continuation
        private var pending = ByteBuffer()

        init(continuation: AsyncThrowingStream<String, any Error>.Continuation) {
            self.continuation = continuation
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let frame = unwrapInboundIn(data)
            switch frame.opcode {
            case .text, .continuation:
                var data = frame.unmaskedData
                pending.writeBuffer(&data)
                if frame.fin {
                    continuation.yield(String(buffer: pending))
                    pending.clear()
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
