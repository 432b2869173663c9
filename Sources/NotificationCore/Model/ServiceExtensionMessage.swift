package import Foundation

/// One line of the conversation between the daemon and an app's service extension process: JSON, one
/// message per line, on the extension's standard input (from the daemon) and standard output (from the
/// extension). `Docs/service-extensions.md` describes it.
///
/// - From the daemon: `request` first (the push's request and the extension's time limit), then, if
///   its time is nearly up, `timeWillExpire`.
/// - From the extension: `content` (what to show) or `failure` (why there is none), once.
package struct ServiceExtensionMessage: Sendable, Hashable, Codable {
    package enum Kind: String, Sendable, Hashable, Codable {
        case request, timeWillExpire, content, failure
    }

    package var type: Kind
    package var request: NotificationRequest?
    package var timeLimit: TimeInterval?
    package var content: NotificationContent?
    package var reason: String?

    package init(type: Kind, request: NotificationRequest? = nil, timeLimit: TimeInterval? = nil, content: NotificationContent? = nil, reason: String? = nil) {
        self.type = type
        self.request = request
        self.timeLimit = timeLimit
        self.content = content
        self.reason = reason
    }

    package static func request(_ request: NotificationRequest, timeLimit: TimeInterval) -> Self {
        Self(type: .request, request: request, timeLimit: timeLimit)
    }

    package static let timeWillExpire = Self(type: .timeWillExpire)

    package static func content(_ content: NotificationContent) -> Self {
        Self(type: .content, content: content)
    }

    package static func failure(_ reason: String) -> Self {
        Self(type: .failure, reason: reason)
    }

    /// The message as one line, newline included.
    package func line() throws -> Data {
        var data = try JSONEncoder().encode(self)
        data.append(UInt8(ascii: "\n"))
        return data
    }

    /// The most bytes one message from an extension may take: a notification's content is bounded
    /// far below this (``RequestRules/maximumContentBytes``).
    package static let maximumLineBytes = 256 * 1024
}
