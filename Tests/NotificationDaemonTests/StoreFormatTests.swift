import Foundation
import GRDB
import NotificationCore
@testable import NotificationDaemon
@testable import NotificationEngine
import Testing
import TestSupport

/// The SQLite store's file format: databases written by earlier versions are migrated with every
/// app's state, and rows written by this version stay readable by the next.
@Suite struct StoreFormatTests {
    static let start = Date(timeIntervalSince1970: 1_767_225_600)

    /// A machine with something in every part a store keeps: settings, categories, a badge, pending
    /// requests of each kind of trigger, notifications the person can see, and a reply kept for the
    /// app while it is not running. Always the same, to the byte.
    static func fullMachine() throws -> NotificationCenterMachine {
        var machine = NotificationCenterMachine(
            now: start, calendar: Calendar(identifier: .gregorian), timeZone: TimeZone(identifier: "UTC")!,
            appState: .notRunning, appReachable: false
        )
        _ = machine.changeSettings(.granting([.alert, .sound, .badge], status: .authorized))
        let reply = NotificationAction(identifier: "reply", title: "Reply", textInput: .init(buttonTitle: "Send", placeholder: "Message"))
        let delete = NotificationAction(identifier: "delete", title: "Delete", options: [.destructive])
        try machine.setCategories([NotificationCategory(identifier: "message", actions: [reply, delete], options: [.customDismissAction])])
        var content = NotificationContent()
        content.title = "Lunch"
        content.body = "At noon, as usual?"
        content.categoryIdentifier = "message"
        content.threadIdentifier = "lunch"
        content.badge = 3
        content.userInfo = ["from": .string("ana"), "count": .integer(2)]
        var noon = DateComponents()
        noon.hour = 12
        noon.minute = 0
        let office = CircularRegion(identifier: "office", center: Coordinate(latitude: 48.85, longitude: 2.35), radius: 100)
        _ = try machine.add(NotificationRequest(identifier: "in-an-hour", content: content, trigger: .timeInterval(3600, repeats: false)))
        _ = try machine.add(NotificationRequest(identifier: "every-noon", content: content, trigger: .calendar(noon, repeats: true)))
        _ = try machine.add(NotificationRequest(identifier: "at-the-office", content: content, trigger: .location(office, repeats: false)))
        _ = try machine.add(NotificationRequest(identifier: "shown", content: content, trigger: nil))
        _ = try machine.add(NotificationRequest(identifier: "answered", content: content, trigger: nil))
        _ = try machine.respond(to: "answered", with: .reply("reply", text: "Yes!"))
        return machine
    }

    /// The tables and migrations of the format before rows (v3): each app's whole machine as JSON.
    static let version3Schema = """
        CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
        INSERT INTO grdb_migrations VALUES ('v1'), ('v2: apps that watch the location or show notifications'), ('v3: the device''s state');
        CREATE TABLE app (
            bundleIdentifier TEXT PRIMARY KEY NOT NULL, keyHash TEXT NOT NULL UNIQUE, launchCommand TEXT,
            machine BLOB NOT NULL, nextWakeUp DOUBLE, bootID TEXT NOT NULL,
            watchesLocation BOOLEAN NOT NULL DEFAULT 1, showsNotifications BOOLEAN NOT NULL DEFAULT 1
        );
        CREATE INDEX app_nextWakeUp ON app(nextWakeUp) WHERE nextWakeUp IS NOT NULL;
        CREATE INDEX app_watchesLocation ON app(bundleIdentifier) WHERE watchesLocation;
        CREATE INDEX app_showsNotifications ON app(bundleIdentifier) WHERE showsNotifications;
        CREATE TABLE device (id INTEGER PRIMARY KEY CHECK (id = 1), locked BOOLEAN NOT NULL, latitude DOUBLE, longitude DOUBLE, timeZone TEXT);
        """

    /// A commit is synced to the disk before the call that made it is answered (`synchronous = FULL`
    /// on the writer), in a new database and in one opened again: a WAL pool sets NORMAL by itself,
    /// which survives a crash of the daemon but not a power loss.
    @Test func everyCommitIsSyncedToTheDisk() async throws {
        let path = try makeTestDirectory().appendingPathComponent("unotify.sqlite").path
        #expect(try await SQLiteDaemonStore(path: path).writerSynchronousLevel() == 2)
        #expect(try await SQLiteDaemonStore(path: path).writerSynchronousLevel() == 2)
    }

    /// A save that need not wait for the disk (the steps of apps answering `willPresent`) is kept
    /// like any other, a crash of the process loses none of it, and the writer syncs every commit
    /// after it again.
    @Test func aSaveThatNeedNotWaitForTheDiskIsKeptAndTheWriterSyncsAgain() async throws {
        let path = try makeTestDirectory().appendingPathComponent("unotify.sqlite").path
        let store = try SQLiteDaemonStore(path: path)
        var machine = try Self.fullMachine()
        try await store.insert(StoredApp(bundleIdentifier: "com.example.a", keyHash: "hash", launchCommand: nil, machine: machine, bootID: "boot"))
        machine.startRecordingChanges()
        _ = try machine.setBadgeCount(7)
        var save = AppSave(bundleIdentifier: "com.example.a", machine: &machine)
        save.waitsForTheDisk = false
        try await store.save([save], bootID: "boot")
        #expect(try await store.writerSynchronousLevel() == 2)
        // Read by another connection, as after a restart.
        #expect(try await SQLiteDaemonStore(path: path).app("com.example.a")?.machine.badge == 7)
    }

    /// A burst of writes grows the write-ahead log; once a checkpoint has copied it into the database,
    /// the file is cut back to the limit instead of keeping the burst's size on the disk for good.
    ///
    /// The log starts again from its beginning at the first commit after a checkpoint that copied all
    /// of it. A checkpoint runs beside the writer: during a quick burst of commits each one may end with
    /// newer commits in the log, and then the log is cut back only once the burst is over, at the
    /// first commit after the last checkpoint.
    @Test func theWriteAheadLogIsCutBackAfterACheckpoint() async throws {
        let path = try makeTestDirectory().appendingPathComponent("unotify.sqlite").path
        let store = try SQLiteDaemonStore(path: path, walSizeLimit: 256 << 10)
        let machine = NotificationCenterMachine(now: Date(timeIntervalSince1970: 1_767_225_600), calendar: Calendar(identifier: .gregorian),
                                                timeZone: TimeZone(identifier: "UTC")!, appState: .notRunning, appReachable: false)
        // About 8 MiB in 80 commits: a checkpoint is asked for each time the log passes the store's
        // threshold (`pagesBeforeCheckpoint`, 250 pages of 4 KiB: 1 MiB).
        let large = String(repeating: "x", count: 100_000)
        func insert(_ index: Int) async throws -> Int {
            try await store.insert(StoredApp(bundleIdentifier: "com.example.\(index)", keyHash: "hash-\(index)", launchCommand: large,
                                             machine: machine, bootID: "boot"))
            return (try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
        }
        var sizes: [Int] = []
        for index in 0..<80 { sizes.append(try await insert(index)) }
        let threshold = Int(SQLiteDaemonStore.pagesBeforeCheckpoint) * 4096
        #expect(try #require(sizes.max()) > threshold * 3 / 4, "the burst grew the log to a checkpoint")
        store.waitUntilCheckpointsAreDone()
        sizes.append(try await insert(80))
        // Without the limit, the file never gets smaller: it is written again from its start.
        let shrunk = zip(sizes, sizes.dropFirst()).first { $1 < $0 }
        #expect(shrunk.map { $0.1 <= (256 << 10) + 200_000 } == true, "the log was cut back to the limit: \(sizes)")
    }

    @Test func aDatabaseOfTheEarlierFormatIsMigratedWithEveryAppsState() async throws {
        let path = try makeTestDirectory().appendingPathComponent("store.sqlite").path
        var machine = try Self.fullMachine()
        let nextWakeUp = machine.nextWakeUpDate()
        let wakeUp = try #require(nextWakeUp)
        let stored = try JSONEncoder().encode(machine)
        let queue = try DatabaseQueue(path: path)
        try await queue.write { db in
            try db.execute(sql: Self.version3Schema)
            try db.execute(
                sql: "INSERT INTO app (bundleIdentifier, keyHash, launchCommand, machine, nextWakeUp, bootID) VALUES (?, ?, ?, ?, ?, ?)",
                arguments: ["com.example.old", "hash", "run-it", stored, wakeUp.timeIntervalSince1970, "earlier-run"]
            )
            try db.execute(sql: "INSERT INTO device VALUES (1, 1, NULL, NULL, 'Europe/Paris')")
        }
        try queue.close()

        let store = try SQLiteDaemonStore(path: path)
        let migrated = try #require(try await store.app("com.example.old"))
        #expect(ObservableState(migrated.machine) == ObservableState(machine))
        #expect(migrated.machine.queuedForAppCount == 1, "the reply kept for the app")
        #expect((migrated.keyHash, migrated.launchCommand, migrated.bootID) == ("hash", "run-it", "earlier-run"))
        #expect(try await store.bundleIdentifier(forKeyHash: "hash") == "com.example.old")
        #expect(try await store.earliestWakeUp() == wakeUp)
        #expect(try await store.appsWatchingLocation() == ["com.example.old"])
        #expect(try await store.appsShowingNotifications() == ["com.example.old"])
        #expect(try await store.deviceState() == DeviceState(isLocked: true, timeZoneIdentifier: "Europe/Paris"))
        try await store.delete("com.example.old")
        #expect(try rowCounts(path) == [0, 0, 0], "removing the app removes its rows")
    }

    /// Reports waiting for the gateway were JSON objects before v11: a store of that format reads
    /// them back, skips what it cannot read, and numbers the next after the last it ever numbered
    /// (the gateway skips reports numbered up to what it has recorded).
    @Test func reportsWaitingInTheEarlierFormatKeepTheirNumbers() async throws {
        let path = try makeTestDirectory().appendingPathComponent("store.sqlite").path
        do { _ = try SQLiteDaemonStore(path: path) }
        let queue = try DatabaseQueue(path: path)
        try await queue.write { db in
            try db.execute(sql: """
                DROP TABLE link_report;
                DELETE FROM grdb_migrations WHERE identifier = 'v11: delivery-log reports in columns';
                CREATE TABLE link_report (number INTEGER PRIMARY KEY AUTOINCREMENT, report BLOB NOT NULL);
                INSERT INTO link_report (number, report) VALUES
                    (41, CAST('{"at":1767225600.123456,"stage":"presented","uniqueID":"unique-1"}' AS BLOB)),
                    (42, CAST('{"at":1767225601.5,"detail":"\\"Ça va\\" \\u2014 oui","stage":"replied","uniqueID":"unique-1"}' AS BLOB)),
                    (43, CAST('{not json' AS BLOB)),
                    (44, CAST('{"at":1767225602,"stage":"a-later-stage","uniqueID":"unique-2"}' AS BLOB)),
                    (45, CAST('{"at":1767225603,"stage":"dismissed","uniqueID":"unique-2"}' AS BLOB));
                UPDATE sqlite_sequence SET seq = 57 WHERE name = 'link_report';
                """)
        }
        try queue.close()

        let store = try SQLiteDaemonStore(path: path)
        let waiting = try #require(try await store.deliveryReports(limit: 10))
        #expect(waiting.through == 45)
        #expect(waiting.reports == [
            DeliveryLog.Report(uniqueID: "unique-1", stage: .presented, secondsSince1970: 1_767_225_600.123456),
            DeliveryLog.Report(uniqueID: "unique-1", stage: .replied, secondsSince1970: 1_767_225_601.5, detail: "\"Ça va\" — oui"),
            DeliveryLog.Report(uniqueID: "unique-2", stage: .dismissed, secondsSince1970: 1_767_225_603),
        ])
        try await store.forgetDeliveryReports(through: waiting.through)
        try await store.saveLinkSequence(1, reports: [DeliveryLog.Report(uniqueID: "unique-3", stage: .presented, at: Self.start)])
        #expect(try await store.deliveryReports(limit: 10)?.through == 58)
    }

    /// A request's content is stored without the fields that hold their defaults (the full form, as
    /// the local API writes it, is three times the size of a typical request's), and reads back as
    /// the same content, whether nearly empty or with every field set.
    @Test func aContentIsStoredWithoutItsDefaultsAndReadsBackTheSame() async throws {
        let path = try makeTestDirectory().appendingPathComponent("unotify.sqlite").path
        let store = try SQLiteDaemonStore(path: path)
        var machine = NotificationCenterMachine(now: Self.start, calendar: Calendar(identifier: .gregorian), timeZone: TimeZone(identifier: "UTC")!,
                                                appState: .notRunning, appReachable: false)
        _ = machine.changeSettings(.granting([.alert, .sound, .badge], status: .authorized))
        var plain = NotificationContent()
        plain.title = "Water the plants"
        var full = NotificationContent()
        (full.title, full.subtitle, full.body, full.launchImageName) = ("Lunch", "Today", "At noon?", "Launch")
        full.attachments = [NotificationAttachment(identifier: "menu", url: URL(fileURLWithPath: "/store/menu.png"), type: "public.png")]
        (full.badge, full.sound) = (0, NotificationSound(kind: .default))
        full.userInfo = ["from": .string("ana")]
        (full.categoryIdentifier, full.threadIdentifier, full.summaryArgument, full.summaryArgumentCount) = ("message", "lunch", "Ana", 2)
        (full.targetContentIdentifier, full.interruptionLevel, full.relevanceScore, full.filterCriteria) = ("chat", .timeSensitive, 0.5, "work")
        var negativeZero = plain
        negativeZero.relevanceScore = -0.0
        for (identifier, content) in [("plain", plain), ("full", full), ("negative-zero", negativeZero)] {
            _ = try machine.add(NotificationRequest(identifier: identifier, content: content, trigger: .timeInterval(3600, repeats: false)))
        }
        try await store.insert(StoredApp(bundleIdentifier: "com.example.app", keyHash: "hash", launchCommand: nil, machine: machine, bootID: "boot"))

        let queue = try DatabaseQueue(path: path)
        let rows = try await queue.read { db in
            try Row.fetchAll(db, sql: "SELECT identifier, content FROM pending").map { ($0["identifier"] as String, $0["content"] as Data) }
        }
        try queue.close()
        let stored = try Dictionary(uniqueKeysWithValues: rows.map { identifier, content in
            (identifier, try JSONSerialization.jsonObject(with: content) as? [String: Any] ?? [:])
        })
        #expect(stored["plain"].map { Set($0.keys) } == ["title"])
        #expect(stored["full"]?.count == 16, "every field of the full content is kept")
        #expect(stored["negative-zero"].map { Set($0.keys) } == ["title", "relevanceScore"])

        let loaded = try #require(try await store.app("com.example.app")).machine.pendingRequests
        let contents = Dictionary(uniqueKeysWithValues: loaded.map { ($0.request.identifier, $0.request.content) })
        #expect(contents["plain"] == plain)
        #expect(contents["full"] == full)
        #expect(contents["negative-zero"]?.relevanceScore.sign == .minus)
    }

    /// A core is written in two halves joined (the settled one encoded once for all the apps that
    /// share it): the JSON is the same object as the core's own encoding, key for key, and reads back
    /// as the same core, whatever of its optional parts it holds.
    @Test func aCoreIsStoredAsItsOwnEncodingAndReadsBackTheSame() throws {
        var machine = try Self.fullMachine()
        let whole = machine.takeWhole()
        var busy = try #require(whole.core)
        let shown = try #require(whole.visible.first).shown.notification
        busy.awaitingPresentation = [7: shown]
        busy.deadlines = try JSONDecoder().decode([NotificationCenterMachine.Deadline].self, from: Data(#"[{"kind":"willPresent","ticket":7,"date":0}]"#.utf8))
        busy.location = Coordinate(latitude: 48.85, longitude: 2.35)
        busy.promptCalls = [3, 4]
        busy.badge = 12
        var elsewhere = busy
        elsewhere.timeZone = TimeZone(identifier: "Asia/Tokyo")!
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        // Twice each: once encoding the settled half, once taking it as kept.
        for core in [whole.core!, busy, elsewhere, busy, whole.core!, elsewhere] {
            let stored = try SQLiteDaemonStore.coreJSON.encode(core, with: StreamingJSONEncoder(sortsKeys: true))
            let own = try JSONSerialization.jsonObject(with: try encoder.encode(core)) as? NSDictionary
            #expect(try JSONSerialization.jsonObject(with: stored) as? NSDictionary == own)
            #expect(try JSONDecoder().decode(NotificationCenterMachine.Core.self, from: stored) == core)
        }
    }

    @Test func rowsWrittenByThisVersionStayReadable() async throws {
        let path = try makeTestDirectory().appendingPathComponent("store.sqlite").path
        let store = try SQLiteDaemonStore(path: path)
        let queue = try DatabaseQueue(path: path)
        try await queue.write { db in try db.execute(sql: Self.version4Rows) }
        try queue.close()
        let loaded = try #require(try await store.app("com.example.kept")).machine
        #expect(ObservableState(loaded) == ObservableState(try Self.fullMachine()))
    }

    @Test func aRequestWhoseStoredContentIsDamagedLoadsAndSaysSo() async throws {
        let path = try makeTestDirectory().appendingPathComponent("store.sqlite").path
        let store = try SQLiteDaemonStore(path: path)
        let queue = try DatabaseQueue(path: path)
        try await queue.write { db in
            try db.execute(sql: Self.version4Rows)
            try db.execute(sql: "UPDATE pending SET content = CAST('{not json' AS BLOB) WHERE identifier = 'in-an-hour'")
        }
        try queue.close()
        let loaded = try #require(try await store.app("com.example.kept")).machine
        let requests = Dictionary(uniqueKeysWithValues: loaded.pendingRequests.map { ($0.request.identifier, $0.request) })
        #expect(requests.count == 3, "nothing else is lost")
        #expect(requests["in-an-hour"]?.content == .unreadable)
        #expect(requests["in-an-hour"]?.trigger == .timeInterval(3600, repeats: false))
        #expect(requests["every-noon"]?.content.title == "Lunch")
    }

    /// The rows the store writes for ``fullMachine()``, as this version writes them.
    static let version4Rows = #"""
        INSERT INTO app (bundleIdentifier, keyHash, launchCommand, now, nextSequence, core, categories, nextWakeUp, bootID, watchesLocation, showsNotifications) VALUES ('com.example.kept', 'kept', NULL, 788918400.0, 6, CAST('{"appState":"notRunning","awaitingPresentation":[],"awaitingResponse":[],"badge":3,"calendar":{"current":0,"firstWeekday":1,"identifier":"gregorian","locale":{"current":0,"identifier":""},"minimumDaysInFirstWeek":1,"timeZone":{"identifier":"Etc\/UTC"}},"configuration":{"pendingRequestLimit":64,"responseTimeout":30,"visibleLimit":100,"willPresentTimeout":5},"deadlines":[],"isAppReachable":false,"isDeviceLocked":false,"promptOptions":0,"settings":{"alertSetting":2,"alertStyle":1,"announcementSetting":1,"authorizationStatus":2,"badgeSetting":2,"carPlaySetting":1,"criticalAlertSetting":1,"directMessagesSetting":0,"lockScreenSetting":2,"notificationCenterSetting":2,"providesAppNotificationSettings":false,"scheduledDeliverySetting":1,"showPreviewsSetting":1,"soundSetting":2,"timeSensitiveSetting":1},"timeZone":{"identifier":"GMT"}}' AS BLOB), CAST('[{"actions":[{"identifier":"reply","options":0,"textInput":{"buttonTitle":"Send","placeholder":"Message"},"title":"Reply"},{"identifier":"delete","options":2,"title":"Delete"}],"categorySummaryFormat":"","hiddenPreviewsBodyPlaceholder":"","identifier":"message","intentIdentifiers":[],"options":1}]' AS BLOB), 1767229200.0, 'a-run', 1, 1);
        INSERT INTO pending VALUES ('com.example.kept', 'at-the-office', 2, NULL, 0, 'location', 0, NULL, CAST('{"region":{"center":{"latitude":48.85,"longitude":2.35},"identifier":"office","notifyOnEntry":true,"notifyOnExit":true,"radius":100},"repeats":false,"type":"location"}' AS BLOB), CAST('{"attachments":[],"badge":3,"body":"At noon, as usual?","categoryIdentifier":"message","interruptionLevel":1,"launchImageName":"","relevanceScore":0,"subtitle":"","summaryArgument":"","summaryArgumentCount":1,"threadIdentifier":"lunch","title":"Lunch","userInfo":{"count":2,"from":"ana"}}' AS BLOB));
        INSERT INTO pending VALUES ('com.example.kept', 'every-noon', 1, 1767268800.0, NULL, 'calendar', 1, NULL, CAST('{"dateComponents":{"hour":12,"minute":0},"repeats":true,"type":"calendar"}' AS BLOB), CAST('{"attachments":[],"badge":3,"body":"At noon, as usual?","categoryIdentifier":"message","interruptionLevel":1,"launchImageName":"","relevanceScore":0,"subtitle":"","summaryArgument":"","summaryArgumentCount":1,"threadIdentifier":"lunch","title":"Lunch","userInfo":{"count":2,"from":"ana"}}' AS BLOB));
        INSERT INTO pending VALUES ('com.example.kept', 'in-an-hour', 0, 1767229200.0, NULL, 'timeInterval', 0, 3600.0, CAST(NULL AS BLOB), CAST('{"attachments":[],"badge":3,"body":"At noon, as usual?","categoryIdentifier":"message","interruptionLevel":1,"launchImageName":"","relevanceScore":0,"subtitle":"","summaryArgument":"","summaryArgumentCount":1,"threadIdentifier":"lunch","title":"Lunch","userInfo":{"count":2,"from":"ana"}}' AS BLOB));
        INSERT INTO delivered VALUES ('com.example.kept', 'shown', 3, CAST('{"actions":[{"identifier":"reply","options":0,"textInput":{"buttonTitle":"Send","placeholder":"Message"},"title":"Reply"},{"identifier":"delete","options":2,"title":"Delete"}],"categoryOptions":1,"notification":{"date":788918400,"request":{"content":{"attachments":[],"badge":3,"body":"At noon, as usual?","categoryIdentifier":"message","interruptionLevel":1,"launchImageName":"","relevanceScore":0,"subtitle":"","summaryArgument":"","summaryArgumentCount":1,"threadIdentifier":"lunch","title":"Lunch","userInfo":{"count":2,"from":"ana"}},"identifier":"shown"}},"presentation":{"badge":3,"banner":true,"list":true,"lockScreen":true,"sound":false}}' AS BLOB));
        INSERT INTO queued VALUES ('com.example.kept', 1, CAST('{"response":{"_1":{"actionIdentifier":"reply","notification":{"date":788918400,"request":{"content":{"attachments":[],"badge":3,"body":"At noon, as usual?","categoryIdentifier":"message","interruptionLevel":1,"launchImageName":"","relevanceScore":0,"subtitle":"","summaryArgument":"","summaryArgumentCount":1,"threadIdentifier":"lunch","title":"Lunch","userInfo":{"count":2,"from":"ana"}},"identifier":"answered"}},"userText":"Yes!"},"ticket":5}}' AS BLOB));
        """#

    private func rowCounts(_ path: String) throws -> [Int] {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { db in
            try ["pending", "delivered", "queued"].map { table in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(table)") ?? -1 }
        }
    }
}
