/// One D-Bus message: a method call, its return or error, or a signal.
package struct DBusMessage: Sendable, Hashable {
    package enum Kind: UInt8, Sendable, Hashable {
        case methodCall = 1
        case methodReturn = 2
        case error = 3
        case signal = 4
    }

    package struct Flags: OptionSet, Sendable, Hashable {
        package let rawValue: UInt8
        package init(rawValue: UInt8) { self.rawValue = rawValue }

        /// The caller wants no reply.
        package static let noReplyExpected = Flags(rawValue: 0x1)
        /// The bus must not start a service to receive it.
        package static let noAutoStart = Flags(rawValue: 0x2)
    }

    package var kind: Kind
    package var flags: Flags = []
    /// Set by the connection that sends it.
    package var serial: UInt32 = 0
    package var path: String?
    package var interface: String?
    package var member: String?
    package var errorName: String?
    package var replySerial: UInt32?
    package var destination: String?
    /// Set by the bus: the unique name of the connection that sent it.
    package var sender: String?
    package var body: [DBusValue] = []

    package init(kind: Kind) {
        self.kind = kind
    }

    /// A call of `interface.member` on the object at `path` of `destination`.
    package static func methodCall(destination: String?, path: String, interface: String?, member: String, body: [DBusValue] = []) -> DBusMessage {
        var message = DBusMessage(kind: .methodCall)
        message.destination = destination
        message.path = path
        message.interface = interface
        message.member = member
        message.body = body
        return message
    }

    /// A signal from the object at `path`; to one connection when `destination` is given, else to
    /// every connection whose match rules take it.
    package static func signal(path: String, interface: String, member: String, destination: String? = nil, body: [DBusValue] = []) -> DBusMessage {
        var message = DBusMessage(kind: .signal)
        message.path = path
        message.interface = interface
        message.member = member
        message.destination = destination
        message.body = body
        return message
    }

    /// The return of the method call `call`.
    package static func methodReturn(to call: DBusMessage, body: [DBusValue] = []) -> DBusMessage {
        var message = DBusMessage(kind: .methodReturn)
        message.replySerial = call.serial
        message.destination = call.sender
        message.body = body
        return message
    }

    /// The error reply to the method call `call`: `name` such as `org.freedesktop.DBus.Error.InvalidArgs`.
    package static func error(to call: DBusMessage, name: String, message text: String) -> DBusMessage {
        var message = DBusMessage(kind: .error)
        message.replySerial = call.serial
        message.destination = call.sender
        message.errorName = name
        message.body = [.string(text)]
        return message
    }

    /// The body's signature.
    package var signature: String { body.map(\.signature).joined() }

    // MARK: - The wire form

    private enum HeaderField: UInt8 {
        case path = 1, interface, member, errorName, replySerial, destination, sender, signature, unixFDs
    }

    /// The largest message the specification allows.
    package static let maximumLength = 1 << 27

    /// The message's bytes, little-endian.
    package func encoded() throws(DBusWireError) -> [UInt8] {
        var bodyWriter = DBusWriter()
        for value in body { try bodyWriter.write(value) }
        var fields: [DBusValue] = []
        func field(_ code: HeaderField, _ value: DBusValue?) {
            if let value { fields.append(.structure([.byte(code.rawValue), .variant(value)])) }
        }
        field(.path, path.map(DBusValue.objectPath))
        field(.interface, interface.map(DBusValue.string))
        field(.member, member.map(DBusValue.string))
        field(.errorName, errorName.map(DBusValue.string))
        field(.replySerial, replySerial.map(DBusValue.uint32))
        field(.destination, destination.map(DBusValue.string))
        field(.sender, sender.map(DBusValue.string))
        if !body.isEmpty { field(.signature, .signature(signature)) }

        var writer = DBusWriter()
        try writer.write(.byte(UInt8(ascii: "l")))
        try writer.write(.byte(kind.rawValue))
        try writer.write(.byte(flags.rawValue))
        try writer.write(.byte(1))
        try writer.write(.uint32(UInt32(bodyWriter.bytes.count)))
        try writer.write(.uint32(serial))
        try writer.write(.array(elementSignature: "(yv)", fields))
        writer.align(8)
        let message = writer.bytes + bodyWriter.bytes
        guard message.count <= Self.maximumLength else { throw DBusWireError("message longer than 128 MiB") }
        return message
    }

    /// How many bytes the message starting at `bytes[start]` takes, once its first 16 bytes are there;
    /// nil while fewer are.
    ///
    /// - Throws: a `DBusWireError` when the bytes cannot start a message.
    package static func length(of bytes: some RandomAccessCollection<UInt8>) throws(DBusWireError) -> Int? {
        guard bytes.count >= 16 else { return nil }
        let header = Array(bytes.prefix(16))
        let littleEndian: Bool
        switch header[0] {
        case UInt8(ascii: "l"): littleEndian = true
        case UInt8(ascii: "B"): littleEndian = false
        default: throw DBusWireError("unknown byte order \(header[0])")
        }
        guard header[3] == 1 else { throw DBusWireError("unknown protocol version \(header[3])") }
        var reader = DBusReader(bytes: header, littleEndian: littleEndian, offset: 4)
        let bodyLength = Int(try reader.readUInt32())
        _ = try reader.readUInt32()
        let fieldsLength = Int(try reader.readUInt32())
        let headerLength = (16 + fieldsLength + 7) / 8 * 8
        let total = headerLength + bodyLength
        guard fieldsLength <= maximumLength, bodyLength <= maximumLength, total <= maximumLength else {
            throw DBusWireError("message longer than 128 MiB")
        }
        return total
    }

    /// Reads one whole message.
    ///
    /// - Throws: a `DBusWireError` when the bytes are not a valid message.
    package init(decoding bytes: [UInt8]) throws(DBusWireError) {
        guard let length = try Self.length(of: bytes), length == bytes.count else {
            throw DBusWireError("message length does not match its header")
        }
        let littleEndian = bytes[0] == UInt8(ascii: "l")
        guard let kind = Kind(rawValue: bytes[1]) else { throw DBusWireError("unknown message type \(bytes[1])") }
        self.kind = kind
        flags = Flags(rawValue: bytes[2])
        var reader = DBusReader(bytes: bytes, littleEndian: littleEndian, offset: 4)
        let bodyLength = Int(try reader.readUInt32())
        serial = try reader.readUInt32()
        guard serial != 0 else { throw DBusWireError("message serial is 0") }
        guard case .array(_, let fields) = try reader.read("a(yv)") else { throw DBusWireError("header fields are not an array") }
        var bodySignature = ""
        for field in fields {
            guard case .structure(let parts) = field, parts.count == 2, case .byte(let code) = parts[0],
                  case .variant(let value) = parts[1] else { throw DBusWireError("malformed header field") }
            switch HeaderField(rawValue: code) {
            case .path: path = value.stringValue
            case .interface: interface = value.stringValue
            case .member: member = value.stringValue
            case .errorName: errorName = value.stringValue
            case .replySerial: replySerial = value.uint32Value
            case .destination: destination = value.stringValue
            case .sender: sender = value.stringValue
            case .signature: bodySignature = value.stringValue ?? ""
            case .unixFDs: throw DBusWireError("messages carrying file descriptors are not accepted")
            case nil: break  // Unknown fields are ignored, as the specification says.
            }
        }
        try reader.align(8)
        guard bytes.count - reader.offset == bodyLength else { throw DBusWireError("body length does not match its header") }
        switch kind {
        case .methodCall: guard path != nil, member != nil else { throw DBusWireError("method call without path or member") }
        case .signal: guard path != nil, interface != nil, member != nil else { throw DBusWireError("signal without path, interface or member") }
        case .methodReturn: guard replySerial != nil else { throw DBusWireError("method return without reply serial") }
        case .error: guard replySerial != nil, errorName != nil else { throw DBusWireError("error without reply serial or name") }
        }
        var bodyReader = DBusReader(bytes: bytes, littleEndian: littleEndian, offset: reader.offset)
        for type in try DBusSignature.completeTypes(bodySignature) {
            body.append(try bodyReader.read(type))
        }
        guard bodyReader.isAtEnd else { throw DBusWireError("body is longer than its signature says") }
    }
}
