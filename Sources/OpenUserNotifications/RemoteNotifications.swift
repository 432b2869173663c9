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

/// Where every system hands the pushes meant for the app itself (background and VoIP pushes): the
/// app delegate's `application(_:didReceiveRemoteNotification:fetchCompletionHandler:)`, which the
/// UIKit part of the framework installs here when the app has an application delegate.
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

    /// The process's inbox.
    package static let shared = RemoteNotificationInbox()

    package init() {}

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
            if state.tokenHandler == nil { state.newToken = token }
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
