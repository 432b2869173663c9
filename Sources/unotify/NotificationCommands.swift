import ArgumentParser
import Foundation
import NotificationCore
import NIOHTTP1
import NotificationDaemon
import NotificationDaemonClient

struct PendingCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "pending", abstract: "List an app's pending requests, soonest first.")

    @OptionGroup var location: LocationOptions
    @Option(name: .long, help: "The app's bundle identifier.") var app: String
    @Flag(name: .long, help: "Print JSON.") var json = false

    func run() async throws {
        let pending = try await location.adminClient().call(.GET, "/v1/admin/apps/\(segment(app))/requests", as: [LocalAPI.PendingRequest].self)
        if json { return try printJSON(pending) }
        let formatter = ISO8601DateFormatter()
        for item in pending.sorted(by: { ($0.nextFireDate ?? .distantFuture) < ($1.nextFireDate ?? .distantFuture) }) {
            let when = item.nextFireDate.map(formatter.string(from:)) ?? "on location"
            print("\(item.request.identifier)\t\(when)\t\(item.request.content.title)")
        }
    }
}

struct DeliveredCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "delivered", abstract: "List an app's delivered notifications still in the notification center.")

    @OptionGroup var location: LocationOptions
    @Option(name: .long, help: "The app's bundle identifier.") var app: String
    @Flag(name: .long, help: "Print JSON.") var json = false

    func run() async throws {
        let delivered = try await location.adminClient().call(.GET, "/v1/admin/apps/\(segment(app))/delivered", as: [DeliveredNotification].self)
        if json { return try printJSON(delivered) }
        let formatter = ISO8601DateFormatter()
        for item in delivered {
            print("\(item.request.identifier)\t\(formatter.string(from: item.date))\t\(item.request.content.title)")
        }
    }
}

struct NotificationsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notifications",
        abstract: "Show what the person sees: every notification on screen, on the lock screen or in the list."
    )

    @OptionGroup var location: LocationOptions
    @Option(name: .long, help: "Only this app's.") var app: String?
    @Flag(name: .long, help: "Print JSON.") var json = false

    func run() async throws {
        let path = "/v1/admin/notifications" + (app.map { "?app=\(segment($0))" } ?? "")
        let visible = try await location.adminClient().call(.GET, path, as: [LocalAPI.VisibleNotification].self)
        if json { return try printJSON(visible) }
        if visible.isEmpty { print("No notifications.") }
        visible.forEach { print(describe($0)) }
    }
}

struct RespondCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "respond",
        abstract: "Act on a notification as the person: open it, pick an action, type a reply, dismiss it, or open the app's settings.",
        discussion: "The app receives the response now if it is running, or when it next connects (and its launch command is run)."
    )

    @OptionGroup var location: LocationOptions
    @Argument(help: "The notification's identifier.") var identifier: String
    @Option(name: .long, help: "The app's bundle identifier (needed when several apps have this identifier).") var app: String?
    @Option(name: .long, help: "Pick this action.") var action: String?
    @Option(name: .long, help: "Type this reply (into --action, or the notification's only text-input action).") var text: String?
    @Flag(name: .long, help: "Swipe it away.") var dismiss = false
    @Flag(name: .long, help: "Tap it, opening the app.") var open = false
    @Flag(name: .long, help: "Open the app's own notification settings from it.") var settings = false

    func validate() throws {
        let chosen = [action != nil || text != nil, dismiss, open, settings].filter { $0 }.count
        guard chosen == 1 else {
            throw ValidationError("Say exactly one of --action (with or without --text), --text, --dismiss, --open or --settings.")
        }
    }

    func run() async throws {
        let admin = try location.adminClient()
        let visible = try await admin.call(.GET, "/v1/admin/notifications" + (app.map { "?app=\(segment($0))" } ?? ""),
                                           as: [LocalAPI.VisibleNotification].self)
            .filter { $0.notification.request.identifier == identifier }
        guard let target = visible.first else {
            throw CommandFailure("No notification \"\(identifier)\" is on screen or in the list\(app.map { " for \($0)" } ?? "").")
        }
        guard visible.count == 1 else {
            throw CommandFailure("Several apps have a notification \"\(identifier)\": say which with --app.")
        }
        let body: LocalAPI.Respond
        if dismiss {
            body = LocalAPI.Respond(kind: "dismiss")
        } else if open {
            body = LocalAPI.Respond(kind: "open")
        } else if settings {
            body = LocalAPI.Respond(kind: "settings")
        } else if let text {
            let textActions = target.actions.filter { $0.textInput != nil }
            guard let chosen = action ?? (textActions.count == 1 ? textActions[0].identifier : nil) else {
                throw CommandFailure("Say which text-input action the reply is for with --action.")
            }
            body = LocalAPI.Respond(kind: "reply", actionIdentifier: chosen, text: text)
        } else {
            body = LocalAPI.Respond(kind: "action", actionIdentifier: action)
        }
        try await admin.call(.POST, "/v1/admin/apps/\(segment(target.bundleIdentifier))/notifications/\(segment(identifier))/respond", body: body)
        // As on iOS, a dismissal reaches the app only when its category asks for it.
        let reachesApp = !dismiss || target.categoryOptions.contains(.customDismissAction)
        print("Done: \(body.kind) \(body.actionIdentifier.map { "\($0) " } ?? "")on \(identifier) of \(target.bundleIdentifier)."
            + (reachesApp ? " The app receives it now if it runs, or when it next starts."
                          : " The app hears nothing of it: its category does not ask for dismissals (customDismissAction)."))
    }
}

struct LocationCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "location",
        abstract: "Move the device: location triggers whose region it enters or leaves fire."
    )

    @OptionGroup var location: LocationOptions
    @Argument(help: "Latitude in degrees.") var latitude: Double
    @Argument(help: "Longitude in degrees.") var longitude: Double

    func run() async throws {
        try await location.adminClient().call(.POST, "/v1/admin/device", body: LocalAPI.DeviceChange(latitude: latitude, longitude: longitude))
        print("The device is at \(latitude), \(longitude) now.")
    }
}

struct DeviceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device",
        abstract: "Lock or unlock the device, or move it to another time zone."
    )

    @OptionGroup var location: LocationOptions
    @Flag(name: .long, help: "Lock the device: actions that need authentication are refused.") var lock = false
    @Flag(name: .long, help: "Unlock the device.") var unlock = false
    @Option(name: .long, help: "A time zone identifier such as Europe/Paris.") var timeZone: String?

    func run() async throws {
        guard !(lock && unlock) else { throw CommandFailure("Say --lock or --unlock, not both.") }
        let change = LocalAPI.DeviceChange(locked: lock ? true : unlock ? false : nil, timeZone: timeZone)
        guard change.locked != nil || timeZone != nil else { throw CommandFailure("Say --lock, --unlock or --time-zone.") }
        try await location.adminClient().call(.POST, "/v1/admin/device", body: change)
        var said: [String] = []
        if lock { said.append("locked") }
        if unlock { said.append("unlocked") }
        if let timeZone { said.append("in the time zone \(timeZone)") }
        print("The device is \(said.joined(separator: " and ")) now.")
    }
}

struct FocusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "focus",
        abstract: "Turn a Focus such as Do Not Disturb on or off, or show the one that is on.",
        discussion: """
            While a Focus is on, notifications arrive silenced: in the list and on the lock screen, with no
            banner and no sound. Critical notifications always break through; time-sensitive ones unless
            --no-time-sensitive (and the app's Time Sensitive setting is on); all of an app given with --allow.
            """
    )

    @OptionGroup var location: LocationOptions
    @Argument(help: "on, off, or nothing to show the Focus that is on.") var state: String?
    @Option(name: .long, help: "The Focus's name.") var name = "Do Not Disturb"
    @Flag(name: .long, inversion: .prefixedNo, help: "Whether time-sensitive notifications break through.") var timeSensitive = true
    @Option(name: .customLong("allow"), help: "An app whose notifications break through (repeatable).") var allowedApps: [String] = []
    @Flag(name: .long, help: "Print the Focus as JSON.") var json = false

    func run() async throws {
        let client = try location.adminClient()
        let shown: LocalAPI.DeviceFocus
        switch state {
        case nil:
            shown = try await client.call(.GET, "/v1/admin/focus", as: LocalAPI.DeviceFocus.self)
        case "on":
            let focus = Focus(name: name, allowsTimeSensitive: timeSensitive, allowedApps: allowedApps)
            shown = try await client.call(.PUT, "/v1/admin/focus", body: LocalAPI.DeviceFocus(focus: focus), as: LocalAPI.DeviceFocus.self)
        case "off":
            shown = try await client.call(.PUT, "/v1/admin/focus", body: LocalAPI.DeviceFocus(focus: nil), as: LocalAPI.DeviceFocus.self)
        case let other?:
            throw CommandFailure("Say on or off (or nothing, to show the Focus), not \"\(other)\".")
        }
        if json {
            try printJSON(shown)
        } else {
            print(Self.describe(shown.focus))
        }
    }

    /// The Focus in a sentence: "Do Not Disturb is on; time-sensitive notifications break through."
    static func describe(_ focus: Focus?) -> String {
        guard let focus else { return "No Focus is on." }
        var breaks = ["critical"]
        if focus.allowsTimeSensitive { breaks.append("time-sensitive") }
        let apps = focus.allowedApps.isEmpty ? "" : ", and every notification of \(focus.allowedApps.joined(separator: ", "))"
        return "\(focus.name) is on; \(breaks.joined(separator: " and ")) notifications break through\(apps)."
    }
}

struct SummaryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "summary",
        abstract: "Turn the Scheduled Summary on or off, pick its times, or show it.",
        discussion: """
            While the summary is on, the apps put in it (`unotify settings --app <app> --scheduled-summary on`)
            deliver quietly: their notifications wait, unseen, and come together at the summary's times.
            Critical notifications, and time-sensitive ones of an app whose Time Sensitive setting is on, come
            at once. Turning the summary off shows what waits for it.
            """
    )

    @OptionGroup var location: LocationOptions
    @Argument(help: "on, off, or nothing to show the summary.") var state: String?
    @Option(name: .customLong("at"), help: "A time the summary comes, HH:MM on a 24-hour clock (repeatable; 08:00 and 18:00 unless given).")
    var times: [String] = []
    @Flag(name: .long, help: "Show what waits for the next summary in the list before it comes.") var showNext = false
    @Flag(name: .long, help: "Print the summary as JSON.") var json = false

    func run() async throws {
        let client = try location.adminClient()
        let shown: LocalAPI.DeviceSummary
        switch state {
        case nil:
            shown = try await client.call(.GET, "/v1/admin/summary", as: LocalAPI.DeviceSummary.self)
        case "on":
            let times = try self.times.map { text in
                guard let time = ScheduledSummary.Time(text) else { throw CommandFailure("\"\(text)\" is not a time such as 08:00 or 18:30.") }
                return time
            }
            let summary = ScheduledSummary(times: times.isEmpty ? ScheduledSummary.defaultTimes : times, showsNextSummary: showNext)
            shown = try await client.call(.PUT, "/v1/admin/summary", body: LocalAPI.DeviceSummary(summary: summary), as: LocalAPI.DeviceSummary.self)
        case "off":
            shown = try await client.call(.PUT, "/v1/admin/summary", body: LocalAPI.DeviceSummary(summary: nil), as: LocalAPI.DeviceSummary.self)
        case let other?:
            throw CommandFailure("Say on or off (or nothing, to show the summary), not \"\(other)\".")
        }
        if json {
            try printJSON(shown)
        } else {
            print(Self.describe(shown.summary))
        }
    }

    /// The summary in a sentence: "The Scheduled Summary comes at 08:00 and 18:00."
    static func describe(_ summary: ScheduledSummary?) -> String {
        guard let summary else { return "The Scheduled Summary is off." }
        let times = summary.times.map(\.description)
        let list = times.count == 1 ? times[0] : times.dropLast().joined(separator: ", ") + " and " + times.last!
        return "The Scheduled Summary comes at \(list)" + (summary.showsNextSummary ? "; what waits for the next one is shown in the list." : ".")
    }
}
