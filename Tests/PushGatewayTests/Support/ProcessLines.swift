import Foundation

/// The lines a child process writes to a pipe, as they come, read with blocking reads on a thread of
/// their own (not `FileHandle.readabilityHandler`, which libdispatch on Linux tears down unsafely; see
/// the daemon tests' `PipeReader`).
enum ProcessLines {
    static func stream(_ handle: FileHandle) -> AsyncStream<String> {
        let (lines, continuation) = AsyncStream.makeStream(of: String.self)
        let thread = Thread {
            var buffer = [UInt8](repeating: 0, count: 16 * 1024)
            var pending: [UInt8] = []
            while true {
                let count = buffer.withUnsafeMutableBytes { read(handle.fileDescriptor, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                pending += buffer[..<count]
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    continuation.yield(String(decoding: pending[..<newline], as: UTF8.self))
                    pending.removeSubrange(...newline)
                }
            }
            if !pending.isEmpty { continuation.yield(String(decoding: pending, as: UTF8.self)) }
            continuation.finish()
        }
        thread.start()
        return lines
    }
}

extension ProcessLines {
    /// Everything a child process writes to a pipe until it closes it, read with `read` retried on
    /// EINTR (`FileHandle.readDataToEndOfFile()` stops the test process on an interrupted call).
    static func readAll(_ handle: FileHandle) -> String {
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(handle.fileDescriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            data += buffer[..<count]
        }
        return String(decoding: data, as: UTF8.self)
    }
}
