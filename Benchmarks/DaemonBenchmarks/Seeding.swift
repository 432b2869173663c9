import BenchmarkSupport
import Foundation
import NotificationCore
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

    func seed(into directory: URL) throws {
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

/// What one step costs an app with `perApp` pending requests, without the daemon around it: the
/// size of its stored snapshot and the time to encode and decode it, as the store does on every step
/// (encode) and on every load of an app that is not cached (decode).
struct SnapshotCost {
    var bytes = 0
    var encodeSeconds = 0.0
    var decodeSeconds = 0.0

    static func measure(perApp: Int, repetitions: Int = 500) throws -> SnapshotCost {
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
        let encoder = JSONEncoder()
        let decoder = JSONDecoder()
        var cost = SnapshotCost()
        var data = try encoder.encode(machine)
        cost.bytes = data.count
        let encodeStart = ContinuousClock.now
        for _ in 0..<repetitions { data = try encoder.encode(machine) }
        cost.encodeSeconds = (ContinuousClock.now - encodeStart).seconds / Double(repetitions)
        let decodeStart = ContinuousClock.now
        for _ in 0..<repetitions { machine = try decoder.decode(NotificationCenterMachine.self, from: data) }
        cost.decodeSeconds = (ContinuousClock.now - decodeStart).seconds / Double(repetitions)
        return cost
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
