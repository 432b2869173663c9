import Foundation

/// Reads what a child process writes to a pipe, with blocking reads on a thread of its own.
///
/// Not `FileHandle.readabilityHandler`: on Linux, tearing its dispatch read source down while other
/// tests set theirs up can leave libdispatch's epoll bookkeeping pointing at freed memory, and the
/// whole test process crashes in `_dispatch_event_loop_drain` (swift-corelibs-libdispatch#949). A
/// blocking read never registers the descriptor with libdispatch.
package enum PipeReader {
    /// Hands each chunk read from `handle` to `received`, then an empty chunk once the writers have all
    /// closed their end. `handle` stays open until then.
    package static func start(_ handle: FileHandle, name: String, _ received: @escaping @Sendable (Data) -> Void) {
        let thread = Thread {
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(handle.fileDescriptor, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                received(Data(buffer[..<count]))
            }
            received(Data())
        }
        thread.name = "output of \(name)"
        thread.start()
    }
}
