import DaemonTestSupport
import Foundation
import NotificationCore
import Testing
import TestSupport

/// The page as a person uses it beyond looking at it: reached through the system while the tab is in
/// the background, walked with the keyboard alone, and checked for accessibility at a desktop's and a
/// phone's width, light and dark.
extension WebNotificationCenterTests {
    static let chatCategories = [NotificationCategory(identifier: "MESSAGE", actions: [
        NotificationAction(identifier: "LIKE", title: "Like"),
        NotificationAction(identifier: "REPLY", title: "Reply", textInput: .init(buttonTitle: "Send", placeholder: "Answer Ada")),
    ])]

    static func message(_ identifier: String, _ body: String, sound: Bool = true) -> NotificationRequest {
        var content = NotificationContent()
        content.title = "Ada"
        content.body = body
        content.categoryIdentifier = "MESSAGE"
        content.threadIdentifier = identifier  // each on its own, not stacked
        if sound { content.sound = NotificationSound(kind: .default) }
        return NotificationRequest(identifier: identifier, content: content, trigger: nil)
    }

    /// The person turns background notifications on (the browser asks, on a click) and goes to another
    /// tab: a message comes as a system notification with the actions the browser can show, the tab's
    /// title counts it, and coming back clears both.
    @Test func aTabInTheBackgroundReachesThePersonThroughTheSystem() async throws {
        try await Self.withServed(app: "com.example.todo") { environment, url in
            let (chat, _, _) = try await Self.allowedApp("com.example.chat", categories: Self.chatCategories, environment)
            let origin = try #require(url.firstMatch(of: /http:\/\/[^\/]+/).map { String($0.0) })
            try await Self.withPage(url) { browser in
                try await browser.allowNotifications(for: origin)
                try await browser.click("#toggle-settings")
                try await browser.click("#system-notifications")
                try await browser.waitUntil("background notifications to be on", "return document.getElementById('system-notifications')?.getAttribute('aria-pressed') === 'true'")
                try await browser.click("#toggle-settings")
                _ = try await browser.executeAsync("navigator.serviceWorker.ready.then(() => arguments[arguments.length - 1](true))")
                let center = try await browser.window

                // Another tab in front: the center's goes to the background.
                _ = try await browser.newTab()
                try await browser.go(to: origin + "/api/state")
                try await chat.call(.POST, "/v1/requests", body: Self.message("lunch", "Lunch at noon?"))
                let shown = """
                    const done = arguments[arguments.length - 1];
                    navigator.serviceWorker.ready.then((registration) => registration.getNotifications())
                      .then((shown) => done(shown.map((n) => [n.title, n.body, n.tag, n.silent, n.actions.map((a) => a.title).join("|")])))
                      .catch((error) => done(String(error)));
                    """
                do {
                    try await waitFor("the system notification", within: 20) {
                        ((try? await browser.executeAsync(shown)) as? [[Any]])?.isEmpty == false
                    }
                } catch {
                    // What the center's page knew, to tell why.
                    try await browser.switchTo(center)
                    let known = try? await browser.executeAsync("""
                        const done = arguments[arguments.length - 1];
                        navigator.serviceWorker.getRegistration('/').then((registration) => done(
                          `permission ${Notification.permission}, background notifications ${localStorage.getItem('unotify-system-notifications')}, ` +
                          `worker ${registration?.active?.state ?? 'none'}, title ${document.title}, list ${document.querySelectorAll('#list .notification').length}`));
                        """)
                    Issue.record("No system notification came; the center's page had \(known ?? "nothing to say")")
                    throw error
                }
                let notifications = try #require(try await browser.executeAsync(shown) as? [[Any]])
                #expect(notifications.count == 1)
                #expect(notifications.first?[0] as? String == "Ada")
                #expect(notifications.first?[1] as? String == "Lunch at noon?")
                #expect(notifications.first?[2] as? String == "com.example.chat\nlunch")
                #expect(notifications.first?[3] as? Bool == false, "its sound plays: the app's settings allow it")
                #expect(notifications.first?[4] as? String == "Like|Reply…")
                try await waitFor("the tab's title to count it", within: 20) { (try? await browser.tabTitles.contains("(1) Notification Center")) == true }

                // Back to the center: seen, the count and the system's copy go.
                try await browser.switchTo(center)
                try await browser.waitUntil("the title without a count", "return document.title === 'Notification Center'")
                #expect(try await browser.execute("return document.getElementById('favicon').getAttribute('href')") as? String == "/icon.svg")
                try await waitFor("the system notification to be closed", within: 20) {
                    ((try? await browser.executeAsync(shown)) as? [[Any]])?.isEmpty == true
                }
                // What the worker tells the page when the person clicks the system notification (the
                // click itself is the system's, not the page's): the notification opens in the list.
                _ = try await browser.execute("""
                    navigator.serviceWorker.dispatchEvent(new MessageEvent("message", { data: { app: "com.example.chat", identifier: "lunch", action: null } }));
                    return null
                    """)
                try await browser.waitUntil("the notification opened in the list", """
                    const open = document.querySelector("#list .notification[data-identifier='lunch'] button.open");
                    return open !== null && document.activeElement === open && document.querySelector("#list .notification[data-identifier='lunch'] .actions") !== null
                    """)
            }
        }
    }

    /// The list by keyboard alone: Tab reaches it, the arrows move between notifications, Delete clears
    /// one (the focus going on to the next), and an action is chosen with Enter.
    @Test func aKeyboardOnlyWalkMovesActsAndClears() async throws {
        try await withWebCenter { daemon, url in
            let chat = try await daemon.authorizedApp("com.example.chat")
            try await chat.call(.PUT, "/v1/categories", body: Self.chatCategories)
            for (identifier, body) in [("first", "One"), ("second", "Two"), ("third", "Three")] {
                try await chat.call(.POST, "/v1/requests", body: Self.message(identifier, body, sound: false))
                daemon.clock.advance(by: 1)
            }
            try await Self.withPage(url) { browser in
                try await browser.waitUntil("three notifications", "return document.querySelectorAll('#list .notification').length === 3")
                let focused = "return document.activeElement?.closest('.notification')?.dataset.identifier ?? document.activeElement?.id ?? document.activeElement?.tagName"
                // Tab from the top of the page until the list has the focus.
                var presses = 0
                while try await browser.execute("return document.activeElement?.matches('#list button.open') === true") as? Bool != true {
                    try await browser.press(BrowserSession.Key.tab)
                    presses += 1
                    #expect(presses < 15, "Tab never reached the list")
                    if presses >= 15 { return }
                }
                // Newest first.
                #expect(try await browser.execute(focused) as? String == "third")
                try await browser.press(BrowserSession.Key.down)
                #expect(try await browser.execute(focused) as? String == "second")
                try await browser.press(BrowserSession.Key.end)
                #expect(try await browser.execute(focused) as? String == "first")
                try await browser.press(BrowserSession.Key.up)
                #expect(try await browser.execute(focused) as? String == "second")

                // Delete clears it; the focus goes on to the next one.
                try await browser.press(BrowserSession.Key.delete)
                try await browser.waitUntil("the notification cleared", "return document.querySelectorAll('#list .notification').length === 2")
                try await browser.waitUntil("the focus on the next", "return document.activeElement?.closest('.notification')?.dataset.identifier === 'first'")

                // Tab to its × and on to its Options; Enter expands it with the focus on its first action, Enter chooses it.
                try await browser.press(BrowserSession.Key.tab)
                #expect(try await browser.execute("return document.activeElement?.classList.contains('close')") as? Bool == true)
                try await browser.press(BrowserSession.Key.tab)
                #expect(try await browser.execute("return document.activeElement?.classList.contains('more')") as? Bool == true)
                try await browser.press(BrowserSession.Key.enter)
                try await browser.waitUntil("the actions", "return document.activeElement?.dataset.action === 'LIKE'")
                try await browser.press(BrowserSession.Key.enter)
                try await browser.waitUntil("the answered notification to leave", "return document.querySelectorAll('#list .notification').length === 1")
                // The app hears the action (the clearing asked for no dismissal: its category has no customDismissAction).
                #expect(try await Self.firstResponseWaiting(socket: daemon.socketPath, key: chat.key) == "LIKE first")
                let delivered = try await daemon.engine.deliveredNotifications("com.example.chat").map(\.request.identifier)
                #expect(delivered == ["third"])
            }
        }
    }
}

extension WebNotificationCenterTests {
    /// axe-core's script, from the Python wheel the test script installs.
    static func axeScript() async throws -> String {
        let found = try await Program.run("/usr/bin/env", ["python3", "-c",
            "import axe_playwright_python, os; print(os.path.join(os.path.dirname(axe_playwright_python.__file__), 'axe.min.js'))"])
        #expect(found.succeeded, "axe-core is not installed (scripts/test.sh installs it): \(found.errors)")
        return try String(contentsOfFile: found.output.trimmingCharacters(in: .whitespacesAndNewlines), encoding: .utf8)
    }

    /// The serious and critical violations of axe-core's rules (WCAG 2.1 A and AA, and its best
    /// practices) on the page as it is now, each with the elements it is about.
    static func accessibilityViolations(_ browser: BrowserSession, axe: String) async throws -> [String] {
        if try await browser.execute("return typeof window.axe") as? String != "object" {
            _ = try await browser.execute(axe + "\nreturn typeof window.axe")
        }
        let found = try await browser.executeAsync("""
            const done = arguments[arguments.length - 1];
            axe.run(document, { resultTypes: ["violations"] }).then((results) => done(results.violations
              .filter((violation) => violation.impact === "serious" || violation.impact === "critical")
              .map((violation) => `${violation.id} (${violation.impact}): ${violation.nodes.map((node) => node.target.join(" ")).join(", ")}`)))
              .catch((error) => done([`axe failed: ${error}`]));
            """, within: 60)
        return found as? [String] ?? ["axe answered nothing"]
    }

    /// axe-core finds no serious or critical violation in the page's main states (the list with a
    /// banner, Settings, an app's settings, the composer, the lock screen), at a desktop's width and a
    /// phone's, light and dark; screenshots of each are kept.
    @Test func thePageHasNoSeriousAccessibilityViolationsAtAnyWidthLightOrDark() async throws {
        let axe = try await Self.axeScript()
        try await Self.withServed(app: "com.example.todo") { environment, url in
            let (chat, _, _) = try await Self.allowedApp("com.example.chat", categories: Self.chatCategories, environment)
            let icon = try #require(environment["UNOTIFY_DATA_DIR"]).appending("/chat.png")
            try MediaFiles.png(width: 64, height: 64) { _, _ in (0x34, 0xC7, 0x59) }.write(to: URL(fileURLWithPath: icon))
            try await Self.unotify(["apps", "identity", "com.example.chat", "--name", "Chat", "--icon", icon], environment)
            try await Self.withPage(url) { browser in
                try await chat.call(.POST, "/v1/requests", body: Self.message("lunch", "Lunch at noon?"))
                try await chat.call(.POST, "/v1/requests", body: Self.message("coffee", "Coffee after?"))
                try await browser.waitUntil("two notifications", "return document.querySelectorAll('#list .notification').length === 2")
                // The banner names the app too, though the page had not seen it before the notification came.
                #expect(try await browser.text(of: ".banners .notification .app-name") == "Chat")
                // The check finds what it should: a picture without a text alternative is a critical violation.
                _ = try await browser.execute("const bad = document.createElement('img'); bad.id = 'bad'; bad.src = '/icon.svg'; document.body.append(bad); return null")
                let planted = try await Self.accessibilityViolations(browser, axe: axe)
                #expect(planted.contains { $0.hasPrefix("image-alt (critical): #bad") }, "\(planted)")
                _ = try await browser.execute("document.getElementById('bad').remove(); return null")
                var violations: [String] = []
                for (width, height, form) in [(1280, 800, "desktop"), (390, 844, "phone")] {
                    try await browser.resize(width: width, height: height)
                    for dark in [false, true] {
                        try await browser.prefersDarkColorScheme(dark)
                        let look = "\(form)-\(dark ? "dark" : "light")"
                        func check(_ state: String) async throws {
                            violations += try await Self.accessibilityViolations(browser, axe: axe).map { "\(look), \(state): \($0)" }
                        }
                        // A new message's banner: it never covers the header's controls, which stay in reach.
                        try await chat.call(.POST, "/v1/requests", body: Self.message("banner-\(look)", "Are you there?"))
                        try await browser.waitUntil("the banner", "return document.querySelector('.banners .notification .body')?.textContent === 'Are you there?'")
                        try await browser.waitUntil("the banner to settle", "return document.getAnimations().length === 0")
                        let covered = try await browser.execute("""
                            const banners = [...document.querySelectorAll('.banners .notification')].map((banner) => banner.getBoundingClientRect());
                            return [...document.querySelectorAll('.bar button')].filter((button) => {
                              const b = button.getBoundingClientRect();
                              return banners.some((r) => r.left < b.right && b.left < r.right && r.top < b.bottom && b.top < r.bottom);
                            }).map((button) => button.id)
                            """) as? [String]
                        #expect(covered == [], "\(look): the banner covers \(covered ?? [])")
                        try await check("list")
                        try await browser.screenshot(to: Self.screenshots.appendingPathComponent("web-\(look).png"))
                        try await browser.click("#toggle-settings")
                        try await check("settings")
                        try await browser.click("#settings-apps button[data-app='com.example.chat']")
                        _ = try await browser.element("#app-settings select")
                        try await check("app settings")
                        try await browser.click("#toggle-composer")
                        _ = try await browser.element("#compose-json")
                        try await check("composer")
                        try await browser.click("#toggle-composer")
                        try await browser.click("#lock")
                        try await browser.waitUntil("the lock screen", "return !document.getElementById('lock-screen').hidden")
                        try await check("lock screen")
                        try await browser.screenshot(to: Self.screenshots.appendingPathComponent("web-\(look)-locked.png"))
                        try await browser.click("#unlock button[type=submit]")
                        try await browser.waitUntil("unlocked", "return document.getElementById('lock-screen').hidden")
                    }
                }
                #expect(violations.isEmpty, "\(violations.joined(separator: "\n"))")
            }
        }
    }
}
