import Foundation

/// A process's CPU time (user and system), in seconds, from `/proc`.
package enum CPUTime {
    package struct Unreadable: Error {
        package let path: String
    }

    package static func of(_ pid: Int32) throws -> Double {
        try read("/proc/\(pid)/stat")
    }

    package static func ofThisProcess() throws -> Double {
        try read("/proc/self/stat")
    }

    private static func read(_ path: String) throws -> Double {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        // The fields after the command's name, which is in parentheses and may hold spaces.
        guard let end = text.lastIndex(of: ")") else { throw Unreadable(path: path) }
        let fields = text[text.index(after: end)...].split(separator: " ")
        // utime and stime are the 14th and 15th fields of the whole line, the 12th and 13th after the name.
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { throw Unreadable(path: path) }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}
