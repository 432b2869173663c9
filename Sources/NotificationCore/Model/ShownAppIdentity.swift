import Foundation

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

    /// Where the sound named `name` (a file name, as `UNNotificationSound(named:)` takes it) is: in the
    /// app's sounds folder; an absolute path is its own. `nil` for a name that would leave the folder,
    /// or when the app has no sounds folder. Whether the file is there is the caller's to see.
    package func soundPath(named name: String) -> String? {
        if name.hasPrefix("/") { return name }
        guard let sounds, !name.contains("/"), !name.isEmpty, name != ".", name != ".." else { return nil }
        return (sounds as NSString).appendingPathComponent(name)
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
