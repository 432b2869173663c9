import ArgumentParser
import Dispatch
import Foundation
import Synchronization
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
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await Self.follow(socket: socket, admin: admin, only: only, shown: shown)
            }
            group.addTask {
                for await line in standardInputLines() {
                    await Self.perform(line, shown: shown, admin: admin)
                }
            }
            // Quitting (end of input) ends the watch; so does a daemon that cannot be reached at the start.
            _ = try await group.next()
            group.cancelAll()
        }
    }

    /// Shows the daemon's events as they come. When the daemon goes away (stopped, restarted,
    /// killed), says so once, tries again after a growing pause (0.2 s to 2 s, with jitter), and
    /// once it is back shows what is on screen then, so that nothing that happened meanwhile is
    /// missed. Throws only when the first connection fails.
    static func follow(socket: String, admin: LocalAPIClient, only: String?, shown: Shown) async throws {
        let watched = Watched()
        var pause = Duration.milliseconds(200)
        while !Task.isCancelled {
            do {
                try await LocalAPIWebSocket.withConnection(socketPath: socket, path: "/v1/admin/events", key: admin.key) { stream in
                    try await watch(stream, socket: socket, admin: admin, only: only, shown: shown, watched: watched)
                }
            } catch where watched.everConnected && !(error is CancellationError) {
                // Gone, or not back yet: the pause below, then again.
            }
            guard !Task.isCancelled else { return }
            if watched.connected {
                watched.connected = false
                pause = .milliseconds(200)
                Terminal.write("The daemon at \(socket) went away; waiting for it to come back (Ctrl-D quits).")
            }
            try await Task.sleep(for: pause + .milliseconds(Int.random(in: 0...100)))
            pause = min(pause * 2, .seconds(2))
        }
    }

    /// One connection's events, until the daemon closes it.
    private static func watch(_ stream: LocalAPIWebSocket.Connection, socket: String, admin: LocalAPIClient, only: String?,
                              shown: Shown, watched: Watched) async throws {
        // Subscribed first, then what is on screen is read: nothing that happens in between is missed.
        try await stream.send(#"{"type":"subscribe"}"#)
        var events = stream.messages.makeAsyncIterator()
        guard let first = try await events.next(),
              (try? JSONDecoder().decode(LocalAPI.WatchEvent.self, from: Data(first.utf8))) == .subscribed else {
            throw LocalAPIClientError.transport("The daemon did not answer the subscription.")
        }
        let again = watched.everConnected
        watched.connected = true
        if again { Terminal.write("The daemon is back. What is on screen now:") }
        try await showState(admin: admin, only: only, shown: shown)
        if !again {
            Terminal.write("Watching \(socket). Type `<n> open`, `<n> dismiss`, `<n> <action> [text]`, `allow <app>`; Ctrl-D quits.")
        }
        while let text = try await events.next() {
            // A kind this watch does not know (from a newer daemon) is passed over.
            switch try? JSONDecoder().decode(LocalAPI.WatchEvent.self, from: Data(text.utf8)) {
            case .overflowed?:
                Terminal.write("(fell behind the daemon; some events were not shown. What is on screen now:)")
                try await showState(admin: admin, only: only, shown: shown)
            case .event(let event)? where only == nil || event.bundleIdentifier == only:
                // An app registered since the names were read: they are read again, once per app.
                if !event.bundleIdentifier.isEmpty, AppNames.shown.isUnknown(event.bundleIdentifier),
                   let apps = try? await admin.call(.GET, "/v1/admin/apps", as: [LocalAPI.AppSummary].self) {
                    AppNames.shown.update(apps, asked: event.bundleIdentifier)
                }
                show(event, shown)
            case .event?, .subscribed?, nil:
                continue
            }
        }
    }

    /// Shows what is on screen now: the apps running, authorization prompts waiting for an answer,
    /// and notifications.
    static func showState(admin: LocalAPIClient, only: String?, shown: Shown) async throws {
        let apps = try await admin.call(.GET, "/v1/admin/apps", as: [LocalAPI.AppSummary].self)
        AppNames.shown.update(apps)
        for app in apps where (only == nil || app.bundleIdentifier == only) && app.state != nil && app.state != AppState.notRunning.rawValue {
            Terminal.write("[\(AppNames.shown.label(app.bundleIdentifier))] is \(app.state ?? "")")
        }
        for prompt in try await admin.call(.GET, "/v1/admin/prompts", as: [LocalAPI.AuthorizationPrompt].self)
        where only == nil || prompt.bundleIdentifier == only {
            showPrompt(prompt.bundleIdentifier, options: prompt.options)
        }
        for notification in try await admin.call(.GET, "/v1/admin/notifications" + (only.map { "?app=\(segment($0))" } ?? ""),
                                                 as: [LocalAPI.VisibleNotification].self) {
            Terminal.write("#\(shown.add(notification)) \(describe(notification, as: AppNames.shown.label(notification.bundleIdentifier)))")
        }
    }

    static func showPrompt(_ app: String, options raw: UInt) {
        let options = AuthorizationOptions(rawValue: raw)
        var kinds: [String] = []
        if options.contains(.alert) { kinds.append("alerts") }
        if options.contains(.sound) { kinds.append("sounds") }
        if options.contains(.badge) { kinds.append("badges") }
        Terminal.write("[\(AppNames.shown.label(app))] would like to send you notifications (\(kinds.joined(separator: ", "))). Type `allow \(app)` or `deny \(app)`.")
    }

    static func show(_ event: DaemonEvent, _ shown: Shown) {
        switch event {
        case .app(let app, let event): show(event, of: app, shown)
        case .deviceLockChanged(let locked): Terminal.write(locked ? "The device is locked." : "The device is unlocked.")
        case .focusChanged(let focus): Terminal.write(FocusCommand.describe(focus))
        case .summaryChanged(let summary): Terminal.write(SummaryCommand.describe(summary))
        case .timeZoneChanged(let zone): Terminal.write("The device's time zone is now \(zone.identifier).")
        }
    }

    static func show(_ event: PersonEvent, of app: String, _ shown: Shown) {
        switch event {
        case .presented(let presented):
            let notification = LocalAPI.VisibleNotification(bundleIdentifier: app, presented)
            if notification.presentation.isVisible {
                // One listed when the watch connected may also come as the event that brought it,
                // if it arrived between the subscription and the listing: it is shown once.
                let (number, isNew) = shown.number(of: notification)
                guard isNew else { return }
                Terminal.write("#\(number) \(describe(notification, as: AppNames.shown.label(notification.bundleIdentifier)))")
            } else {
                Terminal.write("[\(AppNames.shown.label(app))] \(notification.notification.request.identifier) arrived but is not shown")
            }
        case .authorizationPrompt(let options):
            showPrompt(app, options: options.rawValue)
        case .responseDelivered(let response):
            Terminal.write("[\(AppNames.shown.label(app))] received \(response.actionIdentifier)\(response.userText.map { " \"\($0)\"" } ?? "") for \(response.notification.request.identifier)")
        case .badgeChanged(let badge):
            Terminal.write("[\(AppNames.shown.label(app))] badge \(badge)")
        case .appStateChanged(let state):
            Terminal.write("[\(AppNames.shown.label(app))] is \(state)")
        case .remoteNotificationDelivered(let remote):
            Terminal.write("[\(AppNames.shown.label(app))] woken by \(remote.isVoIP ? "a VoIP push" : "a background push") \(remote.identifier)")
        case .remoteNotificationHeld(let remote):
            Terminal.write("[\(AppNames.shown.label(app))] background push \(remote.identifier) held until the app can take it")
        case .remoteNotificationNotCompleted(let remote):
            Terminal.write("[\(AppNames.shown.label(app))] did not finish background push \(remote.identifier) in time")
        case .contentPreparing(let request):
            Terminal.write("[\(AppNames.shown.label(app))] \(request.identifier) is being prepared by its service extension")
        case .contentPrepared(let request, let outcome):
            let identifier = request.identifier
            switch outcome {
            case .prepared: Terminal.write("[\(AppNames.shown.label(app))] \(identifier) prepared by its service extension")
            case .timedOut: Terminal.write("[\(AppNames.shown.label(app))] \(identifier): its service extension ran out of time; shown as it came")
            case .interrupted: Terminal.write("[\(AppNames.shown.label(app))] \(identifier): its service extension was interrupted twice; shown as it came")
            case .failed(let reason): Terminal.write("[\(AppNames.shown.label(app))] \(identifier): its service extension failed (\(reason)); shown as it came")
            }
        case .actedOn(let identifier, let actionIdentifier):
            let which = shown.number(of: identifier, of: app).map { "#\($0)" } ?? identifier
            let what = switch actionIdentifier {
            case SystemActionIdentifier.default: "opened"
            case SystemActionIdentifier.dismiss: "dismissed"
            default: "answered with \(actionIdentifier)"
            }
            Terminal.write("[\(AppNames.shown.label(app))] \(which) \(what)")
        case .notificationsRemoved(let identifiers):
            Terminal.write("[\(AppNames.shown.label(app))] removed \(identifiers.joined(separator: ", "))")
        case .summaryDelivered(let delivered):
            let notifications = delivered.map { LocalAPI.VisibleNotification(bundleIdentifier: app, $0) }
            Terminal.write("[\(AppNames.shown.label(app))] the Scheduled Summary came with \(notifications.count) notification\(notifications.count == 1 ? "" : "s"):")
            for notification in notifications { Terminal.write("#\(shown.add(notification)) \(describe(notification, as: AppNames.shown.label(notification.bundleIdentifier)))") }
        case .settingsChanged, .responseNotCompleted, .willPresentTimedOut, .discardedOverLimit:
            break
        }
    }

    static func perform(_ line: String, shown: Shown, admin: LocalAPIClient) async {
        let words = line.split(separator: " ", maxSplits: 2).map(String.init)
        guard let first = words.first else { return }
        do {
            if first == "allow" || first == "deny", words.count >= 2 {
                let settings = try await admin.call(.POST, "/v1/admin/apps/\(segment(words[1]))/authorization",
                                                    body: LocalAPI.AuthorizationDecision(decision: first == "allow" ? "grant" : "deny"), as: NotificationSettings.self)
                let app = AppNames.shown.label(words[1])
                Terminal.write(first == "allow" ? "[\(app)] may send you notifications (\(settings.authorizationStatus))."
                                                : "[\(app)] may not send you notifications (\(settings.authorizationStatus)).")
                return
            }
            guard let number = Int(first.trimmingCharacters(in: CharacterSet(charactersIn: "#"))), let target = shown[number], words.count >= 2 else {
                Terminal.write("Type `<n> open`, `<n> dismiss`, `<n> <action> [text]`, `<n> settings`, or `allow <app>`.")
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
            Terminal.write("Refused: \(error)")
        }
    }
}

/// The watch's output: each line written at once, straight to standard output.
///
/// Not through `print` and `fflush`: another thread waits in `readLine` for what the person types,
/// holding standard input's lock, and `fflush(nil)` would wait for that lock until a line is typed.
enum Terminal {
    static func write(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}

/// The names the watch shows apps by (their display names, else their bundle identifiers).
final class AppNames: Sendable {
    static let shown = AppNames()

    private let names = Mutex<[String: String]>([:])

    /// What `app` is shown as: its name, or its bundle identifier.
    func label(_ app: String) -> String {
        names.withLock { $0[app] } ?? app
    }

    /// Whether the app's name was never read.
    func isUnknown(_ app: String) -> Bool {
        names.withLock { $0[app] == nil }
    }

    /// Takes the names of `apps`; `asked` is known from now on even when it is not among them.
    func update(_ apps: [LocalAPI.AppSummary], asked: String? = nil) {
        names.withLock { names in
            for app in apps { names[app.bundleIdentifier] = app.name ?? app.bundleIdentifier }
            if let asked, names[asked] == nil { names[asked] = asked }
        }
    }
}

/// Whether the watch is connected to the daemon now, and whether it ever was.
final class Watched: Sendable {
    private let state = Mutex((connected: false, everConnected: false))

    var connected: Bool {
        get { state.withLock { $0.connected } }
        set { state.withLock { $0.connected = newValue; if newValue { $0.everConnected = true } } }
    }

    var everConnected: Bool { state.withLock { $0.everConnected } }
}

/// The notifications shown so far, by their number on screen.
final class Shown: @unchecked Sendable {
    // Sendable: every access goes through `lock`.
    private struct Key: Hashable {
        var bundleIdentifier: String
        var notification: DeliveredNotification
    }

    private let lock = NSLock()
    private var items: [LocalAPI.VisibleNotification] = []
    private var numbers: [Key: Int] = [:]

    /// The number of `notification`, and whether it is new: the one it already has when it is shown
    /// again (listed after an event brought it, or listed again after the watch fell behind).
    func number(of notification: LocalAPI.VisibleNotification) -> (number: Int, isNew: Bool) {
        lock.lock()
        defer { lock.unlock() }
        let key = Key(bundleIdentifier: notification.bundleIdentifier, notification: notification.notification)
        if let number = numbers[key] { return (number, false) }
        items.append(notification)
        numbers[key] = items.count
        return (items.count, true)
    }

    /// The number of `notification`, a new one if it has none yet.
    func add(_ notification: LocalAPI.VisibleNotification) -> Int {
        number(of: notification).number
    }

    subscript(number: Int) -> LocalAPI.VisibleNotification? {
        lock.lock()
        defer { lock.unlock() }
        return items.indices.contains(number - 1) ? items[number - 1] : nil
    }

    /// The number of the latest notification shown with this app and identifier, if any.
    func number(of identifier: String, of bundleIdentifier: String) -> Int? {
        lock.lock()
        defer { lock.unlock() }
        return items.lastIndex { $0.bundleIdentifier == bundleIdentifier && $0.notification.request.identifier == identifier }.map { $0 + 1 }
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
