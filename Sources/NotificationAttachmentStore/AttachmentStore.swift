package import Foundation
package import NotificationCore

/// The folder a notification system keeps attachment files in: the in-process system's and the
/// daemon's. As Apple's system does when a request is added, each attachment file is copied in, and the
/// request kept points at the copy, so the app may delete or change its own file afterwards.
package struct AttachmentStore: Sendable {
    /// The store's folder; created when the first file is copied in.
    package let root: URL

    package init(root: URL) {
        self.root = root
    }

    /// The request with every attachment copied into the store, and the folder of its copies (`nil`
    /// when there was nothing to copy), to ``discard(_:)`` if the request is then refused. Files that are
    /// already in the store (a request added again) are kept where they are.
    ///
    /// - Throws: `attachmentNotInDataStore` for a file of the store that was removed, and
    ///   `attachmentMoveIntoDataStoreFailed` for one that cannot be copied. Nothing is left behind.
    package func store(_ request: NotificationRequest) throws(NotificationFailure) -> (request: NotificationRequest, copies: URL?) {
        guard !request.content.attachments.isEmpty else { return (request, nil) }
        var stored = request
        let fileManager = FileManager.default
        let folder = root.appendingPathComponent(UUID().uuidString, isDirectory: true)
        for (index, attachment) in request.content.attachments.enumerated() {
            let source = attachment.url
            if source.path.hasPrefix(root.path) {
                guard fileManager.fileExists(atPath: source.path) else {
                    discard(folder)
                    throw NotificationFailure(.attachmentNotInDataStore, detail: "\(source.lastPathComponent) was removed from the store.")
                }
                continue
            }
            let destination = folder.appendingPathComponent("\(index)-\(source.lastPathComponent)")
            do {
                try fileManager.createDirectory(at: folder, withIntermediateDirectories: true)
                try fileManager.copyItem(at: source, to: destination)
            } catch {
                discard(folder)
                throw NotificationFailure(.attachmentMoveIntoDataStoreFailed, detail: "\(source.path): \(error.localizedDescription)")
            }
            stored.content.attachments[index].url = destination
        }
        return (stored, folder)
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
