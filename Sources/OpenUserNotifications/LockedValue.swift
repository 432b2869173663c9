internal import Foundation

/// A value behind a lock, for state that is not `Sendable` itself (a weak delegate, `userInfo`, a
/// Dispatch timer) but is only ever touched while the lock is held.
package final class LockedValue<Value>: @unchecked Sendable {
    // Sendable: every access to `value` goes through `withLock`, which holds `lock`.
    private let lock = NSLock()
    private var value: Value

    package init(_ value: Value) {
        self.value = value
    }

    package func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
