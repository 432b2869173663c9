package import Foundation
internal import Synchronization

/// A point on the Earth, in degrees.
package struct Coordinate: Sendable, Hashable, Codable {
    package var latitude: Double
    package var longitude: Double

    package init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    /// The great-circle distance to another point, in metres (haversine, mean Earth radius).
    package func distance(to other: Coordinate) -> Double {
        let earthRadius = 6_371_008.8
        let lat1 = latitude * .pi / 180
        let lat2 = other.latitude * .pi / 180
        let dLat = (other.latitude - latitude) * .pi / 180
        let dLon = (other.longitude - longitude) * .pi / 180
        let a = sin(dLat / 2) * sin(dLat / 2) + cos(lat1) * cos(lat2) * sin(dLon / 2) * sin(dLon / 2)
        return 2 * earthRadius * atan2(a.squareRoot(), (1 - a).squareRoot())
    }
}

/// A circle on the Earth that a location trigger watches for entry, exit or both.
package struct CircularRegion: Sendable, Hashable, Codable {
    package var identifier: String
    package var center: Coordinate
    /// The radius in metres.
    package var radius: Double
    package var notifyOnEntry: Bool
    package var notifyOnExit: Bool

    package init(identifier: String, center: Coordinate, radius: Double, notifyOnEntry: Bool = true, notifyOnExit: Bool = true) {
        self.identifier = identifier
        self.center = center
        self.radius = radius
        self.notifyOnEntry = notifyOnEntry
        self.notifyOnExit = notifyOnExit
    }

    package func contains(_ coordinate: Coordinate) -> Bool {
        center.distance(to: coordinate) <= radius
    }
}

/// What makes a request fire; the value behind the `UN…NotificationTrigger` classes.
package enum NotificationTrigger: Sendable, Hashable {
    case timeInterval(TimeInterval, repeats: Bool)
    /// Indirect: `DateComponents` is large, and every request would otherwise carry its size.
    indirect case calendar(DateComponents, repeats: Bool)
    /// Indirect too: a region (48 bytes) made every request, and every pending request in the
    /// daemon's cache, 32 bytes larger than a time interval needs.
    indirect case location(CircularRegion, repeats: Bool)
    case push

    package var repeats: Bool {
        switch self {
        case .timeInterval(_, let repeats), .calendar(_, let repeats), .location(_, let repeats): repeats
        case .push: false
        }
    }
}

/// A request to show a notification; the value behind `UNNotificationRequest`.
package struct NotificationRequest: Sendable, Hashable, Codable {
    package var identifier: String
    /// What the notification shows. Kept in a shared immutable box: a request is copied between the
    /// pending and delivered tables and into every effect, and the content is its large part.
    package var content: NotificationContent {
        get { contentBox.value }
        set { contentBox = ContentBox(newValue) }
    }
    /// `nil` delivers the notification right away.
    package var trigger: NotificationTrigger?
    /// For a request that came from a push through a gateway: the push's `apns-unique-id`, which the
    /// device's reports to the delivery log name. Only the push service sets it.
    package var pushUniqueID: String?
    private var contentBox: ContentBox

    package init(identifier: String, content: NotificationContent, trigger: NotificationTrigger?) {
        self.identifier = identifier
        self.contentBox = ContentBox(content)
        self.trigger = trigger
    }

    /// A request whose content is read from `encodedContent` (JSON) only when first used: a store
    /// loads an app's requests without decoding the content of each, which most steps never read.
    /// Content that turns out not to decode reads as ``NotificationContent/unreadable``.
    package init(identifier: String, encodedContent: [UInt8], trigger: NotificationTrigger?) {
        self.identifier = identifier
        self.contentBox = ContentBox(encoded: encodedContent)
        self.trigger = trigger
    }

    /// The content's JSON as it was loaded, when nothing has decoded it since: a store writes it back
    /// as it is.
    package var encodedContent: [UInt8]? { contentBox.undecoded }

    /// The files of the content's attachments. Content still encoded whose JSON shows no attachment
    /// has none, and is not decoded to find out (removing or replacing a request asks, and a store
    /// loads most requests encoded).
    package var attachmentURLs: [URL] {
        switch contentBox.attachmentURLsIfDecoded {
        case .some(let urls): return urls
        case .none:
            if let encoded = contentBox.undecoded, !Self.mayNameAttachments(encoded) { return [] }
            return content.attachments.map(\.url)
        }
    }

    /// False only when the JSON of a content surely holds no attachment: every `"attachments"` in it
    /// is a key whose value is an empty array (`NotificationContent` always writes the key), or there
    /// is none. Anything else (a key with elements, the word as a value or a key in `userInfo`)
    /// answers true, and the content is decoded to be sure. Quotes inside JSON strings are escaped,
    /// so text in a title or body never looks like the key.
    static func mayNameAttachments(_ json: [UInt8]) -> Bool {
        // A loop over the bytes: the generic `firstRange(of:)` was 2% of the daemon's time under a
        // load of adds, each replacing a request whose content it scanned.
        json.withUnsafeBufferPointer { bytes in
            let key = attachmentsKey
            var index = 0
            while index + key.count <= bytes.count {
                guard matches(key, in: bytes, at: index) else {
                    index += 1
                    continue
                }
                index += key.count
                for expected in [UInt8(ascii: ":"), UInt8(ascii: "["), UInt8(ascii: "]")] {
                    while index < bytes.count, isJSONSpace(bytes[index]) { index += 1 }
                    guard index < bytes.count, bytes[index] == expected else { return true }
                    index += 1
                }
            }
            return false
        }
    }

    private static func matches(_ key: [UInt8], in bytes: UnsafeBufferPointer<UInt8>, at start: Int) -> Bool {
        for offset in key.indices where bytes[start + offset] != key[offset] { return false }
        return true
    }

    private static func isJSONSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

    private static let attachmentsKey = Array(#""attachments""#.utf8)

    private enum CodingKeys: String, CodingKey {
        case identifier, content, trigger, pushUniqueID
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            identifier: try container.decode(String.self, forKey: .identifier),
            content: try container.decodeIfPresent(NotificationContent.self, forKey: .content) ?? NotificationContent(),
            trigger: try container.decodeIfPresent(NotificationTrigger.self, forKey: .trigger)
        )
        pushUniqueID = try container.decodeIfPresent(String.self, forKey: .pushUniqueID)
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(identifier, forKey: .identifier)
        try container.encode(content, forKey: .content)
        try container.encodeIfPresent(trigger, forKey: .trigger)
        try container.encodeIfPresent(pushUniqueID, forKey: .pushUniqueID)
    }

    package static func == (lhs: NotificationRequest, rhs: NotificationRequest) -> Bool {
        lhs.identifier == rhs.identifier && lhs.trigger == rhs.trigger && lhs.pushUniqueID == rhs.pushUniqueID
            && (lhs.contentBox === rhs.contentBox || lhs.content == rhs.content)
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(identifier)
        hasher.combine(trigger)
        hasher.combine(content)
    }
}

/// A request's content, shared by the copies of the request; decoded on first use when it was
/// loaded encoded.
///
/// A daemon keeps thousands of apps' requests in memory, most of them as loaded, so the encoded form
/// is what is kept small: its bytes in one array (`Data` takes an object and a buffer), and the
/// decoded content (224 bytes) boxed rather than held inline, where it would size every box.
private final class ContentBox: Sendable {
    private enum State {
        indirect case decoded(NotificationContent)
        case encoded([UInt8])
    }

    // The lock makes the one-time decoding safe from any thread.
    private let state: Mutex<State>

    init(_ value: NotificationContent) {
        state = Mutex(.decoded(value))
    }

    init(encoded: [UInt8]) {
        state = Mutex(.encoded(encoded))
    }

    var value: NotificationContent {
        state.withLock { state in
            switch state {
            case .decoded(let content):
                return content
            case .encoded(let data):
                let content = (try? JSONDecoder().decode(NotificationContent.self, from: Data(data))) ?? .unreadable
                state = .decoded(content)
                return content
            }
        }
    }

    /// The attachments' files of decoded content, read in place (a copy of the whole content costs a
    /// retain and a release per field, on every replaced request); nil while still encoded.
    var attachmentURLsIfDecoded: [URL]? {
        state.withLock { state in
            guard case .decoded(let content) = state else { return nil }
            return content.attachments.isEmpty ? [] : content.attachments.map(\.url)
        }
    }

    var undecoded: [UInt8]? {
        state.withLock { state in
            if case .encoded(let data) = state { data } else { nil }
        }
    }
}

/// A notification the system delivered; the value behind `UNNotification`.
package struct DeliveredNotification: Sendable, Hashable, Codable {
    package var request: NotificationRequest
    /// When it was delivered.
    package var date: Date

    package init(request: NotificationRequest, date: Date) {
        self.request = request
        self.date = date
    }
}
