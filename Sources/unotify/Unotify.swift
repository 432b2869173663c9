import ArgumentParser
import Foundation

/// The one `unotify` executable: the daemon and every command a person or developer uses with it.
@main
struct Unotify: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unotify",
        abstract: "The OpenUserNotifications notification system: the daemon and its command-line surface.",
        discussion: """
            Start the system with `unotify serve` (or `unotify daemon`). Register an app with `unotify apps add`, which prints its key. Then watch and act on notifications with `unotify watch`, or one at a time with `unotify notifications` and `unotify respond`.

            Every other command talks to a running daemon through its Unix socket, found as the daemon finds it: --socket, else $UNOTIFY_SOCKET, else $XDG_RUNTIME_DIR/unotify.sock, else unotify.sock in the data directory (--data-dir, else $UNOTIFY_DATA_DIR, else $XDG_DATA_HOME/unotify, else ~/.local/share/unotify).
            """,
        subcommands: [
            ServeCommand.self, DaemonCommand.self, AppsCommand.self, AuthorizeCommand.self, SettingsCommand.self,
            PendingCommand.self, DeliveredCommand.self, NotificationsCommand.self, RespondCommand.self,
            WatchCommand.self, CenterCommand.self, LocationCommand.self, DeviceCommand.self, FocusCommand.self, SummaryCommand.self, GatewayCommand.self, PushCommand.self,
            EmulatorCommand.self,
        ]
    )

    /// Runs the command line with its configuration file's options (``ConfigurationFile``): a
    /// mistake about an option the file gave names the file, the line and the key.
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        let applied: ConfigurationFile.Applied
        do {
            applied = try ConfigurationFile.apply(to: arguments, environment: ProcessInfo.processInfo.environment)
            // A flag the file turns off is given nowhere; a key that names no option is still a mistake.
            for entry in applied.entries where entry.value == .boolean(false) {
                let path = applied.arguments.prefix { !$0.hasPrefix("-") }
                do {
                    _ = try parseAsRoot(Array(path) + ["--" + entry.key])
                } catch where message(for: error).contains("Unknown option") {
                    throw CommandFailure(ConfigurationFile.attribute(message(for: error), to: applied) ?? message(for: error))
                } catch {}
            }
        } catch {
            exit(withError: error)
        }
        do {
            var command = try parseAsRoot(applied.arguments)
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            if let attributed = ConfigurationFile.attribute(message(for: error), to: applied) {
                exit(withError: CommandFailure(attributed))
            }
            exit(withError: error)
        }
    }
}
