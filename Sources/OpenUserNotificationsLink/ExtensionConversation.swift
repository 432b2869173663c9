package import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The daemon's end of an app extension's conversation: the process's original standard output, one
/// JSON message per line. Standard output itself then goes to standard error, so that the extension's
/// own `print`s do not mix with the conversation.
package struct ExtensionConversation: Sendable {
    let descriptor: Int32

    /// Takes the process's standard output for the conversation; call it before anything is printed.
    package static func takeStandardOutput() -> ExtensionConversation {
        fflush(nil)
        let descriptor = dup(STDOUT_FILENO)
        dup2(STDERR_FILENO, STDOUT_FILENO)
        return ExtensionConversation(descriptor: descriptor)
    }

    /// Writes one message's line, all of it.
    package func send(_ line: Data) {
        line.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 { if errno == EINTR { continue } else { return } }
                offset += written
            }
        }
    }
}
