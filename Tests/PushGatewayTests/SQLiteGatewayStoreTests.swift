import Foundation
import GRDB
import NotificationCore
import PushGateway
import TestSupport
import Testing

/// The SQLite store's own: which pushes are held for each device is kept in memory, read from the
/// rows, and must stay what the rows say.
@Suite struct SQLiteGatewayStoreTests {
    static let t0 = Date(timeIntervalSince1970: 1_767_225_600)

    func held(_ id: String, device: String = "device-1", priority: Int = 10) -> QueuedPush {
        var push = QueuedPush(deviceID: device, token: "aa01", bundleIdentifier: "com.example.todo", environment: .sandbox, apnsID: id, pushType: .alert,
                              priority: priority, expiresAt: Self.t0 + 3600, collapseID: nil, payload: Array(#"{"aps":{}}"#.utf8), receivedAt: Self.t0)
        push.held = true
        return push
    }

    func openTwice() throws -> (SQLiteGatewayStore, SQLiteGatewayStore) {
        let path = try TemporaryFolders.make("gateway-store-").appendingPathComponent("gateway.sqlite").path
        return (try SQLiteGatewayStore(path: path), try SQLiteGatewayStore(path: path))
    }

    /// The command line writes to the file of a running gateway (`unotify gateway devices remove`):
    /// the gateway's store sees what it removed, and what another process stored.
    @Test func whatAnotherProcessChangesIsSeen() async throws {
        let (gateway, commandLine) = try openTwice()
        try await gateway.addDevice("device-1", secretHash: "hash-1", at: Self.t0)
        try await gateway.addDevice("device-2", secretHash: "hash-2", at: Self.t0)
        _ = try await gateway.enqueue([held("a"), held("b", device: "device-2")], at: Self.t0)
        #expect(try await gateway.storedPushCounts() == (queued: 0, held: 2))

        try await commandLine.removeDevice("device-1", at: Self.t0 + 1)
        _ = try await commandLine.enqueue([held("c", device: "device-2", priority: 5), held("d", device: "device-2")], at: Self.t0 + 1)
        #expect(try await gateway.promoteHeld(deviceID: "device-1", now: Self.t0 + 2, limit: 10) == 0)
        #expect(try await gateway.storedPushCounts() == (queued: 0, held: 3))
        #expect(try await gateway.promoteHeld(deviceID: "device-2", now: Self.t0 + 2, limit: 10) == 3)
        #expect(try await gateway.pushes(for: "device-2", after: 0, now: Self.t0 + 2, limit: 10).map(\.apnsID) == ["b", "d", "c"])
        #expect(try await gateway.storedPushCounts() == (queued: 3, held: 0))
    }

    /// A batch that fails half-way is rolled back whole, and so is what it had added to the index.
    @Test func aBatchThatFailsLeavesNothingHeld() async throws {
        let (store, _) = try openTwice()
        try await store.addDevice("device-1", secretHash: "hash-1", at: Self.t0)
        await #expect(throws: GatewayError.self) {
            _ = try await store.enqueue([held("a"), held("b", device: "no-such-device")], at: Self.t0)
        }
        #expect(try await store.storedPushCounts() == (queued: 0, held: 0))
        #expect(try await store.promoteHeld(deviceID: "device-1", now: Self.t0, limit: 10) == 0)
        // And the next batch is held as it should be.
        _ = try await store.enqueue([held("c")], at: Self.t0)
        #expect(try await store.promoteHeld(deviceID: "device-1", now: Self.t0, limit: 10) == 1)
        #expect(try await store.pushes(for: "device-1", after: 0, now: Self.t0, limit: 10).map(\.apnsID) == ["c"])
    }

    /// A device's reports are written a share at a time, so that pushes are written between two
    /// shares. When a later share fails (here a trigger of another connection fails it; in life the
    /// process stops), the shares before it stay, the message is not marked recorded, and when the
    /// device sends it again each report is recorded once.
    @Test func reportsWrittenInPartsAndSentAgainAreRecordedOnce() async throws {
        let path = try TemporaryFolders.make("gateway-store-").appendingPathComponent("gateway.sqlite").path
        let store = try SQLiteGatewayStore(path: path)
        try await store.addDevice("device-1", secretHash: "hash-1", at: Self.t0)
        var push = held("a")
        push.held = false
        push.uniqueID = "unique-a"
        push.sender = QueuedPush.Sender(teamID: "TEAM123456", credential: "key KEY1234567")
        _ = try await store.enqueue([push], at: Self.t0)
        let share = SQLiteGatewayStore.reportsPerTransaction
        let count = 2 * share + 5
        let reports = (0..<count).map { i in
            DeliveryLog.Report(uniqueID: "unique-a", stage: .opened, at: Self.t0 + Double(i), detail: i == count - 1 ? "the last" : nil)
        }
        let other = try DatabaseQueue(path: path)
        try await other.write { db in
            try db.execute(sql: """
                CREATE TRIGGER fail_the_last BEFORE INSERT ON delivery_stage WHEN NEW.detail = 'the last' BEGIN SELECT RAISE(ABORT, 'the disk is gone'); END
                """)
        }
        await #expect(throws: GatewayError.self) { try await store.recordDeviceReports(reports, from: "device-1", through: 7) }
        func opened() async throws -> Int {
            try await store.deliveryRecords(matching: "a").first?.stages.filter { $0.stage == .opened }.count ?? -1
        }
        #expect(try await opened() == 2 * share)

        try await other.write { db in try db.execute(sql: "DROP TRIGGER fail_the_last") }
        try await store.recordDeviceReports(reports, from: "device-1", through: 7)
        #expect(try await opened() == count)
        // Recorded now: the same number again is not recorded, whatever it holds.
        try await store.recordDeviceReports(reports.map { var report = $0; report.at += 1000; return report }, from: "device-1", through: 7)
        #expect(try await opened() == count)
    }
}
