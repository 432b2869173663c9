package import Foundation

/// The disk's own `fsync` latencies in the benchmark's folder: one 4 KiB page rewritten and synced,
/// again and again. A durable add, or a push answered once durable, waits for a sync, so its latency
/// is read against this distribution, measured in the same run (before and after the load): a slow
/// sync is a slow answer, whatever the code does.
package struct DiskSyncReference {
    package var seconds: [Double] = []

    package static func measure(in directory: URL, syncs: Int = 1000) throws -> DiskSyncReference {
        let path = directory.appendingPathComponent("sync-reference").path
        let descriptor = open(path, O_CREAT | O_RDWR | O_TRUNC, 0o600)
        guard descriptor >= 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path]) }
        defer {
            close(descriptor)
            unlink(path)
        }
        var page = [UInt8](repeating: 0, count: 4096)
        var reference = DiskSyncReference()
        reference.seconds.reserveCapacity(syncs)
        for index in 0..<syncs {
            page[0] = UInt8(truncatingIfNeeded: index)
            let written = page.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
            guard written == page.count else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path]) }
            let start = ContinuousClock.now
            guard fsync(descriptor) == 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path]) }
            let took = ContinuousClock.now - start
            reference.seconds.append(Double(took.components.seconds) + Double(took.components.attoseconds) / 1e18)
        }
        return reference
    }

    /// "p50 … p99 … p99.9 … max …", in milliseconds.
    package var line: String {
        let sorted = seconds.sorted()
        func at(_ p: Double) -> String {
            guard !sorted.isEmpty else { return "n/a" }
            return String(format: "%.2f ms", sorted[min(sorted.count - 1, Int((p / 100 * Double(sorted.count - 1)).rounded()))] * 1000)
        }
        return "\(seconds.count) syncs of one 4 KiB page: p50 \(at(50)), p99 \(at(99)), p99.9 \(at(99.9)), max \(at(100))"
    }
}
