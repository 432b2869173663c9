import NIOCore
import NotificationCore
@testable import PushGateway
import Testing

/// A provider connection's standing: the errors that close it, and those it outlives.
@Suite struct ProviderConnectionTests {
    static func connection() -> ProviderConnection {
        ProviderConnection(environment: .production, environmentKeyReason: .badEnvironmentKeyInToken, certificate: nil)
    }

    static let start = NIODeadline.uptimeNanoseconds(1_000_000_000_000)

    /// Returns after which refusal (counting from 1) the connection had to close, if any.
    static func closesAfter(_ refusals: [(APNs.Reason, seconds: Int64)]) -> Int? {
        let connection = connection()
        for (index, refusal) in refusals.enumerated()
        where connection.noteRefusal(refusal.0, limit: 100, period: .seconds(60), at: start + .seconds(refusal.seconds)) {
            return index + 1
        }
        return nil
    }

    @Test func tenBadTokensAtOnceOrAHundredOtherErrorsCloseIt() {
        #expect(Self.closesAfter(Array(repeating: (.badDeviceToken, 0), count: 12)) == 10)
        #expect(Self.closesAfter(Array(repeating: (.badTopic, 0), count: 120)) == 100)
        #expect(Self.closesAfter((0..<5).map { _ in (.badDeviceToken, 0) } + (0..<60).map { _ in (.missingTopic, 0) }) == 55)
    }

    /// `410 Unregistered` is not the provider's error; a connection of days meets it for every app
    /// removed from a device.
    @Test func unregisteredTokensAreNotErrors() {
        #expect(Self.closesAfter(Array(repeating: (.unregistered, 0), count: 1_000)) == nil)
    }

    /// Only the last minute's errors count: a bad token every ten seconds for a day (a provider
    /// sending a few to the other environment's tokens) never closes the connection, nor does a
    /// burst of nine a minute apart; nine at once and one more a second later do.
    @Test func onlyTheLastMinutesErrorsCount() {
        #expect(Self.closesAfter((0..<8_640).map { (.badDeviceToken, Int64($0) * 10) }) == nil)
        #expect(Self.closesAfter((0..<9).map { _ in (.badDeviceToken, 0) } + (0..<9).map { _ in (.badDeviceToken, 60) }) == nil)
        #expect(Self.closesAfter((0..<9).map { _ in (.badDeviceToken, 0) } + [(.badDeviceToken, 1)]) == 10)
    }

    /// Once closing, it counts nothing more (the refusals answered while it closes).
    @Test func aClosingConnectionSaysSoOnce() {
        let connection = Self.connection()
        var closes = 0
        for _ in 0..<30 where connection.noteRefusal(.badDeviceToken, limit: 100, period: .seconds(60), at: Self.start) { closes += 1 }
        #expect(closes == 1)
        #expect(connection.isClosing)
    }
}
