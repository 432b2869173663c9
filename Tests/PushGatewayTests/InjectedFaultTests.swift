import Foundation
import NIOCore
import NIOHTTP2
import NotificationCore
import PushGateway
import Synchronization
import Testing

/// What an emulator's faults do on the wire (``ProviderEmulation``, ``InjectedFault``), seen frame by
/// frame: each for a push that passed every check, the push then not taken (or taken, then answered
/// late), and the requests without a fault answered as the gateway answers them.
@Suite(.timeLimit(.minutes(1))) struct InjectedFaultTests {
    /// The fault for pushes to `faulted` alone; every push is counted.
    /// The `apns-id`s of the pushes the emulation was asked about.
    final class Met: Sendable {
        let ids = Mutex<[String]>([])
    }

    static func emulation(_ fault: InjectedFault, met: Met) -> ProviderEmulation {
        ProviderEmulation(
            fault: { push in
                met.ids.withLock { $0.append(push.headers.apnsID) }
                return push.headers.deviceToken == faulted ? fault : nil
            },
            tokenIssuedAt: { _, iat in iat },
            injectedRecords: { _ in [] }
        )
    }

    static let faulted = String(repeating: "ab", count: 32)

    /// A push's header block to the faulted token.
    static func fields(_ headers: [(String, String)]) -> [(String, String)] {
        [(":method", "POST"), (":path", "/3/device/\(faulted)"), (":scheme", "https"), (":authority", "localhost")] + headers
    }

    /// Connects a frame-level client to a server with `fault`, and sends a first push without it
    /// (the connection's first token lets it open more streams).
    func withFault(_ fault: InjectedFault, _ body: (ProviderServerTests.Running, FrameClient, [(String, String)], RecordingAcceptor) async throws -> Void)
        async throws
    {
        let acceptor = RecordingAcceptor()
        let met = Met()
        try await ProviderServerTests().withServer(acceptor: acceptor, emulation: Self.emulation(fault, met: met)) { running in
            let client = try await FrameClient.connect(port: running.endpoint.port, authorityPEM: running.endpoint.authorityPEM)
            let headers = [("authorization", try running.bearer()), ("apns-topic", "com.example.todo")]
            let first = try await client.push(path: "/3/device/\(ProviderServerTests.token)", headers: headers, body: #"{"aps":{"alert":"first"}}"#)
            #expect(first.status == "200")
            try await body(running, client, headers, acceptor)
            await client.close()
        }
    }

    @Test func aStatusIsAnsweredWithItsReasonAndThePushIsNotTaken() async throws {
        try await withFault(.refuse(APNs.Rejection(.unregistered, timestamp: 1_800_000_000_123))) { running, client, headers, acceptor in
            let answer = try await client.push(path: "/3/device/\(Self.faulted)", headers: headers, body: #"{"aps":{"alert":"gone"}}"#)
            #expect(answer.status == "410")
            #expect(answer.body == #"{"reason":"Unregistered","timestamp":1800000000123}"#)
            #expect(acceptor.accepted.withLock { $0.count } == 1, "only the first push was taken")
        }
    }

    @Test func aDelayedAnswerComesAfterItsDelayAndThePushIsTaken() async throws {
        try await withFault(.delay(.milliseconds(800))) { running, client, headers, acceptor in
            let start = ContinuousClock.now
            let answer = try await client.push(path: "/3/device/\(Self.faulted)", headers: headers, body: #"{"aps":{"alert":"slow"}}"#)
            #expect(answer.status == "200")
            #expect(ContinuousClock.now - start >= .milliseconds(800))
            #expect(acceptor.accepted.withLock { $0.count } == 2)
        }
    }

    @Test func aGoAwaySaysItsReasonAndRefusesThePushUnprocessed() async throws {
        try await withFault(.goAway(reason: .shutdown)) { running, client, headers, acceptor in
            let stream = try await client.openStream(fields: Self.fields(headers), body: #"{"aps":{"alert":"refused"}}"#)
            var goAways = client.goAways.makeAsyncIterator()
            #expect(await goAways.next() == #"{"reason":"Shutdown"}"#)
            // Not processed: the provider may send it again on another connection.
            #expect(await stream.resetCode() == .refusedStream)
            #expect(acceptor.accepted.withLock { $0.count } == 1)
            // Then the connection closes.
            #expect(await goAways.next() == nil)
        }
    }

    @Test func aResetStreamEndsThePushWithoutAnAnswerAndTheConnectionGoesOn() async throws {
        try await withFault(.resetStream) { running, client, headers, acceptor in
            let stream = try await client.openStream(fields: Self.fields(headers), body: #"{"aps":{"alert":"reset"}}"#)
            #expect(await stream.resetCode() == .internalError)
            let after = try await client.push(path: "/3/device/\(ProviderServerTests.token)", headers: headers, body: #"{"aps":{"alert":"after"}}"#)
            #expect(after.status == "200")
            #expect(acceptor.accepted.withLock { $0.count } == 2)
        }
    }

    @Test func aClosedConnectionEndsWithoutGoAway() async throws {
        try await withFault(.closeConnection) { running, client, headers, acceptor in
            let stream = try await client.openStream(fields: Self.fields(headers), body: #"{"aps":{"alert":"cut"}}"#)
            var goAways = client.goAways.makeAsyncIterator()
            #expect(await goAways.next() == nil, "closed without a GOAWAY")
            #expect(await stream.answer().status == nil, "and without an answer")
            #expect(acceptor.accepted.withLock { $0.count } == 1)
        }
    }

    /// The emulator is asked only about pushes that passed the provider API's checks: a malformed
    /// one is refused as the gateway refuses it, and meets no fault.
    @Test func aRequestThatFailsTheChecksMeetsNoFault() async throws {
        let met = Met()
        try await ProviderServerTests().withServer(emulation: Self.emulation(InjectedFault.refuse(APNs.Rejection(.serviceUnavailable)), met: met)) { running in
            let answer = try await running.post(path: "/3/device/\(Self.faulted)", headers: [
                ("authorization", try running.bearer()), ("apns-topic", "com.example.todo"), ("apns-priority", "7"),
                ("apns-id", "eabeae54-14a8-11e5-b60b-1697f925ec7b"),
            ])
            #expect(answer.status == 400)
            #expect(answer.body == #"{"reason":"BadPriority"}"#)
            #expect(met.ids.withLock { $0.isEmpty })
        }
    }
}
