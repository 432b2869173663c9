import ArgumentParser
import BenchmarkSupport
import Foundation
import GRDB
import NotificationCore
import PushGateway
import SQLiteDurability

// MARK: - The gateway's store alone

/// The provider API's durable part without HTTP/2: the gateway's SQLite store (`synchronous=FULL`,
/// its checkpointer) storing held pushes in batches of the size its group commit makes under load,
/// each push with its delivery-log entry. The reference, in the same run: the same two rows per push
/// written to a database of the same schema with SQLite alone (the store's statements and bindings,
/// one transaction per batch, without the store's pool, checkpointer and batching), the least this
/// work can cost here.
struct StoreThroughput: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "store",
                                                    abstract: "Pushes stored per second by the gateway's SQLite store alone, beside SQLite alone.")

    @Option(help: "Seconds each side runs.") var seconds: Double = 10
    @Option(help: "Pushes per transaction (the group commit's batch).") var batch: Int = 600
    @Option(help: "Devices the pushes go to, in turn.") var devices: Int = 2_000
    @Option(help: "Rounds, the store and the reference in turn.") var rounds: Int = 2
    @Flag(help: "Pushes without their delivery-log entry (the gateway's --delivery-log-days 0).") var withoutLog = false
    @Option(help: "Indexes dropped from the reference's database, to see what each costs.") var dropIndex: [String] = []
    @Option(help: "SQLite's page size for both databases (SQLite's default: 4096).") var pageSize: Int?

    func run() async throws {
        let folder = URL(fileURLWithPath: "/tmp/gwstore-\(UUID().uuidString.prefix(8))", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        print("| round | SQLite alone, pushes/s | CPU per push | the gateway's store, pushes/s | CPU per push | store ÷ SQLite alone |")
        print("| --- | --- | --- | --- | --- | --- |")
        for round in 1...rounds {
            let reference = try await measureSQLiteAlone(path: folder.appendingPathComponent("reference-\(round).sqlite").path)
            let store = try await measureStore(path: folder.appendingPathComponent("store-\(round).sqlite").path)
            print("| \(round) | \(Int(reference.perSecond)) | \(String(format: "%.1f", reference.cpuPerPush * 1e6)) µs | \(Int(store.perSecond)) | "
                + "\(String(format: "%.1f", store.cpuPerPush * 1e6)) µs | \(String(format: "%.3f", store.perSecond / reference.perSecond)) |")
        }
    }

    static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = (ContinuousClock.now - start).components
        return Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
    }

    struct Result {
        var perSecond: Double
        var cpuPerPush: Double
    }

    /// A store with the devices enrolled.
    func prepare(path: String) async throws -> SQLiteGatewayStore {
        if let pageSize {
            // Set while the file is empty, before the store's schema: SQLite keeps it from then on.
            let empty = try DatabaseQueue(path: path)
            try await empty.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA page_size = \(pageSize)")
                try db.execute(sql: "VACUUM")
            }
            try empty.close()
        }
        let store = try SQLiteGatewayStore(path: path)
        for index in 0..<devices {
            try await store.addDevice(Self.device(index), secretHash: "unused", at: Date())
        }
        return store
    }

    static func device(_ index: Int) -> String { String(format: "bench%05d", index) }

    /// The pushes of one batch, as the core hands them to the store: held (the devices are not
    /// linked), logged, a typical payload.
    func pushes(from first: Int) -> [QueuedPush] {
        let payload = Array(#"{"aps":{"alert":{"title":"Benchmark","body":"A push of a typical size, with a title and a body."}}}"#.utf8)
        let now = Date()
        return (first..<first + batch).map { index in
            let device = index % devices
            var push = QueuedPush(deviceID: Self.device(device), token: String(format: "%064x", device), bundleIdentifier: "com.example.todo",
                                  environment: .sandbox, apnsID: TimeOrderedUUIDs.shared.make(), pushType: .alert, priority: 10,
                                  expiresAt: now.addingTimeInterval(86_400), collapseID: nil, payload: payload, receivedAt: now)
            push.uniqueID = TimeOrderedUUIDs.shared.make()
            if !withoutLog { push.sender = QueuedPush.Sender(teamID: "ABCDE12345", credential: "key KEY1234567") }
            push.held = true
            return push
        }
    }

    func measureStore(path: String) async throws -> Result {
        let store = try await prepare(path: path)
        var stored = 0
        let cpu = try CPUTime.ofThisProcess()
        let start = ContinuousClock.now
        while Self.seconds(since: start) < self.seconds {
            stored += try await store.enqueue(pushes(from: stored), at: Date()).count
        }
        let elapsed = Self.seconds(since: start)
        return Result(perSecond: Double(stored) / elapsed, cpuPerPush: (try CPUTime.ofThisProcess() - cpu) / Double(stored))
    }

    /// The same rows with SQLite alone, in a database the store made (its schema), with the store closed.
    func measureSQLiteAlone(path: String) async throws -> Result {
        _ = try await prepare(path: path)
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
            try db.execute(sql: "PRAGMA cache_size = -32768")
            try db.execute(sql: "PRAGMA foreign_keys = ON")
        }
        let database = try DatabaseQueue(path: path, configuration: configuration)
        for index in dropIndex { try await database.write { db in try db.execute(sql: "DROP INDEX \(index)") } }
        var stored = 0
        let cpu = try CPUTime.ofThisProcess()
        let start = ContinuousClock.now
        while Self.seconds(since: start) < self.seconds {
            let pushes = pushes(from: stored)
            try await database.write { db in
                // The store's own statements and bindings, without the store around them.
                let insert = try db.cachedStatement(sql: SQLiteGatewayStore.insertPushSQL)
                let log = try db.cachedStatement(sql: SQLiteGatewayStore.insertDeliveryEntrySQL)
                let now = Date().timeIntervalSince1970
                for push in pushes {
                    if let sender = push.sender, let uniqueID = push.uniqueID {
                        var entry = BoundStatement(log)
                        SQLiteGatewayStore.bindDeliveryEntry(of: push, uniqueID: uniqueID, sender: sender, storedAt: now, to: &entry)
                        try entry.run()
                    }
                    var row = BoundStatement(insert)
                    SQLiteGatewayStore.bindPush(push, to: &row)
                    try row.run()
                }
            }
            stored += pushes.count
        }
        let elapsed = Self.seconds(since: start)
        return Result(perSecond: Double(stored) / elapsed, cpuPerPush: (try CPUTime.ofThisProcess() - cpu) / Double(stored))
    }
}
