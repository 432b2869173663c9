/// Where a bus listens, as a D-Bus address names it (`unix:path=/run/user/1000/bus`,
/// `unix:abstract=/tmp/dbus-XXXX,guid=…`). Only Unix sockets are spoken to: the session bus of every
/// Linux desktop listens on one.
package struct DBusAddress: Sendable, Hashable {
    package enum Socket: Sendable, Hashable {
        /// A socket file.
        case path(String)
        /// A name in Linux's abstract socket namespace.
        case abstract(String)
    }

    package var socket: Socket

    package init(socket: Socket) {
        self.socket = socket
    }

    /// The Unix-socket addresses of an address string, in the order to try them; the others
    /// (`tcp:`, `launchd:`, `unixexec:`…) are left out.
    ///
    /// - Throws: a `DBusError` with code `badAddress` when none of them is a Unix socket.
    package static func parse(_ string: String) throws(DBusError) -> [DBusAddress] {
        var addresses: [DBusAddress] = []
        for entry in string.split(separator: ";") {
            guard let colon = entry.firstIndex(of: ":"), entry[..<colon] == "unix" else { continue }
            var keys: [String: String] = [:]
            for pair in entry[entry.index(after: colon)...].split(separator: ",") {
                guard let equals = pair.firstIndex(of: "=") else { continue }
                keys[String(pair[..<equals])] = unescape(pair[pair.index(after: equals)...])
            }
            if let path = keys["path"] {
                addresses.append(DBusAddress(socket: .path(path)))
            } else if let name = keys["abstract"] {
                addresses.append(DBusAddress(socket: .abstract(name)))
            }
        }
        guard !addresses.isEmpty else {
            throw DBusError(code: .badAddress, message: "No Unix socket in the bus address \"\(string)\".")
        }
        return addresses
    }

    /// The session bus's address string: `DBUS_SESSION_BUS_ADDRESS`, or the user's bus in
    /// `XDG_RUNTIME_DIR` as systemd puts it; nil when neither says.
    package static func sessionBusAddress(environment: [String: String]) -> String? {
        if let address = environment["DBUS_SESSION_BUS_ADDRESS"], !address.isEmpty { return address }
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty { return "unix:path=\(runtime)/bus" }
        return nil
    }

    /// Undoes the `%XX` escapes of an address value.
    private static func unescape(_ value: Substring) -> String {
        var bytes: [UInt8] = []
        var utf8 = value.utf8.makeIterator()
        while let byte = utf8.next() {
            if byte == UInt8(ascii: "%"), let high = utf8.next(), let low = utf8.next(),
               let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16) {
                bytes.append(value)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// Why talking to a bus failed.
package struct DBusError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure, for a program to switch on.
    package struct Code: Sendable, Hashable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        package var description: String { name }

        /// The address names no socket this implementation can reach.
        package static let badAddress = Code("badAddress")
        /// The bus could not be reached, or refused to authenticate us.
        package static let connectionFailed = Code("connectionFailed")
        /// The connection closed before the answer came.
        package static let disconnected = Code("disconnected")
        /// No answer in time.
        package static let timedOut = Code("timedOut")
        /// The other side answered with a D-Bus error, named in ``DBusError/name``.
        package static let remote = Code("remote")
        /// What was sent or received is not valid D-Bus.
        package static let invalidMessage = Code("invalidMessage")
    }

    package var code: Code
    /// The D-Bus error name, for ``Code/remote``: `org.freedesktop.DBus.Error.ServiceUnknown`.
    package var name: String?
    package var message: String

    package init(code: Code, name: String? = nil, message: String) {
        self.code = code
        self.name = name
        self.message = message
    }

    package var description: String {
        if let name { return "\(name): \(message)" }
        return message
    }
}
