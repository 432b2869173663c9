import ArgumentParser
import Foundation
import NotificationCore
import NotificationEngine
import PrivateFiles
import NIOHTTP1
import NotificationDaemon
import NotificationDaemonClient

struct AppsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apps",
        abstract: "Register, list and remove apps.",
        subcommands: [Add.self, Identity.self, List.self, Remove.self, Reset.self, Key.self, Token.self, Subscribe.self, Strings.self, Extension.self, ContentExtension.self,
                      BackgroundPushes.self]
    )

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Register an app and issue its key.",
            discussion: "Prints the key and writes it to apps/<bundle identifier>.key in the data directory, readable only by you. An app authenticates every call with it."
        )

        @OptionGroup var location: LocationOptions
        @Argument(help: "The app's bundle identifier, such as com.example.todo.") var bundleIdentifier: String
        @Option(name: .long, help: "A shell command that starts the app, run when a response waits for it.") var launchCommand: String?
        @Option(name: .long, help: "Background pushes per hour that may wake the app when it is not in the foreground, or 'unlimited' (3 unless given; see `unotify apps background-pushes`).")
        var backgroundPushesPerHour: BackgroundPushLimit?
        @Option(name: .long, help: "The name shown beside its notifications (its .desktop entry's Name, or else its bundle identifier, unless given).")
        var name: String?
        @Option(name: .long, help: "Its icon: a PNG, SVG or JPEG file (its .desktop entry's Icon unless given).")
        var icon: String?
        @Option(name: .long, help: "The folder of its sound files: a notification's named sound is the file of that name there.")
        var sounds: String?

        func run() async throws {
            // Checked first: an app is registered whole or not at all.
            let identity = AppIdentity(name: name, icon: icon.map(absolutePath), sounds: sounds.map(absolutePath))
            if let violation = identity.violation ?? identity.fileViolation { throw CommandFailure(violation) }
            let admin = try location.adminClient()
            let issued = try await admin.call(.POST, "/v1/admin/apps",
                                              body: LocalAPI.RegisterApp(bundleIdentifier: bundleIdentifier, launchCommand: launchCommand),
                                              as: LocalAPI.AppKey.self)
            let path = location.configuration.appKeyPath(for: bundleIdentifier)
            try writeKey(issued.key, to: path)
            if let backgroundPushesPerHour {
                _ = try await admin.call(.PUT, "/v1/admin/apps/\(segment(bundleIdentifier))/background-pushes",
                                     body: LocalAPI.BackgroundPushBudget(perHour: backgroundPushesPerHour.perHour), as: LocalAPI.BackgroundPushBudget.self)
            }
            if !identity.isEmpty {
                try await admin.call(.PUT, "/v1/admin/apps/\(segment(bundleIdentifier))/identity", body: identity)
            }
            print(issued.key)
            FileHandle.standardError.write(Data("Registered \(bundleIdentifier); its key is in \(path).\n".utf8))
        }
    }

    struct Identity: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set the name, icon and sounds folder an app is shown with.",
            discussion: "The three are set together: what is not given is not registered, and comes from the app's freedesktop .desktop entry (<bundle identifier>.desktop in the applications folders) when the machine has one, else the bundle identifier stands for the name. Give none to go back to that."
        )
        @OptionGroup var location: LocationOptions
        @Argument(help: "The app's bundle identifier.") var bundleIdentifier: String
        @Option(name: .long, help: "The name shown beside its notifications.") var name: String?
        @Option(name: .long, help: "Its icon: a PNG, SVG or JPEG file.") var icon: String?
        @Option(name: .long, help: "The folder of its sound files: a notification's named sound is the file of that name there.") var sounds: String?

        func run() async throws {
            try await location.adminClient().call(.PUT, "/v1/admin/apps/\(segment(bundleIdentifier))/identity",
                                                  body: AppIdentity(name: name, icon: icon.map(absolutePath), sounds: sounds.map(absolutePath)))
            var said: [String] = []
            if let name { said.append("named \"\(name)\"") }
            if let icon { said.append("with the icon \(absolutePath(icon))") }
            if let sounds { said.append("with its sounds in \(absolutePath(sounds))") }
            print(said.isEmpty ? "\(bundleIdentifier) is shown as its .desktop entry or its bundle identifier says now."
                               : "\(bundleIdentifier) is shown \(said.joined(separator: " and ")) now.")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the registered apps.")
        @OptionGroup var location: LocationOptions
        @Flag(name: .long, help: "Print JSON.") var json = false

        func run() async throws {
            let apps = try await location.adminClient().call(.GET, "/v1/admin/apps", as: [LocalAPI.AppSummary].self)
            if json { return try printJSON(apps) }
            for app in apps {
                let state = app.state.map { $0 == AppState.notRunning.rawValue ? "" : "  (\($0))" } ?? ""
                print(app.bundleIdentifier + state + (app.launchCommand.map { "  (launch: \($0))" } ?? "")
                      + (app.quarantined.map { "  (quarantined: \($0))" } ?? ""))
            }
        }
    }

    struct Reset: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Start a quarantined app afresh, its stored state set aside.",
            discussion: """
                An app whose stored state cannot be read is quarantined: every other app goes on, and `unotify apps list` \
                says why. Resetting it copies its state into the database's set_aside table, for inspection, and starts its \
                notifications, settings and categories anew, as if it were installed again; its key, strings and extensions stay.
                """
        )
        @OptionGroup var location: LocationOptions
        @Argument var bundleIdentifier: String

        func run() async throws {
            let reset = try await location.adminClient().call(.POST, "/v1/admin/apps/\(segment(bundleIdentifier))/reset", as: LocalAPI.AppReset.self)
            print("Reset \(bundleIdentifier): \(reset.setAside) stored parts set aside. To see them:")
            print("  sqlite3 \(location.configuration.databasePath) \"SELECT part, identifier, bytes FROM set_aside WHERE app = '\(bundleIdentifier)'\"")
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove an app and all its notifications.")
        @OptionGroup var location: LocationOptions
        @Argument var bundleIdentifier: String

        func run() async throws {
            try await location.adminClient().call(.DELETE, "/v1/admin/apps/\(segment(bundleIdentifier))")
            try? FileManager.default.removeItem(atPath: location.configuration.appKeyPath(for: bundleIdentifier))
            print("Removed \(bundleIdentifier) and all its notifications.")
        }
    }

    struct Key: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Issue a new key for an app; the old one stops working.")
        @OptionGroup var location: LocationOptions
        @Argument var bundleIdentifier: String

        func run() async throws {
            let issued = try await location.adminClient().call(.POST, "/v1/admin/apps/\(segment(bundleIdentifier))/key", as: LocalAPI.AppKey.self)
            try writeKey(issued.key, to: location.configuration.appKeyPath(for: bundleIdentifier))
            print(issued.key)
        }
    }
}

extension AppsCommand {
    struct Token: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print an app's device token, from the push gateway the daemon is linked to.",
            discussion: "What `registerForRemoteNotifications()` gives an app: providers push to it with POST /3/device/<token> on the gateway (`unotify serve` runs one, linked to its daemon)."
        )
        @OptionGroup var location: LocationOptions
        @Argument var bundleIdentifier: String
        @Option(name: .long, help: "sandbox or production.") var environment: APNs.Environment = .sandbox
        @Flag(name: .long, help: "Give the app a new token, as when an iPhone is restored: the old one answers 410 Unregistered, and the running app's delegate hears the new one in didRegisterForRemoteNotificationsWithDeviceToken.")
        var renew = false

        func run() async throws {
            let path = "/v1/admin/apps/\(segment(bundleIdentifier))/remote-notifications" + (renew ? "/renewal" : "")
            let token = try await location.adminClient().call(
                .POST, path, body: LocalAPI.RemoteNotificationRegistration(environment: environment), as: LocalAPI.DeviceToken.self)
            print(token.token)
        }
    }
}

extension AppsCommand {
    struct Subscribe: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Subscribe an app to a broadcast channel of its own, at the push gateway the daemon is linked to.",
            discussion: "A provider creates the channel with POST /1/apps/<bundle>/channels on the gateway (the apns-channel-id header of its answer) and sends to every subscribed device with POST /4/broadcasts/apps/<bundle>; see Docs/broadcast-channels.md."
        )
        @OptionGroup var location: LocationOptions
        @Argument var bundleIdentifier: String
        @Argument(help: "The channel's identifier (its apns-channel-id).") var channel: String
        @Option(name: .long, help: "sandbox or production.") var environment: APNs.Environment = .sandbox
        @Flag(name: .long, help: "End the subscription instead.") var unsubscribe = false

        func run() async throws {
            let path = "/v1/admin/apps/\(segment(bundleIdentifier))/channels/\(segment(channel))?environment=\(environment.rawValue)"
            try await location.adminClient().call(unsubscribe ? .DELETE : .PUT, path)
            print(unsubscribe ? "\(bundleIdentifier) unsubscribed from \(channel)" : "\(bundleIdentifier) subscribed to \(channel)")
        }
    }
}

extension AppsCommand {
    struct Strings: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Give an app its strings, for its pushes' loc-key, title-loc-key and subtitle-loc-key.",
            discussion: "As iOS looks a push's localization keys up in the app's Localizable.strings. The file is an Apple .strings file (\"key\" = \"text\";) or a JSON object of keys and texts; %@ and %1$@ in a text take the push's loc-args. A key the app does not have is shown as it is, as on iOS."
        )
        @OptionGroup var location: LocationOptions
        @Argument var bundleIdentifier: String
        @Argument(help: "The .strings or .json file; omit it with --clear.") var file: String?
        @Flag(name: .long, help: "Remove the app's strings.") var clear = false

        func run() async throws {
            let table: [String: String]
            if clear {
                table = [:]
            } else {
                guard let file, let data = FileManager.default.contents(atPath: file) else {
                    throw CommandFailure("Give the .strings or .json file to read (or --clear).")
                }
                guard let parsed = (try? JSONSerialization.jsonObject(with: data)) as? [String: String]
                    ?? (try? PropertyListSerialization.propertyList(from: data, format: nil)) as? [String: String] else {
                    throw CommandFailure("\(file) is neither a .strings file nor a JSON object of strings.")
                }
                table = parsed
            }
            try await location.adminClient().call(.PUT, "/v1/admin/apps/\(segment(bundleIdentifier))/strings", body: table)
            print(table.isEmpty ? "\(bundleIdentifier) has no strings now." : "\(bundleIdentifier) has \(table.count) strings.")
        }
    }
}

extension AppsCommand {
    struct Extension: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Give an app its notification service extension, which prepares its pushes marked mutable-content.",
            discussion: "The daemon starts the executable for each such push, hands it the push's request, and shows what it hands back (or the original when it fails or its time runs out). Build it from a UNNotificationServiceExtension subclass; see Docs/service-extensions.md."
        )
        @OptionGroup var location: LocationOptions
        @Argument var bundleIdentifier: String
        @Argument(help: "The extension's executable; omit it with --remove.") var executable: String?
        @Option(help: "Seconds the extension has for each push (1 to 300).") var timeLimit: Double = 30
        @Flag(name: .long, help: "Remove the app's service extension.") var remove = false

        func run() async throws {
            let path = "/v1/admin/apps/\(segment(bundleIdentifier))/service-extension"
            if remove {
                try await location.adminClient().call(.DELETE, path)
                print("\(bundleIdentifier) has no service extension now.")
                return
            }
            guard let executable else { throw CommandFailure("Give the extension's executable (or --remove).") }
            let absolute = URL(fileURLWithPath: executable).standardizedFileURL.path
            try await location.adminClient().call(.PUT, path, body: LocalAPI.ServiceExtension(executable: absolute, timeLimit: timeLimit))
            print("\(bundleIdentifier)'s pushes marked mutable-content now go through \(absolute) (\(timeLimit.formatted()) s each).")
        }
    }
}

extension AppsCommand {
    struct ContentExtension: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "content-extension",
            abstract: "Give an app its notification content extension: the custom interface of its categories' expanded notifications.",
            discussion: "The extension's Info.plist names the categories it draws and how (UNNotificationExtensionCategory, …InitialContentSizeRatio, …DefaultContentHidden, …OverridesDefaultTitle, …UserInteractionEnabled). The web notification center starts the executable when the person expands such a notification. Build it from a UNNotificationContentExtension; see Docs/content-extensions.md."
        )
        @OptionGroup var location: LocationOptions
        @Argument var bundleIdentifier: String
        @Argument(help: "The extension's executable; omit it with --remove.") var executable: String?
        @Option(help: "The extension's Info.plist, with its NSExtensionAttributes.") var infoPlist: String?
        @Flag(name: .long, help: "Remove the app's content extension.") var remove = false

        func run() async throws {
            let path = "/v1/admin/apps/\(segment(bundleIdentifier))/content-extension"
            if remove {
                try await location.adminClient().call(.DELETE, path)
                print("\(bundleIdentifier) has no content extension now.")
                return
            }
            guard let executable else { throw CommandFailure("Give the extension's executable (or --remove).") }
            guard let infoPlist else { throw CommandFailure("Give the extension's Info.plist with --info-plist: it names the categories the extension draws.") }
            guard let data = FileManager.default.contents(atPath: infoPlist) else { throw CommandFailure("Cannot read \(infoPlist).") }
            let attributes: ContentExtensionAttributes
            do {
                attributes = try ContentExtensionAttributes(infoPlist: data)
            } catch {
                throw CommandFailure("\(infoPlist): \(error)")
            }
            let absolute = URL(fileURLWithPath: executable).standardizedFileURL.path
            try await location.adminClient().call(.PUT, path, body: LocalAPI.ContentExtension(executable: absolute, attributes: attributes))
            let categories = attributes.categories.map { "\"\($0)\"" }.joined(separator: ", ")
            print("\(bundleIdentifier)'s notifications of \(categories) now expand to \(absolute).")
        }
    }
}

extension AppsCommand {
    struct BackgroundPushes: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "background-pushes",
            abstract: "Set how many background pushes per hour may wake an app that is not in the foreground.",
            discussion: "Background pushes (content-available, priority 5) are throttled as iOS throttles them: 3 an hour unless set here, refilling evenly. 'unlimited' lifts the limit, as when Xcode runs an app, for testing a provider's background pushes. The new budget starts full: a push held for the app goes to it at once. An app in the foreground, and VoIP pushes, are never throttled."
        )
        @OptionGroup var location: LocationOptions
        @Argument var bundleIdentifier: String
        @Argument(help: "Pushes per hour (1 to 1000000), or 'unlimited'.") var limit: BackgroundPushLimit

        func run() async throws {
            let budget = try await location.adminClient().call(
                .PUT, "/v1/admin/apps/\(segment(bundleIdentifier))/background-pushes",
                body: LocalAPI.BackgroundPushBudget(perHour: limit.perHour), as: LocalAPI.BackgroundPushBudget.self
            )
            print("\(bundleIdentifier) may be woken by \(budget.perHour.map { "\($0) background pushes an hour" } ?? "every background push").")
        }
    }
}

/// A background push budget as typed: a number of pushes per hour, or `unlimited`.
struct BackgroundPushLimit: ExpressibleByArgument {
    var perHour: Int?

    init?(argument: String) {
        if argument == "unlimited" {
            perHour = nil
        } else if let number = Int(argument), DaemonEngine.backgroundPushesPerHourRange.contains(number) {
            perHour = number
        } else {
            return nil
        }
    }
}

/// Writes a key to a file only its owner can read.
private func writeKey(_ key: String, to path: String) throws {
    try PrivateFiles.createDirectory(URL(fileURLWithPath: path).deletingLastPathComponent())
    try? FileManager.default.removeItem(atPath: path)
    guard PrivateFiles.createFile(atPath: path, contents: Data((key + "\n").utf8)) else {
        throw CommandFailure("Could not write the key to \(path).")
    }
}

struct AuthorizeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "authorize",
        abstract: "Decide an app's authorization, as the person would (like `simctl privacy`).",
        discussion: "grant or deny answers the app's authorization prompt if one is showing; otherwise it sets the authorization. provisional grants quiet delivery; reset makes the app ask again."
    )

    @OptionGroup var location: LocationOptions
    @Option(name: .long, help: "The app's bundle identifier.") var app: String
    @Argument(help: "grant, deny, provisional or reset.") var decision: String
    @Flag(name: .long, help: "Print JSON.") var json = false

    func run() async throws {
        let settings = try await location.adminClient().call(.POST, "/v1/admin/apps/\(segment(app))/authorization",
                                                             body: LocalAPI.AuthorizationDecision(decision: decision), as: NotificationSettings.self)
        if json { try printJSON(settings) } else { print("\(app): \(settings.authorizationStatus)") }
    }
}

struct SettingsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "settings",
        abstract: "Show or change an app's notification settings, as the person does in the system's settings."
    )

    @OptionGroup var location: LocationOptions
    @Option(name: .long, help: "The app's bundle identifier.") var app: String
    @Option(name: .long, help: "on or off.") var alerts: SettingValue?
    @Option(name: .long, help: "on or off.") var sounds: SettingValue?
    @Option(name: .long, help: "on or off.") var badges: SettingValue?
    @Option(name: .long, help: "on or off.") var lockScreen: SettingValue?
    @Option(name: .long, help: "on or off.") var notificationCenter: SettingValue?
    @Option(name: .long, help: "on or off.") var carPlay: SettingValue?
    @Option(name: .long, help: "on or off.") var criticalAlerts: SettingValue?
    @Option(name: .long, help: "on or off.") var timeSensitive: SettingValue?
    @Option(name: .long, help: "on or off.") var scheduledSummary: SettingValue?
    @Option(name: .long, help: "on or off.") var announcements: SettingValue?
    @Option(name: .long, help: "none, banner or alert.") var alertStyle: String?
    @Option(name: .long, help: "always, when-unlocked or never.") var previews: String?
    @Flag(name: .long, help: "Print JSON.") var json = false

    func run() async throws {
        var change = LocalAPI.SettingsChange()
        change.alertSetting = alerts
        change.soundSetting = sounds
        change.badgeSetting = badges
        change.lockScreenSetting = lockScreen
        change.notificationCenterSetting = notificationCenter
        change.carPlaySetting = carPlay
        change.criticalAlertSetting = criticalAlerts
        change.timeSensitiveSetting = timeSensitive
        change.scheduledDeliverySetting = scheduledSummary
        change.announcementSetting = announcements
        if let alertStyle {
            guard let style = ["none": AlertStyle.none, "banner": .banner, "alert": .alert][alertStyle] else {
                throw CommandFailure("--alert-style must be none, banner or alert.")
            }
            change.alertStyle = style
        }
        if let previews {
            guard let value = ["always": ShowPreviews.always, "when-unlocked": .whenAuthenticated, "never": .never][previews] else {
                throw CommandFailure("--previews must be always, when-unlocked or never.")
            }
            change.showPreviewsSetting = value
        }
        let admin = try location.adminClient()
        let path = "/v1/admin/apps/\(segment(app))/settings"
        let settings = change == LocalAPI.SettingsChange()
            ? try await admin.call(.GET, path, as: NotificationSettings.self)
            : try await admin.call(.PATCH, path, body: change, as: NotificationSettings.self)
        if json { return try printJSON(settings) }
        print("""
            authorization: \(settings.authorizationStatus)
            alerts: \(settings.alertSetting) (style \(settings.alertStyle)), sounds: \(settings.soundSetting), badges: \(settings.badgeSetting)
            lock screen: \(settings.lockScreenSetting), notification center: \(settings.notificationCenterSetting), CarPlay: \(settings.carPlaySetting)
            critical alerts: \(settings.criticalAlertSetting), time sensitive: \(settings.timeSensitiveSetting), previews: \(settings.showPreviewsSetting)
            scheduled summary: \(settings.scheduledDeliverySetting), in-app settings button: \(settings.providesAppNotificationSettings)
            """)
    }
}
