import ConnectionLifecycle
import NIOCore
import NIOEmbedded
import Synchronization
import Testing

/// A listener's connections at its capacity: strangers give way to newer connections, clients never.
@Suite struct ListenerConnectionsTests {
    func channel() throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        return channel
    }

    /// A listener that refuses says so (the first refusal at once), but not for every refusal of a
    /// flood: at most once a minute, with how many were refused meanwhile.
    @Test func refusalsAreSaidAtOnceAndThenAtMostOnceAMinute() throws {
        let said = Mutex<[Int]>([])
        let connections = ListenerConnections(capacity: 1) { refused in said.withLock { $0.append(refused) } }
        let client = try channel()
        #expect(connections.admit(client) == .admitted)
        connections.firstUsed(client)
        for _ in 0..<3 { #expect(connections.admit(try channel()) == .refused) }
        #expect(said.withLock { $0 } == [1])
        #expect(connections.turnedAway.refused == 3)
    }

    @Test func theOldestStrangerGivesWayToANewConnectionAndClientsStay() throws {
        let connections = ListenerConnections(capacity: 3)
        let client = try channel(), first = try channel(), second = try channel()
        #expect(connections.admit(client) == .admitted)
        connections.firstUsed(client)
        #expect(connections.admit(first) == .admitted)
        #expect(connections.admit(second) == .admitted)
        // Full: the oldest stranger is closed for the newcomer.
        let third = try channel()
        #expect(connections.admit(third) == .admittedInPlaceOfAnother)
        #expect(!first.isActive)
        #expect(client.isActive && second.isActive && third.isActive)
        #expect(connections.count == 3)
        // Every one a client's: a newcomer is refused.
        connections.firstUsed(second)
        connections.firstUsed(third)
        let refused = try channel()
        #expect(connections.admit(refused) == .refused)
        #expect(!refused.isActive)
        #expect(connections.turnedAway == (givenUp: 1, refused: 1))
        // A client leaves: there is room again.
        try client.close().wait()
        client.embeddedEventLoop.run()
        #expect(connections.count == 2)
        #expect(connections.admit(try channel()) == .admitted)
    }
}
