package import NotificationCore

/// A failure of the daemon, with a code a program can switch on and a message that says what to do.
package struct DaemonError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure; new codes can be added without breaking anyone's `switch`.
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String, Hashable, Sendable {
            case appNotFound, appAlreadyRegistered, unauthorized, invalidRequest, notification
            case personAction, upgradeRequired, databaseUnreadable, storageFailed, gatewayUnavailable, gatewayNotConfigured
            case extensionNotExecutable, wrongPasscode, passcodeAttemptsExceeded, noContentExtension, extensionFailed, bodyTooLarge
            case appQuarantined
        }

        private let value: Value

        /// No app is registered under that bundle identifier.
        package static let appNotFound = Code(value: .appNotFound)
        /// An app with that bundle identifier is already registered.
        package static let appAlreadyRegistered = Code(value: .appAlreadyRegistered)
        /// The key is missing or does not belong to any app (or is not the administrator's).
        package static let unauthorized = Code(value: .unauthorized)
        /// The request is malformed: bad JSON, a missing field, a value out of range.
        package static let invalidRequest = Code(value: .invalidRequest)
        /// The notification system refused the call with a `UNError` code (see ``DaemonError/notificationFailure``).
        package static let notification = Code(value: .notification)
        /// The system refused what the person tried to do (see ``DaemonError/personRejection``).
        package static let personAction = Code(value: .personAction)
        /// The request's body is larger than the local API reads (2 MiB).
        package static let bodyTooLarge = Code(value: .bodyTooLarge)
        /// A WebSocket route was called without asking for the upgrade.
        package static let upgradeRequired = Code(value: .upgradeRequired)
        /// The database exists but cannot be read: it is corrupt, or not a daemon database.
        package static let databaseUnreadable = Code(value: .databaseUnreadable)
        /// The app's stored state cannot be read (a bug, a damaged row, a format of another version):
        /// the app is quarantined, and every other app goes on. `unotify apps reset` sets its state
        /// aside and starts it afresh; `unotify apps remove` removes it.
        package static let appQuarantined = Code(value: .appQuarantined)
        /// Writing to the database failed.
        package static let storageFailed = Code(value: .storageFailed)
        /// The daemon's push gateway cannot be reached now, or did not answer.
        package static let gatewayUnavailable = Code(value: .gatewayUnavailable)
        /// The daemon has no push gateway to link to (`unotify serve` has one; `unotify daemon --gateway`).
        package static let gatewayNotConfigured = Code(value: .gatewayNotConfigured)
        /// A service extension's executable is not a file the daemon can run.
        package static let extensionNotExecutable = Code(value: .extensionNotExecutable)
        /// The notification's category has no content extension, or its interface is closed.
        package static let noContentExtension = Code(value: .noContentExtension)
        /// The app's content extension did not start, crashed, or did not answer in time.
        package static let extensionFailed = Code(value: .extensionFailed)
        /// The passcode given to unlock the device, or to change its passcode, is not the device's.
        package static let wrongPasscode = Code(value: .wrongPasscode)
        /// Too many wrong passcodes in a row: no attempt is checked until the wait is over.
        package static let passcodeAttemptsExceeded = Code(value: .passcodeAttemptsExceeded)

        /// The code as it appears in the local API's problem documents, such as `appNotFound`.
        package var description: String { value.rawValue }
    }

    package var code: Code
    package var message: String
    /// For `.notification`: the refusal, with its `UNError` code.
    package var notificationFailure: NotificationFailure?
    /// For `.personAction`: why the system refused.
    package var personRejection: PersonActionRejection?
    /// For `.invalidRequest` and `.notification`: the rule the request broke, if it broke one.
    package var violation: RuleViolation?

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// A refusal with a `UNError` code; a request that broke a rule is an invalid request, with the
    /// nearest `UNError` code beside the rule.
    package init(_ failure: NotificationFailure) {
        self.init(failure.violation == nil ? .notification : .invalidRequest, failure.message)
        notificationFailure = failure
        violation = failure.violation
    }

    /// A request or categories that break one of the rules every client must follow.
    package init(_ violation: RuleViolation) {
        self.init(.invalidRequest, violation.message)
        self.violation = violation
    }

    package init(_ rejection: PersonActionRejection) {
        self.init(.personAction, rejection.description)
        personRejection = rejection
    }

    package var description: String { "\(code): \(message)" }
}

extension DaemonError {
    /// The error of a quarantined app: why, and the way out.
    package static func quarantined(_ bundleIdentifier: String, because reason: String) -> DaemonError {
        DaemonError(.appQuarantined, "\(bundleIdentifier) is quarantined: \(reason). Every other app goes on. "
            + "`unotify apps reset \(bundleIdentifier)` sets its stored state aside and starts it afresh; `unotify apps remove \(bundleIdentifier)` removes it.")
    }
}
