#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
package import NIOCore
import NIOPosix
import Synchronization

/// A connection to a message bus (the session bus of a desktop, or a bus a test started): method calls
/// with their replies, signals, and method calls made to us.
///
/// The connection authenticates with `EXTERNAL` (the bus reads our user id from the socket), says
/// `Hello`, and then reads every message on its event loop: replies finish the calls waiting for them,
/// everything else (signals, calls to our objects) comes out of ``incoming`` in order.
package final class DBusConnection: Sendable {
    /// The name the bus gave this connection, such as `:1.42`.
    package let uniqueName: String
    /// Signals and method calls addressed to us, in the order they came; it ends when the connection closes.
    package let incoming: AsyncStream<DBusMessage>

    private let channel: any Channel
    private let core: Core

    private init(uniqueName: String, channel: any Channel, core: Core) {
        self.uniqueName = uniqueName
        self.channel = channel
        self.core = core
        incoming = core.incoming
    }

    /// Connects to the bus at `address`, a D-Bus address string (each of its Unix sockets is tried in turn).
    ///
    /// - Throws: a `DBusError` (`badAddress`, `connectionFailed`) saying why no connection could be made.
    package static func connect(to address: String, on group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) async throws(DBusError) -> DBusConnection {
        var lastError = DBusError(code: .connectionFailed, message: "No bus at \(address).")
        for candidate in try DBusAddress.parse(address) {
            do {
                return try await connect(to: candidate, on: group)
            } catch {
                lastError = error
            }
        }
        throw lastError
    }

    private static func connect(to address: DBusAddress, on group: any EventLoopGroup) async throws(DBusError) -> DBusConnection {
        let descriptor = try openSocket(address)
        let core = Core()
        let authenticated = group.next().makePromise(of: Void.self)
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: group)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(FrameDecoder()))
                        try channel.pipeline.syncOperations.addHandler(InboundHandler(core: core, authenticated: authenticated))
                    }
                }
                .withConnectedSocket(descriptor)
                .get()
        } catch {
            closeSocket(descriptor)
            authenticated.fail(error)
            throw DBusError(code: .connectionFailed, message: "Could not use the bus's socket: \(error).")
        }
        do {
            // A NUL byte first, then the user id in hexadecimal digits of its decimal form.
            let uid = String(getuid()).utf8.map { String($0, radix: 16) }.joined()
            try await channel.writeAndFlush(ByteBuffer(string: "\0AUTH EXTERNAL \(uid)\r\n")).get()
            try await authenticated.futureResult.get()
            try await channel.writeAndFlush(ByteBuffer(string: "BEGIN\r\n")).get()
        } catch {
            try? await channel.close()
            throw error as? DBusError ?? DBusError(code: .connectionFailed, message: "The bus refused us: \(error).")
        }
        let pending = DBusConnection(uniqueName: "", channel: channel, core: core)
        let hello = try await pending.call(.methodCall(destination: busName, path: busPath, interface: busName, member: "Hello"))
        guard let name = hello.body.first?.stringValue else {
            try? await channel.close()
            throw DBusError(code: .invalidMessage, message: "The bus answered Hello without a name.")
        }
        return DBusConnection(uniqueName: name, channel: channel, core: core)
    }

    /// The bus itself.
    package static let busName = "org.freedesktop.DBus"
    package static let busPath = "/org/freedesktop/DBus"

    /// Sends a method call and returns its reply.
    ///
    /// - Throws: a `DBusError`: `remote` with the error's name when the other side answered with one,
    ///   `timedOut` when no answer came within `timeout`, `disconnected` when the connection closed.
    @discardableResult
    package func call(_ message: DBusMessage, timeout: Duration = .seconds(25)) async throws(DBusError) -> DBusMessage {
        var message = message
        message.kind = .methodCall
        message.serial = core.nextSerial()
        let bytes: [UInt8]
        do { bytes = try message.encoded() } catch { throw DBusError(code: .invalidMessage, message: error.description) }
        let serial = message.serial
        let member = message.member ?? "the call"
        let reply: DBusMessage
        do {
            reply = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<DBusMessage, any Error>) in
                guard core.await(serial, continuation) else {
                    continuation.resume(throwing: DBusError(code: .disconnected, message: "The bus connection is closed."))
                    return
                }
                let core = self.core
                channel.writeAndFlush(ByteBuffer(bytes: bytes)).whenFailure { error in
                    core.finish(serial, with: .failure(DBusError(code: .disconnected, message: "Could not send to the bus: \(error).")))
                }
                channel.eventLoop.scheduleTask(in: .nanoseconds(Int64(timeout.components.seconds) * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000)) {
                    core.finish(serial, with: .failure(DBusError(code: .timedOut, message: "No answer to \(member) in time.")))
                }
            }
        } catch {
            throw error as? DBusError ?? DBusError(code: .disconnected, message: "\(error)")
        }
        if reply.kind == .error {
            throw DBusError(code: .remote, name: reply.errorName, message: reply.body.first?.stringValue ?? "")
        }
        return reply
    }

    /// Sends a message that takes no reply: a signal, or the reply to a call made to us.
    package func send(_ message: DBusMessage) async throws(DBusError) {
        var message = message
        message.serial = core.nextSerial()
        let bytes: [UInt8]
        do { bytes = try message.encoded() } catch { throw DBusError(code: .invalidMessage, message: error.description) }
        do {
            try await channel.writeAndFlush(ByteBuffer(bytes: bytes)).get()
        } catch {
            throw DBusError(code: .disconnected, message: "Could not send to the bus: \(error).")
        }
    }

    /// Calls a method of the bus itself (`AddMatch`, `RequestName`, `GetNameOwner`…).
    @discardableResult
    package func callBus(_ member: String, _ body: [DBusValue] = []) async throws(DBusError) -> [DBusValue] {
        try await call(.methodCall(destination: Self.busName, path: Self.busPath, interface: Self.busName, member: member, body: body)).body
    }

    /// The unique name of the connection that owns `name`, or nil when none does.
    package func owner(of name: String) async throws(DBusError) -> String? {
        do {
            return try await callBus("GetNameOwner", [.string(name)]).first?.stringValue
        } catch where error.name == "org.freedesktop.DBus.Error.NameHasNoOwner" {
            return nil
        }
    }

    /// Closes the connection; ``incoming`` ends and calls still waiting fail.
    package func close() async {
        try? await channel.close()
    }

    /// A socket connected to `address`.
    private static func openSocket(_ address: DBusAddress) throws(DBusError) -> CInt {
        #if canImport(Glibc)
        let descriptor = socket(AF_UNIX, CInt(SOCK_STREAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue), 0)
        #else
        let descriptor = socket(AF_UNIX, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw DBusError(code: .connectionFailed, message: "Could not make a socket (errno \(errno)).") }
        var socketAddress = sockaddr_un()
        socketAddress.sun_family = sa_family_t(AF_UNIX)
        let name: [UInt8]
        switch address.socket {
        case .path(let path): name = Array(path.utf8) + [0]
        case .abstract(let abstract): name = [0] + Array(abstract.utf8)
        }
        let capacity = MemoryLayout.size(ofValue: socketAddress.sun_path)
        guard name.count <= capacity else {
            closeSocket(descriptor)
            throw DBusError(code: .badAddress, message: "The bus's socket name is too long.")
        }
        withUnsafeMutableBytes(of: &socketAddress.sun_path) { raw in
            for (index, byte) in name.enumerated() { raw[index] = byte }
        }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + name.count)
        let result = withUnsafePointer(to: &socketAddress) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connectSocket(descriptor, $0, length) }
        }
        guard result == 0 else {
            let code = errno
            closeSocket(descriptor)
            throw DBusError(code: .connectionFailed, message: "Could not connect to the bus at \(address.socket) (errno \(code)).")
        }
        return descriptor
    }
}

// The C functions, out of reach of the connection's own `connect` and `close`.
private func closeSocket(_ descriptor: CInt) {
    _ = close(descriptor)
}

private func connectSocket(_ descriptor: CInt, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> CInt {
    connect(descriptor, address, length)
}

// MARK: - The channel's side

extension DBusConnection {
    /// What the connection's channel and its callers share: the serials, the calls waiting for their
    /// replies, and the stream of everything else.
    fileprivate final class Core: Sendable {
        private struct State {
            var nextSerial: UInt32 = 1
            var waiting: [UInt32: CheckedContinuation<DBusMessage, any Error>] = [:]
            var closed = false
        }

        private let state = Mutex(State())
        let incoming: AsyncStream<DBusMessage>
        private let continuation: AsyncStream<DBusMessage>.Continuation

        init() {
            (incoming, continuation) = AsyncStream.makeStream(of: DBusMessage.self)
        }

        func nextSerial() -> UInt32 {
            state.withLock { state in
                defer { state.nextSerial = state.nextSerial == .max ? 1 : state.nextSerial + 1 }
                return state.nextSerial
            }
        }

        /// Keeps `continuation` until the reply to `serial`; false when the connection is closed.
        func await(_ serial: UInt32, _ continuation: CheckedContinuation<DBusMessage, any Error>) -> Bool {
            state.withLock { state in
                guard !state.closed else { return false }
                state.waiting[serial] = continuation
                return true
            }
        }

        func finish(_ serial: UInt32, with result: Result<DBusMessage, any Error>) {
            state.withLock { $0.waiting.removeValue(forKey: serial) }?.resume(with: result)
        }

        func received(_ message: DBusMessage) {
            switch message.kind {
            case .methodReturn, .error:
                if let serial = message.replySerial { finish(serial, with: .success(message)) }
            case .methodCall, .signal:
                continuation.yield(message)
            }
        }

        func closed() {
            let waiting = state.withLock { state in
                state.closed = true
                defer { state.waiting = [:] }
                return state.waiting
            }
            for continuation in waiting.values {
                continuation.resume(throwing: DBusError(code: .disconnected, message: "The bus connection closed."))
            }
            continuation.finish()
        }
    }

    /// What the decoder reads: one line of the authentication, then messages.
    fileprivate enum Frame {
        case authenticationLine(String)
        case message(DBusMessage)
    }

    /// Splits the stream into the authentication's lines and then whole messages.
    fileprivate struct FrameDecoder: ByteToMessageDecoder {
        typealias InboundOut = Frame
        private var authenticating = true

        mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
            if authenticating {
                guard let newline = buffer.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) else {
                    guard buffer.readableBytes < 16_384 else { throw DBusWireError("authentication line too long") }
                    return .needMoreData
                }
                let length = newline - buffer.readerIndex + 1
                var bytes = buffer.readBytes(length: length)!
                while let last = bytes.last, last == UInt8(ascii: "\n") || last == UInt8(ascii: "\r") { bytes.removeLast() }
                let line = String(decoding: bytes, as: UTF8.self)
                // The server sends nothing after OK until our BEGIN; what follows it are messages.
                if line.hasPrefix("OK") { authenticating = false }
                context.fireChannelRead(wrapInboundOut(.authenticationLine(line)))
                return .continue
            }
            guard let length = try DBusMessage.length(of: buffer.readableBytesView), buffer.readableBytes >= length else {
                return .needMoreData
            }
            let bytes = buffer.readBytes(length: length)!
            context.fireChannelRead(wrapInboundOut(.message(try DBusMessage(decoding: bytes))))
            return .continue
        }
    }

    fileprivate final class InboundHandler: ChannelInboundHandler {
        typealias InboundIn = Frame
        private let core: Core
        private let authenticated: EventLoopPromise<Void>
        private var authenticationEnded = false

        init(core: Core, authenticated: EventLoopPromise<Void>) {
            self.core = core
            self.authenticated = authenticated
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .authenticationLine(let line):
                guard !authenticationEnded else { return }
                authenticationEnded = true
                if line.hasPrefix("OK") {
                    authenticated.succeed()
                } else {
                    authenticated.fail(DBusError(code: .connectionFailed, message: "The bus refused to authenticate us: \(line)"))
                    context.close(promise: nil)
                }
            case .message(let message):
                core.received(message)
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            if !authenticationEnded {
                authenticationEnded = true
                authenticated.fail(DBusError(code: .disconnected, message: "The bus closed the connection."))
            }
            core.closed()
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            // A message that is not valid D-Bus leaves the stream unreadable: the connection ends.
            context.close(promise: nil)
        }
    }
}
