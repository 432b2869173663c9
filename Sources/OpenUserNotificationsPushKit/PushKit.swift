#if canImport(PushKit)
// On Apple's platforms the app uses PushKit itself.
@_exported public import PushKit
#else
public import Foundation
public import Dispatch
internal import NotificationCore
internal import OpenUserNotifications

/// A kind of push a ``PKPushRegistry`` can receive, as PushKit's `PKPushType`.
///
/// Only ``voIP`` pushes reach an app here; the other kinds exist so that code naming them builds.
public struct PKPushType: Hashable, RawRepresentable, Sendable {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public init(_ rawValue: String) {
        self.rawValue = rawValue
    }

    /// Pushes for a call (`apns-push-type: voip`, topic `<bundle identifier>.voip`).
    public static let voIP = PKPushType(rawValue: "PKPushTypeVoIP")
    /// Pushes for a watch complication (watchOS; never delivered here).
    public static let complication = PKPushType(rawValue: "PKPushTypeComplication")
    /// Pushes for a file provider extension (never delivered here).
    public static let fileProvider = PKPushType(rawValue: "PKPushTypeFileProvider")
}

/// The token a provider sends a registry's pushes to, as PushKit's `PKPushCredentials`.
open class PKPushCredentials: NSObject, @unchecked Sendable {
    /// The kind of push the token is for.
    open private(set) var type: PKPushType
    /// The token's bytes; a provider puts them in `/3/device/<token>` as hexadecimal.
    open private(set) var token: Data

    init(type: PKPushType, token: Data) {
        self.type = type
        self.token = token
    }
}

/// A push a registry received, as PushKit's `PKPushPayload`.
open class PKPushPayload: NSObject, @unchecked Sendable {
    /// The kind of push.
    open private(set) var type: PKPushType
    /// The whole JSON payload the provider sent, `aps` included.
    open private(set) var dictionaryPayload: [AnyHashable: Any]

    init(type: PKPushType, dictionaryPayload: [AnyHashable: Any]) {
        self.type = type
        self.dictionaryPayload = dictionaryPayload
    }
}

/// What a ``PKPushRegistry`` tells the app, as PushKit's `PKPushRegistryDelegate`. Only the token
/// method is required; the others have defaults that do what iOS does when an app leaves them out.
public protocol PKPushRegistryDelegate: NSObjectProtocol {
    /// The registry has a token for `type` (at registration, and again whenever it changes): send it
    /// to the app's provider.
    func pushRegistry(_ registry: PKPushRegistry, didUpdate pushCredentials: PKPushCredentials, for type: PKPushType)
    /// A push arrived: handle it (on iOS 13 and later, report the call it announces) and call
    /// `completion` when done.
    func pushRegistry(_ registry: PKPushRegistry, didReceiveIncomingPushWith payload: PKPushPayload, for type: PKPushType,
                      completion: @escaping () -> Void)
    /// The iOS 8 form, without a completion: called when the app does not implement the one above.
    /// (Deprecated by Apple since iOS 11; not marked so here, so that apps still using it build cleanly.)
    func pushRegistry(_ registry: PKPushRegistry, didReceiveIncomingPushWith payload: PKPushPayload, for type: PKPushType)
    /// The token for `type` no longer reaches the app (it stopped wanting those pushes).
    func pushRegistry(_ registry: PKPushRegistry, didInvalidatePushTokenFor type: PKPushType)
}

extension PKPushRegistryDelegate {
    public func pushRegistry(_ registry: PKPushRegistry, didReceiveIncomingPushWith payload: PKPushPayload, for type: PKPushType,
                             completion: @escaping () -> Void) {
        pushRegistry(registry, didReceiveIncomingPushWith: payload, for: type)
        completion()
    }

    public func pushRegistry(_ registry: PKPushRegistry, didReceiveIncomingPushWith payload: PKPushPayload, for type: PKPushType) {}

    public func pushRegistry(_ registry: PKPushRegistry, didInvalidatePushTokenFor type: PKPushType) {}
}

/// Registers the app for VoIP pushes and hands them to its delegate, as PushKit's `PKPushRegistry`.
///
/// ```swift
/// let registry = PKPushRegistry(queue: nil)
/// registry.delegate = self
/// registry.desiredPushTypes = [.voIP]
/// ```
///
/// The token is the app's device token on the push gateway the device is linked to, the one
/// `registerForRemoteNotifications()` gives; a provider sends with `apns-push-type: voip` and the topic
/// `<bundle identifier>.voip`. VoIP pushes reach the registry's delegate and never the app delegate,
/// as on iOS; one that arrives before a registry wants `.voIP` waits for it. Delegate methods run on
/// the registry's queue (the main queue when it is `nil`).
open class PKPushRegistry: NSObject, @unchecked Sendable {
    private let queue: DispatchQueue
    private let lock = NSLock()
    private weak var _delegate: (any PKPushRegistryDelegate)?
    private var _desiredPushTypes: Set<PKPushType>?
    private var voipToken: Data?
    /// Counts changes of `desiredPushTypes`, so that an answer to an earlier registration is ignored.
    private var registration = 0

    /// Creates a registry whose delegate is called on `queue` (the main queue when `nil`).
    public init(queue: DispatchQueue?) {
        self.queue = queue ?? .main
        super.init()
    }

    /// Who hears of tokens and pushes.
    open weak var delegate: (any PKPushRegistryDelegate)? {
        get { lock.withLock { _delegate } }
        set { lock.withLock { _delegate = newValue } }
    }

    /// The kinds of push the app wants. Setting `.voIP` registers the app: the delegate hears its
    /// token, then its pushes. Setting it without `.voIP` (or `nil`) stops them and invalidates the
    /// token.
    open var desiredPushTypes: Set<PKPushType>? {
        get { lock.withLock { _desiredPushTypes } }
        set { setDesiredPushTypes(newValue) }
    }

    /// The token for `type`, once the registry has one.
    open func pushToken(for type: PKPushType) -> Data? {
        guard type == .voIP else { return nil }
        return lock.withLock { voipToken }
    }

    private func setDesiredPushTypes(_ types: Set<PKPushType>?) {
        let wantsVoIP = types?.contains(.voIP) ?? false
        let (wanted, registration, invalidated) = lock.withLock {
            let wanted = _desiredPushTypes?.contains(.voIP) ?? false
            _desiredPushTypes = types
            self.registration += 1
            let invalidated = wanted && !wantsVoIP && voipToken != nil
            if !wantsVoIP { voipToken = nil }
            return (wanted, self.registration, invalidated)
        }
        guard wantsVoIP else {
            if wanted {
                RemoteNotificationInbox.voip.setHandler(nil)
                RemoteNotificationInbox.voip.setTokenHandler(nil)
            }
            if invalidated { callDelegate { $0.pushRegistry(self, didInvalidatePushTokenFor: .voIP) } }
            return
        }
        UNUserNotificationCenter.current().backend.registerForRemoteNotifications { [weak self] result in
            guard let self, case .success(let token) = result else { return }
            // PushKit says nothing of a failed registration: the delegate just never gets a token.
            self.tokenChanged(token, registration: registration)
        }
    }

    /// The registration for `.voIP` got its token (or the system gave a new one): the delegate hears
    /// it, then the pushes that waited.
    private func tokenChanged(_ token: String, registration: Int) {
        let data = RemoteNotificationInbox.tokenData(hex: token)
        let (isCurrent, isNew) = lock.withLock {
            guard self.registration == registration else { return (false, false) }
            defer { voipToken = data }
            return (true, voipToken != data)
        }
        guard isCurrent else { return }
        // The delegate hears of a token when it is new, not each time the system says it again.
        if isNew { callDelegate { $0.pushRegistry(self, didUpdate: PKPushCredentials(type: .voIP, token: data), for: .voIP) } }
        // Installed once the token is told, so that the delegate hears of the token before any push.
        queue.async { [weak self] in
            guard let self, self.lock.withLock({ self.registration == registration }) else { return }
            RemoteNotificationInbox.voip.setTokenHandler { [weak self] token in self?.tokenChanged(token, registration: registration) }
            RemoteNotificationInbox.voip.setHandler { [weak self] userInfo, completion in
                guard let self else { return completion(.noData) }
                self.deliver(userInfo, completion: completion)
            }
        }
    }

    private func deliver(_ userInfo: [String: PropertyListValue], completion: @escaping RemoteNotificationInbox.Completion) {
        let payload = PKPushPayload(type: .voIP, dictionaryPayload: PropertyListValue.userInfo(from: userInfo))
        let once = RemoteNotificationInbox.CompletionOnce(completion)
        queue.async { [self] in
            guard let delegate = self.delegate else { return once.call(.noData) }
            delegate.pushRegistry(self, didReceiveIncomingPushWith: payload, for: .voIP) { once.call(.newData) }
        }
    }

    private func callDelegate(_ body: @escaping @Sendable (any PKPushRegistryDelegate) -> Void) {
        queue.async { [self] in
            if let delegate = self.delegate { body(delegate) }
        }
    }
}

#endif
