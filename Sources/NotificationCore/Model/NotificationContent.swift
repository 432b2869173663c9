package import Foundation

/// How loudly a notification asks for attention; the raw values are Apple's.
package enum InterruptionLevel: UInt, Sendable, Hashable, CaseIterable {
    case passive = 0
    case active = 1
    case timeSensitive = 2
    case critical = 3
}

/// The sound a notification plays.
package struct NotificationSound: Sendable, Hashable {
    /// The kind of sound: the system's default, or a named file; alerts or ringtones.
    package enum Kind: Sendable, Hashable {
        case `default`
        case named(String)
        case defaultRingtone
        case ringtone(String)
    }

    package var kind: Kind
    /// Critical sounds ignore the mute switch and Do Not Disturb.
    package var isCritical: Bool
    /// The volume of a critical sound, 0 (silent) to 1 (full).
    package var volume: Float

    package init(kind: Kind, isCritical: Bool = false, volume: Float = 1) {
        self.kind = kind
        self.isCritical = isCritical
        self.volume = volume
    }
}

/// A file shown with a notification, already validated and stored.
package struct NotificationAttachment: Sendable, Hashable, Codable {
    package var identifier: String
    package var url: URL
    /// The Uniform Type Identifier of the file, such as `public.png`.
    package var type: String
    package var thumbnailHidden: Bool

    package init(identifier: String, url: URL, type: String, thumbnailHidden: Bool = false) {
        self.identifier = identifier
        self.url = url
        self.type = type
        self.thumbnailHidden = thumbnailHidden
    }

    private enum CodingKeys: String, CodingKey {
        case identifier, url, type, thumbnailHidden
    }

    /// A `url` that is not a URL at all is a well-formed request naming no file: it fails with a
    /// ``NotificationFailure`` (`attachmentInvalidURL`) as the underlying error, as Apple refuses it.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        identifier = try container.decode(String.self, forKey: .identifier)
        let text = try container.decode(String.self, forKey: .url)
        guard !text.isEmpty, let url = URL(string: text) else {
            throw DecodingError.dataCorrupted(DecodingError.Context(
                codingPath: container.codingPath + [CodingKeys.url],
                debugDescription: "\"\(text)\" is not a URL.",
                underlyingError: NotificationFailure(.attachmentInvalidURL, detail: "\"\(text)\" is not a URL.")
            ))
        }
        self.url = url
        type = try container.decode(String.self, forKey: .type)
        thumbnailHidden = try container.decode(Bool.self, forKey: .thumbnailHidden)
    }
}

/// What a notification shows and carries; the value behind `UNNotificationContent`.
package struct NotificationContent: Sendable, Hashable {
    package var title: String = ""
    package var subtitle: String = ""
    package var body: String = ""
    package var attachments: [NotificationAttachment] = []
    /// `nil` leaves the app's badge unchanged, 0 removes it, a positive number shows it.
    package var badge: Int? = nil
    package var sound: NotificationSound? = nil
    package var launchImageName: String = ""
    package var userInfo: [String: PropertyListValue] = [:]
    package var categoryIdentifier: String = ""
    package var threadIdentifier: String = ""
    package var summaryArgument: String = ""
    package var summaryArgumentCount: Int = 1
    package var targetContentIdentifier: String? = nil
    package var interruptionLevel: InterruptionLevel = .active
    package var relevanceScore: Double = 0
    package var filterCriteria: String? = nil

    package init() {}

    /// True when there is nothing at all to show, play or badge.
    /// What a stored request's content reads as when its stored form cannot be decoded (only a damaged
    /// or hand-edited database holds such a row): shown, so that nothing vanishes without a trace.
    package static var unreadable: NotificationContent {
        var content = NotificationContent()
        content.title = "Unreadable notification"
        content.body = "This notification's stored content could not be read."
        return content
    }

    package var isEmpty: Bool {
        title.isEmpty && subtitle.isEmpty && body.isEmpty && attachments.isEmpty && badge == nil && sound == nil
    }
}
