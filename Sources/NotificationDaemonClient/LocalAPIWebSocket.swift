import EventLoopWebSocket
import NIOCore
import NIOWebSocket
import NotificationCore

/// A WebSocket of the daemon's local API (an app's event stream or a presenter's), over the daemon's
/// Unix domain socket: the shared client's (``ClientWebSocket``), with the app's or the administrator's
/// key, and messages of at most ``LocalAPI/maximumEventSize``. The daemon pings; the client answers.
package enum LocalAPIWebSocket {
    /// The open socket: the text messages received, and a way to send text messages.
    package struct Connection: Sendable {
        /// The text messages received, in order; the stream ends when the socket closes. With a
        /// `receive` handler (``withConnection(socketPath:path:key:receive:_:)``), the messages go to it
        /// instead, and the stream only ends.
        package let messages: AsyncThrowingStream<String, any Error>
        private let socket: ClientWebSocket

        init(messages: AsyncThrowingStream<String, any Error>, socket: ClientWebSocket) {
            self.messages = messages
            self.socket = socket
        }

        /// Sends one text message, and returns once it is written.
        package func send(_ text: String) async throws {
            try await socket.sendAndWait(text)
        }

        /// Sends one text message without waiting for it to be written: messages written this way
        /// leave in the order of the calls. A failed write closes the socket, which ends ``messages``.
        package func write(_ text: String) {
            socket.send(text)
        }
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
        let configuration = ClientWebSocket.Configuration(
            path: path, headers: [(name: "Authorization", value: "Bearer \(key)")], maximumMessageSize: LocalAPI.maximumEventSize
        )
        let socket: ClientWebSocket
        do {
            socket = try await ClientWebSocket.connect(to: .unixSocket(path: socketPath), configuration: configuration) { buffer in
                let text = String(buffer: buffer)
                if let receive { receive(text) } else { continuation.yield(text) }
            }
        } catch where error.code == .refused {
            continuation.finish()
            throw LocalAPIClientError.transport("The daemon refused to open \(path): check the key.")
        } catch {
            continuation.finish()
            throw LocalAPIClientError.transport("The daemon at \(socketPath) could not be reached (\(error)). Is `unotify daemon` running?")
        }
        socket.whenEnded { _ in continuation.finish() }
        socket.start()
        defer { socket.close(code: .normalClosure) }
        return try await body(Connection(messages: messages, socket: socket))
    }
}
