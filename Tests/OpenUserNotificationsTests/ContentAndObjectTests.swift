import Foundation
import OpenUserNotifications
import OpenUserNotificationsTesting
import Testing

/// The value objects behave like Apple's: copy semantics, equality, defaults and raw values.
@Suite struct ContentAndObjectTests {
    @Test func mutableCopyGivesAnIndependentEditableCopy() {
        let original = UNMutableNotificationContent()
        original.title = "one"
        original.userInfo = ["id": 7, "tags": ["a", "b"], "nested": ["on": true]]
        let request = UNNotificationRequest(identifier: "r", content: original, trigger: nil)
        original.title = "changed after the request was made"
        #expect(request.content.title == "one", "a request keeps its own copy")
        #expect(!(request.content is UNMutableNotificationContent))

        let copy = request.content.mutableCopy() as? UNMutableNotificationContent
        #expect(copy != nil)
        copy?.body = "edited"
        #expect(request.content.body == "")
        #expect(copy?.userInfo["id"] as? Int == 7)
        #expect((copy?.userInfo["nested"] as? [String: Any])?["on"] as? Bool == true)
        #expect(copy?.userInfo["tags"] as? [String] == ["a", "b"])
        #expect(original.copy() as? UNNotificationContent == original.copy() as? UNNotificationContent)
    }

    @Test func contentDefaultsMatchApples() {
        let content = UNMutableNotificationContent()
        #expect(content.title == "" && content.subtitle == "" && content.body == "")
        #expect(content.badge == nil)
        #expect(content.sound == nil)
        #expect(content.attachments.isEmpty)
        #expect(content.categoryIdentifier == "" && content.threadIdentifier == "")
        #expect(content.targetContentIdentifier == nil)
        #expect(content.interruptionLevel == .active)
        #expect(content.relevanceScore == 0)
        #expect(content.filterCriteria == nil)
    }

    @Test func userInfoSurvivesDelivery() async throws {
        let harness = try await NotificationTestHarness.authorized()
        let content = UNMutableNotificationContent()
        content.title = "data"
        content.userInfo = ["image": "https://example.com/a.jpg", "count": 3, "ratio": 0.5, "items": [["title": "t", "text": "x"]]]
        try await harness.center.add(UNNotificationRequest(identifier: "d", content: content, trigger: nil))
        let delivered = try #require(await harness.center.deliveredNotifications().first)
        let userInfo = delivered.request.content.userInfo
        #expect(userInfo["image"] as? String == "https://example.com/a.jpg")
        #expect(userInfo["count"] as? Int == 3)
        #expect(userInfo["ratio"] as? Double == 0.5)
        #expect((userInfo["items"] as? [[String: AnyObject]])?.first?["title"] as? String == "t")
    }

    @Test func numbersReadBackAsApplesNSNumbersDo() throws {
        let content = UNMutableNotificationContent()
        content.userInfo = ["whole": 1.0, "flag": true, "count": 2]
        for _ in 0..<2 {
            let data = try NSKeyedArchiver.archivedData(withRootObject: content, requiringSecureCoding: true)
            let back = try #require(try NSKeyedUnarchiver.unarchivedObject(ofClass: UNNotificationContent.self, from: data))
            content.userInfo = back.userInfo
        }
        #expect(content.userInfo["whole"] as? Double == 1.0)
        #expect(content.userInfo["whole"] as? Int == 1)
        #expect(content.userInfo["flag"] as? Bool == true)
        #expect(content.userInfo["count"] as? Int == 2)
        #expect(content.userInfo["count"] as? Double == 2.0)
    }

    @Test func categoriesAreEqualByValueAndWorkInSets() {
        func make() -> UNNotificationCategory {
            UNNotificationCategory(identifier: "c", actions: [UNNotificationAction(identifier: "a", title: "A")], intentIdentifiers: [], options: [.customDismissAction])
        }
        #expect(make() == make())
        #expect(Set([make(), make()]).count == 1)
        let other = UNNotificationCategory(identifier: "c", actions: [], intentIdentifiers: [], hiddenPreviewsBodyPlaceholder: "%u new", options: [])
        #expect(other != make())
        #expect(other.hiddenPreviewsBodyPlaceholder == "%u new")
        let summary = UNNotificationCategory(identifier: "s", actions: [], intentIdentifiers: ["i"], hiddenPreviewsBodyPlaceholder: nil,
                                             categorySummaryFormat: "%u new messages from %@", options: [.hiddenPreviewsShowTitle])
        #expect(summary.categorySummaryFormat == "%u new messages from %@")
        #expect(summary.hiddenPreviewsBodyPlaceholder == "")
        #expect(summary.options == [.hiddenPreviewsShowTitle])
    }

    @Test func actionsKeepTheirKindThroughACategory() {
        let icon = UNNotificationActionIcon(systemImageName: "trash")
        let category = UNNotificationCategory(identifier: "c", actions: [
            UNNotificationAction(identifier: "del", title: "Delete", options: [.destructive], icon: icon),
            UNTextInputNotificationAction(identifier: "reply", title: "Reply", options: [], icon: nil,
                                          textInputButtonTitle: "Send", textInputPlaceholder: "Say…"),
            UNTextInputNotificationAction(identifier: "plain", title: "Inherited init"),
        ], intentIdentifiers: [])
        let actions = category.actions
        #expect(actions[0].icon == icon)
        #expect(actions[0].options == [.destructive])
        let reply = actions[1] as? UNTextInputNotificationAction
        #expect(reply?.textInputButtonTitle == "Send")
        #expect(reply?.textInputPlaceholder == "Say…")
        #expect(actions[2] is UNTextInputNotificationAction)
    }

    @Test func optionSetsHaveApplesBits() {
        let authorization: [UNAuthorizationOptions] = [.badge, .sound, .alert, .carPlay, .criticalAlert, .providesAppNotificationSettings, .provisional]
        #expect(authorization.map(\.rawValue) == [1, 2, 4, 8, 16, 32, 64])
        let presentation: [UNNotificationPresentationOptions] = [.badge, .sound, .list, .banner]
        #expect(presentation.map(\.rawValue) == [1, 2, 8, 16])
        let action: [UNNotificationActionOptions] = [.authenticationRequired, .destructive, .foreground]
        #expect(action.map(\.rawValue) == [1, 2, 4])
        let category: [UNNotificationCategoryOptions] = [.customDismissAction, .allowInCarPlay, .hiddenPreviewsShowTitle, .hiddenPreviewsShowSubtitle]
        #expect(category.map(\.rawValue) == [1, 2, 4, 8])
    }

    @Test func enumsHaveApplesRawValues() {
        #expect([UNAuthorizationStatus.notDetermined, .denied, .authorized, .provisional, .ephemeral].map(\.rawValue) == [0, 1, 2, 3, 4])
        #expect([UNNotificationSetting.notSupported, .disabled, .enabled].map(\.rawValue) == [0, 1, 2])
        #expect([UNAlertStyle.none, .banner, .alert].map(\.rawValue) == [0, 1, 2])
        #expect([UNShowPreviewsSetting.always, .whenAuthenticated, .never].map(\.rawValue) == [0, 1, 2])
        #expect([UNNotificationInterruptionLevel.passive, .active, .timeSensitive, .critical].map(\.rawValue) == [0, 1, 2, 3])
    }

    @Test func soundsAreEqualByWhatTheyPlay() {
        #expect(UNNotificationSound.default == UNNotificationSound.default)
        #expect(UNNotificationSound(named: UNNotificationSoundName("a.caf")) == UNNotificationSound(named: UNNotificationSoundName(rawValue: "a.caf")))
        #expect(UNNotificationSound(named: UNNotificationSoundName("a.caf")) != UNNotificationSound.criticalSoundNamed(UNNotificationSoundName("a.caf")))
        #expect(UNNotificationSound.defaultCritical == UNNotificationSound.defaultCriticalSound(withAudioVolume: 1))
        #expect(UNNotificationSound.criticalSoundNamed(UNNotificationSoundName("a.caf"), withAudioVolume: 0.5) != UNNotificationSound.criticalSoundNamed(UNNotificationSoundName("a.caf")))
        #expect(UNNotificationSound.defaultRingtone != UNNotificationSound.ringtoneSoundNamed(UNNotificationSoundName("ring.caf")))
    }

    @Test func testingFactoriesMakeTheObjectsAppleKeepsPrivate() {
        let content = UNMutableNotificationContent()
        content.title = "t"
        let request = UNNotificationRequest(identifier: "r", content: content, trigger: UNTimeIntervalNotificationTrigger(timeInterval: 5, repeats: false))
        let date = Date(timeIntervalSince1970: 1_000)
        let notification = UNNotification.makeForTesting(request: request, date: date)
        #expect(notification.date == date)
        #expect(notification.request == request)
        let response = UNNotificationResponse.makeForTesting(notification: notification)
        #expect(response.actionIdentifier == UNNotificationDefaultActionIdentifier)
        let reply = UNTextInputNotificationResponse.makeForTesting(notification: notification, actionIdentifier: "REPLY", userText: "hi")
        #expect(reply.userText == "hi")
        let settings = UNNotificationSettings.makeForTesting(authorizationStatus: .authorized) { $0.soundSetting = .disabled }
        #expect(settings.authorizationStatus == .authorized)
        #expect(settings.alertSetting == .enabled)
        #expect(settings.soundSetting == .disabled)
        #expect(UNNotificationSettings.makeForTesting(authorizationStatus: .notDetermined).alertSetting == .notSupported)
    }

    @Test func localizedUserNotificationStringFormatsItsArguments() {
        #expect(NSString.localizedUserNotificationString(forKey: "%@ sent %d photos", arguments: ["Ann", 3]) == "Ann sent 3 photos")
        #expect(NSString.localizedUserNotificationString(forKey: "plain", arguments: nil) == "plain")
    }
}

/// The classes archive and unarchive with `NSSecureCoding`, keeping their kind and every field.
@Suite struct SecureCodingTests {
    func roundTrip<T: NSObject & NSSecureCoding>(_ object: T, as type: T.Type) throws -> T {
        let data = try NSKeyedArchiver.archivedData(withRootObject: object, requiringSecureCoding: true)
        return try #require(try NSKeyedUnarchiver.unarchivedObject(ofClass: type, from: data))
    }

    @Test func requestsRoundTripWithTheirContentAndTrigger() throws {
        let content = UNMutableNotificationContent()
        content.title = "t"
        content.badge = 3
        content.sound = .defaultCritical
        content.userInfo = ["when": Date(timeIntervalSince1970: 5), "blob": Data([1, 2]), "n": 1]
        var components = DateComponents(hour: 8, minute: 30)
        components.timeZone = TimeZone(identifier: "Asia/Tokyo")
        let request = UNNotificationRequest(identifier: "r", content: content,
                                            trigger: UNCalendarNotificationTrigger(dateMatching: components, repeats: true))
        let back = try roundTrip(request, as: UNNotificationRequest.self)
        #expect(back == request)
        let trigger = try #require(back.trigger as? UNCalendarNotificationTrigger)
        #expect(trigger.dateComponents.hour == 8)
        #expect(trigger.dateComponents.timeZone == TimeZone(identifier: "Asia/Tokyo"))
        #expect(back.content.userInfo["when"] as? Date == Date(timeIntervalSince1970: 5))
        #expect(back.content.userInfo["blob"] as? Data == Data([1, 2]))
    }

    @Test func subclassesComeBackAsThemselves() throws {
        let action = UNTextInputNotificationAction(identifier: "reply", title: "Reply", options: [.foreground],
                                                   textInputButtonTitle: "Send", textInputPlaceholder: "…")
        let back = try roundTrip(action, as: UNNotificationAction.self)
        #expect((back as? UNTextInputNotificationAction)?.textInputButtonTitle == "Send")
        let mutable = UNMutableNotificationContent()
        mutable.body = "b"
        #expect(try roundTrip(mutable, as: UNNotificationContent.self) is UNMutableNotificationContent)
        let interval = UNTimeIntervalNotificationTrigger(timeInterval: 60, repeats: true)
        #expect((try roundTrip(interval, as: UNNotificationTrigger.self) as? UNTimeIntervalNotificationTrigger)?.timeInterval == 60)
    }

    @Test func categoriesAndSettingsRoundTrip() throws {
        let category = UNNotificationCategory(identifier: "c", actions: [UNNotificationAction(identifier: "a", title: "A")],
                                              intentIdentifiers: ["i"], options: [.customDismissAction])
        #expect(try roundTrip(category, as: UNNotificationCategory.self) == category)
        let settings = UNNotificationSettings.makeForTesting(authorizationStatus: .provisional)
        #expect(try roundTrip(settings, as: UNNotificationSettings.self) == settings)
        let notification = UNNotification.makeForTesting(request: UNNotificationRequest(identifier: "n", content: UNMutableNotificationContent(), trigger: nil),
                                                         date: Date(timeIntervalSince1970: 9))
        let response = UNTextInputNotificationResponse.makeForTesting(notification: notification, actionIdentifier: "reply", userText: "hi")
        let back = try roundTrip(response, as: UNNotificationResponse.self)
        #expect((back as? UNTextInputNotificationResponse)?.userText == "hi")
        #expect(back.notification.date == Date(timeIntervalSince1970: 9))
    }
}
