internal import Foundation

/// How the framework's classes archive themselves for `NSSecureCoding`: the JSON form of their value
/// (see NotificationCore's wire coding) under one key.
enum SecureCoding {
    private static let key = "OpenUserNotifications.value"

    static func encode(_ value: some Encodable, with coder: NSCoder) {
        guard let data = try? JSONEncoder().encode(value) else { return }
        coder.encode(data as NSData, forKey: key)
    }

    static func decode<Value: Decodable>(_ type: Value.Type, from coder: NSCoder) -> Value? {
        guard let data = coder.decodeObject(of: NSData.self, forKey: key) as Data? else { return nil }
        return try? JSONDecoder().decode(Value.self, from: data)
    }
}
