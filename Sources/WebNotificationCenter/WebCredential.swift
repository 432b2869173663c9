import Foundation
import NotificationCore
import NotificationEngine
import PrivateFiles
import Synchronization

/// The secret that pairs a browser with the web notification center.
///
/// It is kept in a file of the data directory (`center.key`, mode 0600), so a pairing outlives restarts:
/// a tab left open reconnects, and a bookmark still opens the page. Replacing the secret
/// (``rotate(at:)``: the page's Settings, or `unotify center revoke`) signs every browser out at once;
/// the file is read again whenever it changed, so a replacement made by another process counts from
/// the next request.
package final class WebCredential: Sendable {
    /// What is known of the file: its secret, and the file's identity when it was read.
    private struct Reading: Sendable {
        var secret: String
        var identity: FileIdentity?
    }

    /// A file's inode, size and change time: any replacement changes one of them.
    private struct FileIdentity: Sendable, Equatable {
        var inode: UInt64
        var size: Int64
        var changed: timespec

        static func == (a: FileIdentity, b: FileIdentity) -> Bool {
            a.inode == b.inode && a.size == b.size && a.changed.tv_sec == b.changed.tv_sec && a.changed.tv_nsec == b.changed.tv_nsec
        }

        static func of(_ path: String) -> FileIdentity? {
            var status = stat()
            guard stat(path, &status) == 0 else { return nil }
            return FileIdentity(inode: UInt64(status.st_ino), size: Int64(status.st_size), changed: status.st_ctim)
        }
    }

    /// The file, or `nil` for a secret kept in memory only.
    package let path: String?
    private let reading: Mutex<Reading>

    /// A secret kept in memory only, new each time: for a center that is not to outlive its process.
    package init(secret: String = DaemonEngine.makeKey()) {
        path = nil
        reading = Mutex(Reading(secret: secret, identity: nil))
    }

    /// The credential kept at `path`, made (0600) when there is none yet.
    ///
    /// - Throws: ``WebCredential/Failure`` when it can be neither read nor made.
    package init(at path: String) throws {
        self.path = path
        if Self.read(path) == nil {
            // Made once, never overwritten here: two processes starting at once keep the one written first.
            _ = PrivateFiles.createFile(atPath: path, contents: Data((DaemonEngine.makeKey() + "\n").utf8))
        }
        let identity = FileIdentity.of(path)
        guard let secret = Self.read(path) else {
            throw Failure("Cannot read or create the notification center's credential at \(path).")
        }
        reading = Mutex(Reading(secret: secret, identity: identity))
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

    /// Replaces the secret: every browser paired with the old one is signed out. Kept in memory, or
    /// written to the file whole (a new file renamed over the old one) so no reader sees half of one.
    ///
    /// - Returns: the new secret.
    @discardableResult
    package func rotate() throws -> String {
        guard let path else {
            let secret = DaemonEngine.makeKey()
            reading.withLock { $0 = Reading(secret: secret, identity: nil) }
            return secret
        }
        let secret = try Self.rotate(at: path)
        reading.withLock { $0 = Reading(secret: secret, identity: FileIdentity.of(path)) }
        return secret
    }

    /// Writes a new secret to the credential file at `path` (another process's center reads it at its
    /// next request) and returns it.
    package static func rotate(at path: String) throws -> String {
        let secret = DaemonEngine.makeKey()
        let fresh = path + ".new"
        unlink(fresh)
        guard PrivateFiles.createFile(atPath: fresh, contents: Data((secret + "\n").utf8)), rename(fresh, path) == 0 else {
            unlink(fresh)
            throw Failure("Cannot write the notification center's credential at \(path): \(String(cString: strerror(errno))).")
        }
        return secret
    }

    /// The secret in the file at `path`, if it holds one.
    package static func read(_ path: String) -> String? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        let secret = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return secret.isEmpty ? nil : secret
    }

    /// Why the credential could not be read or written.
    package struct Failure: Error, CustomStringConvertible {
        package var description: String
        init(_ description: String) { self.description = description }
    }
}
