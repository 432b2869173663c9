import AsyncHTTPClient
import BenchmarkSupport
import Foundation
import NotificationCore
import NotificationDaemon
import NotificationDaemonClient
import ProcessSpawning
import Synchronization

/// What one measured daemon did.
struct DaemonReport: Sendable {
    var label: String
    var pending: Int
    var startUpSeconds: [Double] = []
    var idleResidentBytes = 0
    var loadedResidentBytes = 0
    var peakResidentBytes = 0
    var databaseBytes = 0
    var adds = 0
    var addSeconds = 0.0
    var addLatencies: [Double] = []
    /// CPU seconds (user and system) the daemon and this driver spent during the adds: on a shared
    /// machine, CPU per add moves less with the neighbours than adds per second do.
    var daemonCPUSeconds = 0.0
    var driverCPUSeconds = 0.0
    var lateness: [Double] = []
    var expectedFires = 0
    var sampledPending: [Int] = []
    /// Seconds for the person's calls that concern every app: lock the device, move it, list what is shown.
    var lockSeconds = 0.0
    var moveSeconds = 0.0
    var listSeconds = 0.0
    var listed = 0
    /// Seconds for the device's time-zone change (every app is stepped), and the latencies of one
    /// other app's adds made one after the other meanwhile.
    var timeZoneSeconds = 0.0
    var addLatenciesDuringTimeZoneChange: [Double] = []
    /// Resident memory once the time-zone change has stepped every app once.
    var everyAppTouchedResidentBytes = 0

    var addsPerSecond: Double { Double(adds) / addSeconds }
    var daemonCPUPerAdd: Double { daemonCPUSeconds / Double(max(adds, 1)) }
    var driverCPUPerAdd: Double { driverCPUSeconds / Double(max(adds, 1)) }
}

/// Measures a running `unotify daemon` over a seeded data directory: start-up, memory, adds through
/// the local API, and how late notifications fire while those adds go on.
struct DaemonMeasurement {
    var unotify: String
    var directory: URL
    var apps: Int
    var pendingPerApp: Int
    var loadSeconds: Double
    var warmUpSeconds: Double
    var concurrency: Int
    var fires: Int

    var socketPath: String { directory.appendingPathComponent("unotify.sock").path }

    func run(label: String) async throws -> DaemonReport {
        var report = DaemonReport(label: label, pending: apps * pendingPerApp)
        report.expectedFires = fires
        // Start-up, three times: the first two daemons are stopped at once, the third is measured on.
        var daemon: SpawnedProcess? = nil
        for attempt in 0..<3 {
            let (process, seconds) = try await start()
            report.startUpSeconds.append(seconds)
            if attempt < 2 { try await stop(process) } else { daemon = process }
        }
        guard let daemon else { fatalError("no daemon") }
        defer { daemon.send(SIGTERM) }
        report.idleResidentBytes = Self.memory(of: daemon.pid).resident

        let adminKey = try String(contentsOfFile: directory.appendingPathComponent("admin.key").path, encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let received = Mutex<[Double]>([])
        // This run's own: requests of an earlier run that stopped before they fired (the data
        // directories are kept between runs) fire late in this one, and are not counted.
        let duePrefix = "due-\(UInt32.random(in: 0 ... .max))-"
        let allFired = AsyncStream<Void>.makeStream()
        let watcher = Task {
            try await LocalAPIWebSocket.withConnection(socketPath: socketPath, path: "/v1/admin/events", key: adminKey) { connection in
                try await connection.send(#"{"type":"subscribe"}"#)
                for try await text in connection.messages {
                    let arrived = Date()
                    guard let event = try? JSONDecoder().decode(LocalAPI.WatchEvent.self, from: Data(text.utf8)) else { continue }
                    if event == .subscribed { allFired.continuation.yield() }
                    guard case .event(.app(_, .presented(let shown))) = event,
                          shown.notification.request.identifier.hasPrefix(duePrefix) else { continue }
                    let count = received.withLock { lateness in
                        lateness.append(arrived.timeIntervalSince(shown.notification.date))
                        return lateness.count
                    }
                    if count == fires { allFired.continuation.yield() }
                }
            }
        }
        defer { watcher.cancel() }
        var signals = allFired.stream.makeAsyncIterator()
        _ = await signals.next()  // subscribed
        // `warmUpSeconds` of the same load as below, not measured, before anything measured.
        if warmUpSeconds > 0 { _ = try await addLoad(seconds: warmUpSeconds, seed: 0x3A12) }

        // The requests whose lateness is measured: one each for `fires` apps, due 5 to 15 s from now.
        var generator = SeededGenerator(seed: 0xF14E)
        for index in 0..<fires {
            let app = Int(generator.next() % UInt64(apps))
            let client = LocalAPIClient(socketPath: socketPath, key: BenchmarkApps.key(app))
            let interval = 5 + 10 * Double(index) / Double(fires)
            try await client.call(.POST, "/v1/requests", body: NotificationRequest(
                identifier: "\(duePrefix)\(index)", content: BenchmarkApps.content("due-\(index)"), trigger: .timeInterval(interval, repeats: false)))
        }

        // The load: `concurrency` clients replacing random apps' requests for `loadSeconds`.
        let cpuBefore = (daemon: try CPUTime.of(daemon.pid), driver: try CPUTime.ofThisProcess())
        let (adds, latencies, elapsed) = try await addLoad(seconds: loadSeconds, seed: 0xADD5)
        report.daemonCPUSeconds = try CPUTime.of(daemon.pid) - cpuBefore.daemon
        report.driverCPUSeconds = try CPUTime.ofThisProcess() - cpuBefore.driver
        report.adds = adds
        report.addLatencies = latencies
        report.addSeconds = elapsed
        let memory = Self.memory(of: daemon.pid)
        report.loadedResidentBytes = memory.resident
        report.peakResidentBytes = memory.peak

        // Every measured request fires, late or not; give up 30 s after the last was due.
        let waited = Task {
            try? await Task.sleep(for: .seconds(30))
            allFired.continuation.yield()
        }
        _ = await signals.next()
        waited.cancel()
        report.lateness = received.withLock { $0 }

        // The person's calls that concern every app, once the load is over.
        let admin = LocalAPIClient(socketPath: socketPath, key: adminKey)
        report.lockSeconds = try await Self.time { try await admin.call(.POST, "/v1/admin/device", body: LocalAPI.DeviceChange(locked: true)) }
        report.moveSeconds = try await Self.time {
            try await admin.call(.POST, "/v1/admin/device", body: LocalAPI.DeviceChange(latitude: 48.8566, longitude: 2.3522))
        }
        report.listSeconds = try await Self.time {
            report.listed = try await admin.call(.GET, "/v1/admin/notifications", timeout: .minutes(5), as: [LocalAPI.VisibleNotification].self).count
        }

        // One app adds, one request after the other, while the device changes time zone; then the
        // zone is changed back (not measured), so that every run starts from the same state.
        let adding = LocalAPIClient(socketPath: socketPath, key: BenchmarkApps.key(0))
        let stopAdding = Mutex(false)
        let zoneAdds = Task {
            var latencies: [Double] = []
            var index = 0
            while !stopAdding.withLock({ $0 }) {
                let began = ContinuousClock.now
                try await adding.call(.POST, "/v1/requests", body: NotificationRequest(
                    identifier: "zone-\(index % 8)", content: BenchmarkApps.content("zone"), trigger: .timeInterval(86_400, repeats: false)))
                latencies.append((ContinuousClock.now - began).seconds)
                index += 1
            }
            return latencies
        }
        report.timeZoneSeconds = try await Self.time {
            try await admin.call(.POST, "/v1/admin/device", body: LocalAPI.DeviceChange(timeZone: "Asia/Tokyo"), timeout: .minutes(10))
        }
        stopAdding.withLock { $0 = true }
        report.addLatenciesDuringTimeZoneChange = try await zoneAdds.value
        report.everyAppTouchedResidentBytes = Self.memory(of: daemon.pid).resident
        try await admin.call(.POST, "/v1/admin/device", body: LocalAPI.DeviceChange(timeZone: "UTC"), timeout: .minutes(10))

        for app in stride(from: 0, to: apps, by: max(1, apps / 10)) {
            let client = LocalAPIClient(socketPath: socketPath, key: BenchmarkApps.key(app))
            let pending = try await client.call(.GET, "/v1/requests", as: [LocalAPI.PendingRequest].self)
            report.sampledPending.append(pending.filter { !$0.request.identifier.hasPrefix("due-") }.count)
        }
        report.databaseBytes = ["unotify.sqlite", "unotify.sqlite-wal"].reduce(0) { total, name in
            let attributes = try? FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent(name).path)
            return total + ((attributes?[.size] as? NSNumber)?.intValue ?? 0)
        }
        try await stop(daemon)
        return report
    }

    /// Starts the daemon and returns it with the seconds until its local API answered.
    private func start() async throws -> (SpawnedProcess, Double) {
        let began = ContinuousClock.now
        let process = try SpawnedProcess.spawn(
            unotify, arguments: ["daemon", "--data-dir", directory.path, "--socket", socketPath, "--metrics-port", "0", "--log-level", "warning"]
        )
        let health = LocalAPIClient(socketPath: socketPath, key: "")
        while true {
            if let answer = try? await health.raw(.GET, "/v1/health", timeout: .seconds(5)), answer.status == 200 { break }
            if let ended = process.termination { throw BenchmarkError("the daemon exited with \(ended)") }
            try await Task.sleep(for: .milliseconds(2))
        }
        let elapsed = ContinuousClock.now - began
        return (process, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }

    private func stop(_ process: SpawnedProcess) async throws {
        process.send(SIGTERM)
        await process.exit()
    }

    private func addLoad(seconds: Double, seed: UInt64) async throws -> (adds: Int, latencies: [Double], seconds: Double) {
        // One connection per client, as `concurrency` app processes would hold, all driven by one
        // thread (see `AddLoadClients`). The bodies are encoded before the clock starts: the driver
        // shares the cores with the daemon.
        let encoder = JSONEncoder()
        let bodies = try (0..<64).map { slot in
            Array(try encoder.encode(NotificationRequest(identifier: "r\(slot)", content: BenchmarkApps.content("r\(slot)"),
                                                         trigger: .timeInterval(3 * 86_400, repeats: false))))
        }
        let clients = try AddLoadClients(socketPath: socketPath, count: concurrency, seed: seed)
        let began = ContinuousClock.now
        let deadline = began + .milliseconds(Int64(seconds * 1000))
        let latencies = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[Double], any Error>) in
            // Blocking calls, on a thread of their own: the tasks' threads are left alone.
            Thread.detachNewThread { [apps] in
                continuation.resume(with: Result { try clients.run(until: deadline, apps: apps, bodies: bodies) })
            }
        }
        let elapsed = ContinuousClock.now - began
        return (latencies.count, latencies, elapsed.seconds)
    }

    static func time(_ body: () async throws -> Void) async throws -> Double {
        let start = ContinuousClock.now
        try await body()
        return (ContinuousClock.now - start).seconds
    }

    /// The resident and peak resident memory of a process, from `/proc`.
    static func memory(of pid: Int32) -> (resident: Int, peak: Int) {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return (0, 0) }
        func kilobytes(_ field: String) -> Int {
            guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field) }) else { return 0 }
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "0") ?? 0
        }
        return (kilobytes("VmRSS:") * 1024, kilobytes("VmHWM:") * 1024)
    }
}

struct BenchmarkError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
