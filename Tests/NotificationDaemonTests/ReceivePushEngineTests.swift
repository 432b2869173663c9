import Foundation
import NotificationCore
@testable import NotificationDaemon
import Testing

/// Pushes from the gateway's device link, received by the engine over a real SQLite file: each
/// delivered once, however often the link sends it and whenever the daemon stops.
@Suite(.timeLimit(.minutes(1))) struct ReceivePushEngineTests {
    func engine(at path: String) async throws -> DaemonEngine {
        var configuration = DaemonEngine.Configuration()
        configuration.timeZone = TimeZone(identifier: "UTC")!
        return await DaemonEngine(store: try SQLiteDaemonStore(path: path), clock: ManualDaemonClock(), configuration: configuration)
    }

    func push(_ sequence: Int64, _ payload: String, app: String = "com.example.todo", collapseID: String? = "score") -> DeviceLink.Push {
        DeviceLink.Push(sequence: sequence, token: "ab", bundleIdentifier: app, environment: .sandbox, apnsID: "id-\(sequence)",
                        pushType: .alert, priority: 10, expiresAt: 2_000_000_000, collapseID: collapseID, payload: payload, receivedAt: 1_767_225_600)
    }

    func shownBodies(_ engine: DaemonEngine) async throws -> [String] {
        try await engine.visibleNotifications("com.example.todo").map(\.notification.request.content.body)
    }

    @Test func aPushIsShownOnceEvenWhenTheLinkSendsItAgain() async throws {
        let path = try makeTestDirectory().appendingPathComponent("db.sqlite").path
        do {
            let engine = try await engine(at: path)
            _ = try await engine.registerApp("com.example.todo")
            _ = try await engine.authorize("com.example.todo", .grant)
            try await engine.receivePush(push(1, #"{"aps":{"alert":"1-0"}}"#))
            #expect(try await shownBodies(engine) == ["1-0"])
            let shown = try await engine.visibleNotifications("com.example.todo")
            #expect(shown.first?.notification.request.identifier == "score")
            #expect(shown.first?.notification.request.trigger == .push)
            // Sent again (the acknowledgement was lost): not delivered again. A different payload
            // under the same sequence shows it would have replaced the first.
            try await engine.receivePush(push(1, #"{"aps":{"alert":"replayed"}}"#))
            #expect(try await shownBodies(engine) == ["1-0"])
            #expect(await engine.linkSequence == 1)
        }
        // After a restart, what was received is known from the store.
        let restarted = try await engine(at: path)
        #expect(await restarted.linkSequence == 1)
        try await restarted.receivePush(push(1, #"{"aps":{"alert":"replayed"}}"#))
        #expect(try await shownBodies(restarted) == ["1-0"])
        try await restarted.receivePush(push(2, #"{"aps":{"alert":"2-0"}}"#))
        #expect(try await shownBodies(restarted) == ["2-0"])
    }

    @Test func pushesThatCannotBeDeliveredAreDroppedAndRemembered() async throws {
        let path = try makeTestDirectory().appendingPathComponent("db.sqlite").path
        do {
            let engine = try await engine(at: path)
            _ = try await engine.registerApp("com.example.todo")
            try await engine.receivePush(push(5, #"{"aps":{"alert":"x"}}"#, app: "com.example.removed"))
            #expect(await engine.linkSequence == 5)
            try await engine.receivePush(push(6, "not json"))
            #expect(await engine.linkSequence == 6)
            // The app is not authorized: nothing is shown, and the push counts as received.
            try await engine.receivePush(push(7, #"{"aps":{"alert":"unseen"}}"#))
            #expect(try await shownBodies(engine).isEmpty)
        }
        #expect(try await engine(at: path).linkSequence == 7)
    }
}
