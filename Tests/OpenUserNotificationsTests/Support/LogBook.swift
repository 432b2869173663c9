import Synchronization

/// Lines an example app writes where the seed's code printed or showed an alert, for tests to read.
final class LogBook: Sendable {
    private let storage = Mutex<[String]>([])

    func append(_ line: String) { storage.withLock { $0.append(line) } }

    var lines: [String] { storage.withLock { $0 } }
}
