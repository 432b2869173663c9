package import NotificationCore

extension UNUserNotificationCenter {
    /// What became of a call handed to the app's delegates.
    package enum CallOutcome: Sendable, Equatable {
        /// A delegate took it; its answer goes to `reply` when it is given.
        case handed
        /// It waits for a delegate: there is none to hear a response or the settings request yet.
        case needsDelegate
    }

    /// Hands what the system asks of the app to its delegates (this center's for notifications, the
    /// app delegate's for background pushes) and gives `reply` each answer as the app's event stream
    /// carries it to the daemon. Both systems call the delegates here and nowhere else: the in-process
    /// one on its queue, the daemon's link on its delegate queue. `reply` may be called on any thread,
    /// once for each call that wants an answer.
    ///
    /// With no delegate, `willPresent` is answered `nil` at once (the app shows nothing in the
    /// foreground, as on Apple's platforms); a response and the settings request wait for one, as the
    /// caller decides.
    package func hand(_ call: AppCall, reply: @escaping @Sendable (LocalAPI.AppReply) -> Void) -> CallOutcome {
        Self.withBound(self) {
            switch call {
            case .willPresent(let ticket, let notification):
                guard let delegate = effectiveDelegate else {
                    reply(.willPresentAnswer(ticket: ticket, options: nil))
                    return .handed
                }
                delegate.userNotificationCenter(self, willPresent: UNNotification(notification)) { options in
                    reply(.willPresentAnswer(ticket: ticket, options: options.rawValue))
                }
            case .response(let ticket, let response):
                guard let delegate = effectiveDelegate else { return .needsDelegate }
                delegate.userNotificationCenter(self, didReceive: UNNotificationResponse.make(response)) {
                    reply(.responseCompleted(ticket: ticket))
                }
            case .openSettings(let notification):
                guard let delegate = effectiveDelegate else { return .needsDelegate }
                delegate.userNotificationCenter(self, openSettingsFor: notification.map(UNNotification.init))
            case .remoteNotification(let ticket, let remote):
                RemoteNotificationInbox.inbox(for: remote).deliver(remote.userInfo) { result in
                    reply(.remoteNotificationCompleted(ticket: ticket, result: result))
                }
            }
            return .handed
        }
    }
}
