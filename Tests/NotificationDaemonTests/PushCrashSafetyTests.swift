import AsyncHTTPClient
import DaemonTestSupport
import Foundation
import NIOCore
import NIOSSL
import NotificationCore
import NotificationDaemonClient
import Synchronization
import Testing
import TestSupport

/// A `kill -9` of the gateway, then of the daemon, while a provider pushes: no push the gateway
/// answered `200` is lost, and none reaches the person twice. The real `unotify gateway` and
/// `unotify daemon` processes, a real provider over HTTP/2 and TLS.
@Suite(.serialized, .timeLimit(.minutes(5))) struct PushCrashSafetyTests {
    /// The identifiers of the notifications presented, as a presenter saw them, across daemon restarts.
    final class Presented: Sendable {
        private let seen = Mutex<[String]>([])
        func append(_ identifier: String) { seen.withLock { $0.append(identifier) } }
        var all: [String] { seen.withLock { $0 } }
    }

    /// Watches `/v1/admin/events`, reconnecting while the daemon restarts, until cancelled.
    static func watch(socketPath: String, adminKeyPath: String, into presented: Presented) async {
        while !Task.isCancelled {
            if let key = try? String(contentsOfFile: adminKeyPath, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines) {
                _ = try? await LocalAPIWebSocket.withConnection(socketPath: socketPath, path: "/v1/admin/events", key: key) { connection in
                    try await connection.send(#"{"type":"subscribe"}"#)
                    for try await text in connection.messages {
                        guard let event = try? JSONDecoder().decode(LocalAPI.WatchEvent.self, from: Data(text.utf8)),
                              event.type == "presented", let shown = event.presented else { continue }
                        presented.append(shown.notification.request.identifier)
                    }
                }
            }
            try? await Task.sleep(for: .milliseconds(50))
        }
    }

    final class Counter: Sendable {
        let value: Atomic<Int>
        init(_ start: Int) { value = Atomic(start) }
    }

    /// The pushes the gateway answered `200`.
    final class Accepted: Sendable {
        private let ids = Mutex<Set<String>>([])
        func insert(_ id: String) { ids.withLock { _ = $0.insert(id) } }
        var all: Set<String> { ids.withLock { $0 } }
    }

    @Test func killingTheGatewayAndThenTheDaemonUnderPushLoadLosesNoAcceptedPushAndShowsNoneTwice() async throws {
        let directory = try makeTestDirectory()
        let environment = ServedSystem.environment(directory)
        let unotify = ChildProcess.built("unotify")
        // Chosen when the gateway first starts, and asked for again after each restart.
        let ports = Locked<(sandbox: Int, production: Int, links: Int)?>(nil)

        func run(_ arguments: [String]) async throws -> String {
            let command = try ChildProcess(unotify, arguments, environment: environment, in: directory, name: "unotify \(arguments.prefix(3).joined(separator: " "))")
            #expect(await command.waitUntilExit() == 0, "unotify \(arguments.joined(separator: " ")): \(command.lines)")
            return await command.completeOutput().last ?? ""
        }
        func startGateway(on chosen: (sandbox: Int, production: Int, links: Int)) throws -> ChildProcess {
            try ChildProcess(unotify, ["gateway", "serve", "--sandbox-port", "\(chosen.sandbox)", "--production-port", "\(chosen.production)",
                                       "--device-link-port", "\(chosen.links)", "--metrics-port", "0"], environment: environment, name: "unotify gateway")
        }
        func startGateway() async throws -> ChildProcess {
            if let chosen = ports.withLock({ $0 }) {
                let gateway = try startGateway(on: chosen)
                _ = try await gateway.gatewayPorts()
                return gateway
            }
            // Below the system's range of ephemeral ports (32768 and up here), which it hands out for
            // every port-0 bind and outgoing connection of the tests running beside this one: a port
            // from that range could be taken while the gateway is down (killed, below), and the gateway
            // could not come back on it. A port already taken here fails the first start: others are tried.
            var failures: [String] = []
            for _ in 0..<10 {
                let base = Int.random(in: 20_000..<32_000)
                let gateway = try startGateway(on: (base, base + 1, base + 2))
                do {
                    let bound = try await gateway.gatewayPorts()
                    ports.withLock { $0 = bound }
                    return gateway
                } catch {
                    failures.append("\(base): \(error)")
                    await gateway.stop(kill: true)
                }
            }
            throw GatewayPortsNotLogged(lines: failures)
        }
        let credentialPath = directory.appendingPathComponent("device.credential").path
        func startDaemon() async throws -> ChildProcess {
            let links = try #require(ports.withLock { $0 }?.links, "the gateway started first")
            let daemon = try ChildProcess(unotify, ["daemon", "--gateway", "wss://localhost:\(links)", "--gateway-credential", credentialPath,
                                                    "--gateway-ca", directory.appendingPathComponent("gateway/ca.pem").path, "--metrics-port", "0"],
                                          environment: environment, name: "unotify daemon")
            try await daemon.line(containing: "local API listening")
            return daemon
        }

        var gateway = try await startGateway()
        let sandbox = try #require(ports.withLock { $0 }?.sandbox)
        _ = try await run(["gateway", "teams", "add", "ABCDE12345", "--name", "Example"])
        _ = try await run(["gateway", "apps", "add", "com.example.todo", "--team", "ABCDE12345"])
        let keyID = try await run(["gateway", "keys", "create", "--team", "ABCDE12345"])
        let jwt = try await run(["gateway", "token", "--key", directory.appendingPathComponent("AuthKey_\(keyID).p8").path, "--key-id", keyID, "--team", "ABCDE12345"])
        try Data(try await run(["gateway", "devices", "add"]).utf8).write(to: URL(fileURLWithPath: credentialPath))
        var daemon = try await startDaemon()
        try await daemon.line(containing: "linked to the push gateway")
        _ = try await run(["apps", "add", "com.example.todo"])
        _ = try await run(["authorize", "--app", "com.example.todo", "grant"])
        let token = try await run(["apps", "token", "com.example.todo"])

        let presented = Presented()
        let watcher = Task {
            await Self.watch(socketPath: environment["UNOTIFY_SOCKET"]!, adminKeyPath: directory.appendingPathComponent("admin.key").path, into: presented)
        }
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(directory.appendingPathComponent("gateway/ca.pem").path))
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: HTTPClient.Configuration(tlsConfiguration: tls))
        let accepted = Accepted()

        /// Sends pushes `range` from eight senders; `crash` runs once `count` of them were answered 200.
        func send(_ range: Range<Int>, after count: Int, _ crash: @escaping @Sendable () async throws -> Void) async throws {
            let counter = Counter(0)
            try await withThrowingTaskGroup(of: Void.self) { group in
                let next = Counter(range.lowerBound)
                for _ in 0..<8 {
                    group.addTask {
                        while true {
                            let index = next.value.add(1, ordering: .relaxed).oldValue
                            guard index < range.upperBound else { return }
                            let id = String(format: "00000000-0000-4000-8000-%012d", index)
                            var request = HTTPClientRequest(url: "https://localhost:\(sandbox)/3/device/\(token)")
                            request.method = .POST
                            request.headers.add(name: "authorization", value: "bearer \(jwt)")
                            request.headers.add(name: "apns-topic", value: "com.example.todo")
                            request.headers.add(name: "apns-id", value: id)
                            request.body = .bytes(ByteBuffer(string: #"{"aps":{"alert":{"title":"Push \#(index)"}}}"#))
                            // A push not answered 200 (the gateway is down) is not retried: it may arrive, once, or not.
                            if let response = try? await http.execute(request, timeout: .seconds(10)), response.status == .ok {
                                accepted.insert(id)
                                counter.value.add(1, ordering: .relaxed)
                            }
                        }
                    }
                }
                group.addTask {
                    let deadline = ContinuousClock.now + .seconds(60)
                    while counter.value.load(ordering: .relaxed) < count, ContinuousClock.now < deadline { await Task.yield() }
                    try await crash()
                }
                try await group.waitForAll()
            }
        }

        do {
            // The gateway dies mid-load and comes back on the same ports; the device link resumes.
            let firstGateway = gateway
            try await send(0..<40, after: 15) {
                await firstGateway.stop(kill: true)
            }
            gateway = try await startGateway()
            // The daemon dies mid-load; what the gateway holds for it arrives once it is back.
            let firstDaemon = daemon
            try await send(40..<70, after: 10) {
                await firstDaemon.stop(kill: true)
            }
            daemon = try await startDaemon()
            try await send(70..<96, after: 0) {}

            // Every accepted push reaches the person: the list holds it (presenters may have missed the
            // events of the moment a process died, never the notification).
            let admin = LocalAPIClient(socketPath: environment["UNOTIFY_SOCKET"]!,
                                       key: try String(contentsOfFile: directory.appendingPathComponent("admin.key").path, encoding: .utf8)
                                           .trimmingCharacters(in: .whitespacesAndNewlines))
            let wanted = accepted.all
            #expect(wanted.count >= 40, "only \(wanted.count) pushes were accepted")
            try await withDeadline("every accepted push to be shown", timeout: .seconds(60)) {
                while true {
                    let shown = (try? await admin.call(.GET, "/v1/admin/notifications", as: [LocalAPI.VisibleNotification].self)) ?? []
                    if wanted.isSubset(of: Set(shown.map(\.notification.request.identifier))) { return }
                    try await Task.sleep(for: .milliseconds(100))
                }
            }
            // And nothing twice.
            let seen = presented.all
            let repeated = Dictionary(grouping: seen, by: { $0 }).filter { $0.value.count > 1 }.keys.sorted()
            #expect(repeated.isEmpty, "shown twice: \(repeated)")
        } catch {
            watcher.cancel()
            try? await http.shutdown()
            await daemon.stop()
            await gateway.stop()
            throw error
        }
        watcher.cancel()
        try await http.shutdown()
        await daemon.stop()
        await gateway.stop()
    }
}
