import AsyncHTTPClient
import Crypto
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NotificationCore
import PushGateway
import Testing

/// APNs' broadcast API on the gateway's provider endpoint, over HTTP/2 and TLS, in front of the real
/// core and its SQLite store: channels created, read, listed and deleted, messages sent to their
/// subscribers, and every refusal of the reference with the request that earns it.
@Suite(.timeLimit(.minutes(1))) struct BroadcastChannelAPITests {
    struct Gateway {
        let core: GatewayCore
        let store: SQLiteGatewayStore
        let endpoint: ProviderEndpoint
        let bearer: String

        struct Answer {
            let status: Int
            let headers: HTTPHeaders
            let body: String
        }

        func send(_ method: HTTPMethod, _ path: String, headers: [(String, String)] = [], body: String? = nil, bearer: String? = nil) async throws -> Answer {
            var request = HTTPClientRequest(url: endpoint.url + path)
            request.method = method
            request.headers.add(name: "authorization", value: "bearer \(bearer ?? self.bearer)")
            for (name, value) in headers { request.headers.add(name: name, value: value) }
            if let body { request.body = .bytes(ByteBuffer(string: body)) }
            let response = try await endpoint.client.execute(request, timeout: .seconds(10))
            return Answer(status: Int(response.status.code), headers: response.headers, body: String(buffer: try await response.body.collect(upTo: 1 << 16)))
        }

        /// Creates a channel; returns its identifier.
        func create(policy: Int = 1, pushType: String = "alert", app: String = "com.example.todo") async throws -> String {
            let answer = try await send(.POST, "/1/apps/\(app)/channels", body: #"{"message-storage-policy":\#(policy),"push-type":"\#(pushType)"}"#)
            #expect(answer.status == 201)
            return try #require(answer.headers.first(name: "apns-channel-id"))
        }

        func broadcast(_ channel: String, headers: [(String, String)]? = nil, body: String = #"{"aps":{"alert":"News"}}"#) async throws -> Answer {
            try await send(.POST, "/4/broadcasts/apps/com.example.todo",
                           headers: [("apns-channel-id", channel)] + (headers ?? [("apns-push-type", "alert"), ("apns-expiration", "0"), ("apns-priority", "10")]),
                           body: body)
        }
    }

    func withGateway(channels: Bool = true, channelsPerApp: Int = 10_000, _ body: (Gateway) async throws -> Void) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gateway-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteGatewayStore(path: folder.appendingPathComponent("gateway.sqlite").path)
        let signingKey = P256.Signing.PrivateKey()
        try await store.addTeam("TEAM123456", name: "Example")
        try await store.addTeam("OTHER12345", name: "Other")
        try await store.addApp("com.example.todo", team: "TEAM123456")
        try await store.addApp("com.other.app", team: "OTHER12345")
        try await store.addKey(StoredKey(keyID: "KEY1234567", teamID: "TEAM123456", environment: nil, bundleIdentifiers: nil,
                                         publicKeyPEM: signingKey.publicKey.pemRepresentation))
        for device in ["device-1", "device-2"] { try await store.addDevice(device, secretHash: "unused", at: Date()) }
        var admission = PushAdmission.Configuration()
        admission.channelsPerApp = channelsPerApp
        let core = GatewayCore(store: store, admission: admission, logger: Logger(label: "test"))
        try await core.reloadProviders()
        let bearer = try ProviderToken.make(keyID: "KEY1234567", teamID: "TEAM123456", issuedAt: Int64(Date().timeIntervalSince1970), key: signingKey)
        try await ProviderEndpoint.with(credentials: { core.credentials }, acceptor: core, channels: channels ? core : nil) { endpoint in
            try await body(Gateway(core: core, store: store, endpoint: endpoint, bearer: bearer))
        }
    }

    @Test func aChannelIsCreatedReadListedAndDeletedAsOnAPNs() async throws {
        try await withGateway { gateway in
            let requestID = "0f5ec3ad-5d6c-4c1f-9d0e-2b1e5c1a9a77"
            let created = try await gateway.send(.POST, "/1/apps/com.example.todo/channels", headers: [("apns-request-id", requestID)],
                                                 body: #"{"message-storage-policy":1,"push-type":"LiveActivity"}"#)
            #expect(created.status == 201)
            #expect(created.headers.first(name: "apns-request-id") == requestID, "the request's identifier is echoed")
            let channel = try #require(created.headers.first(name: "apns-channel-id"))
            #expect(Data(base64Encoded: channel)?.count == 16)

            let read = try await gateway.send(.GET, "/1/apps/com.example.todo/channels", headers: [("apns-channel-id", channel)])
            #expect(read.status == 200)
            #expect(read.body == #"{"message-storage-policy":1,"push-type":"LiveActivity"}"#)
            #expect(read.headers.first(name: "apns-request-id") != nil)

            let other = try await gateway.create(policy: 0)
            let list = try await gateway.send(.GET, "/1/apps/com.example.todo/all-channels")
            #expect(list.status == 200)
            #expect(try JSONDecoder().decode([String: [String]].self, from: Data(list.body.utf8)) == ["channels": [channel, other]])

            #expect(try await gateway.send(.DELETE, "/1/apps/com.example.todo/channels", headers: [("apns-channel-id", channel)]).status == 204)
            let gone = try await gateway.send(.GET, "/1/apps/com.example.todo/channels", headers: [("apns-channel-id", channel)])
            #expect((gone.status, gone.body) == (400, #"{"reason":"ChannelNotRegistered"}"#))
        }
    }

    @Test func aBroadcastIsStoredForEverySubscriberAndAnsweredWithItsIdentifiers() async throws {
        try await withGateway { gateway in
            let channel = try await gateway.create(policy: 1)
            for device in ["device-1", "device-2"] {
                try await gateway.store.setSubscribed(true, deviceID: device, bundleIdentifier: "com.example.todo", environment: .sandbox,
                                                      channelID: channel, at: Date())
            }
            gateway.core.setConnected("device-1", true)
            let expiration = Int(Date().timeIntervalSince1970) + 600
            let answer = try await gateway.broadcast(channel, headers: [("apns-push-type", "alert"), ("apns-expiration", "\(expiration)"),
                                                                         ("apns-priority", "10"), ("apns-request-id", "5bd3e5a0-7c4e-4d43-9d7a-3f4f9a3b1c20")])
            #expect(answer.status == 200)
            #expect(answer.headers.first(name: "apns-request-id") == "5bd3e5a0-7c4e-4d43-9d7a-3f4f9a3b1c20")
            #expect(answer.headers.first(name: "apns-unique-id") != nil)
            // Linked: in its order now. Not linked: held until it links.
            let linked = try await gateway.store.pushes(for: "device-1", after: 0, now: Date(), limit: 10)
            #expect(linked.map(\.apnsID) == ["5bd3e5a0-7c4e-4d43-9d7a-3f4f9a3b1c20"])
            #expect(linked.first?.expiresAt == Date(timeIntervalSince1970: TimeInterval(expiration)))
            #expect(try await gateway.store.storedPushCounts() == (1, 1))
            // Without an apns-request-id, the one the gateway makes is the answer's and the pushes' alike.
            let again = try await gateway.broadcast(channel)
            let made = try #require(again.headers.first(name: "apns-request-id"))
            #expect(try await gateway.store.pushes(for: "device-1", after: 0, now: Date(), limit: 10).map(\.apnsID).last == made)
        }
    }

    @Test func everyRefusalOfTheBroadcastAPI() async throws {
        try await withGateway(channelsPerApp: 2) { gateway in
            func expect(_ answer: Gateway.Answer, _ status: Int, _ reason: String, sourceLocation: SourceLocation = #_sourceLocation) {
                #expect(answer.status == status, sourceLocation: sourceLocation)
                #expect(answer.body == #"{"reason":"\#(reason)"}"#, sourceLocation: sourceLocation)
                #expect(answer.headers.first(name: "apns-request-id") != nil, "errors carry apns-request-id", sourceLocation: sourceLocation)
            }
            let stored = try await gateway.create(policy: 1)
            let now = try await gateway.create(policy: 0)
            let path = "/1/apps/com.example.todo/channels"

            // The target.
            expect(try await gateway.send(.GET, "/1/apps/com.example.todo/other"), 404, "BadPath")
            expect(try await gateway.send(.PUT, path, body: "{}"), 405, "MethodNotAllowed")
            expect(try await gateway.send(.GET, "/4/broadcasts/apps/com.example.todo"), 405, "MethodNotAllowed")
            expect(try await gateway.send(.POST, "/1/apps/com.example.todo.push-type.liveactivity/channels", body: "{}"), 400, "TopicDisallowed")
            expect(try await gateway.send(.POST, "/1/apps/com.other.app/channels", body: #"{"message-storage-policy":1,"push-type":"alert"}"#),
                   400, "TopicDisallowed")
            expect(try await gateway.send(.GET, path, headers: [("apns-request-id", "not-a-uuid"), ("apns-channel-id", stored)]), 400, "BadMessageId")
            expect(try await gateway.send(.GET, path), 400, "MissingChannelId")
            expect(try await gateway.send(.DELETE, path, headers: [("apns-channel-id", "not base64!")]), 400, "BadChannelId")
            expect(try await gateway.send(.GET, path, headers: [("apns-channel-id", "dW5rbm93bg==")]), 400, "ChannelNotRegistered")
            expect(try await gateway.send(.GET, path, headers: [("apns-channel-id", stored)], bearer: "not.a.token"), 403, "InvalidProviderToken")

            // Creating.
            expect(try await gateway.send(.POST, path), 400, "PayloadEmpty")
            expect(try await gateway.send(.POST, path, body: "[1]"), 400, "BadRequestPayload")
            expect(try await gateway.send(.POST, path, body: #"{"message-storage-policy":1}"#), 400, "MissingPushType")
            expect(try await gateway.send(.POST, path, body: #"{"message-storage-policy":1,"push-type":"voip"}"#), 400, "InvalidPushType")
            expect(try await gateway.send(.POST, path, body: #"{"message-storage-policy":2,"push-type":"alert"}"#), 400, "BadRequestParams")
            expect(try await gateway.send(.POST, path, body: #"{"message-storage-policy":true,"push-type":"alert"}"#), 400, "BadRequestParams")
            expect(try await gateway.send(.POST, path, body: #"{"message-storage-policy":1,"push-type":"alert"}"#), 400, "CannotCreateChannelConfig")

            // Sending.
            expect(try await gateway.broadcast(stored, headers: [("apns-expiration", "0"), ("apns-priority", "10")]), 400, "MissingPushType")
            expect(try await gateway.broadcast(stored, headers: [("apns-push-type", "liveactivity"), ("apns-expiration", "0"), ("apns-priority", "10")]),
                   400, "InvalidPushType")
            expect(try await gateway.broadcast(stored, headers: [("apns-push-type", "alert"), ("apns-priority", "10")]), 400, "BadExpirationDate")
            expect(try await gateway.broadcast(now, headers: [("apns-push-type", "alert"), ("apns-expiration", "1767225600"), ("apns-priority", "10")]),
                   400, "BadExpirationDate")
            expect(try await gateway.broadcast(stored, headers: [("apns-push-type", "alert"), ("apns-expiration", "0")]), 400, "BadPriority")
            expect(try await gateway.broadcast(stored, headers: [("apns-push-type", "alert"), ("apns-expiration", "0"), ("apns-priority", "7")]),
                   400, "BadPriority")
            expect(try await gateway.broadcast(stored, body: ""), 400, "PayloadEmpty")
            expect(try await gateway.broadcast(stored, body: #"{"aps":{"alert":"\#(String(repeating: "x", count: 5_120))"}}"#), 413, "PayloadTooLarge")
            #expect(try await gateway.broadcast(stored).status == 200)
        }
    }

    @Test func anEndpointWithoutChannelsSaysTheFeatureIsNotEnabled() async throws {
        try await withGateway(channels: false) { gateway in
            let answer = try await gateway.send(.POST, "/1/apps/com.example.todo/channels", body: #"{"message-storage-policy":1,"push-type":"alert"}"#)
            #expect((answer.status, answer.body) == (400, #"{"reason":"FeatureNotEnabled"}"#))
        }
    }
}
