extension APNs {
    /// The values of the `apns-push-type` header, with what Apple ties to each: the suffix its
    /// `apns-topic` carries, the payload limit and the priorities it may be sent with.
    package enum PushType: String, Sendable, Hashable, CaseIterable, Codable {
        case alert
        case background
        case complication
        case controls
        case fileprovider
        case liveactivity
        case location
        case mdm
        case pushtotalk
        case voip
        case widgets

        /// What follows the bundle identifier in `apns-topic` for this type; nil when the topic is
        /// the bundle identifier itself.
        package var topicSuffix: String? {
            switch self {
            case .alert, .background, .mdm: nil
            case .complication: ".complication"
            case .controls: ".push-type.controls"
            case .fileprovider: ".pushkit.fileprovider"
            case .liveactivity: ".push-type.liveactivity"
            case .location: ".location-query"
            case .pushtotalk: ".voip-ptt"
            case .voip: ".voip"
            case .widgets: ".push-type.widgets"
            }
        }

        /// The largest payload, in bytes: 5 KB for VoIP, 4 KB for every other type.
        package var maximumPayloadBytes: Int { self == .voip ? 5120 : 4096 }

        /// Whether `priority` may be sent with this type. A background push must not ask to be sent
        /// at once ("Using priority 10 is an error"); a Live Activity update is 5 or 10.
        package func allows(priority: Int) -> Bool {
            switch self {
            case .background: priority == 5 || priority == 1
            case .liveactivity: priority == 5 || priority == 10
            default: priority == 10 || priority == 5 || priority == 1
            }
        }

        /// The type whose suffix `topic` ends with, if any: the longest suffix wins, as
        /// `.voip-ptt` and `.voip` share a beginning.
        package static func implied(byTopic topic: String) -> PushType? {
            var implied: (type: PushType, suffixBytes: Int)?
            for type in allCases {
                guard let suffix = type.topicSuffix?.utf8, topic.utf8.count >= suffix.count, topic.utf8.suffix(suffix.count).elementsEqual(suffix),
                      suffix.count > implied?.suffixBytes ?? 0 else { continue }
                implied = (type, suffix.count)
            }
            return implied?.type
        }
    }
}
