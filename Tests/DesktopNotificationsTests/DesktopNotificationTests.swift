import DBus
import DesktopNotifications
import Foundation
import NotificationCore
import NotificationEngine
import Testing

/// What the desktop is asked to show for a notification, for each kind of server.
@Suite struct DesktopNotificationTests {
    static let full = DesktopCapabilities(["actions", "body", "inline-reply", "body-markup", "sound"])

    static func shown(
        _ presentation: Presentation = Presentation(banner: true, list: true, sound: true),
        level: InterruptionLevel = .active, body: String = "Write the report!", attachments: [NotificationAttachment] = []
    ) -> NotificationCenterMachine.VisibleNotification {
        var content = NotificationContent()
        content.title = "Daily reminder"
        content.subtitle = "Work"
        content.body = body
        content.categoryIdentifier = "TODO"
        content.interruptionLevel = level
        content.sound = NotificationSound(kind: .default)
        content.attachments = attachments
        return .init(
            notification: DeliveredNotification(request: NotificationRequest(identifier: "report", content: content, trigger: nil), date: Date()),
            presentation: presentation,
            actions: [
                NotificationAction(identifier: "DONE", title: "Done"),
                NotificationAction(identifier: "DELETE", title: "Delete", options: [.destructive]),
                NotificationAction(identifier: "REPLY", title: "Reply", textInput: .init(buttonTitle: "Send", placeholder: "Say how it went")),
            ],
            categoryOptions: [], hiddenPreviewsBodyPlaceholder: nil, categorySummaryFormat: nil)
    }

    @Test func aNotificationBecomesNotifysArguments() throws {
        let notification = try #require(DesktopNotification(Self.shown(), of: "com.example.todo", capabilities: Self.full, replacing: 7))
        #expect(notification.arguments.map(\.signature).joined() == "susssasa{sv}i")
        #expect(notification.appName == "com.example.todo")
        #expect(notification.appIcon == "")
        #expect(notification.replacesID == 7)
        #expect(notification.summary == "Daily reminder — Work")
        #expect(notification.actions.map(\.key) == ["default", "DONE", "DELETE", "inline-reply"])
        #expect(notification.actions.map(\.label) == ["Open", "Done", "Delete", "Reply"])
        #expect(notification.replyAction == "REPLY")
        #expect(notification.hint("x-kde-reply-placeholder-text") == .string("Say how it went"))
        #expect(notification.hint("x-kde-reply-submit-button-text") == .string("Send"))
        #expect(notification.hint("x-unotify-destructive-actions") == .strings(["DELETE"]))
        #expect(notification.hint("desktop-entry") == .string("com.example.todo"))
        #expect(notification.hint("urgency") == .byte(1))
        #expect(notification.hint("sound-name") == .string("message-new-instant"))
        #expect(notification.hint("suppress-sound") == nil)
        #expect(notification.hint("transient") == nil)
        #expect(notification.expireTimeout == -1)
    }

    @Test func aServerWithoutActionsOrInlineRepliesGetsWhatItCanShow() throws {
        let buttonsOnly = try #require(DesktopNotification(Self.shown(), of: "a.b", capabilities: DesktopCapabilities(["actions", "body"])))
        #expect(buttonsOnly.actions.map(\.key) == ["default", "DONE", "DELETE"])
        #expect(buttonsOnly.replyAction == nil)
        let none = try #require(DesktopNotification(Self.shown(), of: "a.b", capabilities: DesktopCapabilities(["body"])))
        #expect(none.actions.isEmpty)
    }

    @Test func markupIsEscapedOnlyWhereTheServerReadsIt() throws {
        let body = "Tom & Jerry <b>"
        #expect(DesktopNotification(Self.shown(body: body), of: "a.b", capabilities: Self.full)?.body == "Tom &amp; Jerry &lt;b&gt;")
        #expect(DesktopNotification(Self.shown(body: body), of: "a.b", capabilities: DesktopCapabilities(["body"]))?.body == body)
    }

    @Test(arguments: [
        (Presentation(banner: true, list: true, sound: true), InterruptionLevel.critical, UInt8(2), true),
        (Presentation(banner: true, list: true, sound: true), .passive, 0, true),
        (Presentation(banner: false, list: true, sound: false), .active, 0, false),
        (Presentation(banner: true, list: true, sound: true), .timeSensitive, 2, true),
        (Presentation(banner: true, list: true, sound: true), .active, 1, true),
    ])
    func urgencyFollowsTheInterruptionLevelAndQuietDelivery(presentation: Presentation, level: InterruptionLevel, urgency: UInt8, sound: Bool) throws {
        let notification = try #require(DesktopNotification(Self.shown(presentation, level: level), of: "a.b", capabilities: Self.full))
        #expect(notification.hint("urgency") == .byte(urgency))
        #expect(notification.hint("suppress-sound") == (sound ? nil : .boolean(true)))
        #expect(notification.expireTimeout == (level == .critical ? 0 : -1))
    }

    @Test func theAppIsShownByItsNameAndIconAndAThreadIsAGroup() throws {
        let file = ShownAppIdentity(name: "Todo", iconFile: "/opt/todo/todo.png", desktopEntry: "com.example.todo")
        var shown = Self.shown()
        shown.notification.request.content.threadIdentifier = "work"
        let notification = try #require(DesktopNotification(shown, of: "com.example.todo", capabilities: Self.full, identity: file))
        #expect(notification.appName == "Todo")
        #expect(notification.appIcon == "/opt/todo/todo.png")
        #expect(notification.hint("desktop-entry") == .string("com.example.todo"))
        #expect(notification.hint("x-dunst-stack-tag") == .string("com.example.todo/work"))
        #expect(notification.hint("category") == .string("x-unotify.thread.com.example.todo/work"))
        // An icon of the desktop's theme goes by its name, for the server to look up.
        let themed = ShownAppIdentity(name: "Files", iconName: "org.gnome.Nautilus", desktopEntry: "org.gnome.Nautilus")
        #expect(DesktopNotification(Self.shown(), of: "org.gnome.Nautilus", capabilities: Self.full, identity: themed)?.appIcon == "org.gnome.Nautilus")
        // No thread, no group.
        #expect(DesktopNotification(Self.shown(), of: "a.b", capabilities: Self.full)?.hint("x-dunst-stack-tag") == nil)
    }

    @Test func whereTheServerHasNoReplyFieldReplyOpensTheWebCenter() throws {
        let buttons = DesktopCapabilities(["actions", "body"])
        let notification = try #require(DesktopNotification(Self.shown(), of: "a.b", capabilities: buttons, repliesInCenter: true))
        #expect(notification.actions.map(\.key) == ["default", "DONE", "DELETE", DesktopNotification.replyInCenterKey])
        #expect(notification.actions.last?.label == "Reply…")
        #expect(notification.replyAction == "REPLY")
        var table = DesktopNotificationTable()
        let key = DesktopNotificationTable.Key(bundleIdentifier: "a.b", identifier: "report")
        table.shown(key, as: 5, replyAction: notification.replyAction)
        #expect(table.replyInCenter(5)! == (key, "REPLY"))
        // The server closing it after the action is no dismissal.
        #expect(table.personAction(for: .closed(5, reason: .dismissedByUser)) == nil)
        // Without the web center, no such button.
        #expect(DesktopNotification(Self.shown(), of: "a.b", capabilities: buttons)?.replyAction == nil)
    }

    @Test func aNamedSoundIsTheFileOfThatNameInTheAppsSoundsFolder() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sounds-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data("RIFF".utf8).write(to: folder.appendingPathComponent("chime.wav"))
        let identity = ShownAppIdentity(name: "Todo", sounds: folder.path)
        func hints(_ name: String) throws -> DesktopNotification {
            var shown = Self.shown()
            shown.notification.request.content.sound = NotificationSound(kind: .named(name))
            return try #require(DesktopNotification(shown, of: "com.example.todo", capabilities: Self.full, identity: identity))
        }
        #expect(try hints("chime.wav").hint("sound-file") == .string(folder.appendingPathComponent("chime.wav").path))
        // A name the folder does not have, or one that leaves it, is the desktop's own sound.
        #expect(try hints("missing.wav").hint("sound-name") == .string("message-new-instant"))
        #expect(try hints("../chime.wav").hint("sound-file") == nil)
    }

    @Test func aDesktopEntryGivesTheNameAndIcon() throws {
        let entry = try #require(DesktopEntry.parse("""
            [Desktop Entry]
            Type=Application
            Name=Todo
            Name[fr]=Tâches
            Icon=/opt/todo/todo.svg
            [Desktop Action New]
            Name=New Task
            """, id: "com.example.todo"))
        #expect(entry.name == "Todo" && entry.icon == "/opt/todo/todo.svg")
        #expect(DesktopEntry.parse("[Desktop Entry]\nName=Hidden\nNoDisplay=true\n", id: "x") == nil)
        // Registered wins, the entry completes, the bundle identifier stands in for the rest.
        let both = ShownAppIdentity.of("com.example.todo", registered: AppIdentity(name: "My Todo"), entry: entry)
        #expect(both == ShownAppIdentity(name: "My Todo", iconFile: "/opt/todo/todo.svg", desktopEntry: "com.example.todo"))
        #expect(ShownAppIdentity.of("a.b", registered: nil, entry: nil) == ShownAppIdentity(name: "a.b"))
        // An entry found where the specification says, its themed icon's file found in hicolor.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("entries-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("applications"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("icons/hicolor/48x48/apps"), withIntermediateDirectories: true)
        try Data("[Desktop Entry]\nName=Chat\nIcon=org.example.Chat\n".utf8).write(to: folder.appendingPathComponent("applications/org.example.Chat.desktop"))
        try Data([0x89]).write(to: folder.appendingPathComponent("icons/hicolor/48x48/apps/org.example.Chat.png"))
        let found = try #require(DesktopEntries.find("org.example.Chat", environment: ["XDG_DATA_HOME": folder.path, "XDG_DATA_DIRS": "/nonexistent"]))
        #expect(found.name == "Chat" && found.icon == "org.example.Chat")
        #expect(found.iconFile == folder.appendingPathComponent("icons/hicolor/48x48/apps/org.example.Chat.png").path)
        #expect(DesktopEntries.find("org.example.Other", environment: ["XDG_DATA_HOME": folder.path, "XDG_DATA_DIRS": "/nonexistent"]) == nil)
    }

    @Test func whereTheDesktopShowsNothingNothingIsSent() {
        #expect(DesktopNotification(Self.shown(Presentation(lockScreen: true)), of: "a.b", capabilities: Self.full) == nil)
        #expect(DesktopNotification(Self.shown(.none), of: "a.b", capabilities: Self.full) == nil)
        let bannerOnly = DesktopNotification(Self.shown(Presentation(banner: true)), of: "a.b", capabilities: Self.full)
        #expect(bannerOnly?.hint("transient") == .boolean(true))
    }

    @Test func anImageIsShownAndAHiddenPreviewShowsNothingOfTheNotification() throws {
        let image = NotificationAttachment(identifier: "photo", url: URL(fileURLWithPath: "/data/attachments/a.b/photo.png"), type: "public.png")
        let sound = NotificationAttachment(identifier: "voice", url: URL(fileURLWithPath: "/data/attachments/a.b/voice.mp3"), type: "public.mp3")
        let shown = Self.shown(attachments: [sound, image])
        #expect(DesktopNotification(shown, of: "a.b", capabilities: Self.full)?.hint("image-path") == .string("file:///data/attachments/a.b/photo.png"))
        let hidden = try #require(DesktopNotification(shown, of: "a.b", capabilities: Self.full, previewHidden: true, threadCount: 3))
        #expect(hidden.summary == "")
        #expect(hidden.body == "Notification")
        #expect(hidden.hint("image-path") == nil)
        #expect(hidden.actions.map(\.key) == ["default"])
    }
}

/// What the person's answers on the desktop mean.
@Suite struct DesktopNotificationTableTests {
    let report = DesktopNotificationTable.Key(bundleIdentifier: "com.example.todo", identifier: "report")

    @Test func eachSignalBecomesItsAction() {
        var table = DesktopNotificationTable()
        table.shown(report, as: 4, replyAction: "REPLY")
        #expect(table.personAction(for: .actionInvoked(4, key: "inline-reply")) == nil)
        #expect(table.personAction(for: .replied(4, text: "done")).map { $0.1 } == .reply("REPLY", text: "done"))
        // Answered: what the server says of it afterwards is ignored.
        #expect(table.personAction(for: .closed(4, reason: .dismissedByUser)) == nil)

        table.shown(report, as: 5, replyAction: nil)
        #expect(table.personAction(for: .actionInvoked(5, key: "default")).map { $0.1 } == .open)
        table.shown(report, as: 6, replyAction: nil)
        #expect(table.personAction(for: .actionInvoked(6, key: "DONE")).map { $0.1 } == .action("DONE"))
        table.shown(report, as: 7, replyAction: nil)
        #expect(table.personAction(for: .closed(7, reason: .dismissedByUser)).map { $0.1 } == .dismiss)
    }

    @Test func anExpiredBannerIsNoAnswerAndUnknownIdsAreIgnored() {
        var table = DesktopNotificationTable()
        table.shown(report, as: 9, replyAction: nil)
        #expect(table.personAction(for: .closed(9, reason: .expired)) == nil)
        #expect(table.desktopID(of: report) == nil)
        #expect(table.personAction(for: .actionInvoked(9, key: "DONE")) == nil)
        #expect(table.personAction(for: .actionInvoked(1234, key: "DONE")) == nil)
    }

    @Test func aReplacedNotificationKeepsOneId() {
        var table = DesktopNotificationTable()
        table.shown(report, as: 3, replyAction: nil)
        table.shown(report, as: 8, replyAction: nil)
        #expect(table.desktopID(of: report) == 8)
        #expect(table.personAction(for: .actionInvoked(3, key: "DONE")) == nil)
        #expect(table.forget(report) == 8)
    }
}

/// What a desktop program's `Notify` becomes in the daemon.
@Suite struct FreedesktopNotifyTests {
    static func arguments(appName: String = "notify-send", actions: [String] = [], hints: [(String, DBusValue)] = []) -> [DBusValue] {
        [.string(appName), .uint32(0), .string(""), .string("Deploy?"), .string("Ship build 42"), .strings(actions),
         .variantDictionary(hints), .int32(-1)]
    }

    @Test func theAppIsItsDesktopEntryOrItsName() throws {
        #expect(try FreedesktopNotify(arguments: Self.arguments()).bundleIdentifier == "desktop.notify-send")
        #expect(try FreedesktopNotify(arguments: Self.arguments(appName: "Firefox Nightly")).bundleIdentifier == "desktop.firefox-nightly")
        #expect(try FreedesktopNotify(arguments: Self.arguments(appName: "../..")).bundleIdentifier == "desktop.unnamed")
        #expect(try FreedesktopNotify(arguments: Self.arguments(hints: [("desktop-entry", .string("org.gnome.Nautilus"))])).bundleIdentifier == "org.gnome.Nautilus")
        #expect(try FreedesktopNotify(arguments: Self.arguments(hints: [("desktop-entry", .string("../evil"))])).bundleIdentifier == "desktop.notify-send")
    }

    @Test func actionsMakeACategoryWithAReplyField() throws {
        let notify = try FreedesktopNotify(arguments: Self.arguments(
            actions: ["default", "Open", "yes", "Yes", "inline-reply", "Answer"],
            hints: [("x-kde-reply-placeholder-text", .string("Your answer")), ("urgency", .byte(2)), ("suppress-sound", .boolean(true))]))
        let category = notify.category
        #expect(category.identifier.hasPrefix("freedesktop-"))
        #expect(category.actions.map(\.identifier) == ["yes", "inline-reply"])
        #expect(category.actions[1].textInput == .init(buttonTitle: "Send", placeholder: "Your answer"))
        #expect(category.options == [.customDismissAction])
        let yes = try FreedesktopNotify(arguments: Self.arguments(actions: ["yes", "Yes"])).category.identifier
        let sure = try FreedesktopNotify(arguments: Self.arguments(actions: ["yes", "Sure"])).category.identifier
        #expect(yes != sure)
        let content = notify.content(category: category.identifier)
        #expect(content.title == "Deploy?" && content.body == "Ship build 42")
        #expect(content.interruptionLevel == .timeSensitive)
        #expect(content.sound == nil)
        #expect(try FreedesktopNotify(arguments: Self.arguments()).category.identifier == FreedesktopNotify.plainCategory)
    }

    @Test func badArgumentsAreRefused() {
        #expect(throws: DBusError.self) { try FreedesktopNotify(arguments: [.string("x")]) }
        #expect(throws: DBusError.self) { try FreedesktopNotify(arguments: Self.arguments(actions: ["odd"])) }
    }
}
