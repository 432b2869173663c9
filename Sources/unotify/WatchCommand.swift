import ArgumentParser
import Dispatch
import Foundation
import NotificationCore
import NIOHTTP1
import NotificationDaemon
import NotificationDaemonClient

struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Show notifications live as they are delivered, and act on them.",
        discussion: """
            Each notification is shown with how it was presented (banner, list only, quiet) and its actions, under a
            number. Type a command and press return:
              <n> open              tap it
              <n> dismiss           swipe it away
              <n> <action>          pick an action
              <n> <action> <text>   type a reply into a text-input action
              <n> settings          open the app's notification settings
              allow <app> | deny <app>   answer an app's authorization prompt
            """
    )

    @OptionGroup var location: LocationOptions
    @Option(name: .long, help: "Only this app's notifications.") var app: String?

    func run() async throws {
        let admin = try location.adminClient()
        let socket = location.configuration.socketPath
        let only = app
        let shown = Shown()
        for notification in try await admin.call(.GET, "/v1/admin/notifications" + (only.map { "?app=\(segment($0))" } ?? ""),
                                                 as: [LocalAPI.VisibleNotification].self) {
            print("#\(shown.add(notification)) \(describe(notification))")
        }
        print("Watching \(socket). Type `<n> open`, `<n> dismiss`, `<n> <action> [text]`, `allow <app>`; Ctrl-D quits.")
        try await LocalAPIWebSocket.withConnection(socketPath: socket, path: "/v1/admin/events", key: admin.key) { stream in
            try await stream.send(#"{"type":"subscribe"}"#)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for try await text in stream.messages {
                        guard let event = try? JSONDecoder().decode(LocalAPI.WatchEvent.self, from: Data(text.utf8)),
                              only == nil || event.bundleIdentifier == only else { continue }
                        Self.show(event, shown)
                    }
                }
                group.addTask {
                    for await line in standardInputLines() {
                        await Self.perform(line, shown: shown, admin: admin)
                    }
                }
                // Quitting (end of input) or the daemon going away ends the watch.
                _ = try await group.next()
                group.cancelAll()
            }
        }
    }

    static func show(_ event: LocalAPI.WatchEvent, _ shown: Shown) {
        switch event.type {
        case "presented":
            guard let notification = event.notification else { return }
            if notification.presentation.isVisible {
                print("#\(shown.add(notification)) \(describe(notification))")
            } else {
                print("[\(event.bundleIdentifier)] \(notification.notification.request.identifier) arrived but is not shown")
            }
        case "authorizationPrompt":
            let options = AuthorizationOptions(rawValue: event.options ?? 0)
            var kinds: [String] = []
            if options.contains(.alert) { kinds.append("alerts") }
            if options.contains(.sound) { kinds.append("sounds") }
            if options.contains(.badge) { kinds.append("badges") }
            print("[\(event.bundleIdentifier)] would like to send you notifications (\(kinds.joined(separator: ", "))). Type `allow \(event.bundleIdentifier)` or `deny \(event.bundleIdentifier)`.")
        case "responseDelivered":
            if let response = event.response {
                print("[\(event.bundleIdentifier)] received \(response.actionIdentifier)\(response.userText.map { " \"\($0)\"" } ?? "") for \(response.notification.request.identifier)")
            }
        case "badgeChanged":
            print("[\(event.bundleIdentifier)] badge \(event.badge ?? 0)")
        case "appStateChanged":
            print("[\(event.bundleIdentifier)] is \(event.state.map { "\($0)" } ?? "?")")
        default:
            break
        }
        fflush(nil)
    }

    static func perform(_ line: String, shown: Shown, admin: LocalAPIClient) async {
        let words = line.split(separator: " ", maxSplits: 2).map(String.init)
        guard let first = words.first else { return }
        do {
            if first == "allow" || first == "deny", words.count >= 2 {
                _ = try await admin.call(.POST, "/v1/admin/apps/\(segment(words[1]))/authorization",
                                         body: LocalAPI.AuthorizationDecision(decision: first == "allow" ? "grant" : "deny"), as: NotificationSettings.self)
                return
            }
            guard let number = Int(first.trimmingCharacters(in: CharacterSet(charactersIn: "#"))), let target = shown[number], words.count >= 2 else {
                print("Type `<n> open`, `<n> dismiss`, `<n> <action> [text]`, `<n> settings`, or `allow <app>`.")
                return
            }
            let body: LocalAPI.Respond = switch words[1] {
            case "open": LocalAPI.Respond(kind: "open")
            case "dismiss": LocalAPI.Respond(kind: "dismiss")
            case "settings": LocalAPI.Respond(kind: "settings")
            default: words.count == 3
                ? LocalAPI.Respond(kind: "reply", actionIdentifier: words[1], text: words[2])
                : LocalAPI.Respond(kind: "action", actionIdentifier: words[1])
            }
            try await admin.call(.POST, "/v1/admin/apps/\(segment(target.bundleIdentifier))/notifications/\(segment(target.notification.request.identifier))/respond", body: body)
        } catch {
            print("Refused: \(error)")
        }
        fflush(nil)
    }
}

/// The notifications shown so far, by their number on screen.
final class Shown: @unchecked Sendable {
    // Sendable: every access goes through `lock`.
    private let lock = NSLock()
    private var items: [LocalAPI.VisibleNotification] = []

    func add(_ notification: LocalAPI.VisibleNotification) -> Int {
        lock.lock()
        defer { lock.unlock() }
        items.append(notification)
        return items.count
    }

    subscript(number: Int) -> LocalAPI.VisibleNotification? {
        lock.lock()
        defer { lock.unlock() }
        return items.indices.contains(number - 1) ? items[number - 1] : nil
    }
}

/// Lines typed on standard input, read on a thread of their own so the watch keeps running meanwhile.
func standardInputLines() -> AsyncStream<String> {
    AsyncStream { continuation in
        let thread = Thread {
            while let line = readLine() {
                continuation.yield(line)
            }
            continuation.finish()
        }
        thread.start()
    }
}
