package import Foundation
package import NotificationCore

/// The folder a notification system keeps attachment files in: the in-process system's and the
/// daemon's. As Apple's system does when a request is added, each attachment file is copied in, and the
/// request kept points at the copy, so the app may delete or change its own file afterwards.
package struct AttachmentStore: Sendable {
    /// The store's folder; created when the first file is copied in.
    package let root: URL
    /// A folder no attachment may come from, but for this store's own files: the daemon's data
    /// directory, with every app's copies, the database and the keys.
    package let privateFolder: URL?

    package init(root: URL, privateFolder: URL? = nil) {
        self.root = root
        self.privateFolder = privateFolder
    }

    /// The request with every attachment checked and copied into the store, and the folder of its
    /// copies (`nil` when there was nothing to copy), to ``discard(_:)`` if the request is then refused.
    /// Files that are already in the store (a request added again) are kept where they are.
    ///
    /// Every file is checked here, whoever sent the request: it must be a regular file (not a folder,
    /// a device or a pipe), of a supported type whose first bytes match, within its type's size limit.
    /// The copy reads no more than that limit, so a file that grows meanwhile is refused, not copied
    /// without end.
    ///
    /// - Throws: `attachmentInvalidURL` for a path that is not a readable regular file; the codes of
    ///   ``AttachmentRules/validate(pathExtension:typeHint:fileSize:header:)``;
    ///   `attachmentNotInDataStore` for a file of the store that was removed; and
    ///   `attachmentMoveIntoDataStoreFailed` for one that cannot be copied. Nothing is left behind.
    ///
    /// - Parameter extensionFolder: for content an app's service extension made, the extension's own
    ///   folder: every file must be one it wrote there (`attachmentInvalidURL` otherwise), even when that
    ///   folder is among the system's own files.
    package func store(_ request: NotificationRequest, from extensionFolder: URL? = nil) throws(NotificationFailure) -> (request: NotificationRequest, copies: URL?) {
        guard !request.content.attachments.isEmpty else { return (request, nil) }
        var stored = request
        let folder = root.appendingPathComponent(UUID().uuidString, isDirectory: true)
        var copiedAny = false
        do throws(NotificationFailure) {
            for (index, attachment) in request.content.attachments.enumerated() {
                let source = attachment.url.standardizedFileURL
                if let extensionFolder {
                    guard Self.path(source.resolvingSymlinksInPath(), isInside: extensionFolder.resolvingSymlinksInPath()) else {
                        throw NotificationFailure(.attachmentInvalidURL, detail: "\(source.path) is not a file the service extension wrote in its folder.")
                    }
                } else if contains(source) {
                    guard Self.isRegularFileNotLink(source.path) else {
                        throw NotificationFailure(.attachmentNotInDataStore, detail: "\(source.lastPathComponent) was removed from the store.")
                    }
                    stored.content.attachments[index].url = source
                    continue
                }
                if extensionFolder == nil, let privateFolder, Self.path(source.resolvingSymlinksInPath(), isInside: privateFolder.resolvingSymlinksInPath()) {
                    throw NotificationFailure(.attachmentInvalidURL, detail: "\(source.lastPathComponent) is among the notification system's own files.")
                }
                let destination = folder.appendingPathComponent("\(index)-\(source.lastPathComponent)")
                let type = try Self.copy(source, typeHint: attachment.type, to: destination, creating: folder)
                stored.content.attachments[index].url = destination
                stored.content.attachments[index].type = type.identifier
                copiedAny = true
            }
        } catch {
            discard(folder)
            throw error
        }
        return (stored, copiedAny ? folder : nil)
    }

    /// Whether `file` is inside this store's folder.
    private func contains(_ file: URL) -> Bool {
        Self.path(file, isInside: root)
    }

    /// Whether `file` is one of this store's copies as it stands: inside its folder once links are
    /// followed. (It may still have been removed since.)
    package func holds(_ file: URL) -> Bool {
        Self.path(file.resolvingSymlinksInPath(), isInside: root.resolvingSymlinksInPath())
    }

    private static func path(_ file: URL, isInside folder: URL) -> Bool {
        file.standardizedFileURL.path.hasPrefix(folder.standardizedFileURL.path + "/")
    }

    private static func isRegularFileNotLink(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
    }

    /// Checks `source` and copies it to `destination`, reading at most its type's size limit.
    private static func copy(_ source: URL, typeHint: String, to destination: URL, creating folder: URL) throws(NotificationFailure) -> AttachmentRules.FileType {
        // Opened without waiting (a pipe would block) and checked on the open file itself, so what is
        // checked is what is read.
        let descriptor = open(source.path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw NotificationFailure(.attachmentInvalidURL, detail: "\(source.path) cannot be opened: \(String(cString: strerror(errno))).")
        }
        let file = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        var info = stat()
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            throw NotificationFailure(.attachmentInvalidURL, detail: "\(source.path) is not a regular file.")
        }
        let header: [UInt8]
        do {
            header = Array(try file.read(upToCount: 16) ?? Data())
        } catch {
            throw NotificationFailure(.attachmentInvalidURL, detail: "\(source.path) cannot be read: \(error.localizedDescription).")
        }
        let hint = AttachmentRules.supportedTypes.contains { $0.identifier == typeHint } ? typeHint : nil
        let type: AttachmentRules.FileType
        switch AttachmentRules.validate(pathExtension: source.pathExtension, typeHint: hint, fileSize: Int(info.st_size), header: header) {
        case .success(let valid): type = valid
        case .failure(let failure): throw failure
        }
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let created = open(destination.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard created >= 0 else {
                throw NotificationFailure(.attachmentMoveIntoDataStoreFailed, detail: "\(destination.path) cannot be created: \(String(cString: strerror(errno))).")
            }
            let output = FileHandle(fileDescriptor: created, closeOnDealloc: true)
            defer { try? output.close() }
            try output.write(contentsOf: header)
            var copied = header.count
            while let chunk = try file.read(upToCount: 1 << 16), !chunk.isEmpty {
                copied += chunk.count
                guard copied <= type.family.maximumSize else {
                    throw NotificationFailure(.attachmentInvalidFileSize, detail: "\(source.lastPathComponent) grew past the \(type.family.maximumSize)-byte limit while it was copied.")
                }
                try output.write(contentsOf: chunk)
            }
            try output.synchronize()
        } catch let failure as NotificationFailure {
            throw failure
        } catch {
            throw NotificationFailure(.attachmentMoveIntoDataStoreFailed, detail: "\(source.path): \(error.localizedDescription)")
        }
        return type
    }

    /// Removes the copies of a refused request.
    package func discard(_ copies: URL?) {
        if let copies { try? FileManager.default.removeItem(at: copies) }
    }

    /// Deletes attachment files nothing refers to any more, and each request's folder once it is empty.
    /// Only files inside the store are touched: a file elsewhere (the app's own, when a request was kept
    /// without copying) is never deleted.
    package func release(_ files: [URL]) {
        guard !files.isEmpty else { return }
        let fileManager = FileManager.default
        let rootPath = root.standardizedFileURL.path + "/"
        for file in files {
            let path = file.standardizedFileURL.path
            guard path.hasPrefix(rootPath) else { continue }
            try? fileManager.removeItem(atPath: path)
            let folder = file.standardizedFileURL.deletingLastPathComponent()
            if folder.path.hasPrefix(rootPath), (try? fileManager.contentsOfDirectory(atPath: folder.path))?.isEmpty == true {
                try? fileManager.removeItem(at: folder)
            }
        }
    }
}
