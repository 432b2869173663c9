import Foundation

/// The rules for files attached to notifications: which types are supported, how large each may be,
/// and how a file's first bytes must look for its type.
package enum AttachmentRules {
    /// The broad kinds of attachment, each with its own size limit.
    package enum Family: String, Sendable, Hashable {
        case audio, image, movie

        /// The largest file of this kind the system accepts, in bytes.
        package var maximumSize: Int {
            switch self {
            case .audio: 5 * 1024 * 1024
            case .image: 10 * 1024 * 1024
            case .movie: 50 * 1024 * 1024
            }
        }
    }

    /// A supported file type.
    package struct FileType: Sendable, Hashable {
        /// The Uniform Type Identifier, as Apple reports it in `UNNotificationAttachment.type`.
        package var identifier: String
        package var family: Family
        package var extensions: [String]
    }

    /// Every supported type: Apple's documented audio, image and movie types.
    package static let supportedTypes: [FileType] = [
        FileType(identifier: "public.aiff-audio", family: .audio, extensions: ["aif", "aiff", "aifc"]),
        FileType(identifier: "com.microsoft.waveform-audio", family: .audio, extensions: ["wav", "wave"]),
        FileType(identifier: "public.mp3", family: .audio, extensions: ["mp3"]),
        FileType(identifier: "public.mpeg-4-audio", family: .audio, extensions: ["m4a"]),
        FileType(identifier: "public.jpeg", family: .image, extensions: ["jpg", "jpeg"]),
        FileType(identifier: "com.compuserve.gif", family: .image, extensions: ["gif"]),
        FileType(identifier: "public.png", family: .image, extensions: ["png"]),
        FileType(identifier: "public.mpeg", family: .movie, extensions: ["mpg", "mpeg"]),
        FileType(identifier: "public.mpeg-2-video", family: .movie, extensions: ["m2v"]),
        FileType(identifier: "public.mpeg-4", family: .movie, extensions: ["mp4", "m4v"]),
        FileType(identifier: "public.avi", family: .movie, extensions: ["avi"]),
    ]

    /// The type of a file, from the app's type hint when it gives one, else from the file's extension.
    package static func fileType(pathExtension: String, typeHint: String?) -> FileType? {
        if let typeHint {
            return supportedTypes.first { $0.identifier == typeHint }
        }
        let ext = pathExtension.lowercased()
        return supportedTypes.first { $0.extensions.contains(ext) }
    }

    /// Checks a file about to be attached.
    ///
    /// - Parameters:
    ///   - pathExtension: the file name's extension.
    ///   - typeHint: the `UNNotificationAttachmentOptionsTypeHintKey` option, if given.
    ///   - fileSize: the size of the file in bytes.
    ///   - header: the file's first bytes (at least 12 when the file is that long).
    /// - Returns: the file's type, or the failure Apple reports for it.
    package static func validate(
        pathExtension: String,
        typeHint: String?,
        fileSize: Int,
        header: [UInt8]
    ) -> Result<FileType, NotificationFailure> {
        guard let type = fileType(pathExtension: pathExtension, typeHint: typeHint) else {
            let what = typeHint.map { "type hint \($0)" } ?? "extension .\(pathExtension)"
            return .failure(NotificationFailure(.attachmentUnrecognizedType, detail: "Unsupported \(what)."))
        }
        guard fileSize <= type.family.maximumSize else {
            return .failure(NotificationFailure(
                .attachmentInvalidFileSize,
                detail: "\(fileSize) bytes is over the \(type.family.maximumSize)-byte limit for \(type.family.rawValue)."
            ))
        }
        guard fileSize > 0, headerMatches(type, header) else {
            return .failure(NotificationFailure(.attachmentCorrupt, detail: "The file is not a valid \(type.identifier) file."))
        }
        return .success(type)
    }

    /// Whether a file's first bytes carry the signature of its type.
    package static func headerMatches(_ type: FileType, _ header: [UInt8]) -> Bool {
        func starts(_ bytes: [UInt8], at offset: Int = 0) -> Bool {
            header.count >= offset + bytes.count && Array(header[offset..<offset + bytes.count]) == bytes
        }
        func ascii(_ text: String, at offset: Int = 0) -> Bool { starts(Array(text.utf8), at: offset) }
        switch type.identifier {
        case "public.png": return starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        case "public.jpeg": return starts([0xFF, 0xD8, 0xFF])
        case "com.compuserve.gif": return ascii("GIF87a") || ascii("GIF89a")
        case "com.microsoft.waveform-audio": return ascii("RIFF") && ascii("WAVE", at: 8)
        case "public.avi": return ascii("RIFF") && ascii("AVI ", at: 8)
        case "public.aiff-audio": return ascii("FORM") && (ascii("AIFF", at: 8) || ascii("AIFC", at: 8))
        case "public.mpeg-4", "public.mpeg-4-audio": return ascii("ftyp", at: 4)
        case "public.mp3": return ascii("ID3") || (header.count >= 2 && header[0] == 0xFF && header[1] & 0xE0 == 0xE0)
        case "public.mpeg", "public.mpeg-2-video": return starts([0x00, 0x00, 0x01, 0xBA]) || starts([0x00, 0x00, 0x01, 0xB3])
        default: return false
        }
    }
}
