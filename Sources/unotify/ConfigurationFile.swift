import ArgumentParser
import Foundation

/// `unotify.toml`: the options of `serve`, `daemon` and `gateway` written once, in the tables
/// `[serve]`, `[daemon]` and `[gateway]`, each key the long name of an option (`sandbox-port = 2197`,
/// `cleartext = true`, `host-name = ["push.example.com", "push2.example.com"]`). An option given on the
/// command line wins over the file's key. The gateway's other commands (`unotify gateway teams …`) take
/// the keys that say where its state is (`gateway-dir`, `data-dir`, `database`) from `[gateway]`.
///
/// Read from `--config`, else `$UNOTIFY_CONFIG`, else `unotify/unotify.toml` under `$XDG_CONFIG_HOME`
/// (`~/.config`), else `/etc/unotify/unotify.toml`; none is needed. The syntax is TOML's, the part of it
/// options need: tables, `key = value` with a string, integer, float, boolean or an array of them on one
/// line, and comments.
struct ConfigurationFile {
    /// One `key = value` of the file.
    struct Entry: Equatable {
        var key: String
        var value: Value
        var line: Int
    }

    enum Value: Equatable {
        case string(String)
        /// An integer, float or boolean, as written.
        case scalar(String)
        case boolean(Bool)
        case array([Value])

        /// As the file wrote it, for messages.
        var written: String {
            switch self {
            case .string(let text): return "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
            case .scalar(let text): return text
            case .boolean(let value): return value ? "true" : "false"
            case .array(let values): return "[" + values.map(\.written).joined(separator: ", ") + "]"
            }
        }

        /// The option's argument: the text of a string, integer or float.
        var argument: String? {
            switch self {
            case .string(let text): return text
            case .scalar(let text): return text
            case .boolean, .array: return nil
            }
        }
    }

    /// A mistake in the file: where, and what.
    struct Mistake: Error, CustomStringConvertible {
        var description: String
    }

    static let tables = ["serve", "daemon", "gateway"]

    let path: String
    /// Each table's entries, in the file's order.
    let tables: [String: [Entry]]

    /// Reads and parses the file at `path`.
    init(path: String) throws {
        // Read as a stream (`/dev/null` is an empty file, as `UNOTIFY_CONFIG=/dev/null` means none).
        guard let handle = FileHandle(forReadingAtPath: path), let data = try? handle.readToEnd() ?? Data() else {
            throw Mistake(description: "The configuration file \(path) cannot be read.")
        }
        guard let text = String(data: data, encoding: .utf8) else { throw Mistake(description: "\(path) is not UTF-8 text.") }
        try self.init(path: path, text: text)
    }

    init(path: String, text: String) throws {
        self.path = path
        var tables: [String: [Entry]] = [:]
        var table: String?
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let number = index + 1
            var line = Line(text: Substring(raw.hasSuffix("\r") ? raw.dropLast() : raw))
            line.skipSpaces()
            if line.atEnd || line.peek == "#" { continue }
            func mistake(_ what: String) -> Mistake { Mistake(description: "\(path):\(number): \(what)") }
            if line.peek == "[" {
                line.advance()
                line.skipSpaces()
                let name = line.bareKey()
                line.skipSpaces()
                guard !name.isEmpty, line.peek == "]" else { throw mistake("a table is [serve], [daemon] or [gateway].") }
                line.advance()
                guard line.restIsComment else { throw mistake("nothing but a comment may follow [\(name)].") }
                guard Self.tables.contains(name) else { throw mistake("[\(name)] is not a table of unotify's: they are [serve], [daemon] and [gateway].") }
                guard tables[name] == nil else { throw mistake("[\(name)] is a second time in the file.") }
                tables[name] = []
                table = name
                continue
            }
            let key = line.bareKey()
            guard !key.isEmpty else { throw mistake("a line is a [table], a key = value, or a # comment.") }
            line.skipSpaces()
            guard line.peek == "=" else { throw mistake("\(key) needs = and a value.") }
            line.advance()
            line.skipSpaces()
            guard let table else { throw mistake("\(key) is not under a table: put it under [serve], [daemon] or [gateway].") }
            let value: Value
            do { value = try line.value(nested: false) } catch let error as Mistake { throw mistake("\(key): \(error.description)") }
            guard line.restIsComment else { throw mistake("\(key): nothing but a comment may follow its value.") }
            guard !(tables[table] ?? []).contains(where: { $0.key == key }) else { throw mistake("\(key) is a second time in [\(table)].") }
            tables[table, default: []].append(Entry(key: key, value: value, line: number))
        }
        self.tables = tables
    }

    /// A cursor over one line of the file.
    private struct Line {
        var text: Substring

        var atEnd: Bool { text.isEmpty }
        var peek: Character? { text.first }
        mutating func advance() { text = text.dropFirst() }
        mutating func skipSpaces() { text = text.drop { $0 == " " || $0 == "\t" } }
        var restIsComment: Bool {
            let rest = text.drop { $0 == " " || $0 == "\t" }
            return rest.isEmpty || rest.first == "#"
        }

        mutating func bareKey() -> String {
            let key = text.prefix { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
            text = text.dropFirst(key.count)
            return String(key)
        }

        mutating func value(nested: Bool) throws -> Value {
            switch peek {
            case "\"": return .string(try basicString())
            case "'":
                advance()
                guard let end = text.firstIndex(of: "'") else { throw Mistake(description: "a string in '…' ends on its line.") }
                defer { text = text[text.index(after: end)...] }
                return .string(String(text[..<end]))
            case "[":
                guard !nested else { throw Mistake(description: "an array holds strings, numbers or booleans, not arrays.") }
                advance()
                var values: [Value] = []
                while true {
                    skipSpaces()
                    if peek == "]" { advance(); return .array(values) }
                    values.append(try value(nested: true))
                    skipSpaces()
                    if peek == "," { advance(); continue }
                    guard peek == "]" else { throw Mistake(description: "an array is [value, value, …] on one line.") }
                }
            default:
                let word = text.prefix { !" \t,]#".contains($0) }
                text = text.dropFirst(word.count)
                if word == "true" || word == "false" { return .boolean(word == "true") }
                let digits = word.replacingOccurrences(of: "_", with: "")
                guard !word.isEmpty, Int(digits) != nil || (Double(digits).map(\.isFinite) ?? false) else {
                    throw Mistake(description: "\(word.isEmpty ? "the value is missing" : "\(word) is not a value"): a string is in quotes (\"…\"), or write a number, true or false.")
                }
                return .scalar(digits)
            }
        }

        /// A string in "…", with TOML's escapes.
        mutating func basicString() throws -> String {
            advance()
            var result = ""
            while let character = peek {
                advance()
                switch character {
                case "\"": return result
                case "\\":
                    guard let escaped = peek else { break }
                    advance()
                    switch escaped {
                    case "\"": result.append("\"")
                    case "\\": result.append("\\")
                    case "n": result.append("\n")
                    case "t": result.append("\t")
                    case "r": result.append("\r")
                    case "u", "U":
                        let hex = text.prefix(escaped == "u" ? 4 : 8)
                        guard hex.count == (escaped == "u" ? 4 : 8), let code = UInt32(hex, radix: 16), let scalar = Unicode.Scalar(code) else {
                            throw Mistake(description: "\\\(escaped) is followed by \(escaped == "u" ? 4 : 8) hexadecimal digits of a character.")
                        }
                        text = text.dropFirst(hex.count)
                        result.unicodeScalars.append(scalar)
                    default: throw Mistake(description: "\\\(escaped) is not an escape of TOML's (\\\", \\\\, \\n, \\t, \\r, \\u).")
                    }
                default:
                    result.append(character)
                }
            }
            throw Mistake(description: "a string in \"…\" ends on its line.")
        }
    }
}

extension ConfigurationFile {
    /// The gateway's commands other than `serve`, which take only where its state is from the file.
    static let gatewayManagement: Set<String> = ["teams", "apps", "keys", "certificates", "token", "devices"]
    static let gatewayLocationKeys: Set<String> = ["gateway-dir", "data-dir", "database"]

    /// What a command line becomes with its configuration file: the file's options, each as the
    /// option it names, put after the subcommands unless the command line gives that option.
    struct Applied {
        var arguments: [String]
        /// The file's entries applied, to name the key in an error about its option.
        var entries: [Entry]
        var file: ConfigurationFile?
    }

    /// The file a command reads: `--config` (`--config=`), `$UNOTIFY_CONFIG`, then the usual places.
    static func path(in arguments: [String], environment: [String: String]) throws -> (path: String, explicit: Bool)? {
        for (index, argument) in arguments.enumerated() {
            if argument == "--config" {
                guard index + 1 < arguments.count else { throw Mistake(description: "--config needs a file.") }
                return (arguments[index + 1], true)
            }
            if argument.hasPrefix("--config=") { return (String(argument.dropFirst("--config=".count)), true) }
            if argument == "--" { break }
        }
        if let path = environment["UNOTIFY_CONFIG"], !path.isEmpty { return (path, true) }
        let home = environment["HOME"] ?? NSHomeDirectory()
        let configHome = environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? home + "/.config"
        for candidate in [configHome + "/unotify/unotify.toml", "/etc/unotify/unotify.toml"] where FileManager.default.fileExists(atPath: candidate) {
            return (candidate, false)
        }
        return nil
    }

    /// `arguments` (without the program's name) with the configuration file's options for its command.
    static func apply(to arguments: [String], environment: [String: String]) throws -> Applied {
        // Help is shown whatever the file says.
        guard !arguments.contains(where: { $0 == "--help" || $0 == "-h" || $0 == "help" }), let first = arguments.first else {
            return Applied(arguments: arguments, entries: [], file: nil)
        }
        var table: String
        var path = [first]
        var keys: Set<String>?
        switch first {
        case "serve", "daemon":
            table = first
        case "gateway":
            table = "gateway"
            if arguments.count > 1, arguments[1] == "serve" {
                path.append("serve")
            } else if arguments.count > 1, gatewayManagement.contains(arguments[1]) {
                path.append(contentsOf: arguments.dropFirst().prefix { !$0.hasPrefix("-") }.prefix(2))
                keys = gatewayLocationKeys
            }
        default:
            return Applied(arguments: arguments, entries: [], file: nil)
        }
        guard let (location, _) = try Self.path(in: arguments, environment: environment) else {
            return Applied(arguments: arguments, entries: [], file: nil)
        }
        let file = try ConfigurationFile(path: location)
        let given = Set(arguments.compactMap { argument -> String? in
            guard argument.hasPrefix("--") else { return nil }
            return String(argument.dropFirst(2).prefix { $0 != "=" })
        })
        var options: [String] = []
        var entries: [Entry] = []
        for entry in file.tables[table] ?? [] where !given.contains(entry.key) && (keys?.contains(entry.key) ?? true) {
            guard entry.key != "config" else {
                throw Mistake(description: "\(location):\(entry.line): config cannot name another file.")
            }
            entries.append(entry)
            switch entry.value {
            case .boolean(true): options.append("--" + entry.key)
            case .boolean(false): break
            case .array(let values):
                for value in values {
                    guard let argument = value.argument else {
                        throw Mistake(description: "\(location):\(entry.line): \(entry.key): an array of a repeatable option holds strings or numbers.")
                    }
                    options.append(contentsOf: ["--" + entry.key, argument])
                }
            case .string, .scalar:
                options.append(contentsOf: ["--" + entry.key, entry.value.argument ?? ""])
            }
        }
        return Applied(arguments: path + options + arguments.dropFirst(path.count), entries: entries, file: file)
    }

    /// The message of an error about an option the file gave, naming its key, line and value; nil when
    /// the error is about none of them.
    static func attribute(_ message: String, to applied: Applied) -> String? {
        guard let file = applied.file else { return nil }
        for entry in applied.entries {
            let option = "--" + entry.key
            var searched = message[...]
            while let found = searched.range(of: option) {
                let next = searched[found.upperBound...].first
                if next.map({ !($0.isLetter || $0.isNumber || $0 == "-") }) ?? true {
                    return "\(file.path):\(entry.line): \(entry.key) = \(entry.value.written): \(message)"
                }
                searched = searched[found.upperBound...]
            }
        }
        return nil
    }
}
