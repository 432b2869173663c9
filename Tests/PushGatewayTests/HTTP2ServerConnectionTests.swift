import NIOCore
import NIOHPACK
@testable import PushGateway
import Testing

/// The provider API's HTTP/2 layer as a value: frames in as bytes, events and frames out, no socket.
@Suite struct HTTP2ServerConnectionTests {
    struct Request: HTTP2StreamRequest {
        var note = ""
    }

    typealias Connection = HTTP2ServerConnection<Request>

    /// A frame as it went over the wire.
    struct Frame: Equatable {
        var type: UInt8
        var flags: UInt8 = 0
        var stream: UInt32 = 0
        var payload: [UInt8] = []

        var bytes: ByteBuffer {
            var buffer = ByteBuffer()
            buffer.writeInteger(UInt32(payload.count) << 8 | UInt32(type))
            buffer.writeInteger(flags)
            buffer.writeInteger(stream)
            buffer.writeBytes(payload)
            return buffer
        }

        /// The error code of a RST_STREAM, or of a GOAWAY.
        var errorCode: HTTP2ErrorCode? {
            let at = type == 0x7 ? 4 : 0
            guard type == 0x3 || type == 0x7, payload.count >= at + 4 else { return nil }
            return HTTP2ErrorCode(rawValue: payload[at..<at + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
        }
    }

    static func settings(_ entries: [(UInt16, UInt32)] = [], ack: Bool = false) -> Frame {
        var payload: [UInt8] = []
        for (identifier, value) in entries {
            payload += [UInt8(identifier >> 8), UInt8(identifier & 0xFF)]
            payload += [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
        }
        return Frame(type: 0x4, flags: ack ? 0x1 : 0, payload: payload)
    }

    static func word(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    static let request: [(String, String)] = [
        (":method", "POST"), (":scheme", "https"), (":path", "/3/device/ab12"), (":authority", "localhost"), ("apns-topic", "com.example.todo"),
    ]

    /// A client: its HPACK encoder, and the frames the server sent it.
    struct Client {
        var connection: Connection
        var encoder = HPACKEncoder(allocator: ByteBufferAllocator())
        var received: [Frame] = []

        init(settings: Connection.Settings = .init(), resetsPer30Seconds: Int = 100, clientSettings: [(UInt16, UInt32)] = []) {
            connection = Connection(settings: settings, resetsPer30Seconds: resetsPer30Seconds, allocator: ByteBufferAllocator(),
                                    clock: { .uptimeNanoseconds(0) })
            var preface = ByteBuffer(string: "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
            var first = HTTP2ServerConnectionTests.settings(clientSettings).bytes
            preface.writeBuffer(&first)
            #expect(send(preface) == [])
        }

        mutating func headerBlock(_ fields: [(String, String)]) -> [UInt8] {
            var buffer = ByteBuffer()
            try! encoder.encode(headers: HPACKHeaders(fields), to: &buffer)
            return Array(buffer.readableBytesView)
        }

        /// Sends bytes; returns the events they made. What the server wrote is added to `received`.
        @discardableResult
        mutating func send(_ bytes: ByteBuffer, now: NIODeadline = .uptimeNanoseconds(0)) -> [Connection.Event] {
            connection.clock = { now }
            connection.receive(bytes)
            var events: [Connection.Event] = []
            while let event = connection.nextEvent() { events.append(event) }
            collect()
            return events
        }

        @discardableResult
        mutating func send(_ frames: Frame..., now: NIODeadline = .uptimeNanoseconds(0)) -> [Connection.Event] {
            var bytes = ByteBuffer()
            for frame in frames {
                var frame = frame.bytes
                bytes.writeBuffer(&frame)
            }
            return send(bytes, now: now)
        }

        /// Takes what the server wrote into `received`.
        mutating func collect() {
            received += HTTP2ServerConnectionTests.frames(in: connection.takeOutput())
        }

        /// The frames received since the last call.
        mutating func take() -> [Frame] {
            collect()
            defer { received = [] }
            return received
        }

        /// The fields of a header block the server sent.
        static func fields(of frame: Frame) -> [String: String] {
            var decoder = HPACKDecoder(allocator: ByteBufferAllocator())
            var block = ByteBuffer(bytes: frame.payload)
            let headers = try! decoder.decodeHeaders(from: &block)
            return Dictionary(headers.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
        }
    }

    /// The frames in bytes the server wrote.
    static func frames(in output: ByteBuffer?) -> [Frame] {
        guard var output else { return [] }
        var frames: [Frame] = []
        while let header = output.readInteger(as: UInt32.self), let flags = output.readInteger(as: UInt8.self),
              let stream = output.readInteger(as: UInt32.self), let payload = output.readBytes(length: Int(header >> 8)) {
            frames.append(Frame(type: UInt8(header & 0xFF), flags: flags, stream: stream, payload: payload))
        }
        return frames
    }

    @Test func theServerSpeaksFirstAndAcknowledgesTheClientsSettings() {
        var connection = Connection(settings: .init(maxConcurrentStreams: 1), resetsPer30Seconds: 100, allocator: ByteBufferAllocator())
        // Its settings, then a connection window of a megabyte.
        #expect(Self.frames(in: connection.takeOutput()) == [
            Self.settings([(0x1, 4096), (0x3, 1), (0x4, 65_535), (0x5, 16_384), (0x6, 8000)]),
            Frame(type: 0x8, payload: Self.word(1_048_576 - 65_535)),
        ])
        var bytes = ByteBuffer(string: "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
        var settings = Self.settings([(0x4, 1000)]).bytes
        bytes.writeBuffer(&settings)
        connection.receive(bytes)
        #expect(connection.nextEvent() == nil)
        #expect(Self.frames(in: connection.takeOutput()) == [Self.settings(ack: true)])
    }

    @Test func aRequestAndItsBodyAreEventsAndItsAnswerEndsTheStream() {
        var client = Client()
        _ = client.take()
        let block = client.headerBlock(Self.request)
        let events = client.send(Frame(type: 0x1, flags: 0x4, stream: 1, payload: block), Frame(type: 0x0, flags: 0x1, stream: 1, payload: Array("{}".utf8)))
        #expect(events == [
            .request(stream: 1, headers: HPACKHeaders(Self.request), endStream: false),
            .data(stream: 1, bytes: ByteBuffer(string: "{}"), endStream: true),
        ])
        #expect(client.connection.openStreams == 1)
        let answered = client.connection.answer(1, status: 200, fields: [(name: "apns-id", value: "4f1b1c07-6b3e-4b3a-9a43-2c0b0d1d2e3f")], body: nil)
        #expect(answered)
        let answer = client.take()
        #expect(answer.count == 1)
        #expect(answer.first?.type == 0x1)
        #expect(answer.first?.flags == 0x5) // END_STREAM and END_HEADERS
        #expect(answer.first.map(Client.fields) == [":status": "200", "apns-id": "4f1b1c07-6b3e-4b3a-9a43-2c0b0d1d2e3f"])
        #expect(client.connection.openStreams == 0)
        // The stream is closed: a second answer is not written.
        let answeredAgain = client.connection.answer(1, status: 200, fields: [], body: nil)
        #expect(!answeredAgain)
    }

    @Test(arguments: [200, 400, 403, 404, 410, 413, 429, 500, 503])
    func everyStatusIsReadAsWritten(status: Int) {
        var client = Client()
        client.send(Frame(type: 0x1, flags: 0x5, stream: 1, payload: client.headerBlock(Self.request)))
        var body = ByteBuffer(string: #"{"reason":"BadDeviceToken"}"#)
        client.connection.answer(1, status: status, fields: [(name: "apns-id", value: "x"), (name: "content-type", value: "application/json")], body: body)
        let frames = client.take().filter { $0.stream == 1 }
        #expect(frames.count == 2)
        #expect(frames.first.map(Client.fields) == [":status": String(status), "apns-id": "x", "content-type": "application/json"])
        #expect(frames.last?.type == 0x0)
        #expect(frames.last?.flags == 0x1)
        #expect(frames.last?.payload == body.readBytes(length: body.readableBytes))
    }

    @Test func anAnswersBodyWaitsForTheClientsWindow() {
        var client = Client(clientSettings: [(0x4, 10)])
        client.send(Frame(type: 0x1, flags: 0x5, stream: 1, payload: client.headerBlock(Self.request)))
        _ = client.take()
        client.connection.answer(1, status: 400, fields: [], body: ByteBuffer(string: #"{"reason":"BadTopic"}"#))
        var frames = client.take()
        #expect(frames.map(\.type) == [0x1, 0x0])
        #expect(frames.last?.payload == Array(#"{"reason":"#.utf8))
        #expect(frames.last?.flags == 0)
        // More window: the rest, with END_STREAM; the stream is then closed.
        client.send(Frame(type: 0x8, stream: 1, payload: Self.word(100)))
        frames = client.take()
        #expect(frames.map(\.type) == [0x0])
        #expect(frames.first?.payload == Array(#""BadTopic"}"#.utf8))
        #expect(frames.first?.flags == 0x1)
        #expect(client.connection.openStreams == 0)
    }

    @Test func anAnswerToAnUnfinishedRequestCanResetItsStreamOnceSent() {
        var client = Client(clientSettings: [(0x4, 0)])
        client.send(Frame(type: 0x1, flags: 0x4, stream: 1, payload: client.headerBlock(Self.request)))
        _ = client.take()
        client.connection.answer(1, status: 400, fields: [], body: ByteBuffer(string: #"{"reason":"IdleTimeout"}"#), thenReset: true)
        #expect(client.take().map(\.type) == [0x1])
        client.send(Frame(type: 0x4, payload: [0x00, 0x04, 0x00, 0x00, 0x10, 0x00]))
        let frames = client.take()
        // The settings' acknowledgement, then the rest of the body as the window opens, then the reset.
        #expect(frames.map(\.type) == [0x4, 0x0, 0x3])
        #expect(frames[2].errorCode == HTTP2ErrorCode.noError)
        #expect(client.connection.openStreams == 0)
    }

    @Test func aHeaderBlockMayComeInPiecesAndWithPadding() {
        var client = Client()
        let block = client.headerBlock(Self.request)
        let half = block.count / 2
        // HEADERS padded (3 bytes), then CONTINUATION with END_HEADERS.
        let events = client.send(
            Frame(type: 0x1, flags: 0x8 | 0x1, stream: 1, payload: [3] + block[..<half] + [0, 0, 0]),
            Frame(type: 0x9, flags: 0x4, stream: 1, payload: Array(block[half...]))
        )
        #expect(events == [.request(stream: 1, headers: HPACKHeaders(Self.request), endStream: true)])
    }

    @Test func aHeaderBlockOfEndlessPiecesIsRefused() {
        var client = Client()
        _ = client.take()
        var events = client.send(Frame(type: 0x1, stream: 1, payload: [0x82]))
        for _ in 0..<64 { events += client.send(Frame(type: 0x9, stream: 1, payload: [])) }
        #expect(events == [])
        #expect(client.send(Frame(type: 0x9, stream: 1, payload: [])) == [.failed(.enhanceYourCalm)])
        var large = Client()
        large.send(Frame(type: 0x1, stream: 1, payload: Array(repeating: 0x82, count: 16_384)))
        for _ in 0..<3 { large.send(Frame(type: 0x9, stream: 1, payload: Array(repeating: 0x82, count: 16_384))) }
        #expect(large.send(Frame(type: 0x9, stream: 1, payload: [0x82])) == [.failed(.enhanceYourCalm)])
    }

    /// A header list over the announced 8,000 bytes opens its stream for an answer `431`, and is
    /// decoded whole: the next block, which names fields the first put in HPACK's table, is read as
    /// sent. A list decoding to more than 64 KiB (a few bytes naming a large field of the table again
    /// and again) is a connection error.
    @Test func aHeaderListOverTheLimitIsAnOversizedRequestAndHPACKsTableIsKept() {
        var client = Client()
        _ = client.take()
        let large = Self.request + [("x-note", String(repeating: "a", count: 9_000))]
        #expect(client.send(Frame(type: 0x1, flags: 0x5, stream: 1, payload: client.headerBlock(large))) == [.oversizedRequest(stream: 1, endStream: true)])
        #expect(client.connection.openStreams == 1)
        #expect(client.send(Frame(type: 0x1, flags: 0x5, stream: 3, payload: client.headerBlock(Self.request)))
            == [.request(stream: 3, headers: HPACKHeaders(Self.request), endStream: true)])

        var bomb = Client()
        _ = bomb.take()
        let field = ("x-note", String(repeating: "b", count: 4_000))
        #expect(bomb.send(Frame(type: 0x1, flags: 0x5, stream: 1, payload: bomb.headerBlock(Self.request + [field])))
            == [.request(stream: 1, headers: HPACKHeaders(Self.request + [field]), endStream: true)])
        let repeated = bomb.headerBlock(Self.request + Array(repeating: field, count: 17))
        // One frame's worth of bytes, for 17 times the field (the encoder names it from the table).
        #expect(repeated.count < 16_384)
        #expect(bomb.send(Frame(type: 0x1, flags: 0x5, stream: 3, payload: repeated)) == [.failed(.compressionError)])
    }

    @Test func aClientThatNeverAcknowledgesTheLimitMayOpenAHundredStreams() {
        var client = Client(settings: .init(maxConcurrentStreams: 1))
        for stream in stride(from: UInt32(1), through: 199, by: 2) {
            client.send(Frame(type: 0x1, flags: 0x4, stream: stream, payload: client.headerBlock(Self.request)))
        }
        #expect(client.connection.openStreams == 100)
        _ = client.take()
        client.send(Frame(type: 0x1, flags: 0x4, stream: 201, payload: client.headerBlock(Self.request)))
        #expect(client.take() == [Frame(type: 0x3, stream: 201, payload: Self.word(HTTP2ErrorCode.refusedStream.rawValue))])
    }

    @Test func streamErrorsTheClientProvokesSpendItsResetBudget() {
        var client = Client(resetsPer30Seconds: 3)
        var events: [Connection.Event] = []
        for stream in [UInt32(1), 3, 5, 7] {
            // A request, then DATA after its end: the server resets the stream (STREAM_CLOSED).
            client.send(Frame(type: 0x1, flags: 0x5, stream: stream, payload: client.headerBlock(Self.request)))
            events += client.send(Frame(type: 0x0, stream: stream, payload: []))
        }
        #expect(events == [.failed(.enhanceYourCalm)])
    }

    @Test func aSettingsFloodIsRefused() {
        var client = Client()
        var events: [Connection.Event] = []
        // A thousand in 30 seconds, the client's first included.
        for index in 0..<999 { events += client.send(Self.settings([(0x4, UInt32(1_000 + index % 2))])) }
        #expect(events == [])
        #expect(client.send(Self.settings([(0x4, 1_000)])) == [.failed(.enhanceYourCalm)])
    }

    @Test func aClientsEndAfterTheAnswerClosesTheStream() {
        var client = Client()
        client.send(Frame(type: 0x1, flags: 0x4, stream: 1, payload: client.headerBlock(Self.request)))
        client.connection.answer(1, status: 200, fields: [], body: nil)
        #expect(client.connection.openStreams == 1)
        client.send(Frame(type: 0x0, flags: 0x1, stream: 1, payload: [1]))
        #expect(client.connection.openStreams == 0)
    }

    @Test func afterGoAwayNewStreamsAreNotProcessedAndTheLastStreamNeverGrows() {
        var client = Client()
        client.send(Frame(type: 0x1, flags: 0x4, stream: 1, payload: client.headerBlock(Self.request)))
        _ = client.take()
        client.connection.goAway(code: .noError, debugData: "bye")
        client.connection.goAway(lastStream: 99, code: .noError)
        let goAways = client.take()
        #expect(goAways.map { Array($0.payload.prefix(4)) } == [Self.word(1), Self.word(1)])
        #expect(client.send(Frame(type: 0x1, flags: 0x5, stream: 3, payload: client.headerBlock(Self.request))) == [])
        #expect(client.connection.openStreams == 1)
        // The stream under way goes on.
        #expect(client.send(Frame(type: 0x0, flags: 0x1, stream: 1, payload: [1])) == [.data(stream: 1, bytes: ByteBuffer(bytes: [1]), endStream: true)])
    }

    /// A stream the client passed over (it opened a higher one first) is closed (RFC 9113 §5.1.1):
    /// HEADERS on it is a connection error `PROTOCOL_ERROR`. HEADERS on a stream that was opened and
    /// that both sides ended is one too, `STREAM_CLOSED` (see
    /// ``framesOnAClosedStreamAreAnErrorUnlessThisSideResetIt(_:)``).
    @Test func headersOnAStreamPassedOverIsAConnectionError() {
        var client = Client()
        _ = client.take()
        #expect(client.send(Frame(type: 0x1, flags: 0x5, stream: 1, payload: client.headerBlock(Self.request))).count == 1)
        client.connection.answer(1, status: 200, fields: [], body: nil)
        #expect(client.send(Frame(type: 0x1, flags: 0x5, stream: 7, payload: client.headerBlock(Self.request))).count == 1)
        _ = client.take()
        // Streams 3 and 5 were passed over by 7.
        #expect(client.send(Frame(type: 0x1, flags: 0x5, stream: 5, payload: client.headerBlock(Self.request))) == [.failed(.protocolError)])
        #expect(client.take().last?.errorCode == .protocolError)

        var again = Client()
        #expect(again.send(Frame(type: 0x1, flags: 0x5, stream: 1, payload: again.headerBlock(Self.request))).count == 1)
        again.connection.answer(1, status: 200, fields: [], body: nil)
        #expect(again.send(Frame(type: 0x1, flags: 0x5, stream: 1, payload: again.headerBlock(Self.request))) == [.failed(.streamClosed)])
    }

    @Test func trailersEndARequest() {
        var client = Client()
        client.send(Frame(type: 0x1, flags: 0x4, stream: 1, payload: client.headerBlock(Self.request)))
        let events = client.send(Frame(type: 0x1, flags: 0x5, stream: 1, payload: client.headerBlock([("x-trailer", "1")])))
        #expect(events == [.trailers(stream: 1, headers: HPACKHeaders([("x-trailer", "1")]))])
    }

    /// Trailers end a body too, so a body that ends with them shorter than its `content-length`
    /// is as malformed as one that ends with DATA.
    @Test func trailersAfterAShortBodyAreMalformed() {
        var client = Client()
        client.send(Frame(type: 0x1, flags: 0x4, stream: 1, payload: client.headerBlock(Self.request + [("content-length", "100")])),
                    Frame(type: 0x0, stream: 1, payload: Array("0123456789".utf8)))
        let events = client.send(Frame(type: 0x1, flags: 0x5, stream: 1, payload: client.headerBlock([("x-trailer", "1")])))
        #expect(events == [])
        #expect(client.take().filter { $0.type == 0x3 }.map(\.errorCode) == [.protocolError])
    }

    @Test func pingIsAnsweredWithItsData() {
        var client = Client()
        _ = client.take()
        client.send(Frame(type: 0x6, payload: [1, 2, 3, 4, 5, 6, 7, 8]))
        #expect(client.take() == [Frame(type: 0x6, flags: 0x1, payload: [1, 2, 3, 4, 5, 6, 7, 8])])
        // A PING's answer is not answered.
        client.send(Frame(type: 0x6, flags: 0x1, payload: [1, 2, 3, 4, 5, 6, 7, 8]))
        #expect(client.take() == [])
    }

    @Test func receivedDataIsGivenBackOnceHalfTheWindowIsUsed() {
        var client = Client()
        client.send(Frame(type: 0x1, flags: 0x4, stream: 1, payload: client.headerBlock(Self.request)))
        _ = client.take()
        client.send(Frame(type: 0x0, stream: 1, payload: Array(repeating: 0x20, count: 16_000)))
        #expect(client.take() == [])
        client.send(Frame(type: 0x0, stream: 1, payload: Array(repeating: 0x20, count: 16_000)))
        #expect(client.take() == [])
        client.send(Frame(type: 0x0, stream: 1, payload: Array(repeating: 0x20, count: 1_000)))
        #expect(client.take() == [Frame(type: 0x8, stream: 1, payload: Self.word(33_000))])
        // The connection's megabyte is given back once half of it is used.
        for _ in 0..<32 { client.send(Frame(type: 0x0, stream: 1, payload: Array(repeating: 0x20, count: 16_000))) }
        #expect(client.take().filter { $0.stream == 0 } == [Frame(type: 0x8, payload: Self.word(529_000))])
    }

    @Test func streamsBeyondTheLimitAreRefusedOnceTheLimitIsAcknowledged() {
        var client = Client(settings: .init(maxConcurrentStreams: 1))
        // Before the client acknowledges the limit, HTTP/2's (none) applies.
        client.send(Frame(type: 0x1, flags: 0x4, stream: 1, payload: client.headerBlock(Self.request)))
        client.send(Frame(type: 0x1, flags: 0x4, stream: 3, payload: client.headerBlock(Self.request)))
        #expect(client.connection.openStreams == 2)
        client.send(Self.settings(ack: true))
        _ = client.take()
        let events = client.send(Frame(type: 0x1, flags: 0x4, stream: 5, payload: client.headerBlock(Self.request)))
        #expect(events == [])
        #expect(client.take() == [Frame(type: 0x3, stream: 5, payload: Self.word(HTTP2ErrorCode.refusedStream.rawValue))])
        // Raised: the next stream is taken.
        var raised = client.connection.announcedSettings
        raised.maxConcurrentStreams = 1000
        client.connection.announce(raised)
        #expect(client.take() == [Self.settings([(0x3, 1000)])])
        client.send(Self.settings(ack: true))
        let next = client.send(Frame(type: 0x1, flags: 0x5, stream: 7, payload: client.headerBlock(Self.request)))
        #expect(next == [.request(stream: 7, headers: HPACKHeaders(Self.request), endStream: true)])
    }

    @Test func streamErrorsResetTheirStream() {
        var client = Client()
        client.send(Frame(type: 0x1, flags: 0x5, stream: 1, payload: client.headerBlock(Self.request)))
        client.send(Frame(type: 0x1, flags: 0x4, stream: 3, payload: client.headerBlock(Self.request)))
        _ = client.take()
        // DATA after the request's end.
        #expect(client.send(Frame(type: 0x0, stream: 1, payload: [1])) == [])
        #expect(client.take().last == Frame(type: 0x3, stream: 1, payload: Self.word(HTTP2ErrorCode.streamClosed.rawValue)))
        // Trailers that do not end the request.
        #expect(client.send(Frame(type: 0x1, flags: 0x4, stream: 3, payload: client.headerBlock([("x-trailer", "1")]))) == [])
        #expect(client.take() == [Frame(type: 0x3, stream: 3, payload: Self.word(HTTP2ErrorCode.protocolError.rawValue))])
        #expect(client.connection.openStreams == 0)
        // Frames on a stream reset are ignored.
        #expect(client.send(Frame(type: 0x0, flags: 0x1, stream: 3, payload: [1])) == [])
        #expect(client.take().filter { $0.type != 0x8 } == [])
    }

    @Test func theClientsResetsCloseTheirStreamsAndTooManyAreARapidResetAttack() {
        var client = Client(resetsPer30Seconds: 3)
        for (index, stream) in [UInt32(1), 3, 5].enumerated() {
            client.send(Frame(type: 0x1, flags: 0x4, stream: stream, payload: client.headerBlock(Self.request)))
            #expect(client.send(Frame(type: 0x3, stream: stream, payload: Self.word(8)), now: .uptimeNanoseconds(UInt64(index) * 1_000)) == [])
        }
        #expect(client.connection.openStreams == 0)
        client.send(Frame(type: 0x1, flags: 0x4, stream: 7, payload: client.headerBlock(Self.request)))
        #expect(client.send(Frame(type: 0x3, stream: 7, payload: Self.word(8)), now: .uptimeNanoseconds(4_000)) == [.failed(.enhanceYourCalm)])
        // Thirty seconds later the budget is whole again.
        var later = Client(resetsPer30Seconds: 3)
        for (index, stream) in [UInt32(1), 3, 5, 7, 9].enumerated() {
            later.send(Frame(type: 0x1, flags: 0x4, stream: stream, payload: later.headerBlock(Self.request)))
            let events = later.send(Frame(type: 0x3, stream: stream, payload: Self.word(8)), now: .uptimeNanoseconds(UInt64(index) * 10_000_000_000))
            #expect(events == [])
        }
    }

    /// Each connection error: the event, then GOAWAY with its code, and nothing read after.
    @Test(arguments: [
        ("a frame larger than the largest announced", [Frame(type: 0x0, stream: 1, payload: Array(repeating: 0, count: 16_385))], HTTP2ErrorCode.frameSizeError),
        ("DATA on a stream never opened", [Frame(type: 0x0, stream: 9, payload: [1])], .protocolError),
        ("DATA on stream 0", [Frame(type: 0x0, stream: 0, payload: [1])], .protocolError),
        ("HEADERS on an even stream", [Frame(type: 0x1, flags: 0x5, stream: 2, payload: [0x82])], .protocolError),
        ("a header block HPACK cannot read", [Frame(type: 0x1, flags: 0x5, stream: 1, payload: [0xFF, 0xFF, 0xFF, 0xFF])], .compressionError),
        ("PUSH_PROMISE from a client", [Frame(type: 0x5, stream: 1, payload: [0, 0, 0, 2])], .protocolError),
        ("another frame inside a header block", [Frame(type: 0x1, flags: 0x1, stream: 1, payload: [0x82]), Frame(type: 0x6, payload: Array(repeating: 0, count: 8))], .protocolError),
        ("CONTINUATION without HEADERS", [Frame(type: 0x9, flags: 0x4, stream: 1, payload: [0x82])], .protocolError),
        ("a PING of 7 bytes", [Frame(type: 0x6, payload: Array(repeating: 0, count: 7))], .frameSizeError),
        ("a PING on a stream", [Frame(type: 0x6, stream: 1, payload: Array(repeating: 0, count: 8))], .protocolError),
        ("SETTINGS of 5 bytes", [Frame(type: 0x4, payload: Array(repeating: 0, count: 5))], .frameSizeError),
        ("SETTINGS_ENABLE_PUSH of 2", [settings([(0x2, 2)])], .protocolError),
        ("an initial window over 2^31-1", [settings([(0x4, 0x8000_0000)])], .flowControlError),
        ("a maximum frame size under 16,384", [settings([(0x5, 100)])], .protocolError),
        ("a SETTINGS acknowledgement with a payload", [Frame(type: 0x4, flags: 0x1, payload: Array(repeating: 0, count: 6))], .frameSizeError),
        ("WINDOW_UPDATE of 0 for the connection", [Frame(type: 0x8, payload: word(0))], .protocolError),
        ("the connection's window over 2^31-1", [Frame(type: 0x8, payload: word(0x7FFF_FFFF))], .flowControlError),
        ("RST_STREAM on stream 0", [Frame(type: 0x3, payload: word(8))], .protocolError),
        ("RST_STREAM on a stream never opened", [Frame(type: 0x3, stream: 11, payload: word(8))], .protocolError),
        ("GOAWAY on a stream", [Frame(type: 0x7, stream: 1, payload: Array(repeating: 0, count: 8))], .protocolError),
    ])
    func connectionErrors(_ what: String, frames: [Frame], code: HTTP2ErrorCode) {
        var client = Client()
        _ = client.take()
        var events: [Connection.Event] = []
        for frame in frames { events += client.send(frame) }
        #expect(events == [.failed(code)], "\(what)")
        let goAway = client.take().last
        #expect(goAway?.type == 0x7, "\(what)")
        #expect(goAway?.errorCode == code, "\(what)")
        #expect(client.send(Frame(type: 0x6, payload: Array(repeating: 0, count: 8))) == [])
        #expect(client.take() == [])
    }

    @Test func dataBeyondAStreamsWindowResetsTheStream() {
        var client = Client(settings: .init(initialWindowSize: 100))
        client.send(Self.settings(ack: true))
        client.send(Frame(type: 0x1, flags: 0x4, stream: 1, payload: client.headerBlock(Self.request)))
        _ = client.take()
        #expect(client.send(Frame(type: 0x0, stream: 1, payload: Array(repeating: 0, count: 101))) == [])
        #expect(client.take() == [Frame(type: 0x3, stream: 1, payload: Self.word(HTTP2ErrorCode.flowControlError.rawValue))])
        #expect(client.connection.openStreams == 0)
    }

    @Test func aBadPrefaceIsAConnectionError() {
        var connection = Connection(settings: .init(), resetsPer30Seconds: 100, allocator: ByteBufferAllocator())
        connection.receive(ByteBuffer(string: "GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
        #expect(connection.nextEvent() == .failed(.protocolError))
        var other = Connection(settings: .init(), resetsPer30Seconds: 100, allocator: ByteBufferAllocator())
        var bytes = ByteBuffer(string: "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
        var ping = Frame(type: 0x6, payload: Array(repeating: 0, count: 8)).bytes
        bytes.writeBuffer(&ping)
        other.receive(bytes)
        #expect(other.nextEvent() == .failed(.protocolError))
    }

    @Test func framesSplitAcrossReadsAreReadWhole() {
        var client = Client()
        var bytes = Frame(type: 0x1, flags: 0x5, stream: 1, payload: client.headerBlock(Self.request)).bytes
        var events: [Connection.Event] = []
        while bytes.readableBytes > 0 {
            events += client.send(bytes.readSlice(length: min(3, bytes.readableBytes))!)
        }
        #expect(events == [.request(stream: 1, headers: HPACKHeaders(Self.request), endStream: true)])
    }
}

/// The RFC's rules for closed streams, priorities and declared lengths (RFC 9113 §5.1, §8.1.1;
/// RFC 7540 §5.3.1), as the frame-level conformance suite checks them over a socket.
extension HTTP2ServerConnectionTests {
    /// DATA or HEADERS on a stream the client reset, or that both sides ended, is a connection error
    /// `STREAM_CLOSED`; on a stream this side reset, it may have been in flight and is ignored.
    @Test(arguments: ["the client reset it", "both sides ended it", "this side reset it"])
    func framesOnAClosedStreamAreAnErrorUnlessThisSideResetIt(_ how: String) {
        var client = Client()
        let block = client.headerBlock(Self.request)
        switch how {
        case "the client reset it":
            client.send(Frame(type: 0x1, flags: 0x4, stream: 1, payload: block), Frame(type: 0x3, stream: 1, payload: Self.word(0x8)))
        case "both sides ended it":
            client.send(Frame(type: 0x1, flags: 0x5, stream: 1, payload: block))
            client.connection.answer(1, status: 200, fields: [], body: nil)
        default:
            client.send(Frame(type: 0x1, flags: 0x4, stream: 1, payload: block))
            client.connection.reset(1, code: .cancel)
        }
        _ = client.take()
        let events = client.send(Frame(type: 0x0, flags: 0x1, stream: 1, payload: Array("{}".utf8)))
        if how == "this side reset it" {
            #expect(events == [])
            #expect(client.take().allSatisfy { $0.type != 0x7 }, "no GOAWAY")
        } else {
            #expect(events == [.failed(.streamClosed)])
            let goAway = client.take().last
            #expect(goAway?.type == 0x7 && goAway?.errorCode == .streamClosed)
        }
    }

    @Test func aStreamDependingOnItselfIsAnError() {
        var client = Client()
        // Open: its stream is reset.
        client.send(Frame(type: 0x1, flags: 0x4, stream: 1, payload: client.headerBlock(Self.request)))
        _ = client.take()
        client.send(Frame(type: 0x2, stream: 1, payload: Self.word(1) + [16]))
        #expect(client.take().map { "\($0.type) \($0.stream) \($0.errorCode.map { "\($0)" } ?? "")" } == ["3 1 protocolError"])
        // Not opened yet: a connection error, as this side cannot reset it.
        #expect(client.send(Frame(type: 0x2, stream: 5, payload: Self.word(5) + [16])) == [.failed(.protocolError)])
        // Depending on another is no error.
        var other = Client()
        #expect(other.send(Frame(type: 0x2, stream: 3, payload: Self.word(1) + [16])) == [])
    }

    /// A request whose DATA is longer or shorter than its `content-length`, or whose length is not
    /// a number, is malformed: its stream is reset with `PROTOCOL_ERROR`, and it is never a request
    /// whose body ended.
    @Test(arguments: [
        ("39", "{\"aps\":{\"alert\":\"a\"}}", false), ("20", "{\"aps\":{\"alert\":\"a\"}}", false), ("21", "{\"aps\":{\"alert\":\"a\"}}", true),
        ("twenty", "{\"aps\":{\"alert\":\"a\"}}", false), ("-1", "{\"aps\":{\"alert\":\"a\"}}", false),
    ])
    func aBodyOfAnotherLengthThanDeclaredIsMalformed(_ declared: String, _ body: String, taken: Bool) {
        var client = Client()
        let block = client.headerBlock(Self.request + [("content-length", declared)])
        let half = body.utf8.count / 2
        let events = client.send(Frame(type: 0x1, flags: 0x4, stream: 1, payload: block),
                                 Frame(type: 0x0, stream: 1, payload: Array(body.utf8.prefix(half))),
                                 Frame(type: 0x0, flags: 0x1, stream: 1, payload: Array(body.utf8.dropFirst(half))))
        let ended = events.contains { if case .data(_, _, true) = $0 { true } else { false } }
        #expect(ended == taken)
        let resets = client.take().filter { $0.type == 0x3 }
        #expect(resets.map { "\($0.stream) \($0.errorCode.map { "\($0)" } ?? "")" } == (taken ? [] : ["1 protocolError"]))
    }

    @Test func aRequestEndingWithItsHeadersMayDeclareNoBodyButAnEmptyOne() {
        var client = Client()
        let declared = client.send(Frame(type: 0x1, flags: 0x5, stream: 1, payload: client.headerBlock(Self.request + [("content-length", "5")])))
        #expect(declared == [])
        #expect(client.take().filter { $0.type == 0x3 }.map(\.errorCode) == [.protocolError])
        let empty = client.send(Frame(type: 0x1, flags: 0x5, stream: 3, payload: client.headerBlock(Self.request + [("content-length", "0")])))
        #expect(empty.count == 1)
    }
}
