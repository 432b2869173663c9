extension APNs {
    /// A provider's `POST /3/device/<token>` once its headers have passed Apple's rules; what the
    /// gateway checks next (who may send to the topic, whether the token is registered) needs its store.
    package struct PushHeaders: Sendable, Hashable {
        /// The device token from the path, lower-cased hexadecimal.
        package var deviceToken: String
        /// The request's `apns-id`, as sent, or one made up for it.
        package var apnsID: String
        /// `apns-topic`; nil when absent, which only a certificate naming one topic allows.
        package var topic: String?
        package var pushType: PushType
        /// `apns-priority`, 10 when absent.
        package var priority: Int
        /// `apns-expiration` in seconds since 1970; 0 = deliver now or never; nil = the storage policy's.
        package var expiration: Int64?
        package var collapseID: String?

        package init(deviceToken: String, apnsID: String, topic: String?, pushType: PushType, priority: Int, expiration: Int64?, collapseID: String?) {
            self.deviceToken = deviceToken
            self.apnsID = apnsID
            self.topic = topic
            self.pushType = pushType
            self.priority = priority
            self.expiration = expiration
            self.collapseID = collapseID
        }
    }

    /// The headers a request may carry once at most.
    static let singleHeaders: Set<String> = [
        "authorization", "apns-push-type", "apns-id", "apns-expiration", "apns-priority", "apns-topic", "apns-collapse-id",
    ]

    /// The first part of Apple's checks: the method and the path, which decide whether this is a push
    /// at all; then whether any header is repeated.
    ///
    /// - Returns: the device token, lower-cased.
    package static func checkTarget(method: String, path: String, headers: [(name: String, value: String)]) -> Result<String, Rejection> {
        guard method == "POST" else { return .failure(Rejection(.methodNotAllowed)) }
        let prefix = "/3/device".utf8
        var token = path.utf8[...]
        guard token.starts(with: prefix) else { return .failure(Rejection(.badPath)) }
        token = token.dropFirst(prefix.count)
        guard token.isEmpty || token.first == UInt8(ascii: "/") else { return .failure(Rejection(.badPath)) }
        token = token.drop { $0 == UInt8(ascii: "/") }
        guard !token.isEmpty else { return .failure(Rejection(.missingDeviceToken)) }
        // Tokens are opaque hexadecimal bytes of no fixed length.
        var hasUpperCase = false
        for byte in token {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"): continue
            case UInt8(ascii: "A")...UInt8(ascii: "F"): hasUpperCase = true
            default: return .failure(Rejection(.badDeviceToken))
            }
        }
        guard token.count % 2 == 0 else { return .failure(Rejection(.badDeviceToken)) }
        for (index, header) in headers.enumerated() where singleHeaders.contains(header.name) {
            if headers[..<index].contains(where: { $0.name == header.name }) { return .failure(Rejection(.duplicateHeaders)) }
        }
        let text = Substring(token)
        return .success(hasUpperCase ? text.lowercased() : String(text))
    }

    /// The rest of Apple's header rules, for a request whose target passed ``checkTarget(method:path:headers:)``.
    ///
    /// - Parameters:
    ///   - headers: the request's headers, names lower-case as HTTP/2 has them.
    ///   - payloadBytes: the body's size.
    ///   - newID: makes the `apns-id` of a request that carries none.
    package static func checkHeaders(
        deviceToken: String,
        headers: [(name: String, value: String)],
        payloadBytes: Int,
        newID: () -> String
    ) -> Result<PushHeaders, Rejection> {
        func value(_ name: String) -> String? { headers.first { $0.name == name }?.value }

        let apnsID: String
        if let given = value("apns-id") {
            guard isCanonicalUUID(given) else { return .failure(Rejection(.badMessageId)) }
            apnsID = given
        } else {
            apnsID = newID()
        }

        let topic = value("apns-topic")
        if let topic, !isTopic(topic) { return .failure(Rejection(.badTopic)) }

        let pushType: PushType
        if let given = value("apns-push-type") {
            guard let known = PushType(rawValue: given) else { return .failure(Rejection(.invalidPushType)) }
            pushType = known
        } else {
            // Optional outside watchOS: the topic's suffix says which, else it is an alert.
            pushType = topic.flatMap(PushType.implied(byTopic:)) ?? .alert
        }
        if let topic {
            // A topic that names another type's suffix is a push of the wrong type; a topic that lacks
            // its type's suffix names the app's regular token, not this type's (APNs answers so).
            let implied = PushType.implied(byTopic: topic)
            if let implied, implied != pushType, pushType != .mdm { return .failure(Rejection(.invalidPushType)) }
            if pushType.topicSuffix != nil, implied == nil { return .failure(Rejection(.deviceTokenNotForTopic)) }
        }

        var expiration: Int64?
        if let given = value("apns-expiration") {
            guard !given.isEmpty, given.count <= 12, given.allSatisfy(\.isASCIIDigit), let seconds = Int64(given) else {
                return .failure(Rejection(.badExpirationDate))
            }
            expiration = seconds
        }

        var priority = 10
        if let given = value("apns-priority") {
            guard let number = Int(given), [1, 5, 10].contains(number), given.count <= 2 else { return .failure(Rejection(.badPriority)) }
            priority = number
        }
        guard pushType.allows(priority: priority) else { return .failure(Rejection(.badPriority)) }

        let collapseID = value("apns-collapse-id")
        // It becomes the notification's identifier on the device: an identifier's characters only.
        if let collapseID, collapseID.utf8.count > 64 || RequestRules.violation(inIdentifier: collapseID, what: "collapse identifier") != nil {
            return .failure(Rejection(.badCollapseId))
        }

        guard payloadBytes > 0 else { return .failure(Rejection(.payloadEmpty)) }
        guard payloadBytes <= pushType.maximumPayloadBytes else { return .failure(Rejection(.payloadTooLarge)) }

        return .success(PushHeaders(
            deviceToken: deviceToken, apnsID: apnsID, topic: topic, pushType: pushType, priority: priority, expiration: expiration, collapseID: collapseID
        ))
    }

    /// Checks a push's payload, whose size ``checkHeaders(deviceToken:headers:payloadBytes:newID:)``
    /// checked: a JSON object that every reader of the system reads, and reads the same way, within
    /// ``JSONLimits`` (see ``StrictJSONReader``). Anything else is refused with the reason APNs gives
    /// a request body it cannot read, `400 BadRequestPayload`, before it is stored.
    package static func checkPayload(_ payload: [UInt8]) -> Rejection? {
        StrictJSONReader().checkObject(payload) == nil ? nil : Rejection(.badRequestPayload)
    }

    /// 8-4-4-4-12 hexadecimal digits. Apple's documentation shows them lower-case; clients send
    /// `UUID().uuidString`, upper-case, and APNs takes it.
    package static func isCanonicalUUID(_ text: String) -> Bool {
        var count = 0
        for byte in text.utf8 {
            switch (count, byte) {
            case (8, UInt8(ascii: "-")), (13, UInt8(ascii: "-")), (18, UInt8(ascii: "-")), (23, UInt8(ascii: "-")): break
            case (8, _), (13, _), (18, _), (23, _): return false
            case (_, UInt8(ascii: "0")...UInt8(ascii: "9")), (_, UInt8(ascii: "a")...UInt8(ascii: "f")), (_, UInt8(ascii: "A")...UInt8(ascii: "F")): break
            default: return false
            }
            count += 1
            if count > 36 { return false }
        }
        return count == 36
    }

    /// A bundle identifier, with a push type's suffix or not (the suffixes are labels too): the
    /// daemon's rule for bundle identifiers.
    package static func isTopic(_ text: String) -> Bool {
        RequestRules.violation(inBundleIdentifier: text) == nil
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isWholeNumber }
}
