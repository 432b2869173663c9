import Foundation
import Glibc

/// One keep-alive HTTP/1.1 connection to the daemon's Unix socket, driven with blocking system calls
/// from a thread of its own.
///
/// The add load uses it instead of AsyncHTTPClient because the driver shares the machine's two cores
/// with the daemon it measures: AsyncHTTPClient spent about 95 µs of CPU per add (event loops, task
/// hops, header objects), a third of what the daemon itself spends. This writes prepared bytes and
/// reads the answer into one buffer: a few microseconds and two system calls per add.
/// Used by one thread at a time (its own), hence `@unchecked Sendable`: it is handed to that thread once.
final class BlockingHTTPConnection: @unchecked Sendable {
    private let descriptor: Int32
    private var buffer = [UInt8](repeating: 0, count: 16_384)

    init(socketPath: String) throws {
        descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw BenchmarkError("socket() failed: \(errno)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let path = Array(socketPath.utf8)
        guard path.count < MemoryLayout.size(ofValue: address.sun_path) else { throw BenchmarkError("socket path too long: \(socketPath)") }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: path)
            raw[path.count] = 0
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else {
            close(descriptor)
            throw BenchmarkError("could not connect to \(socketPath): \(errno)")
        }
    }

    deinit { close(descriptor) }

    /// The bytes of a `POST path` with a JSON body and the app's key.
    static func post(_ path: String, key: String, json body: [UInt8]) -> [UInt8] {
        let head = "POST \(path) HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer \(key)\r\n"
            + "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n"
        return Array(head.utf8) + body
    }

    /// Sends a prepared request and reads its whole answer; returns the status code.
    func send(_ request: [UInt8]) throws -> Int {
        try request.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                guard written > 0 else {
                    if written < 0, errno == EINTR { continue }
                    throw BenchmarkError("write failed: \(errno)")
                }
                offset += written
            }
        }
        // Reads until the head is complete, then until the body announced by Content-Length is.
        var filled = 0
        var headEnd: Int?
        var status = 0
        var total = Int.max
        while filled < total {
            if filled == buffer.count { buffer += [UInt8](repeating: 0, count: buffer.count) }
            let read = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress! + filled, $0.count - filled) }
            guard read > 0 else {
                if read < 0, errno == EINTR { continue }
                throw BenchmarkError("the daemon closed the connection (\(read), \(errno))")
            }
            filled += read
            if headEnd == nil, let end = Self.endOfHead(buffer, upTo: filled) {
                headEnd = end
                let head = String(decoding: buffer[0..<end], as: UTF8.self)
                let lines = head.split(separator: "\r\n")
                guard let first = lines.first, first.hasPrefix("HTTP/1.1 "), let code = Int(first.dropFirst(9).prefix(3)) else {
                    throw BenchmarkError("not an HTTP/1.1 answer: \(head.prefix(80))")
                }
                status = code
                guard let length = lines.lazy.compactMap({ line -> Int? in
                    let parts = line.split(separator: ":", maxSplits: 1)
                    guard parts.count == 2, parts[0].lowercased() == "content-length" else { return nil }
                    return Int(parts[1].trimmingCharacters(in: .whitespaces))
                }).first else {
                    throw BenchmarkError("an answer without Content-Length: \(head.prefix(200))")
                }
                total = end + length
            }
        }
        guard filled == total else { throw BenchmarkError("more bytes than the answer announced") }
        return status
    }

    private static func endOfHead(_ bytes: [UInt8], upTo count: Int) -> Int? {
        guard count >= 4 else { return nil }
        for index in 3..<count where bytes[index] == 10 && bytes[index - 1] == 13 && bytes[index - 2] == 10 && bytes[index - 3] == 13 {
            return index + 1
        }
        return nil
    }
}
