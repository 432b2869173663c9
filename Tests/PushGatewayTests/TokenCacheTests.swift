import Foundation
@testable import PushGateway
import Testing

/// What the core knows of tokens, and what waits for a token to be read: each push to a token is
/// decided in the order it came, one read serves every push waiting, and a read that a change
/// overlapped is not remembered.
@Suite struct TokenCacheTests {
    static let start = Date(timeIntervalSince1970: 1_767_225_600)

    static func registration(_ token: String, device: String = "device-1", app: String = "com.example.a") -> Registration {
        Registration(token: token, deviceID: device, bundleIdentifier: app, environment: .sandbox, registeredAt: start)
    }

    @Test func pushesToUnknownTokensWaitForOneReadThenTheTokensAreKnown() throws {
        var cache = TokenCache<String>()
        guard case .waits(startsReading: true) = cache.lookUp("aa", for: "push 1") else { Issue.record("the first push starts a read"); return }
        guard case .waits(startsReading: false) = cache.lookUp("bb", for: "push 2") else { Issue.record("a read is under way"); return }
        guard case .waits(startsReading: false) = cache.lookUp("aa", for: "push 3") else { Issue.record("a read is under way"); return }
        let readTaken = cache.nextRead()
        let read = try #require(readTaken)
        #expect(Set(read.tokens) == ["aa", "bb"])
        let result = ["aa": Self.registration("aa")]
        let answered = read.answered(by: result).map { "\($0.0) \($0.1?.token ?? "unknown")" }
        // In arrival order for each token; an unknown token is answered nil.
        #expect(answered.filter { $0.hasSuffix("aa") } == ["push 1 aa", "push 3 aa"])
        #expect(answered.contains("push 2 unknown"))
        cache.finish(read, with: result)
        let nothingWaits = cache.nextRead()
        #expect(nothingWaits == nil, "the reading ends")
        #expect(!cache.isReading)
        guard case .known(let known) = cache.lookUp("aa", for: "push 4") else { Issue.record("aa was read"); return }
        #expect(known.token == "aa")
        // An unknown token is not remembered: the next push to it waits for a read of its own.
        guard case .waits(startsReading: true) = cache.lookUp("bb", for: "push 5") else { Issue.record("bb is not known"); return }
    }

    @Test func aPushToATokenBeingReadWaitsBehindThePushesBeforeIt() throws {
        var cache = TokenCache<String>()
        cache.remember(Self.registration("aa"))
        _ = cache.lookUp("bb", for: "push 1")
        let readTaken = cache.nextRead()
        let read = try #require(readTaken)
        // Known tokens are answered at once while another is read; the one being read is not,
        // though the read will have it: the push waits for the next round.
        guard case .known = cache.lookUp("aa", for: "push 2") else { Issue.record("aa is known"); return }
        guard case .waits(startsReading: false) = cache.lookUp("bb", for: "push 3") else { Issue.record("bb is being read"); return }
        cache.finish(read, with: ["bb": Self.registration("bb")])
        let nextTaken = cache.nextRead()
        let next = try #require(nextTaken)
        #expect(next.answered(by: ["bb": Self.registration("bb")]).map(\.0) == ["push 3"])
        cache.finish(next, with: ["bb": Self.registration("bb")])
        let nothingWaits = cache.nextRead()
        #expect(nothingWaits == nil, "the reading ends")
    }

    @Test func aReadThatAChangeOverlappedIsNotRemembered() throws {
        var cache = TokenCache<String>()
        _ = cache.lookUp("aa", for: "push 1")
        let readTaken = cache.nextRead()
        let read = try #require(readTaken)
        // Another node unregistered tokens while the read was under way: what it read may predate that.
        cache.forget(["zz"])
        cache.finish(read, with: ["aa": Self.registration("aa")])
        let nothingWaits = cache.nextRead()
        #expect(nothingWaits == nil, "the reading ends")
        guard case .waits(startsReading: true) = cache.lookUp("aa", for: "push 2") else { Issue.record("aa was not remembered"); return }
    }

    @Test func aFailedReadRemembersNothingAndReadingGoesOn() throws {
        var cache = TokenCache<String>()
        _ = cache.lookUp("aa", for: "push 1")
        let readTaken = cache.nextRead()
        let read = try #require(readTaken)
        _ = cache.lookUp("bb", for: "push 2")
        cache.finish(read, with: nil)
        let nextTaken = cache.nextRead()
        let next = try #require(nextTaken)
        #expect(next.tokens == ["bb"])
    }

    @Test func unregisteringEndsTheAppsTokensOnThatDeviceOnly() {
        var cache = TokenCache<String>()
        cache.remember(Self.registration("aa"))
        cache.remember(Self.registration("bb", app: "com.example.b"))
        cache.remember(Self.registration("cc", device: "device-2"))
        let date = Self.start.addingTimeInterval(60)
        cache.unregister(deviceID: "device-1", bundleIdentifier: "com.example.a", at: date)
        for (token, ended) in [("aa", date), ("bb", nil), ("cc", nil)] as [(String, Date?)] {
            guard case .known(let registration) = cache.lookUp(token, for: "push") else { Issue.record("\(token) is known"); continue }
            #expect(registration.unregisteredAt == ended, "\(token)")
        }
        cache.forget(nil)
        guard case .waits = cache.lookUp("cc", for: "push") else { Issue.record("every token was forgotten"); return }
    }
}
