package import Foundation

/// The delivery log: what became of a push, stage by stage, from the provider's request to the
/// person's answer (`Docs/delivery-log.md`). The gateway records the stages it sees; the device's
/// daemon reports the rest up its link.
///
/// It records stages and reasons only: never the payload (only its size), never what the person typed.
package enum DeliveryLog {
    package enum Stage: String, Sendable, Hashable, Codable, CaseIterable {
        // On the gateway.
        /// The provider API answered `200`; the detail names the key (or certificate) that sent it.
        case accepted
        /// Durable, waiting for the device (held if it was not linked).
        case stored
        /// Accepted and never delivered: for now only and the device offline, expired on arrival, the
        /// device removed, the app unregistered.
        case dropped
        /// Replaced while stored by a newer push with the same `apns-collapse-id` (or, for an app that
        /// keeps only its latest push, by any newer one).
        case collapsed
        /// Sent on the device's link.
        case sent
        /// The device has it: durably received.
        case acknowledged
        /// Its `apns-expiration` passed before the device took it.
        case expired
        /// An emulator injected a fault for it (`Docs/emulator.md`); the detail says which.
        case injected

        // On the device.
        /// The app's service extension started preparing its content.
        case preparing
        /// The preparation ended; the detail says how (`prepared`, `timedOut`, `failed`, `interrupted`).
        case prepared
        /// The person was shown it; the detail says how (banner, list, lock screen, sound, badge).
        case presented
        /// The person was not shown it; the detail says why.
        case notShown
        /// Handed to the app's `didReceiveRemoteNotification` (a background or VoIP push).
        case handedToApp
        /// Held for the app: its background budget is spent, or it is being started.
        case heldForApp
        /// The app's handler finished; the detail is its result (`newData`, `noData`, `failed`).
        case completedByApp
        /// The person opened it.
        case opened
        /// The person chose an action; the detail is its identifier.
        case action
        /// The person replied; the detail is the action's identifier (never the text).
        case replied
        /// The person dismissed it.
        case dismissed
        /// It left the list without the person acting on it; the detail says why.
        case removed

        /// Whether the device reports it (the gateway records the others itself).
        package var isReportedByDevice: Bool {
            switch self {
            case .accepted, .stored, .dropped, .collapsed, .sent, .acknowledged, .expired, .injected: false
            default: true
            }
        }
    }

    /// One stage of one push.
    package struct Entry: Sendable, Hashable, Codable {
        package var stage: Stage
        package var at: Date
        package var detail: String?

        package init(_ stage: Stage, at: Date, detail: String? = nil) {
            self.stage = stage
            self.at = at
            self.detail = detail
        }
    }

    /// A stage a device reports for a push it received, named by the push's `apns-unique-id`.
    package struct Report: Sendable, Hashable, Codable {
        package var uniqueID: String
        package var stage: Stage
        /// Seconds since 1970.
        package var at: Double
        package var detail: String?

        package init(uniqueID: String, stage: Stage, at: Date, detail: String? = nil) {
            self.init(uniqueID: uniqueID, stage: stage, secondsSince1970: at.timeIntervalSince1970, detail: detail)
        }

        /// A report whose time is `secondsSince1970` as written (a `Date`, kept from 2001, does not
        /// always give those seconds back to the last bit).
        package init(uniqueID: String, stage: Stage, secondsSince1970: Double, detail: String? = nil) {
            self.uniqueID = uniqueID
            self.stage = stage
            self.at = secondsSince1970
            self.detail = detail
        }
    }

    /// The longest detail kept; longer ones are cut.
    package static let maximumDetailLength = 200
    /// The most stages kept per push; later ones are not recorded (a push cannot be made to fill the log).
    package static let maximumStagesPerPush = 64
}
