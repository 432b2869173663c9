import Foundation
import GRDB
import NotificationCore
@testable import NotificationDaemon
@testable import NotificationEngine
import Testing
import TestSupport

/// What every ``DaemonStore`` must do, whatever keeps the data: each test runs against every
/// implementation in ``StoreKind``.
@Suite struct DaemonStoreConformanceTests {
    enum StoreKind: String, CaseIterable, CustomTestStringConvertible {
        case sqlite
        /// What the engine keeps inside an app's own process.
        case memory

        var testDescription: String { rawValue }

        /// A fresh, empty store.
        func make() throws -> any DaemonStore {
            switch self {
            case .sqlite: try SQLiteDaemonStore(path: makeTestDirectory().appendingPathComponent("store.sqlite").path)
            case .memory: InMemoryDaemonStore()
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

    /// Several apps read together are each what a read of it alone gives; an app not registered is
    /// left out.
    @Test(arguments: StoreKind.allCases)
    func appsReadTogetherAreTheAppsReadOneByOne(_ kind: StoreKind) async throws {
        let store = try kind.make()
        try await store.insert(try app("com.example.a", wakeUpIn: 60))
        try await store.insert(try app("com.example.b", location: true))
        try await store.insert(try app("com.example.c", shown: true))
        let together = try await store.apps(["com.example.c", "com.example.missing", "com.example.a", "com.example.b"])
        #expect(Set(together.keys) == ["com.example.a", "com.example.b", "com.example.c"])
        for name in ["com.example.a", "com.example.b", "com.example.c"] {
            let alone = try #require(try await store.app(name))
            let read = try #require(try together[name]?.get())
            #expect(read.keyHash == alone.keyHash && read.launchCommand == alone.launchCommand && read.bootID == alone.bootID, "\(name)")
            #expect(read.machine.pendingRequests.map(\.request) == alone.machine.pendingRequests.map(\.request), "\(name)")
            #expect(read.machine.deliveredNotifications == alone.machine.deliveredNotifications, "\(name)")
        }
        #expect(try await store.apps([]).isEmpty)
    }

    /// An app whose stored state cannot be read fails alone: a read of several apps gives it as
    /// `appQuarantined` and the others as they are; quarantined, it leaves every index; reset, its
    /// state is set aside and it starts afresh with its key. (Damaged through SQLite itself.)
    @Test func anAppThatCannotBeReadFailsAloneIsQuarantinedAndCanBeReset() async throws {
        let directory = try makeTestDirectory()
        let path = directory.appendingPathComponent("store.sqlite").path
        let store = try SQLiteDaemonStore(path: path)
        try await store.insert(try app("com.example.damaged", key: "damaged-key", wakeUpIn: 60, shown: true))
        try await store.insert(try app("com.example.fine", wakeUpIn: 60, shown: true))
        // A row written by a bug, or damaged on disk.
        let queue = try DatabaseQueue(path: path)
        try await queue.write { db in
            try db.execute(sql: "UPDATE delivered SET notification = CAST('{not json' AS BLOB) WHERE app = 'com.example.damaged'")
        }
        let together = try await store.apps(["com.example.damaged", "com.example.fine"])
        #expect(throws: DaemonError.self) { try together["com.example.damaged"]?.get() }
        #expect((try? together["com.example.damaged"]?.get()) == nil)
        if case .failure(let error)? = together["com.example.damaged"] { #expect(error.code == .appQuarantined) }
        #expect(try together["com.example.fine"]?.get().machine.deliveredNotifications.count == 1)

        try await store.quarantine("com.example.damaged", reason: "its notifications cannot be read", at: Self.start)
        #expect(try await store.appsShowingNotifications() == ["com.example.fine"])
        #expect(try await store.appsDue(by: Self.start.addingTimeInterval(120), limit: 10) == ["com.example.fine"])
        let listed = try await store.apps()
        #expect(listed.first { $0.bundleIdentifier == "com.example.damaged" }?.quarantined?.reason == "its notifications cannot be read")
        #expect(listed.first { $0.bundleIdentifier == "com.example.fine" }?.quarantined == nil)
        await #expect(throws: DaemonError.self) { try await store.app("com.example.damaged") }

        // Reset: everything it had is set aside, byte for byte, and it starts afresh with its key.
        let fresh = NotificationCenterMachine(now: Self.start, calendar: Calendar(identifier: .gregorian), timeZone: TimeZone(identifier: "UTC")!,
                                              appState: .notRunning, appReachable: false)
        try await store.setResource(.strings, of: "com.example.damaged", to: Data(#"{"K":"V"}"#.utf8))
        let setAside = try await store.reset(StoredApp(bundleIdentifier: "com.example.damaged", keyHash: "", launchCommand: nil, machine: fresh,
                                                       bootID: "boot"), at: Self.start)
        #expect(setAside == 4, "its core, its categories, its pending request and its delivered notification")
        let reset = try #require(try await store.app("com.example.damaged"))
        #expect(reset.machine.deliveredNotifications.isEmpty && reset.machine.pendingRequests.isEmpty)
        #expect(reset.keyHash == DaemonEngine.hash("damaged-key") && reset.launchCommand == "run com.example.damaged")
        #expect(try await store.resources(of: "com.example.damaged") == [.strings: Data(#"{"K":"V"}"#.utf8)], "a reset keeps the app's resources")
        #expect(try await store.apps().allSatisfy { $0.quarantined == nil })
        let kept = try await queue.read { db in
            try String.fetchAll(db, sql: "SELECT CAST(bytes AS TEXT) FROM set_aside WHERE app = 'com.example.damaged' AND part = 'delivered'")
        }
        #expect(kept == ["{not json"])
        // A reset of an app that can be read changes nothing.
        await #expect(throws: DaemonError.self) { _ = try await store.reset(reset, at: Self.start) }
        // Removing the app removes what was set aside too.
        try await store.delete("com.example.damaged")
        #expect(try await queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM set_aside") } == 0)
    }

    /// An app quarantined (whatever the store found) leaves every index and cannot be read until it is
    /// reset; reset, it starts afresh with its key, launch command and resources, and what it had is
    /// counted as set aside. Quarantining it again changes nothing.
    @Test(arguments: StoreKind.allCases)
    func aQuarantinedAppLeavesEveryIndexUntilItIsReset(_ kind: StoreKind) async throws {
        let store = try kind.make()
        try await store.insert(try app("com.example.stuck", key: "stuck-key", wakeUpIn: 60, location: true, shown: true))
        try await store.insert(try app("com.example.fine", wakeUpIn: 60, shown: true))
        try await store.setResource(.strings, of: "com.example.stuck", to: Data(#"{"K":"V"}"#.utf8))

        try await store.quarantine("com.example.stuck", reason: "its notifications cannot be read", at: Self.start)
        try await store.quarantine("com.example.stuck", reason: "another reason", at: Self.start.addingTimeInterval(5))
        #expect(try await store.appsShowingNotifications() == ["com.example.fine"])
        #expect(try await store.appsWatchingLocation().isEmpty)
        #expect(try await store.appsDue(by: Self.start.addingTimeInterval(120), limit: 10) == ["com.example.fine"])
        #expect(try await store.earliestWakeUps(limit: 10).map(\.bundleIdentifier) == ["com.example.fine"])
        let quarantine = try await store.apps().first { $0.bundleIdentifier == "com.example.stuck" }?.quarantined
        #expect(quarantine == Quarantine(reason: "its notifications cannot be read", since: Self.start))
        let read = try await store.apps(["com.example.stuck"])
        if case .failure(let error)? = read["com.example.stuck"] {
            #expect(error.code == .appQuarantined && error.message.contains("its notifications cannot be read"))
        } else {
            Issue.record("a quarantined app was read: \(String(describing: read))")
        }

        let fresh = NotificationCenterMachine(now: Self.start, calendar: Calendar(identifier: .gregorian), timeZone: TimeZone(identifier: "UTC")!,
                                              appState: .notRunning, appReachable: false)
        let setAside = try await store.reset(StoredApp(bundleIdentifier: "com.example.stuck", keyHash: "", launchCommand: nil, machine: fresh,
                                                       bootID: "boot"), at: Self.start)
        #expect(setAside >= 5, "its core, its categories, its two pending requests and its delivered notification")
        let reset = try #require(try await store.app("com.example.stuck"))
        #expect(reset.machine.deliveredNotifications.isEmpty && reset.machine.pendingRequests.isEmpty)
        #expect(reset.keyHash == DaemonEngine.hash("stuck-key") && reset.launchCommand == "run com.example.stuck")
        #expect(try await store.resources(of: "com.example.stuck") == [.strings: Data(#"{"K":"V"}"#.utf8)])
        #expect(try await store.apps().allSatisfy { $0.quarantined == nil })
        await #expect(throws: DaemonError.self) { _ = try await store.reset(reset, at: Self.start) }
    }

    /// An app's resources are kept with its registration: set, replaced and removed one by one; an app
    /// not registered has none and cannot be given any; removing the app removes them, and one of
    /// the same name registered again starts with none.
    @Test(arguments: StoreKind.allCases)
    func anAppsResourcesAreKeptWithItsRegistration(_ kind: StoreKind) async throws {
        let store = try kind.make()
        try await store.insert(try app("com.example.a"))
        try await store.insert(try app("com.example.b"))
        #expect(try await store.resources(of: "com.example.a").isEmpty)
        try await store.setResource(.strings, of: "com.example.a", to: Data(#"{"K":"V"}"#.utf8))
        try await store.setResource(.serviceExtension, of: "com.example.a", to: Data("1".utf8))
        try await store.setResource(.serviceExtension, of: "com.example.a", to: Data("2".utf8))
        try await store.setResource(.contentExtension, of: "com.example.b", to: Data("3".utf8))
        #expect(try await store.resources(of: "com.example.a") == [.strings: Data(#"{"K":"V"}"#.utf8), .serviceExtension: Data("2".utf8)])
        try await store.setResource(.strings, of: "com.example.a", to: nil)
        #expect(try await store.resources(of: "com.example.a") == [.serviceExtension: Data("2".utf8)])
        #expect(try await store.resources(of: "com.example.b") == [.contentExtension: Data("3".utf8)])

        #expect(try await store.resources(of: "com.example.nobody").isEmpty)
        do {
            try await store.setResource(.strings, of: "com.example.nobody", to: Data("{}".utf8))
            Issue.record("a resource was set for an app that is not registered")
        } catch {
            #expect(error.code == .appNotFound)
        }
        try await store.delete("com.example.a")
        try await store.insert(try app("com.example.a"))
        #expect(try await store.resources(of: "com.example.a").isEmpty)
        #expect(try await store.resources(of: "com.example.b") == [.contentExtension: Data("3".utf8)])
    }

    @Test(arguments: StoreKind.allCases)
    func theLinksSequenceIsSavedWithThePushesStepAndNeverGoesBack(_ kind: StoreKind) async throws {
        let store = try kind.make()
        #expect(try await store.linkSequence() == 0)
        var stored = try app("com.example.a")
        try await store.insert(stored)
        stored.machine.startRecordingChanges()
        var content = NotificationContent()
        content.title = "push"
        _ = stored.machine.receivePush(NotificationRequest(identifier: "p", content: content, trigger: .push))
        var save = AppSave(bundleIdentifier: "com.example.a", machine: &stored.machine)
        save.linkSequence = 3
        try await store.save([save], bootID: "boot")
        #expect(try await store.linkSequence() == 3)
        #expect(try await store.app("com.example.a")?.machine.deliveredNotifications.map(\.request.identifier) == ["p"])
        try await store.saveLinkSequence(2, reports: [])
        #expect(try await store.linkSequence() == 3)
        try await store.saveLinkSequence(9, reports: [])
        #expect(try await store.linkSequence() == 9)
    }

    @Test(arguments: StoreKind.allCases)
    func deliveryReportsAreSavedWithTheirStepAndForgottenOnceTheGatewayHasThem(_ kind: StoreKind) async throws {
        let store = try kind.make()
        #expect(try await store.deliveryReports(limit: 10)?.through == nil)
        var stored = try app("com.example.a")
        try await store.insert(stored)
        stored.machine.startRecordingChanges()
        var content = NotificationContent()
        content.title = "push"
        var request = NotificationRequest(identifier: "p", content: content, trigger: .push)
        request.pushUniqueID = "unique-1"
        _ = stored.machine.receivePush(request)
        let save = AppSave(bundleIdentifier: "com.example.a", machine: &stored.machine)
        #expect(save.deliveryReports.map(\.uniqueID) == ["unique-1"])
        try await store.save([save], bootID: "boot")
        let notShown = DeliveryLog.Report(uniqueID: "unique-2", stage: .notShown, at: Date(), detail: "the app is not on the device")
        try await store.saveLinkSequence(4, reports: [notShown])

        let first = try #require(try await store.deliveryReports(limit: 1))
        #expect(first.reports.map(\.uniqueID) == ["unique-1"])
        let all = try #require(try await store.deliveryReports(limit: 10))
        #expect(all.reports.map(\.uniqueID) == ["unique-1", "unique-2"])
        #expect(try await store.waitingCounts().deliveryReports == 2)
        #expect(all.reports == save.deliveryReports + [notShown], "read back as saved, to the last bit of their times")
        #expect(all.through > first.through)
        try await store.forgetDeliveryReports(through: first.through)
        #expect(try await store.deliveryReports(limit: 10)?.reports.map(\.uniqueID) == ["unique-2"])
        try await store.forgetDeliveryReports(through: all.through)
        #expect(try await store.deliveryReports(limit: 10)?.through == nil)
        #expect(try await store.waitingCounts().deliveryReports == 0)
    }

    @Test(arguments: StoreKind.allCases)
    func anAppIsKeptWithItsKeyAndStateAndRemovedWhole(_ kind: StoreKind) async throws {
        let store = try kind.make()
        try await store.insert(try app("com.example.a", key: "key-a", wakeUpIn: 60))
        let loaded = try #require(try await store.app("com.example.a"))
        #expect(loaded.launchCommand == "run com.example.a")
        #expect(loaded.machine.pendingRequests.map(\.request.identifier) == ["dated"])
        #expect(try await store.bundleIdentifier(forKeyHash: DaemonEngine.hash("key-a")) == "com.example.a")
        #expect(try await store.bundleIdentifier(forKeyHash: DaemonEngine.hash("other")) == nil)

        try await store.replaceKey(of: "com.example.a", with: DaemonEngine.hash("new-key"))
        #expect(try await store.bundleIdentifier(forKeyHash: DaemonEngine.hash("key-a")) == nil)
        #expect(try await store.bundleIdentifier(forKeyHash: DaemonEngine.hash("new-key")) == "com.example.a")

        try await store.delete("com.example.a")
        #expect(try await store.app("com.example.a") == nil)
        #expect(try await store.apps().isEmpty)
        #expect(try await store.earliestWakeUp() == nil)
    }

    @Test(arguments: StoreKind.allCases)
    func mistakesAreRefusedWithTheirCodesAndChangeNothing(_ kind: StoreKind) async throws {
        let store = try kind.make()
        try await store.insert(try app("com.example.a"))
        let again = try app("com.example.a")
        do {
            try await store.insert(again)
            Issue.record("an app was registered twice")
        } catch {
            #expect(error.code == .appAlreadyRegistered)
        }
        var machine = try app("x").machine
        let changes: [(String, () async throws -> Void)] = [
            ("delete", { try await store.delete("com.example.none") }),
            ("replaceKey", { try await store.replaceKey(of: "com.example.none", with: "h") }),
        ]
        for (name, change) in changes {
            do {
                try await change()
                Issue.record("\(name) of an app that does not exist succeeded")
            } catch let error as DaemonError {
                #expect(error.code == .appNotFound, "\(name)")
            }
        }
        #expect(try await store.apps().map(\.bundleIdentifier) == ["com.example.a"])

        // A save for an app removed meanwhile is skipped; the rest of the batch is kept.
        var kept = try #require(try await store.app("com.example.a")).machine
        kept.startRecordingChanges()
        try await store.save([
            AppSave(bundleIdentifier: "com.example.none", machine: &machine),
            AppSave(bundleIdentifier: "com.example.a", changes: kept.takeChanges(), nextWakeUp: Self.start, watchesLocation: false, showsNotifications: false),
        ], bootID: "b")
        #expect(try await store.app("com.example.none") == nil)
        #expect(try await store.earliestWakeUp() == Self.start)
    }

    @Test(arguments: StoreKind.allCases)
    func aStepsChangesAreSavedRowByRowAndReadBackAsTheMachineWas(_ kind: StoreKind) async throws {
        let store = try kind.make()
        try await store.insert(try app("com.example.a", wakeUpIn: 60, shown: true))
        var machine = try #require(try await store.app("com.example.a")).machine
        machine.startRecordingChanges()
        var content = NotificationContent()
        content.title = "more"
        content.categoryIdentifier = "reply"
        let reply = NotificationAction(identifier: "reply", title: "Reply", textInput: .init(buttonTitle: "Send", placeholder: "..."))
        try machine.setCategories([NotificationCategory(identifier: "reply", actions: [reply], options: [.customDismissAction])])

        // One step: two requests added, one replaced, one notification shown with the new category.
        _ = try machine.add(NotificationRequest(identifier: "b", content: content, trigger: .timeInterval(120, repeats: false)))
        _ = try machine.add(NotificationRequest(identifier: "c", content: content, trigger: .timeInterval(3600, repeats: true)))
        _ = try machine.add(NotificationRequest(identifier: "dated", content: content, trigger: .timeInterval(90, repeats: false)))
        _ = try machine.add(NotificationRequest(identifier: "shown-now", content: content, trigger: nil))
        try await store.save([AppSave(bundleIdentifier: "com.example.a", machine: &machine)], bootID: "b")
        #expect(ObservableState(try await store.app("com.example.a")?.machine) == ObservableState(machine))

        // The next: one removed, one answered while the app is away (kept for it), one dismissed.
        machine.removePendingRequests(["b"])
        _ = try machine.respond(to: "shown-now", with: .reply("reply", text: "hi"))
        _ = try machine.respond(to: "now", with: .dismiss)
        let changes = machine.takeChanges()
        #expect(changes.removedPending == ["b"] && changes.pending.isEmpty, "only the removed request is written")
        #expect(Set(changes.removedVisible) == ["shown-now", "now"] && changes.queued.count == 1)
        #expect(changes.categories == nil, "categories are written only when they change")
        #expect(changes.core == nil, "and so is the core")
        try await store.save([AppSave(bundleIdentifier: "com.example.a", changes: changes, nextWakeUp: machine.nextWakeUpDate(),
                                      watchesLocation: false, showsNotifications: false)], bootID: "b")
        let loaded = try #require(try await store.app("com.example.a")).machine
        #expect(ObservableState(loaded) == ObservableState(machine))
        #expect(loaded.queuedForAppCount == 1 && loaded.pendingRequests.map(\.request.identifier) == ["c", "dated"], "in the order they were added")

        // The app connects: the kept response is handed over, and its row leaves the queue.
        var connected = loaded
        connected.startRecordingChanges()
        let effects = connected.setAppReachable(true, state: .background)
        #expect(effects.contains { if case .deliverResponse = $0 { true } else { false } })
        try await store.save([AppSave(bundleIdentifier: "com.example.a", machine: &connected)], bootID: "b")
        let reloaded = try #require(try await store.app("com.example.a")).machine
        #expect(reloaded.queuedForAppCount == 0 && reloaded.openTickets == 1)
        #expect(ObservableState(reloaded) == ObservableState(connected))
    }

    @Test(arguments: StoreKind.allCases)
    func aSaveThatLeavesTheRecordWritesOnlyItsRowsAndALoadNumbersOnFromTheReservation(_ kind: StoreKind) async throws {
        let store = try kind.make()
        try await store.insert(try app("com.example.a", wakeUpIn: 60))
        var machine = try #require(try await store.app("com.example.a")).machine
        machine.startRecordingChanges()
        var content = NotificationContent()
        content.title = "later"
        // A save that writes the record and reserves numbers ahead of the machine's.
        _ = try machine.add(NotificationRequest(identifier: "b", content: content, trigger: .timeInterval(120, repeats: false)))
        var first = AppSave(bundleIdentifier: "com.example.a", machine: &machine)
        first.reservedSequence = first.changes.nextSequence + 100
        try await store.save([first], bootID: "b")

        // One that leaves it: later, another request, the same next wake-up.
        _ = machine.catchUp(to: Self.start.addingTimeInterval(30))
        _ = try machine.add(NotificationRequest(identifier: "c", content: content, trigger: .timeInterval(3600, repeats: false)))
        var second = AppSave(bundleIdentifier: "com.example.a", machine: &machine)
        second.writesAppRecord = false
        second.reservedSequence = first.reservedSequence
        try await store.save([second], bootID: "c")

        let loaded = try #require(try await store.app("com.example.a"))
        #expect(loaded.machine.pendingRequests.map(\.request.identifier) == ["dated", "b", "c"], "the second step's row is written")
        #expect(loaded.bootID == "b" && loaded.machine.now == Self.start, "the record is as the first save left it")
        #expect(try await store.earliestWakeUp() == Self.start.addingTimeInterval(60))
        var next = loaded.machine
        next.startRecordingChanges()
        _ = try next.add(NotificationRequest(identifier: "d", content: content, trigger: .timeInterval(7200, repeats: false)))
        #expect(next.takeChanges().pending.map(\.sequence) == [first.reservedSequence], "numbered on from the reservation")

        // An app removed meanwhile: its save is skipped, record or not.
        try await store.delete("com.example.a")
        second.changes.removedPending = []
        try await store.save([second], bootID: "c")
        #expect(try await store.app("com.example.a") == nil)
    }

    @Test(arguments: StoreKind.allCases)
    func aBatchIsSavedInOrderEachStepOverTheOnesBefore(_ kind: StoreKind) async throws {
        let store = try kind.make()
        try await store.insert(try app("com.example.a", wakeUpIn: 60))
        var machine = try #require(try await store.app("com.example.a")).machine
        machine.startRecordingChanges()
        var content = NotificationContent()
        content.title = "shown"
        _ = try machine.add(NotificationRequest(identifier: "now", content: content, trigger: nil))
        let first = AppSave(bundleIdentifier: "com.example.a", machine: &machine)
        machine.removeAllDeliveredNotifications()
        machine.removeAllPendingRequests()
        let second = AppSave(bundleIdentifier: "com.example.a", machine: &machine)
        try await store.save([first, second], bootID: "b")
        #expect(try await store.earliestWakeUp() == nil)
        #expect(try await store.appsShowingNotifications().isEmpty, "the later state, with nothing shown")
        let loaded = try #require(try await store.app("com.example.a"))
        #expect(loaded.bootID == "b")
        #expect(loaded.machine.pendingRequests.isEmpty && loaded.machine.visibleNotifications.isEmpty)
    }

    @Test(arguments: StoreKind.allCases)
    func whatIsDueIsFoundSoonestFirstAndWithinTheLimit(_ kind: StoreKind) async throws {
        let store = try kind.make()
        try await store.insert(try app("com.example.late", wakeUpIn: 300))
        try await store.insert(try app("com.example.soon", wakeUpIn: 60))
        try await store.insert(try app("com.example.middle", wakeUpIn: 120))
        try await store.insert(try app("com.example.never"))
        #expect(try await store.earliestWakeUp() == Self.start.addingTimeInterval(60))
        #expect(try await store.appsDue(by: Self.start.addingTimeInterval(59), limit: 10).isEmpty)
        #expect(try await store.appsDue(by: Self.start.addingTimeInterval(200), limit: 10) == ["com.example.soon", "com.example.middle"])
        #expect(try await store.appsDue(by: Self.start.addingTimeInterval(1000), limit: 2) == ["com.example.soon", "com.example.middle"])
        let earliest = try await store.earliestWakeUps(limit: 2)
        #expect(earliest.map(\.bundleIdentifier) == ["com.example.soon", "com.example.middle"])
        #expect(earliest.map(\.date) == [Self.start.addingTimeInterval(60), Self.start.addingTimeInterval(120)])
        #expect(try await store.earliestWakeUps(limit: 10).map(\.bundleIdentifier) == ["com.example.soon", "com.example.middle", "com.example.late"])

        // A saved state moves the app in the index; a postponed one waits without its state changing.
        var soon = try #require(try await store.app("com.example.soon")).machine
        soon.startRecordingChanges()
        try await store.save([AppSave(bundleIdentifier: "com.example.soon", changes: soon.takeChanges(), nextWakeUp: Self.start.addingTimeInterval(500),
                                      watchesLocation: false, showsNotifications: false)], bootID: "boot")
        #expect(try await store.appsDue(by: Self.start.addingTimeInterval(1000), limit: 10) == ["com.example.middle", "com.example.late", "com.example.soon"])
        try await store.postponeWakeUp(of: "com.example.middle", to: Self.start.addingTimeInterval(900))
        #expect(try await store.appsDue(by: Self.start.addingTimeInterval(600), limit: 10) == ["com.example.late", "com.example.soon"])
        #expect(try await store.app("com.example.middle")?.machine.pendingRequests.count == 1)
    }

    @Test(arguments: StoreKind.allCases)
    func theAppsThatWatchTheLocationOrShowSomethingAreFoundWithoutReadingTheOthers(_ kind: StoreKind) async throws {
        let store = try kind.make()
        try await store.insert(try app("com.example.place", location: true))
        try await store.insert(try app("com.example.shown", shown: true))
        try await store.insert(try app("com.example.quiet", wakeUpIn: 60))
        #expect(try await store.appsWatchingLocation() == ["com.example.place"])
        #expect(try await store.appsShowingNotifications() == ["com.example.shown"])

        var shown = try #require(try await store.app("com.example.shown")).machine
        shown.startRecordingChanges()
        shown.removeAllDeliveredNotifications()
        try await store.save([AppSave(bundleIdentifier: "com.example.shown", machine: &shown)], bootID: "boot")
        #expect(try await store.appsShowingNotifications().isEmpty)
    }

    @Test(arguments: StoreKind.allCases)
    func theDevicesStateIsKept(_ kind: StoreKind) async throws {
        let store = try kind.make()
        #expect(try await store.deviceState() == nil)
        let passcode = DevicePasscode(salt: Data([1, 2, 3]), key: Data([4, 5, 6]), rounds: 210_000, failures: 6, retryAfter: Date(timeIntervalSince1970: 1_800_000_000))
        let state = DeviceState(isLocked: true, location: Coordinate(latitude: 48.85, longitude: 2.35), timeZoneIdentifier: "Europe/Paris", passcode: passcode,
                                focus: Focus(name: "Sleep", allowsTimeSensitive: false, allowedApps: ["com.example.alarm"]),
                                summary: ScheduledSummary(times: [.init(hour: 7, minute: 30), .init(hour: 19, minute: 0)], showsNextSummary: true))
        try await store.saveDeviceState(state)
        #expect(try await store.deviceState() == state)
        try await store.saveDeviceState(DeviceState())
        #expect(try await store.deviceState() == DeviceState())
    }
}

/// What anyone can observe of a machine: what a store must give back as it was saved.
struct ObservableState: Equatable {
    var pending: [NotificationCenterMachine.PendingRequest]
    var visible: [NotificationCenterMachine.VisibleNotification]
    var categories: [String: NotificationCategory]
    var settings: NotificationSettings
    var badge: Int
    var appState: AppState
    var isAppReachable: Bool
    var queued: Int
    var openTickets: Int
    var nextWakeUp: Date?
    var prompt: AuthorizationOptions?

    init?(_ machine: NotificationCenterMachine?) {
        guard var machine else { return nil }
        pending = machine.pendingRequests
        visible = machine.visibleNotifications
        categories = machine.categories
        settings = machine.settings
        badge = machine.badge
        appState = machine.appState
        isAppReachable = machine.isAppReachable
        queued = machine.queuedForAppCount
        openTickets = machine.openTickets
        nextWakeUp = machine.nextWakeUpDate()
        prompt = machine.promptedOptions
    }
}
