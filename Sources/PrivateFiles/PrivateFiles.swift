package import Foundation

/// The daemon's files are its user's alone: notifications and replies are private. Folders are made
/// 0700 and files 0600 from the first byte (never made and then narrowed), and what the daemon finds
/// looser at start is reported.
package enum PrivateFiles {
    /// Creates `url` (and missing parents) as 0700; an existing folder is left as it is.
    package static func createDirectory(_ url: URL) throws {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue { return }
        let parent = url.deletingLastPathComponent()
        if parent.path != url.path { try createDirectory(parent) }
        guard mkdir(url.path, 0o700) == 0 || errno == EEXIST else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: url.path, NSLocalizedDescriptionKey: String(cString: strerror(errno))])
        }
    }

    /// Creates the file at `path` as 0600 with `contents`, failing if it exists.
    package static func createFile(atPath path: String, contents: Data) -> Bool {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return false }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        do {
            try handle.write(contentsOf: contents)
            try handle.synchronize()
            return true
        } catch {
            return false
        }
    }

    /// Replaces the file at `path` (or creates it) with `contents`, as 0600: written aside, then
    /// renamed over, so that a reader sees the whole old file or the whole new one, never half.
    @discardableResult
    package static func replaceFile(atPath path: String, contents: Data) -> Bool {
        let aside = path + ".\(getpid()).new"
        unlink(aside)
        guard createFile(atPath: aside, contents: contents) else { return false }
        guard rename(aside, path) == 0 else {
            unlink(aside)
            return false
        }
        return true
    }

    /// Makes sure an empty file exists at `path`, created as 0600 if it is new: SQLite then creates
    /// its WAL and shared-memory files with the same mode as the database.
    package static func touch(_ path: String) throws {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: path, NSLocalizedDescriptionKey: String(cString: strerror(errno))])
        }
        close(descriptor)
    }

    /// The files among `paths` that exist and that others than their owner may read or write, each
    /// with its mode.
    package static func looserThanPrivate(_ paths: [String]) -> [(path: String, mode: Int)] {
        paths.compactMap { path in
            guard let mode = (try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? Int else { return nil }
            return mode & 0o077 == 0 ? nil : (path, mode & 0o777)
        }
    }
}
