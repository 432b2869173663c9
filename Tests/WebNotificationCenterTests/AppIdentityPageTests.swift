import DaemonTestSupport
import Foundation
import NotificationCore
import Testing
import TestSupport

/// Apps as the person knows them on the page: by their names and icons, with times told as iOS tells
/// them, and a reply begun on the desktop finished here.
extension WebNotificationCenterTests {
    @Test func anAppIsShownByItsNameAndIconAndTimesAsIOSTellsThem() async throws {
        try await withWebCenter { daemon, url in
            let environment = ServedSystem.environment(daemon.directory)
            let chat = try await daemon.authorizedApp("com.example.chat")
            let icon = daemon.directory.appendingPathComponent("chat.png")
            try MediaFiles.png(width: 64, height: 64) { _, _ in (0x34, 0xC7, 0x59) }.write(to: icon)
            let said = try await Self.unotify(["apps", "identity", "com.example.chat", "--name", "Chat", "--icon", icon.path], environment)
            #expect(said == "com.example.chat is shown named \"Chat\" and with the icon \(icon.path) now.")
            // A name or icon that breaks a rule is refused, saying which.
            let refused = try ChildProcess(ChildProcess.built("unotify"), ["apps", "identity", "com.example.chat", "--icon", "/etc/passwd"],
                                           environment: environment, name: "unotify apps identity")
            #expect(await refused.waitUntilExit() != 0)
            #expect(await refused.completeOutput().joined().contains("PNG, SVG or JPEG"))

            var content = NotificationContent()
            content.title = "Lunch at noon?"
            content.threadIdentifier = "lunch"  // each on its own, not stacked
            try await chat.call(.POST, "/v1/requests", body: NotificationRequest(identifier: "lunch", content: content, trigger: nil))
            try await Self.withPage(url) { browser in
                let card = "#list .notification[data-identifier='lunch']"
                #expect(try await browser.text(of: "\(card) .app-name") == "Chat")
                #expect(try await browser.text(of: "#list .group h2") == "Chat")
                // The icon is the registered file, served by the center, and drawn.
                try await browser.waitUntil("the icon to load", """
                    const image = document.querySelector(a0);
                    return image !== null && image.complete && image.naturalWidth === 64
                    """, ["\(card) img.app-icon"])
                #expect(try await browser.text(of: "\(card) .time") == "now")

                // Five minutes on the device's clock: "5m ago" (told by the device's clock, not the browser's).
                daemon.clock.advance(by: 300)
                content.title = "Coffee?"
                content.threadIdentifier = "coffee"
                try await chat.call(.POST, "/v1/requests", body: NotificationRequest(identifier: "coffee", content: content, trigger: nil))
                try await browser.waitUntil("the time to be told again", "return document.querySelector(a0)?.textContent === '5m ago'", ["\(card) .time"])
                #expect(try await browser.text(of: "#list .notification[data-identifier='coffee'] .time") == "now")
                daemon.clock.advance(by: 2 * 3600)
                try await Self.unotify(["settings", "--app", "com.example.chat", "--sounds", "off"], environment)
                try await browser.waitUntil("hours", "return document.querySelector(a0)?.textContent === '2h ago'", ["#list .notification[data-identifier='coffee'] .time"])
                try await browser.screenshot(to: Self.screenshots.appendingPathComponent("web-app-identity.png"))

                // The app's settings are listed by its name too.
                try await browser.click("#toggle-settings")
                try await browser.waitUntil("the apps listed", "return document.querySelector(\"#settings-apps button[data-app='com.example.chat']\")?.textContent.startsWith('C') === true")
                #expect(try await browser.text(of: "#settings-apps button[data-app='com.example.chat']").contains("Chat"))
            }
        }
    }

    /// "Reply…" on a desktop without a reply field opens the page at `#reply/<app>/<identifier>/<action>`:
    /// the notification expanded, its reply field focused; what is typed there reaches the app.
    @Test func aReplyBegunOnTheDesktopIsWrittenInThePage() async throws {
        try await withWebCenter { daemon, url in
            let chat = try await daemon.authorizedApp("com.example.chat")
            try await chat.call(.PUT, "/v1/categories", body: [NotificationCategory(identifier: "MESSAGE", actions: [
                NotificationAction(identifier: "REPLY", title: "Reply", textInput: .init(buttonTitle: "Send", placeholder: "Answer Ada")),
            ])])
            var content = NotificationContent()
            content.title = "Ada"
            content.body = "Lunch?"
            content.categoryIdentifier = "MESSAGE"
            try await chat.call(.POST, "/v1/requests", body: NotificationRequest(identifier: "lunch", content: content, trigger: nil))
            try await Self.withPage(url) { browser in
                let address = try #require(url.firstMatch(of: /http:\/\/[^\/]+\//).map { String($0.0) })
                try await browser.go(to: address + "#reply/com.example.chat/lunch/REPLY")
                try await browser.waitUntil("the reply field to be focused", """
                    const input = document.querySelector("#list .notification[data-identifier='lunch'] form.reply input");
                    return input !== null && document.activeElement === input && input.placeholder === 'Answer Ada'
                    """)
                #expect(try await browser.currentURL == address)
                try await browser.type("at noon", into: "#list form.reply input")
                try await browser.click("#list form.reply button[type=submit]")
                try await browser.waitUntil("the notification to leave the list", "return document.querySelectorAll('#list .notification').length === 0")
                #expect(try await Self.firstResponseWaiting(socket: daemon.socketPath, key: chat.key) == "REPLY lunch")
            }
        }
    }
}
