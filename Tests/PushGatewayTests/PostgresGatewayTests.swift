import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import NotificationCore
import Synchronization
import TestSupport
import Testing

/// The gateway on PostgreSQL (`unotify gateway --database postgres://…`), with a real PostgreSQL
/// server started by the test run and the real `unotify` binary: set up with the CLI, a device's
/// daemon linked to one node, a provider's push shown to the person whichever node took it.
@Suite(.serialized, .timeLimit(.minutes(3))) struct PostgresGatewayTests {
    /// A gateway's database, the CLI set up on it (a team, an app, a key and its token, a device),
    /// and the device's daemon.
    struct Deployment {
        let database: String
        let directory: URL
        let environment: [String: String]
        let unotify = ChildProcess.built("unotify")

        /// A deployment on a database of `server` (the tests' shared server unless given).
        init(server: PostgresServer? = nil) async throws {
            database = try (server ?? PostgresServer.shared()).newDatabase()
            directory = try makeTestDirectory()
            environment = ServedSystem.environment(directory)
        }

        /// Runs `unotify` with `arguments` (in another device's environment when given); returns its last line.
        @discardableResult
        func run(_ arguments: [String], environment: [String: String]? = nil) async throws -> String {
            let command = try ChildProcess(unotify, arguments, environment: environment ?? self.environment, in: directory,
                                           name: "unotify \(arguments.prefix(3).joined(separator: " "))")
            #expect(await command.waitUntilExit() == 0, "unotify \(arguments.joined(separator: " ")): \(command.lines)")
            return await command.completeOutput().last ?? ""
        }

        /// A gateway node on the database, with ports of its own (chosen by the system as it binds them).
        func startNode(_ name: String) async throws -> (process: ChildProcess, sandbox: Int, links: Int) {
            let node = try ChildProcess(unotify, ["gateway", "serve", "--database", database, "--sandbox-port", "0",
                                                  "--production-port", "0", "--device-link-port", "0", "--metrics-port", "0"],
                                        environment: environment, name: "unotify gateway \(name)")
            let ports = try await node.gatewayPorts()
            return (node, ports.sandbox, ports.links)
        }

        /// Sets up the provider and the device; returns the provider's JWT and the device's credential file.
        func setUp() async throws -> (jwt: String, credentialPath: String) {
            try await run(["gateway", "teams", "add", "ABCDE12345", "--name", "Example", "--database", database])
            try await run(["gateway", "apps", "add", "com.example.todo", "--team", "ABCDE12345", "--database", database])
            let keyID = try await run(["gateway", "keys", "create", "--team", "ABCDE12345", "--database", database])
            let jwt = try await run(["gateway", "token", "--key", directory.appendingPathComponent("AuthKey_\(keyID).p8").path, "--key-id", keyID,
                                     "--team", "ABCDE12345"])
            let credentialPath = directory.appendingPathComponent("device.credential").path
            try Data(try await run(["gateway", "devices", "add", "--database", database]).utf8).write(to: URL(fileURLWithPath: credentialPath))
            return (jwt, credentialPath)
        }

        /// The device's daemon, linked to the node listening on `links`, with the app allowed; returns
        /// it and the app's token.
        func startDaemon(linkingTo links: Int, credentialPath: String) async throws -> (ChildProcess, token: String) {
            let daemon = try ChildProcess(unotify, ["daemon", "--gateway", "wss://localhost:\(links)", "--gateway-credential", credentialPath,
                                                    "--gateway-ca", directory.appendingPathComponent("gateway/ca.pem").path, "--metrics-port", "0"],
                                          environment: environment, name: "unotify daemon")
            try await daemon.line(containing: "linked to the push gateway")
            try await run(["apps", "add", "com.example.todo"])
            try await run(["authorize", "--app", "com.example.todo", "grant"])
            return (daemon, try await run(["apps", "token", "com.example.todo"]))
        }

        /// A client that trusts the gateway's certificate authority.
        func providerClient() throws -> HTTPClient {
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(directory.appendingPathComponent("gateway/ca.pem").path))
            return HTTPClient(eventLoopGroupProvider: .singleton, configuration: HTTPClient.Configuration(tlsConfiguration: tls))
        }

        /// A provider's alert push to `port`, over HTTP/2 and TLS, on `client` (a new one unless given).
        func push(_ title: String, to port: Int, token: String, jwt: String, client given: HTTPClient? = nil,
                  timeout: TimeAmount = .seconds(30)) async throws -> HTTPClientResponse {
            var request = HTTPClientRequest(url: "https://localhost:\(port)/3/device/\(token)")
            request.method = .POST
            request.headers.add(name: "authorization", value: "bearer \(jwt)")
            request.headers.add(name: "apns-topic", value: "com.example.todo")
            request.body = .bytes(ByteBuffer(string: #"{"aps":{"alert":{"title":"\#(title)","body":"Through PostgreSQL"}}}"#))
            let client = try given ?? providerClient()
            defer { if given == nil { _ = client.shutdown() as EventLoopFuture<Void> } }
            return try await client.execute(request, timeout: timeout)
        }
    }

    @Test func theGatewayOnPostgresServesAProvidersPushAndASecondNodeKeepsItsState() async throws {
        let deployment = try await Deployment()
        let (first, sandbox, links) = try await deployment.startNode("A")
        #expect(first.lines.contains { $0.contains("gateway database") && $0.contains(PostgresServer.user) })
        let (jwt, credentialPath) = try await deployment.setUp()
        // Nothing of it is in the gateway's folder: the database holds it.
        #expect(!FileManager.default.fileExists(atPath: deployment.directory.appendingPathComponent("gateway/gateway.sqlite").path))
        let (daemon, token) = try await deployment.startDaemon(linkingTo: links, credentialPath: credentialPath)
        let watch = try ChildProcess(deployment.unotify, ["watch"], environment: deployment.environment, name: "unotify watch")

        let answer = try await deployment.push("Hello", to: sandbox, token: token, jwt: jwt)
        #expect(answer.status == .ok)
        try await watch.line(containing: "Hello — Through PostgreSQL")
        // The delivery log is the database's too: the push's stages, to the device's acknowledgement.
        let apnsID = try #require(answer.headers.first(name: "apns-id"))
        try await waitFor("the push to be acknowledged in the log", within: 20) {
            guard let status = try? ChildProcess(deployment.unotify, ["push", "status", apnsID, "--database", deployment.database],
                                                 environment: deployment.environment, name: "unotify push status")
            else { return false }
            _ = await status.waitUntilExit()
            return await status.completeOutput().contains { $0.contains("acknowledged") }
        }

        // Another node on the same database, after the first stopped: the team, key, app, device and
        // token are all there.
        #expect(await first.stop() == 0)
        let (second, secondSandbox, _) = try await deployment.startNode("B")
        let again = try await deployment.push("Again", to: secondSandbox, token: token, jwt: jwt)
        #expect(again.status == .ok, "the token, the key and the app were read from the database")
        #expect(try await deployment.run(["gateway", "teams", "list", "--database", deployment.database]) == "ABCDE12345  Example")
        await watch.stop()
        await daemon.stop()
        #expect(await second.stop() == 0)
    }

    /// The database stops under a provider's pushes and comes back: while it is gone the gateway
    /// answers `503 ServiceUnavailable`, and every push answered `200`, before or after, reaches the
    /// person exactly once.
    /// A change made with `unotify gateway … --database` holds on every node before the command
    /// returns: the app taken away and given back, then the key removed, each met by the next push to
    /// either node.
    @Test func aChangeHoldsOnEveryNodeBeforeTheCommandReturns() async throws {
        let deployment = try await Deployment()
        let (nodeA, sandboxA, linksA) = try await deployment.startNode("A")
        let (nodeB, sandboxB, _) = try await deployment.startNode("B")
        let (jwt, credentialPath) = try await deployment.setUp()
        let (daemon, token) = try await deployment.startDaemon(linkingTo: linksA, credentialPath: credentialPath)
        let client = try deployment.providerClient()
        defer { _ = client.shutdown() as EventLoopFuture<Void> }
        let database = deployment.database
        for port in [sandboxA, sandboxB] {
            #expect(try await deployment.push("Before", to: port, token: token, jwt: jwt, client: client).status == .ok)
        }

        try await deployment.run(["gateway", "apps", "remove", "com.example.todo", "--database", database])
        for port in [sandboxA, sandboxB] {
            // A new connection each: a token binds a connection to its team's apps as they were then.
            let response = try await deployment.push("Taken away", to: port, token: token, jwt: jwt)
            let body = String(buffer: try await response.body.collect(upTo: 4096))
            #expect(response.status == .badRequest, "\(port == sandboxA ? "A" : "B"): \(response.status) \(body)")
        }
        try await deployment.run(["gateway", "apps", "add", "com.example.todo", "--team", "ABCDE12345", "--database", database])
        for port in [sandboxB, sandboxA] {
            let response = try await deployment.push("Given back", to: port, token: token, jwt: jwt)
            let body = String(buffer: try await response.body.collect(upTo: 4096))
            #expect(response.status == .ok, "\(port == sandboxA ? "A" : "B"): \(response.status) \(body)")
        }
        let keys = try await deployment.run(["gateway", "keys", "list", "--database", database])
        let keyID = try #require(keys.split(separator: " ").first.map(String.init))
        try await deployment.run(["gateway", "keys", "remove", keyID, "--database", database])
        // A removed key stops working on the connections open with it too.
        for port in [sandboxA, sandboxB] {
            #expect(try await deployment.push("Revoked", to: port, token: token, jwt: jwt, client: client).status == .forbidden)
        }

        await daemon.stop()
        #expect(await nodeA.stop() == 0)
        #expect(await nodeB.stop() == 0)
    }

    @Test func whileTheDatabaseIsGonePushesAre503AndNothingAcceptedIsLost() async throws {
        let server = try PostgresServer.make()
        let deployment = try await Deployment(server: server)
        let (node, sandbox, links) = try await deployment.startNode("A")
        let (jwt, credentialPath) = try await deployment.setUp()
        let (daemon, token) = try await deployment.startDaemon(linkingTo: links, credentialPath: credentialPath)
        let watch = try ChildProcess(deployment.unotify, ["watch"], environment: deployment.environment, name: "unotify watch")
        try await watch.line(containing: "Watching")

        var accepted: [Int] = []
        var index = 0
        func send() async throws -> HTTPClientResponse {
            defer { index += 1 }
            let answer = try await deployment.push("Push \(index)", to: sandbox, token: token, jwt: jwt)
            if answer.status == .ok { accepted.append(index) }
            return answer
        }
        for _ in 0..<5 { #expect(try await send().status == .ok) }
        try server.stop()
        for _ in 0..<2 {
            let answer = try await send()
            #expect(answer.status == .serviceUnavailable)
            let body = try await answer.body.collect(upTo: 1024)
            #expect(String(buffer: body) == #"{"reason":"ServiceUnavailable"}"#)
        }
        try server.start()
        // The pool connects again: pushes are taken again within a few tries.
        let deadline = ContinuousClock.now + .seconds(30)
        while (try? await send().status) != .ok {
            guard ContinuousClock.now < deadline else { Issue.record("the gateway took no push within 30 s of the database's return"); return }
        }
        for _ in 0..<5 { #expect(try await send().status == .ok) }

        do {
            for accepted in accepted { try await watch.line(containing: "Push \(accepted) — Through PostgreSQL", within: 20) }
        } catch {
            Issue.record("The gateway said:\n\(node.lines.filter { !$0.contains("Connection creation") && !$0.contains("hasn't been called") }.suffix(60).joined(separator: "\n"))\nThe daemon said:\n\(daemon.lines.suffix(40).joined(separator: "\n"))")
            throw error
        }
        for accepted in accepted {
            #expect(watch.lines.count { $0.contains("Push \(accepted) — ") } == 1, "push \(accepted) shown once")
        }
        #expect(accepted.count >= 11)  // 5 before, the first after, 5 more
        await watch.stop()
        await daemon.stop()
        #expect(await node.stop() == 0)
        try server.stop()
    }

    /// Two nodes at once: the device is linked to one; a provider's push sent to the other reaches it
    /// at once (the database tells the nodes of every stored push), and so does one sent to its own.
    @Test func aPushSentToOneNodeReachesADeviceLinkedToTheOther() async throws {
        let deployment = try await Deployment()
        let (nodeA, sandboxA, linksA) = try await deployment.startNode("A")
        let (nodeB, sandboxB, _) = try await deployment.startNode("B")
        let (jwt, credentialPath) = try await deployment.setUp()
        let (daemon, token) = try await deployment.startDaemon(linkingTo: linksA, credentialPath: credentialPath)
        let watch = try ChildProcess(deployment.unotify, ["watch"], environment: deployment.environment, name: "unotify watch")
        try await watch.line(containing: "Watching")

        for (index, port) in [sandboxB, sandboxA, sandboxB].enumerated() {
            let answer = try await deployment.push("Push \(index)", to: port, token: token, jwt: jwt)
            #expect(answer.status == .ok)
            try await watch.line(containing: "Push \(index) — Through PostgreSQL", within: 10)
        }
        await watch.stop()
        await daemon.stop()
        #expect(await nodeA.stop() == 0)
        #expect(await nodeB.stop() == 0)
    }

    /// A broadcast channel on a gateway of two nodes: the provider creates it through one node, two
    /// devices (each linked to its own node) subscribe with `unotify apps subscribe`, and an alert
    /// sent to the channel through either node is shown on both.
    @Test func aBroadcastThroughEitherNodeReachesEverySubscribedDevice() async throws {
        let deployment = try await Deployment()
        let (nodeA, sandboxA, linksA) = try await deployment.startNode("A")
        let (nodeB, sandboxB, linksB) = try await deployment.startNode("B")
        let (jwt, credentialPath) = try await deployment.setUp()
        let (firstDaemon, _) = try await deployment.startDaemon(linkingTo: linksA, credentialPath: credentialPath)
        let first = (environment: deployment.environment, watch: try ChildProcess(deployment.unotify, ["watch"], environment: deployment.environment,
                                                                                  name: "unotify watch (first)"))
        let directory = try makeTestDirectory()
        let environment = ServedSystem.environment(directory)
        let credential = directory.appendingPathComponent("device.credential").path
        try Data(try await deployment.run(["gateway", "devices", "add", "--database", deployment.database]).utf8).write(to: URL(fileURLWithPath: credential))
        let secondDaemon = try ChildProcess(deployment.unotify, ["daemon", "--gateway", "wss://localhost:\(linksB)", "--gateway-credential", credential,
                                                                 "--gateway-ca", deployment.directory.appendingPathComponent("gateway/ca.pem").path,
                                                                 "--metrics-port", "0"],
                                            environment: environment, name: "unotify daemon (second)")
        try await secondDaemon.line(containing: "linked to the push gateway")
        try await deployment.run(["apps", "add", "com.example.todo"], environment: environment)
        try await deployment.run(["authorize", "--app", "com.example.todo", "grant"], environment: environment)
        let second = (environment: environment, watch: try ChildProcess(deployment.unotify, ["watch"], environment: environment, name: "unotify watch (second)"))
        try await first.watch.line(containing: "Watching")
        try await second.watch.line(containing: "Watching")

        let client = try deployment.providerClient()
        defer { _ = client.shutdown() as EventLoopFuture<Void> }
        func send(_ method: HTTPMethod, to port: Int, _ path: String, headers: [String: String] = [:], body: String) async throws -> HTTPClientResponse {
            var request = HTTPClientRequest(url: "https://localhost:\(port)\(path)")
            request.method = method
            request.headers.add(name: "authorization", value: "bearer \(jwt)")
            for (name, value) in headers { request.headers.add(name: name, value: value) }
            request.body = .bytes(ByteBuffer(string: body))
            return try await client.execute(request, timeout: .seconds(30))
        }
        let created = try await send(.POST, to: sandboxA, "/1/apps/com.example.todo/channels", body: #"{"message-storage-policy":1,"push-type":"alert"}"#)
        #expect(created.status == .created)
        let channel = try #require(created.headers.first(name: "apns-channel-id"))
        for device in [first, second] {
            #expect(try await deployment.run(["apps", "subscribe", "com.example.todo", channel], environment: device.environment)
                    == "com.example.todo subscribed to \(channel)")
        }

        for (index, port) in [sandboxB, sandboxA].enumerated() {
            let sent = try await send(.POST, to: port, "/4/broadcasts/apps/com.example.todo",
                                      headers: ["apns-channel-id": channel, "apns-push-type": "alert", "apns-priority": "10", "apns-expiration": "0"],
                                      body: #"{"aps":{"alert":{"title":"Broadcast \#(index)","body":"To every subscriber"}}}"#)
            #expect(sent.status == .ok)
            for device in [first, second] { try await device.watch.line(containing: "Broadcast \(index) — To every subscriber", within: 10) }
        }

        for process in [first.watch, second.watch, firstDaemon, secondDaemon] { await process.stop() }
        #expect(await nodeA.stop() == 0)
        #expect(await nodeB.stop() == 0)
    }

    /// One link per device, whichever node: a second daemon with the device's credential linking to
    /// another node replaces the first link, as it would on the same node (close code 4001, and the
    /// first daemon stops linking), and pushes follow the new one. The device is what the linked
    /// daemon says: the first one's apps are not on it, and their tokens answer `410`.
    @Test func aDeviceLinkingThroughAnotherNodeReplacesItsLinkToTheFirst() async throws {
        let deployment = try await Deployment()
        let (nodeA, sandboxA, linksA) = try await deployment.startNode("A")
        let (nodeB, _, linksB) = try await deployment.startNode("B")
        let (jwt, credentialPath) = try await deployment.setUp()
        let (first, token) = try await deployment.startDaemon(linkingTo: linksA, credentialPath: credentialPath)

        let directory = try makeTestDirectory()
        let environment = ServedSystem.environment(directory)
        let second = try ChildProcess(deployment.unotify, ["daemon", "--gateway", "wss://localhost:\(linksB)", "--gateway-credential", credentialPath,
                                                           "--gateway-ca", deployment.directory.appendingPathComponent("gateway/ca.pem").path,
                                                           "--metrics-port", "0"],
                                      environment: environment, name: "unotify daemon (second)")
        try await second.line(containing: "linked to the push gateway")
        try await first.line(containing: "another daemon linked to the gateway as this device", within: 10)
        try await nodeA.line(containing: "device linked to another node", within: 10)

        // The second daemon has none of the first one's apps: linking, it said so, and their tokens
        // ended (on every node). Its app, added now, is the app installed again: a new token.
        try await deployment.run(["apps", "add", "com.example.todo"], environment: environment)
        try await deployment.run(["authorize", "--app", "com.example.todo", "grant"], environment: environment)
        let reinstalled = try await deployment.run(["apps", "token", "com.example.todo"], environment: environment)
        #expect(reinstalled.count == 64 && reinstalled != token)
        #expect(try await deployment.push("Gone", to: sandboxA, token: token, jwt: jwt).status == .gone)
        let watch = try ChildProcess(deployment.unotify, ["watch"], environment: environment, name: "unotify watch (second)")
        try await watch.line(containing: "Watching")
        #expect(try await deployment.push("Followed", to: sandboxA, token: reinstalled, jwt: jwt).status == .ok)
        try await watch.line(containing: "Followed — Through PostgreSQL", within: 10)

        await watch.stop()
        await second.stop()
        await first.stop()
        #expect(await nodeA.stop() == 0)
        #expect(await nodeB.stop() == 0)
    }

    /// Three nodes, three devices each linked to its own node (and told the others' addresses), a
    /// provider pushing to every device through every node; one node is killed (`kill -9`) under the
    /// load. Every push answered `200`, by any node, before or after, is shown to its person exactly
    /// once: the killed node's device links to another node and resumes where it was.
    @Test func threeNodesLoseNothingAcceptedWhenOneIsKilledUnderLoad() async throws {
        let deployment = try await Deployment()
        var nodes: [(process: ChildProcess, sandbox: Int, links: Int)] = []
        for name in ["A", "B", "C"] { nodes.append(try await deployment.startNode(name)) }
        let (jwt, _) = try await deployment.setUp()
        let authority = deployment.directory.appendingPathComponent("gateway/ca.pem").path

        var devices: [(daemon: ChildProcess, watch: ChildProcess, token: String)] = []
        for index in 0..<3 {
            let directory = try makeTestDirectory()
            let environment = ServedSystem.environment(directory)
            let credential = directory.appendingPathComponent("device.credential").path
            try Data(try await deployment.run(["gateway", "devices", "add", "--database", deployment.database]).utf8).write(to: URL(fileURLWithPath: credential))
            // Its own node first, then the others: each reconnection tries the next.
            let addresses = (0..<3).map { "wss://localhost:\(nodes[(index + $0) % 3].links)" }.joined(separator: ",")
            let daemon = try ChildProcess(deployment.unotify, ["daemon", "--gateway", addresses, "--gateway-credential", credential,
                                                               "--gateway-ca", authority, "--metrics-port", "0"],
                                          environment: environment, name: "unotify daemon \(index)")
            try await daemon.line(containing: "linked to the push gateway")
            try await deployment.run(["apps", "add", "com.example.todo"], environment: environment)
            try await deployment.run(["authorize", "--app", "com.example.todo", "grant"], environment: environment)
            let token = try await deployment.run(["apps", "token", "com.example.todo"], environment: environment)
            let watch = try ChildProcess(deployment.unotify, ["watch"], environment: environment, name: "unotify watch \(index)")
            try await watch.line(containing: "Watching")
            devices.append((daemon, watch, token))
        }

        // Two senders per node, each to every device in turn; node B is killed while they send.
        let clients = try nodes.map { _ in try deployment.providerClient() }
        let load = LoadRecord()
        let tokens = devices.map(\.token)
        let ports = nodes.map(\.sandbox)
        let killedNode = nodes[1].process
        await withTaskGroup(of: Void.self) { group in
            for node in 0..<3 {
                for sender in 0..<2 {
                    group.addTask {
                        for index in 0..<30 {
                            if node == 1, sender == 0, index == 10, load.firstToKill() {
                                _ = await killedNode.stop(kill: true)
                            }
                            let device = index % 3
                            let title = "push-\(node)-\(sender)-\(index)"
                            load.record(.sent, device, title)
                            // As a provider behind a load balancer: a node that does not answer is left out from then on.
                            for attempt in 0..<3 {
                                let target = (node + attempt) % 3
                                guard !load.isDown(target) else { continue }
                                guard let answer = try? await deployment.push(title, to: ports[target], token: tokens[device], jwt: jwt,
                                                                              client: clients[target], timeout: .seconds(5))
                                else {
                                    load.setDown(target)
                                    load.unanswered(title)
                                    continue
                                }
                                if answer.status == .ok { load.record(.accepted, device, title) }
                                break
                            }
                        }
                    }
                }
            }
        }
        for client in clients { try? await client.shutdown() }

        let acceptedPushes = load.pushes(.accepted)
        // B's pushes after it was killed went to another node.
        #expect(acceptedPushes.count == 180)
        do {
            for (device, title) in acceptedPushes { try await devices[device].watch.line(containing: "\(title) — Through PostgreSQL", within: 20) }
        } catch {
            Issue.record("""
                Node A said:\n\(nodes[0].process.lines.suffix(30).joined(separator: "\n"))
                Node C said:\n\(nodes[2].process.lines.suffix(30).joined(separator: "\n"))
                Watch 0 said:\n\(devices[0].watch.lines.suffix(30).joined(separator: "\n"))
                Device 0 said:\n\(devices[0].daemon.lines.suffix(30).joined(separator: "\n"))
                Device 1 said:\n\(devices[1].daemon.lines.suffix(30).joined(separator: "\n"))
                """)
            throw error
        }
        // Once each, but for a request its node died with before answering: the node may have stored
        // it, and the provider sent it again (at least once, as on APNs).
        for (device, title) in load.pushes(.sent) {
            let shown = devices[device].watch.lines.count { $0.contains("\(title) — ") }
            #expect(shown <= 1 + load.unansweredCount(title), "\(title) shown \(shown) times")
        }
        #expect(devices[1].daemon.lines.contains { $0.contains("linked to the push gateway") && !$0.contains(":\(nodes[1].links)") },
                "the killed node's device linked to another node")
        for device in devices {
            await device.watch.stop()
            await device.daemon.stop()
        }
        #expect(await nodes[0].process.stop() == 0)
        #expect(await nodes[2].process.stop() == 0)
    }
}

/// What a load of pushes did: which were sent, which were answered `200`; whether a node was killed,
/// and which nodes stopped answering.
private final class LoadRecord: Sendable {
    enum Outcome { case sent, accepted }

    private let state = Mutex<(sent: [(Int, String)], accepted: [(Int, String)], killed: Bool, down: Set<Int>, unanswered: [String: Int])>(
        ([], [], false, [], [:]))

    /// A request of `title` got no answer (its node died with it): the node may have stored it, and
    /// the provider sends it again, a push of its own.
    func unanswered(_ title: String) { state.withLock { $0.unanswered[title, default: 0] += 1 } }
    func unansweredCount(_ title: String) -> Int { state.withLock { $0.unanswered[title] ?? 0 } }

    func setDown(_ node: Int) { state.withLock { _ = $0.down.insert(node) } }
    func isDown(_ node: Int) -> Bool { state.withLock { $0.down.contains(node) } }

    func record(_ outcome: Outcome, _ device: Int, _ title: String) {
        state.withLock { state in
            switch outcome {
            case .sent: state.sent.append((device, title))
            case .accepted: state.accepted.append((device, title))
            }
        }
    }

    func pushes(_ outcome: Outcome) -> [(device: Int, title: String)] {
        state.withLock { outcome == .sent ? $0.sent : $0.accepted }
    }

    /// True for the first caller only.
    func firstToKill() -> Bool {
        state.withLock { state in
            defer { state.killed = true }
            return !state.killed
        }
    }
}
