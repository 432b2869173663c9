import Foundation
import NotificationCore
public import OpenUserNotifications
#if canImport(Glibc)
import Glibc
#endif

/// Runs a notification service extension the way the daemon starts it: one process per push.
///
/// On iOS the system finds the extension's class in its `Info.plist`. Here the extension is an
/// executable whose `main.swift` is one line, and the app registers the executable with the daemon
/// (`unotify apps extension <bundle> <executable>`):
///
/// ```swift
/// import OpenUserNotificationsLink
///
/// NotificationServiceExtensionHost.run(NotificationService())
/// ```
///
/// The host reads the push's request from the daemon, calls the extension's
/// `didReceive(_:withContentHandler:)` on the main queue, calls `serviceExtensionTimeWillExpire()` there
/// when the daemon says time is nearly up, and hands back the content the first call of the content
/// handler gives; then the process exits. A content handler called more than once before the host hands
/// the content back makes the daemon show the original, as does content that is not valid. What the
/// extension prints goes to standard error (standard output carries the conversation with the daemon).
/// `URLSession` works as on iOS; its files, and the `cachesDirectory`, are in the extension's own
/// folder, which is where the files it attaches must be.
public enum NotificationServiceExtensionHost {
    /// Runs `makeExtension()` for the push the daemon hands over; never returns.
    public static func run(_ makeExtension: @autoclosure () -> UNNotificationServiceExtension) -> Never {
        let conversation = ExtensionConversation.takeStandardOutput()
        guard let first = readLine(strippingNewline: true),
              let message = try? JSONDecoder().decode(ServiceExtensionMessage.self, from: Data(first.utf8)),
              message.type == .request, let request = message.request else {
            FileHandle.standardError.write(Data("This is a notification service extension: the notification daemon starts it for a push.\n".utf8))
            exit(2)
        }
        let serviceExtension = MainQueueOnly(makeExtension())
        let answer = Answer(conversation: conversation)
        // Queued before anything the daemon says next: `didReceive` always comes first, even when the
        // daemon's warning arrives at once (the extension waited its turn, or the system is slow).
        DispatchQueue.main.async {
            serviceExtension.value.didReceive(UNNotificationRequest(request)) { content in answer.give(content) }
        }
        // Later messages from the daemon: only `timeWillExpire`; the end of input means it is over.
        let listener = Thread {
            while let line = readLine(strippingNewline: true) {
                guard let message = try? JSONDecoder().decode(ServiceExtensionMessage.self, from: Data(line.utf8)) else { continue }
                if message.type == .timeWillExpire {
                    DispatchQueue.main.async { serviceExtension.value.serviceExtensionTimeWillExpire() }
                }
            }
            // The daemon is gone or stopped the extension: nothing will be shown from here.
            exit(0)
        }
        listener.start()
        dispatchMain()
    }

    /// The extension, which only the main queue touches.
    private struct MainQueueOnly: @unchecked Sendable {
        let value: UNNotificationServiceExtension
        init(_ value: UNNotificationServiceExtension) { self.value = value }
    }

    /// The content handler's calls: the first is handed back once the main queue has finished what it
    /// was doing, so a second call made meanwhile is seen.
    private final class Answer: @unchecked Sendable {
        // Sendable: `first` and `calls` are read and written under `lock`.
        private let lock = NSLock()
        private var first: UNNotificationContent?
        private var calls = 0
        private let conversation: ExtensionConversation

        init(conversation: ExtensionConversation) {
            self.conversation = conversation
        }

        func give(_ content: UNNotificationContent) {
            let isFirst = lock.withLock {
                calls += 1
                // A copy: the extension may go on changing its content object after handing it over.
                if calls == 1 { first = content.copy() as? UNNotificationContent ?? content }
                return calls == 1
            }
            guard isFirst else { return }
            DispatchQueue.main.async { [self] in
                let (given, count) = lock.withLock { (first!, calls) }
                let message: ServiceExtensionMessage
                if count > 1 {
                    message = .failure("the extension called the content handler \(count) times")
                } else if let value = given.coreValue {
                    message = .content(value)
                } else {
                    message = .failure("the content's userInfo holds values that are not property-list types")
                }
                if let line = try? message.line() { conversation.send(line) }
                exit(0)
            }
        }
    }
}
