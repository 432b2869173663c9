import DaemonTestSupport
import Foundation
import NotificationCore
@testable import NotificationDaemon
@testable import NotificationEngine
import Testing
import TestSupport

/// Pushes from the gateway's device link, received by the engine over a real SQLite file: each
/// delivered once, however often the link sends it and whenever the daemon stops.
@Suite(.timeLimit(.minutes(1))) struct ReceivePushEngineTests {
    func engine(at path: String) async throws -> DaemonEngine {
        var configuration = DaemonEngine.Configuration()
        configuration.timeZone = TimeZone(identifier: "UTC")!
        configuration.privateFolder = URL(fileURLWithPath: path).deletingLastPathComponent()
        return await DaemonEngine(store: try SQLiteDaemonStore(path: path), clock: ManualDaemonClock(), configuration: configuration)
    }

    func push(_ sequence: Int64, _ payload: String, app: String = "com.example.todo", collapseID: String? = "score") -> DeviceLink.Push {
        DeviceLink.Push(sequence: sequence, token: "ab", bundleIdentifier: app, environment: .sandbox, apnsID: "id-\(sequence)",
                        pushType: .alert, priority: 10, expiresAt: 2_000_000_000, collapseID: collapseID, payload: payload, receivedAt: 1_767_225_600)
    }

    func shownBodies(_ engine: DaemonEngine) async throws -> [String] {
        try await engine.visibleNotifications("com.example.todo").map(\.notification.request.content.body)
    }

    @Test func aPushIsShownOnceEvenWhenTheLinkSendsItAgain() async throws {
        let path = try makeTestDirectory().appendingPathComponent("db.sqlite").path
        do {
            let engine = try await engine(at: path)
            _ = try await engine.registerApp("com.example.todo")
            _ = try await engine.authorize("com.example.todo", .grant)
            try await engine.receivePush(push(1, #"{"aps":{"alert":"1-0"}}"#))
            #expect(try await shownBodies(engine) == ["1-0"])
            let shown = try await engine.visibleNotifications("com.example.todo")
            #expect(shown.first?.notification.request.identifier == "score")
            #expect(shown.first?.notification.request.trigger == .push)
            // Sent again (the acknowledgement was lost): not delivered again. A different payload
            // under the same sequence shows it would have replaced the first.
            try await engine.receivePush(push(1, #"{"aps":{"alert":"replayed"}}"#))
            #expect(try await shownBodies(engine) == ["1-0"])
            #expect(await engine.linkSequence == 1)
        }
        // After a restart, what was received is known from the store.
        let restarted = try await engine(at: path)
        #expect(await restarted.linkSequence == 1)
        try await restarted.receivePush(push(1, #"{"aps":{"alert":"replayed"}}"#))
        #expect(try await shownBodies(restarted) == ["1-0"])
        try await restarted.receivePush(push(2, #"{"aps":{"alert":"2-0"}}"#))
        #expect(try await shownBodies(restarted) == ["2-0"])
    }

    @Test func pushesThatCannotBeDeliveredAreDroppedAndRemembered() async throws {
        let path = try makeTestDirectory().appendingPathComponent("db.sqlite").path
        do {
            let engine = try await engine(at: path)
            _ = try await engine.registerApp("com.example.todo")
            try await engine.receivePush(push(5, #"{"aps":{"alert":"x"}}"#, app: "com.example.removed"))
            #expect(await engine.linkSequence == 5)
            try await engine.receivePush(push(6, "not json"))
            #expect(await engine.linkSequence == 6)
            // The app is not authorized: nothing is shown, and the push counts as received.
            try await engine.receivePush(push(7, #"{"aps":{"alert":"unseen"}}"#))
            #expect(try await shownBodies(engine).isEmpty)
        }
        #expect(try await engine(at: path).linkSequence == 7)
    }

    /// A push's localization keys are looked up in the app's strings, as in its `Localizable.strings`;
    /// a key the app does not have is shown as it is.
    @Test func localizationKeysAreLookedUpInTheAppsStrings() async throws {
        let path = try makeTestDirectory().appendingPathComponent("db.sqlite").path
        let payload = #"{"aps":{"alert":{"title-loc-key":"GAME_TITLE","loc-key":"GAME_PLAY_REQUEST_FORMAT","loc-args":["Jenna","Frank"],"subtitle-loc-key":"MISSING"}}}"#
        do {
            let engine = try await engine(at: path)
            _ = try await engine.registerApp("com.example.todo")
            _ = try await engine.authorize("com.example.todo", .grant)
            try await engine.setStrings("com.example.todo", [
                "GAME_TITLE": "Game Request", "GAME_PLAY_REQUEST_FORMAT": "%@ and %@ have invited you to play Monopoly",
            ])
            try await engine.receivePush(push(1, payload))
            let content = try #require(try await engine.visibleNotifications("com.example.todo").first).notification.request.content
            #expect(content.title == "Game Request")
            #expect(content.body == "Jenna and Frank have invited you to play Monopoly")
            #expect(content.subtitle == "MISSING")
            await #expect(throws: DaemonError.self) { try await engine.setStrings("com.example.nobody", ["A": "B"]) }
        }
        // Kept across a restart; an empty table removes them.
        let restarted = try await engine(at: path)
        try await restarted.receivePush(push(2, payload, collapseID: "second"))
        let again = try await restarted.visibleNotifications("com.example.todo").first { $0.notification.request.identifier == "second" }
        #expect(again?.notification.request.content.title == "Game Request")
        try await restarted.setStrings("com.example.todo", [:])
        try await restarted.receivePush(push(3, payload, collapseID: "third"))
        let raw = try await restarted.visibleNotifications("com.example.todo").first { $0.notification.request.identifier == "third" }
        #expect(raw?.notification.request.content.title == "GAME_TITLE")
    }

    /// Strings and extensions that earlier versions kept as files beside the database are moved into
    /// the store as the engine starts: the app keeps them, the files are gone, and a removed app's
    /// file is cleared away. A file that cannot be read stays where it is.
    @Test func resourceFilesOfEarlierVersionsMoveIntoTheStore() async throws {
        let folder = try makeTestDirectory()
        let path = folder.appendingPathComponent("db.sqlite").path
        do {
            let engine = try await engine(at: path)
            _ = try await engine.registerApp("com.example.todo")
            _ = try await engine.authorize("com.example.todo", .grant)
        }
        let strings = folder.appendingPathComponent("strings", isDirectory: true)
        let extensions = folder.appendingPathComponent("extensions", isDirectory: true)
        try FileManager.default.createDirectory(at: strings, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: extensions.appendingPathComponent("com.example.todo/Caches"), withIntermediateDirectories: true)
        try Data(#"{"GREETING":"Hello"}"#.utf8).write(to: strings.appendingPathComponent("com.example.todo.json"))
        try Data(#"{"A":"B"}"#.utf8).write(to: strings.appendingPathComponent("com.example.removed.json"))
        try Data(#"{"executable":"/bin/cat","timeLimit":30}"#.utf8).write(to: extensions.appendingPathComponent("com.example.todo.json"))
        try Data("not json".utf8).write(to: extensions.appendingPathComponent("com.example.todo.content-extension.json"))

        let engine = try await engine(at: path)
        try await engine.receivePush(push(1, #"{"aps":{"alert":{"loc-key":"GREETING"}}}"#))
        #expect(try await shownBodies(engine) == ["Hello"])
        #expect(try await engine.serviceExtension(of: "com.example.todo")?.executable == "/bin/cat")
        #expect(await engine.contentExtension(of: "com.example.todo") == nil)
        #expect(!FileManager.default.fileExists(atPath: strings.path))
        #expect(!FileManager.default.fileExists(atPath: extensions.appendingPathComponent("com.example.todo.json").path))
        #expect(FileManager.default.fileExists(atPath: extensions.appendingPathComponent("com.example.todo.content-extension.json").path))
        // The extension's own folder is the extension's, not a resource: it stays.
        #expect(FileManager.default.fileExists(atPath: extensions.appendingPathComponent("com.example.todo/Caches").path))
        // Removing the app removes what it brought; registered again, it has none of it.
        try await engine.removeApp("com.example.todo")
        _ = try await engine.registerApp("com.example.todo")
        #expect(try await engine.serviceExtension(of: "com.example.todo") == nil)
    }
}
