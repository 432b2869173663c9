import Foundation
import HTTPTypes
import Hummingbird
import NotificationCore
import NotificationDaemon
import NotificationEngine

/// The attachments of the notifications on screen, as the page shows them: each a link the page reads
/// the file from, served from the daemon's own copy only, with byte ranges for the players.
struct AttachmentFiles: Sendable {
    let engine: DaemonEngine
    private let io = FileIO()

    init(engine: DaemonEngine) {
        self.engine = engine
    }

    /// An attachment as the page receives it.
    struct Link: Encodable, Sendable {
        var identifier: String
        /// The file's Uniform Type Identifier, such as `public.png`.
        var type: String
        /// `image`, `audio` or `movie`: which element shows it.
        var kind: String
        /// The file's media type, for the browser to say whether it can play it.
        var mediaType: String
        /// The file's name as the app gave it.
        var name: String
        /// Where the page reads the file; `nil` when the file is no longer in the store.
        var url: String?
        var thumbnailHidden: Bool
        var thumbnailClippingRect: ThumbnailClippingRect?
        var thumbnailTime: Double?
    }

    /// The media types of the attachment types the system accepts.
    static let mediaTypes = [
        "public.aiff-audio": "audio/aiff",
        "com.microsoft.waveform-audio": "audio/wav",
        "public.mp3": "audio/mpeg",
        "public.mpeg-4-audio": "audio/mp4",
        "public.jpeg": "image/jpeg",
        "com.compuserve.gif": "image/gif",
        "public.png": "image/png",
        "public.mpeg": "video/mpeg",
        "public.mpeg-2-video": "video/mpeg",
        "public.mpeg-4": "video/mp4",
        "public.avi": "video/x-msvideo",
    ]

    /// The links of a notification's attachments, in its order.
    func links(of visible: LocalAPI.VisibleNotification) -> [Link] {
        let request = visible.notification.request
        return request.content.attachments.enumerated().map { index, attachment in
            let family = AttachmentRules.supportedTypes.first { $0.identifier == attachment.type }?.family
            return Link(
                identifier: attachment.identifier, type: attachment.type, kind: family?.rawValue ?? "file",
                mediaType: Self.mediaTypes[attachment.type] ?? "application/octet-stream",
                name: Self.originalName(of: attachment.url),
                url: Self.isRegularFile(attachment.url.path) ? Self.path(app: visible.bundleIdentifier, notification: request.identifier, index: index) : nil,
                thumbnailHidden: attachment.thumbnailHidden, thumbnailClippingRect: attachment.thumbnailClippingRect,
                thumbnailTime: attachment.thumbnailTime
            )
        }
    }

    /// `GET /api/apps/{app}/notifications/{identifier}/attachments/{index}`: the file, whole or the byte
    /// range asked for.
    func serve(app: String, notification identifier: String, index: Int, request: Request, context: some RequestContext) async throws -> Response {
        guard let attachment = try await engine.attachmentFile(app, notification: identifier, index: index) else {
            return Self.problem(.notFound, "attachmentNotFound", "No such attachment on screen.")
        }
        let settings = try await engine.settings(app)
        guard !PreviewPolicy.hidesPreviews(settings, locked: await engine.lockState.isLocked) else {
            return Self.problem(.forbidden, "previewHidden", "The person's settings hide this notification's preview.")
        }
        var info = stat()
        guard lstat(attachment.url.path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            return Self.problem(.notFound, "attachmentMissing", "\(Self.originalName(of: attachment.url)) is no longer in the notification system's store.")
        }
        let size = Int(info.st_size)
        var headers: HTTPFields = [
            .contentType: Self.mediaTypes[attachment.type] ?? "application/octet-stream",
            .acceptRanges: "bytes",
        ]
        switch ByteRange.parse(request.headers[.range], size: size) {
        case .whole:
            headers[.contentLength] = String(size)
            return Response(status: .ok, headers: headers, body: try await io.loadFile(path: attachment.url.path, context: context))
        case .part(let range):
            headers[.contentRange] = "bytes \(range.lowerBound)-\(range.upperBound)/\(size)"
            headers[.contentLength] = String(range.count)
            return Response(status: .partialContent, headers: headers,
                            body: try await io.loadFile(path: attachment.url.path, range: range, context: context))
        case .unsatisfiable:
            headers[.contentRange] = "bytes */\(size)"
            return Response(status: .rangeNotSatisfiable, headers: headers)
        }
    }

    static func path(app: String, notification identifier: String, index: Int) -> String {
        let unreserved = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~"))
        let segment = { (text: String) in text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text }
        return "/api/apps/\(segment(app))/notifications/\(segment(identifier))/attachments/\(index)"
    }

    /// The store names its copies `<index>-<the app's file name>`.
    static func originalName(of url: URL) -> String {
        let name = url.lastPathComponent
        guard let dash = name.firstIndex(of: "-"), name[..<dash].allSatisfy(\.isNumber), !name[..<dash].isEmpty else { return name }
        return String(name[name.index(after: dash)...])
    }

    private static func isRegularFile(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
    }

    private static func problem(_ status: HTTPResponse.Status, _ code: String, _ detail: String) -> Response {
        ProblemMiddleware<BasicRequestContext>.response(for: LocalAPI.Problem(status: Int(status.code), code: code, title: status.reasonPhrase, detail: detail))
    }
}

/// One byte range of a `Range` header (RFC 9110 §14.1.2), as players ask for them. A header this
/// does not understand, or one with several ranges, is answered with the whole file, as the RFC allows.
package enum ByteRange: Equatable {
    case whole
    case part(ClosedRange<Int>)
    case unsatisfiable

    package static func parse(_ header: String?, size: Int) -> ByteRange {
        guard let header, header.hasPrefix("bytes="), !header.contains(",") else { return .whole }
        let spec = header.dropFirst("bytes=".count).trimmingCharacters(in: .whitespaces)
        guard let dash = spec.firstIndex(of: "-") else { return .whole }
        let first = spec[..<dash], last = spec[spec.index(after: dash)...]
        if first.isEmpty {
            // The last n bytes.
            guard let suffix = Int(last), suffix >= 0 else { return .whole }
            guard suffix > 0, size > 0 else { return .unsatisfiable }
            return .part(max(0, size - suffix)...(size - 1))
        }
        guard let start = Int(first), start >= 0 else { return .whole }
        let end: Int
        if last.isEmpty {
            end = size - 1
        } else {
            guard let value = Int(last), value >= start else { return .whole }
            end = min(value, size - 1)
        }
        guard start < size else { return .unsatisfiable }
        return .part(start...end)
    }
}
