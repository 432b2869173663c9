import DBus
import Foundation
package import Logging
import NotificationCore
import ProcessSpawning
package import NotificationEngine
import ServiceLifecycle

/// The desktop presenter: shows the daemon's notifications on the person's Linux desktop through its
/// freedesktop.org notification server (GNOME Shell, KDE Plasma, dunst, mako…), and turns what the
/// person does there into responses, through the same path as every other surface.
///
/// Where there is no session bus, it says so once in the log and does nothing more; where there is a
/// bus but no notification server yet, it starts showing when one appears. When the server goes away
/// (dunst killed, a crash), the next notification asks the bus to start one again, as `notify-send`
/// does; when none can be had, the log says so.
package struct DesktopPresenter: Service {
    package struct Configuration: Sendable {
        /// The bus to use, as a D-Bus address; nil for the session bus the environment names.
        package var busAddress: String?
        /// This process's own claim to be the desktop's server (`--freedesktop`), if it makes one: the
        /// presenter waits for it, and never shows on its own process.
        package var claim: NotificationServerClaim?
        /// The web notification center's address, while it runs: a notification with a reply field
        /// offers "Reply…", which opens it there, on a desktop whose server has no reply field.
        package var centerAddress: @Sendable () -> String? = { nil }
        /// Opens a URL in the person's browser.
        package var openURL: @Sendable (String) -> Void = DesktopPresenter.openWithXDGOpen

        package init(busAddress: String? = nil) {
            self.busAddress = busAddress
        }
    }

    private let engine: DaemonEngine
    private let configuration: Configuration
    private let logger: Logger

    package init(engine: DaemonEngine, configuration: Configuration = Configuration(), logger: Logger) {
        self.engine = engine
        self.configuration = configuration
        self.logger = logger
    }

    package func run() async throws {
        if let claim = configuration.claim, case .ours = await claim.outcome() {
            // This process is the desktop's server: what it would show there is already its own.
            logger.info("desktop notifications are this daemon's own: it is the desktop's notification server")
            // A service that ends stops the system: this one waits for the system to stop.
            try? await gracefulShutdown()
            return
        }
        await SessionBus.run(address: configuration.busAddress, role: "desktop notifications off", logger: logger) { [engine, configuration, logger] connection in
            await DesktopSession(engine: engine, connection: connection, configuration: configuration, logger: logger).run()
            return true
        }
    }

    /// Opens `url` with `xdg-open`, the desktop's way to open a link in the person's browser.
    package static let openWithXDGOpen: @Sendable (String) -> Void = { url in
        _ = try? SpawnedProcess.spawn("/usr/bin/env", arguments: ["xdg-open", url], environment: ProcessInfo.processInfo.environment)
    }
}

/// The presenter's work on one bus connection.
actor DesktopSession {
    static let serverName = "org.freedesktop.Notifications"
    static let serverPath = "/org/freedesktop/Notifications"

    private let engine: DaemonEngine
    private let connection: DBusConnection
    private let configuration: DesktopPresenter.Configuration
    private let logger: Logger
    private var table = DesktopNotificationTable()
    /// The server's unique name and what it can do, while there is one.
    private var server: (owner: String, capabilities: DesktopCapabilities)?
    /// Whether the log said that no server could be had, since one was last found.
    private var saidNoServer = false

    init(engine: DaemonEngine, connection: DBusConnection, configuration: DesktopPresenter.Configuration, logger: Logger) {
        self.engine = engine
        self.connection = connection
        self.configuration = configuration
        self.logger = logger
    }

    func run() async {
        do {
            try await connection.callBus("AddMatch", [.string("type='signal',interface='\(Self.serverName)',path='\(Self.serverPath)'")])
            try await connection.callBus("AddMatch", [.string(
                "type='signal',sender='\(DBusConnection.busName)',interface='\(DBusConnection.busName)',member='NameOwnerChanged',arg0='\(Self.serverName)'")])
        } catch {
            logger.notice("desktop notifications off: the session bus refused our match rules", metadata: ["reason": .string(error.message)])
            return
        }
        await findServer(startingIt: true)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.followEvents() }
            group.addTask { await self.followSignals() }
            await group.next()
            group.cancelAll()
        }
    }

    /// Asks the bus for the notification server (starting it, when the bus can and `startingIt`); says
    /// in the log when there is none, unless `quietly`.
    private func findServer(startingIt: Bool, quietly: Bool = false) async {
        var call = DBusMessage.methodCall(destination: Self.serverName, path: Self.serverPath, interface: Self.serverName, member: "GetCapabilities")
        if !startingIt { call.flags.insert(.noAutoStart) }
        do {
            let capabilities = DesktopCapabilities(try await connection.call(call).body.first?.stringArray ?? [])
            guard let owner = try await connection.owner(of: Self.serverName) else { return }
            server = (owner, capabilities)
            saidNoServer = false
            let information = try? await connection.call(.methodCall(destination: owner, path: Self.serverPath, interface: Self.serverName, member: "GetServerInformation")).body
            logger.info("desktop notifications on", metadata: [
                "server": .string(information?.first?.stringValue ?? owner),
                "capabilities": .string(capabilities.names.sorted().joined(separator: " ")),
            ])
        } catch {
            server = nil
            if !quietly {
                logger.notice("desktop notifications wait for a notification server on the session bus", metadata: ["reason": .string(error.message)])
            }
        }
    }

    // MARK: - What the daemon shows

    private func followEvents() async {
        while !Task.isCancelled {
            let watch = await engine.watch()
            for await event in watch.events {
                await handle(event)
            }
            // Fallen behind: what was missed is in the daemon's list; go on with what comes next.
            guard watch.overflowed else { return }
        }
    }

    private func handle(_ event: DaemonEvent) async {
        switch event {
        case .app(let app, .presented(let shown)) where shown.summary?.held != true:
            await show(shown, of: app)
        case .app(let app, .summaryDelivered(let notifications)):
            for shown in notifications { await show(shown, of: app) }
        case .app(let app, .notificationsRemoved(let identifiers)):
            for identifier in identifiers { await close(.init(bundleIdentifier: app, identifier: identifier)) }
        case .app(let app, .actedOn(let identifier, _)):
            // Answered or dismissed on another surface: it leaves the desktop too.
            await close(.init(bundleIdentifier: app, identifier: identifier))
        case .app(let app, .badgeChanged(let badge)):
            await showBadge(badge, of: app)
        default:
            break
        }
    }

    private func show(_ shown: NotificationCenterMachine.VisibleNotification, of app: String) async {
        // The server went away since: the bus is asked to start one again, as notify-send would.
        if server == nil { await findServer(startingIt: true, quietly: true) }
        guard let server else {
            if !saidNoServer {
                saidNoServer = true
                logger.warning("a notification was not shown on the desktop: no notification server is running and the session bus could not start one",
                               metadata: ["app": .string(app), "identifier": .string(shown.notification.request.identifier)])
            }
            return
        }
        let key = DesktopNotificationTable.Key(bundleIdentifier: app, identifier: shown.notification.request.identifier)
        var previewHidden = false
        var threadCount = 1
        if let settings = try? await engine.settings(app), PreviewPolicy.hidesPreviews(settings, locked: await engine.lockState.isLocked) {
            previewHidden = true
            let thread = shown.notification.request.content.threadIdentifier
            threadCount = (try? await engine.visibleNotifications(app).count { $0.notification.request.content.threadIdentifier == thread }) ?? 1
        }
        guard let notification = DesktopNotification(shown, of: app, capabilities: server.capabilities, replacing: table.desktopID(of: key) ?? 0,
                                                     previewHidden: previewHidden, threadCount: max(1, threadCount),
                                                     repliesInCenter: configuration.centerAddress() != nil,
                                                     identity: await engine.shownIdentity(of: app)) else { return }
        do {
            let reply = try await connection.call(.methodCall(destination: server.owner, path: Self.serverPath, interface: Self.serverName,
                                                             member: "Notify", body: notification.arguments))
            guard let id = reply.body.first?.uint32Value else { return }
            table.shown(key, as: id, replyAction: notification.replyAction)
        } catch {
            logger.warning("the desktop did not show a notification", metadata: [
                "app": .string(app), "identifier": .string(key.identifier), "reason": .string(error.message),
            ])
        }
    }

    private func close(_ key: DesktopNotificationTable.Key) async {
        guard let server, let id = table.forget(key) else { return }
        do {
            try await connection.call(.methodCall(destination: server.owner, path: Self.serverPath, interface: Self.serverName,
                                                 member: "CloseNotification", body: [.uint32(id)]))
        } catch {
            logger.debug("the desktop did not close a notification", metadata: ["reason": .string(error.message)])
        }
    }

    /// The app's badge on docks that show counts (GNOME's Dash to Dock, KDE's task manager, Plank),
    /// through Unity's launcher entry signal they listen for.
    private func showBadge(_ badge: Int, of app: String) async {
        let signal = DBusMessage.signal(
            path: "/com/canonical/unity/launcherentry/unotify", interface: "com.canonical.Unity.LauncherEntry", member: "Update",
            body: [.string("application://\(app).desktop"),
                   .variantDictionary([("count", .int64(Int64(badge))), ("count-visible", .boolean(badge > 0))])])
        try? await connection.send(signal)
    }

    // MARK: - What the person does

    private func followSignals() async {
        for await message in connection.incoming {
            guard message.kind == .signal else {
                if message.kind == .methodCall, message.flags.contains(.noReplyExpected) == false {
                    try? await connection.send(.error(to: message, name: "org.freedesktop.DBus.Error.UnknownMethod", message: "No such object."))
                }
                continue
            }
            if message.interface == DBusConnection.busName, message.member == "NameOwnerChanged" {
                let oldOwner = message.body.count == 3 ? message.body[1].stringValue ?? "" : ""
                let newOwner = message.body.last?.stringValue ?? ""
                // The server a notification just had started: already known, and what it shows is kept.
                if !newOwner.isEmpty, newOwner == server?.owner { continue }
                if let server, oldOwner == server.owner {
                    // The server left or another took its place: what it showed is gone with it.
                    table = DesktopNotificationTable()
                    self.server = nil
                    if newOwner.isEmpty {
                        logger.notice("the desktop's notification server went away; the next notification asks the session bus to start one")
                    }
                }
                if !newOwner.isEmpty, server == nil { await findServer(startingIt: false, quietly: true) }
                continue
            }
            // Only the server's own signals count: any other client of the bus could send these.
            guard message.interface == Self.serverName, let server, message.sender == server.owner, let signal = Self.signal(message) else { continue }
            // "Reply…" where the server has no reply field: the reply is written in the web center.
            if case .actionInvoked(let desktopID, DesktopNotification.replyInCenterKey) = signal, let address = configuration.centerAddress(),
               let (key, action) = table.replyInCenter(desktopID) {
                configuration.openURL(Self.replyLink(address: address, key: key, action: action))
                _ = try? await connection.call(.methodCall(destination: server.owner, path: Self.serverPath, interface: Self.serverName,
                                                       member: "CloseNotification", body: [.uint32(desktopID)]))
                continue
            }
            guard let (key, action) = table.personAction(for: signal) else { continue }
            do {
                try await engine.respond(key.bundleIdentifier, to: key.identifier, with: action)
                // Answered, it leaves the desktop as it leaves the list (servers keep some after an action).
                if action != .dismiss {
                    _ = try? await connection.call(.methodCall(destination: server.owner, path: Self.serverPath, interface: Self.serverName,
                                                           member: "CloseNotification", body: [.uint32(signal.desktopID)]))
                }
            } catch {
                logger.notice("the person's answer on the desktop was refused", metadata: [
                    "app": .string(key.bundleIdentifier), "identifier": .string(key.identifier), "reason": .string("\(error)"),
                ])
            }
        }
    }

    /// The web center's page opened at `key`'s reply field for `action`.
    static func replyLink(address: String, key: DesktopNotificationTable.Key, action: String) -> String {
        let segment = { (value: String) in value.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? value }
        return "\(address)#reply/\(segment(key.bundleIdentifier))/\(segment(key.identifier))/\(segment(action))"
    }

    private static func signal(_ message: DBusMessage) -> DesktopNotificationTable.Signal? {
        guard let id = message.body.first?.uint32Value, message.body.count >= 2 else { return nil }
        switch message.member {
        case "ActionInvoked": return message.body[1].stringValue.map { .actionInvoked(id, key: $0) }
        case "NotificationReplied": return message.body[1].stringValue.map { .replied(id, text: $0) }
        case "NotificationClosed":
            return message.body[1].uint32Value.map { .closed(id, reason: DesktopNotificationTable.CloseReason(rawValue: $0) ?? .undefined) }
        default: return nil
        }
    }
}
