import AsyncHTTPClient
import DaemonTestSupport
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NotificationCore
import NotificationDaemonClient
import ServiceLifecycle
import Testing
import WebNotificationCenter
import TestSupport

/// The web notification center in a real browser (Debian's Chromium, headless, through chromedriver),
/// served by the real `unotify serve`, with the real example app: what a person sees and does there
/// reaches the app's delegate. Screenshots of the key screens are saved in `.build/screenshots/`.
@Suite(.serialized, .timeLimit(.minutes(3))) struct WebNotificationCenterTests {
    static let screenshots = Screenshots.folder

    /// Runs `body` with `unotify serve`, one app registered, and the center's URL as it printed it;
    /// then stops it with SIGTERM, as a person does, and expects it to stop.
    static func withServed(app: String, _ body: (_ environment: [String: String], _ url: String) async throws -> Void) async throws {
        let directory = try makeTestDirectory()
        let environment = ServedSystem.environment(directory)
        let serve = try await ServedSystem.serve(directory)
        do {
            let printed = try await serve.line(containing: "Notification center: http://")
            let url = try #require(printed.firstMatch(of: /http:\/\/\S+/).map { String($0.0) })
            try await Self.unotify(["apps", "add", app], environment)
            try await body(environment, url)
        } catch {
            await serve.stop(kill: true)
            throw error
        }
        #expect(await serve.stop() != nil, "unotify serve did not stop on SIGTERM")
    }

    /// A client of the served daemon's local API with the administrator's key, and its socket.
    static func administrator(_ environment: [String: String]) throws -> (LocalAPIClient, String) {
        let socket = try #require(environment["UNOTIFY_SOCKET"])
        let key = try String(contentsOfFile: try #require(environment["UNOTIFY_DATA_DIR"]) + "/admin.key", encoding: .utf8)
        return (LocalAPIClient(socketPath: socket, key: key.trimmingCharacters(in: .whitespacesAndNewlines)), socket)
    }

    /// Runs `unotify` with `arguments` against the served daemon, as a person types it; expects it to
    /// succeed and returns what it printed.
    @discardableResult
    static func unotify(_ arguments: [String], _ environment: [String: String]) async throws -> String {
        let command = try ChildProcess(ChildProcess.built("unotify"), arguments, environment: environment, name: "unotify \(arguments[0])")
        #expect(await command.waitUntilExit() == 0, "unotify \(arguments.joined(separator: " ")): \(command.lines)")
        return await command.completeOutput().joined(separator: "\n")
    }

    /// An app's settings as `unotify settings --json` prints them.
    static func settings(of app: String, _ environment: [String: String]) async throws -> [String: Any] {
        let output = try await unotify(["settings", "--app", app, "--json"], environment)
        return try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], "\(output)")
    }

    /// Swipes every banner away (its grabber), as a person does to reach what it covers; the
    /// notifications stay in the list.
    static func swipeBannersAway(_ browser: BrowserSession) async throws {
        while try await browser.count(".banners .hide") > 0 {
            try await browser.click(".banners .hide")
        }
    }

    /// Runs `body` with a browser that opened `url` and whose page is live.
    static func withPage(_ url: String, _ body: (BrowserSession) async throws -> Void) async throws {
        let browser = try await BrowserSession.start()
        do {
            try await browser.go(to: url)
            try await browser.waitUntil("the page to go live", "return document.getElementById('connection').textContent === 'Live'")
            try await body(browser)
            await browser.close()
        } catch {
            await browser.close()
            throw error
        }
    }

    @Test func aPersonAllowsTheAppAndRepliesToItsReminderInTheBrowser() async throws {
        try await Self.withServed(app: "com.example.todo") { environment, url in
            try await Self.withPage(url) { browser in
                // The secret became a cookie and left the address bar.
                let address = try await browser.currentURL
                #expect(!address.contains("secret"))
                #expect(address.hasSuffix("/"))

                let app = try ChildProcess(ChildProcess.built("todo-example"), ["--schedule", "2"],
                                           environment: environment.merging(["UNOTIFY_APP_ID": "com.example.todo"]) { $1 }, name: "todo-example")
                try await app.line(containing: "asking for permission")
                #expect(try await browser.text(of: ".prompt h2") == "“com.example.todo” Would Like to Send You Notifications")
                try await browser.screenshot(to: Self.screenshots.appendingPathComponent("web-prompt.png"))
                try await browser.click(".prompt .allow")
                try await app.line(containing: "scheduled \"daily-report\" in 2 s")

                // The reminder arrives as a banner (the app's delegate asked for one) and in the list.
                try await app.line(containing: "arrived while running: 📌 Daily reminder")
                #expect(try await browser.text(of: ".banners .notification .title") == "📌 Daily reminder")
                #expect(try await browser.count(".banners .notification .actions button") == 2)
                try await browser.waitUntil("the banner to settle", "return document.getAnimations().length === 0")
                try await browser.screenshot(to: Self.screenshots.appendingPathComponent("web-banner.png"))
                #expect(try await browser.text(of: "#list .group h2") == "com.example.todo")
                // On a phone's width the banner covers the top of the list, as on iOS: swiped away, the list is in reach.
                try await Self.swipeBannersAway(browser)

                // Expanded, its actions (hidden until then); the reply field has the category's placeholder and button.
                let actionsShown = "return getComputedStyle(document.querySelector('#list .notification .actions')).display !== 'none'"
                #expect(try await browser.execute(actionsShown) as? Bool == false)
                try await browser.click("#list .notification .more")
                #expect(try await browser.execute(actionsShown) as? Bool == true)
                try await browser.click("#list .notification .actions button[data-action='INPUT']")
                let placeholder = try await browser.execute("return document.querySelector('#list form.reply input').placeholder") as? String
                #expect(placeholder?.isEmpty == false)
                try await browser.type("all done", into: "#list form.reply input")
                try await browser.screenshot(to: Self.screenshots.appendingPathComponent("web-reply.png"))

                // Another event draws the list again: the reply being written stays, with its focus.
                let renders = try await browser.execute("return Number(document.getElementById('list').dataset.renders)") as? Int ?? 0
                try await Self.unotify(["settings", "--app", "com.example.todo", "--sounds", "off"], environment)
                try await browser.waitUntil("the list to be drawn again", "return Number(document.getElementById('list').dataset.renders) > a0", [renders])
                let kept = try await browser.execute("""
                    const input = document.querySelector('#list form.reply input');
                    return input !== null && input.value === 'all done' && document.activeElement === input
                    """) as? Bool
                #expect(kept == true)
                try await browser.click("#list form.reply button[type=submit]")

                // Exactly that reply reaches the delegate, and the notification leaves the screen.
                try await app.line(containing: "the person replied to \"daily-report\": all done")
                try await browser.waitUntil("the notification to leave the list", "return document.querySelectorAll('.notification').length === 0")
                #expect(try await browser.text(of: "#empty") == "No Older Notifications")
                await app.interrupt()
            }
        }
    }

    /// The README's order: the app running, its reminder arrives as a banner and stays in the list; then
    /// **Lock**. What Notification Center keeps is on the lock screen, as on iOS, its preview hidden as
    /// the app's Show Previews says; turning the app's Lock Screen setting off takes it away from there.
    @Test func theLockScreenShowsWhatArrivedWhileTheAppWasInTheForeground() async throws {
        try await Self.withServed(app: "com.example.todo") { environment, url in
            try await Self.withPage(url) { browser in
                let app = try ChildProcess(ChildProcess.built("todo-example"), ["--schedule", "1"],
                                           environment: environment.merging(["UNOTIFY_APP_ID": "com.example.todo"]) { $1 }, name: "todo-example")
                try await app.line(containing: "asking for permission")
                try await browser.click(".prompt .allow")
                try await app.line(containing: "arrived while running: 📌 Daily reminder")
                try await browser.waitUntil("the banner", "return document.querySelectorAll('.banners .notification').length === 1")
                try await browser.waitUntil("the list", "return document.querySelectorAll('#list .notification').length === 1")

                try await browser.click("#lock")
                try await browser.waitUntil("the lock screen", "return !document.getElementById('lock-screen').hidden")
                try await browser.waitUntil("the reminder on the lock screen", "return document.querySelectorAll('#lock-list .notification').length === 1")
                // Show Previews is When Unlocked: the lock screen has the placeholder, not the reminder's words.
                #expect(try await browser.text(of: "#lock-list .notification .body") == "Notification")
                #expect(try await browser.count("#lock-list .notification .title") == 0)
                try await browser.screenshot(to: Self.screenshots.appendingPathComponent("web-lock-screen-after-banner.png"))

                // The app's Lock Screen setting off: its notifications leave the lock screen (not the list).
                try await Self.unotify(["settings", "--app", "com.example.todo", "--lock-screen", "off"], environment)
                try await browser.waitUntil("the lock screen to be empty", "return document.querySelectorAll('#lock-list .notification').length === 0")
                try await browser.click("#unlock button[type=submit]")
                try await browser.waitUntil("the list again", "return document.querySelectorAll('#list .notification').length === 1")
                await app.interrupt()
            }
        }
    }

    @Test func theAppsOwnNotificationSettingsOpenInTheAppFromTheSettingsPage() async throws {
        try await Self.withServed(app: "com.example.todo") { environment, url in
            try await Self.withPage(url) { browser in
                let app = try ChildProcess(ChildProcess.built("todo-example"), [],
                                           environment: environment.merging(["UNOTIFY_APP_ID": "com.example.todo"]) { $1 }, name: "todo-example")
                try await app.line(containing: "asking for permission")
                try await browser.click(".prompt .allow")
                try await browser.click("#toggle-settings")
                try await browser.click("#settings-apps button[data-app='com.example.todo']")
                // The app said it has its own settings (`providesAppNotificationSettings`): Settings links to them.
                #expect(try await browser.text(of: "#app-settings .app-link") == "com.example.todo Notification Settings")
                try await browser.click("#app-settings .app-link")
                try await app.line(containing: "the person opened the app's notification settings")
                await app.interrupt()
            }
        }
    }

    /// A page left open must not keep the center from stopping (its live events end with the server).
    @Test func theSystemStopsWhileAPageIsOpen() async throws {
        let directory = try makeTestDirectory()
        let serve = try await ServedSystem.serve(directory)
        let printed = try await serve.line(containing: "Notification center: http://")
        let url = try #require(printed.firstMatch(of: /http:\/\/\S+/).map { String($0.0) })
        try await Self.withPage(url) { _ in
            #expect(await serve.stop() != nil, "unotify serve did not stop on SIGTERM with a page open")
        }
    }

    @Test func tappingOpensTheNotificationAndTheCloseButtonDismissesIt() async throws {
        try await Self.withServed(app: "com.example.todo") { environment, url in
            try await Self.unotify(["authorize", "--app", "com.example.todo", "grant"], environment)
            try await Self.withPage(url) { browser in
                let appEnvironment = environment.merging(["UNOTIFY_APP_ID": "com.example.todo"]) { $1 }
                let app = try ChildProcess(ChildProcess.built("todo-example"), ["--schedule", "1"], environment: appEnvironment, name: "todo-example")
                try await app.line(containing: "arrived while running")
                // A tap on the banner is the notification's default action.
                try await browser.click(".banners .notification .open")
                try await app.line(containing: "the person opened \"daily-report\"")
                try await browser.waitUntil("the opened notification to leave the list", "return document.querySelectorAll('#list .notification').length === 0")

                // Its close button dismisses it: the example's category asks for dismiss actions.
                let again = try ChildProcess(ChildProcess.built("todo-example"), ["--schedule", "1"], environment: appEnvironment, name: "todo-example again")
                await app.interrupt()
                try await again.line(containing: "arrived while running")
                try await browser.click(".banners .notification .close")
                try await again.line(containing: "the person dismissed \"daily-report\"")
                try await browser.waitUntil("the dismissed notification to leave the list", "return document.querySelectorAll('#list .notification').length === 0")
                await again.interrupt()
            }
        }
    }

    /// A notification the person swipes away elsewhere (the watch, `unotify respond`) leaves the open
    /// page at once, though its app hears nothing of it (no category asks for dismissals).
    @Test func aNotificationDismissedElsewhereLeavesThePage() async throws {
        try await Self.withServed(app: "com.example.todo") { environment, url in
            try await Self.unotify(["authorize", "--app", "com.example.todo", "grant"], environment)
            try await Self.withPage(url) { browser in
                try await Self.unotify(["push", "com.example.todo", "--payload", #"{"aps":{"alert":{"title":"Swipe me","body":"away"}}}"#], environment)
                try await browser.waitUntil("the push to be listed", "return document.querySelectorAll('#list .notification').length === 1")
                let listed = try await Self.unotify(["delivered", "--app", "com.example.todo", "--json"], environment)
                let delivered = try #require(try JSONSerialization.jsonObject(with: Data(listed.utf8)) as? [[String: Any]])
                let request = try #require(delivered.first?["request"] as? [String: Any])
                let identifier = try #require(request["identifier"] as? String)
                let said = try await Self.unotify(["respond", identifier, "--app", "com.example.todo", "--dismiss"], environment)
                #expect(said.contains("The app hears nothing of it"), "\(said)")
                // Nothing else happens meanwhile: only the dismissal can make the page read the list again.
                try await browser.waitUntil("the dismissed notification to leave the page", within: 5,
                                           "return document.querySelectorAll('#list .notification').length === 0")
            }
        }
    }

    @Test func turningBannersOffInSettingsChangesTheNextNotification() async throws {
        try await Self.withServed(app: "com.example.todo") { environment, url in
            try await Self.unotify(["authorize", "--app", "com.example.todo", "grant"], environment)
            try await Self.withPage(url) { browser in
                try await browser.click("#toggle-settings")
                try await browser.click("#settings-apps button[data-app='com.example.todo']")
                _ = try await browser.element("#app-settings input[name='alertSetting']")
                let banners = "return document.querySelector(\"#app-settings input[name='alertSetting']\").checked"
                #expect(try await browser.execute(banners) as? Bool == true)
                try await browser.screenshot(to: Self.screenshots.appendingPathComponent("web-settings.png"))

                // Banners off: kept by the daemon, as `unotify settings` shows.
                try await browser.click("#app-settings input[name='alertSetting']")
                try await browser.waitUntil("the change to be saved", "return document.getElementById('app-settings').dataset.saved === '1'")
                #expect(try await browser.execute(banners) as? Bool == false)
                #expect(try await Self.settings(of: "com.example.todo", environment)["alertSetting"] as? Int == 1)
                // Back to every app's list.
                try await browser.click("#app-settings .back")
                // The list shows at once and fills once the apps are read: waited for as a person looks.
                try await browser.waitUntil("the list of apps", "return !document.getElementById('settings-apps').hidden && document.getElementById('app-settings').hidden")
                try await browser.waitUntil("the app in the list", "return document.querySelectorAll(\"#settings-apps button[data-app='com.example.todo']\").length > 0")
                #expect(try await browser.count("#settings-apps button[data-app='com.example.todo']") == 1)

                // The next notification goes to the list only, though the app asks for a banner.
                try await browser.click("#toggle-settings")
                let app = try ChildProcess(ChildProcess.built("todo-example"), ["--schedule", "1"],
                                           environment: environment.merging(["UNOTIFY_APP_ID": "com.example.todo"]) { $1 }, name: "todo-example")
                try await app.line(containing: "arrived while running")
                try await browser.waitUntil("the notification in the list", "return document.querySelectorAll('#list .notification').length === 1")
                #expect(try await browser.count(".banners .notification") == 0)
                await app.interrupt()
            }
        }
    }

    @Test func theLockScreenHidesPreviewsAndAsksForThePasscodeBeforeAProtectedAction() async throws {
        try await Self.withServed(app: "com.example.todo") { environment, url in
            try await Self.unotify(["authorize", "--app", "com.example.todo", "grant"], environment)
            try await Self.withPage(url) { browser in
                // The person sets a passcode in Settings; the app shows previews only when unlocked (iOS's default).
                try await browser.click("#toggle-settings")
                try await browser.type("2468", into: "#passcode-settings input[name='new']")
                try await browser.click("#passcode-settings button[type=submit]")
                try await browser.waitUntil("the passcode to be saved", "return document.querySelector('#passcode-settings .saved')?.textContent === 'Passcode saved'")
                try await browser.click("#settings-apps button[data-app='com.example.todo']")
                _ = try await browser.element("#app-settings select[name='showPreviewsSetting']")
                let previews = try await browser.execute("return document.querySelector(\"#app-settings select[name='showPreviewsSetting']\").value") as? String
                #expect(previews == "1")
                try await browser.click("#toggle-settings")

                // Locked: the lock screen, and no app in the foreground to ask.
                try await browser.click("#lock")
                try await browser.waitUntil("the lock screen", "return !document.getElementById('lock-screen').hidden")
                // A second listener on the page's live events, to see all that reaches the page.
                _ = try await browser.execute("""
                    window.heard = [];
                    const socket = new WebSocket(`ws://${location.host}/api/events`);
                    socket.onmessage = (message) => window.heard.push(message.data);
                    return null
                    """)
                let app = try ChildProcess(ChildProcess.built("todo-example"), ["--schedule", "1"],
                                           environment: environment.merging(["UNOTIFY_APP_ID": "com.example.todo"]) { $1 }, name: "todo-example")
                try await app.line(containing: "scheduled \"daily-report\"")
                try await browser.waitUntil("the notification on the lock screen", "return document.querySelectorAll('#lock-list .notification').length === 1")
                #expect(try await browser.count(".banners .notification") == 0)
                // Its preview is hidden: the placeholder, and neither its title nor its body reached the page.
                #expect(try await browser.text(of: "#lock-list .notification .body") == "Notification")
                #expect(try await browser.count("#lock-list .notification .title") == 0)
                let leaked = try await browser.execute("return document.documentElement.outerHTML.includes('Write the report')") as? Bool
                #expect(leaked == false)
                try await browser.screenshot(to: Self.screenshots.appendingPathComponent("web-lock-screen.png"))

                // "Done" needs authentication: the passcode is asked first; a wrong one is refused on the page.
                try await browser.click("#lock-list .notification .more")
                try await browser.click("#lock-list .notification .actions button[data-action='MARK_DONE']")
                #expect(try await browser.text(of: "#unlock-reason") == "Enter your passcode to choose “Done”.")
                let focused = try await browser.execute("return document.activeElement === document.getElementById('passcode')") as? Bool
                #expect(focused == true)
                try await browser.type("1357", into: "#passcode")
                try await browser.click("#unlock button[type=submit]")
                try await browser.waitUntil("the refusal to be shown", "return !document.getElementById('error').hidden")
                #expect(try await browser.text(of: "#error") == "Wrong passcode.")
                #expect(try await browser.execute("return document.getElementById('lock-screen').hidden") as? Bool == false)
                try await browser.screenshot(to: Self.screenshots.appendingPathComponent("web-wrong-passcode.png"))

                // The right one unlocks, and the action that waited for it reaches the app.
                try await browser.type("2468", into: "#passcode")
                try await browser.click("#unlock button[type=submit]")
                try await app.line(containing: "the person marked \"daily-report\" done")
                // Nothing of the hidden preview came over the live events either, the response's included.
                try await browser.waitUntil("the response's event", "return window.heard.some((event) => event.includes('responseDelivered'))")
                let heard = try await browser.execute("return window.heard.join('\\n')") as? String ?? ""
                #expect(heard.contains("presented") && !heard.contains("Write the report"), "\(heard)")
                try await browser.waitUntil("the lock screen to go", "return document.getElementById('lock-screen').hidden")
                #expect(try await browser.execute("return document.getElementById('error').hidden") as? Bool == true)
                await app.interrupt()
            }
        }
    }

    @Test func aThreadStacksUnderItsSummaryAndHiddenPreviewsShowTheCategorysPlaceholder() async throws {
        try await Self.withServed(app: "com.example.todo") { environment, url in
            // An app of messages, through the local API as any client: a category with its summary format
            // and placeholder (titles still shown), and three messages of one thread from two people.
            let messages = try await Self.allowedApp("com.example.messages", categories: [NotificationCategory(
                identifier: "message", actions: [], hiddenPreviewsBodyPlaceholder: "%u new messages",
                categorySummaryFormat: "%u more messages from %@", options: [.hiddenPreviewsShowTitle])], environment).client

            for (number, (sender, text)) in [("Ana", "Lunch at noon?"), ("Ben", "Yes, the usual place"), ("Ana", "See you there")].enumerated() {
                var content = NotificationContent()
                content.title = "Family"
                content.body = text
                content.threadIdentifier = "family"
                content.summaryArgument = sender
                content.categoryIdentifier = "message"
                try await messages.call(.POST, "/v1/requests", body: NotificationRequest(identifier: "m\(number)", content: content, trigger: nil))
            }
            // The page opened afterwards: no banners, the list as it stands.
            try await Self.withPage(url) { browser in
                try await browser.waitUntil("the newest message in the list", "return document.querySelector('#list .notification .body')?.textContent === 'See you there'")
                // One stack: the newest on top, the others summed up in the category's words.
                #expect(try await browser.count("#list .notification") == 1)
                #expect(try await browser.text(of: "#list .stack") == "2 more messages from Ben and Ana")
                try await browser.screenshot(to: Self.screenshots.appendingPathComponent("web-stack.png"))
                try await browser.click("#list .stack")
                try await browser.waitUntil("the stack to open", "return document.querySelectorAll('#list .notification').length === 3")
                #expect(try await browser.text(of: "#list .stack") == "Show Less")

                // Previews never shown: the titles stay (the category asks for them), the bodies become the placeholder.
                try await browser.click("#toggle-settings")
                try await browser.click("#settings-apps button[data-app='com.example.messages']")
                try await browser.click("#app-settings select[name='showPreviewsSetting'] option[value='2']")
                try await browser.waitUntil("the previews setting to be saved", "return document.getElementById('app-settings').dataset.saved === '1'")
                try await browser.click("#toggle-settings")
                try await browser.waitUntil("the placeholders", """
                    const bodies = [...document.querySelectorAll('#list .notification .body')].map((body) => body.textContent);
                    return bodies.length === 3 && bodies.every((body) => body === '3 new messages')
                    """)
                #expect(try await browser.count("#list .notification.preview-hidden .title") == 3)
                let leaked = try await browser.execute("return document.documentElement.outerHTML.includes('the usual place')") as? Bool
                #expect(leaked == false)

                // The app removes one of its delivered notifications: it leaves the page at once.
                try await messages.call(.DELETE, "/v1/delivered?identifier=m1")
                try await browser.waitUntil("the removed message to leave", "return document.querySelectorAll('#list .notification').length === 2")
                #expect(try await browser.text(of: "#list .stack") == "Show Less")
            }
        }
    }

    @Test func provisionalNotificationsArriveQuietlyAndThePersonKeepsOrTurnsThemOff() async throws {
        try await Self.withServed(app: "com.example.todo") { environment, url in
            var apps: [String: LocalAPIClient] = [:]
            for app in ["com.example.news", "com.example.deals"] {
                apps[app] = try await Self.allowedApp(app, decision: "provisional", environment).client
            }

            try await Self.withPage(url) { browser in
                for (app, title) in [("com.example.news", "Morning briefing"), ("com.example.deals", "Half price today")] {
                    var content = NotificationContent()
                    content.title = title
                    content.sound = NotificationSound(kind: .default)
                    try await apps[app]!.call(.POST, "/v1/requests", body: NotificationRequest(identifier: "first", content: content, trigger: nil))
                }
                // Quietly: in the list, with no banner, each asking to be kept or turned off.
                try await browser.waitUntil("both in the list", "return document.querySelectorAll('#list .notification .provisional').length === 2")
                #expect(try await browser.count(".banners .notification") == 0)
                let news = "#list .group[data-app='com.example.news']"
                try await browser.click("\(news) .provisional .keep")
                try await browser.waitUntil("the choice", "return document.querySelector(a0) !== null", ["\(news) .provisional .keep-now"])
                try await browser.screenshot(to: Self.screenshots.appendingPathComponent("web-provisional.png"))

                // Keep › Deliver Immediately: authorized, arriving in Notification Center only.
                try await browser.click("\(news) .provisional .keep-now")
                try await browser.waitUntil("the question to go", "return document.querySelector(a0) === null", ["\(news) .provisional"])
                let kept = try await Self.settings(of: "com.example.news", environment)
                #expect(kept["authorizationStatus"] as? Int == 2)
                #expect(kept["notificationCenterSetting"] as? Int == 2)
                for quiet in ["alertSetting", "soundSetting", "badgeSetting", "lockScreenSetting"] { #expect(kept[quiet] as? Int == 1, "\(quiet)") }

                // Turn Off… asks first; confirmed, the app is denied.
                let deals = "#list .group[data-app='com.example.deals']"
                try await browser.click("\(deals) .provisional .off")
                try await browser.click("\(deals) .provisional .cancel")
                try await browser.click("\(deals) .provisional .off")
                try await browser.click("\(deals) .provisional .turn-off")
                try await browser.waitUntil("the question to go", "return document.querySelector(a0) === null", ["\(deals) .provisional"])
                #expect(try await Self.settings(of: "com.example.deals", environment)["authorizationStatus"] as? Int == 1)

                // Its category has no `.customDismissAction`, so the app hears nothing of a dismissal; the page still drops it.
                try await browser.click("\(news) .notification .close")
                try await browser.waitUntil("the dismissed notification to leave", "return document.querySelector(a0) === null", ["\(news) .notification"])
            }
        }
    }

    @Test func attachmentsShowAsThumbnailsPicturesAndPlayersAndAMissingOrBrokenFileSaysSo() async throws {
        try await Self.withServed(app: "com.example.todo") { environment, url in
            let photos = try await Self.allowedApp("com.example.photos", environment).client
            // Real files: a picture of a beach (sky, sun, sea, sand), a second of sound, a file that starts
            // as an MP4 and holds no movie, and a picture whose stored copy will be lost.
            let folder = try makeTestDirectory()
            let beachPicture = MediaFiles.png(width: 80, height: 40) { x, y -> (UInt8, UInt8, UInt8) in
                let (dx, dy) = (x - 60, y - 10)
                if dx * dx + dy * dy < 36 { return (255, 204, 0) }
                if y < 22 { return (UInt8(90 + y * 3), UInt8(160 + y * 2), 235) }
                if y < 29 { return (20, 110, 170) }
                return (230, 200, 140)
            }
            let files = [
                "beach.png": beachPicture,
                "waves.wav": MediaFiles.wav(seconds: 1), "clip.mp4": MediaFiles.brokenMP4(),
                "lights.gif": MediaFiles.gif(width: 6, height: 4, frames: [(255, 0, 0), (0, 255, 0), (0, 0, 255)]),
                "gone.png": MediaFiles.png(width: 4, height: 4) { _, _ in (0, 0, 0) },
            ]
            for (name, data) in files { try data.write(to: folder.appendingPathComponent(name)) }
            func post(_ identifier: String, _ title: String, _ attachments: [NotificationAttachment]) async throws {
                var content = NotificationContent()
                content.title = title
                content.attachments = attachments
                content.threadIdentifier = identifier  // each on its own, not stacked
                try await photos.call(.POST, "/v1/requests", body: NotificationRequest(identifier: identifier, content: content, trigger: nil))
            }
            let file = { (name: String) in folder.appendingPathComponent(name) }
            try await post("gone", "A deleted photo", [NotificationAttachment(identifier: "g", url: file("gone.png"), type: "public.png", thumbnailHidden: true)])
            try await post("movie", "A clip", [NotificationAttachment(identifier: "m", url: file("clip.mp4"), type: "public.mpeg-4", thumbnailTime: 2.5)])
            // An animated image's thumbnailTime is a frame number: red, green, then blue; frame 2 is the thumbnail.
            try await post("lights", "Traffic lights", [NotificationAttachment(identifier: "l", url: file("lights.gif"), type: "com.compuserve.gif", thumbnailTime: 2)])
            // An identifier with a space and a slash, as the page's links and actions must carry it.
            try await post("beach day/1", "At the beach", [
                NotificationAttachment(identifier: "p", url: file("beach.png"), type: "public.png",
                                       thumbnailClippingRect: ThumbnailClippingRect(x: 0.5, y: 0, width: 0.5, height: 1)),
                NotificationAttachment(identifier: "s", url: file("waves.wav"), type: "com.microsoft.waveform-audio"),
            ])
            // The daemon's copy of one file is lost (a disk cleaned by hand).
            let delivered = try await photos.call(.GET, "/v1/delivered", as: [DeliveredNotification].self)
            try FileManager.default.removeItem(at: try #require(delivered.first { $0.request.identifier == "gone" }?.request.content.attachments.first?.url))

            try await Self.withPage(url) { browser in
                let beach = "#list .notification[data-identifier='beach day/1']"
                let movie = "#list .notification[data-identifier='movie']"
                let gone = "#list .notification[data-identifier='gone']"
                // The thumbnail: the picture, cut to the right half by its clipping rect.
                try await browser.waitUntil("the thumbnail to load", "return document.querySelector(a0)?.naturalWidth === 80", ["\(beach) .thumbnail img"])
                let clip = try await browser.execute("return getComputedStyle(document.querySelector(arguments[0])).objectViewBox", ["\(beach) .thumbnail img"]) as? String
                #expect(clip == "inset(0% 0% 0% 50%)")
                // The movie's thumbnail is its frame at 2.5 s; this file has none, which the thumbnail says.
                let movieSource = try await browser.execute("return document.querySelector(arguments[0]).getAttribute('src')", ["\(movie) .thumbnail video"]) as? String
                #expect(movieSource?.hasSuffix("#t=2.5") == true, "\(movieSource ?? "no source")")
                try await browser.waitUntil("the broken movie's mark", "return document.querySelector(a0) !== null", ["\(movie) .thumbnail.invalid"])
                let lights = "#list .notification[data-identifier='lights'] .thumbnail canvas"
                try await browser.waitUntil("the animation's frame", "return document.querySelector(a0)?.dataset.frame === '2'", [lights])
                #expect(try await browser.execute("""
                    const canvas = document.querySelector(arguments[0]);
                    return Array.from(canvas.getContext('2d').getImageData(canvas.width / 2, canvas.height / 2, 1, 1).data.slice(0, 3)).join(',')
                    """, [lights]) as? String == "0,0,255")
                // Hidden by the app: no thumbnail.
                #expect(try await browser.count("\(gone) .thumbnail") == 0)

                // Expanded: the picture at full size and the sound with its player, which reads the file's length.
                try await browser.click("\(beach) .more")
                try await browser.waitUntil("the full picture", "return document.querySelector(a0)?.naturalWidth === 80", ["\(beach) .attachments figure[data-kind='image'] img"])
                try await browser.waitUntil("the sound's length", "const audio = document.querySelector(a0); return audio !== null && Math.abs(audio.duration - 1) < 0.01",
                                            ["\(beach) .attachments audio[controls]"])
                // What cannot be shown says so, in words.
                try await browser.click("\(movie) .more")
                try await browser.waitUntil("the movie's problem", "return document.querySelector(a0) !== null", ["\(movie) .attachments figure.invalid"])
                #expect(try await browser.text(of: "\(movie) .attachment-problem").contains("clip.mp4"))
                try await browser.click("\(gone) .more")
                #expect(try await browser.text(of: "\(gone) .attachments figure.missing .attachment-problem")
                    == "gone.png is missing: the file is no longer in the notification system's store.")
                _ = try await browser.execute("window.scrollTo(0, 0)")
                try await browser.screenshot(to: Self.screenshots.appendingPathComponent("web-attachments.png"))
                try await browser.prefersDarkColorScheme(true)
                #expect(try await browser.execute("return getComputedStyle(document.body).backgroundColor") as? String == "rgb(0, 0, 0)")
                try await browser.screenshot(to: Self.screenshots.appendingPathComponent("web-dark.png"))
                try await browser.prefersDarkColorScheme(false)

                // Drawn again after an event, the list keeps the same player (nothing restarts).
                _ = try await browser.execute("window.player = document.querySelector(arguments[0])", ["\(beach) .attachments audio"])
                let renders = try await browser.execute("return Number(document.getElementById('list').dataset.renders)") as? Int ?? 0
                try await post("later", "Later", [])
                try await browser.waitUntil("the list to be drawn again", "return Number(document.getElementById('list').dataset.renders) > a0", [renders])
                #expect(try await browser.execute("return document.querySelector(arguments[0]) === window.player", ["\(beach) .attachments audio"]) as? Bool == true)
                // The animated image's frame is drawn again at once, from what was decoded, not fetched again.
                let redrawn = try await browser.execute("""
                    const fetched = performance.getEntriesByType('resource').filter((entry) => entry.initiatorType === 'fetch' && entry.name.includes('/notifications/lights/attachments/')).length;
                    return [document.querySelector(arguments[0])?.dataset.frame, fetched].join(' ')
                    """, [lights]) as? String
                #expect(redrawn == "2 1", "\(redrawn ?? "nothing")")

                // One banner at a time, as on iOS: the next takes its place, unless the person is using it.
                let bannerTitles = "return [...document.querySelectorAll('.banners .notification .title')].map((title) => title.textContent).join(' | ') === a0"
                try await browser.waitUntil("the banner", bannerTitles, ["Later"])
                try await post("later again", "Later again", [])
                try await browser.waitUntil("the next banner in its place", bannerTitles, ["Later again"])
                _ = try await browser.execute("document.querySelector('.banners .notification .close').focus()")
                try await post("last", "Last", [])
                try await browser.waitUntil("the next banner above the one in use", bannerTitles, ["Last | Later again"])


                // The file itself, whole and as a player's byte range; nothing for what is not on screen.
                let fetched = try await browser.execute("""
                    return (async () => {
                      const url = document.querySelector(arguments[0]).getAttribute('src');
                      const whole = await fetch(url);
                      const part = await fetch(url, { headers: { Range: 'bytes=1-3' } });
                      const bytes = new TextDecoder().decode(await part.arrayBuffer());
                      const other = await fetch(url.replace(/\\/0$/, '/7'));
                      return [whole.status, whole.headers.get('content-type'), part.status, part.headers.get('content-range'), bytes, other.status, url];
                    })()
                    """, ["\(beach) .thumbnail img"]) as? [Any]
                let size = try #require(files["beach.png"]).count
                #expect(fetched?[0] as? Int == 200)
                #expect(fetched?[1] as? String == "image/png")
                #expect(fetched?[2] as? Int == 206)
                #expect(fetched?[3] as? String == "bytes 1-3/\(size)")
                #expect(fetched?[4] as? String == "PNG")
                #expect(fetched?[5] as? Int == 404)

                // Previews turned off: the page has no attachment left, and the file is refused.
                try await Self.unotify(["settings", "--app", "com.example.photos", "--previews", "never"], environment)
                try await browser.waitUntil("the thumbnails to go", "return document.querySelectorAll('#list .thumbnail, #list .attachments').length === 0")
                let refused = try await browser.execute("return (async () => (await fetch(arguments[0])).status)()", [fetched?[6] as? String ?? ""]) as? Int
                #expect(refused == 403)

                // Tapped, the notification with the slash in its identifier opens, and leaves the list.
                try await browser.click("\(beach) .open")
                try await browser.waitUntil("the opened notification to leave", "return document.querySelector(a0) === null", [beach])
            }
        }
    }

    @Test func aFocusHoldsBackBannersAndSoundsButLetsWhatItAllowsThrough() async throws {
        try await Self.withServed(app: "com.example.todo") { environment, url in
            let (admin, socket) = try Self.administrator(environment)
            let issued = try await admin.call(.POST, "/v1/admin/apps", body: LocalAPI.RegisterApp(bundleIdentifier: "com.example.alarms"), as: LocalAPI.AppKey.self)
            let alarms = LocalAPIClient(socketPath: socket, key: issued.key)
            let focusNow = { @Sendable () async throws -> String in try await Self.unotify(["focus"], environment) }
            try await Self.withPage(url) { browser in
                // The app asks for alerts, sounds and time-sensitive notifications; the person allows them.
                let asking = Task { try await alarms.call(.POST, "/v1/authorization", body: LocalAPI.AuthorizationRequest(options: 0b1_0000_0111), as: LocalAPI.AuthorizationResult.self) }
                try await browser.click(".prompt[data-app='com.example.alarms'] .allow")
                #expect(try await asking.value.granted)
                func post(_ identifier: String, _ level: InterruptionLevel) async throws {
                    var content = NotificationContent()
                    content.title = identifier
                    content.sound = NotificationSound(kind: .default)
                    content.interruptionLevel = level
                    content.threadIdentifier = identifier
                    try await alarms.call(.POST, "/v1/requests", body: NotificationRequest(identifier: identifier, content: content, trigger: nil))
                    try await browser.waitUntil("\(identifier) in the list", "return [...document.querySelectorAll('#list .notification .title')].some((title) => title.textContent === a0)", [identifier])
                }
                let banners = "return [...document.querySelectorAll('.banners .notification .title')].map((title) => title.textContent)"

                // Do Not Disturb from the header: said under it, and kept by the daemon.
                try await browser.click("#focus")
                try await browser.waitUntil("the Focus to be on", "return document.getElementById('focus').getAttribute('aria-pressed') === 'true'")
                #expect(try await browser.text(of: "#focus-status") == "Do Not Disturb is on: notifications arrive silenced, but for critical and time-sensitive ones.")
                #expect(try await focusNow() == "Do Not Disturb is on; critical and time-sensitive notifications break through.")
                // An ordinary notification goes to the list without a banner; a time-sensitive one breaks through.
                try await post("Laundry is done", .active)
                #expect(try await browser.execute(banners) as? [String] == [])
                try await post("Leave now for your flight", .timeSensitive)
                try await browser.waitUntil("its banner", "return document.querySelector('.banners .notification .title')?.textContent === a0", ["Leave now for your flight"])
                try await browser.waitUntil("the banner to settle", "return document.getAnimations().length === 0")
                try await browser.screenshot(to: Self.screenshots.appendingPathComponent("web-focus.png"))

                // Another Focus from the terminal, stricter: the page follows at once, and time-sensitive ones wait too.
                try await Self.unotify(["focus", "on", "--name", "Sleep", "--no-time-sensitive"], environment)
                try await browser.waitUntil("the page to show the new Focus", "return document.getElementById('focus').textContent === '☾ Sleep'")
                try await post("Gate changed", .timeSensitive)
                #expect((try await browser.execute(banners) as? [String])?.contains("Gate changed") == false)
                try await post("Smoke detected", .critical)
                try await browser.waitUntil("the critical banner", "return document.querySelector('.banners .notification .title')?.textContent === a0", ["Smoke detected"])

                // The app allowed in the Focus's settings: everything of it breaks through. (The banner is put
                // away first, with its grabber: it covers the header, and the notification stays listed.)
                try await browser.click(".banners .notification .hide")
                #expect(try await browser.execute(banners) as? [String] == [])
                #expect(try await browser.count("#list .notification") == 4)
                try await browser.click("#toggle-settings")
                try await browser.click("#focus-settings input[name='allowedApp'][value='com.example.alarms']")
                try await browser.waitUntil("the app to be allowed", "return document.getElementById('focus-status').textContent.includes('everything from com.example.alarms')")
                #expect(try await focusNow() == "Sleep is on; critical notifications break through, and every notification of com.example.alarms.")
                try await browser.click("#toggle-settings")
                try await post("Alarm in 5 minutes", .active)
                try await browser.waitUntil("its banner", "return document.querySelector('.banners .notification .title')?.textContent === a0", ["Alarm in 5 minutes"])

                // Off from the header: the Focus is gone.
                try await browser.click(".banners .notification .hide")
                try await browser.click("#focus")
                try await browser.waitUntil("the Focus to be off", "return document.getElementById('focus-status').hidden")
                #expect(try await focusNow() == "No Focus is on.")
            }
        }
    }

    @Test func aScheduledSummaryHoldsItsAppsNotificationsAndBringsThemTogetherAtItsTime() async throws {
        try await withWebCenter { daemon, url in
            let environment = ServedSystem.environment(daemon.directory)
            let news = try await daemon.authorizedApp("com.example.news")
            let chat = try await daemon.authorizedApp("com.example.chat")
            func post(_ app: LocalAPIClient, _ title: String, relevance: Double = 0) async throws {
                var content = NotificationContent()
                content.title = title
                content.sound = NotificationSound(kind: .default)
                content.threadIdentifier = title
                content.relevanceScore = relevance
                try await app.call(.POST, "/v1/requests", body: NotificationRequest(identifier: title, content: content, trigger: nil))
            }
            let titles = { @Sendable (selector: String) in "return [...document.querySelectorAll('\(selector) .notification .title')].map((title) => title.textContent)" }

            try await Self.withPage(url) { browser in
                // Settings › Scheduled Summary: on (8 AM and 6 PM), a third time added and taken away, news put in it.
                try await browser.click("#toggle-settings")
                try await browser.click("#summary-settings input[name='summaryOn']")
                try await browser.waitUntil("its times", "return document.querySelectorAll('#summary-settings input[name=summaryTime]').length === 2")
                try await browser.click("#summary-settings .add-time")
                try await browser.waitUntil("a third time", "return document.querySelectorAll('#summary-settings input[name=summaryTime]').length === 3")
                #expect(try await Self.unotify(["summary"], environment) == "The Scheduled Summary comes at 08:00, 12:00 and 18:00.")
                try await browser.click("#summary-settings .remove-time[aria-label='Remove the 2nd Summary']")
                try await browser.waitUntil("two times again", "return document.querySelectorAll('#summary-settings input[name=summaryTime]').length === 2")
                #expect(await daemon.engine.scheduledSummary?.times.map(\.description) == ["08:00", "18:00"])
                try await browser.click("#summary-settings input[name='summaryApp'][value='com.example.news']")
                try await browser.waitUntil("news to be in the summary", "return document.querySelector(a0).checked", ["#summary-settings input[name='summaryApp'][value='com.example.news']"])
                // The box is checked before the page's request reaches the daemon: the daemon is waited for.
                try await eventually("the daemon to put news in the summary") {
                    try await daemon.engine.settings("com.example.news").scheduledDeliverySetting == .enabled
                }
                #expect(try await daemon.engine.settings("com.example.chat").scheduledDeliverySetting == .disabled)
                try await browser.screenshot(to: Self.screenshots.appendingPathComponent("web-summary-settings.png"))
                try await browser.click("#toggle-settings")

                // At midnight: news delivers quietly and unseen; chat, not in the summary, as ever.
                try await post(news, "Markets open higher", relevance: 0.2)
                try await post(news, "Election results are in", relevance: 0.9)
                try await post(news, "Rain expected tonight", relevance: 0.5)
                try await post(chat, "Lunch at noon?")
                try await browser.waitUntil("chat's banner", "return document.querySelector('.banners .notification .title')?.textContent === a0", ["Lunch at noon?"])
                // The list is drawn apart from the banner: waited for, and it must hold chat's alone.
                try await browser.waitUntil("chat's notification, alone, in the list",
                                            "return JSON.stringify([...document.querySelectorAll('#list .notification .title')].map((t) => t.textContent)) === a0",
                                            [#"["Lunch at noon?"]"#])
                #expect(try await browser.execute(titles("#list")) as? [String] == ["Lunch at noon?"])
                #expect(try await news.delivered().count == 3, "the app sees them delivered")

                // Show Next Summary, from the terminal: what waits is seen early, most relevant first.
                try await Self.unotify(["summary", "on", "--at", "08:00", "--at", "18:00", "--show-next"], environment)
                try await browser.waitUntil("the next summary", "return document.querySelectorAll('#list .digest.upcoming .notification').length === 2")
                #expect(try await browser.execute(titles("#list .digest.upcoming")) as? [String] == ["Election results are in", "Rain expected tonight"])
                #expect(try await browser.text(of: "#list .digest.upcoming .stack") == "1 more in this summary")
                try await Self.unotify(["summary", "on", "--at", "08:00", "--at", "18:00"], environment)
                try await browser.waitUntil("the next summary to be hidden", "return document.querySelector('#list .digest') === null")

                // Eight o'clock: the summary comes, announced by a banner, and stays at the top of the list.
                try await browser.click(".banners .notification .hide")
                daemon.clock.advance(by: 8 * 3600)
                try await browser.waitUntil("the summary's banner", "return document.querySelector('.banners .summary-banner') !== null")
                #expect(try await browser.text(of: ".banners .summary-banner .subtitle") == "3 notifications from com.example.news")
                #expect(try await browser.execute(titles("#list .digest")) as? [String] == ["Election results are in", "Rain expected tonight"])
                try await browser.waitUntil("the banner to settle", "return document.getAnimations().length === 0")
                try await browser.screenshot(to: Self.screenshots.appendingPathComponent("web-summary.png"))
                try await browser.click(".banners .summary-banner .open")
                try await browser.waitUntil("the summary to open", "return document.querySelectorAll('#list .digest .group .notification').length === 3")
                #expect(try await browser.text(of: "#list .digest .stack[aria-expanded='true']") == "Show Less")

                // A provisional app kept "in Scheduled Summary" waits for it too.
                let quietKey = try await daemon.admin.call(.POST, "/v1/admin/apps", body: LocalAPI.RegisterApp(bundleIdentifier: "com.example.quiet"), as: LocalAPI.AppKey.self)
                _ = try await daemon.admin.call(.POST, "/v1/admin/apps/com.example.quiet/authorization", body: LocalAPI.AuthorizationDecision(decision: "provisional"),
                                                as: NotificationSettings.self)
                let quiet = LocalAPIClient(socketPath: daemon.socketPath, key: quietKey.key)
                try await post(quiet, "Try our new recipes")
                let provisional = "#list .group[data-app='com.example.quiet'] .provisional"
                try await browser.click("\(provisional) .keep")
                try await browser.click("\(provisional) .keep-summary")
                try await browser.waitUntil("the question to go", "return document.querySelector(a0) === null", [provisional])
                let kept = try await daemon.engine.settings("com.example.quiet")
                #expect(kept.authorizationStatus == .authorized && kept.scheduledDeliverySetting == .enabled)
                try await post(quiet, "Dinner ideas")
                try await post(chat, "See you there")
                try await browser.waitUntil("chat's next", "return [...document.querySelectorAll('#list .notification .title')].some((title) => title.textContent === a0)", ["See you there"])
                #expect((try await browser.execute(titles("#list")) as? [String])?.contains("Dinner ideas") == false)

                // Clear: the summary's notifications are dismissed, and it leaves the list.
                try await Self.swipeBannersAway(browser)
                try await browser.click("#list .digest .group-header .clear")
                try await browser.waitUntil("the summary to leave", "return document.querySelector('#list .digest') === null")
                #expect(try await news.delivered().isEmpty)
            }
        }
    }

    /// Registers `bundle`, allowed to notify as `decision` says (`grant` or `provisional`), with
    /// `categories` when given; returns its client and key.
    static func allowedApp(_ bundle: String, decision: String = "grant", categories: [NotificationCategory]? = nil,
                           _ environment: [String: String]) async throws -> (client: LocalAPIClient, key: String, socket: String) {
        let (admin, socket) = try administrator(environment)
        let issued = try await admin.call(.POST, "/v1/admin/apps", body: LocalAPI.RegisterApp(bundleIdentifier: bundle), as: LocalAPI.AppKey.self)
        _ = try await admin.call(.POST, "/v1/admin/apps/\(bundle)/authorization", body: LocalAPI.AuthorizationDecision(decision: decision),
                                 as: NotificationSettings.self)
        let client = LocalAPIClient(socketPath: socket, key: issued.key)
        if let categories { try await client.call(.PUT, "/v1/categories", body: categories) }
        return (client, issued.key, socket)
    }

    /// The first response waiting for the app when it connects, as "action notification".
    static func firstResponseWaiting(socket: String, key: String) async throws -> String? {
        try await LocalAPIWebSocket.withConnection(socketPath: socket, path: "/v1/events", key: key) { stream in
            try await stream.send(#"{"type":"state","state":"background"}"#)
            for try await text in stream.messages {
                guard case .call(.response(_, let response)) = try JSONDecoder().decode(LocalAPI.AppEvent.self, from: Data(text.utf8)) else { continue }
                return "\(response.actionIdentifier) \(response.notification.request.identifier)"
            }
            return nil
        }
    }

    /// The tutorials' content extension (`push-example-content`), registered with its Info.plist as a
    /// person does: expanding the notification shows its interface (the notification's text, the first
    /// item with its picture, the extension's title over the app's name); "Switch" changes the picture
    /// without closing it and without the app hearing of it; "Dismiss" closes it and takes the
    /// notification away, the app hearing nothing; "Open" goes on to the app, which receives exactly that.
    /// Times are told in the device's time zone (the daemon's), which need not be the browser's: when
    /// the device moves (`unotify device --time-zone`), the page tells them in the new zone at once.
    @Test func timesAreToldInTheDevicesTimeZone() async throws {
        try await withWebCenter { daemon, url in
            let environment = ServedSystem.environment(daemon.directory)
            let chat = try await daemon.authorizedApp("com.example.chat")
            var content = NotificationContent()
            content.title = "Lunch at noon?"
            try await chat.call(.POST, "/v1/requests", body: NotificationRequest(identifier: "lunch", content: content, trigger: nil))
            try await Self.withPage(url) { browser in
                let time = "#list .notification[data-identifier='lunch'] .time"
                // Beside the notification, how long ago; its clock time in the device's zone as its title.
                let toldIn = """
                    const time = document.querySelector(a0);
                    return time !== null && time.title === new Date(time.dateTime).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", timeZone: a1 })
                    """
                try await browser.waitUntil("the time in the device's zone", toldIn, [time, await daemon.engine.timeZone.identifier])
                // Kathmandu's quarter-hour offset is no browser's by accident.
                try await Self.unotify(["device", "--time-zone", "Asia/Kathmandu"], environment)
                try await browser.waitUntil("the time in Kathmandu", toldIn, [time, "Asia/Kathmandu"])
                #expect(try await browser.execute("""
                    const time = document.querySelector(arguments[0]);
                    return time.title !== new Date(time.dateTime).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })
                    """, [time]) as? Bool == true, "the browser's own zone would tell another time")
                #expect(try await browser.text(of: time) == "now")
            }
        }
    }

    @Test func aContentExtensionDrawsTheExpandedNotificationAndAnActionUpdatesIt() async throws {
        try await Self.withServed(app: "com.example.todo") { environment, url in
            let (app, key, socket) = try await Self.allowedApp("com.example.push", categories: [NotificationCategory(identifier: "customUI", actions: [
                NotificationAction(identifier: "switch", title: "Switch"),
                NotificationAction(identifier: "open", title: "Open", options: [.foreground]),
                NotificationAction(identifier: "dismiss", title: "Dismiss", options: [.destructive]),
            ])], environment)
            let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            let said = try await Self.unotify(["apps", "content-extension", "com.example.push", ChildProcess.built("push-example-content").path,
                                               "--info-plist", repository.appendingPathComponent("Examples/PushExampleContent/Info.plist").path], environment)
            #expect(said.contains("\"customUI\""), "\(said)")

            let folder = try makeTestDirectory()
            try MediaFiles.png(width: 80, height: 40) { _, y in y < 25 ? (90, 170, 235) : (230, 200, 140) }.write(to: folder.appendingPathComponent("beach.png"))
            try MediaFiles.png(width: 60, height: 40) { _, _ in (10, 20, 60) }.write(to: folder.appendingPathComponent("night.png"))
            func post(_ identifier: String, _ title: String) async throws {
                var content = NotificationContent()
                content.title = title
                content.subtitle = "Two places"
                content.body = "Switch between them"
                content.categoryIdentifier = "customUI"
                content.threadIdentifier = identifier
                let items: [[String: String]] = [["title": "Beach", "text": "Sunny all day"], ["title": "Night", "text": "Clear skies"]]
                content.userInfo = ["items": try #require(PropertyListValue(any: items))]
                content.attachments = [
                    NotificationAttachment(identifier: "beach", url: folder.appendingPathComponent("beach.png"), type: "public.png"),
                    NotificationAttachment(identifier: "night", url: folder.appendingPathComponent("night.png"), type: "public.png"),
                ]
                try await app.call(.POST, "/v1/requests", body: NotificationRequest(identifier: identifier, content: content, trigger: nil))
            }
            try await post("holiday", "Holiday")
            try await post("trip", "Trip")

            try await Self.withPage(url) { browser in
                let holiday = "#list .notification[data-identifier='holiday']"
                try await browser.click("\(holiday) .more")
                try await browser.waitUntil("the extension's interface", "return document.querySelector(a0) !== null", ["\(holiday) .extension iframe"])
                // Sandboxed: no origin of its own (so neither the page nor its cookie); its document's policy runs no scripts.
                #expect(try await browser.execute("return document.querySelector(arguments[0]).getAttribute('sandbox')", ["\(holiday) .extension iframe"]) as? String == "allow-scripts")
                let policy = try await browser.execute("""
                    const request = new XMLHttpRequest();
                    request.open('GET', document.querySelector(arguments[0]).src, false);
                    request.send();
                    return request.getResponseHeader('content-security-policy');
                    """, ["\(holiday) .extension iframe"]) as? String ?? ""
                #expect(policy.hasPrefix("sandbox allow-scripts; default-src 'none'; script-src 'none'; connect-src 'none';"), "\(policy)")
                // UNNotificationExtensionOverridesDefaultTitle: the controller's title, set in didReceive.
                try await browser.waitUntil("the extension's title", "return document.querySelector(a0)?.textContent === a1",
                                            ["\(holiday) .app-name", "A custom notification interface!"])
                // Its height is its Info.plist's ratio of its width.
                let ratio = try await browser.execute("const r = document.querySelector(arguments[0]).getBoundingClientRect(); return r.height / r.width",
                                                      ["\(holiday) .extension iframe"]) as? Double ?? 0
                #expect(abs(ratio - 0.6) < 0.02, "\(ratio)")
                func interfaceShows(_ label: String, pictureWidth: Int) async throws {
                    try await browser.inFrame("\(holiday) .extension iframe") {
                        try await browser.waitUntil("the interface to show \(label)", """
                            return document.getElementById('title')?.textContent === 'Holiday' && document.getElementById('label')?.textContent === a0
                                && document.getElementById('image')?.naturalWidth === a1
                            """, [label, pictureWidth])
                    }
                }
                try await interfaceShows("Beach", pictureWidth: 80)
                try await browser.screenshot(to: Self.screenshots.appendingPathComponent("content-extension.png"))

                // "Switch": the extension updates its interface and keeps it; the notification stays.
                try await browser.click("\(holiday) .actions button[data-action='switch']")
                try await interfaceShows("Night", pictureWidth: 60)
                #expect(try await browser.count(holiday) == 1)
                try await browser.click("\(holiday) .actions button[data-action='switch']")
                try await interfaceShows("Beach", pictureWidth: 80)
                // "Dismiss": handled by the extension; the notification goes, and the app hears nothing.
                try await browser.click("\(holiday) .actions button[data-action='dismiss']")
                try await browser.waitUntil("the notification to go", "return document.querySelector(a0) === null", [holiday])

                // "Open": the extension forwards it; the app receives it as without an extension.
                let trip = "#list .notification[data-identifier='trip']"
                try await browser.click("\(trip) .more")
                try await browser.waitUntil("the second interface", "return document.querySelector(a0) !== null", ["\(trip) .extension iframe"])
                try await browser.click("\(trip) .actions button[data-action='open']")
                try await browser.waitUntil("the notification to go", "return document.querySelector(a0) === null", [trip])
            }
            // The app, connecting now, finds the response waiting: "open" on the trip.
            #expect(try await Self.firstResponseWaiting(socket: socket, key: key) == "open trip")
            // The notifications the extension dismissed and forwarded are gone from the app's list.
            #expect(try await app.call(.GET, "/v1/delivered", as: [DeliveredNotification].self).isEmpty)
        }
    }

    /// The extension context as a person meets it, through `ContentExtensionFixture` (a voice message)
    /// registered with an Info.plist that hides the notification's own text and lets the person use
    /// the interface: the frame takes the extension's `preferredContentSize`; the media button is drawn
    /// where the extension asked, and pressing it plays the message's audio; drawing the page again
    /// for another notification keeps the frame as it is (no reload); the extension replaces the
    /// actions, closes its interface (the notification stays), and opens the app with the default action.
    @Test func aContentExtensionsMediaButtonAndContextWorkInThePage() async throws {
        try await Self.withServed(app: "com.example.todo") { environment, url in
            let (app, key, socket) = try await Self.allowedApp("com.example.voice", categories: [NotificationCategory(identifier: "voice", actions: [
                NotificationAction(identifier: "like", title: "Like"),
                NotificationAction(identifier: "listen", title: "Listen", options: [.foreground]),
                NotificationAction(identifier: "later", title: "Later"),
            ])], environment)
            let folder = try makeTestDirectory()
            let plist = folder.appendingPathComponent("Info.plist")
            try """
                <?xml version="1.0" encoding="UTF-8"?>
                <plist version="1.0"><dict><key>NSExtension</key><dict><key>NSExtensionAttributes</key><dict>
                <key>UNNotificationExtensionCategory</key><string>voice</string>
                <key>UNNotificationExtensionInitialContentSizeRatio</key><real>0.5</real>
                <key>UNNotificationExtensionDefaultContentHidden</key><true/>
                <key>UNNotificationExtensionUserInteractionEnabled</key><true/>
                </dict></dict></dict></plist>
                """.write(to: plist, atomically: true, encoding: .utf8)
            try await Self.unotify(["apps", "content-extension", "com.example.voice", ChildProcess.built("ContentExtensionFixture").path,
                                    "--info-plist", plist.path], environment)
            try MediaFiles.wav(seconds: 20).write(to: folder.appendingPathComponent("message.wav"))
            func post(_ identifier: String, _ title: String) async throws {
                var content = NotificationContent()
                content.title = title
                content.body = "A voice message"
                content.categoryIdentifier = "voice"
                content.threadIdentifier = identifier
                content.attachments = [NotificationAttachment(identifier: "message", url: folder.appendingPathComponent("message.wav"),
                                                              type: "com.microsoft.waveform-audio")]
                try await app.call(.POST, "/v1/requests", body: NotificationRequest(identifier: identifier, content: content, trigger: nil))
            }
            try await post("anna", "Anna")
            try await post("ben", "Ben")

            try await Self.withPage(url) { browser in
                let anna = "#list .notification[data-identifier='anna']"
                let frame = "\(anna) .extension iframe"
                try await browser.click("\(anna) .more")
                try await browser.waitUntil("the extension's interface", "return document.querySelector(a0) !== null", [frame])
                func interface(_ what: String, _ condition: String) async throws {
                    try await browser.inFrame(frame) {
                        try await browser.waitUntil(what, "const voice = document.getElementById('voice'); return voice !== null && (\(condition))")
                    }
                }
                // The context gave the category's actions; nothing plays yet.
                try await interface("the message drawn", "voice.dataset.actions === 'like,listen,later' && voice.dataset.playing === 'false'")
                // UNNotificationExtensionDefaultContentHidden: the notification's own text is not shown.
                #expect(try await browser.execute("return getComputedStyle(document.querySelector(arguments[0])).display", ["\(anna) .content-row"]) as? String == "none")
                // UNNotificationExtensionUserInteractionEnabled: the interface is the person's to use, not a picture that opens the app.
                #expect(try await browser.count("\(anna) .interface .tap") == 0)
                // preferredContentSize (320 × 120) replaces the Info.plist's ratio.
                let ratio = try await browser.execute("const r = document.querySelector(arguments[0]).getBoundingClientRect(); return r.height / r.width", [frame]) as? Double ?? 0
                #expect(abs(ratio - 120.0 / 320) < 0.02, "\(ratio)")
                // The media button: an overlay at the extension's frame, in its tint.
                let button = "\(anna) .interface .media-button"
                let drawn = try await browser.execute("""
                    const b = document.querySelector(arguments[0]);
                    return [b.getAttribute('aria-label'), b.getAttribute('aria-pressed'), String(b.classList.contains('overlay')), b.style.left, b.style.top, b.style.width, getComputedStyle(b).color]
                    """, [button]) as? [AnyHashable]
                #expect(drawn == ["Play", "false", "true", "12px", "36px", "48px", "rgb(255, 59, 48)"], "\(drawn ?? [])")

                // Anything else on the page changes: the frame is kept as it is, not loaded again.
                _ = try await browser.execute("""
                    const f = document.querySelector(arguments[0]); f.kept = true; window.frameLoads = 0;
                    f.addEventListener('load', () => { window.frameLoads += 1; });
                    """, [frame])
                let renders = try await browser.execute("return Number(document.getElementById('list').dataset.renders)") as? Int ?? 0
                try await post("carl", "Carl")
                try await browser.waitUntil("Carl's notification", "return document.querySelector(a0) !== null && Number(document.getElementById('list').dataset.renders) > a1",
                                            ["#list .notification[data-identifier='carl']", renders])
                #expect(try await browser.execute("return document.querySelector(arguments[0]).kept === true && window.frameLoads === 0", [frame]) as? Bool == true)

                // Play: mediaPlay(), and the message's audio plays in the frame; Pause: mediaPause().
                try await browser.click(button)
                try await browser.waitUntil("the button to show it plays", "return document.querySelector(a0)?.getAttribute('aria-label') === 'Pause'", [button])
                #expect(try await browser.execute("return document.querySelector(arguments[0]).getAttribute('aria-pressed')", [button]) as? String == "true")
                try await interface("the audio to play", "voice.dataset.playing === 'true' && document.getElementById('audio')?.currentTime > 0")
                // Its script and event handler did not run (the frame allows scripts only so that its media may play).
                #expect(try await browser.inFrame(frame) { try await browser.execute("return document.body.dataset.ran ?? 'nothing'") } as? String == "nothing")
                try await browser.screenshot(to: Self.screenshots.appendingPathComponent("content-extension-media.png"))
                try await browser.click(button)
                try await browser.waitUntil("the button to show it paused", "return document.querySelector(a0)?.getAttribute('aria-label') === 'Play'", [button])
                try await interface("the audio to stop", "voice.dataset.playing === 'false' && document.getElementById('audio') === null")

                // The extension replaces the notification's actions, and puts them back.
                let actions = "return [...document.querySelectorAll(arguments[0])].map((b) => b.dataset.action)"
                try await browser.click("\(anna) .actions button[data-action='like']")
                try await browser.waitUntil("Unlike", "return document.querySelector(a0) !== null", ["\(anna) .actions button[data-action='unlike']"])
                #expect(try await browser.execute(actions, ["\(anna) .actions button"]) as? [String] == ["unlike"])
                try await browser.click("\(anna) .actions button[data-action='unlike']")
                try await browser.waitUntil("the category's actions", "return document.querySelector(a0) !== null", ["\(anna) .actions button[data-action='like']"])
                #expect(try await browser.execute(actions, ["\(anna) .actions button"]) as? [String] == ["like", "listen", "later"])

                // dismissNotificationContentExtension(): the interface closes; the notification stays.
                try await browser.click("\(anna) .actions button[data-action='later']")
                try await browser.waitUntil("the interface to close", "return document.querySelector(a0) === null", [frame])
                #expect(try await browser.count(anna) == 1)
                #expect(try await browser.execute("return document.querySelector(arguments[0]).getAttribute('aria-expanded')", ["\(anna) .more"]) as? String == "false")

                // performNotificationDefaultAction(): the app opens with the default action, as a tap does.
                let ben = "#list .notification[data-identifier='ben']"
                try await browser.click("\(ben) .more")
                try await browser.waitUntil("Ben's interface", "return document.querySelector(a0) !== null", ["\(ben) .extension iframe"])
                try await browser.click("\(ben) .actions button[data-action='listen']")
                try await browser.waitUntil("Ben's notification to go", "return document.querySelector(a0) === null", [ben])
            }
            // The app, connecting now, finds the default action on Ben's message waiting.
            #expect(try await Self.firstResponseWaiting(socket: socket, key: key) == "\(SystemActionIdentifier.default) ben")
            #expect(try await app.call(.GET, "/v1/delivered", as: [DeliveredNotification].self).map(\.request.identifier).sorted() == ["anna", "carl"])
        }
    }

    @Test func theComposerSendsAPushOrALocalNotificationAndShowsWhatIsWrongWithIt() async throws {
        try await Self.withServed(app: "com.example.todo") { environment, url in
            try await Self.unotify(["authorize", "--app", "com.example.todo", "grant"], environment)
            try await Self.withPage(url) { browser in
                try await browser.click("#toggle-composer")
                try await browser.waitUntil("the app to be offered", "return document.getElementById('compose-app').value === 'com.example.todo'")
                // A push as a provider sends it, from the template with a key the composer offers added.
                try await browser.click("#compose-keys button[data-path='aps.thread-id']")
                let written = try await browser.execute("return JSON.parse(document.getElementById('compose-json').value)") as? [String: Any]
                #expect((written?["aps"] as? [String: Any])?["thread-id"] as? String == "thread")
                try await browser.click("#compose button[type=submit]")
                try await browser.waitUntil("the push to be sent", "return document.getElementById('compose-sent').textContent === 'Sent to com.example.todo'")

                // What is not JSON is shown where it breaks, and nothing is sent.
                _ = try await browser.execute("const editor = document.getElementById('compose-json'); editor.value = ''; editor.focus()")
                try await browser.type("{\"aps\": {\"alert\": \"Hi\",}}", into: "#compose-json")
                #expect(try await browser.text(of: "#compose-problem").hasPrefix("Not valid JSON"))
                #expect(try await browser.text(of: "#compose-problem").contains("line 1"))
                #expect(try await browser.execute("return document.getElementById('compose-json').getAttribute('aria-invalid')") as? String == "true")
                try await browser.screenshot(to: Self.screenshots.appendingPathComponent("web-composer.png"))
                // Valid JSON the daemon refuses: its words, as APNs would answer.
                _ = try await browser.execute("document.getElementById('compose-json').value = JSON.stringify({ aps: { alert: 'x'.repeat(5000) } })")
                try await browser.click("#compose button[type=submit]")
                try await browser.waitUntil("the daemon's refusal", "return document.getElementById('compose-problem').textContent.includes('4,096')")

                // A local notification, as the app adds it, due in 5 s: pending for the app.
                try await browser.click("#compose-kind option[value='local']")
                try await browser.waitUntil("the request template", "return JSON.parse(document.getElementById('compose-json').value).identifier === 'composed'")
                #expect(try await browser.execute("return document.getElementById('compose-problem').hidden") as? Bool == true)
                try await browser.click("#compose-keys button[data-path='trigger']")
                try await browser.click("#compose button[type=submit]")
                try await browser.waitUntil("the request to be added", "return document.getElementById('compose-sent').textContent === 'Sent to com.example.todo'")
                #expect(try await Self.unotify(["pending", "--app", "com.example.todo"], environment).contains("composed"))
                // One the rules refuse: Apple's reason, shown under the editor.
                _ = try await browser.execute("""
                    document.getElementById('compose-json').value = JSON.stringify({ identifier: 'bad', content: { title: 'x' }, trigger: { type: 'timeInterval', interval: 30, repeats: true } })
                    """)
                try await browser.click("#compose button[type=submit]")
                try await browser.waitUntil("the rule's words", "return document.getElementById('compose-problem').textContent.includes('60')")

                // Back to the list (the banners put away first, as they cover the header): the push is there.
                _ = try await browser.execute("document.querySelectorAll('.banners .notification .hide').forEach((grabber) => grabber.click())")
                try await browser.click("#toggle-composer")
                try await browser.waitUntil("the pushed notification in the list", "return document.querySelector('#list .notification .title')?.textContent === 'Hello'")
            }
        }
    }

    @Test func noOneWithoutTheSecretOrFromAnotherSiteGetsIn() async throws {
        try await Self.withServed(app: "com.example.todo") { _, url in
            let origin = try #require(url.firstMatch(of: /http:\/\/[^\/]+/).map { String($0.0) })
            let secret = try #require(url.firstMatch(of: /secret=(\S+)/).map { String($0.1) })
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))
            defer { _ = client.shutdown() }

            func status(_ path: String, _ headers: [(String, String)] = [], method: HTTPMethod = .GET, body: String? = nil,
                        on client: HTTPClient = client) async throws -> (Int, [String: String]) {
                var request = HTTPClientRequest(url: origin + path)
                request.method = method
                for (name, value) in headers { request.headers.add(name: name, value: value) }
                if let body { request.body = .bytes(ByteBuffer(string: body)) }
                let response = try await client.execute(request, timeout: .seconds(30))
                _ = try await response.body.collect(upTo: 1 << 20)
                var fields: [String: String] = [:]
                for header in response.headers { fields[header.name.lowercased()] = header.value }
                return (Int(response.status.code), fields)
            }
            let port = try #require(origin.split(separator: ":").last.map(String.init))
            let cookie = ("Cookie", "unotify-center-\(port)=\(secret)")
            let respond = "/api/apps/com.example.todo/notifications/x/respond"

            // The printed URL sets the cookie (HttpOnly, SameSite=Strict) and sends the browser to the page.
            let (opened, openedHeaders) = try await status("/?secret=\(secret)")
            #expect(opened == 303)
            #expect(openedHeaders["set-cookie"]?.hasPrefix("unotify-center-\(port)=\(secret)") == true)
            #expect(openedHeaders["set-cookie"]?.contains("HttpOnly") == true)
            #expect(openedHeaders["set-cookie"]?.contains("SameSite=Strict") == true)
            #expect(openedHeaders["content-security-policy"]?.contains("default-src 'none'") == true)
            // Without the secret, or with another, nothing.
            #expect(try await status("/").0 == 401)
            #expect(try await status("/api/state").0 == 401)
            #expect(try await status("/?secret=not-it").0 == 403)
            #expect(try await status("/api/state", [cookie]).0 == 200)
            // A name pointed at loopback by another site (DNS rebinding) is refused, cookie or not.
            #expect(try await status("/api/state", [cookie, ("Host", "attacker.example:80")]).0 == 403)
            // Acting needs the center's own Origin: another site's page, or none, is refused.
            let body = #"{"kind":"dismiss"}"#
            #expect(try await status(respond, [cookie, ("Content-Type", "application/json"), ("Origin", "http://attacker.example")], method: .POST, body: body).0 == 403)
            #expect(try await status(respond, [cookie, ("Content-Type", "application/json")], method: .POST, body: body).0 == 403)
            // The live events too: the upgrade is refused (400, as the WebSocket upgrader answers a refusal on
            // a new connection; one that served requests before is sent to a new one first).
            let fresh = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))
            defer { _ = fresh.shutdown() }
            let upgrade = try await status("/api/events", [cookie, ("Origin", "http://attacker.example"), ("Connection", "Upgrade"), ("Upgrade", "websocket"),
                                                           ("Sec-WebSocket-Version", "13"), ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")], on: fresh)
            #expect(upgrade.0 == 400, "\(upgrade)")
            // From the center's own page, a malformed action gets a clear error, and a valid one for a
            // notification that is not shown is refused as any surface's would be.
            #expect(try await status(respond, [cookie, ("Content-Type", "application/json"), ("Origin", origin)], method: .POST, body: "{").0 == 400)
            #expect(try await status(respond, [cookie, ("Content-Type", "application/json"), ("Origin", origin)], method: .POST, body: body).0 == 404)
        }
    }
}
