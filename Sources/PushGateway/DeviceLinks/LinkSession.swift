import NIOCore
package import NIOWebSocket
package import NotificationCore
import Synchronization

/// Where a link's messages go: a device's WebSocket (``WebSocketLinkTransport``), or a device an
/// emulator simulates.
package protocol DeviceLinkTransport: Sendable {
    /// Writes messages to the device, in order; nothing once the link is closed.
    func send(_ messages: [DeviceLink.GatewayMessage])
    /// Tells the device the gateway closes the link, with `code`, and closes it (once).
    func close(code: WebSocketErrorCode, reason: String)
}

/// One device's link, from its start to its close: what it has sent the device, what the device
/// sent that waits to be handled, and whether a send is under way.
package final class LinkSession: Sendable {
    package let deviceID: String
    let transport: any DeviceLinkTransport
    private let state = Mutex(LinkState())

    package init(deviceID: String, transport: any DeviceLinkTransport) {
        self.deviceID = deviceID
        self.transport = transport
    }

    /// Steps the link's state (``LinkState``) under its lock.
    func withState<T>(_ body: (inout LinkState) -> T) -> T { state.withLock { body(&$0) } }

    /// Writes messages to the device, in order; nothing once the link is closed.
    func send(_ messages: [DeviceLink.GatewayMessage]) {
        transport.send(messages)
    }

    /// Closes the link with `code` (once).
    package func close(code: WebSocketErrorCode, reason: String) {
        guard withState({ $0.gatewayCloses() }) else { return }
        transport.close(code: code, reason: reason)
    }
}

/// A device's link over its WebSocket: messages as text frames.
final class WebSocketLinkTransport: DeviceLinkTransport {
    let channel: any Channel

    init(channel: any Channel) {
        self.channel = channel
    }

    func send(_ messages: [DeviceLink.GatewayMessage]) {
        let channel = self.channel
        let encoder = StreamingJSONEncoder()
        let frames = messages.compactMap { message -> WebSocketFrame? in
            // A push, the message of every push, is written straight to its bytes.
            let bytes: [UInt8]? = if case .push(let push) = message { try? DeviceLink.pushMessage(push) } else { try? encoder.encodeBytes(message) }
            guard let bytes else { return nil }
            return WebSocketFrame(fin: true, opcode: .text, data: channel.allocator.buffer(bytes: bytes))
        }
        channel.eventLoop.execute {
            for frame in frames { channel.write(frame, promise: nil) }
            channel.flush()
        }
    }

    /// Sends a close frame with `code` and closes the connection once the device answers, or after a
    /// couple of seconds.
    func close(code: WebSocketErrorCode, reason: String) {
        let channel = self.channel
        var data = channel.allocator.buffer(capacity: 2 + reason.utf8.count)
        data.write(webSocketErrorCode: code)
        data.writeString(reason)
        channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .connectionClose, data: data), promise: nil)
        channel.eventLoop.scheduleTask(in: .seconds(2)) { channel.close(promise: nil) }
    }

    /// The device closed the link: the gateway answers with its own close frame unless it sent one,
    /// then closes the connection.
    func peerClosed(_ data: ByteBuffer, session: LinkSession) {
        var closing = data
        let closeCode = closing.readInteger(as: UInt16.self)
        let closeReason = closing.readString(length: closing.readableBytes) ?? ""
        let answered = session.withState { $0.deviceClosed(code: closeCode, reason: closeReason) }
        guard !answered else {
            channel.close(promise: nil)
            return
        }
        var code = data
        let echoed = code.readInteger(as: UInt16.self).map { ByteBuffer(integer: $0) } ?? ByteBuffer()
        let channel = self.channel
        channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .connectionClose, data: echoed)).whenComplete { _ in channel.close(promise: nil) }
    }
}
