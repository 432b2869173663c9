import Foundation
import NotificationCore
import PushGateway
import Testing

/// Broadcast channels, as every gateway store keeps them: part of the conformance suite.
extension GatewayStoreConformanceTests {
    func channel(_ id: String, app: String = "com.example.todo", environment: APNs.Environment = .sandbox, storesMostRecent: Bool = true,
                 at date: Date = t0) -> BroadcastChannel {
        BroadcastChannel(channelID: id, bundleIdentifier: app, environment: environment,
                         settings: APNs.ChannelSettings(storesMostRecent: storesMostRecent, pushType: .alert), createdAt: date)
    }

    func message(_ channel: BroadcastChannel, _ id: String, expires: Date = t0 + 3600) -> Broadcast {
        Broadcast(channel: channel, requestID: id, priority: 10, expiresAt: expires, payload: Array(#"{"aps":{"alert":"\#(id)"}}"#.utf8), receivedAt: Self.t0)
    }

    func subscribe(_ store: any GatewayStore, _ device: String, to channel: BroadcastChannel) async throws {
        try await store.setSubscribed(true, deviceID: device, bundleIdentifier: channel.bundleIdentifier, environment: channel.environment,
                                      channelID: channel.channelID, at: Self.t0)
    }

    @Test(arguments: Kind.allCases)
    func channelsAreAnAppsInOneEnvironmentUpToTheirLimit(kind: Kind) async throws {
        try await withDevice(kind) { store, opened in
            try await store.createChannel(channel("AAAA", at: Self.t0), limit: 2)
            try await store.createChannel(channel("BBBB", at: Self.t0 + 1), limit: 2)
            try await store.createChannel(channel("CCCC", environment: .production), limit: 2)
            try await store.createChannel(channel("DDDD", app: "com.example.chat"), limit: 2)
            await #expect(throws: GatewayError.self) { try await store.createChannel(channel("EEEE", at: Self.t0 + 2), limit: 2) }
            #expect(try await store.channels(of: "com.example.todo", environment: .sandbox) == ["AAAA", "BBBB"])
            #expect(try await store.channels(of: "com.example.todo", environment: .production) == ["CCCC"])
            #expect(try await store.channel("AAAA") == channel("AAAA", at: Self.t0))
            #expect(try await store.channel("EEEE") == nil)

            try await store.deleteChannel("AAAA")
            #expect(try await store.channel("AAAA") == nil)
            await #expect(throws: GatewayError.self) { try await store.deleteChannel("AAAA") }
            // Room again for one more.
            try await store.createChannel(channel("FFFF", at: Self.t0 + 3), limit: 2)
            #expect(try await opened.reopen().channels(of: "com.example.todo", environment: .sandbox) == ["BBBB", "FFFF"])
        }
    }

    @Test(arguments: Kind.allCases)
    func aSubscriptionIsToTheAppsOwnChannelInItsEnvironment(kind: Kind) async throws {
        try await withDevice(kind) { store, _ in
            let news = channel("TkVXUw==")
            try await store.createChannel(news, limit: 10)
            for (app, environment) in [("com.example.chat", APNs.Environment.sandbox), ("com.example.todo", .production)] {
                do {
                    try await store.setSubscribed(true, deviceID: "device-1", bundleIdentifier: app, environment: environment, channelID: news.channelID, at: Self.t0)
                    Issue.record("\(app) in \(environment) subscribed to another's channel")
                } catch {
                    #expect((error as? GatewayError)?.code == .notFound)
                }
            }
            try await subscribe(store, "device-1", to: news)
            try await subscribe(store, "device-1", to: news)
            #expect(try await store.enqueue(message(news, "first"), linked: ["device-1"]) == ["device-1": false])
        }
    }

    @Test(arguments: Kind.allCases)
    func aBroadcastReachesEverySubscriberLinkedNowAndOnAChannelThatStoresTheOthersLater(kind: Kind) async throws {
        try await withDevice(kind) { store, _ in
            try await store.addDevice("device-3", secretHash: "hash-3", at: Self.t0)
            let stored = channel("U1RPUkVE")
            let now = channel("Tk9X", storesMostRecent: false)
            for channel in [stored, now] {
                try await store.createChannel(channel, limit: 10)
                for device in ["device-1", "device-2", "device-3"] { try await subscribe(store, device, to: channel) }
            }
            try await store.setDeviceDisabled("device-3", true)

            // device-1 is linked: in its order at once; device-2 is not: held; device-3 is blocked.
            #expect(try await store.enqueue(message(stored, "s1"), linked: ["device-1"]) == ["device-1": false, "device-2": true])
            #expect(try await store.enqueue(message(now, "n1"), linked: ["device-1"]) == ["device-1": false])
            let delivered = try await store.pushes(for: "device-1", after: 0, now: Self.t0, limit: 10)
            #expect(delivered.map(\.apnsID) == ["s1", "n1"])
            #expect(delivered.first?.bundleIdentifier == "com.example.todo")
            #expect(delivered.first.map { String(decoding: $0.payload, as: UTF8.self) } == #"{"aps":{"alert":"s1"}}"#)

            // The most recent message replaces the one still stored; the held one comes when device-2 links.
            _ = try await store.enqueue(message(stored, "s2"), linked: ["device-1"])
            #expect(try await store.promoteHeld(deviceID: "device-2", now: Self.t0, limit: 10) == 1)
            #expect(try await store.pushes(for: "device-2", after: 0, now: Self.t0, limit: 10).map(\.apnsID) == ["s2"])
            #expect(try await store.pushes(for: "device-1", after: 0, now: Self.t0, limit: 10).map(\.apnsID) == ["n1", "s2"])

            // Unsubscribed, and after its channel is deleted, a device gets nothing more.
            try await store.setSubscribed(false, deviceID: "device-1", bundleIdentifier: "com.example.todo", environment: .sandbox,
                                          channelID: stored.channelID, at: Self.t0)
            #expect(try await store.enqueue(message(stored, "s3"), linked: ["device-1", "device-2"]) == ["device-2": false])
            try await store.deleteChannel(stored.channelID)
            #expect(try await store.enqueue(message(stored, "s4"), linked: ["device-1", "device-2"]) == [:])
        }
    }

    /// Many devices' acknowledgements in one call (one commit), a device's twice among them.
    @Test(arguments: Kind.allCases)
    func acknowledgementsOfManyDevicesAreWrittenTogether(kind: Kind) async throws {
        try await withDevice(kind) { store, _ in
            let stored = try await store.enqueue([push("device-1", id: "a"), push("device-1", id: "b"), push("device-2", token: "bb01", id: "c"),
                                                  push("device-1", id: "d")], at: Self.t0)
            let sequence = { (id: String) in stored.first { $0.apnsID == id }!.sequence }
            try await store.acknowledge([
                Acknowledgement(deviceID: "device-1", through: sequence("a"), at: Self.t0),
                Acknowledgement(deviceID: "device-2", through: sequence("c"), at: Self.t0),
                Acknowledgement(deviceID: "device-1", through: sequence("b"), at: Self.t0 + 1),
            ])
            #expect(try await store.pushes(for: "device-1", after: 0, now: Self.t0, limit: 10).map(\.apnsID) == ["d"])
            #expect(try await store.pushes(for: "device-2", after: 0, now: Self.t0, limit: 10).isEmpty)
        }
    }
}
