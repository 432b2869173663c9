import NIOCore
import NIOHPACK

/// The server's side of one HTTP/2 connection (RFC 9113) for an API of small requests and small
/// answers, as a value: bytes received go in, requests come out as events, and the frames to send
/// collect in ``output`` for the channel handler to write.
///
/// It does what such a server needs and nothing more: it never pushes, never sends PING or PRIORITY
/// of its own, keeps no HPACK table for what it sends (its first header block sets that table's size
/// to zero), and sends answers whose header block fits one frame. Each stream's request lives in the
/// stream's entry (`Request`), from its HEADERS until the stream closes, so the handler keeps no table
/// of its own. What it checks, and answers as the RFC asks:
///
/// - the client's preface and its first SETTINGS; frame sizes against the settings each side sent;
/// - stream identifiers (new streams odd and increasing), the stream states, header blocks with their
///   CONTINUATION frames, padding, trailers that end their request;
/// - flow control both ways: what the client sends is counted against the windows this side gave,
///   given back once half is used; answers' DATA wait for the client's windows;
/// - SETTINGS (acknowledged, applied once acknowledged for this side's own), PING (answered), GOAWAY,
///   WINDOW_UPDATE, RST_STREAM;
/// - budgets: a client whose streams are reset faster than `resetsPer30Seconds` allows (by its own
///   RST_STREAM, the "rapid reset" attack, or by this side for its errors, "made you reset"), or that
///   sends more than 1,000 SETTINGS in 30 seconds, is sent GOAWAY `ENHANCE_YOUR_CALM`.
///
/// A connection error writes GOAWAY with its code and makes ``nextEvent()`` return ``Event/failed``
/// once, then nothing: the handler writes what is in ``output`` and closes. A stream error resets the
/// stream (RST_STREAM) and forgets it.
struct HTTP2ServerConnection<Request: HTTP2StreamRequest> {
    /// What this side announces in its SETTINGS.
    struct Settings: Equatable {
        var maxConcurrentStreams = 100
        var initialWindowSize = 65_535
        var maxFrameSize = 16_384
        var maxHeaderListSize = 8_000
        var headerTableSize = 4_096
    }

    /// What came of the bytes received.
    enum Event: Equatable {
        /// A new stream's request header block; `endStream` if the request has no body.
        case request(stream: UInt32, headers: HPACKHeaders, endStream: Bool)
        /// The trailers that end a request.
        case trailers(stream: UInt32, headers: HPACKHeaders)
        /// Part of a request's body (without padding); `endStream` on its last part.
        case data(stream: UInt32, bytes: ByteBuffer, endStream: Bool)
        /// A new stream's request whose header list is larger than this side announces
        /// (`SETTINGS_MAX_HEADER_LIST_SIZE`): its stream is open, for an answer `431` (RFC 9113
        /// §10.5.1); the connection goes on. `endStream` if the request has no body.
        case oversizedRequest(stream: UInt32, endStream: Bool)
        /// The client sent GOAWAY: it opens no more streams.
        case goingAway
        /// A connection error: GOAWAY is in ``output``; nothing more is read.
        case failed(HTTP2ErrorCode)

        /// A request's header block, trailers or body.
        var isPartOfARequest: Bool {
            switch self {
            case .request, .oversizedRequest, .trailers, .data: true
            case .goingAway, .failed: false
            }
        }
    }

    /// A stream open on the connection, with its request.
    struct Stream {
        var request = Request()
        /// The client has ended its side (END_STREAM received).
        var remoteEnded = false
        /// This side has ended its answer (END_STREAM written or queued).
        var localEnded = false
        /// What the client may still send on the stream.
        var receiveWindow: Int
        /// What the client has sent since the stream's window was last given back.
        var received = 0
        /// What this side may still send.
        var sendWindow: Int
        /// The answer's body not sent yet, waiting for window.
        var pendingBody: ByteBuffer?
        /// Reset the stream (`NO_ERROR`) once its answer is all sent.
        var resetWhenAnswered = false
        /// The request's `content-length`, if it gave one, and the DATA received so far (padding
        /// not counted): a request whose DATA is not that long is malformed (RFC 9113 §8.1.1).
        var declaredLength: Int?
        var receivedLength = 0
    }

    /// How a stream closed, for what comes on it after (RFC 9113 §5.1): the client's frames on a
    /// stream it reset, or that both sides ended, are a connection error `STREAM_CLOSED`; those on a
    /// stream this side reset may be in flight, and are ignored.
    enum ClosedBy {
        /// The client's RST_STREAM.
        case client
        /// Both sides' END_STREAM.
        case bothEnded
        /// This side's RST_STREAM.
        case server
    }

    static var preface: StaticString { "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" }
    private static var maximumWindow: Int { Int(Int32.max) }
    /// The largest header block (all its fragments) taken in: far above the header list's limit,
    /// and bounded, for a client that sends CONTINUATION frames without end.
    private static var maximumHeaderBlock: Int { 1 << 16 }
    /// The most CONTINUATION frames of one header block: empty ones cost nothing in bytes.
    private static var maximumContinuations: Int { 64 }
    /// The largest header list decoded (each field's name and value, and 32, as RFC 9113 §6.5.2
    /// counts them): a list over the announced limit and within this one is decoded whole, so that
    /// HPACK's table stays the client's, and its request is answered `431`; one beyond (a few bytes
    /// can name large fields of the table again and again) is a connection error,
    /// `COMPRESSION_ERROR`, as HPACK's table is then left half-updated.
    private static var maximumDecodedHeaderList: Int { 1 << 16 }

    /// The frames to send, in order. The handler takes them (``takeOutput()``) to write.
    private(set) var output: ByteBuffer
    private(set) var streams: [UInt32: Stream] = [:]
    /// The highest stream identifier the client has used.
    private(set) var lastClientStream: UInt32 = 0
    /// The client's stream identifiers it skipped (a higher one came first), which that closed
    /// (RFC 9113 §5.1.1): the last ``maximumSkippedRanges`` runs of them. A client's streams come
    /// one after the other; one that skips some does so rarely.
    private var skippedStreams: [ClosedRange<UInt32>] = []
    private static var maximumSkippedRanges: Int { 64 }
    /// How the streams closed last were closed, the most recent ``maximumRecentlyClosed`` of them (a
    /// frame on a stream closed before those is ignored), in the order they closed.
    private var recentlyClosed: [UInt32: ClosedBy] = [:]
    /// The streams in ``recentlyClosed``, a ring (0: no stream yet) written at `nextClosed`.
    private var closedRing = [UInt32](repeating: 0, count: maximumRecentlyClosed)
    private var nextClosed = 0
    private static var maximumRecentlyClosed: Int { 128 }
    private(set) var isFailed = false

    private let allocator: ByteBufferAllocator
    private var inbound = ByteBuffer()
    private var prefaceReceived = false
    /// Whether the client's preface and first SETTINGS have arrived: the connection speaks HTTP/2.
    private(set) var clientSettingsReceived = false
    private var decoder: HPACKDecoder
    private var headerTableSizeSent = false
    private var announcedOnce = false
    /// This side's settings in force (acknowledged by the client), and those sent and not yet acknowledged.
    private var settings: Settings
    private var settingsToAcknowledge: [Settings] = []
    private var largestFrameAnnounced = 16_384
    /// The client's settings that this side obeys.
    private var clientInitialWindowSize = 65_535
    private var clientMaxFrameSize = 16_384
    /// Connection flow control.
    private var connectionReceiveWindow = 65_535
    private var connectionReceived = 0
    private var connectionSendWindow = 65_535
    /// Streams whose answer waits for window.
    private var blocked: Set<UInt32> = []
    /// The stream whose header block is being continued, and whether that block ends its stream.
    private var continuing: (stream: UInt32, endStream: Bool, block: ByteBuffer, frames: Int, dependsOnItself: Bool)?
    /// The streams the client has had reset, by its RST_STREAM or by this side for an error of the
    /// client's (a reset frees a stream's place while the work it began may go on), and its SETTINGS
    /// frames (each touches every open stream): each allowed so many per 30 seconds.
    private var resets: FrameBudget
    private var settingsFrames = FrameBudget(per30Seconds: 1_000)
    /// What the connection's time is read from (the budgets).
    var clock: () -> NIODeadline
    /// The last stream identifier this side's GOAWAY said it would process, once sent.
    private(set) var goAwayLastStream: UInt32?

    /// - Parameters:
    ///   - settings: this side's settings, in ``output`` at once (the server speaks first).
    ///   - resetsPer30Seconds: the client's streams reset (by it, or for its errors) allowed in 30 seconds.
    ///   - clock: the time, for those budgets.
    init(settings: Settings, resetsPer30Seconds: Int, allocator: ByteBufferAllocator, clock: @escaping () -> NIODeadline = { .now() }) {
        self.allocator = allocator
        self.output = allocator.buffer(capacity: 1024)
        // Until the client acknowledges this side's settings, HTTP/2's initial values are in force,
        // but for the streams: HTTP/2 sets no limit, and a client that never acknowledges would have
        // none; 100 is the least the RFC advises a server to allow (RFC 9113 §6.5.2).
        self.settings = Settings(maxConcurrentStreams: 100, initialWindowSize: 65_535, maxFrameSize: 16_384,
                                 maxHeaderListSize: settings.maxHeaderListSize, headerTableSize: 4_096)
        self.decoder = HPACKDecoder(allocator: allocator, maxDynamicTableSize: settings.headerTableSize,
                                    maxHeaderListSize: max(settings.maxHeaderListSize, Self.maximumDecodedHeaderList))
        self.clock = clock
        self.resets = FrameBudget(per30Seconds: resetsPer30Seconds)
        announce(settings)
        // The connection's window: a megabyte, not HTTP/2's 64 KiB, so that many streams' bodies are
        // not held to 64 KiB a round trip.
        writeWindowUpdate(stream: 0, increment: Self.connectionWindow - 65_535)
        connectionReceiveWindow = Self.connectionWindow
    }

    /// The window kept open for the whole connection.
    private static var connectionWindow: Int { 1 << 20 }

    /// The streams open now.
    var openStreams: Int { streams.count }

    /// The frames written since the last call, if any.
    mutating func takeOutput() -> ByteBuffer? {
        guard output.readableBytes > 0 else { return nil }
        defer { output = allocator.buffer(capacity: 1024) }
        return output
    }

    // MARK: - Receiving

    /// Takes bytes received; ``nextEvent()`` reads them.
    mutating func receive(_ bytes: ByteBuffer) {
        guard !isFailed else { return }
        if inbound.readableBytes == 0 {
            inbound = bytes
        } else {
            var bytes = bytes
            inbound.writeBuffer(&bytes)
        }
    }

    /// The next event of the bytes received, or nil once more are needed. Frames that only ask for
    /// an answer of the protocol's own (SETTINGS, PING, WINDOW_UPDATE) are handled here.
    mutating func nextEvent() -> Event? {
        while !isFailed {
            if !prefaceReceived {
                let preface = Self.preface
                guard inbound.readableBytes >= preface.utf8CodeUnitCount else { return nil }
                let matches = preface.withUTF8Buffer { expected in inbound.readableBytesView.prefix(expected.count).elementsEqual(expected) }
                guard matches else { return fail(.protocolError) }
                inbound.moveReaderIndex(forwardBy: preface.utf8CodeUnitCount)
                prefaceReceived = true
            }
            guard inbound.readableBytes >= 9, let lengthAndType = inbound.getInteger(at: inbound.readerIndex, as: UInt32.self),
                  let flags = inbound.getInteger(at: inbound.readerIndex + 4, as: UInt8.self),
                  let streamWord = inbound.getInteger(at: inbound.readerIndex + 5, as: UInt32.self)
            else {
                compactInbound()
                return nil
            }
            let length = Int(lengthAndType >> 8)
            let type = UInt8(truncatingIfNeeded: lengthAndType)
            let stream = streamWord & 0x7FFF_FFFF
            // The largest size announced, acknowledged or not: the client may use it once it has read it.
            guard length <= max(settings.maxFrameSize, largestFrameAnnounced) else { return fail(.frameSizeError) }
            guard inbound.readableBytes >= 9 + length else {
                compactInbound()
                return nil
            }
            inbound.moveReaderIndex(forwardBy: 9)
            var payload = inbound.readSlice(length: length)!
            if !clientSettingsReceived {
                guard type == FrameType.settings, flags & Flag.ack == 0 else { return fail(.protocolError) }
                clientSettingsReceived = true
            }
            if continuing != nil, type != FrameType.continuation { return fail(.protocolError) }
            let event: Event?
            switch type {
            case FrameType.data: event = receiveData(stream: stream, flags: flags, payload: &payload)
            case FrameType.headers: event = receiveHeaders(stream: stream, flags: flags, payload: &payload)
            case FrameType.priority: event = receivePriority(stream: stream, payload: payload)
            case FrameType.rstStream: event = receiveReset(stream: stream, payload: &payload)
            case FrameType.settings: event = receiveSettings(stream: stream, flags: flags, payload: &payload)
            case FrameType.pushPromise: event = fail(.protocolError)
            case FrameType.ping: event = receivePing(stream: stream, flags: flags, payload: payload)
            case FrameType.goAway: event = receiveGoAway(stream: stream, payload: payload)
            case FrameType.windowUpdate: event = receiveWindowUpdate(stream: stream, payload: &payload)
            case FrameType.continuation: event = receiveContinuation(stream: stream, flags: flags, payload: &payload)
            default: event = nil // Unknown frame types are ignored (RFC 9113 §5.5).
            }
            if let event { return event }
        }
        return nil
    }

    /// Moves a partial frame to the front of its buffer, so the buffer does not grow with the connection.
    private mutating func compactInbound() {
        if inbound.readableBytes == 0 {
            inbound = ByteBuffer()
        } else if inbound.readerIndex > 0, inbound.readerIndex >= inbound.readableBytes {
            inbound.discardReadBytes()
        }
    }

    private mutating func receiveData(stream: UInt32, flags: UInt8, payload: inout ByteBuffer) -> Event? {
        guard stream != 0 else { return fail(.protocolError) }
        // Padding included: all of the frame counts against the windows.
        let counted = payload.readableBytes
        connectionReceiveWindow -= counted
        guard connectionReceiveWindow >= 0 else { return fail(.flowControlError) }
        connectionReceived += counted
        // The connection's window is given back once half is used.
        if connectionReceived >= Self.connectionWindow / 2 {
            writeWindowUpdate(stream: 0, increment: connectionReceived)
            connectionReceiveWindow += connectionReceived
            connectionReceived = 0
        }
        guard stream <= lastClientStream else { return fail(.protocolError) } // an idle stream
        guard stripPadding(flags: flags, payload: &payload) else { return fail(.protocolError) }
        guard var state = streams[stream] else { return frameOnClosedStream(stream) }
        guard !state.remoteEnded else { return resetStream(stream, .streamClosed) }
        state.receiveWindow -= counted
        guard state.receiveWindow >= 0 else { return resetStream(stream, .flowControlError) }
        let endStream = flags & Flag.endStream != 0
        // More than the request said it would send, or less by its end: malformed (RFC 9113 §8.1.1).
        state.receivedLength += payload.readableBytes
        if let declared = state.declaredLength, state.receivedLength > declared || (endStream && state.receivedLength != declared) {
            return resetStream(stream, .protocolError)
        }
        if endStream {
            state.remoteEnded = true
        } else {
            state.received += counted
            if state.received >= settings.initialWindowSize / 2 {
                writeWindowUpdate(stream: stream, increment: state.received)
                state.receiveWindow += state.received
                state.received = 0
            }
        }
        settle(state, of: stream)
        return .data(stream: stream, bytes: payload, endStream: endStream)
    }

    private mutating func receiveHeaders(stream: UInt32, flags: UInt8, payload: inout ByteBuffer) -> Event? {
        guard stream != 0, stream & 1 == 1 else { return fail(.protocolError) }
        guard stripPadding(flags: flags, payload: &payload) else { return fail(.protocolError) }
        var dependsOnItself = false
        if flags & Flag.priority != 0 {
            guard let dependency = payload.readInteger(as: UInt32.self), payload.readInteger(as: UInt8.self) != nil else {
                return fail(.frameSizeError)
            }
            // A stream depending on itself (RFC 9113 §5.3.1): reset once its header block is read.
            dependsOnItself = dependency & 0x7FFF_FFFF == stream
        }
        let endStream = flags & Flag.endStream != 0
        guard flags & Flag.endHeaders != 0 else {
            guard payload.readableBytes <= Self.maximumHeaderBlock else { return fail(.enhanceYourCalm) }
            var block = allocator.buffer(capacity: payload.readableBytes * 2)
            block.writeBuffer(&payload)
            continuing = (stream, endStream, block, 0, dependsOnItself)
            return nil
        }
        return receiveHeaderBlock(stream: stream, endStream: endStream, block: payload, dependsOnItself: dependsOnItself)
    }

    private mutating func receiveContinuation(stream: UInt32, flags: UInt8, payload: inout ByteBuffer) -> Event? {
        guard var continued = continuing, continued.stream == stream else { return fail(.protocolError) }
        continued.frames += 1
        guard continued.block.readableBytes + payload.readableBytes <= Self.maximumHeaderBlock, continued.frames <= Self.maximumContinuations else {
            return fail(.enhanceYourCalm)
        }
        continuing = nil
        continued.block.writeBuffer(&payload)
        guard flags & Flag.endHeaders != 0 else {
            continuing = continued
            return nil
        }
        return receiveHeaderBlock(stream: stream, endStream: continued.endStream, block: continued.block, dependsOnItself: continued.dependsOnItself)
    }

    /// A whole header block: a new stream's request, or a request's trailers.
    private mutating func receiveHeaderBlock(stream: UInt32, endStream: Bool, block: ByteBuffer, dependsOnItself: Bool) -> Event? {
        // Every block is decoded, whatever becomes of its stream: HPACK's table depends on it.
        guard let headers = decode(block) else { return fail(.compressionError) }
        if stream > lastClientStream {
            // The next identifier after the last (1 first): any below this one that it passed over are closed.
            let expected = lastClientStream == 0 ? 1 : lastClientStream + 2
            if stream > expected {
                if skippedStreams.count == Self.maximumSkippedRanges { skippedStreams.removeFirst() }
                skippedStreams.append(expected...(stream - 2))
            }
            lastClientStream = stream
            // After this side's GOAWAY, new streams are not processed (the client knows to send them again).
            if let goAwayLastStream, stream > goAwayLastStream { return nil }
            if dependsOnItself { return resetStream(stream, .protocolError) }
            guard streams.count < settings.maxConcurrentStreams else { return resetStream(stream, .refusedStream) }
            var state = Stream(remoteEnded: endStream, receiveWindow: settings.initialWindowSize, sendWindow: clientInitialWindowSize)
            switch Self.declaredLength(in: headers) {
            case .malformed: return resetStream(stream, .protocolError)
            case .length(let length):
                // A request that ends with its headers sends no DATA.
                if endStream, length != 0 { return resetStream(stream, .protocolError) }
                state.declaredLength = length
            case .none: break
            }
            streams[stream] = state
            guard Self.listSize(of: headers) <= settings.maxHeaderListSize else { return .oversizedRequest(stream: stream, endStream: endStream) }
            return .request(stream: stream, headers: headers, endStream: endStream)
        }
        guard var state = streams[stream] else {
            // A stream never opened, closed by a higher one: "an unexpected stream identifier"
            // (RFC 9113 §5.1.1).
            return skippedStreams.contains(where: { $0.contains(stream) }) ? fail(.protocolError) : frameOnClosedStream(stream)
        }
        guard !state.remoteEnded else { return resetStream(stream, .streamClosed) }
        // Trailers end their stream (RFC 9113 §8.1), and with it a body that must be as long as declared (§8.1.1).
        guard endStream else { return resetStream(stream, .protocolError) }
        if let declared = state.declaredLength, state.receivedLength != declared { return resetStream(stream, .protocolError) }
        state.remoteEnded = true
        settle(state, of: stream)
        return .trailers(stream: stream, headers: headers)
    }

    /// What a request's `content-length` says: nothing, a length, or something no length (not
    /// digits, or two different values).
    private enum DeclaredLength {
        case none
        case length(Int)
        case malformed
    }

    private static func declaredLength(in headers: HPACKHeaders) -> DeclaredLength {
        var declared = DeclaredLength.none
        for (name, value, _) in headers where name == "content-length" {
            guard !value.isEmpty, value.utf8.count <= 18, value.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
                  let length = Int(value) else { return .malformed }
            if case .length(let earlier) = declared, earlier != length { return .malformed }
            declared = .length(length)
        }
        return declared
    }

    /// A DATA or HEADERS frame on a stream that is not open: a connection error `STREAM_CLOSED` if
    /// the client reset it or both sides ended it (RFC 9113 §5.1), ignored if this side reset it (the
    /// client may have sent it before it knew) or it closed too long ago to tell.
    private mutating func frameOnClosedStream(_ stream: UInt32) -> Event? {
        switch recentlyClosed[stream] {
        case .client?, .bothEnded?: fail(.streamClosed)
        case .server?, nil: nil
        }
    }

    /// A header list's size as RFC 9113 §6.5.2 counts it: each field's name and value, and 32.
    private static func listSize(of headers: HPACKHeaders) -> Int {
        headers.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 32 }
    }

    private mutating func decode(_ block: ByteBuffer) -> HPACKHeaders? {
        var block = block
        guard let headers = try? decoder.decodeHeaders(from: &block), block.readableBytes == 0 else { return nil }
        return headers
    }

    private mutating func receivePriority(stream: UInt32, payload: ByteBuffer) -> Event? {
        guard stream != 0 else { return fail(.protocolError) }
        guard payload.readableBytes == 5, let dependency = payload.getInteger(at: payload.readerIndex, as: UInt32.self) else {
            // A stream error, but a reset on a stream not opened yet would be one of this side's.
            guard stream <= lastClientStream else { return fail(.frameSizeError) }
            return streams[stream] == nil ? nil : resetStream(stream, .frameSizeError)
        }
        // A stream depending on itself (RFC 7540 §5.3.1): a stream error, or a connection error for a
        // stream not opened yet, which this side cannot reset.
        guard dependency & 0x7FFF_FFFF == stream else { return nil }
        guard stream <= lastClientStream else { return fail(.protocolError) }
        return streams[stream] == nil ? nil : resetStream(stream, .protocolError)
    }

    private mutating func receiveReset(stream: UInt32, payload: inout ByteBuffer) -> Event? {
        guard stream != 0 else { return fail(.protocolError) }
        guard payload.readableBytes == 4 else { return fail(.frameSizeError) }
        guard stream <= lastClientStream else { return fail(.protocolError) }
        guard resets.spend(at: clock()) else { return fail(.enhanceYourCalm) }
        if streams[stream] != nil { forget(stream, closedBy: .client) }
        return nil
    }

    private mutating func receiveSettings(stream: UInt32, flags: UInt8, payload: inout ByteBuffer) -> Event? {
        guard stream == 0 else { return fail(.protocolError) }
        if flags & Flag.ack != 0 {
            guard payload.readableBytes == 0 else { return fail(.frameSizeError) }
            guard !settingsToAcknowledge.isEmpty else { return fail(.protocolError) }
            let acknowledged = settingsToAcknowledge.removeFirst()
            // Streams opened from now on get the new window; open ones keep theirs (the client
            // counts the change on them: the difference is theirs too).
            let change = acknowledged.initialWindowSize - settings.initialWindowSize
            if change != 0 { for id in streams.keys { streams[id]?.receiveWindow += change } }
            settings = acknowledged
            return nil
        }
        guard payload.readableBytes % 6 == 0 else { return fail(.frameSizeError) }
        guard settingsFrames.spend(at: clock()) else { return fail(.enhanceYourCalm) }
        var windowGrew = false
        while let identifier = payload.readInteger(as: UInt16.self), let value = payload.readInteger(as: UInt32.self) {
            switch identifier {
            case 0x1: break // The client's HPACK table for this side's blocks: this side uses none.
            case 0x2: guard value <= 1 else { return fail(.protocolError) }
            case 0x4:
                guard value <= UInt32(Self.maximumWindow) else { return fail(.flowControlError) }
                let change = Int(value) - clientInitialWindowSize
                clientInitialWindowSize = Int(value)
                for id in streams.keys {
                    streams[id]!.sendWindow += change
                    guard streams[id]!.sendWindow <= Self.maximumWindow else { return fail(.flowControlError) }
                }
                windowGrew = windowGrew || change > 0
            case 0x5:
                guard (16_384...16_777_215).contains(value) else { return fail(.protocolError) }
                clientMaxFrameSize = Int(value)
            default: break // SETTINGS_MAX_CONCURRENT_STREAMS and MAX_HEADER_LIST_SIZE bind what this side sends: it opens no streams, its headers are small.
            }
        }
        // Acknowledged before any DATA the new window lets out: the client counts that DATA against
        // its new settings only once it has this acknowledgement.
        writeFrameHeader(length: 0, type: FrameType.settings, flags: Flag.ack, stream: 0)
        if windowGrew { sendPendingBodies() }
        return nil
    }

    private mutating func receivePing(stream: UInt32, flags: UInt8, payload: ByteBuffer) -> Event? {
        guard stream == 0 else { return fail(.protocolError) }
        guard payload.readableBytes == 8 else { return fail(.frameSizeError) }
        guard flags & Flag.ack == 0 else { return nil }
        var payload = payload
        writeFrameHeader(length: 8, type: FrameType.ping, flags: Flag.ack, stream: 0)
        output.writeBuffer(&payload)
        return nil
    }

    private mutating func receiveGoAway(stream: UInt32, payload: ByteBuffer) -> Event? {
        guard stream == 0 else { return fail(.protocolError) }
        guard payload.readableBytes >= 8 else { return fail(.frameSizeError) }
        return .goingAway
    }

    private mutating func receiveWindowUpdate(stream: UInt32, payload: inout ByteBuffer) -> Event? {
        guard payload.readableBytes == 4, let word = payload.readInteger(as: UInt32.self) else { return fail(.frameSizeError) }
        let increment = Int(word & 0x7FFF_FFFF)
        if stream == 0 {
            guard increment > 0 else { return fail(.protocolError) }
            connectionSendWindow += increment
            guard connectionSendWindow <= Self.maximumWindow else { return fail(.flowControlError) }
            sendPendingBodies()
            return nil
        }
        guard stream <= lastClientStream else { return fail(.protocolError) }
        guard var state = streams[stream] else { return nil }
        guard increment > 0 else { return resetStream(stream, .protocolError) }
        state.sendWindow += increment
        guard state.sendWindow <= Self.maximumWindow else { return resetStream(stream, .flowControlError) }
        streams[stream] = state
        if blocked.contains(stream) { sendPendingBody(of: stream) }
        return nil
    }

    /// Removes a padded frame's padding; false if the padding is longer than the frame.
    private func stripPadding(flags: UInt8, payload: inout ByteBuffer) -> Bool {
        guard flags & Flag.padded != 0 else { return true }
        guard let padding = payload.readInteger(as: UInt8.self), Int(padding) <= payload.readableBytes else { return false }
        payload = payload.getSlice(at: payload.readerIndex, length: payload.readableBytes - Int(padding))!
        return true
    }

    // MARK: - Sending

    /// Announces new settings of this side (applied once the client acknowledges them).
    mutating func announce(_ new: Settings) {
        // The first SETTINGS says every value; later ones what changed.
        let last = settingsToAcknowledge.last ?? (announcedOnce ? settings : nil)
        announcedOnce = true
        var entries: [(UInt16, Int)] = []
        if new.headerTableSize != last?.headerTableSize { entries.append((0x1, new.headerTableSize)) }
        if new.maxConcurrentStreams != last?.maxConcurrentStreams { entries.append((0x3, new.maxConcurrentStreams)) }
        if new.initialWindowSize != last?.initialWindowSize { entries.append((0x4, new.initialWindowSize)) }
        if new.maxFrameSize != last?.maxFrameSize { entries.append((0x5, new.maxFrameSize)) }
        if new.maxHeaderListSize != last?.maxHeaderListSize { entries.append((0x6, new.maxHeaderListSize)) }
        largestFrameAnnounced = max(largestFrameAnnounced, new.maxFrameSize)
        writeFrameHeader(length: entries.count * 6, type: FrameType.settings, flags: 0, stream: 0)
        for (identifier, value) in entries {
            output.writeInteger(identifier)
            output.writeInteger(UInt32(value))
        }
        settingsToAcknowledge.append(new)
    }

    /// The settings announced last.
    var announcedSettings: Settings { settingsToAcknowledge.last ?? settings }

    /// Answers a request: its status and fields in one HEADERS frame, then the body, if any, in DATA
    /// frames as the client's windows allow; the stream's END_STREAM on the last. With `thenReset`
    /// the stream is reset (`NO_ERROR`) once all is sent: the client need not finish a request that
    /// is answered before its end. Returns false if the stream is not open (reset meanwhile).
    @discardableResult
    mutating func answer(_ stream: UInt32, status: Int, fields: [(name: String, value: String)], body: ByteBuffer?, thenReset: Bool = false) -> Bool {
        guard !isFailed, var state = streams[stream], !state.localEnded else { return false }
        let lengthAt = output.writerIndex
        writeFrameHeader(length: 0, type: FrameType.headers, flags: Flag.endHeaders | (body == nil ? Flag.endStream : 0), stream: stream)
        let blockAt = output.writerIndex
        if !headerTableSizeSent {
            // A dynamic table size update to zero: this side's blocks index nothing.
            output.writeInteger(UInt8(0x20))
            headerTableSizeSent = true
        }
        ResponseHeaderBlock.writeStatus(status, into: &output)
        for field in fields { ResponseHeaderBlock.writeField(name: field.name, value: field.value, into: &output) }
        let blockLength = output.writerIndex - blockAt
        output.setInteger(UInt32(blockLength) << 8 | UInt32(FrameType.headers), at: lengthAt)
        state.localEnded = true
        state.resetWhenAnswered = thenReset
        state.pendingBody = body
        settle(state, of: stream)
        if body != nil { sendPendingBody(of: stream) }
        return true
    }

    /// Resets a stream (RST_STREAM) and forgets it.
    mutating func reset(_ stream: UInt32, code: HTTP2ErrorCode) {
        guard !isFailed, streams[stream] != nil else { return }
        _ = resetStream(stream, code)
    }

    /// Refuses a stream unprocessed (RST_STREAM `REFUSED_STREAM`: the client may send its request
    /// again) and forgets it. The server's own decision, not counted among the client's resets.
    mutating func refuseUnprocessed(_ stream: UInt32) {
        guard !isFailed, streams[stream] != nil else { return }
        writeReset(stream, .refusedStream)
        forget(stream, closedBy: .server)
    }

    /// Updates the request of an open stream.
    mutating func updateRequest(of stream: UInt32, _ update: (inout Request) -> Void) {
        guard streams[stream] != nil else { return }
        update(&streams[stream]!.request)
    }

    /// Writes GOAWAY: the streams after `lastStream` (by default, the last the client opened) are not
    /// processed, and the client may send them again on another connection. A later GOAWAY never
    /// names a later stream (RFC 9113 §6.8).
    mutating func goAway(lastStream: UInt32? = nil, code: HTTP2ErrorCode, debugData: String = "") {
        guard !isFailed else { return }
        let lastStream = min(lastStream ?? lastClientStream, goAwayLastStream ?? .max)
        goAwayLastStream = lastStream
        writeFrameHeader(length: 8 + debugData.utf8.count, type: FrameType.goAway, flags: 0, stream: 0)
        output.writeInteger(lastStream & 0x7FFF_FFFF)
        output.writeInteger(code.rawValue)
        output.writeString(debugData)
    }

    /// Sends what the windows allow of the answers waiting for them.
    private mutating func sendPendingBodies() {
        let waiting = blocked
        for stream in waiting { sendPendingBody(of: stream) }
    }

    /// Sends as much of a stream's pending body as the windows allow.
    private mutating func sendPendingBody(of stream: UInt32) {
        guard var state = streams[stream], var body = state.pendingBody else {
            blocked.remove(stream)
            return
        }
        while true {
            let size = min(body.readableBytes, max(0, state.sendWindow), max(0, connectionSendWindow), clientMaxFrameSize)
            let last = size == body.readableBytes
            // An empty body's frame, or the end of one, counts nothing against the windows.
            guard size > 0 || last else { break }
            writeFrameHeader(length: size, type: FrameType.data, flags: last ? Flag.endStream : 0, stream: stream)
            var part = body.readSlice(length: size)!
            output.writeBuffer(&part)
            state.sendWindow -= size
            connectionSendWindow -= size
            if last {
                blocked.remove(stream)
                state.pendingBody = nil
                settle(state, of: stream)
                return
            }
        }
        blocked.insert(stream)
        state.pendingBody = body
        streams[stream] = state
    }

    /// Keeps a stream's state, or closes the stream once both sides have ended it and nothing of the
    /// answer waits: an answer all sent before the request's end resets the stream if asked to.
    private mutating func settle(_ state: Stream, of stream: UInt32) {
        guard state.localEnded, state.pendingBody == nil, state.remoteEnded || state.resetWhenAnswered else {
            streams[stream] = state
            return
        }
        if !state.remoteEnded { writeReset(stream, .noError) }
        forget(stream, closedBy: state.remoteEnded ? .bothEnded : .server)
    }

    // MARK: - Frames

    private mutating func fail(_ code: HTTP2ErrorCode) -> Event {
        goAway(code: code)
        isFailed = true
        inbound = ByteBuffer()
        return .failed(code)
    }

    /// A stream error of the client's: RST_STREAM with its code, and the stream forgotten. It counts
    /// as a reset of the client's: a stream reset for an error frees its place while its request's
    /// work may go on, and a client provoking resets would otherwise have work under way without bound.
    private mutating func resetStream(_ stream: UInt32, _ code: HTTP2ErrorCode) -> Event? {
        guard resets.spend(at: clock()) else { return fail(.enhanceYourCalm) }
        writeReset(stream, code)
        forget(stream, closedBy: .server)
        return nil
    }

    private mutating func writeReset(_ stream: UInt32, _ code: HTTP2ErrorCode) {
        writeFrameHeader(length: 4, type: FrameType.rstStream, flags: 0, stream: stream)
        output.writeInteger(code.rawValue)
    }

    private mutating func forget(_ stream: UInt32, closedBy: ClosedBy) {
        streams.removeValue(forKey: stream)
        blocked.remove(stream)
        if recentlyClosed.updateValue(closedBy, forKey: stream) == nil {
            let oldest = closedRing[nextClosed]
            if oldest != 0 { recentlyClosed.removeValue(forKey: oldest) }
            closedRing[nextClosed] = stream
            nextClosed = (nextClosed + 1) % Self.maximumRecentlyClosed
        }
    }

    private mutating func writeWindowUpdate(stream: UInt32, increment: Int) {
        writeFrameHeader(length: 4, type: FrameType.windowUpdate, flags: 0, stream: stream)
        output.writeInteger(UInt32(increment))
    }

    private mutating func writeFrameHeader(length: Int, type: UInt8, flags: UInt8, stream: UInt32) {
        output.writeInteger(UInt32(length) << 8 | UInt32(type))
        output.writeInteger(flags)
        output.writeInteger(stream)
    }
}

/// HTTP/2's frame types (RFC 9113 §6).
private enum FrameType {
    static let data: UInt8 = 0x0
    static let headers: UInt8 = 0x1
    static let priority: UInt8 = 0x2
    static let rstStream: UInt8 = 0x3
    static let settings: UInt8 = 0x4
    static let pushPromise: UInt8 = 0x5
    static let ping: UInt8 = 0x6
    static let goAway: UInt8 = 0x7
    static let windowUpdate: UInt8 = 0x8
    static let continuation: UInt8 = 0x9
}

/// HTTP/2's frame flags.
private enum Flag {
    static let endStream: UInt8 = 0x1
    static let ack: UInt8 = 0x1
    static let endHeaders: UInt8 = 0x4
    static let padded: UInt8 = 0x8
    static let priority: UInt8 = 0x20
}

/// Frames of a kind allowed so many per 30 seconds: a budget refilled as time passes.
struct FrameBudget {
    private let per30Seconds: Int
    private var left: Double
    private var at: NIODeadline?

    init(per30Seconds: Int) {
        self.per30Seconds = per30Seconds
        left = Double(per30Seconds)
    }

    /// Takes one; false once none is left.
    mutating func spend(at now: NIODeadline) -> Bool {
        if let at {
            let elapsed = Double(max(0, (now - at).nanoseconds)) / 1e9
            left = min(Double(per30Seconds), left + elapsed * Double(per30Seconds) / 30)
        }
        at = now
        left -= 1
        return left >= 0
    }
}

/// What a stream of an ``HTTP2ServerConnection`` keeps of its request.
protocol HTTP2StreamRequest {
    init()
}

/// HTTP/2's error codes (RFC 9113 §7).
enum HTTP2ErrorCode: UInt32, Equatable {
    case noError = 0x0
    case protocolError = 0x1
    case internalError = 0x2
    case flowControlError = 0x3
    case settingsTimeout = 0x4
    case streamClosed = 0x5
    case frameSizeError = 0x6
    case refusedStream = 0x7
    case cancel = 0x8
    case compressionError = 0x9
    case connectError = 0xA
    case enhanceYourCalm = 0xB
    case inadequateSecurity = 0xC
    case http11Required = 0xD

}
