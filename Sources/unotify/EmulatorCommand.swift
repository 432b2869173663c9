import APNsEmulator
import ArgumentParser
import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NotificationCore
import PrivateFiles
import PushGateway
import ServiceLifecycle
import UnixSignals

/// `unotify emulator`: the APNs emulator for providers' tests, and the commands that drive a running one.
struct EmulatorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "emulator",
        abstract: "Run an APNs emulator for a provider's tests: a clock you move, faults you script, devices you read.",
        discussion: """
            `unotify emulator run --topic com.example.app` starts one in about a second, on free ports, with nothing left behind when it stops: it prints (and writes to --endpoints-file) the endpoints, the CA to trust, a team, a signing key and its .p8, and a token per simulated device. Its answers are the gateway's. Then, from the test or another shell: `unotify emulator clock advance 61m`, `unotify emulator fault add status --reason Unregistered --token …`, `unotify emulator received --token … --wait 3`. Those commands find the emulator with --emulator, else $UNOTIFY_EMULATOR, else the file the last one started wrote (Docs/emulator.md).
            """,
        subcommands: [Run.self, Show.self, Clock.self, FaultCommand.self, Devices.self, Received.self, Log.self],
        defaultSubcommand: Run.self
    )

    /// Where a running emulator says where it is when no --endpoints-file is asked for, for the
    /// commands run after it: one per user.
    static var lastStartedFile: URL {
        let environment = ProcessInfo.processInfo.environment
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
            return URL(fileURLWithPath: runtime).appendingPathComponent("unotify-emulator.json")
        }
        return URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("unotify-emulator-\(getuid()).json")
    }

    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Run the emulator until stopped (Ctrl-C, SIGTERM).")

        @Option(name: .long, help: ArgumentHelp("An app the simulated devices have, with how many devices (com.example.app=3; default --devices). Repeatable.", valueName: "topic[=devices]"))
        var topic: [String] = []
        @Option(name: .long, help: "Simulated devices per topic, for a topic given without =N.") var devices = 1
        @Option(name: .long, help: "The team's identifier (10 upper-case letters or digits).") var team = "EMULATOR01"
        @Option(name: .long, help: "The signing key's identifier. Default: made up.") var keyID: String?
        @Option(name: .long, help: ArgumentHelp("A .p8 to use as the team's signing key, such as the test key a backend's configuration names. Default: a new one.", valueName: "file.p8"))
        var key: String?
        @Flag(name: .long, help: "Time moves only when told (`unotify emulator clock advance`), rather than with the system's clock and when told.")
        var frozenClock = false
        @Option(name: .long, help: "When the simulated devices acknowledge pushes: immediately, never, or after a delay such as 2s.")
        var acknowledge = "immediately"
        @Option(name: .long, help: "sandbox or production: the environment of the simulated devices' tokens.") var environment: APNs.Environment = .sandbox
        @Option(name: .long, help: "The address to listen on (loopback unless told otherwise).") var host = "127.0.0.1"
        @Option(name: .long, help: "The sandbox endpoint's port (0: a free one).") var sandboxPort = 0
        @Option(name: .long, help: "The production endpoint's port (0: a free one).") var productionPort = 0
        @Option(name: .long, help: "The port a real daemon links to (0: a free one).") var deviceLinkPort = 0
        @Option(name: .long, help: "The control API's port (0: a free one).") var controlPort = 0
        @Option(name: .long, help: ArgumentHelp("Write the endpoints, CA, team, key and tokens here as JSON once ready (removed at stop).", valueName: "file.json"))
        var endpointsFile: String?
        @Option(name: .long, help: ArgumentHelp("Write the same as shell variables (UNOTIFY_EMULATOR_SANDBOX=…) here, for `source` (removed at stop).", valueName: "file"))
        var envFile: String?
        @Option(name: .long, help: "trace, debug, info, notice, warning, error or critical.") var logLevel = "warning"

        func validate() throws {
            for entry in topic {
                let (name, count) = try Self.parse(entry, default: devices)
                if let violation = RequestRules.violation(inBundleIdentifier: name) { throw ValidationError(violation.message) }
                guard count >= 0, count <= 100_000 else { throw ValidationError("\(name): 0 to 100000 devices, not \(count).") }
            }
            guard AppleIdentifier.isValid(team) else {
                throw ValidationError("A team identifier is 10 upper-case letters or digits, such as ABCDE12345.")
            }
            if let keyID, !AppleIdentifier.isValid(keyID) {
                throw ValidationError("A key identifier is 10 upper-case letters or digits.")
            }
            guard AcknowledgementTiming(acknowledge) != nil else { throw ValidationError("--acknowledge is immediately, never, or a delay such as 2s.") }
        }

        /// `com.example.app=3`, or `com.example.app` with `devices` of them.
        static func parse(_ entry: String, default devices: Int) throws -> (String, Int) {
            guard let equals = entry.firstIndex(of: "=") else { return (entry, devices) }
            guard let count = Int(entry[entry.index(after: equals)...]) else { throw ValidationError("\(entry): write a topic as com.example.app=3.") }
            return (String(entry[..<equals]), count)
        }

        func run() async throws {
            ServerProcess.prepare()
            umask(0o077)
            var logger = Logger(label: "unotify.emulator")
            logger.logLevel = Logger.Level(rawValue: logLevel) ?? .warning
            Self.removeLeftovers()
            let parent = Self.parentFolder()
            var template = Array(parent.appendingPathComponent("unotify-emulator-XXXXXX").path.utf8CString)
            guard let made = mkdtemp(&template) else { throw CommandFailure("Could not make the emulator's folder in \(parent.path).") }
            let folder = URL(fileURLWithPath: String(cString: made))
            defer { try? FileManager.default.removeItem(at: folder) }

            var configuration = EmulatorConfiguration(folder: folder)
            configuration.topics = try topic.map { try Self.parse($0, default: devices) }.map { (topic: $0.0, devices: $0.1) }
            configuration.teamID = team
            configuration.keyID = keyID
            if let key {
                do { configuration.keyPEM = try String(contentsOfFile: key, encoding: .utf8) } catch { throw CommandFailure("Could not read \(key).") }
            }
            configuration.frozenClock = frozenClock
            configuration.acknowledgement = AcknowledgementTiming(acknowledge) ?? .immediately
            configuration.environment = environment
            configuration.host = host
            configuration.sandboxPort = sandboxPort
            configuration.productionPort = productionPort
            configuration.deviceLinkPort = deviceLinkPort
            configuration.controlPort = controlPort

            let written = [endpointsFile, envFile].compactMap { $0 } + [EmulatorCommand.lastStartedFile.path]
            defer { for path in written { Self.removeIfOurs(path) } }
            let (endpointsFile, envFile) = (self.endpointsFile, self.envFile)
            let emulator: Emulator
            do {
                emulator = try await Emulator(configuration: configuration, logger: logger) { document in
                    if let endpointsFile { PrivateFiles.replaceFile(atPath: endpointsFile, contents: document.json()) }
                    PrivateFiles.replaceFile(atPath: EmulatorCommand.lastStartedFile.path, contents: document.json())
                    if let envFile { PrivateFiles.replaceFile(atPath: envFile, contents: Data(document.shellVariables().utf8)) }
                    // Unbuffered: a test or a person reads it at once, whatever stdout is.
                    FileHandle.standardOutput.write(Data((Self.summary(document, endpointsFile: endpointsFile ?? EmulatorCommand.lastStartedFile.path) + "\n").utf8))
                }
            } catch let error as EmulatorError {
                throw CommandFailure(error.message)
            }
            if !["127.0.0.1", "::1", "localhost"].contains(host) {
                // Said whatever the log level: anyone who reaches the control API scripts the emulator.
                FileHandle.standardError.write(Data("Warning: the emulator listens on \(host): its control API has no authentication, and anyone who reaches it can move its clock and script its faults.\n".utf8))
            }
            let group = ServiceGroup(services: emulator.services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
            try await group.run()
        }

        /// What a person reads once it is ready.
        static func summary(_ document: EmulatorDocument, endpointsFile: String) -> String {
            var lines = [
                "APNs emulator ready (clock: \(document.frozenClock ? "frozen, moves when told" : "the system's, moved forward when told")).",
                "  sandbox      \(document.sandbox)",
                "  production   \(document.production)",
                "  device link  \(document.deviceLink)",
                "  control API  \(document.control)",
                "  CA           \(document.caFile)",
                "  team \(document.teamID), key \(document.keyID): \(document.keyFile)",
            ]
            for (topic, tokens) in document.topics.sorted(by: { $0.key < $1.key }) {
                lines.append("  \(topic): \(tokens.count) simulated device\(tokens.count == 1 ? "" : "s")")
                lines += tokens.prefix(5).map { "    \($0)" }
                if tokens.count > 5 { lines.append("    … \(tokens.count - 5) more in the endpoints file") }
            }
            lines.append("Endpoints file: \(endpointsFile)")
            return lines.joined(separator: "\n")
        }

        /// Where the emulator's folder goes: in memory (`/dev/shm`) when it has a gigabyte free, as
        /// nothing in it outlives the emulator and a sync there costs nothing; else the temporary
        /// directory.
        static func parentFolder() -> URL {
            var space = statvfs()
            if access("/dev/shm", W_OK) == 0, statvfs("/dev/shm", &space) == 0, UInt64(space.f_bavail) * UInt64(space.f_frsize) >= 1 << 30 {
                return URL(fileURLWithPath: "/dev/shm")
            }
            return URL(fileURLWithPath: NSTemporaryDirectory())
        }

        /// Removes the folders of emulators that were killed (`kill -9` leaves its folder): those
        /// whose gateway's `endpoints.json` names a process that is gone, and those an hour old
        /// without one (killed while starting).
        static func removeLeftovers() {
            for parent in Set([URL(fileURLWithPath: "/dev/shm"), URL(fileURLWithPath: NSTemporaryDirectory())]) {
                removeLeftovers(in: parent)
            }
        }

        private static func removeLeftovers(in temporary: URL) {
            let files = FileManager.default
            for name in (try? files.contentsOfDirectory(atPath: temporary.path)) ?? [] where name.hasPrefix("unotify-emulator-") {
                let folder = temporary.appendingPathComponent(name)
                guard let attributes = try? files.attributesOfItem(atPath: folder.path), attributes[.type] as? FileAttributeType == .typeDirectory,
                      (attributes[.ownerAccountID] as? NSNumber)?.uint32Value == getuid() else { continue }
                if let data = files.contents(atPath: folder.appendingPathComponent("endpoints.json").path),
                   let pid = (try? JSONSerialization.jsonObject(with: data) as? [String: Any])?["pid"] as? Int {
                    guard kill(pid_t(pid), 0) != 0, errno == ESRCH else { continue }
                } else {
                    guard let modified = attributes[.modificationDate] as? Date, modified < Date().addingTimeInterval(-3_600) else { continue }
                }
                try? files.removeItem(at: folder)
            }
        }

        /// Removes a file this process wrote (an endpoints file names its process): another emulator's
        /// stays.
        static func removeIfOurs(_ path: String) {
            if path.hasSuffix(".json"), let data = FileManager.default.contents(atPath: path),
               let document = try? JSONDecoder().decode(EmulatorDocument.self, from: data), document.pid != getpid() {
                return
            }
            try? FileManager.default.removeItem(atPath: path)
        }
    }

    /// Where a running emulator is: --emulator, $UNOTIFY_EMULATOR, or the last one started.
    struct Location: ParsableArguments {
        @Option(name: .long, help: ArgumentHelp("The emulator's control API (http://127.0.0.1:PORT) or its endpoints file. Default: $UNOTIFY_EMULATOR, else the last one started.", valueName: "url-or-file"))
        var emulator: String?

        /// The control API's URL, without a trailing slash.
        func controlURL() throws -> String {
            let given = emulator ?? ProcessInfo.processInfo.environment["UNOTIFY_EMULATOR"]
            if let given, given.hasPrefix("http://") || given.hasPrefix("https://") {
                return given.hasSuffix("/") ? String(given.dropLast()) : given
            }
            let path = given ?? EmulatorCommand.lastStartedFile.path
            guard let data = FileManager.default.contents(atPath: path) else {
                throw CommandFailure(given == nil
                    ? "No emulator is running (no \(path)): start one with `unotify emulator run`, or name it with --emulator."
                    : "Could not read \(path): name the emulator's endpoints file or its control API's URL.")
            }
            guard let document = try? JSONDecoder().decode(EmulatorDocument.self, from: data) else {
                throw CommandFailure("\(path) is not an emulator's endpoints file.")
            }
            guard kill(document.pid, 0) == 0 || errno == EPERM else {
                throw CommandFailure("The emulator of \(path) (process \(document.pid)) has stopped: start one with `unotify emulator run`.")
            }
            return document.control
        }

        /// Sends a request to the control API; returns the answer's body, or fails with the API's message.
        func call(_ method: HTTPMethod, _ path: String, body: [String: Any]? = nil, timeout: TimeAmount = .seconds(30)) async throws -> [String: Any] {
            let url = try controlURL() + path
            var request = HTTPClientRequest(url: url)
            request.method = method
            if let body {
                request.headers.add(name: "content-type", value: "application/json")
                request.body = .bytes(ByteBuffer(bytes: Array(try JSONSerialization.data(withJSONObject: body))))
            }
            let response: HTTPClientResponse
            do {
                response = try await HTTPClient.shared.execute(request, timeout: timeout)
            } catch {
                throw CommandFailure("Could not reach the emulator at \(url): \(error). Is it running?")
            }
            let bytes = try await response.body.collect(upTo: 64 * 1024 * 1024)
            let object = (try? JSONSerialization.jsonObject(with: Data(bytes.readableBytesView))) as? [String: Any] ?? [:]
            guard (200..<300).contains(Int(response.status.code)) else {
                let message = (object["error"] as? [String: Any])?["message"] as? String ?? "The emulator answered \(response.status.code)."
                throw CommandFailure(message)
            }
            return object
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the running emulator's endpoints, CA, team, key and tokens as JSON.")
        @OptionGroup var location: Location

        func run() async throws {
            print(Self.pretty(try await location.call(.GET, "/v1/emulator")))
        }

        static func pretty(_ object: Any) -> String {
            let data = (try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])) ?? Data()
            return String(decoding: data, as: UTF8.self)
        }
    }

    struct Clock: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the emulator's time, or move it forward.",
            discussion: "Every time rule follows it: provider tokens' age (an hour) and refresh (20 minutes), apns-expiration, throttling, held pushes, 410 timestamps, the delivery log.",
            subcommands: [Now.self, Advance.self, Set.self],
            defaultSubcommand: Now.self
        )

        struct Now: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Print the emulator's time.")
            @OptionGroup var location: Location
            func run() async throws { Clock.print(try await location.call(.GET, "/v1/clock")) }
        }

        struct Advance: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Move the emulator's time forward, such as by 61m, 90s, 2h or 1d.")
            @OptionGroup var location: Location
            @Argument(help: "How far: 61m, 90s, 2h, 1d, 1h30m, or seconds.") var duration: String

            func validate() throws {
                guard EmulatorDuration.seconds(duration) != nil else { throw ValidationError("\(duration) is not a duration: write 61m, 90s, 2h, 1d or 1h30m.") }
            }

            func run() async throws { Clock.print(try await location.call(.POST, "/v1/clock/advance", body: ["by": duration])) }
        }

        struct Set: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Move the emulator's time forward to a moment (ISO 8601, such as 2026-12-01T09:00:00Z).")
            @OptionGroup var location: Location
            @Argument(help: "The time, ISO 8601.") var time: String
            func run() async throws { Clock.print(try await location.call(.POST, "/v1/clock/advance", body: ["to": time])) }
        }

        static func print(_ clock: [String: Any]) {
            let ahead = (clock["ahead"] as? Double) ?? 0
            let frozen = (clock["frozen"] as? Bool) == true
            Swift.print("\(clock["now"] as? String ?? "?")\(frozen ? " (frozen)" : "")\(ahead >= 1 ? ", \(EmulatorDuration.text(ahead)) ahead of the system's clock" : "")")
        }
    }

    struct FaultCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "fault",
            abstract: "Script faults: a status and reason, a delay, a GOAWAY, a reset stream, a closed connection, a device offline or an app uninstalled.",
            subcommands: [Add.self, List.self, Remove.self],
            defaultSubcommand: List.self
        )

        struct Add: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Script a fault for the pushes it names (every push, by default, until removed).",
                discussion: """
                    status --reason R: answered with APNs' status and reason R (410 with the time now). delay --delay 2s: answered that much later. goaway [--reason R]: GOAWAY with {"reason":R} (Shutdown), the push not taken. reset: its stream reset. close: the connection closed. offline: the simulated devices named are offline while it lasts (pushes held, delivered when it ends). uninstalled: the app removed from the devices named at once (410 Unregistered from then).
                    """
            )
            @OptionGroup var location: Location
            @Argument(help: "status, delay, goaway, reset, close, offline or uninstalled.") var action: String
            @Option(name: .long, help: "APNs' reason, for status and goaway: Unregistered, TooManyRequests, ServiceUnavailable, …") var reason: String?
            @Option(name: .long, help: "How long, for delay: 2s, or seconds such as 0.5 (at most 300).") var delay: String?
            @Option(name: .long, help: "Only pushes to this device token.") var token: String?
            @Option(name: .long, help: "Only pushes of this topic (or app).") var topic: String?
            @Option(name: .long, help: "Only the next N such pushes.") var requests: Int?
            @Option(name: .long, help: "For this long from now (or from --from), on the emulator's clock: 10m, 1h.") var `for`: String?
            @Option(name: .long, help: "From this time (ISO 8601), on the emulator's clock.") var from: String?
            @Option(name: .long, help: "Until this time (ISO 8601), on the emulator's clock.") var until: String?

            func run() async throws {
                var body: [String: Any] = ["action": action]
                if let reason { body["reason"] = reason }
                if let delay { body["delay"] = delay }
                if let token { body["token"] = token }
                if let topic { body["topic"] = topic }
                if let requests { body["requests"] = requests }
                if let `for` { body["for"] = `for` }
                if let from { body["from"] = from }
                if let until { body["until"] = until }
                let fault = try await location.call(.POST, "/v1/faults", body: body)
                print("Fault \(fault["id"] ?? "?"): \(FaultCommand.describe(fault))")
            }
        }

        struct List: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "List the faults scripted, with how many pushes each met.")
            @OptionGroup var location: Location

            func run() async throws {
                let faults = try await location.call(.GET, "/v1/faults")["faults"] as? [[String: Any]] ?? []
                if faults.isEmpty { print("No faults.") }
                for fault in faults {
                    print("\(fault["id"] ?? "?")  \(FaultCommand.describe(fault))  met \(fault["fired"] ?? 0)\((fault["active"] as? Bool) == true ? "" : " (not in force)")")
                }
            }
        }

        struct Remove: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Remove a fault, or all of them.")
            @OptionGroup var location: Location
            @Argument(help: "The fault's number.") var id: Int?
            @Flag(name: .long, help: "Remove every fault.") var all = false

            func validate() throws {
                guard (id == nil) != !all else { throw ValidationError("Name a fault's number, or --all.") }
            }

            func run() async throws {
                if let id {
                    _ = try await location.call(.DELETE, "/v1/faults/\(id)")
                    print("Fault \(id) removed.")
                } else {
                    _ = try await location.call(.DELETE, "/v1/faults")
                    print("Every fault removed.")
                }
            }
        }

        static func describe(_ fault: [String: Any]) -> String {
            var text = fault["summary"] as? String ?? "?"
            if let token = fault["token"] as? String { text += " for token \(token)" }
            if let topic = fault["topic"] as? String { text += " for \(topic)" }
            if let requests = fault["requests"] { text += ", \(requests) more push(es)" }
            if let from = fault["from"] as? String { text += " from \(from)" }
            if let until = fault["until"] as? String { text += " until \(until)" }
            return text
        }
    }

    struct Devices: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the simulated devices, make more, or enroll a real one.",
                                                        subcommands: [List.self, Add.self, Enroll.self], defaultSubcommand: List.self)

        struct Enroll: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Enroll a real device and print its credential, for `unotify daemon --gateway … --gateway-credential … --gateway-ca …`.",
                discussion: "The daemon links to the emulator's device-link endpoint as to a gateway's; its apps' tokens get the pushes sent to them, on the emulator's clock and faults."
            )
            @OptionGroup var location: Location

            func run() async throws {
                let answer = try await location.call(.POST, "/v1/device-credentials")
                Swift.print(answer["credential"] as? String ?? "")
                FileHandle.standardError.write(Data("Link with: unotify daemon --gateway \(answer["deviceLink"] as? String ?? "?") --gateway-credential FILE --gateway-ca \(answer["caFile"] as? String ?? "?")\n".utf8))
            }
        }

        struct List: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "List the simulated devices and their tokens.")
            @OptionGroup var location: Location
            func run() async throws { Devices.print(try await location.call(.GET, "/v1/devices")) }
        }

        struct Add: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Make simulated devices with an app of each topic; prints their tokens.")
            @OptionGroup var location: Location
            @Option(name: .long, help: "An app each device has (repeatable).") var topic: [String]
            @Option(name: .long, help: "How many devices.") var count = 1
            @Option(name: .long, help: "immediately, never, or a delay such as 2s.") var acknowledge = "immediately"
            @Option(name: .long, help: "sandbox or production.") var environment: APNs.Environment = .sandbox

            func run() async throws {
                Devices.print(try await location.call(.POST, "/v1/devices", body: [
                    "topics": topic, "count": count, "acknowledge": acknowledge, "environment": environment.rawValue,
                ]))
            }
        }

        static func print(_ answer: [String: Any]) {
            for device in answer["devices"] as? [[String: Any]] ?? [] {
                let tokens = (device["tokens"] as? [String: String] ?? [:]).sorted { $0.key < $1.key }
                let state = (device["online"] as? Bool) == true ? "online" : "offline"
                for (topic, token) in tokens { Swift.print("\(token)  \(topic)  \(device["deviceID"] ?? "?")  \(state), acknowledges \(device["acknowledge"] ?? "?")") }
            }
        }
    }

    struct Received: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the pushes a simulated device received for a token, in order, with their headers and payloads.",
            discussion: "With --wait, waits up to that long for --count of them (1 by default) and fails if fewer came. Without --token, prints how many every token's device received."
        )
        @OptionGroup var location: Location
        @Option(name: .long, help: "The device token.") var token: String?
        @Option(name: .long, help: "The pushes to wait for.") var count: Int?
        @Option(name: .long, help: "Seconds to wait for them, such as 3.") var wait: String?
        @Flag(name: .long, help: "Print the answer as JSON.") var json = false

        func validate() throws {
            guard token != nil || (wait == nil && count == nil) else { throw ValidationError("--wait and --count are for one --token.") }
            if let wait { guard EmulatorDuration.seconds(wait) != nil else { throw ValidationError("--wait is a number of seconds, such as 3.") } }
            if let count { guard count >= 0 else { throw ValidationError("--count is 0 or more.") } }
        }

        func run() async throws {
            guard let token else {
                let counts = try await location.call(.GET, "/v1/received")
                if json { return print(Show.pretty(counts)) }
                for (token, count) in (counts["byToken"] as? [String: Int] ?? [:]).sorted(by: { $0.key < $1.key }) { print("\(token)  \(count)") }
                print("\(counts["total"] as? Int ?? 0) pushes received in all.")
                return
            }
            var query: [String] = []
            if let count { query.append("count=\(count)") }
            if let wait { query.append("wait=\(wait)") }
            let waitSeconds = wait.flatMap(EmulatorDuration.seconds) ?? 0
            let answer = try await location.call(.GET, "/v1/tokens/\(token)/received" + (query.isEmpty ? "" : "?" + query.joined(separator: "&")),
                                                 timeout: .seconds(Int64(waitSeconds) + 30))
            let pushes = answer["pushes"] as? [[String: Any]] ?? []
            if json {
                print(Show.pretty(answer))
            } else {
                for push in pushes {
                    let headers = push["headers"] as? [String: Any] ?? [:]
                    let payload = push["payload"].flatMap { try? JSONSerialization.data(withJSONObject: $0, options: [.sortedKeys, .withoutEscapingSlashes, .fragmentsAllowed]) }
                    let receivedAt = push["receivedAt"] as? String ?? "?"
                    let apnsID = headers["apns-id"] as? String ?? "?"
                    let pushType = headers["apns-push-type"] as? String ?? "?"
                    print("\(receivedAt)  \(apnsID)  \(pushType)  \(payload.map { String(decoding: $0, as: UTF8.self) } ?? "")")
                }
            }
            let wanted = count ?? (wait == nil ? 0 : 1)
            guard pushes.count >= wanted else {
                throw CommandFailure("\(pushes.count) push\(pushes.count == 1 ? "" : "es") received for \(token) within \(wait ?? "0")s; \(wanted) wanted.")
            }
        }
    }

    struct Log: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the delivery log of a push (its apns-id or apns-unique-id), faults injected included.")
        @OptionGroup var location: Location
        @Argument(help: "The push's apns-id or apns-unique-id.") var id: String
        func run() async throws { print(Show.pretty(try await location.call(.GET, "/v1/log/\(id)"))) }
    }
}
