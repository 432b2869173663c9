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
        private let outbound: NIOAsyncChannelOutboundWriter<WebSocketFrame>

        init(messages: AsyncThrowingStream<String, any Error>, outbound: NIOAsyncChannelOutboundWriter<WebSocketFrame>) {
            self.messages = messages
            self.outbound = outbound
        }

        /// Sends one text message.
        package func send(_ text: String) async throws {
            try await outbound.write(WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: ByteBuffer(string: text)))
        }
    }

    private enum Upgrade {
        case upgraded(NIOAsyncChannel<WebSocketFrame, WebSocketFrame>)
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
        let upgrade: EventLoopFuture<Upgrade>
        do {
            upgrade = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connect(unixDomainSocketPath: socketPath) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let upgrader = NIOTypedWebSocketClientUpgrader<Upgrade>(maxFrameSize: 1 << 24) { channel, _ in
                            channel.eventLoop.makeCompletedFuture {
                                .upgraded(try NIOAsyncChannel<WebSocketFrame, WebSocketFrame>(wrappingChannelSynchronously: channel))
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
            throw LocalAPIClientError.transport("The daemon at \(socketPath) could not be reached (\(error)). Is `unotify daemon` running?")
        }
        guard case .upgraded(let channel) = try await upgrade.get() else {
            throw LocalAPIClientError.transport("The daemon refused to open \(path): check the key.")
        }
        return try await channel.executeThenClose { inbound, outbound in
            let (messages, continuation) = AsyncThrowingStream<String, any Error>.makeStream()
            return try await withThrowingTaskGroup(of: T?.self) { group in
                group.addTask {
                    var pending = ByteBuffer()
                    do {
                        for try await frame in inbound {
                            switch frame.opcode {
                            case .text, .continuation:
                                var data = frame.unmaskedData
                                pending.writeBuffer(&data)
                                if frame.fin {
                                    continuation.yield(String(buffer: pending))
                                    pending.clear()
                                }
                            case .ping:
                                try await outbound.write(WebSocketFrame(fin: true, opcode: .pong, maskKey: .random(), data: frame.unmaskedData))
                            case .connectionClose:
                                continuation.finish()
                                return nil
                            default:
                                break
                            }
                        }
                        continuation.finish()
                    } catch {
                        continuation.finish(throwing: error)
                    }
                    return nil
                }
                let result = try await body(Connection(messages: messages, outbound: outbound))
                try? await outbound.write(WebSocketFrame(fin: true, opcode: .connectionClose, maskKey: .random(), data: ByteBuffer(bytes: [0x03, 0xE8])))
                group.cancelAll()
                return result
            }
        }
    }
}
