package import Foundation

/// What an app's content extension declares in its `Info.plist` (`NSExtension` →
/// `NSExtensionAttributes`): the categories whose notifications it draws, and how its interface sits
/// in the expanded notification. `Docs/content-extensions.md` describes each key.
package struct ContentExtensionAttributes: Sendable, Hashable, Codable {
    /// `UNNotificationExtensionCategory`: a string or an array of strings in the plist.
    package var categories: [String]
    /// `UNNotificationExtensionInitialContentSizeRatio`: the interface's height as a fraction of its width.
    package var initialContentSizeRatio: Double
    /// `UNNotificationExtensionDefaultContentHidden`: only the extension's interface, without the
    /// notification's own title, subtitle and body.
    package var defaultContentHidden: Bool
    /// `UNNotificationExtensionOverridesDefaultTitle`: the extension's `title` heads the notification
    /// instead of the app's name.
    package var overridesDefaultTitle: Bool
    /// `UNNotificationExtensionUserInteractionEnabled`: the person can use the interface itself; otherwise
    /// tapping it opens the app, as tapping the notification does.
    package var userInteractionEnabled: Bool

    package init(categories: [String], initialContentSizeRatio: Double, defaultContentHidden: Bool = false,
                 overridesDefaultTitle: Bool = false, userInteractionEnabled: Bool = false) {
        self.categories = categories
        self.initialContentSizeRatio = initialContentSizeRatio
        self.defaultContentHidden = defaultContentHidden
        self.overridesDefaultTitle = overridesDefaultTitle
        self.userInteractionEnabled = userInteractionEnabled
    }

    /// The extension point a content extension's `Info.plist` names.
    package static let extensionPoint = "com.apple.usernotifications.content-extension"

    /// The ratios accepted: a sliver to a tall interface.
    package static let ratios = 0.01...10.0

    /// The attributes of an extension's `Info.plist` (XML or binary).
    ///
    /// - Throws: ``ContentExtensionProblem`` naming the key that is missing or wrong.
    package init(infoPlist data: Data) throws(ContentExtensionProblem) {
        let root: Any
        do {
            root = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        } catch {
            throw ContentExtensionProblem("The Info.plist is not a property list: \(error.localizedDescription)")
        }
        guard let extensionInfo = (root as? [String: Any])?["NSExtension"] as? [String: Any] else {
            throw ContentExtensionProblem("The Info.plist has no NSExtension dictionary.")
        }
        if let point = extensionInfo["NSExtensionPointIdentifier"] {
            guard point as? String == Self.extensionPoint else {
                throw ContentExtensionProblem("NSExtensionPointIdentifier must be \(Self.extensionPoint); got \(point).")
            }
        }
        guard let attributes = extensionInfo["NSExtensionAttributes"] as? [String: Any] else {
            throw ContentExtensionProblem("The Info.plist's NSExtension has no NSExtensionAttributes dictionary.")
        }
        let categories: [String]
        switch attributes["UNNotificationExtensionCategory"] {
        case let one as String: categories = [one]
        case let many as [Any]:
            guard let strings = many as? [String] else {
                throw ContentExtensionProblem("UNNotificationExtensionCategory must hold strings only.")
            }
            categories = strings
        case nil: throw ContentExtensionProblem("UNNotificationExtensionCategory is required: the categories the extension draws.")
        case let other?: throw ContentExtensionProblem("UNNotificationExtensionCategory must be a string or an array of strings; got \(other).")
        }
        let ratio: Double
        switch attributes["UNNotificationExtensionInitialContentSizeRatio"] {
        case let number as NSNumber: ratio = number.doubleValue
        case let text as String:
            guard let value = Double(text) else {
                throw ContentExtensionProblem("UNNotificationExtensionInitialContentSizeRatio must be a number; got \"\(text)\".")
            }
            ratio = value
        case nil: throw ContentExtensionProblem("UNNotificationExtensionInitialContentSizeRatio is required: the interface's height over its width.")
        case let other?: throw ContentExtensionProblem("UNNotificationExtensionInitialContentSizeRatio must be a number; got \(other).")
        }
        func flag(_ key: String) throws(ContentExtensionProblem) -> Bool {
            switch attributes[key] {
            case nil: return false
            case let value as Bool: return value
            case let number as NSNumber where number.intValue == 0 || number.intValue == 1: return number.boolValue
            case let text as String where ["YES", "NO", "true", "false"].contains(text): return text == "YES" || text == "true"
            case let other?: throw ContentExtensionProblem("\(key) must be a Boolean; got \(other).")
            }
        }
        self.init(categories: categories, initialContentSizeRatio: ratio,
                  defaultContentHidden: try flag("UNNotificationExtensionDefaultContentHidden"),
                  overridesDefaultTitle: try flag("UNNotificationExtensionOverridesDefaultTitle"),
                  userInteractionEnabled: try flag("UNNotificationExtensionUserInteractionEnabled"))
        if let violation { throw ContentExtensionProblem(violation) }
    }

    /// What is wrong with these attributes, if anything.
    package var violation: String? {
        if categories.isEmpty { return "A content extension names at least one category (UNNotificationExtensionCategory)." }
        if categories.contains(where: \.isEmpty) { return "A content extension's category identifiers are not empty." }
        if Set(categories).count != categories.count { return "A content extension names each category once." }
        if categories.count > 64 { return "A content extension names at most 64 categories." }
        guard initialContentSizeRatio.isFinite, Self.ratios.contains(initialContentSizeRatio) else {
            return "UNNotificationExtensionInitialContentSizeRatio is \(Self.ratios.lowerBound) to \(Self.ratios.upperBound); got \(initialContentSizeRatio)."
        }
        return nil
    }

    private enum CodingKeys: String, CodingKey {
        case categories, initialContentSizeRatio, defaultContentHidden, overridesDefaultTitle, userInteractionEnabled
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        categories = try container.decode([String].self, forKey: .categories)
        initialContentSizeRatio = try container.decode(Double.self, forKey: .initialContentSizeRatio)
        defaultContentHidden = try container.decodeIfPresent(Bool.self, forKey: .defaultContentHidden) ?? false
        overridesDefaultTitle = try container.decodeIfPresent(Bool.self, forKey: .overridesDefaultTitle) ?? false
        userInteractionEnabled = try container.decodeIfPresent(Bool.self, forKey: .userInteractionEnabled) ?? false
    }
}

/// Why an extension's `Info.plist` or registration was refused.
package struct ContentExtensionProblem: Error, Sendable, Hashable, CustomStringConvertible {
    package var description: String
    package init(_ description: String) { self.description = description }
}

/// `UNNotificationContentExtensionResponseOption`: what happens after the extension handled an action.
package enum ContentExtensionResponseOption: Int, Sendable, Hashable, Codable {
    /// The interface stays; the app hears nothing.
    case doNotDismiss = 0
    /// The interface closes and the notification goes; the app hears nothing.
    case dismiss = 1
    /// The interface closes and the response goes to the app, as without an extension.
    case dismissAndForwardAction = 2
}

/// What a content extension shows: its interface, as HTML, and what goes around it.
package struct ContentExtensionInterface: Sendable, Hashable, Codable {
    package struct Size: Sendable, Hashable, Codable {
        package var width: Double
        package var height: Double
        package init(width: Double, height: Double) {
            self.width = width
            self.height = height
        }
    }

    package struct Rect: Sendable, Hashable, Codable {
        package var x: Double
        package var y: Double
        package var width: Double
        package var height: Double
        package init(x: Double, y: Double, width: Double, height: Double) {
            self.x = x
            self.y = y
            self.width = width
            self.height = height
        }
    }

    /// The media play/pause button the system draws over the interface.
    package struct MediaButton: Sendable, Hashable, Codable {
        /// `UNNotificationContentExtensionMediaPlayPauseButtonType`: 1 default, 2 overlay.
        package var type: Int
        package var frame: Rect
        /// CSS color, from `mediaPlayPauseButtonTintColor`; `nil` for the system's.
        package var tintColor: String?
        /// Whether the media plays now, as the button shows it.
        package var playing: Bool
        package init(type: Int, frame: Rect, tintColor: String? = nil, playing: Bool) {
            self.type = type
            self.frame = frame
            self.tintColor = tintColor
            self.playing = playing
        }
    }

    /// The interface's document: a whole HTML page or a fragment.
    package var html: String
    /// The view controller's `title`, shown when the extension overrides the default title.
    package var title: String?
    /// The view controller's `preferredContentSize`, when it set one: its height over its width then
    /// replaces the initial ratio.
    package var preferredContentSize: Size?
    package var mediaButton: MediaButton?
    /// `NSExtensionContext.notificationActions`, when the extension replaced the category's actions.
    package var actions: [NotificationAction]?

    package init(html: String, title: String? = nil, preferredContentSize: Size? = nil, mediaButton: MediaButton? = nil,
                 actions: [NotificationAction]? = nil) {
        self.html = html
        self.title = title
        self.preferredContentSize = preferredContentSize
        self.mediaButton = mediaButton
        self.actions = actions
    }
}

/// One line of the conversation between the daemon and a content extension's process: JSON, one
/// message per line, on the extension's standard input (from the daemon) and its standard output
/// (from the extension). `Docs/content-extensions.md` describes it.
///
/// - From the daemon, each with its own `sequence`: `notification` first (the notification to draw),
///   then `response` (an action the person chose), `mediaPlay` and `mediaPause`.
/// - From the extension: `interface` after each of them, with `replyTo` naming it (and, for a
///   response, the `option` its completion handler gave); `interface` on its own when the extension
///   called the extension context; `defaultAction` and `dismiss` for
///   `performNotificationDefaultAction()` and `dismissNotificationContentExtension()`.
package struct ContentExtensionMessage: Sendable, Hashable, Codable {
    package enum Kind: String, Sendable, Hashable, Codable {
        case notification, response, mediaPlay, mediaPause
        case interface, defaultAction, dismiss
    }

    package var type: Kind
    package var sequence: UInt64?
    package var replyTo: UInt64?
    package var notification: DeliveredNotification?
    /// With `notification`: its category's actions, which `notificationActions` gives until the
    /// extension replaces them.
    package var actions: [NotificationAction]?
    package var response: NotificationResponse?
    package var interface: ContentExtensionInterface?
    package var option: ContentExtensionResponseOption?

    package init(type: Kind, sequence: UInt64? = nil, replyTo: UInt64? = nil, notification: DeliveredNotification? = nil,
                 actions: [NotificationAction]? = nil, response: NotificationResponse? = nil, interface: ContentExtensionInterface? = nil,
                 option: ContentExtensionResponseOption? = nil) {
        self.type = type
        self.sequence = sequence
        self.replyTo = replyTo
        self.notification = notification
        self.actions = actions
        self.response = response
        self.interface = interface
        self.option = option
    }

    /// The message as one line, newline included.
    package func line() throws -> Data {
        var data = try JSONEncoder().encode(self)
        data.append(UInt8(ascii: "\n"))
        return data
    }

    /// The most bytes one message from an extension may take.
    package static let maximumLineBytes = 1024 * 1024
}
