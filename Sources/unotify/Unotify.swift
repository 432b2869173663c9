import ArgumentParser

/// The one `unotify` executable: the daemon and every command a person or developer uses with it.
@main
struct Unotify: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unotify",
        abstract: "The OpenUserNotifications notification system: the daemon and its command-line surface.",
        subcommands: []
    )
}
