import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOSSL
import NotificationCore
@testable import NotificationDaemon
import NotificationDaemonClient
import PushGateway
import TestSupport
import Testing

extension RemotePushTests.LinkedSystem {
    /// `GET /1/delivery-log/<id>` as the provider, on its own connection.
    func deliveryLog(_ id: String) async throws -> (status: UInt, log: DeliveryLogResponse?, body: String) {
        var request = HTTPClientRequest(url: "https://localhost:\(sandboxPort)/1/delivery-log/\(id)")
        request.headers.add(name: "authorization", value: "bearer \(bearer)")
        let response = try await http.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 1 << 20)
        let text = String(buffer: body)
        return (response.status.code, response.status == .ok ? try JSONDecoder().decode(DeliveryLogResponse.self, from: Data(text.utf8)) : nil, text)
    }

    /// The stages of the push `id` once the gateway has recorded `stage` for it: read after each batch
    /// of reports the gateway confirms.
    func stages(of id: String, once stage: String, confirmations: inout AsyncStream<Int64>.AsyncIterator) async throws -> [DeliveryLogResponse.Stage] {
        while true {
            if let stages = try await deliveryLog(id).log?.pushes.first?.stages, stages.contains(where: { $0.stage == stage }) { return stages }
            guard await confirmations.next() != nil else { return [] }
        }
    }
}

/// The delivery log through the whole system: the gateway records what it did with a push, the
/// device's daemon reports what the person saw and did, and the provider reads it back.
@Suite(.timeLimit(.minutes(2))) struct DeliveryLogTests {
    @Test func theProviderReadsEveryStageOfItsPushAndNothingOfWhatThePersonTyped() async throws {
        try await RemotePushTests().withLinkedSystem { system in
            let app = try await system.daemon.authorizedApp("com.example.todo")
            try await app.call(.PUT, "/v1/categories", body: [
                NotificationCategory(identifier: "CHAT", actions: [
                    NotificationAction(identifier: "REPLY", title: "Reply", textInput: .init(buttonTitle: "Send", placeholder: "Message")),
                ]),
            ])
            let token = try await system.link.register("com.example.todo", environment: .sandbox)
            var events = await system.daemon.engine.watch().events.makeAsyncIterator()
            var confirmations = system.link.reportsConfirmed.makeAsyncIterator()

            let apnsID = "2f5a5b0e-8d7c-4a31-9d1e-1c2b3a4d5e6f"
            let response = try await system.send(to: token, #"{"aps":{"alert":{"title":"Secret title","body":"Secret body"},"category":"CHAT"}}"#,
                                                 headers: ["apns-id": apnsID, "apns-collapse-id": "chat"])
            #expect(response.status.code == 200)
            // The sandbox endpoint names the push for its log, as APNs' development environment does.
            let uniqueID = try #require(response.headers.first(name: "apns-unique-id"))
            #expect(uniqueID.count == 36 && uniqueID != apnsID)
            while let event = await events.next() {
                if case .app("com.example.todo", .presented(_)) = event { break }
            }
            try await system.daemon.engine.respond("com.example.todo", to: "chat", with: .reply("REPLY", text: "my private words"))

            let stages = try await system.stages(of: apnsID, once: "replied", confirmations: &confirmations)
            let names = stages.map(\.stage)
            // The gateway's stages in order, the device's in order (the two interleave as they arrive).
            #expect(names.filter { ["accepted", "stored", "sent", "acknowledged"].contains($0) } == ["accepted", "stored", "sent", "acknowledged"])
            #expect(names.filter { ["presented", "replied"].contains($0) } == ["presented", "replied"])
            #expect(stages.first?.detail == "key KEY1234567")
            #expect(stages.first { $0.stage == "presented" }?.detail == "banner, list, lock screen")
            #expect(stages.first { $0.stage == "replied" }?.detail == "REPLY")

            let (status, log, body) = try await system.deliveryLog(apnsID)
            #expect(status == 200)
            let push = try #require(log?.pushes.first)
            #expect(push.apnsUniqueId == uniqueID)
            #expect(push.topic == "com.example.todo")
            #expect(push.deviceToken == token)
            #expect(push.collapseId == "chat")
            #expect(push.payloadBytes == #"{"aps":{"alert":{"title":"Secret title","body":"Secret body"},"category":"CHAT"}}"#.utf8.count)
            // Stages and reasons only: nothing the person typed, nothing of the payload.
            for secret in ["my private words", "Secret title", "Secret body"] { #expect(!body.contains(secret)) }
            // By its unique id too.
            #expect(try await system.deliveryLog(uniqueID).log?.pushes.map(\.apnsId) == [apnsID])
            // An identifier the provider sent nothing under.
            let unknown = try await system.deliveryLog("00000000-0000-0000-0000-000000000000")
            #expect(unknown.status == 404)
            #expect(unknown.body == #"{"reason":"NotFound"}"#)

            // The person asks `unotify push status`, on the gateway's machine…
            let local = try ChildProcess(ChildProcess.built("unotify"), ["push", "status", apnsID, "--gateway-dir", system.gatewayFolder.path])
            #expect(await local.waitUntilExit() == 0)
            let printed = await local.completeOutput()
            #expect(printed.first?.hasPrefix("push \(uniqueID) (apns-id \(apnsID)): alert to com.example.todo") == true, "\(printed)")
            // Each stage on its line: "  2026-11-23 01:59:53.921  accepted      key KEY1234567".
            #expect(printed.dropFirst().map { String($0.split(separator: " ")[2]) } == names, "\(printed)")
            #expect(printed.contains { $0.hasSuffix("replied       REPLY") }, "\(printed)")
            // …and as the provider, over the provider API with its key.
            let keyFile = system.gatewayFolder.appendingPathComponent("AuthKey_KEY1234567.p8")
            try system.signingKey.pemRepresentation.write(to: keyFile, atomically: true, encoding: .utf8)
            let remote = try ChildProcess(ChildProcess.built("unotify"), [
                "push", "status", uniqueID, "--json", "--gateway", "https://localhost:\(system.sandboxPort)",
                "--ca", system.gatewayFolder.appendingPathComponent("ca.pem").path,
                "--key", keyFile.path, "--key-id", "KEY1234567", "--team", "TEAM123456",
            ])
            #expect(await remote.waitUntilExit() == 0)
            let json = await remote.completeOutput().joined(separator: "\n")
            #expect(try JSONDecoder().decode(DeliveryLogResponse.self, from: Data(json.utf8)).pushes.map(\.apnsUniqueId) == [uniqueID], "\(json)")
            let missing = try ChildProcess(ChildProcess.built("unotify"), ["push", "status", "nothing-like-it", "--gateway-dir", system.gatewayFolder.path])
            #expect(await missing.waitUntilExit() != 0)
            #expect(await missing.completeOutput().contains { $0.contains("No push nothing-like-it in the delivery log") })
        }
    }

    @Test func anotherProviderCannotReadAPushsLog() async throws {
        try await RemotePushTests().withLinkedSystem { system in
            _ = try await system.daemon.authorizedApp("com.example.todo")
            let token = try await system.link.register("com.example.todo", environment: .sandbox)
            let apnsID = "3f5a5b0e-8d7c-4a31-9d1e-1c2b3a4d5e6f"
            #expect(try await system.send(to: token, #"{"aps":{"alert":"Hello"}}"#, headers: ["apns-id": apnsID]).status.code == 200)
            #expect(try await system.deliveryLog(apnsID).status == 200)

            // Another team, with its own valid key and app: the push is not theirs.
            let otherKey = P256.Signing.PrivateKey()
            try await system.gateway.store.addTeam("OTHER12345", name: "Other")
            try await system.gateway.store.addApp("com.example.other", team: "OTHER12345")
            try await system.gateway.store.addKey(StoredKey(keyID: "OTHERKEY12", teamID: "OTHER12345", environment: nil, bundleIdentifiers: nil,
                                                            publicKeyPEM: otherKey.publicKey.pemRepresentation))
            // The same team's key restricted to another app: not theirs either.
            let narrowKey = P256.Signing.PrivateKey()
            try await system.gateway.store.addApp("com.example.chat", team: "TEAM123456")
            try await system.gateway.store.addKey(StoredKey(keyID: "NARROWKEY1", teamID: "TEAM123456", environment: nil,
                                                            bundleIdentifiers: ["com.example.chat"], publicKeyPEM: narrowKey.publicKey.pemRepresentation))
            try await system.gateway.core.reloadProviders()
            // Providers of their own, trusting the gateway's authority as any provider does.
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(system.gatewayFolder.appendingPathComponent("ca.pem").path))
            for (keyID, team, key) in [("OTHERKEY12", "OTHER12345", otherKey), ("NARROWKEY1", "TEAM123456", narrowKey)] {
                // Its own connection: a token binds a connection to its key, as on APNs.
                let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: HTTPClient.Configuration(tlsConfiguration: tls))
                var request = HTTPClientRequest(url: "https://localhost:\(system.sandboxPort)/1/delivery-log/\(apnsID)")
                let jwt = try ProviderToken.make(keyID: keyID, teamID: team, issuedAt: Int64(Date().timeIntervalSince1970), key: key)
                request.headers.add(name: "authorization", value: "bearer \(jwt)")
                let response = try await client.execute(request, timeout: .seconds(10))
                let body = String(buffer: try await response.body.collect(upTo: 1 << 16))
                try await client.shutdown()
                #expect(response.status.code == 404, "\(keyID)")
                #expect(body == #"{"reason":"NotFound"}"#)
            }
            // Without a valid token: APNs' own refusal.
            let anonymous = HTTPClient(eventLoopGroupProvider: .singleton, configuration: HTTPClient.Configuration(tlsConfiguration: tls))
            let refused = try await anonymous.execute(HTTPClientRequest(url: "https://localhost:\(system.sandboxPort)/1/delivery-log/\(apnsID)"),
                                                      timeout: .seconds(10))
            let reason = String(buffer: try await refused.body.collect(upTo: 1 << 16))
            try await anonymous.shutdown()
            #expect(refused.status.code == 403)
            #expect(reason.contains("MissingProviderToken"))
        }
    }

    @Test func aPushForAnAppNotOnTheDeviceIsReportedNotShown() async throws {
        try await RemotePushTests().withLinkedSystem { system in
            // The gateway issued the token, but the app is not on the device.
            let token = try await system.link.register("com.example.todo", environment: .sandbox)
            var confirmations = system.link.reportsConfirmed.makeAsyncIterator()
            let apnsID = "4f5a5b0e-8d7c-4a31-9d1e-1c2b3a4d5e6f"
            #expect(try await system.send(to: token, #"{"aps":{"alert":"Hello"}}"#, headers: ["apns-id": apnsID]).status.code == 200)
            let stages = try await system.stages(of: apnsID, once: "notShown", confirmations: &confirmations)
            #expect(stages.first { $0.stage == "notShown" }?.detail == "the app is not on the device")
        }
    }

    /// While pushes keep coming, the device acknowledges them at most every 10 ms and reports them at
    /// most every 100 ms, each message covering all that gathered meanwhile: not a message (and a write
    /// or three) per push.
    @Test func aStreamOfPushesIsAcknowledgedAndReportedInAFewMessages() async throws {
        try await RemotePushTests().withLinkedSystem { system in
            _ = try await system.daemon.authorizedApp("com.example.todo")
            let token = try await system.link.register("com.example.todo", environment: .sandbox)
            var events = await system.daemon.engine.watch().events.makeAsyncIterator()
            var confirmations = system.link.reportsConfirmed.makeAsyncIterator()
            var acknowledgements = system.link.acknowledgements.makeAsyncIterator()
            let ids = (0..<20).map { String(format: "5f5a5b0e-8d7c-4a31-9d1e-%012d", $0) }
            let began = ContinuousClock.now
            // One after the other, each shown before the next is sent: without the pacing, each
            // would be reported on its own.
            for id in ids {
                #expect(try await system.send(to: token, #"{"aps":{"alert":"Hello"}}"#, headers: ["apns-id": id]).status.code == 200)
                while let event = await events.next() {
                    if case .app("com.example.todo", .presented(_)) = event { break }
                }
            }
            // Every push acknowledged, counting the acknowledgements.
            let last = await system.daemon.engine.linkSequence
            var acknowledged: Int64 = 0
            var acknowledgementCount = 0
            while acknowledged < last, let through = await acknowledgements.next() {
                (acknowledged, acknowledgementCount) = (through, acknowledgementCount + 1)
            }
            let acknowledgedAfter = ContinuousClock.now - began
            // The first at once, then one at most every 10 ms.
            #expect(acknowledgementCount <= 1 + Int(acknowledgedAfter / .milliseconds(10)), "\(acknowledgementCount) in \(acknowledgedAfter)")
            // Every report sent and confirmed, counting the messages.
            var messages = 0
            while try await system.daemon.engine.unsentDeliveryReports(limit: 1) != nil {
                guard await confirmations.next() != nil else { break }
                messages += 1
            }
            let elapsed = ContinuousClock.now - began
            // The first at once, then one at most every 100 ms (none is full: 200 reports).
            #expect(messages <= 1 + Int(elapsed / .milliseconds(100)), "\(messages) messages in \(elapsed)")
            for id in ids {
                let stages = try await system.gateway.core.deliveryRecords(matching: id).first?.stages.map(\.stage) ?? []
                #expect(stages.contains(.presented), "\(id): \(stages)")
            }
        }
    }
}
