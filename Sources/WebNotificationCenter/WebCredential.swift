import Foundation
import NotificationCore
package import NotificationEngine
import Synchronization

/// The secret that pairs a browser with the web notification center.
///
/// It is kept in a file of the data directory (`center.key`, mode 0600), so a pairing outlives restarts:
/// a tab left open reconnects, and a bookmark still opens the page. Replacing the secret
/// (``rotate()``: the page's Settings, or `unotify center revoke` through ``rotate(at:)``) signs every
/// browser out at once; the file is read again whenever it changed, so a replacement made by another
/// process counts from the next request. A new secret is always written to a file of its own and
/// renamed into place: a reader sees the old secret or the new one, never half of one, and two
/// replacements at once leave one of them whole.
package final class WebCredential: Sendable {
    /// What is known of the file: its secret, and the file's identity when it was read.
    private struct Reading: Sendable {
        var secret: String
        var identity: FileIdentity?
    }

    /// The file, or `nil` for a secret kept in memory only.
    package let path: String?
    private let reading: Mutex<Reading>

    /// A secret kept in memory only, new each time: for a center that is not to outlive its process.
    package init(secret: String = DaemonEngine.makeKey()) {
        path = nil
        reading = Mutex(Reading(secret: secret, identity: nil))
    }

    /// The credential kept at `path`, made (0600) when there is none yet, or when the file holds none
    /// (an empty file left by a crash).
    ///
    /// - Throws: `storageFailed` when it can be neither read nor made.
    package init(at path: String) throws(DaemonError) {
        self.path = path
        if Self.read(path) == nil {
            // Linked into place only where there is no file: of two processes starting at once, both
            // keep the one linked first.
            let made = try Self.writeAside(DaemonEngine.makeKey(), beside: path)
            if link(made.file, path) != 0 && errno == EEXIST && Self.read(path) == nil {
                // A file is there, and holds no secret: replaced.
                rename(made.file, path)
            }
            unlink(made.file)
        }
        guard let secret = Self.read(path) else {
            throw DaemonError(.storageFailed, "Cannot read or create the notification center's credential at \(path).")
        }
        reading = Mutex(Reading(secret: secret, identity: FileIdentity.of(path)))
    }

    /// The secret now: the file's, read again when the file changed since it was last read.
    package var secret: String {
        guard let path else { return reading.withLock { $0.secret } }
        let identity = FileIdentity.of(path)
        return reading.withLock { reading in
            // A file gone or unreadable leaves the last secret: a credential is replaced, never removed.
            if identity != reading.identity, let secret = Self.read(path) {
                reading = Reading(secret: secret, identity: identity)
            }
            return reading.secret
        }
    }

    /// Whether `value` is the secret now.
    package func accepts(_ value: String?) -> Bool {
        guard let value else { return false }
        return constantTimeEqual(value, secret)
    }

    /// Replaces the secret: every browser paired with the old one is signed out.
    ///
    /// - Returns: the new secret.
    @discardableResult
    package func rotate() throws(DaemonError) -> String {
        guard let path else {
            let secret = DaemonEngine.makeKey()
            reading.withLock { $0 = Reading(secret: secret, identity: nil) }
            return secret
        }
        let (secret, identity) = try Self.rotate(at: path)
        // The identity is the new file's own, taken before it was renamed: a replacement by another
        // process meanwhile is another file, read at the next request.
        reading.withLock { $0 = Reading(secret: secret, identity: identity) }
        return secret
    }

    /// Writes a new secret to the credential file at `path` (another process's center reads it at its
    /// next request); returns it, and its file's identity.
    @discardableResult
    package static func rotate(at path: String) throws(DaemonError) -> (secret: String, identity: FileIdentity) {
        let secret = DaemonEngine.makeKey()
        let made = try writeAside(secret, beside: path)
        guard rename(made.file, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(made.file)
            throw DaemonError(.storageFailed, "Cannot write the notification center's credential at \(path): \(reason).")
        }
        return (secret, made.identity)
    }

    /// The secret in the file at `path`, if it holds one.
    package static func read(_ path: String) -> String? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        let secret = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return secret.isEmpty ? nil : secret
    }

    /// `secret` written (0600, to the disk) to a new file of its own beside `path`, and that file's identity.
    private static func writeAside(_ secret: String, beside path: String) throws(DaemonError) -> (file: String, identity: FileIdentity) {
        var template = Array((path + ".XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else {
            throw DaemonError(.storageFailed, "Cannot write the notification center's credential beside \(path): \(String(cString: strerror(errno))).")
        }
        defer { close(descriptor) }
        let file = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let bytes = Array((secret + "\n").utf8)
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        var status = stat()
        guard written == bytes.count, fsync(descriptor) == 0, fstat(descriptor, &status) == 0 else {
            unlink(file)
            throw DaemonError(.storageFailed, "Cannot write the notification center's credential beside \(path): \(String(cString: strerror(errno))).")
        }
        return (file, FileIdentity(status))
    }
}

/// A file's inode, size and change time: any replacement changes one of them.
package struct FileIdentity: Sendable, Equatable {
    var device: UInt64
    var inode: UInt64
    var size: Int64
    var changedSeconds: Int
    var changedNanoseconds: Int

    init(_ status: stat) {
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
        size = Int64(status.st_size)
        #if canImport(Darwin)
        changedSeconds = Int(status.st_ctimespec.tv_sec)
        changedNanoseconds = Int(status.st_ctimespec.tv_nsec)
        #else
        changedSeconds = Int(status.st_ctim.tv_sec)
        changedNanoseconds = Int(status.st_ctim.tv_nsec)
        #endif
    }

    /// The identity of the file at `path`, if there is one.
    static func of(_ path: String) -> FileIdentity? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return FileIdentity(status)
    }
}
