package import Foundation
package import NotificationCore

/// A device token the gateway issued: one app, on one device, in one environment.
/// What the gateway's operator decided about a device: retired (its tokens expired) or blocked.
package struct DeviceStanding: Sendable, Hashable {
    /// When the device was removed: its tokens answer `410 ExpiredToken` with this time.
    package var removedAt: Date?
    /// Whether pushes to it are blocked: `403 Forbidden`.
    package var isDisabled: Bool

    package init(removedAt: Date? = nil, isDisabled: Bool = false) {
        self.removedAt = removedAt
        self.isDisabled = isDisabled
    }
}

package struct Registration: Sendable, Hashable {
    /// The token, lower-case hexadecimal, as providers send it in the path.
    package var token: String
    package var deviceID: String
    package var bundleIdentifier: String
    package var environment: APNs.Environment
    package var registeredAt: Date
    /// When the app unregistered or was removed from the device: pushes to the token then answer
    /// `410 Unregistered` with this time.
    package var unregisteredAt: Date?
    /// When its device last held a link to the gateway, as read with the token (nil: not since it
    /// was issued, or not read): with ``registeredAt``, what a token's expiry counts from.
    package var deviceLastLinkedAt: Date?

    package init(token: String, deviceID: String, bundleIdentifier: String, environment: APNs.Environment, registeredAt: Date, unregisteredAt: Date? = nil,
                 deviceLastLinkedAt: Date? = nil) {
        self.token = token
        self.deviceID = deviceID
        self.bundleIdentifier = bundleIdentifier
        self.environment = environment
        self.registeredAt = registeredAt
        self.unregisteredAt = unregisteredAt
        self.deviceLastLinkedAt = deviceLastLinkedAt
    }

    /// The last sign of its device: the later of its last link and the token's issue.
    package var lastSeenAt: Date { max(registeredAt, deviceLastLinkedAt ?? registeredAt) }
}

/// A push the gateway accepted and keeps until the device acknowledges it or it expires.
package struct QueuedPush: Sendable, Hashable {
    /// The order the device receives pushes in; assigned by the store, 0 until then.
    package var sequence: Int64
    package var deviceID: String
    package var token: String
    package var bundleIdentifier: String
    package var environment: APNs.Environment
    package var apnsID: String
    package var pushType: APNs.PushType
    package var priority: Int
    /// Until when it may be delivered: `apns-expiration`, or the gateway's time to live when the
    /// provider gave none.
    package var expiresAt: Date
    package var collapseID: String?
    package var payload: [UInt8]
    package var receivedAt: Date
    /// Whether it replaces every push of its token still queued: its app keeps only the latest, as
    /// APNs stores one notification per app for an offline device.
    package var replacesQueued = false
    /// Whether it waits for its device to link before it gets its place in the device's order: pushes
    /// stored for an offline device are sent, when it links, highest priority first (see
    /// ``GatewayStore/promoteHeld(deviceID:now:limit:)``).
    package var held = false
    /// Its `apns-unique-id`: the delivery log's name for it. Nil for a push stored before the gateway
    /// kept a log (such a push is not logged).
    package var uniqueID: String?
    /// Who sent it, for the delivery log: nil writes no log.
    package var sender: Sender?
    /// Why it is accepted and not kept (it is only logged): nil for a push that is stored.
    package var droppedBecause: String?
    /// The broadcast channel it was sent to, for a broadcast's push: its channel's next message
    /// replaces it, on a channel that stores its most recent one.
    package var channelID: String?

    /// Who sent a push: the team, and the key (or certificate) that authenticated the provider.
    package struct Sender: Sendable, Hashable {
        package var teamID: String
        /// `key <key id>`, or `certificate`.
        package var credential: String

        package init(teamID: String, credential: String) {
            self.teamID = teamID
            self.credential = credential
        }
    }

    package init(
        sequence: Int64 = 0, deviceID: String, token: String, bundleIdentifier: String, environment: APNs.Environment, apnsID: String,
        pushType: APNs.PushType, priority: Int, expiresAt: Date, collapseID: String?, payload: [UInt8], receivedAt: Date
    ) {
        self.sequence = sequence
        self.deviceID = deviceID
        self.token = token
        self.bundleIdentifier = bundleIdentifier
        self.environment = environment
        self.apnsID = apnsID
        self.pushType = pushType
        self.priority = priority
        self.expiresAt = expiresAt
        self.collapseID = collapseID
        self.payload = payload
        self.receivedAt = receivedAt
    }
}

/// One push as the delivery log keeps it: what it was (never its payload, only its size), who sent
/// it, and every stage it went through, in the order the gateway learned of them.
package struct DeliveryRecord: Sendable, Hashable {
    package var uniqueID: String
    package var apnsID: String
    package var teamID: String
    package var credential: String
    package var bundleIdentifier: String
    package var environment: APNs.Environment
    package var deviceID: String
    package var token: String
    package var pushType: APNs.PushType
    package var priority: Int
    package var payloadBytes: Int
    package var collapseID: String?
    package var expiresAt: Date
    package var stages: [DeliveryLog.Entry]

    package init(
        uniqueID: String, apnsID: String, teamID: String, credential: String, bundleIdentifier: String, environment: APNs.Environment,
        deviceID: String, token: String, pushType: APNs.PushType, priority: Int, payloadBytes: Int, collapseID: String?, expiresAt: Date,
        stages: [DeliveryLog.Entry]
    ) {
        self.uniqueID = uniqueID
        self.apnsID = apnsID
        self.teamID = teamID
        self.credential = credential
        self.bundleIdentifier = bundleIdentifier
        self.environment = environment
        self.deviceID = deviceID
        self.token = token
        self.pushType = pushType
        self.priority = priority
        self.payloadBytes = payloadBytes
        self.collapseID = collapseID
        self.expiresAt = expiresAt
        self.stages = stages
    }
}

/// A broadcast channel: one app's, in one environment (APNs' channel management API).
package struct BroadcastChannel: Sendable, Hashable {
    /// Base64 of 16 random bytes: never given twice.
    package var channelID: String
    package var bundleIdentifier: String
    package var environment: APNs.Environment
    package var settings: APNs.ChannelSettings
    package var createdAt: Date

    package init(channelID: String, bundleIdentifier: String, environment: APNs.Environment, settings: APNs.ChannelSettings, createdAt: Date) {
        self.channelID = channelID
        self.bundleIdentifier = bundleIdentifier
        self.environment = environment
        self.settings = settings
        self.createdAt = createdAt
    }
}

/// A message sent to a channel, stored once for each subscriber.
package struct Broadcast: Sendable, Hashable {
    package var channel: BroadcastChannel
    /// Its `apns-request-id`: the `apns-id` each subscriber's push carries.
    package var requestID: String
    package var priority: Int
    package var expiresAt: Date
    package var payload: [UInt8]
    package var receivedAt: Date

    package init(channel: BroadcastChannel, requestID: String, priority: Int, expiresAt: Date, payload: [UInt8], receivedAt: Date) {
        self.channel = channel
        self.requestID = requestID
        self.priority = priority
        self.expiresAt = expiresAt
        self.payload = payload
        self.receivedAt = receivedAt
    }

    /// The token its pushes carry: one per channel, never a device token.
    package var token: String { "channel:" + channel.channelID }
}

/// A team's signing key as the store keeps it: the public key in PEM.
package struct StoredKey: Sendable, Hashable {
    package var keyID: String
    package var teamID: String
    package var environment: APNs.Environment?
    package var bundleIdentifiers: Set<String>?
    package var publicKeyPEM: String

    package init(keyID: String, teamID: String, environment: APNs.Environment?, bundleIdentifiers: Set<String>?, publicKeyPEM: String) {
        self.keyID = keyID
        self.teamID = teamID
        self.environment = environment
        self.bundleIdentifiers = bundleIdentifiers
        self.publicKeyPEM = publicKeyPEM
    }
}

/// Everything the push gateway keeps, by capability: its providers (``ProviderStore``), devices and
/// the tokens issued to their apps (``DeviceStore``), the pushes waiting for a device
/// (``PushQueueStore``), broadcast channels (``ChannelStore``), the delivery log
/// (``DeliveryLogStore``), and what several nodes sharing one store coordinate (``NodeCoordination``).
///
/// Every method is durable when it returns (a crash after it loses nothing it wrote). Both
/// implementations, SQLite (one node) and PostgreSQL (several), pass the same suites in the tests,
/// one or more per capability: `GatewayStoreConformanceTests` (providers, devices and tokens, the push
/// queue), `GatewayStoreChannelTests`, `GatewayStoreDeliveryLogTests`, and `SeveralNodesTests` with
/// `PostgresGatewayTests` for the nodes.
package protocol GatewayStore: ProviderStore, DeviceStore, PushQueueStore, ChannelStore, DeliveryLogStore, NodeCoordination, ChangeAnnouncement {}

/// How a change made beside the running nodes (`unotify gateway teams|apps|keys|certificates|devices`,
/// which write the store) is honoured by every node before the command returns: the command
/// announces it (a number, one more each time), each node reads the providers and devices again when
/// the number changes (it looks every 50 ms) and notes the number it has read, and the command waits
/// until no node that runs is behind.
package protocol ChangeAnnouncement: Sendable {
    /// Announces a change made just before: returns its number.
    func announceChange() async throws(GatewayError) -> Int64
    /// The number of the last change announced (0: none yet).
    func changeNumber() async throws(GatewayError) -> Int64
    /// Notes that this node has read everything up to change `number`, and that it runs.
    func noteChangeRead(_ number: Int64) async throws(GatewayError)
    /// How many nodes that run now (not this store's own) have not read change `number` yet: those
    /// that said so in the last ``ChangeAnnouncement/liveness`` seconds.
    func nodesBehind(_ number: Int64) async throws(GatewayError) -> Int
    /// This node stops: no command waits for it any more.
    func leave() async
}

extension ChangeAnnouncement {
    /// How long a node counts as running after it last said so (it says so every 5 s).
    package static var liveness: TimeInterval { 15 }
}

/// Teams, their keys and apps: who may send to which topics.
package protocol ProviderStore: Sendable {
    func addTeam(_ teamID: String, name: String) async throws(GatewayError)
    func teams() async throws(GatewayError) -> [(teamID: String, name: String)]
    func addKey(_ key: StoredKey) async throws(GatewayError)
    func removeKey(_ keyID: String) async throws(GatewayError)
    func addApp(_ bundleIdentifier: String, team teamID: String) async throws(GatewayError)
    func removeApp(_ bundleIdentifier: String) async throws(GatewayError)
    /// Whether the app's pushes are kept as APNs keeps them, only the latest per device (`true`), or
    /// every unexpired one (`false`, the default).
    func setKeepsLatestOnly(_ bundleIdentifier: String, _ latestOnly: Bool) async throws(GatewayError)
    /// The apps that keep only their latest push per device.
    func appsKeepingLatestOnly() async throws(GatewayError) -> Set<String>
    /// Every key and every team's apps.
    func providers() async throws(GatewayError) -> (keys: [StoredKey], appsByTeam: [String: Set<String>])
}

/// Devices enrolled to link, and the tokens issued to their apps.
package protocol DeviceStore: Sendable {
    func addDevice(_ deviceID: String, secretHash: String, at date: Date) async throws(GatewayError)
    /// The device's secret hash, or nil for a device that does not exist or was removed.
    func deviceSecretHash(_ deviceID: String) async throws(GatewayError) -> String?
    /// Retires a device: it can no longer link, its queued pushes are dropped, its tokens expire.
    func removeDevice(_ deviceID: String, at date: Date) async throws(GatewayError)
    /// Blocks (or unblocks) pushes to a device.
    func setDeviceDisabled(_ deviceID: String, _ disabled: Bool) async throws(GatewayError)
    /// The devices that were removed or are disabled (every other device is in good standing).
    func deviceStandings() async throws(GatewayError) -> [String: DeviceStanding]
    /// Records a token; registering the same device, app and environment again returns the token
    /// already issued, unless it was unregistered (then the new one replaces it).
    func register(_ registration: Registration) async throws(GatewayError) -> Registration
    /// The registrations of these tokens that exist, by token, read together (tokens never issued
    /// are absent).
    func registrations(tokens: [String]) async throws(GatewayError) -> [String: Registration]
    /// Marks every token of the app on the device unregistered at `date`; the pushes queued for them
    /// are dropped, the delivery log saying `reason`.
    func unregister(deviceID: String, bundleIdentifier: String, at date: Date, because reason: String) async throws(GatewayError)
    /// The apps of the device that hold a token not unregistered.
    func registeredApps(of deviceID: String) async throws(GatewayError) -> Set<String>
    /// Records that these devices held a link at `date` (linked, unlinked, or still linked): their
    /// tokens' expiry counts from the last such time.
    func noteLinked(_ deviceIDs: [String], at date: Date) async throws(GatewayError)
}

/// The pushes waiting for their device, in its order, until it acknowledges them or they expire.
package protocol PushQueueStore: Sendable {
    /// Stores pushes in one transaction and returns the stored ones with their sequence numbers, in
    /// order. A push with a collapse identifier replaces a queued one of the same token and identifier.
    /// A push with a ``QueuedPush/sender`` is logged (accepted, then stored or dropped; a push it
    /// replaces, collapsed, all at `date`); one with ``QueuedPush/droppedBecause`` is only logged.
    func enqueue(_ pushes: [QueuedPush], at date: Date) async throws(GatewayError) -> [QueuedPush]
    /// ``enqueue(_:at:)``, its result handed to `completion` (on any thread) once durable: a store
    /// that can, without a task (see `SQLiteGatewayStore`); one that cannot, in a task of `tasks`.
    func enqueue(_ pushes: [QueuedPush], at date: Date, tasks: OwnedTasks, completion: @escaping @Sendable (Result<[QueuedPush], GatewayError>) -> Void)
    /// ``enqueue(_:at:)``, calling `ordered` (at most once) as soon as the pushes' places in their
    /// devices' orders are taken, before they are durable: from then on, a batch stored at the same
    /// time for any of the same devices comes after them in each device's order and is durable after
    /// them. A store that writes several batches at once (PostgreSQL's) lets the next one begin then;
    /// one that writes a batch at a time calls it once the batch is durable.
    func enqueue(_ pushes: [QueuedPush], at date: Date, ordered: @escaping @Sendable () -> Void) async throws(GatewayError) -> [QueuedPush]
    /// The device's queued pushes after `sequence`, oldest first, that have not expired at `now`;
    /// held pushes are not among them until they are promoted.
    func pushes(for deviceID: String, after sequence: Int64, now: Date, limit: Int) async throws(GatewayError) -> [QueuedPush]
    /// Gives up to `limit` of the device's held pushes (unexpired at `now`) their place in its order,
    /// highest priority first and, among equals, in the order they came: each gets a sequence after
    /// every one given so far. Returns how many it promoted.
    func promoteHeld(deviceID: String, now: Date, limit: Int) async throws(GatewayError) -> Int
    /// Forgets, for each acknowledgement (one per device), the device's pushes up to and including its
    /// sequence: the device has them (logged as acknowledged at its time, after the `sent` stages
    /// given). Held pushes stay. One transaction for all: many devices' acknowledgements share a commit.
    /// It need not wait for the disk: a store may lose it in a power cut or a crash of its database
    /// server (never in a crash of the gateway), and the pushes are then sent again, which the device
    /// recognizes by their sequence.
    func acknowledge(_ acknowledgements: [Acknowledgement]) async throws(GatewayError)
    /// Notes that a device's link ended with the push at `sequence` the oldest it had not taken (it
    /// closed on an error, or went away without a close): one more try of that push. At the `limit`th
    /// the push is dropped, logged `dropped` with `reason` (and the tries), so that no push is sent
    /// again forever; returns whether it was. A push no longer stored changes nothing.
    func noteNotTaken(deviceID: String, sequence: Int64, reason: String, limit: Int, at date: Date) async throws(GatewayError) -> Bool
    /// Forgets pushes that expired by `date` (logged as expired); returns how many.
    func removeExpired(before date: Date) async throws(GatewayError) -> Int
    /// How many pushes are stored: queued in their device's order, and held for a device not linked.
    func storedPushCounts() async throws(GatewayError) -> (queued: Int, held: Int)
}

/// Broadcast channels, their subscribers, and a broadcast stored for each.
package protocol ChannelStore: Sendable {
    /// Creates a channel; throws `limitReached` when its app has `limit` channels in its environment.
    func createChannel(_ channel: BroadcastChannel, limit: Int) async throws(GatewayError)
    /// The channel, or nil for one that does not exist (or was deleted).
    func channel(_ channelID: String) async throws(GatewayError) -> BroadcastChannel?
    /// Deletes a channel and its subscriptions (what was stored for subscribers stays); throws
    /// `notFound` for a channel that does not exist.
    func deleteChannel(_ channelID: String) async throws(GatewayError)
    /// The identifiers of the app's channels in `environment`, oldest first.
    func channels(of bundleIdentifier: String, environment: APNs.Environment) async throws(GatewayError) -> [String]
    /// Subscribes (or unsubscribes) the app on the device to the channel; throws `notFound` for a
    /// channel that is not the app's in `environment`.
    func setSubscribed(_ subscribed: Bool, deviceID: String, bundleIdentifier: String, environment: APNs.Environment, channelID: String,
                       at date: Date) async throws(GatewayError)
    /// Stores the broadcast for each subscriber of its channel (not removed, not disabled), in one
    /// transaction: for a device in `linked` (linked to this node) or linked to another node, in its
    /// order at once; for any other, held, or, on a channel that stores nothing, not at all. On a
    /// channel that stores its most recent message, it replaces the channel's message still stored
    /// for each. Returns the devices it was stored for (`true`: held).
    func enqueue(_ broadcast: Broadcast, linked: Set<String>) async throws(GatewayError) -> [String: Bool]
}

/// What became of each logged push, from the gateway and from its device.
package protocol DeliveryLogStore: Sendable {
    /// Records stages of logged pushes (pushes not in the log are skipped): the gateway's own, such
    /// as `sent` on a link that closed before the device acknowledged.
    func recordStages(_ reports: [DeliveryLog.Report]) async throws(GatewayError)
    /// Records what a device reported up to its report number `through`: only stages a device
    /// reports, only for pushes sent to that device, at most ``DeliveryLog/maximumStagesPerPush``
    /// per push; reports numbered `through` or lower that were recorded already are not recorded
    /// again, nor is a report its push has already (the same stage at the same time: the device sent
    /// them again, with more after them, before hearing that they were recorded).
    /// Like ``acknowledge(_:)``, it need not wait for the disk: what a power cut takes back is the
    /// newest of the log.
    func recordDeviceReports(_ reports: [DeliveryLog.Report], from deviceID: String, through: Int64) async throws(GatewayError)
    /// The logged pushes whose `apns-id` or `apns-unique-id` is `id`, oldest first.
    func deliveryRecords(matching id: String) async throws(GatewayError) -> [DeliveryRecord]
    /// Forgets logged pushes accepted before `date` that are no longer stored, then the oldest beyond
    /// `limit` whatever they are; returns how many.
    func pruneDeliveryLog(acceptedBefore date: Date, keepingAtMost limit: Int) async throws(GatewayError) -> Int
}

/// What gateway nodes sharing one store coordinate: who holds which device's link, what the others
/// changed, and the throttling buckets they share. A store of one node needs none of it (the defaults
/// below).
package protocol NodeCoordination: Sendable {
    /// Whether other nodes may store pushes in it too (then a node's links read every push back from
    /// it, in the order it gives them).
    var isSharedByNodes: Bool { get }
    /// Hears of what other nodes change, the pushes they store included (a node wakes its own links
    /// for what it stores), until the task is cancelled, so that the node holding a device's link
    /// sends its pushes at once and no node answers from what it read before. Returns at once for a
    /// store only one node uses.
    func followChanges(_ changed: @escaping @Sendable (GatewayStoreChange) -> Void) async
    /// Records which devices this node holds links of now (`true`) or no longer (`false`), so that
    /// other nodes know they are linked (``devicesLinkedElsewhere(_:)``).
    func setLinked(_ devices: [String: Bool]) async throws(GatewayError)
    /// Which of `devices` hold a link to another node that is running.
    func devicesLinkedElsewhere(_ devices: Set<String>) async throws(GatewayError) -> Set<String>
    /// Takes `counts` pushes from each token's bucket, shared by every node (`burst` at most, refilled
    /// at `perSecond`); returns how many each token could take. Nodes keep their own buckets too: a
    /// store of one node grants everything.
    func takeFromTokenBuckets(_ counts: [String: Int], at date: Date, burst: Int, perSecond: Double) async throws(GatewayError) -> [String: Int]
    /// ``devicesLinkedElsewhere(_:)`` and ``takeFromTokenBuckets(_:at:burst:perSecond:)`` at once,
    /// for a batch's rules: one trip to a shared store instead of two.
    func sharedRules(linkedElsewhere devices: Set<String>, take counts: [String: Int], at date: Date, burst: Int, perSecond: Double)
        async throws(GatewayError) -> (elsewhere: Set<String>, granted: [String: Int])
}

/// What a node hears of the changes of a store shared by several.
package enum GatewayStoreChange: Sendable, Equatable {
    /// Pushes were stored for these devices (`true` for one when some were stored held, its device
    /// not linked when they came); nil: any device may have some (stored while this was not listening).
    case pushesStored([String: Bool]?)
    /// Tokens were unregistered: what a node remembers of them is stale. Nil: any may be.
    case tokensUnregistered([String]?)
    /// These devices linked to another node: a link of theirs to this one is stale (the device
    /// replaced it), and is closed as a second link to the same node is.
    case devicesLinkedElsewhere([String])
}

/// A device's acknowledgement of the pushes it has, up to a sequence.
package struct Acknowledgement: Sendable {
    package var deviceID: String
    package var through: Int64
    package var at: Date
    /// When each of the pushes it covers was sent, for the delivery log.
    package var sent: [(uniqueID: String, at: Date)]

    package init(deviceID: String, through: Int64, at: Date, sent: [(uniqueID: String, at: Date)] = []) {
        self.deviceID = deviceID
        self.through = through
        self.at = at
        self.sent = sent
    }

    /// The acknowledgements merged per device (the highest sequence, the latest time, every push
    /// sent), in the order devices first appear.
    package static func merged(_ acknowledgements: [Acknowledgement]) -> [Acknowledgement] {
        var order: [String] = []
        var byDevice: [String: Acknowledgement] = [:]
        for acknowledgement in acknowledgements {
            guard var merged = byDevice[acknowledgement.deviceID] else {
                order.append(acknowledgement.deviceID)
                byDevice[acknowledgement.deviceID] = acknowledgement
                continue
            }
            merged.through = max(merged.through, acknowledgement.through)
            merged.at = max(merged.at, acknowledgement.at)
            merged.sent += acknowledgement.sent
            byDevice[acknowledgement.deviceID] = merged
        }
        return order.compactMap { byDevice[$0] }
    }
}

extension DeviceStore {
    package func registration(token: String) async throws(GatewayError) -> Registration? {
        try await registrations(tokens: [token])[token]
    }

    /// ``unregister(deviceID:bundleIdentifier:at:because:)`` when the app asked for it.
    package func unregister(deviceID: String, bundleIdentifier: String, at date: Date) async throws(GatewayError) {
        try await unregister(deviceID: deviceID, bundleIdentifier: bundleIdentifier, at: date, because: "the app unregistered")
    }
}

extension PushQueueStore {
    package func enqueue(_ pushes: [QueuedPush], at date: Date, ordered: @escaping @Sendable () -> Void) async throws(GatewayError) -> [QueuedPush] {
        defer { ordered() }
        return try await enqueue(pushes, at: date)
    }

    /// ``enqueue(_:at:)`` in a task of `tasks`.
    package func enqueue(_ pushes: [QueuedPush], at date: Date, tasks: OwnedTasks,
                         completion: @escaping @Sendable (Result<[QueuedPush], GatewayError>) -> Void) {
        tasks.start {
            do throws(GatewayError) {
                completion(.success(try await self.enqueue(pushes, at: date)))
            } catch {
                completion(.failure(error))
            }
        }
    }

    /// Forgets one device's pushes up to and including `sequence`; see ``acknowledge(_:)``.
    package func acknowledge(deviceID: String, through sequence: Int64, at date: Date, sent: [(uniqueID: String, at: Date)]) async throws(GatewayError) {
        try await acknowledge([Acknowledgement(deviceID: deviceID, through: sequence, at: date, sent: sent)])
    }
}

extension NodeCoordination {
    /// One node's store: its own pushes wake its links directly.
    package var isSharedByNodes: Bool { false }
    package func followChanges(_ changed: @escaping @Sendable (GatewayStoreChange) -> Void) async {}
    package func setLinked(_ devices: [String: Bool]) async throws(GatewayError) {}
    package func devicesLinkedElsewhere(_ devices: Set<String>) async throws(GatewayError) -> Set<String> { [] }
    package func takeFromTokenBuckets(_ counts: [String: Int], at date: Date, burst: Int, perSecond: Double) async throws(GatewayError) -> [String: Int] {
        counts
    }
    package func sharedRules(linkedElsewhere devices: Set<String>, take counts: [String: Int], at date: Date, burst: Int, perSecond: Double)
        async throws(GatewayError) -> (elsewhere: Set<String>, granted: [String: Int])
    {
        let elsewhere = devices.isEmpty ? [] : try await devicesLinkedElsewhere(devices)
        return (elsewhere, try await takeFromTokenBuckets(counts, at: date, burst: burst, perSecond: perSecond))
    }
}

/// Why the gateway could not do what it was asked.
package struct GatewayError: Error, Sendable, CustomStringConvertible {
    package enum Code: String, Sendable {
        case storageFailed
        /// The store cannot be reached now (its database server is down or restarting): try again later.
        case unavailable
        case databaseUnreadable
        case notFound
        case alreadyExists
        case invalidArgument
        /// A limit was reached (an app's channels).
        case limitReached
    }

    package var code: Code
    package var message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    package var description: String { message }
}
