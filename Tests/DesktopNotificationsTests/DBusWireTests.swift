import DBus
import Testing

@Suite struct DBusWireTests {
    @Test func aNotifyCallSurvivesTheWire() throws {
        var call = DBusMessage.methodCall(
            destination: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications",
            interface: "org.freedesktop.Notifications", member: "Notify",
            body: [.string("todo"), .uint32(0), .string(""), .string("Daily report"), .string("Write it"),
                   .strings(["default", "Open", "done", "Done"]),
                   .variantDictionary([("urgency", .byte(2)), ("suppress-sound", .boolean(true)), ("x", .int64(-5))]),
                   .int32(-1)])
        call.serial = 7
        let bytes = try call.encoded()
        #expect(try DBusMessage.length(of: bytes) == bytes.count)
        let decoded = try DBusMessage(decoding: bytes)
        #expect(decoded == call)
        #expect(decoded.signature == "susssasa{sv}i")
        #expect(decoded.body[6].stringKeyedDictionary?["urgency"] == .byte(2))
    }

    /// The bytes of a `Hello` call as the D-Bus specification lays them out: header, fields padded to 8.
    @Test func aMessageIsLaidOutAsTheSpecificationSays() throws {
        var hello = DBusMessage.methodCall(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                           interface: "org.freedesktop.DBus", member: "Hello")
        hello.serial = 1
        let bytes = try hello.encoded()
        #expect(Array(bytes.prefix(12)) == [0x6C, 1, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0])
        #expect(bytes.count % 8 == 0)
        // The first field: code 1 (path), the variant's signature "o", then the path's length.
        #expect(Array(bytes[16..<24]) == [1, 1, UInt8(ascii: "o"), 0, 21, 0, 0, 0])
    }

    @Test func aBigEndianMessageIsRead() throws {
        // A signal NotificationClosed(7, 2) written big-endian by hand.
        var writer = BigEndianBytes()
        writer.bytes = [UInt8(ascii: "B"), 4, 0, 1]
        writer.u32(8); writer.u32(3)
        let path = "/org/freedesktop/Notifications", interface = "org.freedesktop.Notifications", member = "NotificationClosed"
        var fields = BigEndianBytes()
        fields.offset = 16
        fields.field(1, "o", path); fields.field(2, "s", interface); fields.field(3, "s", member)
        fields.pad(8)
        fields.bytes += [8, 1, UInt8(ascii: "g"), 0, 2, UInt8(ascii: "u"), UInt8(ascii: "u"), 0]
        writer.u32(UInt32(fields.bytes.count))
        writer.bytes += fields.bytes
        writer.pad(8, base: 0)
        writer.u32(7); writer.u32(2)
        let message = try DBusMessage(decoding: writer.bytes)
        #expect(message.kind == .signal)
        #expect(message.member == "NotificationClosed")
        #expect(message.body == [.uint32(7), .uint32(2)])
    }

    @Test(arguments: [
        ("a", "signature ends inside a type"),
        ("(", "signature ends inside a type"),
        ("()", "empty structure in signature"),
        ("a{vs}", "dictionary key must be a basic type"),
        ("{ss}", "dictionary entry outside an array"),
        ("a{ss}z", "unknown type code \"z\" in signature"),
        ("z", "unknown type code \"z\" in signature"),
    ])
    func badSignaturesAreRefused(signature: String, reason: String) {
        #expect(throws: DBusWireError(reason)) { try DBusSignature.completeTypes(signature) }
    }

    @Test func truncatedAndCorruptMessagesAreRefused() throws {
        var signal = DBusMessage.signal(path: "/a", interface: "a.b", member: "C", body: [.string("hello")])
        signal.serial = 3
        let bytes = try signal.encoded()
        #expect(throws: DBusWireError.self) { try DBusMessage(decoding: Array(bytes.dropLast())) }
        var corrupt = bytes
        corrupt[corrupt.count - 1] = 1  // the string's NUL
        #expect(throws: DBusWireError("string is not NUL-terminated")) { try DBusMessage(decoding: corrupt) }
        var unknownOrder = bytes
        unknownOrder[0] = UInt8(ascii: "x")
        #expect(throws: DBusWireError("unknown byte order 120")) { try DBusMessage.length(of: unknownOrder) }
    }

    @Test func addressesNameUnixSockets() throws {
        #expect(try DBusAddress.parse("unix:path=/run/user/1000/bus") == [DBusAddress(socket: .path("/run/user/1000/bus"))])
        #expect(try DBusAddress.parse("tcp:host=x,port=1;unix:abstract=/tmp/dbus-a%2Cb,guid=00ff") == [DBusAddress(socket: .abstract("/tmp/dbus-a,b"))])
        #expect(throws: DBusError.self) { try DBusAddress.parse("tcp:host=localhost,port=5") }
    }
}

/// Big-endian bytes written by hand, to read as the other byte order's messages.
private struct BigEndianBytes {
    var bytes: [UInt8] = []
    var offset = 0

    mutating func pad(_ boundary: Int, base: Int? = nil) {
        while (bytes.count + (base ?? offset)) % boundary != 0 { bytes.append(0) }
    }

    mutating func u32(_ value: UInt32) {
        pad(4)
        bytes += withUnsafeBytes(of: value.bigEndian, Array.init)
    }

    mutating func field(_ code: UInt8, _ type: Character, _ text: String) {
        pad(8)
        bytes += [code, 1, UInt8(ascii: type.unicodeScalars.first!), 0]
        u32(UInt32(text.utf8.count))
        bytes += Array(text.utf8) + [0]
    }
}
