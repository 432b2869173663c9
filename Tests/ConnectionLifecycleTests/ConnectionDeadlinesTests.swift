import ConnectionLifecycle
import NIOCore
import Testing

/// A connection's deadlines as a value: what happens, what the machine decides, no socket.
@Suite struct ConnectionDeadlinesTests {
    static let start = NIODeadline.uptimeNanoseconds(1_000_000_000)
    static let provider = ConnectionDeadlines.Configuration(handshake: .seconds(10), opening: .seconds(10), firstUse: .seconds(60), idle: .hours(1))

    func at(_ seconds: Int64) -> NIODeadline { Self.start + .seconds(seconds) }

    @Test(arguments: [
        ("the handshake", 0), ("the opening", 1), ("the first use", 2),
    ])
    func aConnectionLateForAStageIsClosed(_ stage: String, reached: Int) {
        var deadlines = ConnectionDeadlines(configuration: Self.provider, now: Self.start)
        #expect(deadlines.firstWakeUp == .wakeUp(at: at(10)))
        var now = Self.start
        if reached >= 1 {
            now = at(3)
            #expect(deadlines.handshakeCompleted(now: now) == .wakeUp(at: at(13)))
        }
        if reached >= 2 {
            now = at(4)
            #expect(deadlines.opened(now: now) == .wakeUp(at: at(64)))
        }
        let due: NIODeadline = [at(10), at(13), at(64)][reached]
        // Early (a timer may fire a little before its time): armed again, not closed.
        #expect(deadlines.wokeUp(now: due - .milliseconds(1)) == .wakeUp(at: due))
        let late: ConnectionDeadlines.Stage = [.handshaking, .opening, .awaitingFirstUse][reached]
        #expect(deadlines.wokeUp(now: due) == .close(lateFor: late), "\(stage)")
        #expect(deadlines.stage == .closed)
        #expect(deadlines.wokeUp(now: due + .seconds(1)) == .none)
    }

    @Test func aConnectionInUseIsToldWhenIdleThenClosed() {
        var deadlines = ConnectionDeadlines(configuration: Self.provider, now: Self.start)
        _ = deadlines.handshakeCompleted(now: at(1))
        _ = deadlines.opened(now: at(1))
        #expect(deadlines.firstUsed(now: at(2)) == .wakeUp(at: at(2 + 3600)))
        // A read half an hour in: the idle hour counts from it.
        deadlines.read(now: at(1800))
        #expect(deadlines.wokeUp(now: at(3602)) == .wakeUp(at: at(5400)))
        // Nothing more read: the protocol is told, and the connection closes after the grace.
        #expect(deadlines.wokeUp(now: at(5400)) == .signalIdle(closeAt: at(5405)))
        #expect(deadlines.stage == .closingIdle)
        deadlines.read(now: at(5401))
        #expect(deadlines.wokeUp(now: at(5405)) == .close(lateFor: .closingIdle))
    }

    @Test func withoutTLSNorAFirstUseTheOpeningIsTheFirstUse() {
        var deadlines = ConnectionDeadlines(configuration: .init(handshake: nil, opening: .seconds(10)), now: Self.start)
        #expect(deadlines.stage == .opening)
        #expect(deadlines.firstWakeUp == .wakeUp(at: at(10)))
        // Kept alive by its protocol from then on: no deadline of its own.
        #expect(deadlines.opened(now: at(1)) == .cancelTimer)
        #expect(deadlines.stage == .inUse)
        #expect(deadlines.wokeUp(now: at(100_000)) == .none)
    }

    @Test func aFirstUseBeforeTheOpeningIsTaken() {
        var deadlines = ConnectionDeadlines(configuration: Self.provider, now: Self.start)
        _ = deadlines.handshakeCompleted(now: at(1))
        #expect(deadlines.firstUsed(now: at(2)) == .wakeUp(at: at(3602)))
        // What comes after changes nothing.
        #expect(deadlines.opened(now: at(3)) == .none)
        #expect(deadlines.handshakeCompleted(now: at(3)) == .none)
        #expect(deadlines.stage == .inUse)
    }
}
