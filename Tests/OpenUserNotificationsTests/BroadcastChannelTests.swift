import Foundation
import OpenUserNotificationsShim
import OpenUserNotificationsTesting
import TestSupport
import Testing

/// Beyond iOS: an app subscribes to a broadcast channel with `UIApplication`, and the test harness
/// delivers what a provider sends to the channel only while it is subscribed.
@Suite(.serialized) struct BroadcastChannelTests {
    @Test func aMessageOnAChannelReachesTheAppOnlyWhileItIsSubscribed() async throws {
        try await SharedApplicationLock.withLock {
            // In the background: an alert is shown (in the foreground, only if the delegate says so).
            let harness = NotificationTestHarness(appState: .background)
            harness.person.willAnswerAuthorization(allow: true)
            try await harness.run { center in
                _ = try await center.requestAuthorization(options: [.alert])
                try await UIApplication.shared.subscribeToBroadcastChannel("bmV3cw==")
                #expect(harness.subscribedChannels == ["bmV3cw=="])
                #expect(try await harness.receiveBroadcast(#"{"aps":{"alert":{"title":"Road closed"}}}"#, onChannel: "bmV3cw=="))
                #expect(!(try await harness.receiveBroadcast(#"{"aps":{"alert":"Elsewhere"}}"#, onChannel: "b3RoZXI=")))
                #expect(await harness.settle())
                #expect(await harness.visibleNotifications.map(\.notification.request.content.title) == ["Road closed"])

                try await UIApplication.shared.unsubscribeFromBroadcastChannel("bmV3cw==")
                #expect(harness.subscribedChannels.isEmpty)
                #expect(!(try await harness.receiveBroadcast(#"{"aps":{"alert":"Late"}}"#, onChannel: "bmV3cw==")))
            }
        }
    }
}
