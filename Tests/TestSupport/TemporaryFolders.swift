import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Folders the tests create for their files, removed when the test process exits, so that running the
/// suite again and again leaves nothing behind (a run made hundreds of them, several gigabytes).
package enum TemporaryFolders {
    /// A new, empty folder in `parent` (the system's temporary folder unless told), named `prefix` and a
    /// random suffix.
    package static func make(_ prefix: String, in parent: URL = FileManager.default.temporaryDirectory) throws -> URL {
        let url = parent.appendingPathComponent("\(prefix)\(UUID().uuidString.prefix(8))", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        removeAtExit(url.path)
        return url
    }

    /// Removes `path` (a file or a folder with everything in it) when the process exits.
    package static func removeAtExit(_ path: String) {
        let first = paths.withLock { paths in
            paths.append(path)
            return paths.count == 1
        }
        if first {
            atexit {
                for path in TemporaryFolders.paths.withLock({ $0 }) { try? FileManager.default.removeItem(atPath: path) }
            }
        }
    }

    private static let paths = Mutex<[String]>([])
}
