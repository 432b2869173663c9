import Foundation
import NotificationCore
import OpenUserNotifications
import OpenUserNotificationsTesting
import Testing

/// What an app sees of its notifications, checked against both systems it can run on: the in-process
/// system and the daemon. Every test body runs once per backend, unchanged.
@Suite(.timeLimit(.minutes(1))) struct SharedBehaviourTests {
    // MARK: Helpers

    /// Authorizes the app for alerts, sounds and badges, as a person who allows when asked.
    func authorize(_ system: any SystemUnderTest) async throws {
        try await system.willAnswerAuthorization(allow: true)
        #expect(try await system.center.requestAuthorization(options: [.alert, .sound, .badge]))
    }

    func content(_ title: String, category: String = "", badge: Int? = nil, sound: Bool = false) -> UNMutableNotificationContent {
        let content = UNMutableNotificationContent()
        content.title = title
        content.categoryIdentifier = category
        content.badge = badge.map { NSNumber(value: $0) }
        if sound { content.sound = .default }
        return content
    }

    func add(_ system: any SystemUnderTest, _ identifier: String, title: String = "title", category: String = "",
             badge: Int? = nil, sound: Bool = false, trigger: UNNotificationTrigger? = nil) async throws {
        try await system.center.add(UNNotificationRequest(identifier: identifier,
                                                          content: content(title, category: category, badge: badge, sound: sound),
                                                          trigger: trigger))
    }

    func unErrorCode(_ body: () async throws -> Void) async -> UNError.Code? {
        do {
            try await body()
            return nil
        } catch let error as UNError {
            return error.code
        } catch {
            return nil
        }
    }

    func refusal(_ body: () async throws -> Void) async -> String? {
        do {
            try await body()
            return nil
        } catch let refusal as PersonRefusal {
            return refusal.reason
        } catch {
            return "\(error)"
        }
    }

    static let message = UNNotificationCategory(
        identifier: "MESSAGE",
        actions: [
            UNNotificationAction(identifier: "LIKE", title: "Like"),
            UNNotificationAction(identifier: "DELETE", title: "Delete", options: [.destructive, .authenticationRequired]),
            UNTextInputNotificationAction(identifier: "REPLY", title: "Reply", options: [], textInputButtonTitle: "Send", textInputPlaceholder: "…"),
        ],
        intentIdentifiers: []
    )

    // MARK: Authorization

    @Test(arguments: Backend.allCases)
    func theAppAsksOnceAndTheAnswerIsRemembered(_ backend: Backend) async throws {
        try await backend.run { system in
            #expect(await system.center.notificationSettings().authorizationStatus == .notDetermined)
            try await system.willAnswerAuthorization(allow: false)
            #expect(try await system.center.requestAuthorization(options: [.alert, .sound]) == false)
            let settings = await system.center.notificationSettings()
            #expect(settings.authorizationStatus == .denied)
            #expect(settings.alertSetting == .disabled)
            // Asked again, the system answers from memory, whatever the person would say now.
            try await system.willAnswerAuthorization(allow: true)
            #expect(try await system.center.requestAuthorization(options: [.alert]) == false)
            #expect(await unErrorCode { try await add(system, "n") } == .notificationsNotAllowed)
        }
    }

    @Test(arguments: Backend.allCases)
    func provisionalAuthorizationIsGrantedQuietlyWithoutAPrompt(_ backend: Backend) async throws {
        try await backend.run { system in
            #expect(try await system.center.requestAuthorization(options: [.provisional, .alert, .sound]))
            #expect(await system.center.notificationSettings().authorizationStatus == .provisional)
            try await add(system, "quiet", sound: true)
            #expect(try await system.seen() == [SeenNotification(identifier: "quiet", presentation: NotificationPresentation(list: true))])
        }
    }

    // MARK: Scheduling

    /// A Focus (Do Not Disturb) silences what it does not let through: in the list and on the lock
    /// screen, without a banner or a sound. Critical notifications always break through, time-sensitive
    /// ones when the Focus allows them; turned off, notifications interrupt again.
    @Test(arguments: Backend.allCases)
    func aFocusSilencesNotificationsButLetsCriticalAndTimeSensitiveOnesThrough(_ backend: Backend) async throws {
        try await backend.run { system in
            try await system.willAnswerAuthorization(allow: true)
            #expect(try await system.center.requestAuthorization(options: [.alert, .sound, .timeSensitive, .criticalAlert]))
            func post(_ identifier: String, _ level: UNNotificationInterruptionLevel) async throws {
                let content = self.content(identifier, sound: true)
                content.interruptionLevel = level
                try await system.center.add(UNNotificationRequest(identifier: identifier, content: content, trigger: nil))
            }
            try await system.setFocus(allowingTimeSensitive: true)
            try await post("active", .active)
            try await post("urgent", .timeSensitive)
            try await post("critical", .critical)
            try await system.setFocus(allowingTimeSensitive: false)
            try await post("urgent too", .timeSensitive)
            try await post("critical too", .critical)
            try await system.setFocus(allowingTimeSensitive: nil)
            try await post("after", .active)

            let silenced = NotificationPresentation(list: true, lockScreen: true)
            let loud = NotificationPresentation(banner: true, list: true, lockScreen: true, sound: true)
            let expected = [("active", silenced), ("urgent", loud), ("critical", loud), ("urgent too", silenced), ("critical too", loud), ("after", loud)]
            #expect(try await system.seen() == expected.map { SeenNotification(identifier: $0.0, presentation: $0.1) })
        }
    }

    /// An app in the Scheduled Summary delivers quietly: what it posts waits, unseen, and comes with the
    /// summary at its time; turned off, the summary holds nothing.
    @Test(arguments: Backend.allCases)
    func anAppInTheScheduledSummaryDeliversQuietlyUntilTheSummaryComes(_ backend: Backend) async throws {
        try await backend.run { system in
            try await authorize(system)
            try await system.setScheduledSummary([DateComponents(hour: 8, minute: 0)])
            try await add(system, "news", title: "Morning news", badge: 2, sound: true)
            #expect(try await system.seen() == [SeenNotification(identifier: "news", presentation: NotificationPresentation(list: true, badge: 2), heldForSummary: true)])
            #expect(await system.center.deliveredNotifications().map(\.request.identifier) == ["news"], "delivered, though not yet shown")
            #expect(try await system.badge() == 2)

            try await system.advance(by: 8 * 3600 - 1)
            #expect(try await system.seen().map(\.heldForSummary) == [true])
            try await system.advance(by: 1)
            #expect(try await system.seen() == [SeenNotification(identifier: "news", presentation: NotificationPresentation(list: true, lockScreen: true, badge: 2))])

            try await system.setScheduledSummary(nil)
            try await add(system, "later", sound: true)
            #expect(try await system.seen().last == SeenNotification(identifier: "later", presentation: NotificationPresentation(banner: true, list: true, lockScreen: true, sound: true)))
        }
    }

    @Test(arguments: Backend.allCases)
    func aTimeIntervalRequestWaitsThenFiresOnTime(_ backend: Backend) async throws {
        try await backend.run { system in
            try await authorize(system)
            try await add(system, "tea", title: "Tea is ready", sound: true, trigger: UNTimeIntervalNotificationTrigger(timeInterval: 180, repeats: false))
            #expect(await system.center.pendingNotificationRequests().map(\.identifier) == ["tea"])

            try await system.advance(by: 179)
            #expect(try await system.seen().isEmpty)
            #expect(await system.center.deliveredNotifications().isEmpty)

            try await system.advance(by: 1)
            #expect(try await system.seen() == [SeenNotification(identifier: "tea", presentation: NotificationPresentation(banner: true, list: true, lockScreen: true, sound: true))])
            #expect(await system.center.pendingNotificationRequests().isEmpty)
            let delivered = await system.center.deliveredNotifications()
            #expect(delivered.map(\.request.content.title) == ["Tea is ready"])
        }
    }

    @Test(arguments: Backend.allCases)
    func aRepeatingRequestFiresEveryIntervalAndStaysPending(_ backend: Backend) async throws {
        try await backend.run(appState: .foreground) { system in
            try await authorize(system)
            try await add(system, "tick", trigger: UNTimeIntervalNotificationTrigger(timeInterval: 60, repeats: true))
            try await system.advance(by: 200)
            #expect(system.delegate.calls == [.willPresent("tick"), .willPresent("tick"), .willPresent("tick")])
            #expect(await system.center.pendingNotificationRequests().map(\.identifier) == ["tick"])
            #expect(await system.center.deliveredNotifications().map(\.request.identifier) == ["tick"], "a newer delivery replaces an older one")
        }
    }

    @Test(arguments: Backend.allCases)
    func aCalendarRequestFiresAtItsDateInTheDevicesTimeZone(_ backend: Backend) async throws {
        try await backend.run(appState: .foreground) { system in
            try await authorize(system)
            // The clocks start at 2026-01-01 00:00 UTC, a Thursday; the device is in UTC.
            var components = DateComponents()
            components.weekday = 6
            components.hour = 8
            components.minute = 30
            try await add(system, "friday", trigger: UNCalendarNotificationTrigger(dateMatching: components, repeats: true))
            try await system.advance(by: 32 * 3600 + 29 * 60)
            #expect(system.delegate.calls.isEmpty)
            try await system.advance(by: 60)
            #expect(system.delegate.calls == [.willPresent("friday")])
            try await system.advance(by: 7 * 86400)
            #expect(system.delegate.calls == [.willPresent("friday"), .willPresent("friday")])
        }
    }

    @Test(arguments: Backend.allCases)
    func addingWithAnIdentifierInUseReplacesTheRequest(_ backend: Backend) async throws {
        try await backend.run { system in
            try await authorize(system)
            try await add(system, "a", title: "first", trigger: UNTimeIntervalNotificationTrigger(timeInterval: 10, repeats: false))
            try await add(system, "a", title: "second", trigger: UNTimeIntervalNotificationTrigger(timeInterval: 20, repeats: false))
            let pending = await system.center.pendingNotificationRequests()
            #expect(pending.map(\.content.title) == ["second"])
            try await system.advance(by: 10)
            #expect(await system.center.deliveredNotifications().isEmpty)
            try await system.advance(by: 10)
            #expect(await system.center.deliveredNotifications().map(\.request.content.title) == ["second"])
        }
    }

    @Test(arguments: Backend.allCases)
    func removingPendingAndDeliveredNotifications(_ backend: Backend) async throws {
        try await backend.run { system in
            try await authorize(system)
            for identifier in ["a", "b", "c"] {
                try await add(system, identifier, trigger: UNTimeIntervalNotificationTrigger(timeInterval: 60, repeats: false))
            }
            system.center.removePendingNotificationRequests(withIdentifiers: ["b", "unknown"])
            #expect(Set(await system.center.pendingNotificationRequests().map(\.identifier)) == ["a", "c"])
            system.center.removeAllPendingNotificationRequests()
            #expect(await system.center.pendingNotificationRequests().isEmpty)
            try await system.advance(by: 60)
            #expect(await system.center.deliveredNotifications().isEmpty, "removed requests never fire")

            for identifier in ["x", "y", "z"] { try await add(system, identifier) }
            system.center.removeDeliveredNotifications(withIdentifiers: ["y"])
            #expect(await system.center.deliveredNotifications().map(\.request.identifier) == ["x", "z"])
            #expect(try await system.seen().map(\.identifier) == ["x", "z"])
            system.center.removeAllDeliveredNotifications()
            #expect(await system.center.deliveredNotifications().isEmpty)
            #expect(try await system.seen().isEmpty)
        }
    }

    @Test(arguments: Backend.allCases)
    func onlyTheSixtyFourSoonestRequestsAreKept(_ backend: Backend) async throws {
        try await backend.run { system in
            try await authorize(system)
            for index in (1...65).reversed() {
                try await add(system, "r\(index)", trigger: UNTimeIntervalNotificationTrigger(timeInterval: TimeInterval(index * 60), repeats: false))
            }
            let pending = Set(await system.center.pendingNotificationRequests().map(\.identifier))
            #expect(pending.count == 64)
            #expect(!pending.contains("r65"))
        }
    }

    // MARK: Invalid input

    @Test(arguments: Backend.allCases)
    func invalidRequestsAreRefusedWithTheirErrorAndChangeNothing(_ backend: Backend) async throws {
        try await backend.run { system in
            try await authorize(system)
            let empty = UNNotificationRequest(identifier: "empty", content: UNMutableNotificationContent(), trigger: nil)
            #expect(await unErrorCode { try await system.center.add(empty) } == .notificationInvalidNoContent)
            var february30 = DateComponents()
            february30.month = 2
            february30.day = 30
            let never = UNNotificationRequest(identifier: "never", content: content("never"),
                                              trigger: UNCalendarNotificationTrigger(dateMatching: february30, repeats: false))
            #expect(await unErrorCode { try await system.center.add(never) } == .notificationInvalidNoDate)
            #expect(await unErrorCode { try await system.center.setBadgeCount(-1) } == .badgeInputInvalid)
            #expect(await system.center.pendingNotificationRequests().isEmpty)
            #expect(await system.center.deliveredNotifications().isEmpty)
            #expect(try await system.badge() == 0)
        }
    }

    // MARK: Presentation

    @Test(arguments: Backend.allCases)
    func inTheForegroundTheDelegateDecidesHowANotificationShows(_ backend: Backend) async throws {
        try await backend.run(appState: .foreground) { system in
            try await authorize(system)
            system.delegate.presentationOptions = [.list]
            try await add(system, "listed", sound: true)
            try await system.settle()
            system.delegate.presentationOptions = []
            try await add(system, "hidden", sound: true)
            try await system.settle()
            #expect(system.delegate.calls == [.willPresent("listed"), .willPresent("hidden")])
            #expect(try await system.seen() == [SeenNotification(identifier: "listed", presentation: NotificationPresentation(list: true))])
            #expect(await system.center.deliveredNotifications().map(\.request.identifier) == ["listed"])

            // In the background the delegate is not asked: the person's settings decide.
            try await system.moveApp(toForeground: false)
            try await add(system, "background")
            #expect(try await system.seen().map(\.identifier) == ["listed", "background"])
            #expect(system.delegate.calls.count == 2)
        }
    }

    @Test(arguments: Backend.allCases)
    func thePersonsSettingsAreEnforced(_ backend: Backend) async throws {
        try await backend.run { system in
            try await authorize(system)
            try await system.changeSettings(sound: .disabled, badge: .disabled, alert: nil)
            try await add(system, "n", badge: 3, sound: true)
            #expect(try await system.seen().map(\.presentation) == [NotificationPresentation(banner: true, list: true, lockScreen: true)])
            #expect(try await system.badge() == 0)
            #expect(await system.center.notificationSettings().soundSetting == .disabled)

            try await system.changeSettings(sound: nil, badge: .enabled, alert: .disabled)
            try await add(system, "m", badge: 4)
            #expect(try await system.seen().last?.presentation == NotificationPresentation(list: true, lockScreen: true, badge: 4))
            #expect(try await system.badge() == 4)
        }
    }

    @Test(arguments: Backend.allCases)
    func theAppSetsItsBadge(_ backend: Backend) async throws {
        try await backend.run { system in
            try await authorize(system)
            try await system.center.setBadgeCount(5)
            #expect(try await system.badge() == 5)
            try await add(system, "n", badge: 9)
            #expect(try await system.badge() == 9)
            try await system.center.setBadgeCount(0)
            #expect(try await system.badge() == 0)
        }
    }

    // MARK: Responses

    /// An authorized background app with the MESSAGE category and one notification, "m", on screen.
    func withMessage(_ system: any SystemUnderTest, options: UNNotificationCategoryOptions = []) async throws {
        try await authorize(system)
        system.center.setNotificationCategories([
            UNNotificationCategory(identifier: "MESSAGE", actions: Self.message.actions, intentIdentifiers: [], options: options),
        ])
        try await add(system, "m", title: "Hi!", category: "MESSAGE")
        #expect(try await system.seen().map(\.identifier) == ["m"])
    }

    @Test(arguments: Backend.allCases)
    func whatThePersonDoesReachesTheDelegateAsItsResponse(_ backend: Backend) async throws {
        try await backend.run { system in
            try await withMessage(system)
            try await system.act(.open, on: "m")
            try await add(system, "m2", category: "MESSAGE")
            try await system.act(.action("LIKE"), on: "m2")
            try await add(system, "m3", category: "MESSAGE")
            try await system.act(.reply("REPLY", text: "on my way"), on: "m3")
            let responses = try await system.delegate.waitForResponses(3)
            #expect(responses == [
                .didReceive("m", action: UNNotificationDefaultActionIdentifier, text: nil),
                .didReceive("m2", action: "LIKE", text: nil),
                .didReceive("m3", action: "REPLY", text: "on my way"),
            ])
            #expect(system.delegate.notification("m")?.request.content.title == "Hi!")
            #expect(await system.center.deliveredNotifications().isEmpty, "a notification acted on leaves the list")
        }
    }

    @Test(arguments: Backend.allCases)
    func aDismissalReachesTheAppOnlyWithACustomDismissAction(_ backend: Backend) async throws {
        for options: UNNotificationCategoryOptions in [[], [.customDismissAction]] {
            try await backend.run { system in
                try await withMessage(system, options: options)
                try await system.act(.dismiss, on: "m")
                // A tap that follows: every response before it has arrived once it has.
                try await add(system, "later", category: "MESSAGE")
                try await system.act(.open, on: "later")
                let responses = try await system.delegate.waitForResponses(options.isEmpty ? 1 : 2)
                let expected: [RecordingDelegate.Call] = options.isEmpty ? [] : [.didReceive("m", action: UNNotificationDismissActionIdentifier, text: nil)]
                #expect(responses == expected + [.didReceive("later", action: UNNotificationDefaultActionIdentifier, text: nil)])
                #expect(try await system.seen().isEmpty)
            }
        }
    }

    @Test(arguments: Backend.allCases)
    func actionsTheSystemCannotTakeAreRefusedWithTheirReason(_ backend: Backend) async throws {
        try await backend.run { system in
            try await withMessage(system)
            #expect(await refusal { try await system.act(.open, on: "nothing") } == "notificationNotFound")
            #expect(await refusal { try await system.act(.action("SHARE"), on: "m") } == "unknownAction")
            #expect(await refusal { try await system.act(.action("REPLY"), on: "m") } == "textInputRequired")
            #expect(await refusal { try await system.act(.reply("LIKE", text: "no"), on: "m") } == "textInputNotAccepted")
            try await system.setDeviceLocked(true)
            #expect(await refusal { try await system.act(.action("DELETE"), on: "m") } == "deviceLocked")
            try await system.setDeviceLocked(false)
            try await system.act(.action("DELETE"), on: "m")
            #expect(try await system.delegate.waitForResponses(1) == [.didReceive("m", action: "DELETE", text: nil)])
        }
    }

    @Test(arguments: Backend.allCases)
    func aResponseToAStoppedAppReachesItOnceWhenItRunsAgain(_ backend: Backend) async throws {
        try await backend.run { system in
            try await withMessage(system)
            try await system.stopApp()
            try await system.act(.reply("REPLY", text: "typed while the app was stopped"), on: "m")
            try await system.startApp()
            #expect(try await system.delegate.waitForResponses(1) == [.didReceive("m", action: "REPLY", text: "typed while the app was stopped")])
            // Confirmed once: a later start hands nothing over again.
            try await system.stopApp()
            try await system.startApp()
            try await add(system, "next", category: "MESSAGE")
            try await system.act(.open, on: "next")
            #expect(try await system.delegate.waitForResponses(2).count == 2)
            #expect(system.delegate.responses.last == .didReceive("next", action: UNNotificationDefaultActionIdentifier, text: nil))
        }
    }

    // MARK: Categories

    @Test(arguments: Backend.allCases)
    func categoriesAreKeptAsTheAppSetThem(_ backend: Backend) async throws {
        try await backend.run { system in
            system.center.setNotificationCategories([Self.message, UNNotificationCategory(identifier: "EMPTY", actions: [], intentIdentifiers: [], options: [.customDismissAction])])
            let categories = await system.center.notificationCategories()
            #expect(Set(categories.map(\.identifier)) == ["MESSAGE", "EMPTY"])
            let message = try #require(categories.first { $0.identifier == "MESSAGE" })
            #expect(message.actions.map(\.identifier) == ["LIKE", "DELETE", "REPLY"])
            #expect(message.actions[1].options == [.destructive, .authenticationRequired])
            #expect((message.actions[2] as? UNTextInputNotificationAction)?.textInputButtonTitle == "Send")
            #expect(categories.first { $0.identifier == "EMPTY" }?.options == [.customDismissAction])
        }
    }

    // MARK: Attachments

    /// A new folder holding `photo.png`, a file the system takes for a PNG.
    func imageInNewFolder() throws -> (folder: URL, image: URL) {
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("att-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let image = folder.appendingPathComponent("photo.png")
        try Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 7]).write(to: image)
        return (folder, image)
    }

    /// The thumbnail options reach the system and stay with the request (the notification center draws
    /// the thumbnail from them), whichever form of number the app gave them in.
    @Test(arguments: Backend.allCases)
    func attachmentThumbnailOptionsAreKeptWithTheRequest(_ backend: Backend) async throws {
        try await backend.run { system in
            try await authorize(system)
            let (folder, image) = try imageInNewFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let content = self.content("photo")
            content.attachments = [
                try UNNotificationAttachment(identifier: "clipped", url: image, options: [
                    UNNotificationAttachmentOptionsThumbnailClippingRectKey: NSDictionary(dictionary: [
                        "X": NSNumber(value: 0.25), "Y": NSNumber(value: 0), "Width": NSNumber(value: 0.5), "Height": NSNumber(value: 1),
                    ]),
                    UNNotificationAttachmentOptionsThumbnailTimeKey: NSNumber(value: 3),
                ]),
                // Reaching past the image: cut to it. Hidden thumbnails stay hidden.
                try UNNotificationAttachment(identifier: "cut", url: image, options: [
                    UNNotificationAttachmentOptionsThumbnailClippingRectKey: ["X": 0.5, "Y": -1.0, "Width": 2.0, "Height": 1.5],
                    UNNotificationAttachmentOptionsThumbnailHiddenKey: true,
                ]),
                // A rectangle with nothing inside the image asks for the whole of it.
                try UNNotificationAttachment(identifier: "outside", url: image, options: [
                    UNNotificationAttachmentOptionsThumbnailClippingRectKey: ["X": 2.0, "Y": 0.0, "Width": 1.0, "Height": 1.0],
                ]),
            ]
            try await system.center.add(UNNotificationRequest(identifier: "later", content: content,
                                                              trigger: UNTimeIntervalNotificationTrigger(timeInterval: 60, repeats: false)))
            let kept = try #require(await system.center.pendingNotificationRequests().first?.content.attachments.map(\.value))
            #expect(kept.map(\.identifier) == ["clipped", "cut", "outside"])
            #expect(kept[0].thumbnailClippingRect == ThumbnailClippingRect(x: 0.25, y: 0, width: 0.5, height: 1))
            #expect(kept[0].thumbnailTime == 3)
            #expect(kept[1].thumbnailClippingRect == ThumbnailClippingRect(x: 0.5, y: 0, width: 0.5, height: 0.5))
            #expect(kept[1].thumbnailHidden)
            #expect(kept[2].thumbnailClippingRect == nil)
            #expect(kept[2].thumbnailTime == nil)
        }
    }

    @Test(arguments: Backend.allCases)
    func attachmentFilesAreCopiedInAndDeletedWhenNothingShowsThemAnyMore(_ backend: Backend) async throws {
        try await backend.run { system in
            try await authorize(system)
            let (folder, image) = try imageInNewFolder()
            defer { try? FileManager.default.removeItem(at: folder) }

            func request(_ identifier: String, trigger: UNNotificationTrigger?) throws -> UNNotificationRequest {
                let content = self.content("photo")
                content.attachments = [try UNNotificationAttachment(identifier: "p", url: image, options: nil)]
                return UNNotificationRequest(identifier: identifier, content: content, trigger: trigger)
            }
            func exists(_ url: URL?) -> Bool { url.map { FileManager.default.fileExists(atPath: $0.path) } ?? false }

            // A repeating request and its deliveries share one copy, kept while either is there.
            try await system.center.add(request("daily", trigger: UNTimeIntervalNotificationTrigger(timeInterval: 60, repeats: true)))
            let copy = try #require(await system.center.pendingNotificationRequests().first?.content.attachments.first?.url)
            #expect(copy.standardizedFileURL != image.standardizedFileURL)
            try await system.advance(by: 60)
            #expect(await system.center.deliveredNotifications().first?.request.content.attachments.first?.url == copy)
            system.center.removeAllPendingNotificationRequests()
            #expect(await system.center.pendingNotificationRequests().isEmpty)
            #expect(exists(copy), "the delivered notification still shows it")
            system.center.removeAllDeliveredNotifications()
            #expect(await system.center.deliveredNotifications().isEmpty)
            #expect(!exists(copy))

            // A request replaced before it fired leaves nothing behind.
            try await system.center.add(request("soon", trigger: UNTimeIntervalNotificationTrigger(timeInterval: 60, repeats: false)))
            let replaced = try #require(await system.center.pendingNotificationRequests().first?.content.attachments.first?.url)
            try await add(system, "soon", trigger: UNTimeIntervalNotificationTrigger(timeInterval: 60, repeats: false))
            #expect(await system.center.pendingNotificationRequests().first?.content.attachments.isEmpty == true)
            #expect(!exists(replaced))

            // A notification the person opens is gone from the list, and so is its file once the app has the response.
            try await system.center.add(request("opened", trigger: nil))
            let opened = try #require(await system.center.deliveredNotifications().first { $0.request.identifier == "opened" }?.request.content.attachments.first?.url)
            try await system.act(.open, on: "opened")
            try await system.delegate.waitForResponses(1)
            try await system.settle()
            #expect(!exists(opened))
            #expect(exists(image), "the app's own file is never touched")
        }
    }
}
