package import GRDB
internal import GRDBSQLite

/// One run of a prepared statement with its values bound one by one, straight to SQLite.
///
/// GRDB's `execute(arguments:)` first builds its arguments: an array with each value converted to
/// a `DatabaseValue`. For the rows a store writes in bulk (a push and its log entry, thousands a
/// second) that cost more than SQLite's own work on the row. Here each value goes to
/// `sqlite3_bind_*` as it is; strings and bytes are copied by SQLite (`SQLITE_TRANSIENT`).
///
/// Only inside a transaction GRDB opened, for statements that write and return no rows: GRDB's
/// bookkeeping around a statement's execution (transaction observers) is not called.
///
/// ```swift
/// var row = try BoundStatement(db.cachedStatement(sql: "INSERT INTO t (a, b) VALUES (?, ?)"))
/// row.bind("text")
/// row.bind(42)
/// try row.run()
/// ```
package struct BoundStatement: ~Copyable {
    private let statement: Statement
    private var position: Int32 = 0

    /// Readies `statement` for a new run: reset, with no value bound.
    package init(_ statement: Statement) {
        self.statement = statement
        sqlite3_reset(statement.sqliteStatement)
        sqlite3_clear_bindings(statement.sqliteStatement)
    }

    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    private mutating func nextPosition() -> Int32 {
        position += 1
        return position
    }

    /// Binds the next parameter to text, or NULL for nil.
    package mutating func bind(_ value: String?) {
        let position = nextPosition()
        guard var value else { return }  // Parameters are NULL until bound.
        value.withUTF8 { bytes in
            _ = sqlite3_bind_text(statement.sqliteStatement, position, bytes.baseAddress, Int32(bytes.count), Self.transient)
        }
    }

    package mutating func bind(_ value: Int) {
        sqlite3_bind_int64(statement.sqliteStatement, nextPosition(), Int64(value))
    }

    package mutating func bind(_ value: Bool) {
        sqlite3_bind_int64(statement.sqliteStatement, nextPosition(), value ? 1 : 0)
    }

    /// Binds the next parameter to a real, or NULL for nil.
    package mutating func bind(_ value: Double?) {
        let position = nextPosition()
        guard let value else { return }
        sqlite3_bind_double(statement.sqliteStatement, position, value)
    }

    /// Binds the next parameter to a blob (an empty one for no bytes, never NULL).
    package mutating func bind(_ value: [UInt8]) {
        let position = nextPosition()
        value.withUnsafeBytes { bytes in
            // SQLite takes a null pointer for a NULL: an empty blob needs a pointer of its own.
            _ = bytes.isEmpty
                ? sqlite3_bind_zeroblob(statement.sqliteStatement, position, 0)
                : sqlite3_bind_blob(statement.sqliteStatement, position, bytes.baseAddress, Int32(bytes.count), Self.transient)
        }
    }

    /// Runs the statement to its end; throws SQLite's error (a constraint violated, a full disk).
    /// Every parameter must have been bound (or left NULL on purpose).
    package consuming func run() throws {
        let handle = statement.sqliteStatement
        defer { sqlite3_reset(handle) }
        while true {
            let code = sqlite3_step(handle)
            switch code {
            case SQLITE_DONE: return
            case SQLITE_ROW: continue
            default:
                let message = sqlite3_db_handle(handle).flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) }
                throw DatabaseError(resultCode: ResultCode(rawValue: code), message: message, sql: statement.sql)
            }
        }
    }
}
