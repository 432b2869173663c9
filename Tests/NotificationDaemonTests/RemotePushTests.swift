import AsyncHTTPClient
import Crypto
import DaemonTestSupport
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOSSL
import NotificationCore
@testable import NotificationDaemon
import NotificationDaemonClient
@testable import NotificationEngine
import OpenUserNotifications
@testable import OpenUserNotificationsLink
import OpenUserNotificationsPushKit
import OpenUserNotificationsUIKit
import PushGateway
import ServiceLifecycle
import Synchronization
import TestSupport
import Testing

/// A provider's push through the whole system: HTTP/2 and TLS into the gateway, down the device link
/// into the daemon, shown to the person; each part real, in one process.
@Suite(.timeLimit(.minutes(2))) struct RemotePushTests {

    @Test func withoutAGatewayATokenRequestSaysSo() async throws {
        try await withDaemon { daemon in
            _ = try await daemon.registerApp("com.example.todo")
            let answer = try await daemon.admin.raw(.POST, "/v1/admin/apps/com.example.todo/remote-notifications",
                                                    body: LocalAPI.RemoteNotificationRegistration(environment: .sandbox))
            #expect(answer.status == 409)
            #expect(String(decoding: answer.body, as: UTF8.self).contains("gatewayNotConfigured"))
            let unknown = try await daemon.admin.raw(.POST, "/v1/admin/apps/com.example.nobody/remote-notifications",
                                                     body: LocalAPI.RemoteNotificationRegistration(environment: .sandbox))
            #expect(unknown.status == 404)
        }
    }

    /// A gateway with one team, app, key and device, and a daemon linked to it as that device; each
    /// real, in this process.
    struct LinkedSystem {
        var daemon: RunningDaemon
        var link: DeviceLinkClient
        var running: RunningGateway

        var gateway: PushGatewayServices { running.gateway }
        var http: HTTPClient { running.http }
        var sandboxPort: Int { running.sandboxPort }
        /// The provider's JWT, made once: a new one on the same connection within 20 minutes would be
        /// `429 TooManyProviderTokenUpdates`, as on APNs.
        var bearer: String { running.bearer }
        /// The provider's signing key, and the gateway's folder (its database, `ca.pem`).
        var signingKey: P256.Signing.PrivateKey { running.signingKey }
        var gatewayFolder: URL { running.folder }

        /// Sends a push as a provider does.
        func send(to token: String, _ payload: String, topic: String = "com.example.todo", headers: [String: String] = [:]) async throws -> HTTPClientResponse {
            try await running.send(to: token, payload, topic: topic, headers: headers)
        }
    }

    /// The gateway of a ``LinkedSystem``, running, no daemon linked to it yet.
    struct RunningGateway {
        var gateway: PushGatewayServices
        var http: HTTPClient
        var sandboxPort: Int
        /// Where device `device-1` (secret `secret`) links, and the authority its certificate is from.
        var linkURL: String
        var authorityPEM: String
        var bearer: String
        var signingKey: P256.Signing.PrivateKey
        var folder: URL

        /// The link's configuration for device `device-1`.
        var linkConfiguration: DeviceLinkClient.Configuration {
            .init(url: linkURL, credential: "device-1.secret", trustedAuthorityPEM: authorityPEM)
        }

        /// Sends a push as a provider does.
        func send(to token: String, _ payload: String, topic: String = "com.example.todo", headers: [String: String] = [:]) async throws -> HTTPClientResponse {
            var request = HTTPClientRequest(url: "https://localhost:\(sandboxPort)/3/device/\(token)")
            request.method = .POST
            request.headers.add(name: "authorization", value: "bearer \(bearer)")
            request.headers.add(name: "apns-topic", value: topic)
            for (name, value) in headers { request.headers.add(name: name, value: value) }
            request.body = .bytes(ByteBuffer(string: payload))
            // Far above a push's time: the suite's first minutes on two cores can hold an answer 10 s.
            return try await http.execute(request, timeout: .seconds(30))
        }
    }

    func withGateway(_ body: @escaping @Sendable (RunningGateway) async throws -> Void) async throws {
        let folder = try makeTestDirectory().appendingPathComponent("gateway")
        var gatewayConfiguration = GatewayConfiguration(dataDirectory: folder)
        gatewayConfiguration.sandboxPort = 0
        gatewayConfiguration.productionPort = 0
        gatewayConfiguration.deviceLinkPort = 0
        let ports = ListeningPorts()
        let gateway = try await PushGatewayServices(configuration: gatewayConfiguration, logger: Logger(label: "gateway"),
                                                    onListening: { environment, port in ports.set(environment.rawValue, port) },
                                                    onDeviceLinkListening: { ports.set("link", $0) })
        let signingKey = P256.Signing.PrivateKey()
        try await gateway.store.addTeam("TEAM123456", name: "Example")
        try await gateway.store.addApp("com.example.todo", team: "TEAM123456")
        try await gateway.store.addKey(StoredKey(keyID: "KEY1234567", teamID: "TEAM123456", environment: nil, bundleIdentifiers: nil,
                                                 publicKeyPEM: signingKey.publicKey.pemRepresentation))
        try await gateway.core.reloadProviders()
        try await gateway.store.addDevice("device-1", secretHash: DeviceLinks.hash("secret"), at: Date())
        let authority = try String(contentsOfFile: gatewayConfiguration.authorityCertificatePath, encoding: .utf8)
        var quiet = Logger(label: "gateway")
        quiet.logLevel = .critical
        let group = ServiceGroup(services: gateway.services, gracefulShutdownSignals: [], logger: quiet)

        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask {
                defer { ports.end() }
                try await group.run()
            }
            let bound = try await ports.waitFor(["sandbox", "link"])
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates([try NIOSSLCertificate(bytes: Array(authority.utf8), format: .pem)])
            let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: HTTPClient.Configuration(tlsConfiguration: tls))
            do {
                try await body(RunningGateway(gateway: gateway, http: http, sandboxPort: bound["sandbox"]!, linkURL: "wss://localhost:\(bound["link"]!)",
                                              authorityPEM: authority,
                                              bearer: try ProviderToken.make(keyID: "KEY1234567", teamID: "TEAM123456",
                                                                             issuedAt: Int64(Date().timeIntervalSince1970), key: signingKey),
                                              signingKey: signingKey, folder: folder))
            } catch {
                try? await http.shutdown()
                await group.triggerGracefulShutdown()
                throw error
            }
            try await http.shutdown()
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }

    func withLinkedSystem(_ body: @escaping @Sendable (LinkedSystem) async throws -> Void) async throws {
        try await withGateway { running in
            try await withDaemon(configure: { configuration in configuration.gateway = running.linkConfiguration }) { daemon in
                let link = try #require(daemon.link)
                var linked = link.linked.makeAsyncIterator()
                _ = await linked.next()
                try await body(LinkedSystem(daemon: daemon, link: link, running: running))
            }
        }
    }

    /// A push the daemon takes from its link is committed without waiting for the disk: the app in
    /// the foreground is asked `willPresent` at once, while the sync that makes the push durable
    /// across a power cut is still to come (held here); the link acknowledges the push, and the
    /// gateway lets it go, only once that sync is done.
    @Test func aPushIsPutToTheAppBeforeTheSyncAndAcknowledgedOnlyAfterIt() async throws {
        try await withGateway { running in
            let store = try InstrumentedStore(path: makeTestDirectory().appendingPathComponent("daemon.sqlite").path)
            var configuration = DaemonEngine.Configuration()
            configuration.timeZone = TimeZone(identifier: "UTC")!
            let engine = await DaemonEngine(store: store, clock: ManualDaemonClock(), configuration: configuration, launcher: { _ in })
            _ = try await engine.registerApp("com.example.todo")
            _ = try await engine.authorize("com.example.todo", .grant)
            var quiet = Logger(label: "link")
            quiet.logLevel = .critical
            let link = DeviceLinkClient(configuration: running.linkConfiguration, engine: engine, logger: quiet)
            var linked = link.linked.makeAsyncIterator()
            let linking = Task { try await link.run() }
            _ = await linked.next()
            let token = try await link.register("com.example.todo", environment: .sandbox)
            let (_, messages) = try await engine.connect("com.example.todo", state: .foreground)
            var asked = messages.makeAsyncIterator()
            var acknowledgements = link.acknowledgements.makeAsyncIterator()

            store.holdSyncs()
            #expect(try await running.send(to: token, #"{"aps":{"alert":"before the sync"}}"#).status == .ok)
            var question: DeliveredNotification?
            while let message = await asked.next() {
                if case .call(.willPresent(_, let notification)) = message {
                    question = notification
                    break
                }
            }
            #expect(question?.request.content.body == "before the sync")
            // Its step's commit did not wait for the disk either.
            #expect(store.syncedBatches.last == false)
            // The acknowledgement waits for the sync (the only wait: no delivery report is written
            // before the app answers), and the gateway still holds the push.
            try await eventually("the acknowledgement to wait for the disk") { store.heldSyncs == 1 }
            #expect(try await running.gateway.store.pushes(for: "device-1", after: 0, now: Date(), limit: 10).count == 1)

            store.releaseSyncs()
            #expect(await acknowledgements.next() == 1)
            // A request sent after the acknowledgement, on the same link, finds the gateway's queue empty.
            _ = try await link.register("com.example.todo", environment: .sandbox)
            #expect(try await running.gateway.store.pushes(for: "device-1", after: 0, now: Date(), limit: 10).isEmpty)
            #expect(store.syncs >= 1)
            linking.cancel()
        }
    }

    @Test func aProvidersPushReachesThePersonThroughTheGatewayAndTheLink() async throws {
        try await withLinkedSystem { system in
            let (daemon, link, gateway) = (system.daemon, system.link, system.gateway)
            let app = try await daemon.authorizedApp("com.example.todo")
            // The app registers itself, as `registerForRemoteNotifications()` does.
            let registered = try await app.raw(.POST, "/v1/remote-notifications", body: LocalAPI.RemoteNotificationRegistration(environment: .sandbox))
            #expect(registered.status == 200)
            #expect(try OpenAPISpec().problems(method: "POST", path: "/v1/remote-notifications", status: registered.status,
                                               contentType: registered.contentType, body: registered.body) == [])
            let token = try JSONDecoder().decode(LocalAPI.DeviceToken.self, from: registered.body).token
            #expect(token.count == 64)
            #expect(try await link.register("com.example.todo", environment: .sandbox) == token)
            // What `unotify apps token` asks the daemon, answered as the spec says.
            let path = "/v1/admin/apps/com.example.todo/remote-notifications"
            let answer = try await daemon.admin.raw(.POST, path, body: LocalAPI.RemoteNotificationRegistration(environment: .sandbox))
            #expect(answer.status == 200)
            #expect(try OpenAPISpec().problems(method: "POST", path: path, status: answer.status, contentType: answer.contentType, body: answer.body) == [])
            #expect(try JSONDecoder().decode(LocalAPI.DeviceToken.self, from: answer.body).token == token)
            var events = await daemon.engine.watch().events.makeAsyncIterator()
            var acknowledgements = link.acknowledgements.makeAsyncIterator()

            let response = try await system.send(to: token, #"{"aps":{"alert":{"title":"From a provider","body":"Hello"},"badge":1},"order":"42"}"#,
                                                 headers: ["apns-collapse-id": "greeting"])
            #expect(response.status.code == 200)

            var shown: NotificationCenterMachine.VisibleNotification?
            while shown == nil, let event = await events.next() {
                if case .app("com.example.todo", .presented(let notification)) = event { shown = notification }
            }
            let notification = try #require(shown).notification
            #expect(notification.request.identifier == "greeting")
            #expect(notification.request.trigger == .push)
            #expect(notification.request.content.title == "From a provider")
            #expect(notification.request.content.body == "Hello")
            #expect(notification.request.content.userInfo["order"] == .string("42"))
            #expect(try await daemon.engine.badge("com.example.todo") == 1)

            // Acknowledged: a request sent after the acknowledgement, on the same link, finds the gateway's queue empty.
            #expect(await acknowledgements.next() == 1)
            _ = try await link.register("com.example.todo", environment: .sandbox)
            #expect(try await gateway.store.pushes(for: "device-1", after: 0, now: Date(), limit: 10).isEmpty)
            #expect(await daemon.engine.linkSequence > 0)

            // The app unregisters: its token is gone for providers.
            let unregistered = try await app.raw(.DELETE, "/v1/remote-notifications")
            #expect(unregistered.status == 204)
            #expect(try await gateway.store.registration(token: token)?.unregisteredAt != nil)
        }
    }

    @Test func aBackgroundPushWakesTheAppDelegateAndOneForAStoppedAppWaitsForIt() async throws {
        // `UIApplication.shared` is the process's: other tests that use it wait.
        try await SharedApplicationLock.withLock { try await backgroundPushThroughTheWholeSystem() }
    }

    /// A calling app's VoIP push, as an iOS provider sends it (`apns-push-type: voip`, the topic
    /// `<bundle identifier>.voip`, to the token PushKit gave), reaches the app's `PKPushRegistry`
    /// delegate at once, and neither its app delegate nor the person.
    @Test func aVoIPPushReachesThePushKitRegistryAndNotTheAppDelegate() async throws {
        try await SharedApplicationLock.withLock { try await voipPushThroughTheWholeSystem() }
    }

    func voipPushThroughTheWholeSystem() async throws {
        try await withLinkedSystem { system in
            let daemon = system.daemon
            let app = try await daemon.authorizedApp("com.example.todo")
            let appDelegate = await RecordingAppDelegate()
            let callDelegate = RecordingPushRegistryDelegate()
            var calls = callDelegate.lines.makeAsyncIterator()
            var events = await daemon.engine.watch().events.makeAsyncIterator()
            let center = UNUserNotificationCenter(backend: DaemonBackend(client: LocalAPIClient(socketPath: daemon.socketPath, key: app.key),
                                                                         initialState: .background))
            let registry = PKPushRegistry(queue: DispatchQueue(label: "calls"))
            await MainActor.run { UIApplication.shared.delegate = appDelegate }
            await UNUserNotificationCenter.withCenter(center) {
                registry.delegate = callDelegate
                registry.desiredPushTypes = [.voIP]
            }
            let registered = try #require(await calls.next())
            #expect(registered.hasPrefix("token "))
            let token = String(registered.dropFirst("token ".count))
            #expect(try await system.gateway.store.registration(token: token)?.bundleIdentifier == "com.example.todo")

            let voip = ["apns-push-type": "voip", "apns-priority": "10"]
            let answer = try await system.send(to: token, #"{"aps":{},"caller":"Ada"}"#, topic: "com.example.todo.voip", headers: voip)
            #expect(answer.status.code == 200)
            let call = await calls.next()
            #expect(call == "call from Ada")
            try await withDeadline("the daemon to hear the app finished") { await daemon.engine.waitUntilAnswered("com.example.todo") }
            var delivered = false
            while !delivered, let event = await events.next() {
                switch event {
                case .app("com.example.todo", .remoteNotificationDelivered(let remote)): delivered = remote.isVoIP
                case .app("com.example.todo", .presented(_)): Issue.record("a VoIP push was shown")
                default: break
                }
            }
            #expect(delivered)
            registry.desiredPushTypes = nil
            await NotificationDaemonLink.close(center)
            await MainActor.run { UIApplication.shared.delegate = nil }
            // The app delegate heard nothing: no registration of its own, and no push.
            appDelegate.continuation.finish()
            var heard: [String] = []
            for await line in appDelegate.lines { heard.append(line) }
            #expect(heard.isEmpty)
        }
    }

    @Test func aRenewedTokenReachesTheRunningAppAndTheOldOneAnswers410() async throws {
        try await SharedApplicationLock.withLock { try await renewedTokenThroughTheWholeSystem() }
    }

    func renewedTokenThroughTheWholeSystem() async throws {
        try await withLinkedSystem { system in
            let daemon = system.daemon
            let app = try await daemon.authorizedApp("com.example.todo")
            let appDelegate = await RecordingAppDelegate()
            var lines = appDelegate.lines.makeAsyncIterator()
            let center = UNUserNotificationCenter(backend: DaemonBackend(client: LocalAPIClient(socketPath: daemon.socketPath, key: app.key), initialState: .foreground))
            await UNUserNotificationCenter.withCenter(center) {
                await MainActor.run {
                    UIApplication.shared.delegate = appDelegate
                    UIApplication.shared.registerForRemoteNotifications()
                }
            }
            let old = String(try #require(await lines.next()).dropFirst("token ".count))
            // The app's event stream is up (it is told of changes only while it is connected).
            try await eventually("the app connected") { try await daemon.engine.appState("com.example.todo") == .foreground }

            // What `unotify apps token com.example.todo --renew` asks, answered as the spec says.
            let path = "/v1/admin/apps/com.example.todo/remote-notifications/renewal"
            let answer = try await daemon.admin.raw(.POST, path, body: LocalAPI.RemoteNotificationRegistration(environment: .sandbox))
            #expect(answer.status == 200)
            #expect(try OpenAPISpec().problems(method: "POST", path: path, status: answer.status, contentType: answer.contentType, body: answer.body) == [])
            let new = try JSONDecoder().decode(LocalAPI.DeviceToken.self, from: answer.body).token
            #expect(new != old && new.count == 64)
            // The running app's delegate hears it, as the token it now has.
            #expect(await lines.next() == "token \(new)")

            // Providers: the old token is unregistered, the new one reaches the person.
            let stale = try await system.send(to: old, #"{"aps":{"alert":"To the old token"}}"#)
            #expect(stale.status.code == 410)
            let staleBody = try await stale.body.collect(upTo: 4096)
            #expect(String(buffer: staleBody).contains("\"Unregistered\""))
            var events = await daemon.engine.watch().events.makeAsyncIterator()
            #expect(try await system.send(to: new, #"{"aps":{"alert":"To the new token"}}"#).status.code == 200)
            var shown: String?
            while shown == nil, let event = await events.next() {
                if case .app("com.example.todo", .presented(let notification)) = event { shown = notification.notification.request.content.body }
            }
            #expect(shown == "To the new token")
            await NotificationDaemonLink.close(center)
            await MainActor.run { UIApplication.shared.delegate = nil }
        }
    }

    @Test func theAppReadsItsBadgeFromTheDaemonAndSetsIt() async throws {
        try await SharedApplicationLock.withLock {
            try await withLinkedSystem { system in
                let daemon = system.daemon
                let app = try await daemon.authorizedApp("com.example.todo")
                try await daemon.engine.setBadgeCount("com.example.todo", 2)
                let center = UNUserNotificationCenter(backend: DaemonBackend(client: LocalAPIClient(socketPath: daemon.socketPath, key: app.key), initialState: .background))
                let badge: @Sendable () async -> Int = {
                    await UNUserNotificationCenter.withCenter(center) { await MainActor.run { UIApplication.shared.applicationIconBadgeNumber } }
                }
                // As it connects, the app learns the badge it had.
                try await eventually("the badge on connecting") { await badge() == 2 }
                #expect(await UNUserNotificationCenter.withCenter(center) { await MainActor.run { UIApplication.shared.applicationState } } == .background)
                // A provider's push sets it, and the running app reads the new one.
                let token = try JSONDecoder().decode(LocalAPI.DeviceToken.self, from: try await app.raw(
                    .POST, "/v1/remote-notifications", body: LocalAPI.RemoteNotificationRegistration(environment: .sandbox)).body).token
                #expect(try await system.send(to: token, #"{"aps":{"alert":"Seven","badge":7}}"#).status.code == 200)
                try await eventually("the pushed badge") { await badge() == 7 }
                // The app clears it, as iOS apps do on launch.
                await UNUserNotificationCenter.withCenter(center) { await MainActor.run { UIApplication.shared.applicationIconBadgeNumber = 0 } }
                #expect(await badge() == 0, "read back at once, as on iOS")
                try await eventually("the cleared badge") { try await daemon.engine.badge("com.example.todo") == 0 }
                // The daemon's own word on it (its `badge` event) agrees.
                try await eventually("the app's badge after the daemon's") { await badge() == 0 }
                await NotificationDaemonLink.close(center)
            }
        }
    }

    func backgroundPushThroughTheWholeSystem() async throws {
        try await withLinkedSystem { system in
            let daemon = system.daemon
            let app = try await daemon.authorizedApp("com.example.todo")
            let appDelegate = await RecordingAppDelegate()
            var lines = appDelegate.lines.makeAsyncIterator()
            var events = await daemon.engine.watch().events.makeAsyncIterator()
            func connect() -> UNUserNotificationCenter {
                UNUserNotificationCenter(backend: DaemonBackend(client: LocalAPIClient(socketPath: daemon.socketPath, key: app.key), initialState: .background))
            }

            // The app registers as an iOS app does, and gets its token from the gateway through the daemon.
            let center = connect()
            await UNUserNotificationCenter.withCenter(center) {
                await MainActor.run {
                    UIApplication.shared.delegate = appDelegate
                    UIApplication.shared.registerForRemoteNotifications()
                }
            }
            let registered = try #require(await lines.next())
            #expect(registered.hasPrefix("token "))
            let token = String(registered.dropFirst("token ".count))
            #expect(try await system.gateway.store.registration(token: token)?.bundleIdentifier == "com.example.todo")

            // A silent push reaches the delegate, and nothing reaches the person.
            let background = ["apns-push-type": "background", "apns-priority": "5"]
            #expect(try await system.send(to: token, #"{"aps":{"content-available":1},"acme1":"first"}"#, headers: background).status.code == 200)
            #expect(await lines.next() == "fetched first")
            try await withDeadline("the daemon to hear the app finished") { await daemon.engine.waitUntilAnswered("com.example.todo") }
            var delivered: [String] = []
            while delivered.isEmpty, let event = await events.next() {
                switch event {
                case .app("com.example.todo", .remoteNotificationDelivered(let remote)): delivered.append(remote.userInfo["acme1"].map { "\($0)" } ?? "")
                case .app("com.example.todo", .presented(_)): Issue.record("a background push was shown")
                default: break
                }
            }
            #expect(delivered == [#"string("first")"#])

            // The app stops; the next silent push waits for it and reaches it when it runs again. Sent once
            // the daemon has seen the app go: sent before, it is handed to the closing connection and held
            // again when the daemon sees it close, which says nothing (and this test would wait for ever).
            await NotificationDaemonLink.close(center)
            var stopped = false
            while !stopped, let event = await events.next() {
                if case .app("com.example.todo", .appStateChanged(.notRunning)) = event { stopped = true }
            }
            #expect(try await system.send(to: token, #"{"aps":{"content-available":1},"acme1":"second"}"#, headers: background).status.code == 200)
            var held = false
            while !held, let event = await events.next() {
                if case .app("com.example.todo", .remoteNotificationHeld(_)) = event { held = true }
            }
            let again = connect()
            #expect(await lines.next() == "fetched second")
            await NotificationDaemonLink.close(again)
            await MainActor.run { UIApplication.shared.delegate = nil }
        }
    }
}

extension RemotePushTests {
    /// Seed 002 through the whole system: an app of the iOS 8 API registers its category with
    /// `registerUserNotificationSettings`; a provider's push naming it (`"category": "INVITE_CATEGORY"`)
    /// comes through the gateway and the daemon, and the person's Accept reaches
    /// `handleActionWithIdentifier(_:forRemoteNotification:)`; so does Accept on a `UILocalNotification`.
    /// Beyond APNs: an app subscribes to one of its broadcast channels with the framework's call, and
    /// an alert its provider sends to the channel is shown to the person as any push is.
    @Test func anAppSubscribedToABroadcastChannelGetsWhatItsProviderSendsThere() async throws {
        try await SharedApplicationLock.withLock {
            try await withLinkedSystem { system in
                let daemon = system.daemon
                let app = try await daemon.authorizedApp("com.example.todo")
                var events = await daemon.engine.watch().events.makeAsyncIterator()
                func request(_ method: HTTPMethod, _ path: String, headers: [String: String] = [:], body: String) async throws -> HTTPClientResponse {
                    var request = HTTPClientRequest(url: "https://localhost:\(system.sandboxPort)\(path)")
                    request.method = method
                    request.headers.add(name: "authorization", value: "bearer \(system.bearer)")
                    for (name, value) in headers { request.headers.add(name: name, value: value) }
                    request.body = .bytes(ByteBuffer(string: body))
                    return try await system.http.execute(request, timeout: .seconds(10))
                }
                let created = try await request(.POST, "/1/apps/com.example.todo/channels", body: #"{"message-storage-policy":1,"push-type":"alert"}"#)
                #expect(created.status.code == 201)
                let channel = try #require(created.headers.first(name: "apns-channel-id"))

                let center = UNUserNotificationCenter(backend: DaemonBackend(client: LocalAPIClient(socketPath: daemon.socketPath, key: app.key),
                                                                             initialState: .background))
                try await UNUserNotificationCenter.withCenter(center) {
                    try await UIApplication.shared.subscribeToBroadcastChannel(channel)
                    // A channel that is not the app's is refused, with the gateway's reason.
                    do {
                        try await UIApplication.shared.subscribeToBroadcastChannel("bm90IGEgY2hhbm5lbA==")
                        Issue.record("subscribed to a channel that does not exist")
                    } catch {
                        #expect("\(error)".contains("no channel"))
                    }
                }

                let sent = try await request(.POST, "/4/broadcasts/apps/com.example.todo",
                                             headers: ["apns-channel-id": channel, "apns-push-type": "alert", "apns-priority": "10",
                                                       "apns-expiration": "\(Int(Date().timeIntervalSince1970) + 3600)"],
                                             body: #"{"aps":{"alert":{"title":"Road closed","body":"Take the bridge"}}}"#)
                #expect(sent.status.code == 200)
                var shown: String?
                while shown == nil, let event = await events.next() {
                    if case .app("com.example.todo", .presented(let visible)) = event { shown = visible.notification.request.content.title }
                }
                #expect(shown == "Road closed")

                try await UNUserNotificationCenter.withCenter(center) { try await UIApplication.shared.unsubscribeFromBroadcastChannel(channel) }
                let stored = try await system.gateway.store.enqueue(
                    Broadcast(channel: try #require(try await system.gateway.store.channel(channel)), requestID: UUID().uuidString, priority: 10,
                              expiresAt: Date() + 60, payload: Array(#"{"aps":{"alert":"Gone"}}"#.utf8), receivedAt: Date()),
                    linked: ["device-1"])
                #expect(stored.isEmpty, "no longer subscribed")
                await NotificationDaemonLink.close(center)
            }
        }
    }

    @Test func theIOS8AcceptButtonReachesTheAppThroughTheDaemon() async throws {
        try await SharedApplicationLock.withLock {
            try await withLinkedSystem { system in
                let daemon = system.daemon
                let app = try await daemon.authorizedApp("com.example.todo")
                var events = await daemon.engine.watch().events.makeAsyncIterator()
                let center = UNUserNotificationCenter(backend: DaemonBackend(client: LocalAPIClient(socketPath: daemon.socketPath, key: app.key),
                                                                             initialState: .background))
                let appDelegate = await InvitationAppDelegate()
                var lines = appDelegate.lines.makeAsyncIterator()
                await UNUserNotificationCenter.withCenter(center) {
                    await MainActor.run {
                        UIApplication.shared.delegate = appDelegate
                        appDelegate.registerForInvitations()
                    }
                }
                #expect(await lines.next() == "registered 7")
                #expect(try await daemon.engine.categories("com.example.todo").first?.actions.map(\.identifier) == ["ACCEPT_IDENTIFIER"])

                let token = try JSONDecoder().decode(LocalAPI.DeviceToken.self, from: try await app.raw(
                    .POST, "/v1/remote-notifications", body: LocalAPI.RemoteNotificationRegistration(environment: .sandbox)).body).token
                #expect(try await system.send(to: token, #"{"aps":{"alert":"You’re invited!","category":"INVITE_CATEGORY"}}"#).status.code == 200)
                var shown: String?
                while shown == nil, let event = await events.next() {
                    if case .app("com.example.todo", .presented(let visible)) = event { shown = visible.notification.request.identifier }
                }
                try await daemon.engine.respond("com.example.todo", to: try #require(shown), with: .action("ACCEPT_IDENTIFIER"))
                #expect(await lines.next() == "remote ACCEPT_IDENTIFIER You’re invited!")
                try await withDeadline("the daemon to hear the handler finished") { await daemon.engine.waitUntilAnswered("com.example.todo") }

                await UNUserNotificationCenter.withCenter(center) {
                    await MainActor.run {
                        let notification = UILocalNotification()
                        notification.alertBody = "Dinner at eight"
                        notification.category = "INVITE_CATEGORY"
                        UIApplication.shared.presentLocalNotificationNow(notification)
                    }
                }
                var local: String?
                while local == nil, let event = await events.next() {
                    if case .app("com.example.todo", .presented(let visible)) = event { local = visible.notification.request.identifier }
                }
                try await daemon.engine.respond("com.example.todo", to: try #require(local), with: .action("ACCEPT_IDENTIFIER"))
                #expect(await lines.next() == "local ACCEPT_IDENTIFIER Dinner at eight")
                await NotificationDaemonLink.close(center)
                await MainActor.run { UIApplication.shared.delegate = nil }
            }
        }
    }
}

/// Seed 002's app delegate, as in the framework's tests: it registers the invitation category with the
/// iOS 8 API and writes what its handlers hear.
final class InvitationAppDelegate: UIResponder, UIApplicationDelegate {
    let (lines, continuation) = AsyncStream<String>.makeStream()

    func registerForInvitations() {
        let acceptAction = UIMutableUserNotificationAction()
        acceptAction.identifier = "ACCEPT_IDENTIFIER"
        acceptAction.title = "Accept"
        acceptAction.activationMode = .background
        acceptAction.isDestructive = false
        acceptAction.isAuthenticationRequired = true
        let category = UIMutableUserNotificationCategory()
        category.identifier = "INVITE_CATEGORY"
        category.setActions([acceptAction], for: .default)
        category.setActions([acceptAction], for: .minimal)
        UIApplication.shared.registerUserNotificationSettings(UIUserNotificationSettings(types: [.alert, .badge, .sound], categories: [category]))
    }

    func application(_ application: UIApplication, didRegister notificationSettings: UIUserNotificationSettings) {
        continuation.yield("registered \(notificationSettings.types.rawValue)")
    }

    func application(_ application: UIApplication, handleActionWithIdentifier identifier: String?,
                     forRemoteNotification userInfo: [AnyHashable: Any], completionHandler: @escaping () -> Void) {
        let aps = userInfo["aps"] as? [String: Any]
        continuation.yield("remote \(identifier ?? "") \(aps?["alert"] as? String ?? "")")
        completionHandler()
    }

    func application(_ application: UIApplication, handleActionWithIdentifier identifier: String?,
                     for notification: UILocalNotification, completionHandler: @escaping () -> Void) {
        continuation.yield("local \(identifier ?? "") \(notification.alertBody ?? "")")
        completionHandler()
    }
}

/// An app delegate that writes what it hears, for the test to read in order.
final class RecordingAppDelegate: UIResponder, UIApplicationDelegate {
    let (lines, continuation) = AsyncStream<String>.makeStream()

    func application(_ application: UIApplication, didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data) {
        continuation.yield("token " + deviceToken.map { String(format: "%02x", $0) }.joined())
    }

    func application(_ application: UIApplication, didFailToRegisterForRemoteNotificationsWithError error: Error) {
        continuation.yield("failed \(error)")
    }

    func application(_ application: UIApplication, didReceiveRemoteNotification userInfo: [AnyHashable: Any],
                     fetchCompletionHandler completionHandler: @escaping (UIBackgroundFetchResult) -> Void) {
        continuation.yield("fetched \(userInfo["acme1"] as? String ?? "?")")
        completionHandler(.newData)
    }
}

/// A PushKit delegate that writes what it hears, for the test to read in order.
final class RecordingPushRegistryDelegate: NSObject, PKPushRegistryDelegate, Sendable {
    let (lines, continuation) = AsyncStream<String>.makeStream()

    func pushRegistry(_ registry: PKPushRegistry, didUpdate pushCredentials: PKPushCredentials, for type: PKPushType) {
        continuation.yield("token " + pushCredentials.token.map { String(format: "%02x", $0) }.joined())
    }

    func pushRegistry(_ registry: PKPushRegistry, didReceiveIncomingPushWith payload: PKPushPayload, for type: PKPushType,
                      completion: @escaping () -> Void) {
        continuation.yield("call from \(payload.dictionaryPayload["caller"] as? String ?? "?")")
        completion()
    }
}
