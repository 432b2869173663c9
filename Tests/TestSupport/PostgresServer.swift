import Foundation
import ProcessSpawning
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A throw-away PostgreSQL server for the tests: Debian's `postgresql` binaries, a new cluster in a
/// folder of its own, listening on a Unix socket only (no port taken from anyone). ``shared`` is
/// started once for the test process; a test that stops its server makes one of its own. Every
/// cluster is stopped when the process exits. Each store gets a database of its own.
package final class PostgresServer: Sendable {
    package struct Unavailable: Error, CustomStringConvertible {
        package let description: String
    }

    package static let port = 5432
    package static let user = "unotify"

    /// The folder of the server's socket (and of its data, in `data/`).
    package let folder: String
    private let running = Mutex<SpawnedProcess?>(nil)

    private init(folder: String) {
        self.folder = folder
    }

    /// The server the tests share, started the first time it is asked for.
    package static func shared() throws -> PostgresServer {
        try sharedServer.withLock { state in
            if state == nil {
                do { state = .success(try make()) } catch { state = .failure(error as? Unavailable ?? Unavailable(description: "\(error)")) }
            }
            return try state!.get()
        }
    }

    private static let sharedServer = Mutex<Result<PostgresServer, Unavailable>?>(nil)

    /// A new, empty database on the shared server, as a `postgres://` URL.
    package static func newDatabase() async throws -> String {
        try shared().newDatabase()
    }

    /// A new cluster of its own, started.
    package static func make() throws -> PostgresServer {
        let folder = "/tmp/pg-\(UUID().uuidString.prefix(8))"
        let data = folder + "/data"
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
        if asRoot {
            try run("/usr/bin/chown", ["-R", "postgres:postgres", folder], asServer: false)
        }
        try run("initdb", ["-D", data, "-U", user, "-A", "trust", "--no-sync", "-E", "UTF8", "--no-instructions"])
        let server = PostgresServer(folder: folder)
        try server.start()
        clusters.withLock { $0.append(data) }
        if clusters.withLock({ $0.count }) == 1 {
            atexit {
                // The process ends: so do its servers.
                for data in PostgresServer.clusters.withLock({ $0 }) {
                    _ = try? PostgresServer.run("pg_ctl", ["-D", data, "-m", "immediate", "stop"])
                    // Its folder too: a cluster takes some 370 MB.
                    try? FileManager.default.removeItem(atPath: (data as NSString).deletingLastPathComponent)
                }
            }
        }
        return server
    }

    private static let clusters = Mutex<[String]>([])

    /// A new, empty database on this server, as a `postgres://` URL.
    package func newDatabase() throws -> String {
        let name = "gateway_" + UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: "")
        try Self.run("psql", ["-h", folder, "-p", "\(Self.port)", "-U", Self.user, "-d", "postgres", "-v", "ON_ERROR_STOP=1", "-q", "-c", "CREATE DATABASE \(name)"])
        return "postgres://\(Self.user)@/\(name)?host=\(folder)&port=\(Self.port)"
    }

    /// Starts the server and waits until it accepts connections.
    ///
    /// It runs in the foreground, a child of the test process, its log in a file.
    package func start() throws {
        let postgres = try Self.binary("postgres")
        let arguments = ["-D", folder + "/data", "-k", folder, "-c", "listen_addresses=", "-p", "\(Self.port)", "-c", "max_connections=200"]
        let command = Self.asRoot ? ["/usr/sbin/runuser", "-u", "postgres", "--", postgres] + arguments : [postgres] + arguments
        let log = open(folder + "/server.log", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard log >= 0 else { throw Unavailable(description: "Could not open \(folder)/server.log: \(String(cString: strerror(errno)))") }
        defer { close(log) }
        let server = try SpawnedProcess.spawn(command[0], arguments: Array(command.dropFirst()), standardInput: .null,
                                              standardOutput: .descriptor(log), standardError: .descriptor(log))
        running.withLock { $0 = server }
        let deadline = Date().addingTimeInterval(60)
        while (try? Self.run("pg_isready", ["-h", folder, "-p", "\(Self.port)", "-U", Self.user, "-q"], asServer: false)) == nil {
            guard Date() < deadline, server.isRunning else {
                let text = (try? String(contentsOfFile: folder + "/server.log", encoding: .utf8)) ?? ""
                throw Unavailable(description: "The PostgreSQL server did not start: \(text)")
            }
            usleep(100_000)
        }
    }

    /// Stops the server at once, as a crash or an operator would: every connection is cut.
    package func stop() throws {
        try Self.run("pg_ctl", ["-D", folder + "/data", "-m", "immediate", "stop"])
        running.withLock { $0 }?.waitUntilExit()
    }

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

    /// Runs a PostgreSQL program (as the server's user, when the tests run as root) and waits for it.
    @discardableResult
    package static func run(_ program: String, _ arguments: [String], asServer: Bool = true) throws -> String {
        let path = program.hasPrefix("/") ? program : try binary(program)
        let command = asRoot && asServer ? ["/usr/sbin/runuser", "-u", "postgres", "--", path] + arguments : [path] + arguments
        let run = try Program.run(command[0], Array(command.dropFirst()), directory: "/tmp", mergingErrors: true)
        guard run.succeeded else {
            throw Unavailable(description: "\(program) \(arguments.joined(separator: " ")) failed (\(run.termination)): \(run.output)")
        }
        return run.output
    }
}
