import BenchmarkSupport
import Foundation
import Glibc

/// The add load's clients: `count` keep-alive HTTP/1.1 connections to the daemon's Unix socket, as
/// many app processes would hold, each with one add outstanding at a time (it sends the next once
/// the last is answered). One thread drives them all with `poll`; it is handed to that thread once,
/// hence `@unchecked Sendable`.
///
/// The driver shares the machine's two cores with the daemon it measures, so it spends as little as
/// it can: a thread per connection cost 28–40 µs of CPU per add (64 threads, each put to sleep and
/// woken for every add), AsyncHTTPClient about 95 µs. Here an add is one `write`, one
/// `recv` and a share of one `poll` among the answers that arrive together.
final class AddLoadClients: @unchecked Sendable {
    /// One connection: its socket, its own seeded choice of apps and requests, and the answer being read.
    private struct Client {
        var descriptor: Int32
        var generator: SeededGenerator
        var sentAt: ContinuousClock.Instant
        var received: [UInt8]
        var filled = 0
    }

    private var clients: [Client] = []

    /// Connects `count` clients; client `i` draws its apps and requests from `seed &+ i`.
    init(socketPath: String, count: Int, seed: UInt64) throws {
        for index in 0..<count {
            clients.append(Client(descriptor: try Self.connect(to: socketPath), generator: SeededGenerator(seed: seed &+ UInt64(index)),
                                  sentAt: .now, received: [UInt8](repeating: 0, count: 4096)))
        }
    }

    deinit {
        for client in clients { close(client.descriptor) }
    }

    /// Until `deadline`, each client adds `bodies[slot]` for a random app of `apps` as soon as its
    /// last add is answered; the adds under way at the deadline are answered too. Returns each
    /// add's latency (from its write to the end of its answer). Throws when an add is not answered 201.
    func run(until deadline: ContinuousClock.Instant, apps: Int, bodies: [[UInt8]]) throws -> [Double] {
        var latencies: [Double] = []
        latencies.reserveCapacity(1 << 18)
        for index in clients.indices { try send(index, apps: apps, bodies: bodies) }
        var outstanding = clients.count
        var pollers = clients.map { pollfd(fd: $0.descriptor, events: Int16(POLLIN), revents: 0) }
        while outstanding > 0 {
            let ready = poll(&pollers, nfds_t(pollers.count), 10_000)
            if ready < 0, errno == EINTR { continue }
            guard ready > 0 else { throw BenchmarkError("no answer from the daemon in 10 s (\(ready), \(errno))") }
            for index in pollers.indices where pollers[index].revents != 0 {
                guard try receive(index) else { continue }
                latencies.append((ContinuousClock.now - clients[index].sentAt).seconds)
                if ContinuousClock.now < deadline {
                    try send(index, apps: apps, bodies: bodies)
                } else {
                    // Answered after the deadline: nothing more is sent, and it is no longer watched.
                    pollers[index].fd = -1
                    outstanding -= 1
                }
            }
        }
        return latencies
    }

    private func send(_ index: Int, apps: Int, bodies: [[UInt8]]) throws {
        let app = Int(clients[index].generator.next() % UInt64(apps))
        let slot = Int(clients[index].generator.next() % UInt64(bodies.count))
        let request = Self.add(key: BenchmarkApps.key(app), json: bodies[slot])
        clients[index].sentAt = .now
        try request.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                // The socket blocks on writes: a request fits in its buffer, which holds nothing
                // unread while the last answer has been read.
                let written = write(clients[index].descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                guard written > 0 else {
                    if written < 0, errno == EINTR { continue }
                    throw BenchmarkError("write failed: \(errno)")
                }
                offset += written
            }
        }
    }

    /// Reads what has arrived for a client; true once its whole answer (head and `Content-Length`
    /// body) is in, and it was 201.
    private func receive(_ index: Int) throws -> Bool {
        if clients[index].filled == clients[index].received.count { clients[index].received += [UInt8](repeating: 0, count: 4096) }
        let descriptor = clients[index].descriptor
        let filled = clients[index].filled
        let read = clients[index].received.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress! + filled, $0.count - filled, Int32(MSG_DONTWAIT)) }
        guard read > 0 else {
            if read < 0, errno == EINTR || errno == EAGAIN { return false }
            throw BenchmarkError("the daemon closed the connection (\(read), \(errno))")
        }
        clients[index].filled += read
        guard let answer = try Self.answer(in: clients[index].received, count: clients[index].filled) else { return false }
        guard answer.length == clients[index].filled else { throw BenchmarkError("more bytes than the answer announced") }
        guard answer.status == 201 else { throw BenchmarkError("an add was answered \(answer.status)") }
        clients[index].filled = 0
        return true
    }

    /// The bytes of a `POST /v1/requests` with a JSON body and the app's key.
    private static func add(key: String, json body: [UInt8]) -> [UInt8] {
        let head = "POST /v1/requests HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer \(key)\r\n"
            + "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n"
        return Array(head.utf8) + body
    }

    /// The status and the whole length of the answer at the start of `bytes`, once its head and body are in.
    private static func answer(in bytes: [UInt8], count: Int) throws -> (status: Int, length: Int)? {
        guard count >= 4, let end = (3..<count).first(where: {
            bytes[$0] == 10 && bytes[$0 - 1] == 13 && bytes[$0 - 2] == 10 && bytes[$0 - 3] == 13
        }) else { return nil }
        let head = String(decoding: bytes[0...end], as: UTF8.self)
        let lines = head.split(separator: "\r\n")
        guard let first = lines.first, first.hasPrefix("HTTP/1.1 "), let status = Int(first.dropFirst(9).prefix(3)) else {
            throw BenchmarkError("not an HTTP/1.1 answer: \(head.prefix(80))")
        }
        guard let length = lines.lazy.compactMap({ line -> Int? in
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, parts[0].lowercased() == "content-length" else { return nil }
            return Int(parts[1].trimmingCharacters(in: .whitespaces))
        }).first else {
            throw BenchmarkError("an answer without Content-Length: \(head.prefix(200))")
        }
        return count >= end + 1 + length ? (status, end + 1 + length) : nil
    }

    private static func connect(to socketPath: String) throws -> Int32 {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw BenchmarkError("socket() failed: \(errno)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let path = Array(socketPath.utf8)
        guard path.count < MemoryLayout.size(ofValue: address.sun_path) else {
            close(descriptor)
            throw BenchmarkError("socket path too long: \(socketPath)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: path)
            raw[path.count] = 0
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else {
            close(descriptor)
            throw BenchmarkError("could not connect to \(socketPath): \(errno)")
        }
        return descriptor
    }
}
