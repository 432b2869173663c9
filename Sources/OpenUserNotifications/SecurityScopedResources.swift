#if !canImport(Darwin)
public import Foundation

extension URL {
    /// Gives access to the file at this URL, as a notification's attachment URL needs on iOS before a
    /// content extension reads it. On Linux, files have no security scope: the answer says whether the
    /// file can be read. Balance it with ``stopAccessingSecurityScopedResource()``, as on iOS.
    public func startAccessingSecurityScopedResource() -> Bool {
        isFileURL && FileManager.default.isReadableFile(atPath: path)
    }

    /// Ends the access ``startAccessingSecurityScopedResource()`` gave; nothing to do on Linux.
    public func stopAccessingSecurityScopedResource() {}
}
#endif
