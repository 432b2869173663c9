import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A throw-away PostgreSQL server for the tests: Debian's `postgresql` binaries, a new cluster in a
/// folder of its own, listening on a Unix socket only (no port taken from anyone), started once for the
/// test process and stopped when it exits. Each store gets a database of its own.
package enum PostgresServer {
    package struct Unavailable: Error, CustomStringConvertible {
        package let description: String
    }

    private static let started = Mutex<Result<String, Unavailable>?>(nil)

    /// The folder of the server's socket, started the first time it is asked for.
    package static func socketFolder() throws -> String {
        try started.withLock { state in
            if state == nil {
                do { state = .success(try start()) } catch { state = .failure(error as? Unavailable ?? Unavailable(description: "\(error)")) }
            }
            return try state!.get()
        }
    }

    /// A new, empty database on the server, as a `postgres://` URL.
    package static func newDatabase() async throws -> String {
        let folder = try socketFolder()
        let name = "gateway_" + UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: "")
        try run("psql", ["-h", folder, "-p", "\(port)", "-U", user, "-d", "postgres", "-v", "ON_ERROR_STOP=1", "-q", "-c", "CREATE DATABASE \(name)"])
        return url(database: name)
    }

    package static func url(database: String) -> String {
        "postgres://\(user)@/\(database)?host=\((try? socketFolder()) ?? "")&port=\(port)"
    }

    package static let port = 5432
    package static let user = "unotify"

    /// The server's binaries: the newest installed version's.
    private static func binary(_ name: String) throws -> String {
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        for version in versions.sorted(by: { (Int($0) ?? 0) > (Int($1) ?? 0) }) {
            let path = "/usr/lib/postgresql/\(version)/bin/\(name)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        if name == "psql", FileManager.default.isExecutableFile(atPath: "/usr/bin/psql") { return "/usr/bin/psql" }
        throw Unavailable(description: "PostgreSQL's \(name) is not installed (Debian's postgresql package; ./scripts/test.sh installs it).")
    }

    /// PostgreSQL refuses to run as root: as root, the server runs as the `postgres` user.
    private static var asRoot: Bool { getuid() == 0 }

    private static func start() throws -> String {
        let folder = "/tmp/pg-\(UUID().uuidString.prefix(8))"
        let data = folder + "/data"
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
        if asRoot {
            try run("/usr/bin/chown", ["-R", "postgres:postgres", folder], asServer: false)
        }
        try run("initdb", ["-D", data, "-U", user, "-A", "trust", "--no-sync", "-E", "UTF8", "--no-instructions"])
        // The server runs in the foreground, a child of the test process, its log in a file. (Not
        // through `pg_ctl start`: a server it starts keeps what Foundation's `Process` waits on open.)
        let server = Process()
        let postgres = try binary("postgres")
        let arguments = ["-D", data, "-k", folder, "-c", "listen_addresses=", "-p", "\(port)", "-c", "max_connections=200"]
        if asRoot {
            server.executableURL = URL(fileURLWithPath: "/usr/sbin/runuser")
            server.arguments = ["-u", "postgres", "--", postgres] + arguments
        } else {
            server.executableURL = URL(fileURLWithPath: postgres)
            server.arguments = arguments
        }
        FileManager.default.createFile(atPath: folder + "/server.log", contents: nil)
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: folder + "/server.log"))
        server.standardOutput = log
        server.standardError = log
        server.standardInput = FileHandle.nullDevice
        try server.run()
        dataFolder.withLock { $0 = data }
        atexit {
            // The process ends: so does its server.
            _ = try? PostgresServer.run("pg_ctl", ["-D", PostgresServer.dataFolder.withLock { $0 }, "-m", "immediate", "stop"])
        }
        let deadline = Date().addingTimeInterval(60)
        while (try? run("pg_isready", ["-h", folder, "-p", "\(port)", "-U", user, "-q"], asServer: false)) == nil {
            guard Date() < deadline, server.isRunning else {
                let text = (try? String(contentsOfFile: folder + "/server.log", encoding: .utf8)) ?? ""
                throw Unavailable(description: "The PostgreSQL server did not start: \(text)")
            }
            usleep(100_000)
        }
        return folder
    }

    private static let dataFolder = Mutex("")

    /// Runs a PostgreSQL program (as the server's user, when the tests run as root) and waits for it.
    @discardableResult
    package static func run(_ program: String, _ arguments: [String], asServer: Bool = true) throws -> String {
        let path = program.hasPrefix("/") ? program : try binary(program)
        let process = Process()
        if asRoot && asServer {
            process.executableURL = URL(fileURLWithPath: "/usr/sbin/runuser")
            process.arguments = ["-u", "postgres", "--", path] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: path)
            process.arguments = arguments
        }
        process.currentDirectoryURL = URL(fileURLWithPath: "/tmp")
        // Into a file, not a pipe: the server that pg_ctl starts keeps what it inherits open.
        let outputPath = "/tmp/pg-output-\(UUID().uuidString)"
        FileManager.default.createFile(atPath: outputPath, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: outputPath) }
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        try? output.close()
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        guard process.terminationStatus == 0 else {
            throw Unavailable(description: "\(program) \(arguments.joined(separator: " ")) failed (\(process.terminationStatus)): \(text)")
        }
        return text
    }
}
