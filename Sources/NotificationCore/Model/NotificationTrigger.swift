package import Foundation

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
    case calendar(DateComponents, repeats: Bool)
    case location(CircularRegion, repeats: Bool)
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
    package var content: NotificationContent
    /// `nil` delivers the notification right away.
    package var trigger: NotificationTrigger?

    package init(identifier: String, content: NotificationContent, trigger: NotificationTrigger?) {
        self.identifier = identifier
        self.content = content
        self.trigger = trigger
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
