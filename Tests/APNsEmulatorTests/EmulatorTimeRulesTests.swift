import APNsEmulator
import AsyncHTTPClient
import Foundation
import NotificationCore
import Testing
import TestSupport

/// Every time rule of the provider API and of storage follows the emulator's clock: moved, it takes
/// an hour or ninety days in no time. The clock is frozen: nothing moves but what a test moves.
@Suite(.timeLimit(.minutes(1))) struct EmulatorTimeRulesTests {
    @Test func aTokenUsedAnHourIsExpiredAndANewOneWithinTwentyMinutesIsTooManyUpdates() async throws {
        try await LocalEmulator.with { local in
            let device = local.tokens[0]
            let first = try local.providerToken()
            #expect(try await local.push("First", to: device, token: first).status == 200)
            // A second token on the same connection a second later: refused, the first stays in force.
            let second = try local.providerToken(issuedAt: Date().addingTimeInterval(1))
            let early = try await local.push("Early", to: device, token: second)
            #expect(early.status == 429 && early.body == #"{"reason":"TooManyProviderTokenUpdates"}"#)
            try await local.emulator.advance(by: 20 * 60)
            #expect(try await local.push("Later", to: device, token: second).status == 200)
            try await local.emulator.advance(by: 41 * 60)
            let stale = try await local.push("Stale", to: device, token: second)
            #expect(stale.status == 403 && stale.body == #"{"reason":"ExpiredProviderToken"}"#)
            #expect(try await local.alerts(device, count: 2) == ["First", "Later"])
        }
    }

    @Test func aTokensBucketRefillsOnlyAsTheClockMoves() async throws {
        try await LocalEmulator.with { local in
            let device = local.tokens[0]
            let token = try local.providerToken()
            // APNs' burst for one device token, then 429 for as long as time stands still.
            for index in 0..<100 {
                #expect(try await local.push("\(index)", to: device, token: token).status == 200)
            }
            let flooded = try await local.push("100", to: device, token: token)
            #expect(flooded.status == 429 && flooded.body == #"{"reason":"TooManyRequests"}"#)
            #expect(try await local.push("101", to: device, token: token).status == 429)
            // Ten a second refill it.
            try await local.emulator.advance(by: 1)
            for index in 0..<10 {
                #expect(try await local.push("refilled \(index)", to: device, token: token).status == 200)
            }
            #expect(try await local.push("over", to: device, token: token).status == 429)
        }
    }

    @Test func aPushHeldForAnOfflineDeviceExpiresWhenTheClockPassesItsExpiration() async throws {
        try await LocalEmulator.with { local in
            let device = local.tokens[0]
            let token = try local.providerToken()
            let offline = try await local.emulator.script(Fault(action: .offline, token: device))
            let expiration = Int(local.emulator.clock.now().timeIntervalSince1970) + 600
            let held = try await local.push("Held ten minutes", to: device, token: token, headers: [("apns-expiration", "\(expiration)")])
            #expect(held.status == 200)
            try await local.emulator.advance(by: 11 * 60)
            try local.emulator.removeFault(offline.id)
            #expect(try await local.push("After", to: device, token: token).status == 200)
            // In order: had the first reached the device, it would come before.
            #expect(try await local.alerts(device, count: 1) == ["After"])
            let log = try await local.emulator.deliveryRecords(matching: try #require(held.apnsID))
            let stages = log.flatMap(\.stages).map(\.stage)
            #expect(stages.contains(.expired) && !stages.contains(.sent), "\(stages)")
        }
    }

    @Test func aDeviceGoneNinetyDaysHasItsTokenExpiredAtTheEmulatorsTime() async throws {
        try await LocalEmulator.with { local in
            let device = local.tokens[0]
            _ = try await local.emulator.script(Fault(action: .offline, token: device))
            // Its link's end is recorded when the device goes offline, on the emulator's clock.
            try await waitFor("the device to be offline", within: 10) { local.emulator.devices.device(holding: device)?.isOnline == false }
            let left = local.emulator.clock.now()
            try await local.emulator.advance(by: 91 * 86_400)
            let gone = try await local.push("Anyone?", to: device, token: try local.providerToken())
            #expect(gone.status == 410)
            let body = try #require(try JSONSerialization.jsonObject(with: Data(gone.body.utf8)) as? [String: Any])
            #expect(body["reason"] as? String == "ExpiredToken")
            let timestamp = try #require(body["timestamp"] as? Int64)
            let expected = Int64(left.addingTimeInterval(90 * 86_400).timeIntervalSince1970 * 1000)
            #expect(abs(timestamp - expected) < 5_000, "\(timestamp) vs \(expected)")
        }
    }

    @Test func anUninstalledAppsTokenAnswers410WithTheEmulatorsTimeAndTheLogSaysWhy() async throws {
        try await LocalEmulator.with { local in
            let device = local.tokens[1]
            try await local.emulator.advance(by: 2 * 3_600)
            let uninstalledAt = local.emulator.clock.now()
            _ = try await local.emulator.script(Fault(action: .uninstalled, token: device))
            let jwt = try local.providerToken()
            let gone = try await local.push("Gone", to: device, token: jwt, headers: [
                ("apns-id", "0d1f6f0e-6d3c-4a8e-9d3e-3e2a2f7a5b11"),
            ])
            #expect(gone.status == 410)
            #expect(gone.body == #"{"reason":"Unregistered","timestamp":\#(Int64((uninstalledAt.timeIntervalSince1970 * 1000).rounded(.down)))}"#)
            let log = try await local.emulator.deliveryRecords(matching: "0d1f6f0e-6d3c-4a8e-9d3e-3e2a2f7a5b11")
            #expect(log.flatMap(\.stages).map(\.detail) == ["app uninstalled (emulator fault 1)"])
            #expect(log.first?.stages.first?.at == uninstalledAt)

            // The provider reads the same on the provider API's delivery log.
            var request = HTTPClientRequest(url: "\(local.document.sandbox)/1/delivery-log/0d1f6f0e-6d3c-4a8e-9d3e-3e2a2f7a5b11")
            request.headers.add(name: "authorization", value: "bearer \(jwt)")
            let answer = try await local.provider.execute(request, timeout: .seconds(30))
            let body = String(buffer: try await answer.body.collect(upTo: 1 << 16))
            #expect(answer.status.code == 200)
            #expect(body.contains(#""stage":"injected""#) && body.contains("app uninstalled (emulator fault 1)"), "\(body)")
        }
    }

    @Test func aDeviceThatNeverAcknowledgesHoldsItsWindowAndItsPushesStayStored() async throws {
        try await LocalEmulator.with(devices: 1, acknowledgement: .never) { local in
            let device = local.tokens[0]
            let token = try local.providerToken()
            for index in 0..<70 {
                #expect(try await local.push("\(index)", to: device, token: token).status == 200)
            }
            // The gateway sends at most its window of 64 unacknowledged pushes.
            let received = try await local.emulator.devices.received(token: device, count: 64, wait: 10)
            #expect(received.count == 64)
            let counts = try await local.emulator.storedPushCounts()
            #expect(counts.queued + counts.held == 70)
        }
    }
}
