import AsyncHTTPClient
import Foundation
import NIOCore
import NIOSSL
import NotificationCore
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

        init() async throws {
            database = try await PostgresServer.newDatabase()
            directory = try makeTestDirectory()
            environment = QuickStartTests.environment(directory)
        }

        @discardableResult
        func run(_ arguments: [String]) async throws -> String {
            let command = try ChildProcess(unotify, arguments, environment: environment, in: directory, name: "unotify \(arguments.prefix(3).joined(separator: " "))")
            #expect(await command.waitUntilExit() == 0, "unotify \(arguments.joined(separator: " ")): \(command.lines)")
            return await command.completeOutput().last ?? ""
        }

        /// A gateway node on the database, with ports of its own.
        func startNode(_ name: String) async throws -> (process: ChildProcess, sandbox: Int, links: Int) {
            let (sandbox, production, links) = (try PushCrashSafetyTests.freePort(), try PushCrashSafetyTests.freePort(), try PushCrashSafetyTests.freePort())
            let node = try ChildProcess(unotify, ["gateway", "serve", "--database", database, "--sandbox-port", "\(sandbox)",
                                                  "--production-port", "\(production)", "--device-link-port", "\(links)", "--metrics-port", "0"],
                                        environment: environment, name: "unotify gateway \(name)")
            try await node.line(containing: "environment=sandbox")
            return (node, sandbox, links)
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

        /// A provider's alert push to `port`, over HTTP/2 and TLS.
        func push(_ title: String, to port: Int, token: String, jwt: String) async throws -> HTTPClientResponse {
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(directory.appendingPathComponent("gateway/ca.pem").path))
            var request = HTTPClientRequest(url: "https://localhost:\(port)/3/device/\(token)")
            request.method = .POST
            request.headers.add(name: "authorization", value: "bearer \(jwt)")
            request.headers.add(name: "apns-topic", value: "com.example.todo")
            request.body = .bytes(ByteBuffer(string: #"{"aps":{"alert":{"title":"\#(title)","body":"Through PostgreSQL"}}}"#))
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: HTTPClient.Configuration(tlsConfiguration: tls))
            defer { _ = client.shutdown() as EventLoopFuture<Void> }
            return try await client.execute(request, timeout: .seconds(10))
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
}
