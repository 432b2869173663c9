import AsyncHTTPClient
import DaemonTestSupport
import Foundation
import NotificationCore
import NotificationDaemonClient
import ProcessSpawning
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
import TestSupport
#endif

/// The real `unotify daemon` process, started and killed by a test.
final class DaemonProcess: Sendable {
    let directory: URL
    let socketPath: String
    private let process: SpawnedProcess
    private let output = LogText()

    /// What the daemon has logged so far, for the failure message of a test that needs it.
    var log: String { output.text.withLock { $0 } }

    final class LogText: Sendable {
        let text = Mutex("")
    }

    /// The `unotify` executable built beside the test bundle.
    static var executable: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("unotify")
    }

    /// Starts the daemon over `directory`, with `arguments` after the usual ones, and returns once it
    /// listens (it says so on its log).
    init(directory: URL, arguments extra: [String] = []) async throws {
        self.directory = directory
        socketPath = directory.appendingPathComponent("unotify.sock").path
        let executable = Self.executable
        guard FileManager.default.isExecutableFile(atPath: executable.path) else {
            throw LocalAPIClientError.transport("\(executable.path) is missing: build everything first (`swift build --build-tests`).")
        }
        let errors = Pipe()
        let (listening, continuation) = AsyncStream<Void>.makeStream()
        let log = output
        PipeReader.start(errors.fileHandleForReading, name: "unotify daemon") { data in
            let text = String(decoding: data, as: UTF8.self)
            let all = log.text.withLock { $0 += text; return $0 }
            if all.contains("local API listening") { continuation.yield() }
            if text.isEmpty { continuation.finish() }
        }
        let process = try SpawnedProcess.spawn(
            executable.path,
            arguments: ["daemon", "--data-dir", directory.path, "--socket", socketPath, "--log-level", "info", "--metrics-port", "0"] + extra,
            standardOutput: .null,
            standardError: .descriptor(errors.fileHandleForWriting.fileDescriptor)
        )
        try? errors.fileHandleForWriting.close()
        self.process = process
        let started = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                var iterator = listening.makeAsyncIterator()
                return await iterator.next() != nil
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(30))
                return false
            }
            let first = await group.next()!
            group.cancelAll()
            return first
        }
        guard started else {
            process.send(SIGTERM)
            throw LocalAPIClientError.transport("The daemon did not start listening within 30 s. Its log: \(log.text.withLock { $0 })")
        }
    }

    var admin: LocalAPIClient {
        get throws {
            let key = try String(contentsOf: directory.appendingPathComponent("admin.key"), encoding: .utf8)
            return LocalAPIClient(socketPath: socketPath, key: key.trimmingCharacters(in: .whitespacesAndNewlines))
        }
    }

    /// Registers an app and grants it alerts, sounds and badges; returns a client authenticated as it.
    func registerAuthorizedApp(_ bundleIdentifier: String) async throws -> LocalAPIClient {
        let admin = try self.admin
        let issued = try await admin.call(.POST, "/v1/admin/apps", body: LocalAPI.RegisterApp(bundleIdentifier: bundleIdentifier), as: LocalAPI.AppKey.self)
        _ = try await admin.call(.POST, "/v1/admin/apps/\(bundleIdentifier)/authorization",
                                 body: LocalAPI.AuthorizationDecision(decision: "grant"), as: NotificationSettings.self)
        return LocalAPIClient(socketPath: socketPath, key: issued.key)
    }

    /// Kills the process with SIGKILL, as a crash or a power cut would stop it, and waits for it to be gone.
    func kill9() {
        process.send(SIGKILL)
        process.waitUntilExit()
    }

    /// Stops it gracefully.
    func stop() {
        process.send(SIGTERM)
        process.waitUntilExit()
    }
}

/// A `kill -9` at any moment loses no accepted request and no queued response, and never delivers a
/// one-shot notification twice. These run the real `unotify` executable.
@Suite(.serialized, .timeLimit(.minutes(5))) struct CrashSafetyTests {
    @Test func killingTheDaemonMidLoadLosesNoAcceptedRequest() async throws {
        let directory = try makeTestDirectory()
        let first = try await DaemonProcess(directory: directory)
        let app = try await first.registerAuthorizedApp("com.example.load")
        let issued = LocalAPI.AppKey(bundleIdentifier: "com.example.load", key: app.key)

        // Four writers add requests as fast as they can; the daemon is killed while they are at it. Two
        // writers add requests delivered at once; two add location requests, which stay pending (and,
        // like Apple's, do not count towards the limit of 64 dated requests).
        let accepted = AcceptedRequests()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<4 {
                group.addTask {
                    for index in 0..<10_000 {
                        let identifier = (writer < 2 ? "now" : "place") + "-\(writer)-\(index)"
                        var content = NotificationContent()
                        content.title = identifier
                        let region = CircularRegion(identifier: identifier, center: Coordinate(latitude: 0, longitude: 0), radius: 10)
                        let trigger: NotificationTrigger? = writer < 2 ? nil : .location(region, repeats: false)
                        do {
                            try await app.call(.POST, "/v1/requests", body: NotificationRequest(identifier: identifier, content: content, trigger: trigger))
                            accepted.insert(identifier)
                        } catch {
                            return // the daemon is gone
                        }
                    }
                }
            }
            group.addTask {
                // Kill once a good number were accepted, without waiting for the writers.
                while accepted.all.count < 300 { await Task.yield() }
                first.kill9()
            }
            try await group.waitForAll()
        }
        let acceptedBeforeCrash = accepted.all
        #expect(acceptedBeforeCrash.count >= 300)

        let second = try await DaemonProcess(directory: directory)
        defer { second.stop() }
        // A client of its own: the shared one's connection pool for this socket may still be backing
        // off from the writers' failed attempts on the dead daemon, and answer "connection refused"
        // without trying (seen under load in CI).
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        let restarted = LocalAPIClient(socketPath: second.socketPath, key: issued.key, http: http)
        let pending: [String]
        let delivered: [String]
        do {
            pending = try await restarted.call(.GET, "/v1/requests", as: [LocalAPI.PendingRequest].self).map(\.request.identifier)
            delivered = try await restarted.call(.GET, "/v1/delivered", as: [DeliveredNotification].self).map(\.request.identifier)
            try await http.shutdown()
        } catch {
            try? await http.shutdown()
            Issue.record("The restarted daemon did not answer: \(error). Its log:\n\(second.log)")
            throw error
        }
        let kept = Set(pending).union(delivered)
        #expect(kept.count == pending.count + delivered.count, "nothing is both pending and delivered, nor kept twice")
        let acceptedPlaces = acceptedBeforeCrash.filter { $0.hasPrefix("place") }
        #expect(acceptedPlaces.isSubset(of: Set(pending)), "lost: \(acceptedPlaces.subtracting(pending).sorted().prefix(10))")
        // Every one-shot notification delivered before the crash is delivered, not pending: it cannot fire
        // again. The person sees at most 100 of an app's notifications, the newest: of each writer's,
        // every one accepted after the oldest still shown is shown.
        #expect(Set(pending).allSatisfy { $0.hasPrefix("place") })
        let acceptedNow = acceptedBeforeCrash.filter { $0.hasPrefix("now") }
        let deliveredNow = delivered.filter { $0.hasPrefix("now") }
        #expect(deliveredNow.count >= min(100, acceptedNow.count) && deliveredNow.count <= 100)
        for writer in 0..<2 {
            let prefix = "now-\(writer)-"
            func index(_ identifier: String) -> Int { Int(identifier.dropFirst(prefix.count))! }
            guard let oldestShown = deliveredNow.filter({ $0.hasPrefix(prefix) }).map(index).min() else { continue }
            let expected = acceptedNow.filter { $0.hasPrefix(prefix) && index($0) >= oldestShown }
            #expect(expected.isSubset(of: Set(delivered)), "lost: \(expected.subtracting(delivered).sorted().prefix(10))")
        }
    }

    @Test func queuedResponsesSurviveACrashAndArriveOnceInOrder() async throws {
        let directory = try makeTestDirectory()
        let first = try await DaemonProcess(directory: directory)
        let admin = try first.admin
        let app = try await first.registerAuthorizedApp("com.example.todo")
        let issued = LocalAPI.AppKey(bundleIdentifier: "com.example.todo", key: app.key)
        for identifier in ["a", "b", "c", "d"] {
            var content = NotificationContent()
            content.title = identifier
            try await app.call(.POST, "/v1/requests", body: NotificationRequest(identifier: identifier, content: content, trigger: nil))
        }
        // The app is not running: the person's taps wait for it.
        for identifier in ["c", "a", "d", "b"] {
            try await admin.call(.POST, "/v1/admin/apps/com.example.todo/notifications/\(identifier)/respond", body: LocalAPI.Respond(kind: "open"))
        }
        first.kill9()

        let second = try await DaemonProcess(directory: directory)
        defer { second.stop() }
        let adminKey = try second.admin.key
        let received = try await LocalAPIWebSocket.withConnection(socketPath: second.socketPath, path: "/v1/admin/events", key: adminKey) { watch in
            try await watch.send(#"{"type":"subscribe"}"#)
            let received = try await LocalAPIWebSocket.withConnection(socketPath: second.socketPath, path: "/v1/events", key: issued.key) { stream in
                try await stream.send(#"{"type":"state","state":"background"}"#)
                var order: [String] = []
                for try await text in stream.messages {
                    guard case .call(.response(let ticket, let response)) = try JSONDecoder().decode(LocalAPI.AppEvent.self, from: Data(text.utf8)) else { continue }
                    order.append(response.notification.request.identifier)
                    try await stream.send(String(decoding: try JSONEncoder().encode(LocalAPI.AppReply.responseCompleted(ticket: ticket)), as: UTF8.self))
                    if order.count == 4 { break }
                }
                return order
            }
            // The app stopping is told only once its step is durable, and that step comes after the
            // confirmations it sent before it closed: from then on they are durable too.
            for try await text in watch.messages {
                let event = try JSONDecoder().decode(LocalAPI.WatchEvent.self, from: Data(text.utf8))
                if event.type == "appStateChanged", event.appState == .notRunning { break }
            }
            return received
        }
        #expect(received == ["c", "a", "d", "b"])

        // Confirmed responses are never handed over again, not even after another crash. A response
        // given after the app connects comes after anything still queued for it: it must come first.
        second.kill9()
        let third = try await DaemonProcess(directory: directory)
        defer { third.stop() }
        var content = NotificationContent()
        content.title = "sentinel"
        let restarted = LocalAPIClient(socketPath: third.socketPath, key: issued.key)
        try await restarted.call(.POST, "/v1/requests", body: NotificationRequest(identifier: "sentinel", content: content, trigger: nil))
        let thirdAdmin = try third.admin
        let again = try await LocalAPIWebSocket.withConnection(socketPath: third.socketPath, path: "/v1/events", key: issued.key) { stream in
            try await stream.send(#"{"type":"state","state":"background"}"#)
            var responses: [String] = []
            for try await text in stream.messages {
                let event = try JSONDecoder().decode(LocalAPI.AppEvent.self, from: Data(text.utf8))
                if case .connected = event {
                    try await thirdAdmin.call(.POST, "/v1/admin/apps/com.example.todo/notifications/sentinel/respond", body: LocalAPI.Respond(kind: "open"))
                }
                guard case .call(.response(_, let response)) = event else { continue }
                responses.append(response.notification.request.identifier)
                if response.notification.request.identifier == "sentinel" { break }
            }
            return responses
        }
        #expect(again == ["sentinel"])
    }

    @Test func killingTheDaemonDuringATakeoverLosesNoResponseAndHandsNoneTwice() async throws {
        let directory = try makeTestDirectory()
        let first = try await DaemonProcess(directory: directory)
        let admin = try first.admin
        let app = try await first.registerAuthorizedApp("com.example.todo")
        let key = app.key
        for identifier in ["a", "sentinel"] {
            var content = NotificationContent()
            content.title = identifier
            try await app.call(.POST, "/v1/requests", body: NotificationRequest(identifier: identifier, content: content, trigger: nil))
        }
        try await admin.call(.POST, "/v1/admin/apps/com.example.todo/notifications/a/respond", body: LocalAPI.Respond(kind: "open"))

        // The first process gets the response and, before confirming it, a second process takes over; the
        // daemon is killed in the middle of the takeover.
        let ticket = try await LocalAPIWebSocket.withConnection(socketPath: first.socketPath, path: "/v1/events", key: key) { stream in
            try await stream.send(#"{"type":"state","state":"background"}"#)
            var ticket: UInt64?
            for try await text in stream.messages {
                let event = try JSONDecoder().decode(LocalAPI.AppEvent.self, from: Data(text.utf8))
                if case .call(.response(let handed, _)) = event {
                    ticket = handed
                    Task {
                        try? await LocalAPIWebSocket.withConnection(socketPath: first.socketPath, path: "/v1/events", key: key) { second in
                            try await second.send(#"{"type":"state","state":"foreground"}"#)
                            for try await _ in second.messages {}
                        }
                    }
                }
                if event == .replaced {
                    first.kill9()
                    break
                }
            }
            return ticket
        }
        let handed = try #require(ticket)

        let second = try await DaemonProcess(directory: directory)
        defer { second.stop() }
        let restartedAdmin = try second.admin
        let received = try await LocalAPIWebSocket.withConnection(socketPath: second.socketPath, path: "/v1/events", key: key) { stream in
            try await stream.send(#"{"type":"state","state":"background"}"#)
            var received: [(UInt64, String)] = []
            for try await text in stream.messages {
                guard case .call(.response(let ticket, let response)) = try JSONDecoder().decode(LocalAPI.AppEvent.self, from: Data(text.utf8)) else { continue }
                received.append((ticket, response.notification.request.identifier))
                try await stream.send(String(decoding: try JSONEncoder().encode(LocalAPI.AppReply.responseCompleted(ticket: ticket)), as: UTF8.self))
                if received.count == 1 {
                    // A response given now comes after anything still queued: had "a" been queued twice, it would come first.
                    try await restartedAdmin.call(.POST, "/v1/admin/apps/com.example.todo/notifications/sentinel/respond", body: LocalAPI.Respond(kind: "open"))
                }
                if response.notification.request.identifier == "sentinel" { break }
            }
            return received
        }
        #expect(received.map(\.1) == ["a", "sentinel"], "the unconfirmed response arrived once after the crash, and nothing twice")
        #expect(received.first?.0 == handed, "with the ticket it had")
    }

    @Test func aDaemonWithRoomForOneAppInMemoryKeepsEveryAppsRequestsApart() async throws {
        let directory = try makeTestDirectory()
        let daemon = try await DaemonProcess(directory: directory, arguments: ["--cached-apps", "1", "--cache-memory", "2M"])
        defer { daemon.stop() }
        let apps = ["com.example.a", "com.example.b", "com.example.c"]
        var clients: [LocalAPIClient] = []
        for app in apps { clients.append(try await daemon.registerAuthorizedApp(app)) }
        var content = NotificationContent()
        content.title = "In memory or not"
        // In turns, so that each add finds its app gone from memory and reads it back.
        for round in 0..<3 {
            for (index, client) in clients.enumerated() {
                try await client.call(.POST, "/v1/requests", body: NotificationRequest(
                    identifier: "\(apps[index])-\(round)", content: content, trigger: .timeInterval(3600, repeats: false)))
            }
        }
        for (index, client) in clients.enumerated() {
            let pending = try await client.call(.GET, "/v1/requests", as: [LocalAPI.PendingRequest].self).map(\.request.identifier)
            #expect(pending.sorted() == (0..<3).map { "\(apps[index])-\($0)" }, "\(apps[index]) sees its own three")
        }

        func refusal(_ arguments: [String]) throws -> String {
            let refused = Pipe()
            let process = try SpawnedProcess.spawn(
                DaemonProcess.executable.path,
                arguments: ["daemon", "--data-dir", try makeTestDirectory().path, "--metrics-port", "0"] + arguments,
                standardError: .descriptor(refused.fileHandleForWriting.fileDescriptor)
            )
            try refused.fileHandleForWriting.close()
            let output = String(decoding: refused.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            #expect(process.waitUntilExit() != .exited(0), "\(arguments)")
            return output
        }
        #expect(try refusal(["--cached-apps", "0"]).contains("--cached-apps needs at least 1"))
        for size in ["0", "512K", "lots", "1.5G", "1T"] {
            #expect(try refusal(["--cache-memory", size]).contains("--cache-memory is a size of at least 1M"), "\(size)")
        }
    }

    @Test func aCorruptDatabaseIsReportedAtStartAndLeftAlone() async throws {
        let directory = try makeTestDirectory()
        let database = directory.appendingPathComponent("unotify.sqlite")
        let garbage = Data(repeating: 0x42, count: 8192)
        try garbage.write(to: database)
        let errors = Pipe()
        let process = try SpawnedProcess.spawn(
            DaemonProcess.executable.path,
            arguments: ["daemon", "--data-dir", directory.path, "--socket", directory.appendingPathComponent("s.sock").path, "--metrics-port", "0"],
            standardError: .descriptor(errors.fileHandleForWriting.fileDescriptor)
        )
        try errors.fileHandleForWriting.close()
        let output = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.waitUntilExit() != .exited(0))
        #expect(output.contains(database.path))
        #expect(output.contains("cannot be read"))
        #expect(try Data(contentsOf: database) == garbage, "nothing was changed")
    }
}

/// The identifiers the daemon accepted, from several writers at once.
final class AcceptedRequests: Sendable {
    private let identifiers = Mutex<Set<String>>([])
    func insert(_ identifier: String) { identifiers.withLock { _ = $0.insert(identifier) } }
    var all: Set<String> { identifiers.withLock { $0 } }
}
