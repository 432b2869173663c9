#if !canImport(UserNotificationsUI)
import Foundation
import NotificationCore
import OpenUserNotificationsLink
import OpenUserNotifications
public import OpenUserNotificationsUIKit

/// Runs a notification content extension the way the daemon starts it: one process for each expanded
/// notification, living while its interface is open.
///
/// On iOS the system finds the extension's view controller in its `Info.plist`. Here the extension is
/// an executable whose `main.swift` is one line, registered for its app with its `Info.plist`
/// (`unotify apps content-extension <bundle> <executable> --info-plist <Info.plist>`):
///
/// ```swift
/// import OpenUserNotificationsUI
///
/// NotificationContentExtensionHost.run(NotificationViewController())
/// ```
///
/// The host creates the controller, calls `viewDidLoad()`, then, on the main actor, `didReceive(_:)`
/// with the notification, `didReceive(_:completionHandler:)` for each action the person chooses, and
/// `mediaPlay()` / `mediaPause()` for the media button; after each it hands the daemon the controller's
/// HTML (``NotificationContentHTML``), `title` and `preferredContentSize`. What the extension prints
/// goes to standard error (standard output carries the conversation with the daemon).
@MainActor
public enum NotificationContentExtensionHost {
    /// Runs `makeExtension()` for the notification the daemon hands over; never returns.
    public nonisolated static func run<Controller: UIViewController & UNNotificationContentExtension & NotificationContentHTML>(
        _ makeExtension: @autoclosure @MainActor () -> Controller
    ) -> Never {
        // `main.swift` runs on the main thread: the main actor's.
        MainActor.assumeIsolated { start(makeExtension) }
        dispatchMain()
    }

    private static func start<Controller: UIViewController & UNNotificationContentExtension & NotificationContentHTML>(
        _ makeExtension: @MainActor () -> Controller
    ) {
        let conversation = ExtensionConversation.takeStandardOutput()
        guard let first = readLine(strippingNewline: true),
              let message = try? JSONDecoder().decode(ContentExtensionMessage.self, from: Data(first.utf8)),
              message.type == .notification, let notification = message.notification else {
            FileHandle.standardError.write(Data("This is a notification content extension: the notification daemon starts it when a person expands a notification.\n".utf8))
            exit(2)
        }
        let host = Host(controller: makeExtension(), conversation: conversation,
                        categoryActions: (message.actions ?? []).map(UNNotificationAction.make))
        host.controller.hostedContext = NSExtensionContext(host: host)
        host.controller.viewDidLoad()
        // Queued before anything the daemon says next: the notification is drawn first.
        DispatchQueue.main.async {
            MainActor.assumeIsolated {
                host.controller.didReceive(UNNotification(notification))
                host.send(.interface, replyTo: message.sequence)
            }
        }
        let listener = Thread {
            while let line = readLine(strippingNewline: true) {
                guard let message = try? JSONDecoder().decode(ContentExtensionMessage.self, from: Data(line.utf8)) else { continue }
                DispatchQueue.main.async {
                    MainActor.assumeIsolated { host.handle(message) }
                }
            }
            // The daemon closed the interface, or is gone.
            exit(0)
        }
        listener.start()
    }

    /// The system's end of the extension: what the daemon asks, and the extension context's calls.
    private final class Host<Controller: UIViewController & UNNotificationContentExtension & NotificationContentHTML>: NotificationExtensionContextHost {
        let controller: Controller
        private let conversation: ExtensionConversation
        private var playing = false
        /// The category's actions, shown until the extension replaces them.
        private let categoryActions: [UNNotificationAction]
        private var replacedActions: [UNNotificationAction]?

        init(controller: Controller, conversation: ExtensionConversation, categoryActions: [UNNotificationAction]) {
            self.controller = controller
            self.conversation = conversation
            self.categoryActions = categoryActions
        }

        func handle(_ message: ContentExtensionMessage) {
            switch message.type {
            case .response:
                guard let response = message.response else { return }
                var answered = false
                controller.didReceive(UNNotificationResponse.make(response)) { [self] option in
                    // The first answer counts, as the system acts on it at once.
                    guard !answered else { return }
                    answered = true
                    let send = { self.send(.interface, replyTo: message.sequence, option: ContentExtensionResponseOption(rawValue: Int(option.rawValue))) }
                    if Thread.isMainThread { MainActor.assumeIsolated(send) } else { DispatchQueue.main.async { MainActor.assumeIsolated(send) } }
                }
            case .mediaPlay:
                playing = true
                controller.mediaPlay()
                send(.interface, replyTo: message.sequence)
            case .mediaPause:
                playing = false
                controller.mediaPause()
                send(.interface, replyTo: message.sequence)
            case .notification, .interface, .defaultAction, .dismiss:
                break
            }
        }

        /// Sends the interface as it is now, in a message of `type`.
        func send(_ type: ContentExtensionMessage.Kind, replyTo: UInt64? = nil, option: ContentExtensionResponseOption? = nil) {
            let message = ContentExtensionMessage(type: type, replyTo: replyTo, interface: interface, option: option)
            if let line = try? message.line() { conversation.send(line) }
        }

        private var interface: ContentExtensionInterface {
            let size = controller.preferredContentSize
            let buttonType = controller.mediaPlayPauseButtonType
            var mediaButton: ContentExtensionInterface.MediaButton?
            if buttonType != .none {
                let frame = controller.mediaPlayPauseButtonFrame
                mediaButton = .init(type: Int(buttonType.rawValue),
                                    frame: .init(x: Double(frame.origin.x), y: Double(frame.origin.y), width: Double(frame.size.width), height: Double(frame.size.height)),
                                    tintColor: controller.mediaPlayPauseButtonTintColor.css, playing: playing)
            }
            return ContentExtensionInterface(
                html: controller.html, title: controller.title,
                preferredContentSize: size.width > 0 && size.height > 0 ? .init(width: Double(size.width), height: Double(size.height)) : nil,
                mediaButton: mediaButton,
                actions: replacedActions?.map(\.value)
            )
        }

        var notificationActions: [UNNotificationAction] {
            get { replacedActions ?? categoryActions }
            set {
                replacedActions = newValue
                send(.interface)
            }
        }

        func performNotificationDefaultAction() { send(.defaultAction) }
        func dismissNotificationContentExtension() { send(.dismiss) }

        func mediaPlayingStarted() {
            playing = true
            send(.interface)
        }

        func mediaPlayingPaused() {
            playing = false
            send(.interface)
        }
    }
}
#endif
