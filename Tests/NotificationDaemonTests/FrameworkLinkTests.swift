import DaemonTestSupport
import Foundation
import NotificationCore
import NotificationDaemonClient
import OpenUserNotifications
@testable import OpenUserNotificationsLink
import Synchronization
import Testing
import TestSupport

/// An app's delegate that shows every notification in the foreground and reports every response.
final class LinkedAppDelegate: NSObject, UNUserNotificationCenterDelegate, Sendable {
    let responses: AsyncStream<UNNotificationResponse>
    private let continuation: AsyncStream<UNNotificationResponse>.Continuation

    override init() {
        (responses, continuation) = AsyncStream.makeStream()
        super.init()
    }

    func userNotificationCenter(_ center: UNUserNotificationCenter, willPresent notification: UNNotification,
                                withCompletionHandler completionHandler: @escaping @Sendable (UNNotificationPresentationOptions) -> Void) {
        completionHandler([.banner, .list, .sound])
    }

    func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse,
                                withCompletionHandler completionHandler: @escaping @Sendable () -> Void) {
        continuation.yield(response)
        completionHandler()
    }

    func nextResponse() async -> UNNotificationResponse? {
        for await response in responses { return response }
        return nil
    }
}

/// A delegate that puts foreground notifications in the list only, quietly.
final class ListOnlyDelegate: NSObject, UNUserNotificationCenterDelegate, Sendable {
    let asked = Mutex<[String]>([])

    func userNotificationCenter(_ center: UNUserNotificationCenter, willPresent notification: UNNotification,
                                withCompletionHandler completionHandler: @escaping @Sendable (UNNotificationPresentationOptions) -> Void) {
        asked.withLock { $0.append(notification.request.identifier) }
        completionHandler([.list])
    }
}

/// The framework's `UNUserNotificationCenter` talking to a real daemon over its socket.
@Suite(.timeLimit(.minutes(2))) struct FrameworkLinkTests {
    func linkedCenter(_ daemon: RunningDaemon, key: String, foreground: Bool) -> UNUserNotificationCenter {
        let configuration = NotificationDaemonLink.Configuration(bundleIdentifier: "com.example.todo", key: key, socketPath: daemon.socketPath,
                                                                 startsInForeground: foreground)
        return UNUserNotificationCenter(backend: DaemonBackend(
            client: LocalAPIClient(socketPath: configuration.socketPath, key: configuration.key),
            initialState: foreground ? .foreground : .background
        ))
    }

    /// `supportsContentExtensions` is what the daemon says when the app connects: true where the web
    /// notification center shows content extensions (`unotify serve`), false for a bare daemon.
    @Test(arguments: [false, true]) func supportsContentExtensionsIsWhetherTheDaemonShowsThem(_ hosted: Bool) async throws {
        try await withDaemon(configure: { $0.engine.hostsContentExtensions = hosted }) { daemon in
            let registered = try await daemon.registerApp("com.example.todo")
            let (connections, connected) = AsyncStream<Bool>.makeStream()
            let center = UNUserNotificationCenter(backend: DaemonBackend(
                client: LocalAPIClient(socketPath: daemon.socketPath, key: registered.key), initialState: .foreground,
                eventHandled: { event in if case .connected(let contentExtensions) = event { connected.yield(contentExtensions) } }
            ))
            #expect(!center.supportsContentExtensions, "nothing is known before the app connects")
            var iterator = connections.makeAsyncIterator()
            #expect(await iterator.next() == hosted)
            #expect(center.supportsContentExtensions == hosted)
        }
    }

    @Test func theAppsCodeSchedulesThroughTheDaemonAndItsDelegateHearsThePerson() async throws {
        try await withDaemon { daemon in
            let registered = try await daemon.registerApp("com.example.todo")
            let center = linkedCenter(daemon, key: registered.key, foreground: true)
            let delegate = LinkedAppDelegate()
            center.delegate = delegate

            // The person is asked, on the presenters' stream, and allows.
            try await daemon.withWatch { watch in
                async let granted = center.requestAuthorization(options: [.alert, .sound, .badge])
                _ = try await watch.next { $0.type == "authorizationPrompt" }
                _ = try await daemon.admin.call(.POST, "/v1/admin/apps/com.example.todo/authorization",
                                                body: LocalAPI.AuthorizationDecision(decision: "grant"), as: NotificationSettings.self)
                #expect(try await granted)
            }
            #expect(await center.notificationSettings().authorizationStatus == .authorized)

            let reply = UNTextInputNotificationAction(identifier: "INPUT", title: "Reply", options: [], textInputButtonTitle: "Send", textInputPlaceholder: "…")
            center.setNotificationCategories([UNNotificationCategory(identifier: "TODO", actions: [reply], intentIdentifiers: [])])
            let content = UNMutableNotificationContent()
            content.title = "Daily report"
            content.categoryIdentifier = "TODO"
            let presented = try await daemon.withWatch { watch in
                try await center.add(UNNotificationRequest(identifier: "daily", content: content, trigger: nil))
                return try await watch.next { $0.type == "presented" }.presented
            }
            #expect(presented?.presentation == Presentation(banner: true, list: true), "the foreground delegate decided")
            #expect(presented?.actions.map(\.identifier) == ["INPUT"])
            #expect(await center.deliveredNotifications().map(\.request.identifier) == ["daily"])

            try await daemon.admin.call(.POST, "/v1/admin/apps/com.example.todo/notifications/daily/respond",
                                        body: LocalAPI.Respond(kind: "reply", actionIdentifier: "INPUT", text: "done"))
            let response = await delegate.nextResponse()
            #expect((response as? UNTextInputNotificationResponse)?.userText == "done")

            let code: UNError.Code?
            do {
                try await center.setBadgeCount(-1)
                code = nil
            } catch let error as UNError {
                code = error.code
            }
            #expect(code == .badgeInputInvalid)
            await NotificationDaemonLink.close(center)
        }
    }

    /// One notification and nothing after it: the delegate's `willPresent` runs at once and its answer
    /// decides the presentation. The daemon's clock does not move, so no deadline can decide instead.
    @Test func aSingleEventReachesTheForegroundDelegateWhichDecides() async throws {
        try await withDaemon { daemon in
            let registered = try await daemon.authorizedApp("com.example.todo")
            let delegate = ListOnlyDelegate()
            let center = try await daemon.withWatch { watch in
                let center = linkedCenter(daemon, key: registered.key, foreground: true)
                center.delegate = delegate
                _ = try await watch.next { $0.type == "appStateChanged" && $0.appState == .foreground }
                let content = UNMutableNotificationContent()
                content.title = "Only one"
                try await center.add(UNNotificationRequest(identifier: "one", content: content, trigger: nil))
                let presented = try await watch.next { $0.type == "presented" || $0.type == "willPresentTimedOut" }
                #expect(presented.type == "presented")
                #expect(presented.presented?.presentation == Presentation(list: true), "the delegate's answer, not the background's banner")
                return center
            }
            #expect(delegate.asked.withLock { $0 } == ["one"])
            await NotificationDaemonLink.close(center)
        }
    }

    @Test func aResponseGivenWhileTheAppWasStoppedReachesItWhenItStartsAgain() async throws {
        try await withDaemon { daemon in
            let registered = try await daemon.authorizedApp("com.example.todo")
            let first = linkedCenter(daemon, key: registered.key, foreground: false)
            let content = UNMutableNotificationContent()
            content.title = "Water the plants"
            try await first.add(UNNotificationRequest(identifier: "plants", content: content, trigger: nil))
            // The app stops, and the person taps the notification meanwhile.
            await NotificationDaemonLink.close(first)
            try await daemon.admin.call(.POST, "/v1/admin/apps/com.example.todo/notifications/plants/respond", body: LocalAPI.Respond(kind: "open"))
            // The app starts again and sets its delegate: the response that waited is handed to it.
            let center = linkedCenter(daemon, key: registered.key, foreground: false)
            let delegate = LinkedAppDelegate()
            center.delegate = delegate
            let response = await delegate.nextResponse()
            #expect(response?.actionIdentifier == UNNotificationDefaultActionIdentifier)
            #expect(response?.notification.request.content.title == "Water the plants")
            await NotificationDaemonLink.close(center)
        }
    }

    @Test func aResponseHandedOverBeforeTheAppSetsItsDelegateWaitsForTheDelegate() async throws {
        try await withDaemon { daemon in
            let registered = try await daemon.authorizedApp("com.example.todo")
            try await registered.add("plants", title: "Water the plants")
            try await daemon.admin.call(.POST, "/v1/admin/apps/com.example.todo/notifications/plants/respond", body: LocalAPI.Respond(kind: "open"))

            // The app starts (as its launch command starts it for the response), connects, and is handed
            // the response before its code gets to set the delegate.
            let (handled, handledContinuation) = AsyncStream<LocalAPI.AppEvent>.makeStream()
            let center = UNUserNotificationCenter(backend: DaemonBackend(
                client: LocalAPIClient(socketPath: daemon.socketPath, key: registered.key), initialState: .background,
                eventHandled: { handledContinuation.yield($0) }
            ))
            try await withDeadline("the response to reach the app") {
                for await event in handled {
                    if case .call(.response) = event { return }
                }
            }
            let delegate = LinkedAppDelegate()
            center.delegate = delegate
            let response = try await withDeadline("the held response to reach the delegate") { await delegate.nextResponse() }
            #expect(response?.notification.request.identifier == "plants")
            #expect(response?.actionIdentifier == UNNotificationDefaultActionIdentifier)
            await NotificationDaemonLink.close(center)
        }
    }
}
