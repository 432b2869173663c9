import BenchmarkSupport
import Foundation
import NotificationCore
import NotificationEngine
import PrivateFiles
import NotificationDaemon

/// The benchmark's apps: `com.example.bench.<n>`, each with a key the driver can compute.
enum BenchmarkApps {
    static func bundleIdentifier(_ index: Int) -> String { "com.example.bench.\(index)" }
    static func key(_ index: Int) -> String { "bench-key-\(index)-3b9f1c" }

    /// The content of every benchmark request: a title and a body of realistic length.
    static func content(_ identifier: String) -> NotificationContent {
        var content = NotificationContent()
        content.title = "Reminder \(identifier)"
        content.body = "Water the plants on the balcony before the sun is up, and check the tomatoes."
        content.threadIdentifier = "garden"
        return content
    }
}

/// Writes a daemon data directory holding `apps` authorized apps with `perApp` pending requests each,
/// straight into the store: building a million requests through the API would take longer than the
/// benchmarks themselves. The requests fire between 2 and 30 days after seeding, so none falls due
/// while the benchmarks run.
struct Seeder {
    var apps: Int
    var perApp: Int

    func seed(into directory: URL) async throws {
        try PrivateFiles.createDirectory(directory)
        let configuration = DaemonConfiguration(dataDirectory: directory)
        try PrivateFiles.touch(configuration.databasePath)
        let store = try SQLiteDaemonStore(path: configuration.databasePath)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let now = Date()
        var generator = SeededGenerator(seed: 0x5EED_0001)
        for index in 0..<apps {
            var machine = NotificationCenterMachine(now: now, calendar: calendar, timeZone: calendar.timeZone, appState: .notRunning, appReachable: false)
            _ = machine.requestAuthorization(options: [.alert, .sound, .badge], call: 0)
            _ = machine.answerAuthorizationPrompt(allow: true)
            for slot in 0..<perApp {
                let identifier = "r\(slot)"
                let seconds = 2.0 * 86_400 + Double(generator.next() % (28 * 86_400))
                _ = try machine.add(NotificationRequest(identifier: identifier, content: BenchmarkApps.content(identifier),
                                                        trigger: .timeInterval(seconds, repeats: false)))
            }
            try await store.insert(StoredApp(bundleIdentifier: BenchmarkApps.bundleIdentifier(index), keyHash: DaemonEngine.hash(BenchmarkApps.key(index)),
                                       launchCommand: nil, machine: machine, bootID: "seeded"))
            if index % 1000 == 999 { print("  seeded \(index + 1) of \(apps) apps") }
        }
    }
}

/// What one add costs an app with `perApp` pending requests, without the daemon around it: the bytes
/// the store encodes for the step (the one request's content, and the core when it changed) and the
/// time to encode them, and the time to build the whole app from its rows (core, categories, and each
/// request with its content left encoded until read), as the store does when it loads an app that is
/// not cached.
struct StepCost {
    var bytes = 0
    var encodeSeconds = 0.0
    var decodeSeconds = 0.0
    /// The memory one app of `perApp` pending takes, built as the daemon's cache keeps it.
    var heapBytesPerApp = 0

    static func measure(perApp: Int, repetitions: Int = 500) throws -> StepCost {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        var machine = NotificationCenterMachine(now: Date(), calendar: calendar, timeZone: calendar.timeZone, appState: .notRunning, appReachable: false)
        _ = machine.requestAuthorization(options: [.alert, .sound, .badge], call: 0)
        _ = machine.answerAuthorizationPrompt(allow: true)
        for slot in 0..<perApp {
            let identifier = "r\(slot)"
            _ = try machine.add(NotificationRequest(identifier: identifier, content: BenchmarkApps.content(identifier),
                                                    trigger: .timeInterval(Double(86_400 + slot), repeats: false)))
        }
        machine.startRecordingChanges()
        // As the store encodes.
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        encoder.userInfo[.omitsDefaultContent] = true
        let decoder = JSONDecoder()
        var cost = StepCost()
        func encodeStep() throws -> Int {
            _ = try machine.add(NotificationRequest(identifier: "r0", content: BenchmarkApps.content("r0"), trigger: .timeInterval(86_400, repeats: false)))
            let changes = machine.takeChanges()
            // The content of each written request (its trigger goes into columns), the core if it changed,
            // and the time and sequence (16 bytes).
            var bytes = try changes.core.map { try encoder.encode($0).count } ?? 0
            for entry in changes.pending { bytes += try encoder.encode(entry.request.content).count }
            return bytes + 16
        }
        _ = try encodeStep()
        cost.bytes = try encodeStep()
        let encodeStart = ContinuousClock.now
        for _ in 0..<repetitions { _ = try encodeStep() }
        cost.encodeSeconds = (ContinuousClock.now - encodeStart).seconds / Double(repetitions)

        let whole = machine.takeWhole()
        let core = try encoder.encode(whole.core!)
        let categories = try encoder.encode(whole.categories ?? [])
        let rows = try whole.pending.map { Array(try encoder.encode($0.request.content)) }
        let decodeStart = ContinuousClock.now
        for _ in 0..<repetitions {
            let pending = try whole.pending.indices.map { index in
                NotificationCenterMachine.PendingRequest(
                    request: NotificationRequest(identifier: whole.pending[index].request.identifier, encodedContent: rows[index],
                                                 trigger: whole.pending[index].request.trigger),
                    nextFireDate: whole.pending[index].nextFireDate, insideRegion: nil, sequence: whole.pending[index].sequence
                )
            }
            machine = NotificationCenterMachine(
                now: whole.now, nextSequence: whole.nextSequence,
                core: try decoder.decode(NotificationCenterMachine.Core.self, from: core),
                categories: try decoder.decode([NotificationCategory].self, from: categories),
                pending: pending, visible: [], queued: []
            )
        }
        cost.decodeSeconds = (ContinuousClock.now - decodeStart).seconds / Double(repetitions)

        // The memory an app takes once built, as the daemon's cache holds it: what 2,000 apps built
        // from rows of their own (nothing shared between them) add to this process's resident set.
        func build() throws -> NotificationCenterMachine {
            let pending = whole.pending.indices.map { index in
                NotificationCenterMachine.PendingRequest(
                    request: NotificationRequest(identifier: whole.pending[index].request.identifier, encodedContent: Array(rows[index]),
                                                 trigger: whole.pending[index].request.trigger),
                    nextFireDate: whole.pending[index].nextFireDate, insideRegion: nil, sequence: whole.pending[index].sequence
                )
            }
            var built = NotificationCenterMachine(
                now: whole.now, nextSequence: whole.nextSequence,
                core: try decoder.decode(NotificationCenterMachine.Core.self, from: core),
                categories: try decoder.decode([NotificationCategory].self, from: categories),
                pending: pending, visible: [], queued: []
            )
            built.startRecordingChanges()
            return built
        }
        let residentBefore = DaemonMeasurement.memory(of: getpid()).resident
        let built = try (0..<2_000).map { _ in try build() }
        cost.heapBytesPerApp = (DaemonMeasurement.memory(of: getpid()).resident - residentBefore) / built.count
        withExtendedLifetime(built) {}
        return cost
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
