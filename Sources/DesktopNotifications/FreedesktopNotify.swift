package import DBus
package import Foundation
package import NotificationCore

/// A desktop program's call of `org.freedesktop.Notifications.Notify`, read in the daemon's terms:
/// which app it is, the category its actions make, and the content to deliver.
package struct FreedesktopNotify: Sendable, Hashable {
    package var appName: String
    package var replacesID: UInt32
    package var appIcon: String
    package var summary: String
    package var body: String
    /// Action keys and labels, in the order given.
    package var actions: [DesktopNotification.Action]
    package var hints: [String: DBusValue]
    package var expireTimeout: Int32

    /// Reads `Notify`'s arguments (`susssasa{sv}i`).
    ///
    /// - Throws: a `DBusError` naming what is wrong, for an `InvalidArgs` reply.
    package init(arguments: [DBusValue]) throws(DBusError) {
        guard arguments.count == 8,
              let appName = arguments[0].stringValue, let replacesID = arguments[1].uint32Value,
              let appIcon = arguments[2].stringValue, let summary = arguments[3].stringValue, let body = arguments[4].stringValue,
              let actions = arguments[5].stringArray, let hints = arguments[6].stringKeyedDictionary,
              let expireTimeout = arguments[7].int32Value else {
            throw DBusError(code: .invalidMessage, message: "Notify takes (susssasa{sv}i).")
        }
        guard actions.count % 2 == 0 else {
            throw DBusError(code: .invalidMessage, message: "Notify's actions are pairs of a key and a label.")
        }
        self.appName = appName
        self.replacesID = replacesID
        self.appIcon = appIcon
        self.summary = summary
        self.body = body
        self.actions = stride(from: 0, to: actions.count, by: 2).map { DesktopNotification.Action(key: actions[$0], label: actions[$0 + 1]) }
        self.hints = hints
        self.expireTimeout = expireTimeout
    }

    /// The app the notification is filed under: its desktop entry when that is a valid reverse-DNS id
    /// (`org.gnome.Nautilus`), else `desktop.` and its name (`notify-send` → `desktop.notify-send`).
    package var bundleIdentifier: String {
        if let entry = hints["desktop-entry"]?.stringValue, RequestRules.violation(inBundleIdentifier: entry) == nil, entry.contains(".") {
            return entry
        }
        let label = appName.lowercased().unicodeScalars.map { scalar in
            scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar) || scalar == "-") ? Character(scalar) : "-"
        }
        let name = String(label.prefix(200)).trimmingCharacters(in: CharacterSet(charactersIn: "-"))
        return "desktop." + (name.isEmpty ? "unnamed" : name)
    }

    /// The category the notification's actions make: the buttons, and a text-input action for the
    /// `inline-reply` key with the reply hints' words (``plainCategory`` when it has none but the
    /// default). Dismissals are reported (`NotificationClosed` with reason 2 needs them).
    package var category: NotificationCategory {
        var buttons: [NotificationAction] = []
        for action in actions where action.key != DesktopNotification.defaultActionKey {
            if action.key == DesktopNotification.inlineReplyKey {
                buttons.append(NotificationAction(
                    identifier: action.key, title: action.label.isEmpty ? "Reply" : action.label,
                    textInput: .init(buttonTitle: hints["x-kde-reply-submit-button-text"]?.stringValue ?? "Send",
                                     placeholder: hints["x-kde-reply-placeholder-text"]?.stringValue ?? "")))
            } else {
                buttons.append(NotificationAction(identifier: action.key, title: action.label))
            }
        }
        var identity = ""
        for button in buttons {
            identity += button.identifier + "\u{1F}" + button.title + "\u{1F}" + (button.textInput.map { $0.placeholder + "\u{1F}" + $0.buttonTitle } ?? "") + "\u{1E}"
        }
        // A stable name for the same set of actions, so that repeated notifications share a category.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in identity.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return NotificationCategory(identifier: buttons.isEmpty ? Self.plainCategory : "freedesktop-" + String(hash, radix: 16),
                                    actions: buttons, options: [.customDismissAction])
    }

    /// The category of notifications with no buttons: it only asks for dismissals.
    package static let plainCategory = "freedesktop"

    /// The content the notification is delivered with.
    package func content(category: String) -> NotificationContent {
        var content = NotificationContent()
        content.title = summary
        content.body = body
        content.categoryIdentifier = category
        switch hints["urgency"]?.integerValue {
        case 0: content.interruptionLevel = .passive
        case 2: content.interruptionLevel = .timeSensitive
        default: content.interruptionLevel = .active
        }
        if hints["suppress-sound"]?.boolValue != true {
            content.sound = NotificationSound(kind: .default)
        }
        if let category = hints["category"]?.stringValue, !category.isEmpty {
            content.threadIdentifier = category
        }
        content.userInfo = ["freedesktop-app-name": .string(appName)]
        return content
    }

    /// The image to attach: the `image-path` hint (or the older `image_path`), or an icon given as a
    /// file, when it names a file.
    package var imageFile: URL? {
        for candidate in [hints["image-path"]?.stringValue, hints["image_path"]?.stringValue, appIcon] {
            guard let candidate, !candidate.isEmpty else { continue }
            if candidate.hasPrefix("file://"), let url = URL(string: candidate), url.isFileURL { return url }
            if candidate.hasPrefix("/") { return URL(fileURLWithPath: candidate) }
        }
        return nil
    }
}
