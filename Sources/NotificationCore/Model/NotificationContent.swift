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
    /// The part of the image (or of the movie's frame) its thumbnail shows, in unit coordinates;
    /// `nil` for the whole of it (`UNNotificationAttachmentOptionsThumbnailClippingRectKey`).
    package var thumbnailClippingRect: ThumbnailClippingRect?
    /// The time in seconds of a movie's frame shown as its thumbnail, or the frame of an animated
    /// image (`UNNotificationAttachmentOptionsThumbnailTimeKey`); `nil` for the first.
    package var thumbnailTime: Double?

    package init(
        identifier: String, url: URL, type: String, thumbnailHidden: Bool = false,
        thumbnailClippingRect: ThumbnailClippingRect? = nil, thumbnailTime: Double? = nil
    ) {
        self.identifier = identifier
        self.url = url
        self.type = type
        self.thumbnailHidden = thumbnailHidden
        // The whole image is what no rectangle asks for: kept as none.
        self.thumbnailClippingRect = thumbnailClippingRect == .whole ? nil : thumbnailClippingRect
        self.thumbnailTime = thumbnailTime.map { $0.isFinite ? max(0, $0) : 0 }
    }

    private enum CodingKeys: String, CodingKey {
        case identifier, url, type, thumbnailHidden, thumbnailClippingRect, thumbnailTime
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
        thumbnailClippingRect = try container.decodeIfPresent(ThumbnailClippingRect.self, forKey: .thumbnailClippingRect).flatMap { $0 == .whole ? nil : $0 }
        thumbnailTime = try container.decodeIfPresent(Double.self, forKey: .thumbnailTime).map { max(0, $0) }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(identifier, forKey: .identifier)
        try container.encode(url, forKey: .url)
        try container.encode(type, forKey: .type)
        try container.encode(thumbnailHidden, forKey: .thumbnailHidden)
        try container.encodeIfPresent(thumbnailClippingRect, forKey: .thumbnailClippingRect)
        try container.encodeIfPresent(thumbnailTime, forKey: .thumbnailTime)
    }
}

/// The part of an attachment's image its thumbnail shows: a rectangle in unit coordinates (0 to 1
/// across and down the image, from its top left corner), as the dictionary of a `CGRect` gives it
/// (`X`, `Y`, `Width`, `Height`). A rectangle that reaches outside the image is cut to it.
package struct ThumbnailClippingRect: Sendable, Hashable, Codable {
    package var x: Double
    package var y: Double
    package var width: Double
    package var height: Double

    /// The rectangle cut to the unit square; `nil` when nothing of it is left, or a side is not a number.
    package init?(x: Double, y: Double, width: Double, height: Double) {
        guard [x, y, width, height].allSatisfy(\.isFinite) else { return nil }
        let left = min(max(x, 0), 1), top = min(max(y, 0), 1)
        let right = min(max(x + width, 0), 1), bottom = min(max(y + height, 0), 1)
        guard right > left, bottom > top else { return nil }
        self.x = left
        self.y = top
        self.width = right - left
        self.height = bottom - top
    }

    /// A `CGRect`'s dictionary representation, as `UNNotificationAttachmentOptionsThumbnailClippingRectKey` takes it.
    package init?(dictionary: [String: Double]) {
        guard let x = dictionary["X"], let y = dictionary["Y"], let width = dictionary["Width"], let height = dictionary["Height"] else { return nil }
        self.init(x: x, y: y, width: width, height: height)
    }

    private enum CodingKeys: String, CodingKey {
        case x = "X", y = "Y", width = "Width", height = "Height"
    }

    /// A rectangle with no part inside the image is a well-formed request that asks for the whole image.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let sides = try (container.decode(Double.self, forKey: .x), container.decode(Double.self, forKey: .y),
                         container.decode(Double.self, forKey: .width), container.decode(Double.self, forKey: .height))
        self = Self(x: sides.0, y: sides.1, width: sides.2, height: sides.3) ?? Self.whole
    }

    /// The whole image.
    package static let whole = ThumbnailClippingRect(x: 0, y: 0, width: 1, height: 1)!
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
