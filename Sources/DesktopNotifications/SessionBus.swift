import DBus
import Foundation
import Logging
import ServiceLifecycle

/// The session bus, as the desktop's services use it: found from the environment, kept for as long as
/// the system runs, and never a reason for the rest of the system to stop.
enum SessionBus {
    /// Runs `work` on a connection to the bus at `address` (the session bus when nil) until the system
    /// stops. Where there is no bus, or once it goes away, it says so once (each line starting with
    /// `role`) and waits for the system to stop.
    ///
    /// - Parameter work: what to do on the bus; returns `true` when it ran until the bus closed, `false`
    ///   when it gave up (having said why).
    static func run(address: String?, role: String, logger: Logger, _ work: @escaping @Sendable (DBusConnection) async -> Bool) async {
        guard let address = address ?? DBusAddress.sessionBusAddress(environment: ProcessInfo.processInfo.environment) else {
            logger.notice("\(role): no session bus (DBUS_SESSION_BUS_ADDRESS is not set)")
            try? await gracefulShutdown()
            return
        }
        let connection: DBusConnection
        do {
            connection = try await DBusConnection.connect(to: address)
        } catch {
            logger.notice("\(role): no session bus", metadata: ["reason": .string(error.message)])
            try? await gracefulShutdown()
            return
        }
        let ranUntilClosed = await cancelWhenGracefulShutdown { await work(connection) }
        await connection.close()
        guard !Task.isCancelled && !Task.isShuttingDownGracefully else { return }
        // The bus went away (the desktop session ended): the rest of the system goes on until it stops.
        if ranUntilClosed { logger.notice("\(role): the session bus closed") }
        try? await gracefulShutdown()
    }
}
