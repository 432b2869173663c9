package import NotificationCore

/// Which of the desktop's notifications shows which of ours, and what the person's answers on the
/// desktop mean: the desktop presenter's protocol logic, with no bus.
package struct DesktopNotificationTable: Sendable {
    /// One of our notifications, by app and identifier.
    package struct Key: Sendable, Hashable {
        package var bundleIdentifier: String
        package var identifier: String

        package init(bundleIdentifier: String, identifier: String) {
            self.bundleIdentifier = bundleIdentifier
            self.identifier = identifier
        }
    }

    private struct Entry: Sendable {
        var key: Key
        var replyAction: String?
    }

    private var byDesktopID: [UInt32: Entry] = [:]
    private var byKey: [Key: UInt32] = [:]

    package init() {}

    /// The desktop's id of `key`'s notification while the desktop shows it.
    package func desktopID(of key: Key) -> UInt32? { byKey[key] }

    /// The desktop showed `key`'s notification as `desktopID`.
    package mutating func shown(_ key: Key, as desktopID: UInt32, replyAction: String?) {
        if let old = byKey[key], old != desktopID { byDesktopID.removeValue(forKey: old) }
        byKey[key] = desktopID
        byDesktopID[desktopID] = Entry(key: key, replyAction: replyAction)
    }

    /// `key`'s notification is no longer on the desktop; returns its desktop id if it was.
    @discardableResult
    package mutating func forget(_ key: Key) -> UInt32? {
        guard let desktopID = byKey.removeValue(forKey: key) else { return nil }
        byDesktopID.removeValue(forKey: desktopID)
        return desktopID
    }

    /// The notification shown as `desktopID` and its text-input action, when "Reply…" was chosen on it.
    /// The reply is written in the web center: the desktop's notification is done with (it is
    /// forgotten, so the server closing it after the action is not taken for a dismissal).
    package mutating func replyInCenter(_ desktopID: UInt32) -> (Key, String)? {
        guard let entry = byDesktopID[desktopID], let action = entry.replyAction else { return nil }
        forget(entry.key)
        return (entry.key, action)
    }

    /// What the person did, read from a signal of the desktop's server: the notification it is about
    /// and the action, or nil when it is none of ours or means nothing to the app. An answered or
    /// closed notification is forgotten, so what the server says of it afterwards is ignored.
    package mutating func personAction(for signal: Signal) -> (Key, PersonAction)? {
        switch signal {
        case .actionInvoked(let desktopID, let key):
            // The reply field's own key is followed by NotificationReplied with the text.
            guard key != DesktopNotification.inlineReplyKey, let entry = byDesktopID[desktopID] else { return nil }
            forget(entry.key)
            return (entry.key, key == DesktopNotification.defaultActionKey ? .open : .action(key))
        case .replied(let desktopID, let text):
            guard let entry = byDesktopID[desktopID], let action = entry.replyAction else { return nil }
            forget(entry.key)
            return (entry.key, .reply(action, text: text))
        case .closed(let desktopID, let reason):
            guard let entry = byDesktopID[desktopID] else { return nil }
            forget(entry.key)
            // Only the person's own dismissal is an answer; an expired banner stays in our list.
            return reason == .dismissedByUser ? (entry.key, .dismiss) : nil
        }
    }

    /// The signals of `org.freedesktop.Notifications` that carry the person's answers.
    package enum Signal: Sendable, Hashable {
        case actionInvoked(UInt32, key: String)
        case replied(UInt32, text: String)
        case closed(UInt32, reason: CloseReason)

        /// The desktop's id of the notification it is about.
        package var desktopID: UInt32 {
            switch self {
            case .actionInvoked(let id, _), .replied(let id, _), .closed(let id, _): id
            }
        }
    }

    /// Why the server closed a notification (`NotificationClosed`'s second argument).
    package enum CloseReason: UInt32, Sendable, Hashable {
        case expired = 1
        case dismissedByUser = 2
        case closedByCall = 3
        case undefined = 4
    }
}
