import NIOCore

/// An answer's header block in HPACK (RFC 7541), written without a dynamic table: a status of HPACK's
/// static table is one byte, any other status and every field a literal not indexed, without Huffman
/// coding. The provider API's answers are a status and a few identifiers that differ in every answer,
/// which no table would save; writing them so needs no encoder state at all.
enum ResponseHeaderBlock {
    /// Writes `:status`.
    static func writeStatus(_ status: Int, into buffer: inout ByteBuffer) {
        // HPACK's static table (RFC 7541 Appendix A), entries 8 to 14.
        switch status {
        case 200: buffer.writeInteger(UInt8(0x80 | 8))
        case 204: buffer.writeInteger(UInt8(0x80 | 9))
        case 206: buffer.writeInteger(UInt8(0x80 | 10))
        case 304: buffer.writeInteger(UInt8(0x80 | 11))
        case 400: buffer.writeInteger(UInt8(0x80 | 12))
        case 404: buffer.writeInteger(UInt8(0x80 | 13))
        case 500: buffer.writeInteger(UInt8(0x80 | 14))
        default:
            // A literal without indexing whose name is the static table's `:status` (entry 8).
            writeInteger(8, prefixBits: 4, firstByte: 0x00, into: &buffer)
            writeString(String(status), into: &buffer)
        }
    }

    /// Writes a field as a literal without indexing: `content-type` by the static table's name
    /// (entry 31), any other with its name written out. Names are lower-case, as HTTP/2 wants them.
    static func writeField(name: String, value: String, into buffer: inout ByteBuffer) {
        if name == "content-type" {
            writeInteger(31, prefixBits: 4, firstByte: 0x00, into: &buffer)
        } else {
            buffer.writeInteger(UInt8(0x00))
            writeString(name, into: &buffer)
        }
        writeString(value, into: &buffer)
    }

    /// A string literal without Huffman coding: its length, then its bytes.
    private static func writeString(_ string: String, into buffer: inout ByteBuffer) {
        writeInteger(string.utf8.count, prefixBits: 7, firstByte: 0x00, into: &buffer)
        buffer.writeString(string)
    }

    /// An integer with an N-bit prefix (RFC 7541 §5.1), the prefix's byte starting with `firstByte`'s bits.
    static func writeInteger(_ value: Int, prefixBits: Int, firstByte: UInt8, into buffer: inout ByteBuffer) {
        let limit = (1 << prefixBits) - 1
        guard value >= limit else {
            buffer.writeInteger(firstByte | UInt8(value))
            return
        }
        buffer.writeInteger(firstByte | UInt8(limit))
        var rest = value - limit
        while rest >= 128 {
            buffer.writeInteger(UInt8(rest & 0x7F | 0x80))
            rest >>= 7
        }
        buffer.writeInteger(UInt8(rest))
    }
}
