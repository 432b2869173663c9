import Foundation

/// HTTP/1.1 written by hand on a Unix socket: for what a client library would not send, such as
/// several requests in one write before any answer. Its calls block a thread of its own, never one of
/// the tasks' threads, which the daemon in the same process needs to answer.
final class RawHTTPConnection: @unchecked Sendable {
    struct Response: Sendable {
        var status: Int
        var headers: [String: String]
        var body: Data
    }

    private let descriptor: Int32
    private var received = Data()

    init(socketPath: String) throws {
        descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw RawHTTPError("socket: errno \(errno)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { path in
            for (index, byte) in socketPath.utf8.prefix(path.count - 1).enumerated() { path[index] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else {
            close(descriptor)
            throw RawHTTPError("connect: errno \(errno)")
        }
    }

    deinit { close(descriptor) }

    /// A request's bytes, with `Content-Length` for its body.
    static func request(_ method: String, _ path: String, key: String?, body: Data? = nil, headers: [String] = []) -> Data {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: localhost\r\n"
        if let key { head += "Authorization: Bearer \(key)\r\n" }
        if let body { head += "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n" }
        for header in headers { head += header + "\r\n" }
        return Data((head + "\r\n").utf8) + (body ?? Data())
    }

    private let queue = DispatchQueue(label: "raw HTTP connection")

    private func blocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body() }) }
        }
    }

    func send(_ bytes: Data) async throws {
        try await blocking { try self.sendNow(bytes) }
    }

    /// The next `count` responses, in the order they came, within `seconds`.
    func responses(_ count: Int, within seconds: Double = 10) async throws -> [Response] {
        try await blocking { try self.responsesNow(count, within: seconds) }
    }

    /// Whether the server closed the connection (end of stream) within `seconds`, with nothing more sent.
    func isClosed(within seconds: Double = 10) async throws -> Bool {
        try await blocking { try !self.fill(until: Date().addingTimeInterval(seconds)) && self.received.isEmpty }
    }

    /// Shuts this side for writing: the server reads the end of the input, and can still answer.
    func finishSending() throws {
        guard shutdown(descriptor, Int32(SHUT_WR)) == 0 else { throw RawHTTPError("shutdown: errno \(errno)") }
    }

    private func sendNow(_ bytes: Data) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + offset, bytes.count - offset) }
            guard written > 0 else { throw RawHTTPError("write: errno \(errno)") }
            offset += written
        }
    }

    private func responsesNow(_ count: Int, within seconds: Double) throws -> [Response] {
        let deadline = Date().addingTimeInterval(seconds)
        var responses: [Response] = []
        while responses.count < count {
            if let response = try parse() {
                responses.append(response)
                continue
            }
            guard try fill(until: deadline) else { throw RawHTTPError("the connection closed after \(responses.count) responses") }
        }
        return responses
    }

    /// Reads what is there; false at the end of the stream.
    private func fill(until deadline: Date) throws -> Bool {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(max(0, deadline.timeIntervalSinceNow) * 1000)
        guard poll(&poller, 1, milliseconds) == 1 else { throw RawHTTPError("no answer in time") }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let count = read(descriptor, &buffer, buffer.count)
        guard count >= 0 else { throw RawHTTPError("read: errno \(errno)") }
        received.append(contentsOf: buffer[0..<count])
        return count > 0
    }

    private func parse() throws -> Response? {
        guard let end = received.range(of: Data("\r\n\r\n".utf8)) else { return nil }
        let lines = String(decoding: received[received.startIndex..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        guard let status = lines.first?.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else {
            throw RawHTTPError("not a status line: \(lines.first ?? "")")
        }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let length = Int(headers["content-length"] ?? "0") ?? 0
        guard received.count - (end.upperBound - received.startIndex) >= length else { return nil }
        let body = received[end.upperBound..<end.upperBound + length]
        received = Data(received[(end.upperBound + length)...])
        return Response(status: status, headers: headers, body: Data(body))
    }
}

struct RawHTTPError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
