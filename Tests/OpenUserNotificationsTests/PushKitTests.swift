// VoIP pushes through PushKit's names, as an iOS calling app receives them: a `PKPushRegistry`
// wanting `.voIP` gets the app's token and its delegate gets every VoIP push, which never reaches the
// app delegate nor the person. The code below builds against the shim, which brings PushKit's names on
// Linux.
import Foundation
import OpenUserNotificationsShim
import OpenUserNotificationsTesting
import TestSupport
import Testing

final class CallPushDelegate: NSObject, PKPushRegistryDelegate {
    let log = LogBook()

    func pushRegistry(_ registry: PKPushRegistry, didUpdate pushCredentials: PKPushCredentials, for type: PKPushType) {
        log.append("token=\(pushCredentials.token.map { String(format: "%02x", $0) }.joined()) \(type == .voIP ? "voIP" : type.rawValue)")
    }

    func pushRegistry(_ registry: PKPushRegistry, didReceiveIncomingPushWith payload: PKPushPayload, for type: PKPushType,
                      completion: @escaping () -> Void) {
        log.append("call from \(payload.dictionaryPayload["caller"] as? String ?? "?") (\(payload.type == .voIP ? "voIP" : payload.type.rawValue))")
        completion()
    }

    func pushRegistry(_ registry: PKPushRegistry, didInvalidatePushTokenFor type: PKPushType) {
        log.append("invalidated \(type == .voIP ? "voIP" : type.rawValue)")
    }
}

/// A delegate written for iOS 8 to 10: the form without a completion.
final class OldCallPushDelegate: NSObject, PKPushRegistryDelegate {
    let log = LogBook()

    func pushRegistry(_ registry: PKPushRegistry, didUpdate pushCredentials: PKPushCredentials, for type: PKPushType) {
        log.append("token")
    }

    func pushRegistry(_ registry: PKPushRegistry, didReceiveIncomingPushWith payload: PKPushPayload, for type: PKPushType) {
        log.append("call from \(payload.dictionaryPayload["caller"] as? String ?? "?")")
    }
}

/// The registry's inbox is one per process, as the app object is: these tests take turns with every
/// test that uses it (``SharedApplicationLock``).
@Suite(.serialized) struct PushKitTests {
    private let queue = DispatchQueue(label: "PushKitTests")

    @Test func aRegistryWantingVoIPGetsTheAppsTokenAndItsVoIPPushesNotTheAppDelegate() async throws {
        try await SharedApplicationLock.withLock {
            let harness = NotificationTestHarness(appState: .background)
            let appDelegate = await Seed001PushAppDelegate()
            await MainActor.run { UIApplication.shared.delegate = appDelegate }
            let delegate = CallPushDelegate()
            let registry = PKPushRegistry(queue: queue)
            try await harness.run { _ in
                registry.delegate = delegate
                registry.desiredPushTypes = [.voIP]
                #expect(await delegate.log.waitForLines(1))
                let token = try #require(harness.deviceToken)
                #expect(delegate.log.lines == ["token=\(token) voIP"])
                #expect(registry.pushToken(for: .voIP).map { $0.map { String(format: "%02x", $0) }.joined() } == token)
                #expect(registry.pushToken(for: .complication) == nil)

                try await harness.receivePush(#"{"aps":{},"caller":"Ada"}"#, pushType: "voip", apnsID: "call-1")
                #expect(await delegate.log.waitForLines(2))
                #expect(delegate.log.lines == ["token=\(token) voIP", "call from Ada (voIP)"])
                #expect(await harness.settle())
                // A background push still goes to the app delegate.
                try await harness.receivePush(#"{"aps":{"content-available":1},"acme1":"news"}"#, pushType: "background", apnsID: "silent-1")
                #expect(await appDelegate.log.waitForLines(1))
                #expect(await harness.settle())
            }
            registry.desiredPushTypes = nil
            await MainActor.run { UIApplication.shared.delegate = nil }
            #expect(appDelegate.log.lines == ["收到静默通知 news"])
            #expect(harness.history.events.map(\.description).contains("didReceiveRemoteNotificationCompleted(call-1, 0)"))
            // Nothing reached the person.
            #expect(await harness.visibleNotifications.isEmpty)
        }
    }

    @Test func aVoIPPushThatArrivesBeforeTheRegistryWaitsForIt() async throws {
        try await SharedApplicationLock.withLock {
            let harness = NotificationTestHarness(appState: .background)
            let delegate = OldCallPushDelegate()
            let registry = PKPushRegistry(queue: queue)
            try await harness.run { _ in
                try await harness.receivePush(#"{"aps":{},"caller":"Grace"}"#, pushType: "voip", apnsID: "early-call")
                try await harness.history.waitFor { $0.description == "didReceiveRemoteNotification(early-call)" }
                #expect(delegate.log.lines.isEmpty)
                registry.delegate = delegate
                registry.desiredPushTypes = [.voIP]
                // The token first, then the push that waited.
                #expect(await delegate.log.waitForLines(2))
                #expect(await harness.settle())
            }
            registry.desiredPushTypes = nil
            #expect(delegate.log.lines == ["token", "call from Grace"])
            #expect(harness.history.events.map(\.description).last == "didReceiveRemoteNotificationCompleted(early-call, 0)")
        }
    }

    @Test func noLongerWantingVoIPInvalidatesTheToken() async throws {
        try await SharedApplicationLock.withLock {
            let harness = NotificationTestHarness()
            let delegate = CallPushDelegate()
            let registry = PKPushRegistry(queue: queue)
            await harness.run { _ in
                registry.delegate = delegate
                registry.desiredPushTypes = [.voIP]
                #expect(await delegate.log.waitForLines(1))
                registry.desiredPushTypes = []
                #expect(await delegate.log.waitForLines(2))
                #expect(delegate.log.lines.last == "invalidated voIP")
                #expect(registry.pushToken(for: .voIP) == nil)
            }
        }
    }
}
