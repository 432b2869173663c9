import AsyncHTTPClient
import Crypto
import Foundation
import Logging
import NIOCore
import NotificationCore
import PushGateway
import TestSupport
import Testing

/// The APNs rules that count per device token or need to know where a device is linked, held across
/// two gateway nodes: two cores, each with its own store on one PostgreSQL database (as two
/// `unotify gateway --database` processes), each behind its own provider endpoint.
@Suite(.serialized, .timeLimit(.minutes(2))) struct SeveralNodesTests {
    struct Node {
        let core: GatewayCore
        let store: PostgresGatewayStore
        let endpoint: ProviderEndpoint
        let bearer: String

        func post(_ token: String, headers: [(String, String)] = []) async throws -> (status: Int, body: String) {
            var request = HTTPClientRequest(url: endpoint.url + "/3/device/\(token)")
            request.method = .POST
            request.headers.add(name: "authorization", value: "bearer \(bearer)")
            request.headers.add(name: "apns-topic", value: "com.example.todo")
            for (name, value) in headers { request.headers.add(name: name, value: value) }
            request.body = .bytes(ByteBuffer(string: #"{"aps":{"alert":"Hi"}}"#))
            let response = try await endpoint.client.execute(request, timeout: .seconds(10))
            return (Int(response.status.code), String(buffer: try await response.body.collect(upTo: 1 << 16)))
        }
    }

    /// Two nodes on a new database holding a team, its app and key, and `device-1`.
    func withTwoNodes(admission: PushAdmission.Configuration = .init(), _ body: (Node, Node) async throws -> Void) async throws {
        let url = try await PostgresServer.newDatabase()
        let signingKey = P256.Signing.PrivateKey()
        let setUp = try await PostgresServer.openStore(url)
        try await setUp.addTeam("TEAM123456", name: "Example")
        try await setUp.addApp("com.example.todo", team: "TEAM123456")
        try await setUp.addKey(StoredKey(keyID: "KEY1234567", teamID: "TEAM123456", environment: nil, bundleIdentifiers: nil,
                                         publicKeyPEM: signingKey.publicKey.pemRepresentation))
        try await setUp.addDevice("device-1", secretHash: "unused", at: Date())
        let bearer = try ProviderToken.make(keyID: "KEY1234567", teamID: "TEAM123456", issuedAt: Int64(Date().timeIntervalSince1970), key: signingKey)

        func node(_ body: (Node) async throws -> Void) async throws {
            let store = try await PostgresServer.openStore(url)
            let core = GatewayCore(store: store, admission: admission, logger: Logger(label: "test"))
            try await core.reloadProviders()
            // What the node hears of the others, as `unotify gateway` does.
            let following = Task {
                await store.followChanges { change in
                    if case .tokensUnregistered(let tokens) = change { core.forgetTokens(tokens) }
                }
            }
            defer { following.cancel() }
            try await ProviderEndpoint.with(credentials: { core.credentials }, refreshCredentials: { core.refreshProviders($0) }, acceptor: core) { endpoint in
                try await body(Node(core: core, store: store, endpoint: endpoint, bearer: bearer))
            }
        }
        try await node { a in try await node { b in try await body(a, b) } }
    }

    @Test func aPushForNowOnlyIsKeptForADeviceLinkedToAnotherNodeAndDroppedForOneLinkedNowhere() async throws {
        try await withTwoNodes { a, b in
            let token = try await a.core.register(deviceID: "device-1", bundleIdentifier: "com.example.todo", environment: .sandbox, at: Date()).token
            b.core.setConnected("device-1", true)
            try await waitFor("node A to see the device linked to node B", within: 10) {
                (try? await a.store.devicesLinkedElsewhere(["device-1"])) == ["device-1"]
            }
            #expect(try await a.post(token, headers: [("apns-expiration", "0"), ("apns-id", "11111111-1111-1111-1111-111111111111")]).status == 200)
            // Kept, and in the device's order at once (not held for a device that is linked).
            #expect(try await a.store.pushes(for: "device-1", after: 0, now: Date(), limit: 10).map(\.apnsID) == ["11111111-1111-1111-1111-111111111111"])

            b.core.setConnected("device-1", false)
            try await waitFor("node A to see the device unlinked", within: 10) {
                (try? await a.store.devicesLinkedElsewhere(["device-1"])) == []
            }
            #expect(try await a.post(token, headers: [("apns-expiration", "0"), ("apns-id", "22222222-2222-2222-2222-222222222222")]).status == 200)
            let counts = try await a.store.storedPushCounts()
            #expect(counts.queued == 1 && counts.held == 0, "the second was accepted and not kept")
            #expect(try await a.core.deliveryRecords(matching: "22222222-2222-2222-2222-222222222222").first?.stages.last?.stage == .dropped)
        }
    }

    @Test func aPushForALinkedDeviceThroughAnotherNodeTakesItsPlaceAtOnce() async throws {
        try await withTwoNodes { a, b in
            let token = try await a.core.register(deviceID: "device-1", bundleIdentifier: "com.example.todo", environment: .sandbox, at: Date()).token
            #expect(try await a.post(token, headers: [("apns-id", "33333333-3333-3333-3333-333333333333")]).status == 200)
            #expect(try await a.store.storedPushCounts().held == 1, "stored held: the device is linked nowhere")
            b.core.setConnected("device-1", true)
            try await waitFor("node A to see the device linked to node B", within: 10) {
                (try? await a.store.devicesLinkedElsewhere(["device-1"])) == ["device-1"]
            }
            #expect(try await a.post(token, headers: [("apns-id", "44444444-4444-4444-4444-444444444444")]).status == 200)
            #expect(try await a.store.pushes(for: "device-1", after: 0, now: Date(), limit: 10).map(\.apnsID) == ["44444444-4444-4444-4444-444444444444"])
        }
    }

    @Test func tooManyRequestsCountsThePushesToATokenThroughEveryNode() async throws {
        var admission = PushAdmission.Configuration()
        admission.burstPerToken = 4
        admission.sustainedPerTokenPerSecond = 0.001
        try await withTwoNodes(admission: admission) { a, b in
            let token = try await a.core.register(deviceID: "device-1", bundleIdentifier: "com.example.todo", environment: .sandbox, at: Date()).token
            for node in [a, b, a, b] { #expect(try await node.post(token).status == 200) }
            // Each node took two: its own count allows more, the token's does not.
            #expect(try await a.post(token) == (429, #"{"reason":"TooManyRequests"}"#))
            #expect(try await b.post(token) == (429, #"{"reason":"TooManyRequests"}"#))
            #expect(try await a.store.storedPushCounts().held == 4)
        }
    }

    @Test func aTokenUnregisteredThroughOneNodeAnswers410OnTheOther() async throws {
        try await withTwoNodes { a, b in
            let token = try await a.core.register(deviceID: "device-1", bundleIdentifier: "com.example.todo", environment: .sandbox, at: Date()).token
            // Node B reads the token and keeps it.
            #expect(try await b.post(token).status == 200)
            try await a.core.unregister(deviceID: "device-1", bundleIdentifier: "com.example.todo", at: Date(timeIntervalSince1970: 1_767_225_600.5))
            try await waitFor("node B to answer 410", within: 10) {
                (try? await b.post(token)) ?? (0, "") == (410, #"{"reason":"Unregistered","timestamp":1767225600500}"#)
            }
        }
    }
}
