import Foundation
import OpenUserNotifications
import OpenUserNotificationsTesting
import Testing
import TestSupport

/// Every invalid call gets Apple's `UNError` code and changes nothing.
@Suite struct ValidationTests {
    enum AuthorizationCase: String, CaseIterable, Sendable {
        case notAsked, denied, turnedOff
    }

    @Test(arguments: AuthorizationCase.allCases)
    func addingWithoutAuthorizationFailsAndKeepsNothing(_ situation: AuthorizationCase) async throws {
        let harness = NotificationTestHarness()
        switch situation {
        case .notAsked:
            break
        case .denied:
            harness.person.willAnswerAuthorization(allow: false)
            #expect(try await harness.center.requestAuthorization(options: [.alert]) == false)
        case .turnedOff:
            harness.person.willAnswerAuthorization(allow: true)
            _ = try await harness.center.requestAuthorization(options: [.alert])
            await harness.person.turnOffNotifications()
        }
        let code = await unErrorCode { try await harness.add("x", trigger: UNTimeIntervalNotificationTrigger(timeInterval: 5, repeats: false)) }
        #expect(code == .notificationsNotAllowed)
        #expect(await harness.center.pendingNotificationRequests().isEmpty)
        await harness.clock.advance(by: 10)
        #expect(harness.history.presentations.isEmpty)
    }

    @Test func contentWithNothingToShowIsRejected() async throws {
        let harness = try await NotificationTestHarness.authorized()
        let code = await unErrorCode {
            try await harness.center.add(UNNotificationRequest(identifier: "empty", content: UNMutableNotificationContent(), trigger: nil))
        }
        #expect(code == .notificationInvalidNoContent)
        #expect(harness.history.presentations.isEmpty)
    }

    @Test(arguments: [
        DateComponents(month: 2, day: 30),
        DateComponents(month: 13),
        DateComponents(),
    ])
    func calendarTriggersThatNeverMatchAreRejected(_ components: DateComponents) async throws {
        let harness = try await NotificationTestHarness.authorized()
        try await harness.add("before", trigger: UNTimeIntervalNotificationTrigger(timeInterval: 60, repeats: false))
        let code = await unErrorCode {
            try await harness.add("never", trigger: UNCalendarNotificationTrigger(dateMatching: components, repeats: false))
        }
        #expect(code == .notificationInvalidNoDate)
        #expect(await harness.center.pendingNotificationRequests().map(\.identifier) == ["before"])
    }

    @Test func replacingWithAnInvalidRequestKeepsTheOldOne() async throws {
        let harness = try await NotificationTestHarness.authorized()
        try await harness.add("same", title: "old", trigger: UNTimeIntervalNotificationTrigger(timeInterval: 60, repeats: false))
        let code = await unErrorCode {
            try await harness.center.add(UNNotificationRequest(identifier: "same", content: UNMutableNotificationContent(), trigger: nil))
        }
        #expect(code == .notificationInvalidNoContent)
        #expect(await harness.center.pendingNotificationRequests().map(\.content.title) == ["old"])
    }

    @Test(arguments: [-1, -100])
    func negativeBadgeCountsAreRejected(_ count: Int) async throws {
        let harness = try await NotificationTestHarness.authorized()
        try await harness.center.setBadgeCount(3)
        let code = await unErrorCode { try await harness.center.setBadgeCount(count) }
        #expect(code == .badgeInputInvalid)
        #expect(harness.badge == 3)
    }

    @Test func badgeCountNeedsBadgePermission() async throws {
        let harness = try await NotificationTestHarness.authorized(options: [.alert])
        let code = await unErrorCode { try await harness.center.setBadgeCount(1) }
        #expect(code == .notificationsNotAllowed)
        #expect(harness.badge == 0)
    }

    @Test func contentProvidersAreNotAvailableHere() throws {
        final class Provider: NSObject, UNNotificationContentProviding {}
        let content = UNMutableNotificationContent()
        content.title = "hi"
        #expect(throws: UNError(.contentProvidingObjectNotAllowed)) {
            _ = try content.updating(from: Provider())
        }
    }
}

/// Attachments are checked when they are made and when the request is added.
@Suite struct AttachmentValidationTests {
    let folder: URL

    init() throws {
        folder = try TemporaryFolders.make("attachments-")
    }

    /// Writes a file of exactly `size` bytes starting with `header`.
    func file(_ name: String, header: [UInt8], size: Int) throws -> URL {
        let url = folder.appendingPathComponent(name)
        var data = Data(header)
        if size > data.count { data.append(Data(count: size - data.count)) }
        try data.prefix(size).write(to: url)
        return url
    }

    static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    static let wav: [UInt8] = Array("RIFF\0\0\0\0WAVE".utf8)
    static let mp4: [UInt8] = [0, 0, 0, 0x18] + Array("ftypmp42".utf8)

    @Test func nonFileURLsAndMissingFilesAreInvalidURLs() async throws {
        #expect(throws: UNError(.attachmentInvalidURL)) {
            _ = try UNNotificationAttachment(identifier: "web", url: URL(string: "https://example.com/a.png")!)
        }
        #expect(throws: UNError(.attachmentInvalidURL)) {
            _ = try UNNotificationAttachment(identifier: "missing", url: folder.appendingPathComponent("missing.png"))
        }
        #expect(throws: UNError(.attachmentInvalidURL)) {
            _ = try UNNotificationAttachment(identifier: "folder", url: folder)
        }
    }

    @Test func unsupportedTypesAreRejected() throws {
        let text = try file("notes.txt", header: Array("hello".utf8), size: 5)
        #expect(throws: UNError(.attachmentUnrecognizedType)) { _ = try UNNotificationAttachment(identifier: "t", url: text) }
        let hinted = try file("image.bin", header: Self.png, size: 64)
        #expect(throws: UNError(.attachmentUnrecognizedType)) {
            _ = try UNNotificationAttachment(identifier: "h", url: hinted, options: [UNNotificationAttachmentOptionsTypeHintKey: "public.plain-text"])
        }
        let attachment = try UNNotificationAttachment(identifier: "h", url: hinted, options: [UNNotificationAttachmentOptionsTypeHintKey: "public.png"])
        #expect(attachment.type == "public.png")
    }

    @Test(arguments: [
        ("sound.wav", wav, 5 * 1024 * 1024),
        ("image.png", png, 10 * 1024 * 1024),
        ("movie.mp4", mp4, 50 * 1024 * 1024),
    ])
    func sizeLimitsAreExact(name: String, header: [UInt8], limit: Int) throws {
        let atLimit = try file("at-\(name)", header: header, size: limit)
        #expect(throws: Never.self) { _ = try UNNotificationAttachment(identifier: "ok", url: atLimit) }
        let over = try file("over-\(name)", header: header, size: limit + 1)
        #expect(throws: UNError(.attachmentInvalidFileSize)) { _ = try UNNotificationAttachment(identifier: "big", url: over) }
    }

    @Test func filesWhoseContentsDoNotMatchTheirTypeAreCorrupt() throws {
        let fake = try file("fake.png", header: Array("GIF89a".utf8), size: 32)
        #expect(throws: UNError(.attachmentCorrupt)) { _ = try UNNotificationAttachment(identifier: "f", url: fake) }
        let empty = try file("empty.jpg", header: [], size: 0)
        #expect(throws: UNError(.attachmentCorrupt)) { _ = try UNNotificationAttachment(identifier: "e", url: empty) }
    }

    @Test func anEmptyIdentifierGetsAGeneratedOne() throws {
        let image = try file("x.png", header: Self.png, size: 16)
        let a = try UNNotificationAttachment(identifier: "", url: image)
        let b = try UNNotificationAttachment(identifier: "", url: image)
        #expect(!a.identifier.isEmpty)
        #expect(a.identifier != b.identifier)
    }

    @Test func aStoreThatCannotBeWrittenFailsTheAdd() async throws {
        let blocker = try file("not-a-folder", header: [1], size: 1)
        let harness = try await NotificationTestHarness.authorized(attachmentStore: blocker.appendingPathComponent("store"))
        let content = UNMutableNotificationContent()
        content.title = "with image"
        content.attachments = [try UNNotificationAttachment(identifier: "i", url: try file("y.png", header: Self.png, size: 16))]
        let code = await unErrorCode { try await harness.center.add(UNNotificationRequest(identifier: "r", content: content, trigger: nil)) }
        #expect(code == .attachmentMoveIntoDataStoreFailed)
        #expect(harness.history.presentations.isEmpty)
    }

    @Test func readdingARequestWhoseStoredFileWasRemovedFails() async throws {
        let harness = try await NotificationTestHarness.authorized()
        let content = UNMutableNotificationContent()
        content.title = "with image"
        content.attachments = [try UNNotificationAttachment(identifier: "i", url: try file("z.png", header: Self.png, size: 16))]
        try await harness.center.add(UNNotificationRequest(identifier: "r", content: content, trigger: nil))
        let delivered = try #require(await harness.center.deliveredNotifications().first)
        let stored = try #require(delivered.request.content.attachments.first)
        try FileManager.default.removeItem(at: stored.url)
        let code = await unErrorCode { try await harness.center.add(delivered.request) }
        #expect(code == .attachmentNotInDataStore)
    }
}

extension AttachmentValidationTests {
    @Test func aHarnessDeletesTheTemporaryFolderOfItsCopiesWhenItGoes() async throws {
        func addWithAnImage() async throws -> URL {
            let harness = try await NotificationTestHarness.authorized()
            let content = UNMutableNotificationContent()
            content.attachments = [try UNNotificationAttachment(identifier: "i", url: try file("u.png", header: Self.png, size: 16))]
            try await harness.center.add(UNNotificationRequest(identifier: "r", content: content, trigger: nil))
            let copy = try #require(await harness.center.deliveredNotifications().first?.request.content.attachments.first).url
            #expect(FileManager.default.fileExists(atPath: copy.path), "copied while the harness lives")
            // `<store>/<a folder per request>/<file>`
            return copy.deletingLastPathComponent().deletingLastPathComponent()
        }
        let folder = try await addWithAnImage()
        #expect(folder.lastPathComponent.hasPrefix("OpenUserNotifications-"), "\(folder.path)")
        #expect(!FileManager.default.fileExists(atPath: folder.path), "left behind: \(folder.path)")
    }

    /// Freed once the last job it queued has run: the job that answered the test's last call ends
    /// on the system's queue a moment after the call returns, holding the system until then. A cycle
    /// between the two (the defect this guards against) keeps them past any deadline.
    @Test func aHarnessAndItsCenterAreFreedWhenTheyGo() async throws {
        final class Delegate: NSObject, UNUserNotificationCenterDelegate {}
        final class Weak: @unchecked Sendable {
            weak var center: UNUserNotificationCenter?
        }
        let freed = Weak()
        let delegate = Delegate()
        do {
            let harness = try await NotificationTestHarness.authorized()
            harness.center.delegate = delegate
            let content = UNMutableNotificationContent()
            content.title = "Hello"
            try await harness.center.add(UNNotificationRequest(identifier: "r", content: content, trigger: nil))
            #expect(await harness.center.deliveredNotifications().count == 1)
            freed.center = harness.center
        }
        try await waitFor("the center (and the system it holds) to be freed with its harness", within: 10) { freed.center == nil }
    }

    @Test func aRefusedRequestLeavesNoCopyBehind() async throws {
        let store = folder.appendingPathComponent("store")
        let harness = try await NotificationTestHarness.authorized(attachmentStore: store)
        let content = UNMutableNotificationContent()
        content.attachments = [try UNNotificationAttachment(identifier: "i", url: try file("w.png", header: Self.png, size: 16))]
        let code = await unErrorCode {
            try await harness.center.add(UNNotificationRequest(identifier: "r", content: content,
                                                               trigger: UNCalendarNotificationTrigger(dateMatching: DateComponents(month: 2, day: 30), repeats: false)))
        }
        #expect(code == .notificationInvalidNoDate)
        let left = (try? FileManager.default.contentsOfDirectory(atPath: store.path)) ?? []
        #expect(left.isEmpty)
    }

    @Test func notAllowedIsReportedBeforeAnyCopy() async throws {
        let blocker = try file("blocker", header: [1], size: 1)
        let harness = NotificationTestHarness(attachmentStore: blocker.appendingPathComponent("store"))
        let content = UNMutableNotificationContent()
        content.attachments = [try UNNotificationAttachment(identifier: "i", url: try file("v.png", header: Self.png, size: 16))]
        let code = await unErrorCode { try await harness.center.add(UNNotificationRequest(identifier: "r", content: content, trigger: nil)) }
        #expect(code == .notificationsNotAllowed)
    }
}
