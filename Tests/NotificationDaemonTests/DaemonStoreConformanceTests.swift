import Foundation
import NotificationCore
@testable import NotificationDaemon
import Testing

/// What every ``DaemonStore`` must do, whatever keeps the data: each test runs against every
/// implementation in ``StoreKind``.
@Suite struct DaemonStoreConformanceTests {
    enum StoreKind: String, CaseIterable, CustomTestStringConvertible {
        case sqlite

        var testDescription: String { rawValue }

        /// A fresh, empty store.
        func make() throws -> any DaemonStore {
            switch self {
            case .sqlite: try SQLiteDaemonStore(path: makeTestDirectory().appendingPathComponent("store.sqlite").path)
            }
        }
    }

    static let start = Date(timeIntervalSince1970: 1_767_225_600)

    func app(_ bundleIdentifier: String, key: String = UUID().uuidString, wakeUpIn seconds: TimeInterval? = nil,
             location: Bool = false, shown: Bool = false) throws -> StoredApp {
        var machine = NotificationCenterMachine(now: Self.start, calendar: Calendar(identifier: .gregorian), timeZone: TimeZone(identifier: "UTC")!,
                                                appState: .notRunning, appReachable: false)
        _ = machine.changeSettings(.granting([.alert], status: .authorized))
        var content = NotificationContent()
        content.title = bundleIdentifier
        if let seconds {
            _ = try machine.add(NotificationRequest(identifier: "dated", content: content, trigger: .timeInterval(seconds, repeats: false)))
        }
        if location {
            let region = CircularRegion(identifier: "r", center: Coordinate(latitude: 0, longitude: 0), radius: 10)
            _ = try machine.add(NotificationRequest(identifier: "place", content: content, trigger: .location(region, repeats: false)))
        }
        if shown { _ = try machine.add(NotificationRequest(identifier: "now", content: content, trigger: nil)) }
        return StoredApp(bundleIdentifier: bundleIdentifier, keyHash: DaemonEngine.hash(key), launchCommand: "run \(bundleIdentifier)",
                         machine: machine, bootID: "boot")
    }

    @Test(arguments: StoreKind.allCases)
    func anAppIsKeptWithItsKeyAndStateAndRemovedWhole(_ kind: StoreKind) throws {
        let store = try kind.make()
        try store.insert(try app("com.example.a", key: "key-a", wakeUpIn: 60))
        let loaded = try #require(try store.app("com.example.a"))
        #expect(loaded.launchCommand == "run com.example.a")
        #expect(loaded.machine.pendingRequests.map(\.request.identifier) == ["dated"])
        #expect(try store.bundleIdentifier(forKeyHash: DaemonEngine.hash("key-a")) == "com.example.a")
        #expect(try store.bundleIdentifier(forKeyHash: DaemonEngine.hash("other")) == nil)

        try store.replaceKey(of: "com.example.a", with: DaemonEngine.hash("new-key"))
        #expect(try store.bundleIdentifier(forKeyHash: DaemonEngine.hash("key-a")) == nil)
        #expect(try store.bundleIdentifier(forKeyHash: DaemonEngine.hash("new-key")) == "com.example.a")

        try store.delete("com.example.a")
        #expect(try store.app("com.example.a") == nil)
        #expect(try store.apps().isEmpty)
        #expect(try store.earliestWakeUp() == nil)
    }

    @Test(arguments: StoreKind.allCases)
    func mistakesAreRefusedWithTheirCodesAndChangeNothing(_ kind: StoreKind) async throws {
        let store = try kind.make()
        try store.insert(try app("com.example.a"))
        let again = try app("com.example.a")
        do {
            try store.insert(again)
            Issue.record("an app was registered twice")
        } catch {
            #expect(error.code == .appAlreadyRegistered)
        }
        let machine = try app("x").machine
        let changes: [(String, () throws -> Void)] = [
            ("delete", { try store.delete("com.example.none") }),
            ("replaceKey", { try store.replaceKey(of: "com.example.none", with: "h") }),
        ]
        for (name, change) in changes {
            do {
                try change()
                Issue.record("\(name) of an app that does not exist succeeded")
            } catch let error as DaemonError {
                #expect(error.code == .appNotFound, "\(name)")
            }
        }
        #expect(try store.apps().map(\.bundleIdentifier) == ["com.example.a"])

        // A save for an app removed meanwhile is skipped; the rest of the batch is kept.
        var changed = machine
        changed.removeAllDeliveredNotifications()
        try await store.save([
            AppSave(bundleIdentifier: "com.example.none", machine: machine, nextWakeUp: nil),
            AppSave(bundleIdentifier: "com.example.a", machine: machine, nextWakeUp: Self.start),
        ], bootID: "b")
        #expect(try store.app("com.example.none") == nil)
        #expect(try store.earliestWakeUp() == Self.start)
    }

    @Test(arguments: StoreKind.allCases)
    func aBatchIsSavedInOrderSoAnAppsLaterStateWins(_ kind: StoreKind) async throws {
        let store = try kind.make()
        try store.insert(try app("com.example.a", wakeUpIn: 60))
        let first = try app("com.example.a", wakeUpIn: 60).machine
        let second = try app("com.example.a", wakeUpIn: 60, shown: true).machine
        try await store.save([
            AppSave(bundleIdentifier: "com.example.a", machine: second, nextWakeUp: Self.start.addingTimeInterval(1)),
            AppSave(bundleIdentifier: "com.example.a", machine: first, nextWakeUp: Self.start.addingTimeInterval(2)),
        ], bootID: "b")
        #expect(try store.earliestWakeUp() == Self.start.addingTimeInterval(2))
        #expect(try store.appsShowingNotifications().isEmpty, "the later state, with nothing shown")
        #expect(try store.app("com.example.a")?.bootID == "b")
    }

    @Test(arguments: StoreKind.allCases)
    func whatIsDueIsFoundSoonestFirstAndWithinTheLimit(_ kind: StoreKind) async throws {
        let store = try kind.make()
        try store.insert(try app("com.example.late", wakeUpIn: 300))
        try store.insert(try app("com.example.soon", wakeUpIn: 60))
        try store.insert(try app("com.example.middle", wakeUpIn: 120))
        try store.insert(try app("com.example.never"))
        #expect(try store.earliestWakeUp() == Self.start.addingTimeInterval(60))
        #expect(try store.appsDue(by: Self.start.addingTimeInterval(59), limit: 10).isEmpty)
        #expect(try store.appsDue(by: Self.start.addingTimeInterval(200), limit: 10) == ["com.example.soon", "com.example.middle"])
        #expect(try store.appsDue(by: Self.start.addingTimeInterval(1000), limit: 2) == ["com.example.soon", "com.example.middle"])

        // A saved state moves the app in the index; a postponed one waits without its state changing.
        let soon = try #require(try store.app("com.example.soon"))
        try await store.save([AppSave(bundleIdentifier: "com.example.soon", machine: soon.machine, nextWakeUp: Self.start.addingTimeInterval(500))], bootID: "boot")
        #expect(try store.appsDue(by: Self.start.addingTimeInterval(1000), limit: 10) == ["com.example.middle", "com.example.late", "com.example.soon"])
        try store.postponeWakeUp(of: "com.example.middle", to: Self.start.addingTimeInterval(900))
        #expect(try store.appsDue(by: Self.start.addingTimeInterval(600), limit: 10) == ["com.example.late", "com.example.soon"])
        #expect(try store.app("com.example.middle")?.machine.pendingRequests.count == 1)
    }

    @Test(arguments: StoreKind.allCases)
    func theAppsThatWatchTheLocationOrShowSomethingAreFoundWithoutReadingTheOthers(_ kind: StoreKind) async throws {
        let store = try kind.make()
        try store.insert(try app("com.example.place", location: true))
        try store.insert(try app("com.example.shown", shown: true))
        try store.insert(try app("com.example.quiet", wakeUpIn: 60))
        #expect(try store.appsWatchingLocation() == ["com.example.place"])
        #expect(try store.appsShowingNotifications() == ["com.example.shown"])

        var shown = try #require(try store.app("com.example.shown")).machine
        shown.removeAllDeliveredNotifications()
        try await store.save([AppSave(bundleIdentifier: "com.example.shown", machine: shown, nextWakeUp: nil)], bootID: "boot")
        #expect(try store.appsShowingNotifications().isEmpty)
    }

    @Test(arguments: StoreKind.allCases)
    func theDevicesStateIsKept(_ kind: StoreKind) throws {
        let store = try kind.make()
        #expect(try store.deviceState() == nil)
        let state = DeviceState(isLocked: true, location: Coordinate(latitude: 48.85, longitude: 2.35), timeZoneIdentifier: "Europe/Paris")
        try store.saveDeviceState(state)
        #expect(try store.deviceState() == state)
        try store.saveDeviceState(DeviceState())
        #expect(try store.deviceState() == DeviceState())
    }
}
