import DaemonTestSupport
import Foundation
import NotificationCore
@testable import NotificationDaemon
import NotificationDaemonClient
import Testing
import TestSupport

/// An app's background push budget, set through the admin API as `unotify apps background-pushes`
/// sets it: what a running app receives, what a bad request gets, and that the budget outlives a restart.
@Suite(.timeLimit(.minutes(1))) struct BackgroundPushBudgetTests {
    static let app = "com.example.todo"
    static let path = "/v1/admin/apps/\(app)/background-pushes"

    /// A background push with `id` in its payload, as a provider would send one.
    static func push(_ id: Int, through daemon: RunningDaemon) async throws {
        try await daemon.admin.call(.POST, "/v1/admin/apps/\(app)/pushes", body: LocalAPI.LocalPush(payload: #"{"aps":{"content-available":1},"id":\#(id)}"#))
    }

    /// The `id` of the next push the app receives, confirmed as its completion handler would.
    static func nextPush(on stream: AppStream) async throws -> Int? {
        while true {
            guard case .call(.remoteNotification(let ticket, let remote)) = try await stream.next() else { continue }
            try await stream.reply(.remoteNotificationCompleted(ticket: ticket, result: .newData))
            guard case .integer(let id)? = remote.userInfo["id"] else { return nil }
            return id
        }
    }

    /// The `id` of the next push the daemon holds for the app.
    static func nextHeld(in events: inout AsyncStream<DaemonEvent>.Iterator) async -> Int? {
        while let event = await events.next() {
            guard case .app(Self.app, .remoteNotificationHeld(let remote)) = event else { continue }
            guard case .integer(let id)? = remote.userInfo["id"] else { return nil }
            return id
        }
        return nil
    }

    static func setBudget(_ perHour: Int?, on daemon: RunningDaemon) async throws -> Int? {
        try await daemon.admin.call(.PUT, path, body: LocalAPI.BackgroundPushBudget(perHour: perHour), as: LocalAPI.BackgroundPushBudget.self).perHour
    }

    /// Sends pushes `ids` to an app in the background; returns those it received, in order, and the
    /// one held last when some were held back.
    static func sendInBackground(_ ids: ClosedRange<Int>, received count: Int, to daemon: RunningDaemon, key: String) async throws -> (received: [Int?], held: Int?) {
        try await daemon.withApp(key: key, state: .background) { stream in
            var events = await daemon.engine.watch().events.makeAsyncIterator()
            for id in ids { try await Self.push(id, through: daemon) }
            var received: [Int?] = []
            for _ in 0..<count { received.append(try await Self.nextPush(on: stream)) }
            let held = count < ids.count ? await Self.nextHeld(in: &events) : nil
            return (received, held)
        }
    }

    @Test func liftingTheBudgetHandsOverTheHeldPushAndItStaysLiftedAfterARestart() async throws {
        let directory = try makeTestDirectory()
        let clock = ManualDaemonClock()
        let key = try await withDaemon(directory: directory, clock: clock) { daemon in
            let key = try await daemon.admin.call(.POST, "/v1/admin/apps", body: LocalAPI.RegisterApp(bundleIdentifier: Self.app), as: LocalAPI.AppKey.self).key
            try await daemon.withApp(key: key, state: .background) { stream in
                var events = await daemon.engine.watch().events.makeAsyncIterator()
                // Three an hour unless set: the fourth is held.
                for id in 1...4 { try await Self.push(id, through: daemon) }
                var received: [Int?] = []
                for _ in 1...3 { received.append(try await Self.nextPush(on: stream)) }
                #expect(received == [1, 2, 3])
                #expect(await Self.nextHeld(in: &events) == 4)

                // No limit: the held push goes at once, and so does every later one.
                #expect(try await Self.setBudget(nil, on: daemon) == nil)
                #expect(try await Self.nextPush(on: stream) == 4)
                for id in 5...9 { try await Self.push(id, through: daemon) }
                var later: [Int?] = []
                for _ in 5...9 { later.append(try await Self.nextPush(on: stream)) }
                #expect(later == [5, 6, 7, 8, 9])
            }
            return key
        }
        // Kept with the app: after a restart, still no limit; then one an hour, starting full.
        try await withDaemon(directory: directory, clock: clock) { daemon in
            let unlimited = try await Self.sendInBackground(10...14, received: 5, to: daemon, key: key)
            #expect(unlimited.received == [10, 11, 12, 13, 14])
            #expect(try await Self.setBudget(1, on: daemon) == 1)
            let one = try await Self.sendInBackground(15...16, received: 1, to: daemon, key: key)
            #expect(one.received == [15])
            #expect(one.held == 16)
        }
    }

    @Test func aBadBudgetIsRefusedAndChangesNothing() async throws {
        try await withDaemon { daemon in
            let key = try await daemon.admin.call(.POST, "/v1/admin/apps", body: LocalAPI.RegisterApp(bundleIdentifier: Self.app), as: LocalAPI.AppKey.self).key
            for body in [#"{"perHour":0}"#, #"{"perHour":-3}"#, #"{"perHour":1000001}"#, #"{"perHour":"many"}"#, #"{}"#] {
                let refused = await problem { try await daemon.admin.call(.PUT, Self.path, body: RawJSON(text: body)) }
                #expect(refused?.status == 400, "\(body)")
            }
            let unknown = await problem {
                try await daemon.admin.call(.PUT, "/v1/admin/apps/com.example.unknown/background-pushes", body: LocalAPI.BackgroundPushBudget(perHour: 5))
            }
            #expect(unknown?.status == 404)
            let app = LocalAPIClient(socketPath: daemon.socketPath, key: "not-the-admin-key")
            let unauthorized = await problem { try await app.call(.PUT, Self.path, body: LocalAPI.BackgroundPushBudget(perHour: nil)) }
            #expect(unauthorized?.status == 401)
            // Still three an hour.
            let unchanged = try await Self.sendInBackground(1...4, received: 3, to: daemon, key: key)
            #expect(unchanged.received == [1, 2, 3])
            #expect(unchanged.held == 4)
        }
    }
}
