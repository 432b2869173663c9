import ArgumentParser
import AsyncHTTPClient
import BenchmarkSupport
import Crypto
import Foundation
import Histogram
import HummingbirdWSClient
import Logging
import NIOCore
import NIOHTTP2
import NIOSSL
import NotificationCore
import NotificationDaemonClient
import OpenUserNotifications
import OpenUserNotificationsLink
import ProcessSpawning
import PushGateway
import Synchronization

/// The push path measured end to end with the real `unotify` binary (release build): how long a
/// provider's push takes to reach the app's delegate, and how much memory the gateway spends per
/// linked device. See BENCHMARKS.md.
@main
struct GatewayBenchmarks: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gateway-benchmarks",
        abstract: "Measure the push gateway and the device path with the real unotify binary.",
        subcommands: [Latency.self, Extensions.self, Links.self, BroadcastFanOut.self, StoreThroughput.self]
    )
}

/// Options both measurements share.
struct Common: ParsableArguments {
    @Option(help: "The unotify executable to measure (build it with -c release).", transform: { URL(fileURLWithPath: $0).standardizedFileURL.path })
    var unotify: String = URL(fileURLWithPath: ".build-bench/release/unotify").standardizedFileURL.path

    @Option(help: "The measured unotify's metrics: on (on a free port), off (--no-metrics, to see what they cost), or absent (a build from before they existed, given no flag for them).")
    var metrics: MetricsMode = .on

    enum MetricsMode: String, ExpressibleByArgument {
        case on, off, absent
    }

    @Option(help: "The measured unotify's --delivery-log-days (0 keeps no delivery log, to see what it costs); its default when not given.")
    var deliveryLogDays: Double?

    @Option(help: "How the benchmark sends as a provider: lean (HTTP/2 frames on one connection, the least CPU taken from the system on the same cores) or async-http-client (the library).")
    var providerClient: ProviderClientKind = .lean

    /// The arguments that set up the measured server's metrics endpoint and delivery log.
    var serverArguments: [String] {
        let metrics: [String] = switch self.metrics {
        case .on: ["--metrics-port", "0"]
        case .off: ["--no-metrics"]
        case .absent: []
        }
        return metrics + (deliveryLogDays.map { ["--delivery-log-days", "\($0)"] } ?? [])
    }

    func check() throws {
        guard FileManager.default.isExecutableFile(atPath: unotify) else {
            throw ValidationError("\(unotify) is not an executable: build it first with `OUN_BENCHMARKS=1 swift build -c release --scratch-path .build-bench --product unotify`.")
        }
    }
}

// MARK: - Latency

/// Provider request → app delegate: pushes sent at a steady rate (and then as fast as the system
/// takes them) to an app in the foreground, timed from just before the provider's request to the
/// delegate's `willPresent`. The reference, in the same run: the same client's requests at the same
/// rate to nghttpd answering a static file, the floor of an HTTP/2 round trip on this machine.
struct Latency: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Provider request → app delegate latency, at a steady rate and at saturation.")

    @OptionGroup var common: Common
    @Option(help: "Pushes per second at the steady rate.") var rate: Int = 1000
    @Option(help: "Seconds at the steady rate (after one second of warm-up).") var seconds: Int = 10
    @Option(help: "Requests in flight at saturation.") var concurrency: Int = 64
    @Option(help: "Seconds at saturation.") var saturationSeconds: Int = 10
    @Option(help: "Apps the pushes are spread over, one token each: APNs (and the gateway) allow one token 10 pushes/s sustained.")
    var apps: Int = 200
    @Option(help: "A file to write each push of the steady rate to: when it was sent (ms from the first) and how long it took to reach the delegate (ms), to see when the slow ones came.")
    var latenciesFile: String?

    func run() async throws {
        try common.check()
        try await RunningSystem.measure(common, apps: apps) { try await measure($0, $1) }
    }

    private func measure(_ system: RunningSystem, _ http: any ProviderClient) async throws {
        // The disk both stores sync on, before the load and after it: a push reaches the delegate
        // through two syncs (the gateway's, then the daemon's), and inherits their tail.
        let syncsBefore = try DiskSyncReference.measure(in: system.folder)
        let reference = try await system.startReference()
        let floor = try await Pacer.measure(rate: rate, seconds: seconds, http, port: reference) { _ in
            system.request(to: reference, path: "/3/device/\(system.apps[0].token)", topic: system.apps[0].bundleIdentifier)
        }
        print(Pacer.line("nghttpd, response at \(rate)/s (reference)", floor.latencies, sent: floor.sent, seconds: Double(seconds)))

        let before = (serve: try CPUTime.of(system.serve.pid), benchmark: try CPUTime.ofThisProcess())
        let steady = try await Pacer.measure(rate: rate, seconds: seconds, http, port: system.ports.sandbox) { id in
            system.pushRequest(id: id)
        }
        let delegate = system.arrivals.take(ids: steady.ids)
        if let latenciesFile { try system.arrivals.write(ids: steady.ids, to: latenciesFile) }
        let spent = (serve: try CPUTime.of(system.serve.pid) - before.serve, benchmark: try CPUTime.ofThisProcess() - before.benchmark)
        print(Pacer.line("gateway, response at \(rate)/s", steady.latencies, sent: steady.sent, seconds: Double(seconds)))
        print(Pacer.line("gateway → delegate at \(rate)/s", delegate, sent: steady.sent, seconds: Double(seconds)))
        // Warm-up included: the pushes sent, not only the timed ones.
        let pushes = Double(rate * (seconds + 1))
        print(String(format: "  CPU per push at %d/s: unotify serve %.0f µs, this benchmark (provider and apps) %.0f µs",
                     rate, spent.serve / pushes * 1e6, spent.benchmark / pushes * 1e6))

        let saturated = try await Pacer.saturate(concurrency: concurrency, seconds: saturationSeconds) { id in
            try await system.push(http, id: id)
        }
        let saturatedDelegate = system.arrivals.take(ids: saturated.ids)
        print(Pacer.line("gateway → delegate at saturation (\(concurrency) in flight)", saturatedDelegate, sent: saturated.sent,
                         seconds: Double(saturationSeconds)))
        Pacer.printFailures(["nghttpd": floor, "gateway at \(rate)/s": steady, "gateway at saturation": saturated], arrivals: system.arrivals)
        let syncsAfter = try DiskSyncReference.measure(in: system.folder)
        print("  the disk's fsync before the load: \(syncsBefore.line)")
        print("  the disk's fsync after the load:  \(syncsAfter.line)")
    }
}

// MARK: - Service extensions

/// Provider request → app delegate for pushes through a trivial service extension
/// (`Benchmarks/TrivialServiceExtension`), beside the same pushes without `mutable-content` in the
/// same run, sent in turn at a steady rate; then a burst of pushes through the extension at once,
/// to see how many extension runs the daemon gets through per second.
struct Extensions: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Pushes through a trivial service extension: latency beside plain pushes, and runs per second.")

    @OptionGroup var common: Common
    @Option(help: "The trivial service extension (built with the benchmarks).") var serviceExtension = ".build-bench/release/TrivialServiceExtension"
    @Option(help: "Pushes per second at the steady rate, half of them through the extension.") var rate: Int = 10
    @Option(help: "Seconds at the steady rate (after one second of warm-up).") var seconds: Int = 30
    @Option(help: "Pushes in the burst.") var burst: Int = 400
    @Option(help: "Apps the pushes are spread over, one token each (10 pushes/s per token).") var apps: Int = 50

    func run() async throws {
        try common.check()
        guard FileManager.default.isExecutableFile(atPath: serviceExtension) else {
            throw ValidationError("\(serviceExtension) is not an executable: build it with `OUN_BENCHMARKS=1 swift build -c release --scratch-path .build-bench --product TrivialServiceExtension`.")
        }
        let extensionPath = URL(fileURLWithPath: serviceExtension).standardizedFileURL.path
        try await RunningSystem.measure(common, apps: apps, serviceExtension: extensionPath) { try await measure($0, $1) }
    }

    private func measure(_ system: RunningSystem, _ http: any ProviderClient) async throws {
        // In turn, so that both kinds meet the same load: even pushes plain, odd ones through the extension.
        let turn = Atomic<Int>(0)
        let kinds = Mutex<[String: Bool]>([:])
        let steady = try await Pacer.measure(rate: rate, seconds: seconds, http, port: system.ports.sandbox) { id in
            let mutable = turn.add(1, ordering: .relaxed).oldValue % 2 == 1
            kinds.withLock { $0[id] = mutable }
            return system.pushRequest(id: id, mutableContent: mutable)
        }
        let sorted = kinds.withLock { kinds in (plain: steady.ids.filter { kinds[$0] == false }, mutable: steady.ids.filter { kinds[$0] == true }) }
        let plain = system.arrivals.take(ids: sorted.plain)
        let prepared = system.arrivals.take(ids: sorted.mutable)
        print(Pacer.line("plain push → delegate at \(rate / 2)/s", plain, sent: sorted.plain.count, seconds: Double(seconds)))
        print(Pacer.line("through the extension → delegate at \(rate / 2)/s", prepared, sent: sorted.mutable.count, seconds: Double(seconds)))
        print("  changed by the extension: \(system.arrivals.preparedCount(of: sorted.mutable)) of \(sorted.mutable.count); plain ones: \(system.arrivals.preparedCount(of: sorted.plain))")
        Pacer.printFailures(["pushes in turn at \(rate)/s": steady], arrivals: system.arrivals)

        for mutable in [false, true] {
            let (shown, changed, elapsed) = try await burst(system, http, mutableContent: mutable)
            let label = mutable ? "burst of \(burst) through the extension" : "burst of \(burst) plain (reference)"
            print("| \(label) | \(shown) shown, \(changed) changed by the extension | \(String(format: "%.2f s", elapsed)) | \(String(format: "%.1f", Double(shown) / elapsed))/s |")
        }
    }

    /// Sends `burst` pushes as fast as the gateway answers (64 in flight) and returns how many reached
    /// the delegate, how many of them the extension changed, and the seconds from the first request to
    /// the last arrival.
    private func burst(_ system: RunningSystem, _ http: any ProviderClient, mutableContent: Bool) async throws -> (Int, Int, Double) {
        let ids = (0..<burst).map { _ in UUID().uuidString.lowercased() }
        let began = DispatchTime.now().uptimeNanoseconds
        try await withThrowingTaskGroup(of: Void.self) { group in
            var remaining = ids[...]
            for _ in 0..<min(64, ids.count) {
                guard let id = remaining.popFirst() else { break }
                group.addTask { try await system.push(http, id: id, mutableContent: mutableContent) }
            }
            while try await group.next() != nil {
                guard let id = remaining.popFirst() else { continue }
                group.addTask { try await system.push(http, id: id, mutableContent: mutableContent) }
            }
        }
        let latencies = system.arrivals.take(ids: ids)
        let last = system.arrivals.lastArrival(of: ids) ?? began
        return (Int(latencies.totalCount), system.arrivals.preparedCount(of: ids), Double(last - began) / 1_000_000_000)
    }
}

/// When each push reached the app's delegate, by its apns-id.
final class Arrivals: Sendable {
    private let state = Mutex<[String: UInt64]>([:])
    /// When each push was sent, by its apns-id (nanoseconds of the monotonic clock).
    private let sent = Mutex<[String: UInt64]>([:])

    func noteSent(_ id: String, at time: UInt64) { sent.withLock { $0[id] = time } }
    func noteArrived(_ id: String, at time: UInt64) { state.withLock { $0[id] = time } }
    /// The pushes the service extension changed, as the delegate saw them.
    private let prepared = Mutex<Set<String>>([])
    func notePrepared(_ id: String) { _ = prepared.withLock { $0.insert(id) } }
    func preparedCount(of ids: [String]) -> Int { prepared.withLock { prepared in ids.count { prepared.contains($0) } } }

    /// How many of these pushes have reached the delegate.
    func arrivedCount(of ids: [String]) -> Int { state.withLock { arrived in ids.count { arrived[$0] != nil } } }

    /// When the last of these pushes arrived, if any did.
    func lastArrival(of ids: [String]) -> UInt64? { state.withLock { arrived in ids.compactMap { arrived[$0] }.max() } }

    /// Writes a line for each of these pushes that arrived: when it was sent, in milliseconds from
    /// the first sent, and its latency in milliseconds; in the order they were sent.
    func write(ids: [String], to path: String) throws {
        let (arrived, sentAt) = (state.withLock { $0 }, sent.withLock { $0 })
        let times = ids.compactMap { id in sentAt[id].flatMap { start in arrived[id].map { (start, $0 > start ? $0 - start : 0) } } }.sorted { $0.0 < $1.0 }
        guard let first = times.first?.0 else { return }
        // The first push's time on the system's monotonic clock, to line the file up with a trace
        // (`perf record -k CLOCK_MONOTONIC`).
        print("  \(path): the first push sent at \(first) ns on CLOCK_MONOTONIC")
        let lines = times.map { String(format: "%.3f %.3f", Double($0.0 - first) / 1e6, Double($0.1) / 1e6) }
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// The delegate latencies of these pushes, waiting up to 30 s for the last ones to arrive.
    func take(ids: [String]) -> Histogram<UInt64> {
        let deadline = DispatchTime.now().uptimeNanoseconds + 30_000_000_000
        while state.withLock({ arrived in ids.contains { arrived[$0] == nil } }), DispatchTime.now().uptimeNanoseconds < deadline {
            usleep(10_000)
        }
        var histogram = Histogram<UInt64>(highestTrackableValue: 60_000_000_000, numberOfSignificantValueDigits: .three)
        let (arrived, sentAt) = (state.withLock { $0 }, sent.withLock { $0 })
        var missing = 0
        for id in ids {
            guard let end = arrived[id], let start = sentAt[id] else {
                missing += 1
                continue
            }
            _ = histogram.record(end > start ? end - start : 0)
        }
        if missing > 0 { print("  \(missing) of \(ids.count) pushes did not reach the delegate within 30 s") }
        return histogram
    }
}

/// The app under measurement: in the foreground, it shows every push (banner and list).
final class MeasuringDelegate: NSObject, UNUserNotificationCenterDelegate, Sendable {
    let arrivals: Arrivals
    init(arrivals: Arrivals) { self.arrivals = arrivals }

    func userNotificationCenter(_ center: UNUserNotificationCenter, willPresent notification: UNNotification,
                                withCompletionHandler completionHandler: @escaping (UNNotificationPresentationOptions) -> Void) {
        arrivals.noteArrived(notification.request.identifier, at: DispatchTime.now().uptimeNanoseconds)
        if notification.request.content.body.hasSuffix(" (prepared)") { arrivals.notePrepared(notification.request.identifier) }
        completionHandler([.banner, .list])
    }
}

/// Sends at a steady rate, or as fast as answers come, and times each request to its answer.
enum Pacer {
    struct Result {
        var latencies = Histogram<UInt64>(highestTrackableValue: 60_000_000_000, numberOfSignificantValueDigits: .three)
        var ids: [String] = []
        var sent = 0
        /// Requests not answered `200`, by what went wrong.
        var failures: [String: Int] = [:]
        /// The ids of those requests (to look for them at the delegate).
        var failedIDs: [String] = []
        /// The HTTP/2 streams closed before their answer, by the code they were closed with.
        var closedStreams: [String: [Int]] = [:]

        /// The failures, most frequent first, for a line after the table (empty when there were none).
        /// Closed streams are given as runs of consecutive stream ids.
        var failureSummary: String {
            var parts = failures.sorted { $0.value > $1.value }.map { "\($0.value) × \($0.key)" }
            for (code, ids) in closedStreams.sorted(by: { $0.key < $1.key }) {
                var runs: [(first: Int, last: Int)] = []
                for id in ids.sorted() {
                    if let last = runs.last?.last, id <= last + 2 { runs[runs.count - 1].last = id } else { runs.append((id, id)) }
                }
                parts.append("streams closed with \(code): " + runs.map { $0.first == $0.last ? "\($0.first)" : "\($0.first)–\($0.last)" }.joined(separator: ", "))
            }
            return parts.joined(separator: "; ")
        }
    }

    /// One second of warm-up, not counted, then `seconds` at `rate`: request `i` leaves at its
    /// scheduled time whether or not earlier ones were answered (no coordinated omission), made by
    /// `make` with a new id as it leaves (to `port`), and counts when answered `200`.
    ///
    /// The lean client sends and times them from its connection's event loop (a timer of the loop
    /// writes each; see ``LeanProviderClient/pace(port:rate:count:warmUp:start:_:)``); another client
    /// from a task per request.
    static func measure(rate: Int, seconds: Int, _ http: any ProviderClient, port: Int,
                        make: @escaping @Sendable (String) -> ProviderRequest) async throws -> Result {
        let total = rate * (seconds + 1)
        let start = DispatchTime.now().uptimeNanoseconds + 100_000_000
        if let lean = http as? LeanProviderClient {
            return try await lean.pace(port: port, rate: rate, count: total, warmUp: rate, start: start, make)
        }
        return try await measure(rate: rate, seconds: seconds, start: start) { id in try await http.send(make(id)) }
    }

    /// ``measure(rate:seconds:_:port:make:)`` with a task per request, each calling `send`.
    private static func measure(rate: Int, seconds: Int, start: UInt64, _ send: @escaping @Sendable (String) async throws -> Void) async throws -> Result {
        let total = rate * (seconds + 1)
        let warmUp = rate
        let interval = 1_000_000_000 / UInt64(rate)
        let results = Collected()
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<total {
                let due = start + UInt64(index) * interval
                let now = DispatchTime.now().uptimeNanoseconds
                if due > now { try? await Task.sleep(nanoseconds: due - now) }
                let id = UUID().uuidString.lowercased()
                group.addTask {
                    let began = DispatchTime.now().uptimeNanoseconds
                    do {
                        try await send(id)
                    } catch {
                        if index >= warmUp { results.noteFailure(error, id: id) }
                        return
                    }
                    let took = DispatchTime.now().uptimeNanoseconds - began
                    guard index >= warmUp else { return }
                    results.noteAnswered(id: id, took: took)
                }
            }
        }
        return results.state.withLock { $0 }
    }

    /// `concurrency` senders, each sending its next push when the last is answered, for `seconds`.
    static func saturate(concurrency: Int, seconds: Int, _ send: @escaping @Sendable (String) async throws -> Void) async throws -> Result {
        let end = DispatchTime.now().uptimeNanoseconds + UInt64(seconds) * 1_000_000_000
        let results = Collected()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<concurrency {
                group.addTask {
                    while DispatchTime.now().uptimeNanoseconds < end {
                        let id = UUID().uuidString.lowercased()
                        let began = DispatchTime.now().uptimeNanoseconds
                        do {
                            try await send(id)
                        } catch {
                            results.noteFailure(error, id: id)
                            continue
                        }
                        let took = DispatchTime.now().uptimeNanoseconds - began
                        results.noteAnswered(id: id, took: took)
                    }
                }
            }
        }
        return results.state.withLock { $0 }
    }

    final class Collected: Sendable {
        let state = Mutex(Result())

        /// A request answered `200` after `took` nanoseconds.
        func noteAnswered(id: String, took: UInt64) {
            state.withLock { result in
                _ = result.latencies.record(took)
                result.ids.append(id)
                result.sent += 1
            }
        }

        func noteFailure(_ error: any Error, id: String) {
            state.withLock { result in
                result.failedIDs.append(id)
                if let closed = error as? NIOHTTP2Errors.StreamClosed {
                    result.failures["HTTP/2 stream closed before its answer (\(closed.errorCode))", default: 0] += 1
                    result.closedStreams["\(closed.errorCode)", default: []].append(Int(closed.streamID))
                } else {
                    result.failures[String(String(describing: error).prefix(200)), default: 0] += 1
                }
            }
        }
    }

    /// A line for each measurement that had requests not answered `200`, saying what went wrong and
    /// how many of them reached the delegate all the same.
    static func printFailures(_ results: KeyValuePairs<String, Result>, arrivals: Arrivals) {
        for (label, result) in results where !result.failures.isEmpty {
            let delivered = arrivals.arrivedCount(of: result.failedIDs)
            print("  not answered 200 (\(label)), \(delivered) of them delivered all the same: \(result.failureSummary)")
        }
    }

    static func milliseconds(_ nanoseconds: UInt64) -> String { String(format: "%.2f ms", Double(nanoseconds) / 1_000_000) }

    static func line(_ label: String, _ histogram: Histogram<UInt64>, sent: Int, seconds: Double) -> String {
        "| \(label) | \(sent) (\(String(format: "%.0f", Double(sent) / seconds))/s) | \(milliseconds(histogram.valueAtPercentile(50))) | "
            + "\(milliseconds(histogram.valueAtPercentile(99))) | \(milliseconds(histogram.max)) |"
    }
}

// MARK: - The system under measurement

/// `unotify serve` (gateway and daemon, linked) in a fresh folder, with a provider set up and an app
/// connected in the foreground.
final class RunningSystem: Sendable {
    let folder: URL
    let serve: SpawnedProcess
    let ports: (sandbox: Int, reference: Int)
    let jwt: String
    /// The apps pushed to, each with its token.
    let apps: [(bundleIdentifier: String, token: String)]
    let arrivals: Arrivals
    private let reference = Mutex<SpawnedProcess?>(nil)
    private let next = Atomic<Int>(0)

    private init(folder: URL, serve: SpawnedProcess, ports: (sandbox: Int, reference: Int), jwt: String, apps: [(bundleIdentifier: String, token: String)],
                 arrivals: Arrivals) {
        self.folder = folder
        self.serve = serve
        self.ports = ports
        self.jwt = jwt
        self.apps = apps
        self.arrivals = arrivals
    }

    /// - Parameters:
    ///   - serviceExtension: an executable each app registers as its service extension.
    ///   - arguments: more arguments for `unotify serve`.
    static func start(unotify: String, apps count: Int, serviceExtension: String? = nil, arguments: [String] = []) async throws -> RunningSystem {
        let folder = URL(fileURLWithPath: "/tmp/gwbench-\(UUID().uuidString.prefix(8))", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let environment = ProcessInfo.processInfo.environment.merging([
            "UNOTIFY_DATA_DIR": folder.path, "UNOTIFY_SOCKET": folder.appendingPathComponent("unotify.sock").path,
        ]) { $1 }
        let (sandbox, production, links, reference) = (try freePort(), try freePort(), try freePort(), try freePort())
        let serve = try spawn(unotify, ["serve", "--sandbox-port", "\(sandbox)", "--production-port", "\(production)", "--device-link-port", "\(links)",
                                        "--log-level", "warning"] + arguments, environment: environment)
        do {
            return try await setUp(serve: serve, unotify: unotify, folder: folder, environment: environment, ports: (sandbox, reference),
                                   apps: count, serviceExtension: serviceExtension)
        } catch {
            // Nothing else would stop it: a failed setup left `serve` running after the benchmark exited.
            serve.send(SIGTERM)
            serve.waitUntilExit()
            throw error
        }
    }

    private static func setUp(serve: SpawnedProcess, unotify: String, folder: URL, environment: [String: String], ports: (sandbox: Int, reference: Int),
                              apps count: Int, serviceExtension: String?) async throws -> RunningSystem {
        try await waitUntil("the daemon's socket", timeout: 30) { FileManager.default.fileExists(atPath: environment["UNOTIFY_SOCKET"]!) }
        func run(_ arguments: [String]) throws -> String {
            try output(of: unotify, arguments, environment: environment, in: folder)
        }
        _ = try run(["gateway", "teams", "add", "ABCDE12345", "--name", "Bench"])
        let keyID = try run(["gateway", "keys", "create", "--team", "ABCDE12345"])
        let jwt = try run(["gateway", "token", "--key", folder.appendingPathComponent("AuthKey_\(keyID).p8").path, "--key-id", keyID, "--team", "ABCDE12345"])
        let arrivals = Arrivals()
        let delegate = MeasuringDelegate(arrivals: arrivals)
        let socket = environment["UNOTIFY_SOCKET"]!
        let admin = LocalAPIClient(socketPath: socket, key: try String(contentsOf: folder.appendingPathComponent("admin.key"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines))
        var apps: [(bundleIdentifier: String, token: String)] = []
        var centers: [UNUserNotificationCenter] = []
        print("Setting up \(count) apps")
        for index in 0..<count {
            let bundle = "com.example.bench\(index)"
            _ = try run(["gateway", "apps", "add", bundle, "--team", "ABCDE12345"])
            let key = try await admin.call(.POST, "/v1/admin/apps", body: LocalAPI.RegisterApp(bundleIdentifier: bundle), as: LocalAPI.AppKey.self).key
            _ = try await admin.call(.POST, "/v1/admin/apps/\(bundle)/authorization", body: LocalAPI.AuthorizationDecision(decision: "grant"),
                                     as: NotificationSettings.self)
            if let serviceExtension {
                let answer = try await admin.raw(.PUT, "/v1/admin/apps/\(bundle)/service-extension", body: LocalAPI.ServiceExtension(executable: serviceExtension))
                guard (200..<300).contains(answer.status) else { throw ValidationError("the daemon refused the service extension: \(answer.status)") }
            }
            var token = ""
            try await waitUntil("the daemon to link to the gateway", timeout: 30) {
                token = (try? run(["apps", "token", bundle])) ?? ""
                return token.count == 64
            }
            apps.append((bundle, token))
            // Each app connected in the foreground, as an app open on the screen.
            let center = UNUserNotificationCenter(backend: DaemonBackend(client: LocalAPIClient(socketPath: socket, key: key), initialState: .foreground))
            center.delegate = delegate
            centers.append(center)
        }
        keepAlive.withLock { $0 = (delegate, centers) }
        return RunningSystem(folder: folder, serve: serve, ports: ports, jwt: jwt, apps: apps, arrivals: arrivals)
    }

    /// Starts the system, waits until the gateway knows every app, and runs `body` with a provider
    /// client connected after that; stops everything once `body` is done.
    static func measure(_ common: Common, apps: Int, serviceExtension: String? = nil,
                        _ body: (RunningSystem, any ProviderClient) async throws -> Void) async throws {
        let system = try await start(unotify: common.unotify, apps: apps, serviceExtension: serviceExtension, arguments: common.serverArguments)
        defer { system.stop() }
        try await system.waitForApps(common.providerClient)
        let http = try system.providerClient(common.providerClient)
        do {
            try await body(system, http)
        } catch {
            try? await http.shutdown()
            throw error
        }
        try await http.shutdown()
    }

    /// The delegate and the apps' centers live as long as the benchmark (a center holds its delegate weakly).
    private static let keepAlive = Mutex<(MeasuringDelegate, [UNUserNotificationCenter])?>(nil)

    /// nghttpd with the gateway's certificate, answering every device path with an empty file.
    func startReference() async throws -> Int {
        let www = folder.appendingPathComponent("www/3/device", isDirectory: true)
        try FileManager.default.createDirectory(at: www, withIntermediateDirectories: true)
        try Data().write(to: www.appendingPathComponent(apps[0].token))
        let gateway = folder.appendingPathComponent("gateway")
        let process = try Self.spawn("/usr/sbin/nghttpd", ["-d", folder.appendingPathComponent("www").path, "\(ports.reference)",
                                                            gateway.appendingPathComponent("server-key.pem").path,
                                                            gateway.appendingPathComponent("server.pem").path], environment: [:])
        reference.withLock { $0 = process }
        try await Self.waitUntil("nghttpd to listen", timeout: 10) { Self.listens(self.ports.reference) }
        return ports.reference
    }

    func providerClient(_ kind: ProviderClientKind) throws -> any ProviderClient {
        try kind.make(trusting: folder.appendingPathComponent("gateway/ca.pem").path)
    }

    /// Returns once the gateway knows every app, which it reads again once a second: a push to the
    /// app set up last is accepted (until then it is refused `TopicDisallowed`). Each try opens its
    /// own connection, as a provider connection keeps the apps its team had when it opened (as on
    /// APNs): the measuring client connects only after this.
    func waitForApps(_ kind: ProviderClientKind) async throws {
        let app = apps[apps.count - 1]
        let deadline = Date().addingTimeInterval(10)
        while true {
            let http = try providerClient(kind)
            do {
                try await http.send(request(to: ports.sandbox, path: "/3/device/\(app.token)", topic: app.bundleIdentifier))
                try await http.shutdown()
                return
            } catch where Date() < deadline {
                try await http.shutdown()
                try await Task.sleep(for: .milliseconds(200))
            }
        }
    }

    /// One push to the next app in turn, timed for its delegate from now; with `mutableContent`, for
    /// the app's service extension.
    func push(_ http: any ProviderClient, id: String, mutableContent: Bool = false) async throws {
        try await http.send(pushRequest(id: id, mutableContent: mutableContent))
    }

    /// The request of ``push(_:id:mutableContent:)``, timed for its delegate from now: made as it leaves.
    func pushRequest(id: String, mutableContent: Bool = false) -> ProviderRequest {
        let app = apps[next.add(1, ordering: .relaxed).oldValue % apps.count]
        arrivals.noteSent(id, at: DispatchTime.now().uptimeNanoseconds)
        return request(to: ports.sandbox, path: "/3/device/\(app.token)", topic: app.bundleIdentifier, id: id, mutableContent: mutableContent)
    }

    func request(to port: Int, path: String, topic: String, id: String? = nil, mutableContent: Bool = false) -> ProviderRequest {
        var headers = [("authorization", "bearer \(jwt)"), ("apns-topic", topic), ("apns-push-type", "alert")]
        if let id { headers.append(("apns-id", id)) }
        let mutable = mutableContent ? #","mutable-content":1"# : ""
        let body = ByteBuffer(string: #"{"aps":{"alert":{"title":"Benchmark","body":"A push of a typical size, with a title and a body."}\#(mutable)}}"#)
        return ProviderRequest(port: port, path: path, headers: headers, body: body)
    }

    func stop() {
        // SIGKILL: nghttpd started from here does not stop on SIGTERM (it was left running after every run).
        reference.withLock { process in
            process?.send(SIGKILL)
            process?.waitUntilExit()
        }
        serve.send(SIGTERM)
        serve.waitUntilExit()
        try? FileManager.default.removeItem(at: folder)
    }

    // MARK: Processes and ports

    static func spawn(_ executable: String, _ arguments: [String], environment: [String: String]) throws -> SpawnedProcess {
        try SpawnedProcess.spawn(executable, arguments: arguments, environment: environment.isEmpty ? nil : environment,
                                 standardOutput: .null, standardError: .null)
    }

    static func output(of executable: String, _ arguments: [String], environment: [String: String], in folder: URL) throws -> String {
        let pipe = Pipe()
        let process = try SpawnedProcess.spawn(executable, arguments: arguments, environment: environment, directory: folder.path,
                                               standardOutput: .descriptor(pipe.fileHandleForWriting.fileDescriptor), standardError: .null)
        try pipe.fileHandleForWriting.close()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        guard process.waitUntilExit() == .exited(0) else { throw ValidationError("unotify \(arguments.joined(separator: " ")) failed") }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func waitUntil(_ what: String, timeout: Double, _ condition: () -> Bool) async throws {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition() {
            guard Date() < deadline else { throw ValidationError("timed out waiting for \(what)") }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    static func listens(_ port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}

/// A TCP port free now on loopback.
func freePort() throws -> Int {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
    }
    guard bound else { throw ValidationError("no free port") }
    return Int(UInt16(bigEndian: address.sin_port))
}

// MARK: - Memory per linked device

/// The gateway's resident memory with `devices` device links open (WebSocket over TLS, each
/// authenticated and welcomed), minus its memory with none, per device. The reference, in the same
/// run: the same process before any link.
struct Links: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "The gateway's memory per linked device, with many devices linked.")

    @OptionGroup var common: Common
    @Option(help: "Devices to link.") var devices: Int = 10_000
    @Option(help: "Links opened at once.") var batch: Int = 250
    @Flag(help: "Link over cleartext WebSockets (the gateway's --cleartext), to see what TLS costs.") var cleartext = false

    func run() async throws {
        try common.check()
        let folder = URL(fileURLWithPath: "/tmp/gwlinks-\(UUID().uuidString.prefix(8))", isDirectory: true)
        let gatewayFolder = folder.appendingPathComponent("gateway", isDirectory: true)
        try FileManager.default.createDirectory(at: gatewayFolder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }

        // Enrolled before the gateway starts (the CLI would take a transaction each).
        print("Enrolling \(devices) devices")
        let credentials = try await Self.enroll(devices, in: gatewayFolder.appendingPathComponent("gateway.sqlite").path)
        let linkPort = try freePort()
        let gateway = try RunningSystem.spawn(common.unotify, ["gateway", "serve", "--gateway-dir", gatewayFolder.path,
                                                               "--sandbox-port", "\(try freePort())", "--production-port", "\(try freePort())",
                                                               "--device-link-port", "\(linkPort)", "--log-level", "warning",
                                                               // Every link, whatever this machine's open-files limit shares out.
                                                               "--maximum-device-links", "\(devices + 100)"] + common.serverArguments
                                                               + (cleartext ? ["--cleartext"] : []),
                                             environment: ProcessInfo.processInfo.environment)
        defer {
            gateway.send(SIGTERM)
            gateway.waitUntilExit()
        }
        try await RunningSystem.waitUntil("the gateway to listen", timeout: 30) { RunningSystem.listens(linkPort) }
        try await Task.sleep(for: .seconds(1))
        let idle = try Self.residentBytes(of: gateway.pid)

        var tls = TLSConfiguration.makeClientConfiguration()
        if !cleartext {
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(gatewayFolder.appendingPathComponent("ca.pem").path))
        }
        let welcomed = Counter()
        let clientTLS: TLSConfiguration? = cleartext ? nil : tls
        let scheme = cleartext ? "ws" : "wss"
        let began = ContinuousClock.now
        let links = Task { await Self.open(credentials, url: "\(scheme)://localhost:\(linkPort)/v1/device-link", tls: clientTLS, batch: batch, welcomed: welcomed) }
        defer { links.cancel() }
        try await RunningSystem.waitUntil("every link to come up", timeout: 120) { welcomed.value == credentials.count }
        let opened = ContinuousClock.now - began
        try await Task.sleep(for: .seconds(2))
        let linked = try Self.residentBytes(of: gateway.pid)
        let perDevice = Double(linked - idle) / Double(credentials.count)
        print("| devices linked | gateway RSS idle | with the links | per device | opened in |")
        print("| --- | --- | --- | --- | --- |")
        print("| \(credentials.count) | \(idle / 1024) KiB | \(linked / 1024) KiB | \(String(format: "%.1f", perDevice / 1024)) KiB | \(opened) |")
    }

    /// Device links from the benchmark's process, one per credential, until they end: opened a batch
    /// at a time (each batch once most of the one before is welcomed), each welcome counted in
    /// `welcomed`, every other text message handed to `received` with the link's writer.
    static func open(_ credentials: [String], url: String, tls: TLSConfiguration?, batch: Int, welcomed: Counter,
                     received: @escaping @Sendable (String, WebSocketOutboundWriter) async throws -> Void = { _, _ in }) async {
        var quiet = Logger(label: "links")
        quiet.logLevel = .critical
        let logger = quiet
        await withTaskGroup(of: Void.self) { group in
            for (index, credential) in credentials.enumerated() {
                group.addTask {
                    var client = WebSocketClientConfiguration()
                    client.additionalHeaders[.authorization] = "Bearer \(credential)"
                    _ = try? await WebSocketClient.connect(url: url, configuration: client, tlsConfiguration: tls, logger: logger) { inbound, outbound, _ in
                        for try await message in inbound.messages(maxSize: 1 << 16) {
                            guard case .text(let text) = message else { continue }
                            if text.contains(#""type":"welcome""#) { welcomed.increment() } else { try await received(text, outbound) }
                        }
                    }
                }
                if (index + 1) % batch == 0 {
                    try? await RunningSystem.waitUntil("links to come up", timeout: 120) { welcomed.value >= index + 1 - batch / 10 }
                }
            }
        }
    }

    static func enroll(_ count: Int, in path: String) async throws -> [String] {
        let store = try SQLiteGatewayStore(path: path)
        var credentials: [String] = []
        credentials.reserveCapacity(count)
        for index in 0..<count {
            credentials.append(try await DeviceLinks.enroll(in: store, prefix: String(format: "b%05d", index), at: Date()))
        }
        return credentials
    }

    /// VmRSS of a process, from /proc.
    static func residentBytes(of pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") else {
            throw ValidationError("no VmRSS for \(pid)")
        }
        return kilobytes * 1024
    }
}

// MARK: - Broadcast

/// One message to a channel with many subscribers, all linked: how long until the provider's `200`
/// (the message stored for every subscriber), and until the last device has it; the gateway's
/// memory before and after.
struct BroadcastFanOut: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "broadcast",
                                                    abstract: "A broadcast to many linked subscribers: time until the last has it, and memory.")

    @OptionGroup var common: Common
    @Option(help: "Subscribed devices, each linked.") var devices: Int = 10_000
    @Option(help: "Links opened at once.") var batch: Int = 250
    @Option(help: "Broadcasts sent, one after another once every device has the one before.") var messages: Int = 3
    @Option(help: "A PostgreSQL database (postgres://…) for the gateway instead of its SQLite file; it must be empty.") var database: String?

    func run() async throws {
        try common.check()
        let folder = URL(fileURLWithPath: "/tmp/gwbroadcast-\(UUID().uuidString.prefix(8))", isDirectory: true)
        let gatewayFolder = folder.appendingPathComponent("gateway", isDirectory: true)
        try FileManager.default.createDirectory(at: gatewayFolder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }

        // The provider, the channel, the devices and their subscriptions, before the gateway starts.
        print("Enrolling and subscribing \(devices) devices (\(database == nil ? "SQLite" : "PostgreSQL"))")
        let store: any GatewayStore
        var pool: Task<Void, Never>?
        if let database {
            var quiet = Logger(label: "postgres")
            quiet.logLevel = .critical
            let postgres = try PostgresGatewayStore(url: database, logger: quiet)
            pool = Task { await postgres.run() }
            try await postgres.migrate()
            store = postgres
        } else {
            store = try SQLiteGatewayStore(path: gatewayFolder.appendingPathComponent("gateway.sqlite").path)
        }
        defer { pool?.cancel() }
        let key = P256.Signing.PrivateKey()
        try await store.addTeam("ABCDE12345", name: "Benchmark")
        try await store.addApp("com.example.todo", team: "ABCDE12345")
        try await store.addKey(StoredKey(keyID: "KEY1234567", teamID: "ABCDE12345", environment: nil, bundleIdentifiers: nil,
                                         publicKeyPEM: key.publicKey.pemRepresentation))
        let channel = BroadcastChannel(channelID: Data((0..<16).map { _ in UInt8.random(in: .min ... .max) }).base64EncodedString(),
                                       bundleIdentifier: "com.example.todo", environment: .sandbox,
                                       settings: APNs.ChannelSettings(storesMostRecent: true, pushType: .alert), createdAt: Date())
        try await store.createChannel(channel, limit: APNs.channelsPerApp)
        var credentials: [String] = []
        credentials.reserveCapacity(devices)
        for index in 0..<devices {
            let credential = try await DeviceLinks.enroll(in: store, prefix: String(format: "b%05d", index), at: Date())
            try await store.setSubscribed(true, deviceID: String(credential.prefix { $0 != "." }), bundleIdentifier: "com.example.todo",
                                          environment: .sandbox, channelID: channel.channelID, at: Date())
            credentials.append(credential)
        }

        let (linkPort, sandboxPort) = (try freePort(), try freePort())
        let gateway = try RunningSystem.spawn(common.unotify, ["gateway", "serve", "--gateway-dir", gatewayFolder.path,
                                                               "--sandbox-port", "\(sandboxPort)", "--production-port", "\(try freePort())",
                                                               "--device-link-port", "\(linkPort)", "--log-level", "warning",
                                                               // Every link, whatever this machine's open-files limit shares out.
                                                               "--maximum-device-links", "\(devices + 100)"] + common.serverArguments
                                                               + (database.map { ["--database", $0] } ?? []),
                                             environment: ProcessInfo.processInfo.environment)
        defer {
            gateway.send(SIGTERM)
            gateway.waitUntilExit()
        }
        try await RunningSystem.waitUntil("the gateway to listen", timeout: 30) { RunningSystem.listens(linkPort) && RunningSystem.listens(sandboxPort) }
        try await Task.sleep(for: .seconds(1))
        let idle = try Links.residentBytes(of: gateway.pid)

        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(gatewayFolder.appendingPathComponent("ca.pem").path))
        let welcomed = Counter()
        let arrived = Counter()
        let lastArrival = LatestInstant()
        let links = Task { [credentials, tls, batch] in
            await Links.open(credentials, url: "wss://localhost:\(linkPort)/v1/device-link", tls: tls, batch: batch, welcomed: welcomed) { text, outbound in
                guard text.contains(#""type":"push""#), let sequence = Self.sequence(in: text) else { return }
                // Acknowledged as a daemon does once it stored the push.
                try await outbound.write(.text(#"{"type":"ack","through":\#(sequence)}"#))
                lastArrival.note(ContinuousClock.now)
                arrived.increment()
            }
        }
        defer { links.cancel() }
        try await RunningSystem.waitUntil("every link to come up", timeout: 300) { welcomed.value == credentials.count }
        try await Task.sleep(for: .seconds(2))
        let linked = try Links.residentBytes(of: gateway.pid)

        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: HTTPClient.Configuration(tlsConfiguration: tls))
        defer { _ = http.shutdown() as EventLoopFuture<Void> }
        let bearer = try ProviderToken.make(keyID: "KEY1234567", teamID: "ABCDE12345", issuedAt: Int64(Date().timeIntervalSince1970), key: key)
        print("| message | subscribers | provider's 200 after | last device has it after | gateway RSS after |")
        print("| --- | --- | --- | --- | --- |")
        for message in 1...messages {
            let before = arrived.value
            var request = HTTPClientRequest(url: "https://localhost:\(sandboxPort)/4/broadcasts/apps/com.example.todo")
            request.method = .POST
            request.headers.add(name: "authorization", value: "bearer \(bearer)")
            request.headers.add(name: "apns-channel-id", value: channel.channelID)
            request.headers.add(name: "apns-push-type", value: "alert")
            request.headers.add(name: "apns-priority", value: "10")
            request.headers.add(name: "apns-expiration", value: "\(Int(Date().timeIntervalSince1970) + 3600)")
            request.body = .bytes(ByteBuffer(string: #"{"aps":{"alert":{"title":"Broadcast \#(message)","body":"A message of a typical size, with a title and a body."}}}"#))
            let sent = ContinuousClock.now
            let answer = try await http.execute(request, timeout: .seconds(120))
            let answered = ContinuousClock.now - sent
            guard answer.status == .ok else { throw ValidationError("the broadcast was answered \(answer.status)") }
            try await RunningSystem.waitUntil("every device to have the message", timeout: 300) { arrived.value == before + credentials.count }
            let last = (lastArrival.value ?? sent) - sent
            let after = try Links.residentBytes(of: gateway.pid)
            print("| \(message) | \(credentials.count) | \(answered) | \(last) | \(after / 1024) KiB |")
        }
        print("")
        print("gateway RSS: idle \(idle / 1024) KiB, with \(credentials.count) links \(linked / 1024) KiB, peak \(try Self.peakResidentBytes(of: gateway.pid) / 1024) KiB")
    }

    /// The `sequence` of a push message, read without decoding the rest.
    static func sequence(in text: String) -> Int64? {
        guard let range = text.range(of: #""sequence":"#) else { return nil }
        return Int64(text[range.upperBound...].prefix { $0.isNumber })
    }

    /// VmHWM (the most resident memory so far) of a process, from /proc.
    static func peakResidentBytes(of pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
              let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") else {
            throw ValidationError("no VmHWM for \(pid)")
        }
        return kilobytes * 1024
    }
}

/// The latest of the instants noted.
final class LatestInstant: Sendable {
    private let latest = Mutex<ContinuousClock.Instant?>(nil)
    func note(_ instant: ContinuousClock.Instant) { latest.withLock { $0 = max($0 ?? instant, instant) } }
    var value: ContinuousClock.Instant? { latest.withLock { $0 } }
}

final class Counter: Sendable {
    private let count = Atomic<Int>(0)
    func increment() { count.add(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}
