import Foundation

/// A freedesktop.org desktop entry (`<id>.desktop`), as far as an app's identity goes: its `Name` and
/// `Icon`, and the icon's file when `Icon` is a name in the desktop's icon theme. (The engine finds
/// the entries where the specification says they are: ``DesktopEntries``.)
package struct DesktopEntry: Sendable, Hashable {
    package var id: String
    package var name: String?
    package var icon: String?
    /// The file the icon's name stands for, when one was found.
    package var iconFile: String?

    /// The entry `text` holds (its `[Desktop Entry]` group), or nil when it is not a shown application.
    ///
    /// - Parameter iconFile: the file an icon's name stands for in the desktop's icon theme, if any.
    package static func parse(_ text: String, id: String, iconFile: (String) -> String? = { _ in nil }) -> DesktopEntry? {
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
        if let icon = entry.icon, !icon.hasPrefix("/") { entry.iconFile = iconFile(icon) }
        return entry
    }
}
