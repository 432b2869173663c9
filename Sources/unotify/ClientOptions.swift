import ArgumentParser
import Foundation
import NotificationCore
import NotificationDaemon
import NIOHTTP1
import NotificationDaemonClient

/// Where the daemon is: its data directory and socket.
struct LocationOptions: ParsableArguments {
    @Option(name: .long, help: "The daemon's data directory (database, keys).")
    var dataDir: String?

    @Option(name: .long, help: "The daemon's Unix socket.")
    var socket: String?

    /// The daemon's configuration, from these options and the environment.
    var configuration: DaemonConfiguration {
        var environment = ProcessInfo.processInfo.environment
        if let dataDir { environment["UNOTIFY_DATA_DIR"] = dataDir }
        if let socket { environment["UNOTIFY_SOCKET"] = socket }
        return DaemonConfiguration.fromEnvironment(environment)
    }

    /// A client of the daemon authenticated as its administrator.
    func adminClient() throws -> LocalAPIClient {
        let configuration = configuration
        guard let key = try? String(contentsOfFile: configuration.adminKeyPath, encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines), !key.isEmpty else {
            throw CommandFailure("No administrator key at \(configuration.adminKeyPath). Start the daemon (`unotify daemon`) with the same data directory first.")
        }
        return LocalAPIClient(socketPath: configuration.socketPath, key: key)
    }
}

/// Prints `value` as indented JSON.
func printJSON(_ value: some Encodable) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    encoder.dateEncodingStrategy = .iso8601
    print(String(decoding: try encoder.encode(value), as: UTF8.self))
}

/// Percent-encodes one path segment (a bundle or request identifier).
func segment(_ value: String) -> String {
    value.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/"))) ?? value
}

/// A one-line description of a notification as the person sees it.
func describe(_ shown: LocalAPI.VisibleNotification, as name: String? = nil) -> String {
    let content = shown.notification.request.content
    var text = "[\(name ?? shown.bundleIdentifier)] \(shown.notification.request.identifier)"
    let how = shown.presentation.parts
    if let summary = shown.summary, summary.held {
        text += " (waits for the Scheduled Summary at \(summary.date.formatted(date: .omitted, time: .shortened)); quiet)"
    } else {
        text += " (\(how.isEmpty ? "not shown" : how.joined(separator: ", ")); \(shown.presentation.isQuiet ? "quiet" : "alerting")"
        text += shown.summary == nil ? ")" : "; in the Scheduled Summary)"
    }
    let words = [content.title, content.subtitle, content.body].filter { !$0.isEmpty }
    if !words.isEmpty { text += "\n    " + words.joined(separator: " — ") }
    if !content.attachments.isEmpty {
        text += "\n    attachments: " + content.attachments.map { "\($0.identifier) (\($0.type), \($0.url.path))" }.joined(separator: ", ")
    }
    if !shown.actions.isEmpty {
        text += "\n    actions: " + shown.actions.map { action in
            action.textInput == nil ? "\(action.identifier) (\(action.title))" : "\(action.identifier) (\(action.title), typed reply)"
        }.joined(separator: ", ")
    }
    return text
}

extension SettingValue: ExpressibleByArgument {
    public init?(argument: String) {
        switch argument {
        case "on", "enabled": self = .enabled
        case "off", "disabled": self = .disabled
        default: return nil
        }
    }

    /// What the help lists and the shell completes: the words the person types, not the raw values.
    public static var allValueStrings: [String] { ["on", "off"] }
}

extension APNs.Environment: ExpressibleByArgument {}

/// `path` as the daemon needs it: absolute, a relative one taken from the current folder.
func absolutePath(_ path: String) -> String {
    path.hasPrefix("/") ? path : URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(path).standardizedFileURL.path
}
