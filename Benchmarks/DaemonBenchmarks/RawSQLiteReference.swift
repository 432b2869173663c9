import Foundation
import GRDB
import NotificationCore

/// The limit a durable add can approach on this disk: the same rows the daemon keeps for a pending
/// request (about 600 bytes each), inserted with SQLite alone (WAL, `synchronous=FULL`, prepared
/// statements) in transactions of 64 rows, one sync each. The daemon's adds per second are reported
/// as a ratio to this.
struct RawSQLiteReference {
    var rowsPerSecond = 0.0
    var rowBytes = 0

    static func measure(in directory: URL, rows: Int = 64 * 200, perTransaction: Int = 64) throws -> RawSQLiteReference {
        let path = directory.appendingPathComponent("raw-reference.sqlite").path
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        let database = try DatabasePool(path: path)
        // After the pool opens: opening it in WAL mode sets NORMAL, as the daemon's store knows.
        try database.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
        try database.write { db in
            try db.execute(sql: "CREATE TABLE pending (app TEXT NOT NULL, identifier TEXT NOT NULL, request BLOB NOT NULL, nextFireDate DOUBLE, PRIMARY KEY (app, identifier))")
        }
        let encoder = JSONEncoder()
        let sample = try encoder.encode(NotificationRequest(identifier: "r0", content: BenchmarkApps.content("r0"), trigger: .timeInterval(86_400, repeats: false)))
        var reference = RawSQLiteReference(rowBytes: sample.count)
        let start = ContinuousClock.now
        var written = 0
        while written < rows {
            try database.write { db in
                let statement = try db.cachedStatement(sql: "INSERT OR REPLACE INTO pending (app, identifier, request, nextFireDate) VALUES (?, ?, ?, ?)")
                for row in written..<min(written + perTransaction, rows) {
                    let identifier = "r\(row % 64)"
                    let request = try encoder.encode(NotificationRequest(identifier: identifier, content: BenchmarkApps.content(identifier),
                                                                         trigger: .timeInterval(86_400, repeats: false)))
                    try statement.execute(arguments: [BenchmarkApps.bundleIdentifier(row / 64), identifier, request, Date().timeIntervalSince1970 + 86_400])
                }
            }
            written = min(written + perTransaction, rows)
        }
        reference.rowsPerSecond = Double(rows) / (ContinuousClock.now - start).seconds
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        return reference
    }
}
