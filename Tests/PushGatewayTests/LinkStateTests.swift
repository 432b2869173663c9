import Foundation
import NotificationCore
@testable import PushGateway
import Testing

/// One device link's state, stepped as the links step it: a window of unacknowledged pushes, one turn
/// of sending at a time (a wake during a turn asks for another), pushes handed over only to a link
/// caught up, the device's messages in order within a bound, and what a close leaves to record.
@Suite struct LinkStateTests {
    /// A link's state stepped through a reference (`#expect` takes no mutating call).
    final class SteppedLink {
        var state = LinkState()
        func callAsFunction<T>(_ step: (inout LinkState) -> T) -> T { step(&state) }
    }

    static let start = Date(timeIntervalSince1970: 1_767_225_600)

    static func push(_ sequence: Int64, logged: Bool = true) -> QueuedPush {
        var push = QueuedPush(sequence: sequence, deviceID: "device-1", token: "aa", bundleIdentifier: "com.example.a", environment: .sandbox,
                              apnsID: "id-\(sequence)", pushType: .alert, priority: 10, expiresAt: start.addingTimeInterval(3600),
                              collapseID: nil, payload: Array("{}".utf8), receivedAt: start)
        push.uniqueID = logged ? "unique-\(sequence)" : nil
        return push
    }

    @Test func aWakeDuringATurnAsksForOneMoreTurn() {
        let link = SteppedLink()
        #expect(link { $0.startTurn() })
        // Stored meanwhile: the turn under way reads again once it ends, and no second turn starts.
        link { $0.wake(held: false) }
        #expect(!link { $0.startTurn() })
        #expect(link { $0.endTurn() })
        #expect(!link { $0.endTurn() })
        #expect(link { $0.startTurn() })
    }

    @Test func aTurnReadsWithinTheWindowAfterWhatWasSent() throws {
        let link = SteppedLink()
        #expect(link { $0.startTurn() })
        let first = try #require(link { $0.nextRead(window: 3) } as (after: Int64, room: Int)?)
        #expect(first.after == 0 && first.room == 3)
        link { $0.read(through: 3) }
        link { $0.sending([Self.push(1), Self.push(2), Self.push(3)], at: Self.start) }
        // The window is full: the turn stops reading until the device acknowledges.
        #expect(link { $0.nextRead(window: 3) } == nil)
        let acknowledged = try #require(link { $0.acknowledge(through: 2) })
        #expect(acknowledged.through == 2)
        #expect(acknowledged.pushes.map(\.uniqueID) == ["unique-1", "unique-2"])
        let next = try #require(link { $0.nextRead(window: 3) } as (after: Int64, room: Int)?)
        #expect(next.after == 3 && next.room == 2)
        // An acknowledgement of nothing sent here covers nothing.
        #expect(link { $0.acknowledge(through: 2) } == nil)
    }

    @Test func heldPushesArePromotedBeforeTheLinkIsCaughtUp() {
        let link = SteppedLink()
        // At first held pushes may wait: a read that finds nothing goes on to promote them.
        #expect(link { $0.foundNothingStored() })
        #expect(!link.state.isCaughtUp)
        // As many promoted as there was room for: there may be more, looked for after these.
        #expect(link { $0.promoted(4, of: 4) })
        #expect(link { $0.foundNothingStored() })
        #expect(!link { $0.promoted(0, of: 4) })
        #expect(link.state.isCaughtUp)
        // Nothing more held and nothing stored: caught up at the first read.
        #expect(!link { $0.foundNothingStored() })
        #expect(link.state.isCaughtUp)
        // Stored held while linked elsewhere: caught up no more.
        link { $0.wake(held: true) }
        #expect(!link.state.isCaughtUp)
        #expect(link { $0.foundNothingStored() })
    }

    @Test func pushesAreHandedOverOnlyToALinkCaughtUpWithRoomForThem() {
        let link = SteppedLink()
        // Not caught up yet: the link reads them from the store.
        #expect(!link { $0.handOver(first: 1, last: 2, count: 2, window: 4) })
        #expect(link { $0.startTurn() })
        _ = link { $0.nextRead(window: 4) }
        // Nothing stored, and none of what may have been held: caught up.
        #expect(link { $0.foundNothingStored() })
        #expect(!link { $0.promoted(0, of: 4) })
        #expect(link.state.isCaughtUp)
        // During the turn that caught up: still not, the turn is the link's one sender.
        #expect(!link { $0.handOver(first: 1, last: 2, count: 2, window: 4) })
        #expect(!link { $0.endTurn() })
        #expect(!link { $0.handOver(first: 1, last: 5, count: 5, window: 4) }, "more than the window has room for")
        #expect(link { $0.handOver(first: 1, last: 2, count: 2, window: 4) })
        #expect(link.state.sent == 2)
        // A batch at or before what was sent is not handed over again.
        #expect(!link { $0.endTurn() })
        #expect(!link { $0.handOver(first: 2, last: 3, count: 2, window: 4) })
    }

    @Test func theDevicesMessagesAreHandledInOrderWithinTheBound() {
        let link = SteppedLink()
        #expect(link { $0.receive(.ack(through: 1), inboxLimit: 2) } == .startsHandling)
        #expect(link { $0.receive(.ack(through: 2), inboxLimit: 2) } == .queued)
        #expect(link { $0.receive(.ack(through: 3), inboxLimit: 2) } == .overflows)
        #expect(link { $0.nextMessage() } == .ack(through: 1))
        #expect(link { $0.nextMessage() } == .ack(through: 2))
        #expect(link { $0.nextMessage() } == nil)
        #expect(link { $0.receive(.ack(through: 4), inboxLimit: 2) } == .startsHandling)
    }

    @Test func aFailedLinkCountsATryOfTheOldestPushTheDeviceDidNotTake() {
        let link = SteppedLink()
        link { $0.read(through: 3) }
        link { $0.sending([Self.push(1), Self.push(2), Self.push(3, logged: false)], at: Self.start) }
        // Acknowledged before the close, not handled yet: that push was taken.
        _ = link { $0.receive(.ack(through: 1), inboxLimit: 8) }
        #expect(!link { $0.deviceClosed(code: 1011, reason: "it broke") })
        let closed = link { $0.close() }
        #expect(link.state.isClosed)
        #expect(Set(closed.sent.map(\.uniqueID)) == ["unique-1", "unique-2"])
        #expect(closed.notTaken?.sequence == 2)
        #expect(closed.notTaken?.reason == "the device closed its link with 1011: it broke")
        #expect(!link { $0.startTurn() }, "a closed link sends nothing")
    }

    @Test func aLinkTheGatewayClosedOrThatEndedWellFailsNoPush() {
        for ending in ["gateway", "normal", "going away"] {
            let link = SteppedLink()
            link { $0.read(through: 1) }
            link { $0.sending([Self.push(1)], at: Self.start) }
            switch ending {
            case "gateway":
                #expect(link { $0.gatewayCloses() })
                #expect(!link { $0.gatewayCloses() }, "one close frame")
                // The device's answer to the gateway's close: the connection just closes.
                #expect(link { $0.deviceClosed(code: 1011, reason: "") })
            case "normal": #expect(!link { $0.deviceClosed(code: 1000, reason: "") })
            default: #expect(!link { $0.deviceClosed(code: 1001, reason: "") })
            }
            #expect(link { $0.close() }.notTaken == nil, "\(ending)")
        }
        let silent = SteppedLink()
        silent { $0.read(through: 1) }
        silent { $0.sending([Self.push(1)], at: Self.start) }
        #expect(silent { $0.close() }.notTaken?.reason == "the link ended without a close")
    }
}
