import ArgumentParser

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
            WatchCommand.self, LocationCommand.self, DeviceCommand.self, FocusCommand.self, SummaryCommand.self, GatewayCommand.self, PushCommand.self,
        ]
    )
}
