internal import Foundation
package import NotificationCore
internal import Synchronization

/// Why an app could not get a device token.
package enum RemoteRegistrationFailure: Error, Sendable, Hashable {
    /// The system has no push service at all (a daemon started without a gateway): the app cannot
    /// register, as an iOS app without the `aps-environment` entitlement cannot.
    case notConfigured(String)
    /// The push service cannot be reached now; registering again later may work.
    case unavailable(String)
}

/// Where every system hands the pushes meant for the app itself: background pushes for the app
/// delegate's `application(_:didReceiveRemoteNotification:fetchCompletionHandler:)`, which the UIKit
/// part of the framework installs in ``shared`` when the app has an application delegate, and VoIP
/// pushes for a `PKPushRegistry`'s delegate, which the PushKit part installs in ``voip``.
///
/// One per process, as an app has one application delegate. Pushes that arrive before a handler is
/// installed wait here for it, in order: an app started for a background push connects first and sets
/// its delegate just after.
package final class RemoteNotificationInbox: Sendable {
    package typealias Completion = @Sendable (BackgroundFetchResult) -> Void
    package typealias Handler = @Sendable (_ userInfo: [String: PropertyListValue], _ completion: @escaping Completion) -> Void

    private struct State {
        var handler: Handler?
        var waiting: [(userInfo: [String: PropertyListValue], completion: Completion)] = []
        var tokenHandler: (@Sendable (String) -> Void)?
        /// The newest token the system gave while no token handler was installed.
        var newToken: String?
    }

    private let state = Mutex(State())

    /// How many pushes wait for a handler at most.
    static let waitingLimit = 64

    /// The process's inbox for background pushes, which the app delegate's
    /// `application(_:didReceiveRemoteNotification:fetchCompletionHandler:)` takes.
    package static let shared = RemoteNotificationInbox()

    /// The process's inbox for VoIP pushes, which a `PKPushRegistry` wanting `.voIP` takes, as on iOS:
    /// VoIP pushes never reach the app delegate there.
    package static let voip = RemoteNotificationInbox(keepsTokenForLaterHandler: false)

    /// The inbox a push meant for the app itself goes to.
    package static func inbox(for remote: RemoteNotification) -> RemoteNotificationInbox {
        remote.isVoIP ? voip : shared
    }

    /// Tells both inboxes of a new device token (a VoIP registration uses the app's device token).
    package static func deviceTokenChanged(_ token: String) {
        shared.deviceTokenChanged(token)
        voip.deviceTokenChanged(token)
    }

    /// Whether a token given while no token handler is installed is kept for the next one.
    private let keepsTokenForLaterHandler: Bool

    /// - Parameter keepsTokenForLaterHandler: false for an inbox whose token handler is installed
    ///   only once its owner has just asked for the current token (PushKit's): a token kept from
    ///   before would be stale.
    package init(keepsTokenForLaterHandler: Bool = true) {
        self.keepsTokenForLaterHandler = keepsTokenForLaterHandler
    }

    /// Installs (or with `nil`, removes) the handler; what waited for one is handed to it now, in order.
    package func setHandler(_ handler: Handler?) {
        let waiting = state.withLock { state in
            state.handler = handler
            guard handler != nil else { return [(userInfo: [String: PropertyListValue], completion: Completion)]() }
            defer { state.waiting.removeAll() }
            return state.waiting
        }
        guard let handler else { return }
        for item in waiting { handler(item.userInfo, item.completion) }
    }

    /// Installs (or with `nil`, removes) what hears of a changed device token; a token changed before
    /// is handed to it now.
    package func setTokenHandler(_ handler: (@Sendable (String) -> Void)?) {
        let token = state.withLock { state in
            state.tokenHandler = handler
            guard handler != nil else { return String?.none }
            defer { state.newToken = nil }
            return state.newToken
        }
        if let handler, let token { handler(token) }
    }

    /// The system gave the app a new device token (the old one no longer reaches it).
    package func deviceTokenChanged(_ token: String) {
        let handler = state.withLock { state in
            if state.tokenHandler == nil, keepsTokenForLaterHandler { state.newToken = token }
            return state.tokenHandler
        }
        handler?(token)
    }

    /// Hands a push to the handler, or keeps it until there is one.
    package func deliver(_ userInfo: [String: PropertyListValue], completion: @escaping Completion) {
        let (handler, dropped) = state.withLock { state -> (Handler?, Completion?) in
            guard state.handler == nil else { return (state.handler, nil) }
            state.waiting.append((userInfo, completion))
            // An app that never installs a handler does not hoard pushes: past the bound the oldest
            // is finished with no data, as if its handler had nothing to fetch.
            return (nil, state.waiting.count > Self.waitingLimit ? state.waiting.removeFirst().completion : nil)
        }
        dropped?(.noData)
        handler?(userInfo, completion)
    }
}

extension RemoteNotificationInbox {
    /// A token's bytes, as UIKit and PushKit give them, from the hexadecimal the system keeps.
    package static func tokenData(hex: String) -> Data {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(hex.utf8.count / 2)
        var index = hex.startIndex
        while let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex), index != hex.endIndex {
            guard let byte = UInt8(hex[index..<next], radix: 16) else { break }
            bytes.append(byte)
            index = next
        }
        return Data(bytes)
    }

    /// Calls a push's completion at most once: the app may call its handler late, or twice, and the
    /// system has moved on after the first.
    package final class CompletionOnce: Sendable {
        private let completion: Completion
        private let called = Atomic<Bool>(false)

        package init(_ completion: @escaping Completion) {
            self.completion = completion
        }

        package func call(_ result: BackgroundFetchResult) {
            guard called.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else { return }
            completion(result)
        }
    }
}
