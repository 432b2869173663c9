import DBus
import Foundation
import TestSupport

/// A Linux desktop for one test, from Debian's real parts: a session bus (`dbus-daemon`), an X server
/// (`Xvfb`) and a notification server on both (`dunst`). The test reads what dunst shows from a script
/// dunst runs for each notification, acts with `dunstctl` as a person clicks, and takes screenshots
/// from the X server's frame buffer.
final class DesktopEnvironment: Sendable {
    let directory: URL
    /// The session bus's D-Bus address, for `DBUS_SESSION_BUS_ADDRESS`.
    let busAddress: String
    let display: String
    private let bus: ChildProcess
    private let xServer: ChildProcess?
    private let dunst: ChildProcess?

    struct Unavailable: Error, CustomStringConvertible {
        let description: String
    }

    /// What dunst showed: one line per notification, as its script wrote it.
    struct Shown: Sendable, Hashable {
        var appName: String
        var summary: String
        var body: String
        var icon: String
        var urgency: String
        var id: Int
    }

    private init(directory: URL, busAddress: String, display: String, bus: ChildProcess, xServer: ChildProcess?, dunst: ChildProcess?) {
        self.directory = directory
        self.busAddress = busAddress
        self.display = display
        self.bus = bus
        self.xServer = xServer
        self.dunst = dunst
    }

    /// The environment a program on this desktop runs in.
    var environment: [String: String] {
        ["DBUS_SESSION_BUS_ADDRESS": busAddress, "DISPLAY": display]
    }

    /// Starts the desktop; with `notificationServer` false, the session bus alone (for the daemon to be
    /// the server on it). With `activated`, dunst is not started: the bus starts it when a program
    /// first calls the notification server (D-Bus activation, as Debian installs dunst), and again
    /// after it died.
    static func start(notificationServer: Bool = true, activated: Bool = false) async throws -> DesktopEnvironment {
        let directory = try makeTestDirectory()
        guard notificationServer else {
            let (bus, busAddress) = try await startBus(directory, display: nil)
            return DesktopEnvironment(directory: directory, busAddress: busAddress, display: "", bus: bus, xServer: nil, dunst: nil)
        }

        // A display number no other X server on this machine uses.
        let frameBuffer = directory.appendingPathComponent("framebuffer", isDirectory: true)
        try FileManager.default.createDirectory(at: frameBuffer, withIntermediateDirectories: true)
        var number = Int.random(in: 200..<900)
        while FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(number)") || FileManager.default.fileExists(atPath: "/tmp/.X\(number)-lock") {
            number += 1
        }
        let socket = "/tmp/.X11-unix/X\(number)"
        let xServer = try ChildProcess(URL(fileURLWithPath: "/usr/bin/Xvfb"),
                                       [":\(number)", "-screen", "0", "800x400x24", "-fbdir", frameBuffer.path, "-nolisten", "tcp"], name: "Xvfb")
        try await waitFor("Xvfb to listen", within: 20) { FileManager.default.fileExists(atPath: socket) }

        try write(directory.appendingPathComponent("dunstrc"), """
            [global]
            dmenu = \(directory.appendingPathComponent("pick.sh").path)
            font = DejaVu Sans 11
            [log]
            summary = "*"
            script = \(directory.appendingPathComponent("log.sh").path)
            """)
        // dunst shows a notification's actions as a menu through its dmenu command: this one picks the
        // line naming the action the test chose, as a person picks it.
        try write(directory.appendingPathComponent("pick.sh"), """
            #!/bin/sh
            cat > '\(directory.appendingPathComponent("menu.txt").path)'
            grep -m1 -F "#$(cat '\(directory.appendingPathComponent("choice.txt").path)') (" '\(directory.appendingPathComponent("menu.txt").path)'
            """, executable: true)
        try write(directory.appendingPathComponent("log.sh"), """
            #!/bin/sh
            printf '%s\\037%s\\037%s\\037%s\\037%s\\037%s\\n' "$1" "$2" "$3" "$4" "$5" "$DUNST_ID" >> '\(directory.appendingPathComponent("shown.txt").path)'
            """, executable: true)
        let display = ":\(number)"
        let (bus, busAddress) = try await startBus(directory, display: activated ? display : nil)
        if activated {
            return DesktopEnvironment(directory: directory, busAddress: busAddress, display: display, bus: bus, xServer: xServer, dunst: nil)
        }
        let environment = ["DBUS_SESSION_BUS_ADDRESS": busAddress, "DISPLAY": display]
        let dunst = try ChildProcess(URL(fileURLWithPath: "/usr/bin/dunst"), ["-config", directory.appendingPathComponent("dunstrc").path],
                                     environment: environment, name: "dunst")
        let probe = try await DBusConnection.connect(to: busAddress)
        try await waitFor("dunst to own org.freedesktop.Notifications", within: 20) {
            (try? await probe.owner(of: "org.freedesktop.Notifications")) != nil
        }
        await probe.close()
        return DesktopEnvironment(directory: directory, busAddress: busAddress, display: display, bus: bus, xServer: xServer, dunst: dunst)
    }

    /// A session bus in `directory`; with a `display`, one that starts dunst on it when the notification
    /// server is first called (and only this test's dunst: the machine's own activation files are not read).
    private static func startBus(_ directory: URL, display: String?) async throws -> (ChildProcess, String) {
        let socket = "unix:path=\(directory.appendingPathComponent("bus").path)"
        guard let display else {
            let bus = try ChildProcess(URL(fileURLWithPath: "/usr/bin/dbus-daemon"),
                                       ["--session", "--nofork", "--nopidfile", "--print-address=1", "--address=\(socket)"], name: "dbus-daemon")
            return (bus, try await bus.line(within: 20, "its address") { $0.hasPrefix("unix:") })
        }
        let services = directory.appendingPathComponent("services", isDirectory: true)
        try FileManager.default.createDirectory(at: services, withIntermediateDirectories: true)
        try write(services.appendingPathComponent("org.freedesktop.Notifications.service"), """
            [D-BUS Service]
            Name=org.freedesktop.Notifications
            Exec=/usr/bin/dunst -config \(directory.appendingPathComponent("dunstrc").path)
            """)
        try write(directory.appendingPathComponent("bus.conf"), """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>\(socket)</listen>
              <servicedir>\(services.path)</servicedir>
              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
              </policy>
            </busconfig>
            """)
        // What the bus starts inherits its environment: dunst finds the display there.
        let bus = try ChildProcess(URL(fileURLWithPath: "/usr/bin/dbus-daemon"),
                                   ["--config-file=\(directory.appendingPathComponent("bus.conf").path)", "--nofork", "--nopidfile", "--print-address=1"],
                                   environment: ["DISPLAY": display], name: "dbus-daemon")
        return (bus, try await bus.line(within: 20, "its address") { $0.hasPrefix("unix:") })
    }

    /// The process id of the notification server the bus started, if one runs.
    func activatedServer() async throws -> pid_t? {
        let probe = try await DBusConnection.connect(to: busAddress)
        defer { Task { await probe.close() } }
        guard let owner = try await probe.owner(of: "org.freedesktop.Notifications") else { return nil }
        return try await probe.callBus("GetConnectionUnixProcessID", [.string(owner)]).first?.uint32Value.map { pid_t($0) }
    }

    /// Kills the notification server the bus started (as a crash would), and waits until it is gone.
    func killActivatedServer() async throws {
        guard let pid = try await activatedServer() else { throw Unavailable(description: "no notification server runs") }
        kill(pid, SIGKILL)
        try await waitFor("the notification server to be gone", within: 20) { (try? await self.activatedServer()) == nil }
    }

    /// Ends the desktop session at once (SIGKILL: the test process's blocked signals are inherited,
    /// so these programs would not see a SIGTERM).
    func stop() async {
        if dunst == nil, xServer != nil, let pid = try? await activatedServer() { kill(pid, SIGKILL) }
        await dunst?.stop(kill: true)
        await xServer?.stop(kill: true)
        await bus.stop(kill: true)
        // A killed X server leaves its lock and socket behind.
        if let number = display.dropFirst().isEmpty ? nil : display.dropFirst() {
            try? FileManager.default.removeItem(atPath: "/tmp/.X\(number)-lock")
            try? FileManager.default.removeItem(atPath: "/tmp/.X11-unix/X\(number)")
        }
    }

    // MARK: - What the person sees

    /// Every notification dunst showed so far, in order.
    var shown: [Shown] {
        guard let text = try? String(contentsOf: directory.appendingPathComponent("shown.txt"), encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: "\u{1F}", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 6, let id = Int(fields[5]) else { return nil }
            return Shown(appName: fields[0], summary: fields[1], body: fields[2], icon: fields[3], urgency: fields[4], id: id)
        }
    }

    /// The `count`th notification dunst showed (from 1); throws at the deadline.
    func shown(number count: Int, within seconds: Double = 20) async throws -> Shown {
        try await waitFor("dunst to show notification \(count)", within: seconds) { self.shown.count >= count }
        return shown[count - 1]
    }

    /// How many notifications dunst has on screen.
    func displayedCount() async throws -> Int {
        let count = try ChildProcess(URL(fileURLWithPath: "/usr/bin/dunstctl"), ["count", "displayed"], environment: environment, name: "dunstctl count")
        await count.waitUntilExit()
        guard let number = await count.completeOutput().first.flatMap({ Int($0.trimmingCharacters(in: .whitespaces)) }) else {
            throw Unavailable(description: "dunstctl count printed no number")
        }
        return number
    }

    /// Waits until dunst has `count` notifications on screen.
    func waitUntilDisplayed(_ count: Int, within seconds: Double = 20) async throws {
        try await waitFor("dunst to show \(count) notifications", within: seconds) { (try? await self.displayedCount()) == count }
    }

    // MARK: - What the person does

    /// Picks the action labelled `label` on the notification on top, through dunst's menu.
    func pick(_ label: String) async throws {
        try write(directory.appendingPathComponent("choice.txt"), label)
        try await dunstctl("context")
    }

    /// Clicks the notification on top (its default action).
    func click() async throws { try await dunstctl("action", "0") }

    /// Closes the notification on top, as a person clicking its close button.
    func close() async throws { try await dunstctl("close") }

    private func dunstctl(_ arguments: String...) async throws {
        let command = try ChildProcess(URL(fileURLWithPath: "/usr/bin/dunstctl"), arguments, environment: environment, name: "dunstctl \(arguments[0])")
        guard await command.waitUntilExit() == 0 else {
            throw Unavailable(description: "dunstctl \(arguments.joined(separator: " ")) failed: \(await command.completeOutput().joined(separator: "\n"))")
        }
    }

    /// The screen as a PNG, read from the X server's frame buffer (an XWD image).
    func screenshot(to url: URL) throws {
        let xwd = try Data(contentsOf: directory.appendingPathComponent("framebuffer/Xvfb_screen0"))
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try XWDImage(xwd).png().write(to: url)
    }

    private static func write(_ url: URL, _ text: String, executable: Bool = false) throws {
        try Data((text + "\n").utf8).write(to: url)
        if executable { try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: url.path) }
    }

    private func write(_ url: URL, _ text: String) throws {
        try Self.write(url, text)
    }
}

/// An X window dump as Xvfb keeps its screen (`-fbdir`): a header of 32-bit fields, a colour map, then
/// the pixels, 32 bits each at depth 24.
struct XWDImage {
    let width: Int
    let height: Int
    let pixels: [(UInt8, UInt8, UInt8)]

    init(_ data: Data) throws {
        let bytes = [UInt8](data)
        func field(_ index: Int, bigEndian: Bool) -> Int {
            let slice = bytes[(index * 4)..<(index * 4 + 4)]
            return bigEndian ? slice.reduce(0) { $0 << 8 | Int($1) } : slice.reversed().reduce(0) { $0 << 8 | Int($1) }
        }
        guard bytes.count >= 100 else { throw DesktopEnvironment.Unavailable(description: "the frame buffer is not an XWD image") }
        let bigEndian = field(1, bigEndian: true) == 7
        let value = { field($0, bigEndian: bigEndian) }
        guard value(1) == 7, value(11) == 32 else { throw DesktopEnvironment.Unavailable(description: "the frame buffer is not a 32-bit XWD image") }
        width = value(4)
        height = value(5)
        let pixelsLittleEndian = value(7) == 0
        let bytesPerLine = value(12)
        let (redMask, greenMask, blueMask) = (value(14), value(15), value(16))
        let start = value(0) + value(19) * 12
        guard bytes.count >= start + bytesPerLine * height else { throw DesktopEnvironment.Unavailable(description: "the XWD image is cut short") }
        func channel(_ pixel: Int, _ mask: Int) -> UInt8 { UInt8((pixel & mask) >> mask.trailingZeroBitCount & 0xFF) }
        var pixels: [(UInt8, UInt8, UInt8)] = []
        pixels.reserveCapacity(width * height)
        for row in 0..<height {
            for column in 0..<width {
                let offset = start + row * bytesPerLine + column * 4
                let word = bytes[offset..<(offset + 4)]
                let pixel = pixelsLittleEndian ? word.reversed().reduce(0) { $0 << 8 | Int($1) } : word.reduce(0) { $0 << 8 | Int($1) }
                pixels.append((channel(pixel, redMask), channel(pixel, greenMask), channel(pixel, blueMask)))
            }
        }
        self.pixels = pixels
    }

    func png() -> Data {
        MediaFiles.png(width: width, height: height) { x, y in pixels[y * width + x] }
    }
}
