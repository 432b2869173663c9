import Foundation
import NotificationCore
import Testing

/// Where each effect goes, for both systems: the app, the person, or starting the app.
@Suite struct EffectRouteTests {
    static let notification: DeliveredNotification = {
        var content = NotificationContent()
        content.title = "Lunch"
        return DeliveredNotification(request: NotificationRequest(identifier: "n", content: content, trigger: nil), date: Date(timeIntervalSince1970: 0))
    }()
    static let response = NotificationResponse(notification: notification, actionIdentifier: SystemActionIdentifier.default)

    @Test(arguments: [
        (NotificationCenterMachine.Effect.askWillPresent(ticket: 1, notification), [EffectRoute.app(.willPresent(ticket: 1, notification))]),
        (.deliverResponse(ticket: 2, response), [.app(.response(ticket: 2, response)), .person(.responseDelivered(response))]),
        (.authorizationCompleted(call: 3, granted: true), [.authorizationCompleted(call: 3, granted: true)]),
        (.promptForAuthorization([.alert]), [.person(.authorizationPrompt([.alert]))]),
        (.responseTimedOut(ticket: 4, response), [.person(.responseNotCompleted(response))]),
        (.willPresentTimedOut(ticket: 5, notification), [.person(.willPresentTimedOut(notification))]),
        (.launchApp(.background), [.launch(.background)]),
        (.openSettings(nil), [.app(.openSettings(nil))]),
    ])
    func eachEffectGoesWhereItConcerns(_ effect: NotificationCenterMachine.Effect, _ routes: [EffectRoute]) {
        #expect(effect.routes == routes)
    }
}
