import CNIOBoringSSL
import NIOCore
import NIOTLS

/// The TLS of the device links' listener: BoringSSL's server context, holding the gateway's
/// certificate chain and key, TLS 1.2 at least, no sessions kept or tickets issued (a device
/// resumes its link, not its TLS session).
///
/// The links' listener does not use SwiftNIO SSL's handler: that handler keeps a 32 KiB buffer for
/// what it decrypts, a 16 KiB one for what it encrypts and a queue of 96 writes for the life of the
/// connection, most of what an idle link cost (27 KiB in all, of which 19.5 KiB TLS). A link is idle
/// nearly all its life, so ``LinkTLSHandler`` holds buffers only while it has bytes in them.
package final class LinkTLSContext: @unchecked Sendable {
    // Configured once in init and only read after: BoringSSL's contexts are safe to share then.
    fileprivate let context: OpaquePointer

    /// - Parameter listener: names the listener in errors.
    package init(certificateChainPEM: String, privateKeyPEM: String, listener: String) throws {
        guard let context = SSL_CTX_new(TLS_method()) else {
            throw ProviderServerError("The \(listener)'s TLS context could not be created (\(LinkTLSError.drainErrorQueue())).")
        }
        self.context = context
        guard SSL_CTX_set_min_proto_version(context, UInt16(TLS1_2_VERSION)) == 1 else {
            throw ProviderServerError("The \(listener)'s TLS context refused TLS 1.2 as its lowest version.")
        }
        SSL_CTX_set_session_cache_mode(context, SSL_SESS_CACHE_OFF)
        _ = SSL_CTX_set_num_tickets(context, 0)

        let chain = Self.certificates(in: certificateChainPEM)
        defer { chain.forEach { X509_free($0) } }
        guard let leaf = chain.first else {
            throw ProviderServerError("The \(listener)'s certificate chain holds no PEM certificate.")
        }
        guard SSL_CTX_use_certificate(context, leaf) == 1,
              chain.dropFirst().allSatisfy({ SSL_CTX_add1_chain_cert(context, $0) == 1 }) else {
            throw ProviderServerError("The \(listener)'s certificate chain was refused (\(LinkTLSError.drainErrorQueue())).")
        }
        guard let key = Self.withMemoryBIO(privateKeyPEM, { PEM_read_bio_PrivateKey($0, nil, nil, nil) }) else {
            throw ProviderServerError("The \(listener)'s private key is not readable PEM (\(LinkTLSError.drainErrorQueue())).")
        }
        defer { EVP_PKEY_free(key) }
        guard SSL_CTX_use_PrivateKey(context, key) == 1, SSL_CTX_check_private_key(context) == 1 else {
            throw ProviderServerError("The \(listener)'s private key does not match its certificate (\(LinkTLSError.drainErrorQueue())).")
        }
    }

    deinit {
        SSL_CTX_free(context)
    }

    private static func certificates(in pem: String) -> [OpaquePointer] {
        withMemoryBIO(pem) { bio in
            var chain: [OpaquePointer] = []
            while let certificate = PEM_read_bio_X509(bio, nil, nil, nil) {
                chain.append(certificate)
            }
            ERR_clear_error() // the end of the PEM text is an "error" too
            return chain
        }
    }

    private static func withMemoryBIO<T>(_ text: String, _ body: (OpaquePointer) -> T) -> T {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { raw in
            let bio = BIO_new_mem_buf(raw.baseAddress, raw.count)!
            defer { BIO_free(bio) }
            return body(bio)
        }
    }
}

/// Why a link's TLS failed: BoringSSL's error queue, as text.
struct LinkTLSError: Error, CustomStringConvertible {
    var description: String

    /// The thread's BoringSSL errors as text, leaving the queue empty.
    static func drainErrorQueue() -> String {
        var messages: [String] = []
        while case let code = ERR_get_error(), code != 0 {
            var text = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &text, text.count)
            messages.append(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return messages.isEmpty ? "no detail" : messages.joined(separator: "; ")
    }
}

/// TLS on one device link's connection (server side): ciphertext below, plaintext above.
///
/// BoringSSL reads records from a memory BIO fed with what the connection reads, and writes
/// records into another that the handler empties into the connection after each step. Both BIOs
/// are replaced by empty ones whenever they are drained, and BoringSSL frees its own record
/// buffers when empty, so an idle link holds no buffer at all; the handshake's configuration is
/// shed once the handshake is over. Plaintext is read into a buffer of the size that arrived.
///
/// A close of the connection sends `close_notify` first; a `close_notify` from the device closes
/// it (no half-closed links). Writes made before the handshake completes wait for it; writes
/// pending when the connection closes fail.
final class LinkTLSHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private enum State { case handshaking, open, closed }

    private let ssl: OpaquePointer
    private var state = State.handshaking
    /// Taken from the front as they are encrypted (a ring: taking the first of an array moved all
    /// the others, each time).
    private var pendingWrites = CircularBuffer<(data: ByteBuffer, promise: EventLoopPromise<Void>?)>()
    private var flushRequested = false
    private var encrypting = false
    private var deliveredSinceReadComplete = false

    init(context: LinkTLSContext) throws {
        guard let ssl = SSL_new(context.context) else {
            throw LinkTLSError(description: "SSL_new failed: \(LinkTLSError.drainErrorQueue())")
        }
        self.ssl = ssl
        SSL_set_accept_state(ssl)
        SSL_set_shed_handshake_config(ssl, 1)
        // Both ends take ownership; SSL_free frees them.
        SSL_set0_rbio(ssl, BIO_new(BIO_s_mem()))
        SSL_set0_wbio(ssl, BIO_new(BIO_s_mem()))
    }

    deinit {
        SSL_free(ssl)
    }

    // MARK: Inbound

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard state != .closed else { return }
        let ciphertext = unwrapInboundIn(data)
        let fed = ciphertext.withUnsafeReadableBytes { bytes in
            bytes.isEmpty || BIO_write(SSL_get_rbio(ssl), bytes.baseAddress, Int32(bytes.count)) == Int32(bytes.count)
        }
        guard fed else {
            fail(context: context, LinkTLSError(description: "could not buffer what the device sent"))
            return
        }
        if state == .handshaking {
            guard handshake(context: context) else { return }
        }
        readPlaintext(context: context)
        releaseBufferIfEmpty(SSL_get_rbio(ssl)) { SSL_set0_rbio(self.ssl, $0) }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if deliveredSinceReadComplete {
            deliveredSinceReadComplete = false
            context.fireChannelReadComplete()
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        state = .closed
        failPendingWrites(ChannelError.ioOnClosedChannel)
        context.fireChannelInactive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed {
            // The device closed its side without close_notify: nothing more can be read, so the link is over.
            close(context: context, mode: .all, promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// Steps the handshake; true once it is over and the connection is open.
    private func handshake(context: ChannelHandlerContext) -> Bool {
        ERR_clear_error()
        let result = SSL_do_handshake(ssl)
        if result == 1 {
            state = .open
            // As NIOSSL's handler says it: the connection's deadlines end the handshake's.
            context.fireUserInboundEventTriggered(TLSUserEvent.handshakeCompleted(negotiatedProtocol: nil))
            sendCiphertext(context: context, promise: nil)
            if flushRequested {
                encryptPendingWrites(context: context) // what was written and flushed meanwhile
            } else {
                context.flush()
            }
            return true
        }
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ:
            sendCiphertext(context: context, promise: nil)
            context.flush()
        default:
            // BoringSSL has written its alert, if any: send it, then close.
            fail(context: context, LinkTLSError(description: "handshake failed: \(LinkTLSError.drainErrorQueue())"))
        }
        return false
    }

    /// Decrypts every complete record read so far and passes the plaintext on, in one buffer.
    private func readPlaintext(context: ChannelHandlerContext) {
        var plaintext: ByteBuffer?
        var peerClosed = false
        reading: while state == .open {
            ERR_clear_error()
            let pending = Int(SSL_pending(ssl))
            var buffer = plaintext ?? context.channel.allocator.buffer(capacity: max(pending, 1024))
            plaintext = nil // one reference, so that writing does not copy
            var result: Int32 = 0
            buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: max(pending, 1024)) { space in
                result = SSL_read(ssl, space.baseAddress, Int32(clamping: space.count))
                return max(Int(result), 0)
            }
            plaintext = buffer
            if result > 0 { continue }
            switch SSL_get_error(ssl, result) {
            case SSL_ERROR_WANT_READ:
                break reading
            case SSL_ERROR_ZERO_RETURN:
                peerClosed = true
                break reading
            default:
                deliver(plaintext, context: context)
                fail(context: context, LinkTLSError(description: "reading failed: \(LinkTLSError.drainErrorQueue())"))
                return
            }
        }
        // Reading can answer the device (a key update, an alert): send that too.
        sendCiphertext(context: context, promise: nil)
        context.flush()
        deliver(plaintext, context: context)
        if peerClosed {
            // Through this handler's own close, so that close_notify answers the device's.
            close(context: context, mode: .all, promise: nil)
        }
    }

    private func deliver(_ plaintext: ByteBuffer?, context: ChannelHandlerContext) {
        guard let plaintext, plaintext.readableBytes > 0, state != .closed else { return }
        deliveredSinceReadComplete = true
        context.fireChannelRead(wrapInboundOut(plaintext))
    }

    // MARK: Outbound

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard state != .closed else {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        pendingWrites.append((unwrapOutboundIn(data), promise))
    }

    func flush(context: ChannelHandlerContext) {
        flushRequested = true
        guard state == .open else { return } // the handshake's end flushes what waits
        encryptPendingWrites(context: context)
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        guard mode == .all else {
            context.close(mode: mode, promise: promise)
            return
        }
        if state == .open {
            if flushRequested { encryptPendingWrites(context: context) }
            ERR_clear_error()
            _ = SSL_shutdown(ssl) // queues close_notify; the device's answer is not awaited
            sendCiphertext(context: context, promise: nil)
            context.flush()
        }
        state = .closed
        failPendingWrites(ChannelError.ioOnClosedChannel)
        context.close(mode: .all, promise: promise)
    }

    /// Encrypts the writes waiting, in order, each record's promise that of its write, then flushes.
    /// A write made while this runs (from a promise's callback) joins the same pass.
    private func encryptPendingWrites(context: ChannelHandlerContext) {
        guard !encrypting else { return }
        encrypting = true
        defer { encrypting = false }
        flushRequested = false
        while state == .open, !pendingWrites.isEmpty {
            let (data, promise) = pendingWrites.removeFirst()
            ERR_clear_error()
            let written = data.withUnsafeReadableBytes { bytes in
                bytes.isEmpty || SSL_write(ssl, bytes.baseAddress, Int32(bytes.count)) == Int32(bytes.count)
            }
            guard written else {
                let error = LinkTLSError(description: "writing failed: \(LinkTLSError.drainErrorQueue())")
                promise?.fail(error)
                fail(context: context, error)
                return
            }
            sendCiphertext(context: context, promise: promise)
        }
        pendingWrites = [] // frees the ring's storage
        context.flush()
    }

    /// Writes what BoringSSL has encrypted (without flushing), or completes `promise` when nothing.
    private func sendCiphertext(context: ChannelHandlerContext, promise: EventLoopPromise<Void>?) {
        let bio = SSL_get_wbio(ssl)
        let count = Int(BIO_pending(bio))
        guard count > 0 else {
            promise?.succeed(())
            return
        }
        var ciphertext = context.channel.allocator.buffer(capacity: count)
        ciphertext.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { space in
            Int(max(BIO_read(bio, space.baseAddress, Int32(count)), 0))
        }
        releaseBufferIfEmpty(bio) { SSL_set0_wbio(self.ssl, $0) }
        context.write(wrapOutboundOut(ciphertext), promise: promise)
    }

    // MARK: Failure and buffers

    /// Sends BoringSSL's alert if it wrote one, closes, and tells the handlers after this one.
    private func fail(context: ChannelHandlerContext, _ error: LinkTLSError) {
        guard state != .closed else { return }
        sendCiphertext(context: context, promise: nil)
        context.flush()
        state = .closed
        failPendingWrites(error)
        context.close(promise: nil)
    }

    private func failPendingWrites(_ error: any Error) {
        let writes = pendingWrites
        pendingWrites = []
        for write in writes { write.promise?.fail(error) }
    }

    /// Replaces a drained memory BIO that still holds storage with a new, empty one.
    private func releaseBufferIfEmpty(_ bio: OpaquePointer?, replace: (OpaquePointer?) -> Void) {
        guard let bio, BIO_pending(bio) == 0 else { return }
        var memory: UnsafeMutablePointer<BUF_MEM>?
        guard BIO_get_mem_ptr(bio, &memory) == 1, let memory, memory.pointee.max > 0 else { return }
        replace(BIO_new(BIO_s_mem()))
    }
}
