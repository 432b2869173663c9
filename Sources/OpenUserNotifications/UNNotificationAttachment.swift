public import Foundation
package import NotificationCore

/// Option key: the Uniform Type Identifier of the file, when its extension does not tell.
public let UNNotificationAttachmentOptionsTypeHintKey: String = "UNNotificationAttachmentOptionsTypeHintKey"
/// Option key: a `Bool`, whether the attachment's thumbnail is hidden.
public let UNNotificationAttachmentOptionsThumbnailHiddenKey: String = "UNNotificationAttachmentOptionsThumbnailHiddenKey"
/// Option key: the part of an image used as the thumbnail, a normalized rectangle's dictionary representation.
public let UNNotificationAttachmentOptionsThumbnailClippingRectKey: String = "UNNotificationAttachmentOptionsThumbnailClippingRectKey"
/// Option key: the frame (animated images) or time in seconds (movies) used as the thumbnail.
public let UNNotificationAttachmentOptionsThumbnailTimeKey: String = "UNNotificationAttachmentOptionsThumbnailTimeKey"

/// An image, sound or movie shown with a notification.
///
/// The file must be a local file of a supported type and within its size limit (audio 5 MB, images
/// 10 MB, movies 50 MB). It is checked when the attachment is made, and copied into the notification
/// system's own store when the request is added.
open class UNNotificationAttachment: NSObject, NSCopying, NSSecureCoding, @unchecked Sendable {
    // Sendable: every stored property is an immutable value.
    package let value: NotificationAttachment

    package init(value: NotificationAttachment) {
        self.value = value
        super.init()
    }

    /// Makes an attachment from a local file.
    ///
    /// - Parameters:
    ///   - identifier: a unique identifier; an empty string gets a generated one.
    ///   - URL: the file's URL; it must be a readable local file.
    ///   - options: the `UNNotificationAttachmentOptions…Key` options.
    /// - Throws: `UNError` with `attachmentInvalidURL`, `attachmentUnrecognizedType`,
    ///   `attachmentInvalidFileSize` or `attachmentCorrupt`.
    public convenience init(identifier: String, url URL: URL, options: [AnyHashable: Any]? = nil) throws {
        let options = options ?? [:]
        guard URL.isFileURL else {
            throw UNError(NotificationFailure(.attachmentInvalidURL, detail: "\(URL.absoluteString) is not a file URL."))
        }
        let path = URL.path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue,
              let handle = FileHandle(forReadingAtPath: path) else {
            throw UNError(NotificationFailure(.attachmentInvalidURL, detail: "No readable file at \(path)."))
        }
        defer { try? handle.close() }
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        let header = (try? handle.read(upToCount: 16)).map { [UInt8]($0) } ?? []
        let typeHint = options[UNNotificationAttachmentOptionsTypeHintKey] as? String
        switch AttachmentRules.validate(pathExtension: URL.pathExtension, typeHint: typeHint, fileSize: size, header: header) {
        case .failure(let failure):
            throw UNError(failure)
        case .success(let type):
            self.init(
                value: NotificationAttachment(
                    identifier: identifier.isEmpty ? UUID().uuidString : identifier,
                    url: URL.standardizedFileURL,
                    type: type.identifier,
                    thumbnailHidden: options[UNNotificationAttachmentOptionsThumbnailHiddenKey] as? Bool ?? false,
                    thumbnailClippingRect: Self.clippingRect(options[UNNotificationAttachmentOptionsThumbnailClippingRectKey]),
                    thumbnailTime: Self.number(options[UNNotificationAttachmentOptionsThumbnailTimeKey])
                )
            )
        }
    }

    /// The clipping option: a `CGRect`'s dictionary representation (`X`, `Y`, `Width`, `Height`, numbers
    /// of any kind), or on Linux the `CGRect` itself. Anything else, or a rectangle with nothing inside
    /// the image, leaves the whole image as the thumbnail.
    private static func clippingRect(_ option: Any?) -> ThumbnailClippingRect? {
        if let rect = option as? CGRect {
            return ThumbnailClippingRect(x: Double(rect.origin.x), y: Double(rect.origin.y), width: Double(rect.width), height: Double(rect.height))
        }
        let entries: [String: Any]? = (option as? [String: Any]) ?? (option as? NSDictionary).map { dictionary in
            Dictionary(uniqueKeysWithValues: dictionary.compactMap { key, value in (key as? String).map { ($0, value) } })
        }
        guard let entries else { return nil }
        let numbers = entries.compactMapValues(number)
        return ThumbnailClippingRect(dictionary: numbers)
    }

    /// A number option, whichever numeric type it came as.
    private static func number(_ option: Any?) -> Double? {
        switch option {
        case let value as Double: value
        case let value as CGFloat: Double(value)
        case let value as Int: Double(value)
        case let value as Float: Double(value)
        case let value as NSNumber: value.doubleValue
        default: nil
        }
    }

    /// The attachment's identifier.
    open var identifier: String { value.identifier }
    /// Where the file is: the app's file before the request is added, the system's copy afterwards.
    open var url: URL { value.url }
    /// The file's Uniform Type Identifier, such as `public.png`.
    open var type: String { value.type }

    /// Archives of this class can be read back safely.
    public class var supportsSecureCoding: Bool { true }

    /// Archives the attachment.
    open func encode(with coder: NSCoder) {
        SecureCoding.encode(value, with: coder)
    }

    /// Reads an archived attachment; `nil` when the archive is not one.
    public required convenience init?(coder: NSCoder) {
        guard let value = SecureCoding.decode(NotificationAttachment.self, from: coder) else { return nil }
        self.init(value: value)
    }

    open func copy(with zone: NSZone? = nil) -> Any { self }

    open override func isEqual(_ object: Any?) -> Bool {
        (object as? UNNotificationAttachment)?.value == value
    }

    open override var hash: Int { value.hashValue }
}
