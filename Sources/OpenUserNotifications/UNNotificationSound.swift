public import Foundation
package import NotificationCore

/// The name of a sound file, looked up where the system keeps the app's sounds.
public struct UNNotificationSoundName: RawRepresentable, Hashable, Sendable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
}

/// A sound played when a notification is delivered.
open class UNNotificationSound: NSObject, NSCopying, NSSecureCoding, @unchecked Sendable {
    // Sendable: every stored property is an immutable value.
    package let value: NotificationSound

    package init(value: NotificationSound) {
        self.value = value
        super.init()
    }

    /// Plays the file `name`, or the default sound when the file cannot be played.
    public convenience init(named name: UNNotificationSoundName) {
        self.init(value: NotificationSound(kind: .named(name.rawValue)))
    }

    /// The system's default notification sound.
    open class var `default`: UNNotificationSound { UNNotificationSound(value: NotificationSound(kind: .default)) }

    /// The system's default sound for critical alerts, at full volume.
    open class var defaultCritical: UNNotificationSound {
        UNNotificationSound(value: NotificationSound(kind: .default, isCritical: true))
    }

    /// The system's default ringtone.
    open class var defaultRingtone: UNNotificationSound { UNNotificationSound(value: NotificationSound(kind: .defaultRingtone)) }

    /// The default critical-alert sound at `volume`, from 0 (silent) to 1 (full).
    open class func defaultCriticalSound(withAudioVolume volume: Float) -> UNNotificationSound {
        UNNotificationSound(value: NotificationSound(kind: .default, isCritical: true, volume: volume))
    }

    /// A critical-alert sound from the file `name`.
    open class func criticalSoundNamed(_ name: UNNotificationSoundName) -> UNNotificationSound {
        UNNotificationSound(value: NotificationSound(kind: .named(name.rawValue), isCritical: true))
    }

    /// A critical-alert sound from the file `name` at `volume`, from 0 (silent) to 1 (full).
    open class func criticalSoundNamed(_ name: UNNotificationSoundName, withAudioVolume volume: Float) -> UNNotificationSound {
        UNNotificationSound(value: NotificationSound(kind: .named(name.rawValue), isCritical: true, volume: volume))
    }

    /// A ringtone from the file `name`.
    open class func ringtoneSoundNamed(_ name: UNNotificationSoundName) -> UNNotificationSound {
        UNNotificationSound(value: NotificationSound(kind: .ringtone(name.rawValue)))
    }

    /// Archives of this class can be read back safely.
    public class var supportsSecureCoding: Bool { true }

    /// Archives the sound.
    open func encode(with coder: NSCoder) {
        SecureCoding.encode(value, with: coder)
    }

    /// Reads an archived sound; `nil` when the archive is not one.
    public required convenience init?(coder: NSCoder) {
        guard let value = SecureCoding.decode(NotificationSound.self, from: coder) else { return nil }
        self.init(value: value)
    }

    open func copy(with zone: NSZone? = nil) -> Any { self }

    open override func isEqual(_ object: Any?) -> Bool {
        (object as? UNNotificationSound)?.value == value
    }

    open override var hash: Int { value.hashValue }
}
