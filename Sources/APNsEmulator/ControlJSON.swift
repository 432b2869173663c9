import Foundation
import NotificationCore

/// The control API's JSON, both ways (`Docs/emulator.openapi.json`).
enum ControlJSON {
    // MARK: - Reading

    /// A number or a text in a request's JSON: a duration (`61m`, or seconds) or a time (ISO 8601,
    /// or seconds since 1970).
    enum Value: Decodable, Sendable {
        case number(Double)
        case text(String)

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let number = try? container.decode(Double.self) {
                self = .number(number)
            } else {
                self = .text(try container.decode(String.self))
            }
        }

        var duration: TimeInterval? {
            switch self {
            case .number(let seconds): seconds >= 0 && seconds.isFinite ? seconds : nil
            case .text(let text): EmulatorDuration.seconds(text)
            }
        }

        /// A time from 1970 to the clock's end (``EmulatorClock/latest``).
        var date: Date? {
            switch self {
            case .number(let seconds):
                guard seconds >= 0, seconds <= EmulatorClock.latest.timeIntervalSince1970 else { return nil }
                return Date(timeIntervalSince1970: seconds)
            case .text(let text):
                let formatter = ISO8601DateFormatter()
                formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
                let fractional = formatter.date(from: text)
                formatter.formatOptions = [.withInternetDateTime]
                guard let date = fractional ?? formatter.date(from: text) else { return nil }
                return date >= Date(timeIntervalSince1970: 0) && date <= EmulatorClock.latest ? date : nil
            }
        }
    }

    /// A request's body, and its fields.
    protocol ControlRequest: Decodable {
        static var fields: Set<String> { get }
    }

    /// The longest a duration may be, in seconds (some 317 years): beyond it, refused.
    static let longest: TimeInterval = 1e10

    /// `POST /v1/clock/advance`: `by` (a duration) or `to` (a time).
    struct Advance: ControlRequest {
        static let fields: Set<String> = ["by", "seconds", "to"]
        var by: Value?
        var seconds: Value?
        var to: Value?
    }

    /// `POST /v1/faults`.
    struct FaultRequest: ControlRequest {
        static let fields: Set<String> = ["action", "reason", "delay", "token", "topic", "requests", "from", "until", "for"]
        var action: String
        var reason: String?
        var delay: Value?
        var token: String?
        var topic: String?
        var requests: Int?
        var from: Value?
        var until: Value?
        var `for`: Value?
    }

    /// `POST /v1/devices`.
    struct DevicesRequest: ControlRequest {
        static let fields: Set<String> = ["topics", "count", "environment", "acknowledge"]
        var topics: [String]
        var count: Int?
        var environment: APNs.Environment?
        var acknowledge: Value?
    }

    /// A request's body as `T`; an empty body as `{}`. One of its fields given as `null` is refused,
    /// not read as left out; fields it does not have are ignored.
    static func decode<T: ControlRequest>(_ type: T.Type, from bytes: some Collection<UInt8>) throws(EmulatorError) -> T {
        if let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
           let null = T.fields.sorted().first(where: { object[$0] is NSNull }) {
            throw EmulatorError(.invalidRequest, "`\(null)` is null: give a value, or leave it out.")
        }
        do {
            return try JSONDecoder().decode(T.self, from: bytes.isEmpty ? Data("{}".utf8) : Data(bytes))
        } catch let DecodingError.keyNotFound(key, _) {
            throw EmulatorError(.invalidRequest, "The request needs `\(key.stringValue)` (Docs/emulator.openapi.json).")
        } catch let DecodingError.typeMismatch(_, context) {
            throw EmulatorError(.invalidRequest, "`\(context.codingPath.map(\.stringValue).joined(separator: "."))` has the wrong type (Docs/emulator.openapi.json).")
        } catch let DecodingError.dataCorrupted(context) where !context.codingPath.isEmpty {
            throw EmulatorError(.invalidRequest, "`\(context.codingPath.map(\.stringValue).joined(separator: "."))` has a value the emulator does not know (Docs/emulator.openapi.json).")
        } catch {
            throw EmulatorError(.invalidRequest, "The body is not the JSON object the request takes (Docs/emulator.openapi.json).")
        }
    }

    /// The fault a request scripts.
    static func fault(from request: FaultRequest, now: Date) throws(EmulatorError) -> Fault {
        // Every field given is read, whatever the action: a mistake in one is said, not ignored.
        let reason = try request.reason.map { text throws(EmulatorError) in try Self.reason(text) }
        let delay = try request.delay.map { value throws(EmulatorError) in
            guard let seconds = value.duration else { throw EmulatorError(.invalidRequest, "`delay` is a duration, such as \"2s\" or 2.") }
            return seconds
        }
        let action: Fault.Action
        switch request.action {
        case "status":
            guard let reason else {
                throw EmulatorError(.invalidRequest, "A status fault names APNs' `reason`, such as Unregistered, TooManyRequests or ServiceUnavailable.")
            }
            action = .status(reason)
        case "delay":
            guard let delay else { throw EmulatorError(.invalidRequest, "A delay fault says how long: `delay`, such as \"2s\" or 2.") }
            action = .delay(delay)
        case "goaway": action = .goAway(reason ?? .shutdown)
        case "reset": action = .resetStream
        case "close": action = .closeConnection
        case "offline": action = .offline
        case "uninstalled": action = .uninstalled
        default:
            throw EmulatorError(.invalidRequest, "There is no fault \(request.action): status, delay, goaway, reset, close, offline or uninstalled.")
        }
        guard request.token?.isEmpty != true, request.topic?.isEmpty != true else {
            throw EmulatorError(.invalidRequest, "`token` and `topic` name one: leave them out for every push.")
        }
        var fault = Fault(action: action, token: request.token, topic: request.topic, remaining: request.requests)
        fault.from = try request.from.map { value throws(EmulatorError) in try time(value, name: "from") }
        fault.until = try request.until.map { value throws(EmulatorError) in try time(value, name: "until") }
        if let value = request.for {
            guard let seconds = value.duration else {
                throw EmulatorError(.invalidRequest, "`for` is a duration after `from` (or now), such as \"10m\".")
            }
            guard seconds > 0 else { throw EmulatorError(.refused, "A fault's window lasts more than 0 seconds.") }
            guard fault.until == nil else { throw EmulatorError(.refused, "Give `for` or `until`, not both.") }
            guard seconds <= longest else { throw EmulatorError(.refused, "`for` is at most \(Int(longest)) seconds.") }
            fault.until = (fault.from ?? now).addingTimeInterval(min(seconds, EmulatorClock.latest.timeIntervalSince(fault.from ?? now) + 1))
        }
        return fault
    }

    /// A time given as `name`: one that cannot be read is refused as malformed, one out of the
    /// clock's reach (before 1970, after 9999) as refused.
    static func time(_ value: Value, name: String) throws(EmulatorError) -> Date {
        if let date = value.date { return date }
        let wellFormed = switch value {
        case .number(let seconds): seconds.isFinite
        case .text(let text): text.wholeMatch(of: /[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})/) != nil
        }
        guard wellFormed else { throw EmulatorError(.invalidRequest, "`\(name)` is a time: ISO 8601, or seconds since 1970.") }
        throw EmulatorError(.refused, "`\(name)` is out of the clock's reach: from 1970 to 9999, in UTC.")
    }

    static func reason(_ text: String) throws(EmulatorError) -> APNs.Reason {
        guard let reason = APNs.Reason.all.first(where: { $0.rawValue == text }) else {
            throw EmulatorError(.invalidRequest, "\(text) is not one of APNs' reasons, such as BadDeviceToken, Unregistered, TooManyRequests or ServiceUnavailable.")
        }
        return reason
    }

    static func acknowledgement(_ value: Value?) throws(EmulatorError) -> AcknowledgementTiming {
        switch value {
        case nil: return .immediately
        case .text(let text)?: if let acknowledgement = AcknowledgementTiming(text) { return acknowledgement }
        case .number(let seconds)?: if seconds >= 0, seconds <= 1_000_000 { return seconds == 0 ? .immediately : .after(seconds) }
        }
        throw EmulatorError(.invalidRequest, "`acknowledge` is immediately, never, or a delay such as \"2s\".")
    }

    // MARK: - Writing

    static func clock(_ emulator: Emulator) -> Data {
        let now = emulator.clock.now()
        return encode([
            "now": EmulatorClock.text(now), "seconds": now.timeIntervalSince1970, "ahead": emulator.clock.offset,
            "frozen": emulator.clock.isFrozen,
        ])
    }

    static func fault(_ fault: Fault, now: Date) -> Data { encode(faultObject(fault, now: now)) }

    static func faults(_ faults: [Fault], now: Date) -> Data { encode(["faults": faults.map { faultObject($0, now: now) }]) }

    private static func faultObject(_ fault: Fault, now: Date) -> [String: Any] {
        var object: [String: Any] = ["id": fault.id, "fired": fault.fired, "active": fault.isActive(at: now), "summary": fault.summary]
        switch fault.action {
        case .status(let reason):
            object["action"] = "status"
            object["reason"] = reason.rawValue
            object["status"] = reason.status
        case .delay(let seconds):
            object["action"] = "delay"
            object["delay"] = seconds
        case .goAway(let reason):
            object["action"] = "goaway"
            object["reason"] = reason.rawValue
        case .resetStream: object["action"] = "reset"
        case .closeConnection: object["action"] = "close"
        case .offline: object["action"] = "offline"
        case .uninstalled: object["action"] = "uninstalled"
        }
        if let token = fault.token { object["token"] = token }
        if let topic = fault.topic { object["topic"] = topic }
        if let remaining = fault.remaining { object["requests"] = remaining }
        if let from = fault.from { object["from"] = EmulatorClock.text(from) }
        if let until = fault.until { object["until"] = EmulatorClock.text(until) }
        return object
    }

    static func devices(_ devices: [SimulatedDevice]) -> Data {
        encode(["devices": devices.map { device -> [String: Any] in
            [
                "deviceID": device.deviceID, "tokens": device.tokens, "environment": device.environment.rawValue,
                "acknowledge": device.acknowledgement.text, "online": device.isOnline, "uninstalled": device.uninstalled.sorted(),
            ]
        }])
    }

    static func received(token: String, _ pushes: [ReceivedPush]) -> Data {
        encode(["token": token, "pushes": pushes.map { push -> [String: Any] in
            var headers: [String: Any] = ["apns-id": push.apnsID, "apns-push-type": push.pushType.rawValue, "apns-priority": push.priority]
            if let collapseID = push.collapseID { headers["apns-collapse-id"] = collapseID }
            if let uniqueID = push.uniqueID { headers["apns-unique-id"] = uniqueID }
            var object: [String: Any] = [
                "app": push.bundleIdentifier, "environment": push.environment.rawValue, "headers": headers,
                "acceptedAt": EmulatorClock.text(push.acceptedAt), "receivedAt": EmulatorClock.text(push.receivedAt),
                "expiresAt": EmulatorClock.text(push.expiresAt),
            ]
            // The payload as an object: it was checked to be one when accepted.
            object["payload"] = (try? JSONSerialization.jsonObject(with: Data(push.payload.utf8))) ?? push.payload
            return object
        }])
    }

    static func error(_ error: EmulatorError) -> Data {
        encode(["error": ["code": error.code.name, "message": error.message]])
    }

    static func encode(_ object: [String: Any]) -> Data {
        (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
    }
}
