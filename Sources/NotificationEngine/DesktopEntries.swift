import Foundation
package import NotificationCore

/// The machine's desktop entries and icons, found where the freedesktop.org specifications say they
/// are: entries in `applications/` and icons in `icons/hicolor/` of `$XDG_DATA_HOME` (by default
/// `~/.local/share`), then of each of `$XDG_DATA_DIRS` (by default `/usr/local/share:/usr/share`);
/// icons in `/usr/share/pixmaps` last.
package enum DesktopEntries {
    /// The entry whose id is `id` (an app's bundle identifier, as reverse-DNS desktop ids are), if the
    /// machine has one; `nil` for one that is hidden (`NoDisplay`/`Hidden`) or not an application.
    package static func find(_ id: String, environment: [String: String]) -> DesktopEntry? {
        guard !id.contains("/"), !id.isEmpty else { return nil }
        for folder in dataFolders(environment) {
            let path = (folder as NSString).appendingPathComponent("applications/\(id).desktop")
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { continue }
            return DesktopEntry.parse(text, id: id) { iconFile(named: $0, environment: environment) }
        }
        return nil
    }

    /// The file of the icon named `name` in the `hicolor` theme (its SVG, or its largest bitmap) or
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

    static func dataFolders(_ environment: [String: String]) -> [String] {
        let home = environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? environment["HOME"].map { "\($0)/.local/share" }
        let shared = (environment["XDG_DATA_DIRS"].flatMap { $0.isEmpty ? nil : $0 } ?? "/usr/local/share:/usr/share")
            .split(separator: ":").map(String.init)
        return (home.map { [$0] } ?? []) + shared
    }
}

extension AppIdentity {
    /// What is wrong with this identity's files, if anything: an icon that is not there or is over
    /// 1 MiB, a sounds folder that is not a folder.
    package var fileViolation: String? {
        if let icon {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: icon, isDirectory: &isDirectory), !isDirectory.boolValue else {
                return "No icon file at \(icon)."
            }
            let size = (try? FileManager.default.attributesOfItem(atPath: icon)[.size] as? Int) ?? 0
            if size > Self.maximumIconBytes { return "An app's icon is at most 1 MiB; \(icon) is \(size) bytes." }
        }
        if let sounds {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: sounds, isDirectory: &isDirectory), isDirectory.boolValue else {
                return "No folder at \(sounds)."
            }
        }
        return nil
    }
}

extension ShownAppIdentity {
    /// The file of the sound named `name`, when it is there (see ``soundPath(named:)``).
    package func soundFile(named name: String) -> String? {
        soundPath(named: name).flatMap { FileManager.default.isReadableFile(atPath: $0) ? $0 : nil }
    }
}

/// Apps' shown identities as last found, each for ``lifetime``. A change of any app's identity
/// forgets it and makes finds begun before it not kept (they may have read the identity before).
struct ShownIdentities: Sendable {
    static let lifetime: Duration = .seconds(30)
    /// Kept at most; beyond, all are forgotten (they are found again when asked for).
    static let capacity = 1024

    private var entries: [String: (identity: ShownAppIdentity, until: ContinuousClock.Instant)] = [:]
    private(set) var generation: UInt64 = 0

    func known(_ app: String, at now: ContinuousClock.Instant) -> ShownAppIdentity? {
        entries[app].flatMap { now < $0.until ? $0.identity : nil }
    }

    mutating func keep(_ identity: ShownAppIdentity, of app: String, at now: ContinuousClock.Instant, foundIn generation: UInt64) {
        guard generation == self.generation else { return }
        if entries.count >= Self.capacity { entries.removeAll() }
        entries[app] = (identity, now + Self.lifetime)
    }

    mutating func forget(_ app: String) {
        generation &+= 1
        entries.removeValue(forKey: app)
    }
}
