/// A command that could not do what it was asked, at run time: `unotify` prints its message as one
/// line (`Error: …`) and exits with 1. A mistake in the command line itself is ArgumentParser's
/// `ValidationError`, which prints the usage too.
struct CommandFailure: Error, CustomStringConvertible {
    let description: String

    init(_ message: String) {
        description = message
    }
}
