package import Foundation
package import NotificationCore

/// A provider's push that passed every check of the provider API: headers, authentication, topic.
/// What remains (is the token registered for this app, is it flooded) needs the gateway's store.
package struct ProviderPush: Sendable {
    package var headers: APNs.PushHeaders
    /// The app the topic names.
    package var bundleIdentifier: String
    /// The team whose key or certificate sent it.
    package var teamID: String
    /// The key that authenticated the provider; empty for a certificate.
    package var keyID: String
    /// The gateway's own name for it, as APNs' `apns-unique-id`: unique even when the provider
    /// reuses an `apns-id`; the delivery log's key.
    package var uniqueID: String
    package var environment: APNs.Environment
    /// The JSON payload, as sent.
    package var payload: [UInt8]
    package var receivedAt: Date

    package init(
        headers: APNs.PushHeaders, bundleIdentifier: String, teamID: String, keyID: String = "", uniqueID: String = TimeOrderedUUIDs.shared.make(),
        environment: APNs.Environment, payload: [UInt8], receivedAt: Date
    ) {
        self.headers = headers
        self.bundleIdentifier = bundleIdentifier
        self.teamID = teamID
        self.keyID = keyID
        self.uniqueID = uniqueID
        self.environment = environment
        self.payload = payload
        self.receivedAt = receivedAt
    }
}

/// Where the provider API hands the pushes it accepted: the gateway's core, which answers once the
/// push is durable (or refused for a reason only it can tell, such as `410 Unregistered`).
package protocol PushAcceptor: Sendable {
    /// Takes a push and calls `completion` once, from any thread: with nil once the push is stored,
    /// or with why it is refused. A callback rather than `async`: the provider API calls it from the
    /// connection's event loop for every request, and a task per request costs more than the rest.
    func accept(_ push: ProviderPush, completion: @escaping @Sendable (APNs.Rejection?) -> Void)
}

/// Where the provider API reads the delivery log (`GET /1/delivery-log/<id>`).
package protocol DeliveryLogReader: Sendable {
    /// The logged pushes whose `apns-id` or `apns-unique-id` is `id`, oldest first.
    func deliveryRecords(matching id: String) async throws(GatewayError) -> [DeliveryRecord]
}

/// Where the provider API manages broadcast channels and sends to them (APNs' broadcast API).
package protocol BroadcastChannels: Sendable {
    /// Creates a channel of the app in `environment`, with a new random identifier.
    func createChannel(bundleIdentifier: String, environment: APNs.Environment, settings: APNs.ChannelSettings, at date: Date)
        async throws(GatewayError) -> BroadcastChannel
    /// The channel, if it exists.
    func channel(_ channelID: String) async throws(GatewayError) -> BroadcastChannel?
    func deleteChannel(_ channelID: String) async throws(GatewayError)
    func channels(of bundleIdentifier: String, environment: APNs.Environment) async throws(GatewayError) -> [String]
    /// Stores a message for the channel's subscribers (durable when it returns); returns how many
    /// devices it was stored for.
    func broadcast(to channel: BroadcastChannel, headers: APNs.BroadcastHeaders, payload: [UInt8], at date: Date) async throws(GatewayError) -> Int
}
