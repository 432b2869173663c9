import ArgumentParser
import Foundation
import NotificationCore
import NotificationDaemon
import NotificationEngine
import WebNotificationCenter

/// The web notification center's pairing: the link that pairs a browser, and signing every browser out.
struct CenterCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "center",
        abstract: "The web notification center's link, and signing browsers out of it.",
        discussion: "A browser is paired by opening the center's link once: it keeps the secret as a cookie, across restarts of the center and of the browser. The secret is in center.key in the data directory, readable only by you.",
        subcommands: [Link.self, Revoke.self]
    )

    struct Link: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the link that pairs a browser with the notification center.")
        @OptionGroup var location: LocationOptions

        func run() throws {
            let place = location.configuration.location
            guard let secret = WebCredential.read(place.centerKeyPath) else {
                throw CommandFailure("No notification center has run with the data directory \(place.dataDirectory.path): start `unotify serve` first.")
            }
            print(WebNotificationCenter.link(address: try CenterCommand.address(place), secret: secret))
        }
    }

    struct Revoke: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Sign every browser out of the notification center, and print the new link.",
            discussion: "The secret is replaced: pages open in browsers stop at once and say how to pair again, and earlier links no longer work. A running center takes the new secret at its next request."
        )
        @OptionGroup var location: LocationOptions

        func run() throws {
            let place = location.configuration.location
            guard WebCredential.read(place.centerKeyPath) != nil else {
                throw CommandFailure("No notification center has run with the data directory \(place.dataDirectory.path): no browser is paired.")
            }
            let secret: String
            do {
                secret = try WebCredential.rotate(at: place.centerKeyPath).secret
            } catch {
                throw CommandFailure(error.message)
            }
            FileHandle.standardError.write(Data("Signed every browser out of the notification center. The link that pairs one now:\n".utf8))
            print(WebNotificationCenter.link(address: try CenterCommand.address(place), secret: secret))
        }
    }

    /// The center's address as it last listened.
    static func address(_ place: DaemonLocation) throws -> String {
        guard let text = try? String(contentsOfFile: place.centerAddressPath, encoding: .utf8),
              case let address = text.trimmingCharacters(in: .whitespacesAndNewlines), !address.isEmpty else {
            throw CommandFailure("The notification center has not listened with the data directory \(place.dataDirectory.path) yet: start `unotify serve` first.")
        }
        return address
    }
}
