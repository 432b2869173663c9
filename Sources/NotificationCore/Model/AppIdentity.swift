package import Foundation

/// How the person knows an app: its display name and its icon, as iOS shows them beside every
/// notification. Registered with the app (`unotify apps add --name --icon`); what is not registered
/// comes from the app's freedesktop `.desktop` entry when the machine has one (``DesktopEntry``), else
/// the bundle identifier stands for the name.
package struct AppIdentity: Codable, Sendable, Hashable {
    /// The name shown, such as "Todo".
    package var name: String?
    /// An image file (PNG, SVG or JPEG), by its absolute path.
    package var icon: String?
    /// The folder of the app's sound files, by its absolute path: a notification's named sound
    /// (`UNNotificationSound(named:)`) is the file of that name there, as iOS finds it in the app's
    /// bundle or `Library/Sounds`.
    package var sounds: String?

    package init(name: String? = nil, icon: String? = nil, sounds: String? = nil) {
        self.name = name
        self.icon = icon
        self.sounds = sounds
    }

    /// Whether it says nothing (no name, icon or sounds): the app is shown as if none were registered.
    package var isEmpty: Bool { name == nil && icon == nil && sounds == nil }

    /// The longest name, in characters.
    package static let maximumNameLength = 64
    /// The largest icon file the surfaces read.
    package static let maximumIconBytes = 1 << 20
    /// The icon files' kinds, by extension, with their media types.
    package static let iconTypes = ["png": "image/png", "svg": "image/svg+xml", "jpg": "image/jpeg", "jpeg": "image/jpeg"]

    /// What is wrong with this identity, if anything: a name that is empty, too long or has control
    /// characters; an icon that is not an absolute path to a PNG, SVG or JPEG file of at most 1 MiB.
    package var violation: String? {
        if let name {
            if name.trimmingCharacters(in: .whitespaces).isEmpty { return "An app's name cannot be empty." }
            if name.count > Self.maximumNameLength { return "An app's name is at most \(Self.maximumNameLength) characters; got \(name.count)." }
            if name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
                return "An app's name cannot hold control characters."
            }
        }
        if let icon {
            guard icon.hasPrefix("/") else { return "An app's icon is an absolute path; got \"\(icon)\"." }
            guard Self.iconTypes[(icon as NSString).pathExtension.lowercased()] != nil else {
                return "An app's icon is a PNG, SVG or JPEG file (.png, .svg, .jpg); got \"\(icon)\"."
            }
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: icon, isDirectory: &isDirectory), !isDirectory.boolValue else {
                return "No icon file at \(icon)."
            }
            let size = (try? FileManager.default.attributesOfItem(atPath: icon)[.size] as? Int) ?? 0
            if size > Self.maximumIconBytes { return "An app's icon is at most 1 MiB; \(icon) is \(size) bytes." }
        }
        if let sounds {
            guard sounds.hasPrefix("/") else { return "An app's sounds folder is an absolute path; got \"\(sounds)\"." }
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: sounds, isDirectory: &isDirectory), isDirectory.boolValue else {
                return "No folder at \(sounds)."
            }
        }
        return nil
    }
}

/// An app's identity as surfaces show it: the registered one, completed from the app's `.desktop`
/// entry, else its bundle identifier.
package struct ShownAppIdentity: Codable, Sendable, Hashable {
    /// The name to show.
    package var name: String
    /// The icon's file, when there is one a surface can read.
    package var iconFile: String?
    /// The icon's name in the desktop's icon theme (a `.desktop` entry's `Icon=`), for the desktop's
    /// notification server to look up, when it is not a file.
    package var iconName: String?
    /// The `.desktop` entry's id (its file name without `.desktop`), when the app has one.
    package var desktopEntry: String?
    /// The folder of the app's sound files, when it registered one.
    package var sounds: String?

    package init(name: String, iconFile: String? = nil, iconName: String? = nil, desktopEntry: String? = nil, sounds: String? = nil) {
        self.name = name
        self.iconFile = iconFile
        self.iconName = iconName
        self.desktopEntry = desktopEntry
        self.sounds = sounds
    }

    /// The file of the sound named `name` (a file name, as `UNNotificationSound(named:)` takes it), if
    /// the app's sounds folder has it; an absolute path is its own file.
    package func soundFile(named name: String) -> String? {
        if name.hasPrefix("/") { return FileManager.default.isReadableFile(atPath: name) ? name : nil }
        guard let sounds, !name.contains("/"), !name.isEmpty, name != ".", name != ".." else { return nil }
        let path = (sounds as NSString).appendingPathComponent(name)
        return FileManager.default.isReadableFile(atPath: path) ? path : nil
    }

    /// `bundleIdentifier`'s identity: what was registered, then the entry's, then the bundle identifier.
    package static func of(_ bundleIdentifier: String, registered: AppIdentity?, entry: DesktopEntry?) -> ShownAppIdentity {
        var shown = ShownAppIdentity(name: registered?.name ?? entry?.name ?? bundleIdentifier, desktopEntry: entry?.id, sounds: registered?.sounds)
        if let icon = registered?.icon {
            shown.iconFile = icon
        } else if let icon = entry?.icon {
            if icon.hasPrefix("/") { shown.iconFile = icon } else { shown.iconName = icon; shown.iconFile = entry?.iconFile }
        }
        return shown
    }
}

/// A freedesktop.org desktop entry (`<id>.desktop`), as far as an app's identity goes: its `Name` and
/// `Icon`, found where the specification says entries are (`$XDG_DATA_HOME/applications`, then each of
/// `$XDG_DATA_DIRS`), and the icon's file in the `hicolor` theme or `pixmaps` when `Icon` is a name.
package struct DesktopEntry: Sendable, Hashable {
    package var id: String
    package var name: String?
    package var icon: String?
    /// The file the icon's name stands for, when one was found.
    package var iconFile: String?

    /// The entry whose id is `id` (an app's bundle identifier, as reverse-DNS desktop ids are), if the
    /// machine has one; `nil` for one that is hidden (`NoDisplay`/`Hidden`) or not an application.
    package static func find(_ id: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> DesktopEntry? {
        guard !id.contains("/"), !id.isEmpty else { return nil }
        for folder in dataFolders(environment) {
            let path = (folder as NSString).appendingPathComponent("applications/\(id).desktop")
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { continue }
            return parse(text, id: id, environment: environment)
        }
        return nil
    }

    /// The entry `text` holds (its `[Desktop Entry]` group), or nil when it is not a shown application.
    package static func parse(_ text: String, id: String, environment: [String: String] = [:]) -> DesktopEntry? {
        var inEntry = false
        var values: [String: String] = [:]
        for raw in text.split(whereSeparator: \.isNewline) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("[") {
                inEntry = line == "[Desktop Entry]"
                continue
            }
            guard inEntry, !line.hasPrefix("#"), let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces)
            // Only the unlocalized keys: `Name[fr]=` is another key.
            guard !key.contains("[") else { continue }
            values[key] = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
        }
        guard values["Type"] == nil || values["Type"] == "Application", values["Hidden"] != "true", values["NoDisplay"] != "true" else { return nil }
        var entry = DesktopEntry(id: id, name: values["Name"].flatMap { $0.isEmpty ? nil : $0 }, icon: values["Icon"].flatMap { $0.isEmpty ? nil : $0 })
        if let icon = entry.icon, !icon.hasPrefix("/") { entry.iconFile = iconFile(named: icon, environment: environment) }
        return entry
    }

    /// The file of the icon named `name` in the `hicolor` theme (the largest bitmap, or its SVG) or
    /// in `pixmaps`.
    package static func iconFile(named name: String, environment: [String: String]) -> String? {
        guard !name.contains("/") else { return nil }
        let sizes = ["scalable", "512x512", "256x256", "128x128", "96x96", "64x64", "48x48", "32x32"]
        for folder in dataFolders(environment) {
            for size in sizes {
                for ext in ["svg", "png"] {
                    let path = (folder as NSString).appendingPathComponent("icons/hicolor/\(size)/apps/\(name).\(ext)")
                    if FileManager.default.isReadableFile(atPath: path) { return path }
                }
            }
        }
        for ext in ["png", "svg"] where FileManager.default.isReadableFile(atPath: "/usr/share/pixmaps/\(name).\(ext)") {
            return "/usr/share/pixmaps/\(name).\(ext)"
        }
        return nil
    }

    /// `$XDG_DATA_HOME` (default `~/.local/share`), then each of `$XDG_DATA_DIRS` (default
    /// `/usr/local/share:/usr/share`).
    static func dataFolders(_ environment: [String: String]) -> [String] {
        let home = environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? environment["HOME"].map { "\($0)/.local/share" }
        let shared = (environment["XDG_DATA_DIRS"].flatMap { $0.isEmpty ? nil : $0 } ?? "/usr/local/share:/usr/share")
            .split(separator: ":").map(String.init)
        return (home.map { [$0] } ?? []) + shared
    }
}
