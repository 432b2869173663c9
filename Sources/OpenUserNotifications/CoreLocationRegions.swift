// Linux has no CoreLocation. The location trigger needs a region, so the few CoreLocation types it uses
// are provided here under Apple's names (a documented divergence, see COMPATIBILITY.md). Where
// CoreLocation exists, its own types are used instead.
#if canImport(CoreLocation)
@_exported public import CoreLocation
#else
public import Foundation
internal import NotificationCore
internal import Synchronization

/// A latitude or longitude in degrees.
public typealias CLLocationDegrees = Double
/// A distance in metres.
public typealias CLLocationDistance = Double

/// A latitude and longitude.
public struct CLLocationCoordinate2D: Sendable, Hashable {
    /// The latitude in degrees, positive north of the equator.
    public var latitude: CLLocationDegrees
    /// The longitude in degrees, positive east of the prime meridian.
    public var longitude: CLLocationDegrees

    /// The coordinate at 0° N, 0° E.
    public init() {
        self.init(latitude: 0, longitude: 0)
    }

    /// A coordinate at the given latitude and longitude.
    public init(latitude: CLLocationDegrees, longitude: CLLocationDegrees) {
        self.latitude = latitude
        self.longitude = longitude
    }
}

/// A geographic region that can report the device entering or leaving it.
open class CLRegion: NSObject, NSCopying, @unchecked Sendable {
    // Sendable: the only mutable state, the two flags, lives behind a lock.
    private let flags = Mutex((entry: true, exit: true))

    /// The region's identifier; it must be unique among the app's regions.
    public let identifier: String

    init(identifier: String) {
        self.identifier = identifier
        super.init()
    }

    /// Whether entering the region is reported. Defaults to `true`.
    open var notifyOnEntry: Bool {
        get { flags.withLock { $0.entry } }
        set { flags.withLock { $0.entry = newValue } }
    }

    /// Whether leaving the region is reported. Defaults to `true`.
    open var notifyOnExit: Bool {
        get { flags.withLock { $0.exit } }
        set { flags.withLock { $0.exit = newValue } }
    }

    open func copy(with zone: NSZone? = nil) -> Any { self }
}

/// A circular region: a center and a radius.
open class CLCircularRegion: CLRegion, @unchecked Sendable {
    // Sendable: center and radius are immutable; the flags are locked by the superclass.
    /// The center of the circle.
    public let center: CLLocationCoordinate2D
    /// The radius in metres.
    public let radius: CLLocationDistance

    /// A circle around `center` with `radius` metres, identified by `identifier`.
    public init(center: CLLocationCoordinate2D, radius: CLLocationDistance, identifier: String) {
        self.center = center
        self.radius = radius
        super.init(identifier: identifier)
    }

    /// Whether `coordinate` lies inside the circle.
    open func contains(_ coordinate: CLLocationCoordinate2D) -> Bool {
        let point = Coordinate(latitude: coordinate.latitude, longitude: coordinate.longitude)
        return Coordinate(latitude: center.latitude, longitude: center.longitude).distance(to: point) <= radius
    }
}
#endif
