import Foundation

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

    /// What is wrong with this identity on its face, if anything: a name that is empty, too long or has
    /// control characters; an icon that is not an absolute path to a PNG, SVG or JPEG file; a sounds
    /// folder that is not an absolute path. (Whether the files are there is the engine's to check.)
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
        }
        if let sounds, !sounds.hasPrefix("/") { return "An app's sounds folder is an absolute path; got \"\(sounds)\"." }
        return nil
    }
}
