package import DBus
import Foundation
package import NotificationCore
import NotificationEngine

/// What a desktop's notification server can do, read from its `GetCapabilities`.
package struct DesktopCapabilities: Sendable, Hashable {
    package var names: Set<String>

    package init(_ names: some Sequence<String>) {
        self.names = Set(names)
    }

    /// Buttons: without them, the person can only open (where the server has a default action) or dismiss.
    package var actions: Bool { names.contains("actions") }
    /// A reply field (the `inline-reply` extension of KDE, also spoken by other servers).
    package var inlineReply: Bool { names.contains("inline-reply") }
    /// Markup in the body: plain text must then be escaped.
    package var bodyMarkup: Bool { names.contains("body-markup") }
}

/// One call of `org.freedesktop.Notifications.Notify`: what the desktop is asked to show for one
/// notification, and how its answers map back.
package struct DesktopNotification: Sendable, Hashable {
    package var appName: String
    /// The desktop's id of the notification it replaces, or 0.
    package var replacesID: UInt32
    package var appIcon: String
    package var summary: String
    package var body: String
    /// Action keys and labels, in the order shown.
    package var actions: [Action]
    package var hints: [Hint]
    /// Milliseconds; -1 leaves it to the server, 0 never expires.
    package var expireTimeout: Int32
    /// The text-input action that the reply field stands for, if the notification has one.
    package var replyAction: String?

    package struct Action: Sendable, Hashable {
        package var key: String
        package var label: String
    }

    package struct Hint: Sendable, Hashable {
        package var name: String
        package var value: DBusValue
    }

    /// The action key of a tap on the notification itself.
    package static let defaultActionKey = "default"
    /// The action key of the reply field (`inline-reply`).
    package static let inlineReplyKey = "inline-reply"
    /// The action key of "Reply…" where the server has no reply field: it opens the reply in the web
    /// notification center.
    package static let replyInCenterKey = "x-unotify-reply-in-center"

    /// `Notify`'s arguments (`susssasa{sv}i`).
    package var arguments: [DBusValue] {
        [
            .string(appName), .uint32(replacesID), .string(appIcon), .string(summary), .string(body),
            .strings(actions.flatMap { [$0.key, $0.label] }),
            .variantDictionary(hints.map { ($0.name, $0.value) }),
            .int32(expireTimeout),
        ]
    }

    package func hint(_ name: String) -> DBusValue? {
        hints.first { $0.name == name }?.value
    }
}

extension DesktopNotification {
    /// What the desktop shows for `shown`, one of `bundleIdentifier`'s notifications, or nil when the
    /// presentation puts it nowhere a desktop shows (neither a banner nor the list).
    ///
    /// - Parameters:
    ///   - capabilities: what the server can do: actions it cannot show are left out, never half-shown.
    ///   - replacing: the desktop's id of the same notification shown before, or 0.
    ///   - previewHidden: whether the person's Show Previews setting hides its content now.
    ///   - threadCount: how many of the app's notifications share its thread (a hidden preview's `%u`).
    ///   - repliesInCenter: whether a reply can be written in the web notification center, where the
    ///     server has no reply field of its own.
    ///   - identity: how the app is shown (its name and icon); its bundle identifier when not given.
    package init?(
        _ shown: NotificationCenterMachine.VisibleNotification, of bundleIdentifier: String, capabilities: DesktopCapabilities,
        replacing: UInt32 = 0, previewHidden: Bool = false, threadCount: Int = 1, repliesInCenter: Bool = false,
        identity: ShownAppIdentity? = nil
    ) {
        let presentation = shown.presentation
        guard presentation.banner || presentation.list else { return nil }
        var content = shown.notification.request.content
        if previewHidden {
            content = PreviewPolicy.hiddenContent(of: content, categoryOptions: shown.categoryOptions,
                                                  placeholder: shown.hiddenPreviewsBodyPlaceholder, inThread: threadCount)
        }
        // The app's name and icon (a file, or a name in the icon theme); the desktop entry lets servers
        // that know it (GNOME's) find the app itself. Without them, the bundle identifier.
        appName = identity?.name ?? bundleIdentifier
        appIcon = identity.map { $0.iconFile ?? $0.iconName ?? "" } ?? ""
        replacesID = replacing
        summary = [content.title, content.subtitle].filter { !$0.isEmpty }.joined(separator: " — ")
        body = capabilities.bodyMarkup ? Self.escapingMarkup(content.body) : content.body
        expireTimeout = content.interruptionLevel == .critical ? 0 : -1

        actions = []
        replyAction = nil
        var hints: [Hint] = [Hint(name: "desktop-entry", value: .string(identity?.desktopEntry ?? bundleIdentifier))]
        if capabilities.actions {
            // A tap opens the app, as on iOS; most servers give this key to a click on the body.
            actions.append(Action(key: Self.defaultActionKey, label: "Open"))
            if !previewHidden {
                for action in shown.actions {
                    if let textInput = action.textInput {
                        // One reply field per notification, where the server has one; elsewhere "Reply…"
                        // opens the reply in the web center (or it is made from `unotify respond`).
                        guard replyAction == nil else { continue }
                        if capabilities.inlineReply {
                            replyAction = action.identifier
                            actions.append(Action(key: Self.inlineReplyKey, label: action.title))
                            hints.append(Hint(name: "x-kde-reply-placeholder-text", value: .string(textInput.placeholder)))
                            hints.append(Hint(name: "x-kde-reply-submit-button-text", value: .string(textInput.buttonTitle)))
                        } else if repliesInCenter {
                            replyAction = action.identifier
                            actions.append(Action(key: Self.replyInCenterKey, label: action.title + "…"))
                        }
                    } else {
                        actions.append(Action(key: action.identifier, label: action.title))
                    }
                }
                let destructive = shown.actions.filter { $0.options.contains(.destructive) && $0.textInput == nil }.map(\.identifier)
                if !destructive.isEmpty {
                    hints.append(Hint(name: "x-unotify-destructive-actions", value: .strings(destructive)))
                }
            }
        }

        // Critical and time-sensitive ones are urgent (servers keep them up until seen); passive and quiet ones low.
        let level = content.interruptionLevel
        let urgency: UInt8 = if level == .critical || level == .timeSensitive { 2 } else if level == .passive || presentation.isQuiet { 0 } else { 1 }
        hints.append(Hint(name: "urgency", value: .byte(urgency)))
        // A thread is a group: dunst stacks a thread's notifications under its tag (the newest shown), and
        // servers that group by category (mako's `group-by=category`) group them too.
        if !content.threadIdentifier.isEmpty {
            let thread = "\(bundleIdentifier)/\(content.threadIdentifier)"
            hints.append(Hint(name: "x-dunst-stack-tag", value: .string(thread)))
            hints.append(Hint(name: "category", value: .string("x-unotify.thread.\(thread)")))
        }
        if presentation.sound, let sound = content.sound {
            // The app's own sound is its file (from the app's sounds folder, or an absolute path).
            let ownFile: String? = if case .named(let name) = sound.kind {
                (identity ?? ShownAppIdentity(name: bundleIdentifier)).soundFile(named: name)
            } else {
                nil
            }
            switch sound.kind {
            case .named where ownFile != nil:
                hints.append(Hint(name: "sound-file", value: .string(ownFile ?? "")))
            case .defaultRingtone, .ringtone:
                hints.append(Hint(name: "sound-name", value: .string("phone-incoming-call")))
            case .default, .named:
                hints.append(Hint(name: "sound-name", value: .string("message-new-instant")))
            }
        } else {
            hints.append(Hint(name: "suppress-sound", value: .boolean(true)))
        }
        if !previewHidden, let image = content.attachments.first(where: { AttachmentRules.fileType(pathExtension: $0.url.pathExtension, typeHint: $0.type)?.family == .image }) {
            hints.append(Hint(name: "image-path", value: .string(image.url.absoluteString)))
        }
        // A banner that is not kept in the list goes away with its banner.
        if !presentation.list { hints.append(Hint(name: "transient", value: .boolean(true))) }
        if content.categoryIdentifier.isEmpty == false {
            hints.append(Hint(name: "x-unotify-category", value: .string(content.categoryIdentifier)))
        }
        self.hints = hints
    }

    /// `text` shown as written by a server that reads markup.
    static func escapingMarkup(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }
}
