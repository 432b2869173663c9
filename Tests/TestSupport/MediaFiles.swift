import Foundation

/// Real media files made by the tests, so that a browser decodes and plays what the daemon serves.
package enum MediaFiles {
    /// An RGB PNG of `width` × `height` whose pixel at (x, y) is `color(x, y)`, stored uncompressed
    /// (zlib's stored blocks), as any decoder reads it.
    package static func png(width: Int, height: Int, color: (Int, Int) -> (UInt8, UInt8, UInt8)) -> Data {
        var raw: [UInt8] = []
        for y in 0..<height {
            raw.append(0)  // no filter
            for x in 0..<width {
                let (red, green, blue) = color(x, y)
                raw += [red, green, blue]
            }
        }
        var header: [UInt8] = []
        header += bigEndian(UInt32(width))
        header += bigEndian(UInt32(height))
        header += [8, 2, 0, 0, 0]  // 8 bits, RGB, deflate, no filter, no interlace
        var file: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        file += chunk("IHDR", header)
        file += chunk("IDAT", zlibStored(raw))
        file += chunk("IEND", [])
        return Data(file)
    }

    /// An animated GIF of `width` × `height`, one frame of a single color for each of `frames` (at most
    /// four). Its LZW data starts over every two pixels, so every code stays three bits wide and no
    /// dictionary is needed to write it.
    package static func gif(width: Int, height: Int, frames: [(UInt8, UInt8, UInt8)]) -> Data {
        precondition(!frames.isEmpty && frames.count <= 4)
        var file: [UInt8] = Array("GIF89a".utf8) + littleEndian(UInt16(width)) + littleEndian(UInt16(height))
        file += [0x81, 0, 0]  // a global table of 4 colors
        for index in 0..<4 {
            let (red, green, blue) = index < frames.count ? frames[index] : (0, 0, 0)
            file += [red, green, blue]
        }
        file += [0x21, 0xFF, 11] + Array("NETSCAPE2.0".utf8) + [3, 1, 0, 0, 0]  // loops forever
        for index in frames.indices {
            file += [0x21, 0xF9, 4, 0] + littleEndian(UInt16(10)) + [0, 0]  // a tenth of a second each
            file += [0x2C] + littleEndian(UInt16(0)) + littleEndian(UInt16(0)) + littleEndian(UInt16(width)) + littleEndian(UInt16(height)) + [0]
            // Codes of 3 bits (minimum code size 2): clear is 4, end is 5.
            var codes: [UInt8] = []
            for pixel in 0..<(width * height) {
                if pixel % 2 == 0 { codes.append(4) }
                codes.append(UInt8(index))
            }
            codes.append(5)
            var packed: [UInt8] = []
            var bits = 0
            var filled = 0
            for code in codes {
                bits |= Int(code) << filled
                filled += 3
                while filled >= 8 {
                    packed.append(UInt8(bits & 0xFF))
                    bits >>= 8
                    filled -= 8
                }
            }
            if filled > 0 { packed.append(UInt8(bits & 0xFF)) }
            file.append(2)
            var start = 0
            while start < packed.count {
                let block = packed[start..<min(start + 255, packed.count)]
                file += [UInt8(block.count)] + block
                start += block.count
            }
            file.append(0)
        }
        file.append(0x3B)
        return Data(file)
    }

    /// A mono 16-bit PCM WAV of `seconds` of a 440 Hz tone at 8 kHz.
    package static func wav(seconds: Double) -> Data {
        let rate = 8_000
        let samples = Int(Double(rate) * seconds)
        var data: [UInt8] = []
        for index in 0..<samples {
            let value = Int16(sin(Double(index) * 2 * .pi * 440 / Double(rate)) * 8_000)
            data += littleEndian(UInt16(bitPattern: value))
        }
        var file: [UInt8] = Array("RIFF".utf8) + littleEndian(UInt32(36 + data.count)) + Array("WAVE".utf8)
        file += Array("fmt ".utf8) + littleEndian(UInt32(16)) + littleEndian(UInt16(1)) + littleEndian(UInt16(1))
        file += littleEndian(UInt32(rate)) + littleEndian(UInt32(rate * 2)) + littleEndian(UInt16(2)) + littleEndian(UInt16(16))
        file += Array("data".utf8) + littleEndian(UInt32(data.count)) + data
        return Data(file)
    }

    /// A file that starts as an MP4 does (an `ftyp` box, so the system accepts it) and then holds no movie.
    package static func brokenMP4() -> Data {
        Data([0, 0, 0, 0x18] + Array("ftypisom".utf8) + [0, 0, 2, 0] + Array("isomiso2".utf8) + Array(repeating: 0x5A, count: 256))
    }

    private static func chunk(_ type: String, _ body: [UInt8]) -> [UInt8] {
        let typed = Array(type.utf8) + body
        return bigEndian(UInt32(body.count)) + typed + bigEndian(crc32(typed))
    }

    private static func zlibStored(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let count = min(65_535, bytes.count - offset)
            let last = offset + count == bytes.count
            out.append(last ? 1 : 0)
            out += littleEndian(UInt16(count)) + littleEndian(~UInt16(count))
            out += bytes[offset..<(offset + count)]
            offset += count
        } while offset < bytes.count
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in bytes {
            a = (a + UInt32(byte)) % 65_521
            b = (b + a) % 65_521
        }
        return out + bigEndian(b << 16 | a)
    }

    private static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    private static func bigEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian, Array.init)
    }

    private static func littleEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.littleEndian, Array.init)
    }
}
