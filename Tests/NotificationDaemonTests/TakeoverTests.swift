import DaemonTestSupport
import Foundation
import NotificationCore
@testable import NotificationDaemon
import NotificationDaemonClient
import OpenUserNotifications
@testable import OpenUserNotificationsLink
import TestSupport
import Testing

/// One process per app, as on iOS: a second connection with the app's key takes over from the first.
@Suite(.timeLimit(.minutes(1))) struct TakeoverTests {
    @Test func theNewConnectionGetsWhatTheOldOneDidNotConfirmAndNothingTwice() async throws {
        // The first connection lets go when told; a grace longer than any pause of a loaded machine
        // keeps the daemon from closing it first (the grace has a test of its own below).
        try await withDaemon(configure: { $0.engine.takeoverGrace = .seconds(30) }) { daemon in
            let app = try await daemon.authorizedApp("com.example.todo")
            try await app.add("confirmed", title: "Confirmed")
            try await app.add("unconfirmed", title: "Unconfirmed")
            try await daemon.withApp(key: app.key) { first in
                let admin = daemon.admin
                try await admin.call(.POST, "/v1/admin/apps/com.example.todo/notifications/confirmed/respond", body: LocalAPI.Respond(kind: "open"))
                guard case .call(.response(let confirmedTicket, _)) = try await first.next() else { throw TakeoverTestError("no response") }
                try await first.reply(.responseCompleted(ticket: confirmedTicket))
                try await admin.call(.POST, "/v1/admin/apps/com.example.todo/notifications/unconfirmed/respond", body: LocalAPI.Respond(kind: "open"))
                guard case .call(.response(let unconfirmedTicket, let response)) = try await first.next() else { throw TakeoverTestError("no response") }
                #expect(response.notification.request.identifier == "unconfirmed")

                // A second process connects while the first still holds a response it has not confirmed.
                async let second: LocalAPI.AppEvent = daemon.withApp(key: app.key) { second in try await second.next() }
                #expect(try await first.next() == .replaced, "the first is told it was replaced")
                try await first.reply(.released)
                guard case .call(.response(let handedTicket, let handed)) = try await second else {
                    throw TakeoverTestError("the second connection got no response")
                }
                #expect(handed.notification.request.identifier == "unconfirmed", "what was not confirmed goes to the new process")
                #expect(handedTicket == unconfirmedTicket, "with its ticket, so the app can tell a repeat")
            }
        }
    }

    @Test func aConnectionThatNeverLetsGoIsWaitedForOnlyAsLongAsTheGrace() async throws {
        try await withDaemon(configure: { $0.engine.takeoverGrace = .milliseconds(200) }) { daemon in
            let app = try await daemon.authorizedApp("com.example.todo")
            try await daemon.withApp(key: app.key) { first in
                // The first never answers `released`: the second connects once the grace is over.
                try await daemon.withApp(key: app.key, state: .foreground) { _ async throws in
                    #expect(try await daemon.engine.appState("com.example.todo") == .foreground)
                }
                #expect(try await first.next() == .replaced)
            }
        }
    }

    @Test func aReplacedLinkStopsReconnectingAndSaysSo() async throws {
        try await withDaemon { daemon in
            let app = try await daemon.authorizedApp("com.example.todo")
            let events = await daemon.engine.watch().events
            var iterator = events.makeAsyncIterator()
            let first = DaemonBackend(client: LocalAPIClient(socketPath: daemon.socketPath, key: app.key), initialState: .background)
            #expect(await iterator.next() == .app("com.example.todo", .appStateChanged(.background)))
            let second = DaemonBackend(client: LocalAPIClient(socketPath: daemon.socketPath, key: app.key), initialState: .foreground)
            try await withDeadline("the first link to learn it was replaced") { await first.waitUntilReplaced() }
            #expect(first.wasReplaced)
            #expect(await iterator.next() == .app("com.example.todo", .appStateChanged(.notRunning)))
            #expect(await iterator.next() == .app("com.example.todo", .appStateChanged(.foreground)))
            #expect(!second.wasReplaced)
            await second.close()
            #expect(await iterator.next() == .app("com.example.todo", .appStateChanged(.notRunning)))
            // The first link does not come back after the second one left.
            #expect(try await daemon.engine.appState("com.example.todo") == .notRunning)
            await first.close()
        }
    }

    @Test(arguments: 0..<50) func theReconnectBackOffIsBoundedAndJittered(seed: Int) {
        var generator = SeededGenerator(seed: UInt64(seed))
        var backoff = ReconnectBackoff()
        var upper = ReconnectBackoff.first
        for _ in 0..<10 {
            let wait = backoff.next(using: &generator)
            #expect(wait <= upper && wait >= upper / 2, "each wait is drawn from the upper half of its step")
            upper = min(upper * 2, ReconnectBackoff.ceiling)
        }
        #expect(upper == ReconnectBackoff.ceiling, "it stops doubling at 5 s")
        backoff.reset()
        #expect(backoff.next(using: &generator) <= ReconnectBackoff.first)
    }
}

struct TakeoverTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
