import DBus
import Foundation
package import Logging
import NotificationCore
package import NotificationEngine
import ServiceLifecycle

/// The daemon as the desktop's notification server (`org.freedesktop.Notifications`), for a headless
/// machine or a remote session with no desktop of its own: every program that uses `notify-send`,
/// libnotify or the D-Bus interface has its notifications kept, listed, shown in `unotify watch` and the
/// web notification center, and the person's actions and replies sent back as the specification's signals.
///
/// Each program is an app of the daemon: its desktop entry when that is a reverse-DNS id, else
/// `desktop.<its name>`, registered and allowed the first time it notifies. Its actions make a category
/// (`inline-reply` a text-input action); what the person does reaches it as `ActionInvoked`,
/// `NotificationReplied` and `NotificationClosed`. The server takes the name only when no other server
/// owns it.
package struct FreedesktopNotificationServer: Service {
    private let engine: DaemonEngine
    private let busAddress: String?
    private let claim: NotificationServerClaim
    private let logger: Logger

    /// - Parameter claim: where the outcome of asking for the name is told (to the desktop presenter).
    package init(engine: DaemonEngine, busAddress: String? = nil, claim: NotificationServerClaim = NotificationServerClaim(), logger: Logger) {
        self.engine = engine
        self.busAddress = busAddress
        self.claim = claim
        self.logger = logger
    }

    package func run() async throws {
        // Whatever happens, the claim is decided: the presenter does not wait for ever.
        defer { claim.decide(.notOurs) }
        await SessionBus.run(address: busAddress, role: "not the desktop's notification server", logger: logger) { [engine, claim, logger] connection in
            do throws(DBusError) {
                // 4: do not queue for the name; 1: we own it now.
                let result = try await connection.callBus("RequestName", [.string(DesktopSession.serverName), .uint32(4)]).first?.uint32Value
                guard result == 1 else {
                    let owner = (try? await connection.owner(of: DesktopSession.serverName)) ?? nil
                    logger.notice("not the desktop's notification server: another one owns the name; the daemon's notifications are shown there",
                                  metadata: ["owner": .string(owner ?? "unknown")])
                    claim.decide(.notOurs)
                    return false
                }
            } catch {
                logger.notice("not the desktop's notification server: the session bus refused", metadata: ["reason": .string(error.message)])
                claim.decide(.notOurs)
                return false
            }
            claim.decide(.ours(connection.uniqueName))
            logger.info("serving desktop notifications", metadata: ["name": .string(connection.uniqueName)])
            await FreedesktopSession(engine: engine, connection: connection, logger: logger).run()
            return true
        }
    }
}

/// The server's work on its bus connection.
actor FreedesktopSession {
    private struct Shown {
        var bundleIdentifier: String
        var identifier: String
        /// The unique name of the program that sent it: its signals go there.
        var sender: String?
    }

    /// What the server says it can do.
    static let capabilities = ["actions", "body", "inline-reply", "persistence"]
    /// The prefix of the identifiers given to desktop programs' notifications (`desktop-7`).
    static let identifierPrefix = "desktop-"

    private let engine: DaemonEngine
    private let connection: DBusConnection
    private let logger: Logger
    private var shown: [UInt32: Shown] = [:]
    private var lastID: UInt32 = 0
    /// The apps this server has registered or seen, each connected to hear its responses.
    private var apps: Set<String> = []
    private var pendingConnections: [String] = []

    init(engine: DaemonEngine, connection: DBusConnection, logger: Logger) {
        self.engine = engine
        self.connection = connection
        self.logger = logger
    }

    func run() async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.followRemovals() }
            // The apps registered by earlier runs: their notifications may still be answered.
            for app in ((try? await engine.apps()) ?? []).map(\.bundleIdentifier) where app.hasPrefix("desktop.") {
                apps.insert(app)
                for notification in (try? await engine.visibleNotifications(app)) ?? [] {
                    let identifier = notification.notification.request.identifier
                    if identifier.hasPrefix(Self.identifierPrefix), let id = UInt32(identifier.dropFirst(Self.identifierPrefix.count)) {
                        lastID = max(lastID, id)
                        shown[id] = Shown(bundleIdentifier: app, identifier: identifier, sender: nil)
                    }
                }
                group.addTask { await self.followResponses(of: app) }
            }
            for await message in connection.incoming where message.kind == .methodCall {
                let reply = await answer(message)
                if !message.flags.contains(.noReplyExpected) { try? await connection.send(reply) }
                for app in pendingConnections { group.addTask { await self.followResponses(of: app) } }
                pendingConnections = []
            }
            group.cancelAll()
        }
    }

    // MARK: - Calls

    private func answer(_ call: DBusMessage) async -> DBusMessage {
        guard call.path == DesktopSession.serverPath else {
            return .error(to: call, name: "org.freedesktop.DBus.Error.UnknownObject", message: "No object at \(call.path ?? "").")
        }
        switch (call.interface, call.member) {
        case (DesktopSession.serverName, "GetCapabilities"), (nil, "GetCapabilities"):
            return .methodReturn(to: call, body: [.strings(Self.capabilities)])
        case (DesktopSession.serverName, "GetServerInformation"), (nil, "GetServerInformation"):
            return .methodReturn(to: call, body: [.string("unotify"), .string("OpenUserNotifications"), .string("1.0"), .string("1.2")])
        case (DesktopSession.serverName, "Notify"), (nil, "Notify"):
            do {
                return .methodReturn(to: call, body: [.uint32(try await notify(FreedesktopNotify(arguments: call.body), sender: call.sender))])
            } catch let error as DBusError {
                return .error(to: call, name: "org.freedesktop.DBus.Error.InvalidArgs", message: error.message)
            } catch {
                return .error(to: call, name: "org.freedesktop.DBus.Error.Failed", message: "\(error)")
            }
        case (DesktopSession.serverName, "CloseNotification"), (nil, "CloseNotification"):
            guard call.body.count == 1, let id = call.body[0].uint32Value else {
                return .error(to: call, name: "org.freedesktop.DBus.Error.InvalidArgs", message: "CloseNotification takes (u).")
            }
            await closeNotification(id)
            return .methodReturn(to: call)
        case ("org.freedesktop.DBus.Introspectable", "Introspect"):
            return .methodReturn(to: call, body: [.string(Self.introspection)])
        case ("org.freedesktop.DBus.Peer", "Ping"):
            return .methodReturn(to: call)
        case ("org.freedesktop.DBus.Properties", "GetAll"):
            return .methodReturn(to: call, body: [.variantDictionary([])])
        default:
            return .error(to: call, name: "org.freedesktop.DBus.Error.UnknownMethod",
                          message: "No method \(call.member ?? "") in \(call.interface ?? "any interface").")
        }
    }

    private func notify(_ notify: FreedesktopNotify, sender: String?) async throws -> UInt32 {
        let app = notify.bundleIdentifier
        if !apps.contains(app) {
            if try await !engine.apps().contains(where: { $0.bundleIdentifier == app }) {
                _ = try await engine.registerApp(app)
                // A desktop program never asks: it is allowed, and the person can turn it off in its settings.
                _ = try await engine.authorize(app, .grant)
                logger.info("a desktop program's notifications are kept as an app", metadata: ["app": .string(app), "name": .string(notify.appName)])
            }
            apps.insert(app)
            pendingConnections.append(app)
        }
        let category = notify.category
        var categories = try await engine.categories(app)
        if !categories.contains(category) {
            categories.removeAll { $0.identifier == category.identifier }
            categories.append(category)
            // Programs that make a new set of actions each time keep only their latest 32.
            let ours = categories.filter { $0.identifier.hasPrefix("freedesktop-") }
            if ours.count > 32 { categories.removeAll { $0 == ours[0] } }
            try await engine.setCategories(app, categories)
        }
        let id: UInt32
        if notify.replacesID != 0, let old = shown[notify.replacesID], old.bundleIdentifier == app {
            id = notify.replacesID
        } else {
            lastID = lastID == .max ? 1 : lastID + 1
            id = lastID
        }
        let identifier = Self.identifierPrefix + String(id)
        var content = notify.content(category: category.identifier)
        if let file = notify.imageFile, let type = AttachmentRules.fileType(pathExtension: file.pathExtension, typeHint: nil), type.family == .image {
            content.attachments = [NotificationAttachment(identifier: "image", url: file, type: type.identifier)]
        }
        do {
            try await engine.add(app, NotificationRequest(identifier: identifier, content: content, trigger: nil))
        } catch where !content.attachments.isEmpty {
            // An image that cannot be attached (missing, too large, not what it says) is left out.
            content.attachments = []
            try await engine.add(app, NotificationRequest(identifier: identifier, content: content, trigger: nil))
        }
        shown[id] = Shown(bundleIdentifier: app, identifier: identifier, sender: sender)
        return id
    }

    private func closeNotification(_ id: UInt32) async {
        guard let entry = shown.removeValue(forKey: id) else { return }
        try? await engine.removeDeliveredNotifications(entry.bundleIdentifier, [entry.identifier])
        try? await engine.removePendingRequests(entry.bundleIdentifier, [entry.identifier])
        await signal("NotificationClosed", [.uint32(id), .uint32(DesktopNotificationTable.CloseReason.closedByCall.rawValue)], to: entry.sender)
    }

    // MARK: - Responses, as signals

    /// Every notification that leaves without the program or the person (the oldest pushed out of the
    /// list past its limit, one removed through the daemon's API) is closed for its program too: one
    /// waiting on it (`notify-send --wait`, any libnotify program) is released, and nothing stays here.
    private func followRemovals() async {
        while !Task.isCancelled {
            let watch = await engine.watch()
            for await event in watch.events {
                guard case .app(let app, .notificationsRemoved(let identifiers)) = event, apps.contains(app) else { continue }
                for identifier in identifiers {
                    guard identifier.hasPrefix(Self.identifierPrefix), let id = UInt32(identifier.dropFirst(Self.identifierPrefix.count)),
                          let entry = shown[id], entry.bundleIdentifier == app else { continue }
                    shown.removeValue(forKey: id)
                    await signal("NotificationClosed", [.uint32(id), .uint32(DesktopNotificationTable.CloseReason.expired.rawValue)], to: entry.sender)
                }
            }
            guard watch.overflowed else { return }
        }
    }

    /// Hears the app's responses as the app would, and tells the program that sent the notification.
    private func followResponses(of app: String) async {
        guard let (connectionID, messages) = try? await engine.connect(app, state: .background) else { return }
        for await message in messages {
            switch message {
            case .call(.response(let ticket, let response)):
                await respond(response)
                try? await engine.completeResponse(app, ticket: ticket)
            case .call(.willPresent(let ticket, _)):
                try? await engine.answerWillPresent(app, ticket: ticket, options: [.banner, .list, .sound, .badge])
            case .replaced:
                return
            default:
                break
            }
        }
        try? await engine.disconnect(app, connection: connectionID)
    }

    private func respond(_ response: NotificationResponse) async {
        let identifier = response.notification.request.identifier
        guard identifier.hasPrefix(Self.identifierPrefix), let id = UInt32(identifier.dropFirst(Self.identifierPrefix.count)) else { return }
        let sender = shown.removeValue(forKey: id)?.sender
        let dismissed = DesktopNotificationTable.CloseReason.dismissedByUser.rawValue
        switch response.actionIdentifier {
        case SystemActionIdentifier.dismiss:
            break
        case SystemActionIdentifier.default:
            await signal("ActionInvoked", [.uint32(id), .string(DesktopNotification.defaultActionKey)], to: sender)
        case let action:
            if let text = response.userText {
                await signal("NotificationReplied", [.uint32(id), .string(text)], to: sender)
            } else {
                await signal("ActionInvoked", [.uint32(id), .string(action)], to: sender)
            }
        }
        // Answered or dismissed, it is gone, as a server closes a notification once acted on.
        await signal("NotificationClosed", [.uint32(id), .uint32(dismissed)], to: sender)
    }

    /// Sends a signal to the program that sent the notification; none to anyone else (a notification
    /// of an earlier run has no sender any more).
    private func signal(_ member: String, _ body: [DBusValue], to destination: String?) async {
        guard let destination else { return }
        try? await connection.send(.signal(path: DesktopSession.serverPath, interface: DesktopSession.serverName, member: member,
                                           destination: destination, body: body))
    }

    static let introspection = """
        <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
        <node>
          <interface name="org.freedesktop.Notifications">
            <method name="GetCapabilities"><arg direction="out" type="as"/></method>
            <method name="Notify">
              <arg direction="in" type="s" name="app_name"/><arg direction="in" type="u" name="replaces_id"/>
              <arg direction="in" type="s" name="app_icon"/><arg direction="in" type="s" name="summary"/>
              <arg direction="in" type="s" name="body"/><arg direction="in" type="as" name="actions"/>
              <arg direction="in" type="a{sv}" name="hints"/><arg direction="in" type="i" name="expire_timeout"/>
              <arg direction="out" type="u" name="id"/>
            </method>
            <method name="CloseNotification"><arg direction="in" type="u" name="id"/></method>
            <method name="GetServerInformation">
              <arg direction="out" type="s" name="name"/><arg direction="out" type="s" name="vendor"/>
              <arg direction="out" type="s" name="version"/><arg direction="out" type="s" name="spec_version"/>
            </method>
            <signal name="NotificationClosed"><arg type="u" name="id"/><arg type="u" name="reason"/></signal>
            <signal name="ActionInvoked"><arg type="u" name="id"/><arg type="s" name="action_key"/></signal>
            <signal name="NotificationReplied"><arg type="u" name="id"/><arg type="s" name="text"/></signal>
          </interface>
          <interface name="org.freedesktop.DBus.Introspectable">
            <method name="Introspect"><arg direction="out" type="s"/></method>
          </interface>
          <interface name="org.freedesktop.DBus.Peer"><method name="Ping"/></interface>
        </node>
        """
}
