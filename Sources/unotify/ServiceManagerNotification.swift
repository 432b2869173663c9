import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Tells the service manager that started the process (systemd, with `Type=notify`) that it is ready:
/// `READY=1` on the datagram socket named by `NOTIFY_SOCKET` (a path, or `@name` in the abstract
/// namespace), as `sd_notify(3)` does. Without `NOTIFY_SOCKET`, nothing.
enum ServiceManagerNotification {
    static func ready() {
        send("READY=1")
    }

    /// Sends `state` to the service manager; a failure is not the process's to act on.
    static func send(_ state: String) {
        guard let target = ProcessInfo.processInfo.environment["NOTIFY_SOCKET"], !target.isEmpty else { return }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var path = Array(target.utf8)
        // `@name`: a socket in the abstract namespace, its name after a NUL byte.
        if path.first == UInt8(ascii: "@") { path[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard path.count < capacity else { return }
        withUnsafeMutableBytes(of: &address.sun_path) { bytes in
            for (index, byte) in path.enumerated() { bytes[index] = byte }
        }
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + path.count)
        let message = Array(state.utf8)
        _ = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                message.withUnsafeBytes { bytes in sendto(descriptor, bytes.baseAddress, bytes.count, 0, socketAddress, length) }
            }
        }
    }
}
