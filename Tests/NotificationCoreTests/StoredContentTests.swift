import Foundation
import NotificationCore
import Testing

/// A request a store loads keeps its content as JSON until something reads it. Replacing or removing
/// such a request asks for its attachment files, so that they are deleted once nothing refers to them:
/// every file must be found, and content without attachments should not be decoded to learn that.
@Suite struct StoredContentTests {
    private static func stored(_ content: NotificationContent, encoder: JSONEncoder = JSONEncoder()) throws -> NotificationRequest {
        NotificationRequest(identifier: "r", encodedContent: Array(try encoder.encode(content)), trigger: nil)
    }

    private static func attachment(_ name: String) -> NotificationAttachment {
        NotificationAttachment(identifier: name, url: URL(fileURLWithPath: "/store/\(name).png"), type: "public.png")
    }

    @Test func contentWithoutAttachmentsHasNoFilesAndStaysEncoded() throws {
        var content = NotificationContent()
        content.title = "Water the plants"
        content.body = #"The reply said "attachments":[{"url":"file:///etc/passwd"}] in its text"#
        let request = try Self.stored(content)
        #expect(request.attachmentURLs == [])
        #expect(request.encodedContent != nil, "answered without decoding the content")
        #expect(request.content.body == content.body)
    }

    @Test func everyAttachmentIsFound() throws {
        var content = NotificationContent()
        content.title = "Photos"
        content.attachments = [Self.attachment("a"), Self.attachment("b")]
        #expect(try Self.stored(content).attachmentURLs.map(\.path) == ["/store/a.png", "/store/b.png"])
        let pretty = JSONEncoder()
        pretty.outputFormatting = [.prettyPrinted, .sortedKeys]
        #expect(try Self.stored(content, encoder: pretty).attachmentURLs.map(\.path) == ["/store/a.png", "/store/b.png"])
    }

    @Test func aUserInfoKeyNamedAttachmentsNeitherHidesNorInventsFiles() throws {
        var content = NotificationContent()
        content.title = "Mail"
        content.userInfo = ["attachments": .array([])]
        content.attachments = [Self.attachment("c")]
        #expect(try Self.stored(content).attachmentURLs.map(\.path) == ["/store/c.png"])

        var plain = NotificationContent()
        plain.title = "Mail"
        plain.userInfo = ["attachments": .array([.string("x")])]
        #expect(try Self.stored(plain).attachmentURLs == [])
    }
}
