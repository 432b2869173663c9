import Foundation
import NotificationCore
import PushGateway
import Testing

/// The delivery log, as every gateway store keeps it: part of the conformance suite.
extension GatewayStoreConformanceTests {
    func logged(_ device: String = "device-1", token: String = "aa01", id: String, collapse: String? = nil, expires: Date = t0 + 3600,
                dropped: String? = nil) -> QueuedPush {
        var queued = push(device, token: token, id: id, collapse: collapse, expires: expires)
        queued.uniqueID = "unique-\(id)"
        queued.sender = QueuedPush.Sender(teamID: "TEAM123456", credential: "key KEY1234567")
        queued.droppedBecause = dropped
        return queued
    }

    func stages(_ store: any GatewayStore, _ id: String) async throws -> [String] {
        try await store.deliveryRecords(matching: id).flatMap { $0.stages.map { [$0.stage.rawValue, $0.detail].compactMap { $0 }.joined(separator: ": ") } }
    }

    @Test(arguments: Kind.allCases)
    func aPushIsLoggedFromAcceptanceToAcknowledgementWithoutItsPayload(kind: Kind) async throws {
        try await withDevice(kind) { store, opened in
            let stored = try await store.enqueue([logged(id: "a"), logged(id: "b")], at: Self.t0 + 1)
            try await store.acknowledge(deviceID: "device-1", through: stored[0].sequence, at: Self.t0 + 3,
                                        sent: [(uniqueID: "unique-a", at: Self.t0 + 2)])
            let records = try await store.deliveryRecords(matching: "a")
            #expect(records.count == 1)
            let record = try #require(records.first)
            #expect(record.uniqueID == "unique-a")
            #expect(record.teamID == "TEAM123456")
            #expect(record.token == "aa01")
            #expect(record.payloadBytes == #"{"aps":{"alert":"a"}}"#.utf8.count)
            #expect(record.stages == [
                DeliveryLog.Entry(.accepted, at: Self.t0, detail: "key KEY1234567"),
                DeliveryLog.Entry(.stored, at: Self.t0 + 1, detail: "queued for the linked device"),
                DeliveryLog.Entry(.sent, at: Self.t0 + 2),
                DeliveryLog.Entry(.acknowledged, at: Self.t0 + 3),
            ])
            // By its unique id too, and after a restart.
            #expect(try await opened.reopen().deliveryRecords(matching: "unique-a") == records)
            #expect(try await stages(store, "b") == ["accepted: key KEY1234567", "stored: queued for the linked device"])
            #expect(try await store.deliveryRecords(matching: "nobody").isEmpty)
        }
    }

    @Test(arguments: Kind.allCases)
    func collapsedExpiredDroppedAndUnregisteredPushesSaySo(kind: Kind) async throws {
        try await withDevice(kind) { store, _ in
            _ = try await store.enqueue([logged(id: "score-1", collapse: "score"), logged(id: "short", expires: Self.t0 + 10),
                                         logged(id: "never", dropped: "for now only (apns-expiration 0), and the device was not linked")],
                                        at: Self.t0)
            _ = try await store.enqueue([logged(id: "score-2", collapse: "score")], at: Self.t0 + 1)
            #expect(try await stages(store, "score-1").last == "collapsed: replaced by score-2, with the same collapse id")
            #expect(try await stages(store, "never") == ["accepted: key KEY1234567", "dropped: for now only (apns-expiration 0), and the device was not linked"])
            // A push only logged is never queued.
            #expect(try await store.pushes(for: "device-1", after: 0, now: Self.t0, limit: 10).map(\.apnsID) == ["short", "score-2"])
            #expect(try await store.removeExpired(before: Self.t0 + 10) == 1)
            #expect(try await stages(store, "short").last == "expired")
            try await store.unregister(deviceID: "device-1", bundleIdentifier: "com.example.todo", at: Self.t0 + 20)
            #expect(try await stages(store, "score-2").last == "dropped: the app unregistered")
        }
    }

    @Test(arguments: Kind.allCases)
    func aDeviceReportsOnlyItsOwnPushesOnlyItsStagesOnlyOnceAndBoundedly(kind: Kind) async throws {
        try await withDevice(kind) { store, _ in
            _ = try await store.enqueue([logged(id: "mine"), logged("device-2", token: "bb01", id: "theirs")], at: Self.t0)
            let reports = [
                DeliveryLog.Report(uniqueID: "unique-mine", stage: .presented, at: Self.t0 + 1, detail: "banner, list"),
                DeliveryLog.Report(uniqueID: "unique-theirs", stage: .dismissed, at: Self.t0 + 1),
                // A gateway's stage cannot be claimed by a device.
                DeliveryLog.Report(uniqueID: "unique-mine", stage: .acknowledged, at: Self.t0 + 1),
                DeliveryLog.Report(uniqueID: "unique-mine", stage: .replied, at: Self.t0 + 2, detail: String(repeating: "x", count: 500)),
            ]
            try await store.recordDeviceReports(reports, from: "device-1", through: 4)
            // Sent again after a reconnect: not recorded twice.
            try await store.recordDeviceReports(reports, from: "device-1", through: 4)
            let mine = try await stages(store, "mine")
            #expect(mine.count == 4)
            #expect(mine[2] == "presented: banner, list")
            #expect(mine[3] == "replied: " + String(repeating: "x", count: DeliveryLog.maximumDetailLength))
            #expect(try await stages(store, "theirs").count == 2)
            // A device that reports without end fills at most its push's share.
            let flood = (0..<100).map { DeliveryLog.Report(uniqueID: "unique-mine", stage: .opened, at: Self.t0 + Double($0)) }
            try await store.recordDeviceReports(flood, from: "device-1", through: 5)
            #expect(try await stages(store, "mine").count == 2 + DeliveryLog.maximumStagesPerPush)
        }
    }

    /// A device that sends its reports again with more after them (its link dropped before the
    /// gateway confirmed them, and it saved more meanwhile) finds each recorded once, whatever part
    /// of them the gateway had recorded.
    @Test(arguments: Kind.allCases)
    func reportsSentAgainUnderANewNumberAreRecordedOnce(kind: Kind) async throws {
        try await withDevice(kind) { store, _ in
            _ = try await store.enqueue([logged(id: "a"), logged(id: "b")], at: Self.t0)
            let first = [
                DeliveryLog.Report(uniqueID: "unique-a", stage: .presented, at: Self.t0 + 1, detail: "banner"),
                DeliveryLog.Report(uniqueID: "unique-b", stage: .presented, at: Self.t0 + 1.25, detail: "banner"),
            ]
            try await store.recordDeviceReports(first, from: "device-1", through: 2)
            let again = first + [
                DeliveryLog.Report(uniqueID: "unique-a", stage: .opened, at: Self.t0 + 2),
                // The same stage at another time is another report.
                DeliveryLog.Report(uniqueID: "unique-b", stage: .presented, at: Self.t0 + 3, detail: "banner"),
            ]
            try await store.recordDeviceReports(again, from: "device-1", through: 4)
            #expect(try await stages(store, "a") == ["accepted: key KEY1234567", "stored: queued for the linked device", "presented: banner", "opened"])
            #expect(try await stages(store, "b") == ["accepted: key KEY1234567", "stored: queued for the linked device", "presented: banner", "presented: banner"])
        }
    }

    @Test(arguments: Kind.allCases)
    func theLogForgetsOldPushesUnlessStillStoredAndKeepsAtMostItsLimit(kind: Kind) async throws {
        try await withDevice(kind) { store, _ in
            let stored = try await store.enqueue([logged(id: "old"), logged(id: "waiting")], at: Self.t0)
            try await store.acknowledge(deviceID: "device-1", through: stored[0].sequence, at: Self.t0, sent: [])
            var later = logged(id: "new")
            later.receivedAt = Self.t0 + 100
            var newest = logged(id: "newest")
            newest.receivedAt = Self.t0 + 200
            _ = try await store.enqueue([later, newest], at: Self.t0 + 200)
            // "waiting" is older than the retention but still stored for its device: kept.
            #expect(try await store.pruneDeliveryLog(acceptedBefore: Self.t0 + 50, keepingAtMost: 10) == 1)
            #expect(try await store.deliveryRecords(matching: "old").isEmpty)
            #expect(try await store.deliveryRecords(matching: "waiting").count == 1)
            // Over the limit, the oldest go whatever they are.
            #expect(try await store.pruneDeliveryLog(acceptedBefore: Self.t0, keepingAtMost: 1) == 2)
            #expect(try await store.deliveryRecords(matching: "newest").count == 1)
            #expect(try await store.deliveryRecords(matching: "waiting").isEmpty)
            #expect(try await store.deliveryRecords(matching: "new").isEmpty)
            // Stages of a forgotten push are not recorded.
            try await store.recordStages([DeliveryLog.Report(uniqueID: "unique-old", stage: .sent, at: Self.t0)])
            #expect(try await store.deliveryRecords(matching: "old").isEmpty)
        }
    }
}

extension GatewayStoreConformanceTests {
    /// A push whose device's links keep failing with it is dropped at the limit, logged with why;
    /// the pushes after it stay, and a push no longer stored is not counted.
    @Test(arguments: Kind.allCases)
    func aPushItsDeviceNeverTakesIsDroppedAfterItsTries(kind: Kind) async throws {
        try await withDevice(kind) { store, opened in
            let stored = try await store.enqueue([logged(id: "stuck"), logged(id: "after")], at: Self.t0 + 1)
            let stuck = stored[0].sequence
            for attempt in 1..<3 {
                let dropped = try await store.noteNotTaken(deviceID: "device-1", sequence: stuck, reason: "the device closed its link with 1011: disk full",
                                                           limit: 3, at: Self.t0 + Double(attempt))
                #expect(!dropped, "try \(attempt) of 3")
            }
            #expect(try await store.pushes(for: "device-1", after: 0, now: Self.t0, limit: 10).map(\.apnsID) == ["stuck", "after"])
            // The third, after a restart: the tries were kept.
            let reopened = try await opened.reopen()
            #expect(try await reopened.noteNotTaken(deviceID: "device-1", sequence: stuck, reason: "the link ended without a close", limit: 3, at: Self.t0 + 3))
            #expect(try await reopened.pushes(for: "device-1", after: 0, now: Self.t0, limit: 10).map(\.apnsID) == ["after"])
            #expect(try await stages(reopened, "stuck").last == "dropped: the device did not take it in 3 tries: the link ended without a close")
            // Gone: nothing more to count.
            #expect(try await !reopened.noteNotTaken(deviceID: "device-1", sequence: stuck, reason: "again", limit: 3, at: Self.t0 + 4))
            #expect(try await !reopened.noteNotTaken(deviceID: "device-2", sequence: stored[1].sequence, reason: "not its push", limit: 1, at: Self.t0 + 4))
            #expect(try await reopened.pushes(for: "device-1", after: 0, now: Self.t0, limit: 10).map(\.apnsID) == ["after"])
        }
    }
}
