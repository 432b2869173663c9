import DaemonTestSupport
import Foundation
import Testing
import TestSupport
import WebNotificationCenter

/// A browser's pairing with the center, as a person lives with it: it outlives restarts of `serve` and
/// of the browser, it can be revoked from the page or with `unotify center revoke`, and a page signed
/// out says how to pair again. The secret never reaches the log.
extension WebNotificationCenterTests {
    /// What `serve` printed as the center's link: the link, its port and its secret.
    static func centerLink(of serve: ChildProcess) async throws -> (link: String, port: String, secret: String) {
        let printed = try await serve.line(containing: "Notification center: http://")
        let link = try #require(printed.firstMatch(of: /http:\/\/\S+/).map { String($0.0) })
        let port = try #require(link.firstMatch(of: /:(\d+)\//).map { String($0.1) })
        let secret = try #require(link.firstMatch(of: /secret=(\S+)/).map { String($0.1) })
        return (link, port, secret)
    }

    @Test func aTabLeftOpenComesBackAfterARestartAndASignedOutOneSaysHowToPairAgain() async throws {
        let directory = try makeTestDirectory()
        let environment = ServedSystem.environment(directory)
        var serve = try await ServedSystem.serve(directory)
        let browser = try await BrowserSession.start()
        do {
            let (link, port, secret) = try await Self.centerLink(of: serve)
            // The credential is kept in the data directory, readable by its user only.
            let key = directory.appendingPathComponent("center.key").path
            let mode = try FileManager.default.attributesOfItem(atPath: key)[.posixPermissions] as? Int
            #expect(mode == 0o600)
            try await Self.unotify(["apps", "add", "com.example.todo"], environment)
            try await Self.unotify(["authorize", "--app", "com.example.todo", "grant"], environment)

            try await browser.go(to: link)
            try await browser.waitUntil("the page to go live", "return document.getElementById('connection').textContent === 'Live'")
            // The pairing is a cookie the browser keeps across its own restarts, which no script reads.
            let cookie = try #require(try await browser.cookies.first { $0["name"] as? String == "unotify-center-\(port)" })
            let expiry = (cookie["expiry"] as? NSNumber)?.doubleValue ?? 0
            #expect(expiry > Date().timeIntervalSince1970 + 300 * 86400, "\(cookie)")
            #expect(cookie["httpOnly"] as? Bool == true)

            // `serve` stops and starts again on the same port: the tab says it is offline, then comes
            // back by itself, and what arrives after the restart reaches it.
            #expect(await serve.stop() != nil)
            let firstOutput = serve.lines
            try await browser.waitUntil("the page to say it is offline", "return document.getElementById('connection').classList.contains('offline')")
            serve = try await ServedSystem.serve(directory, arguments: ["--web-port", port])
            #expect(try await Self.centerLink(of: serve).link == link, "a restart keeps the link")
            try await browser.waitUntil("the tab to come back by itself", within: 15,
                                        "return document.getElementById('connection').textContent === 'Live'")
            try await Self.unotify(["push", "com.example.todo", "--payload", #"{"aps":{"alert":{"title":"After the restart"}}}"#], environment)
            try await browser.waitUntil("the push to reach the tab", "return document.querySelectorAll('#list .notification').length === 1")
            // A bookmark of the page (its address, no secret) opens it.
            try await browser.go(to: "http://127.0.0.1:\(port)/")
            try await browser.waitUntil("the bookmarked page to go live", "return document.getElementById('connection').textContent === 'Live'")
            #expect(try await browser.text(of: "#list .notification .title") == "After the restart")

            // `unotify center revoke` signs every browser out: the open tab empties at once and says how
            // to pair again; the old link is refused with the way back.
            let revoked = try await Self.unotify(["center", "revoke"], environment)
            let newLink = try #require(revoked.split(separator: "\n").last.map(String.init))
            #expect(newLink.hasPrefix("http://127.0.0.1:\(port)/?secret=") && newLink != link, "\(revoked)")
            try await browser.waitUntil("the tab to say it is signed out", "return !document.getElementById('unpaired').hidden")
            #expect(try await browser.count(".notification") == 0)
            #expect(try await browser.text(of: "#unpaired").contains("unotify center link"))
            try await browser.screenshot(to: Self.screenshots.appendingPathComponent("web-signed-out.png"))
            try await browser.go(to: link)
            #expect(try await browser.text(of: "body").contains("Open the link `unotify center link` prints"))

            // The link `unotify center link` prints pairs the browser again.
            #expect(try await Self.unotify(["center", "link"], environment) == newLink)
            try await browser.go(to: newLink)
            try await browser.waitUntil("the page to go live again", "return document.getElementById('connection').textContent === 'Live'")
            #expect(try await browser.execute("return document.getElementById('unpaired').hidden") as? Bool == true)
            #expect(try await browser.text(of: "#list .notification .title") == "After the restart")

            // Neither secret is in what `serve` logged: only the one line printed for the person holds it.
            #expect(await serve.stop() != nil)
            let newSecret = String(newLink.split(separator: "=").last ?? "")
            for line in firstOutput + serve.lines where !line.hasPrefix("Notification center: ") {
                #expect(!line.contains(secret) && !line.contains(newSecret), "the secret in: \(line)")
            }
            await browser.close()
        } catch {
            await browser.close()
            await serve.stop(kill: true)
            throw error
        }
    }

    /// "Sign Out Other Browsers" in Settings: the other browser is signed out, this one stays.
    @Test func signingOutOtherBrowsersFromSettingsKeepsThisOne() async throws {
        try await Self.withServed(app: "com.example.todo") { environment, url in
            try await Self.unotify(["authorize", "--app", "com.example.todo", "grant"], environment)
            try await Self.withPage(url) { here in
                try await Self.withPage(url) { other in
                    try await here.click("#toggle-settings")
                    try await here.click("#pairing-settings button[type=submit]")
                    try await here.waitUntil("the sign-out to be confirmed", "return document.querySelector('#pairing-settings .saved')?.textContent === 'Other browsers signed out'")
                    try await other.waitUntil("the other browser to be signed out", "return !document.getElementById('unpaired').hidden")
                    // This one reconnects with its new secret and still acts.
                    try await here.click("#toggle-settings")
                    try await here.waitUntil("this browser to be live", "return document.getElementById('connection').textContent === 'Live'")
                    try await Self.unotify(["push", "com.example.todo", "--payload", #"{"aps":{"alert":{"title":"Still here"}}}"#], environment)
                    try await here.waitUntil("the push here", "return document.querySelectorAll('#list .notification').length === 1")
                    #expect(try await here.execute("return document.getElementById('unpaired').hidden") as? Bool == true)
                    #expect(try await other.count(".notification") == 0)
                }
            }
        }
    }

    /// Under systemd (whose journal collects what is printed), the printed line has the address only;
    /// a `JOURNAL_STREAM` inherited with another output (a terminal's shell started by a service) is not
    /// the journal, and the link is printed whole.
    @Test func underTheJournalThePrintedLineHoldsNoSecret() async throws {
        let serveArguments = "--sandbox-port 0 --production-port 0 --device-link-port 0 --metrics-port 0 --web-port 0"
        func printed(_ journal: String) async throws -> (line: String, lines: [String], secret: String) {
            let directory = try makeTestDirectory()
            // As systemd gives it: JOURNAL_STREAM names the very stream standard output is.
            let serve = try ChildProcess(URL(fileURLWithPath: "/bin/sh"),
                                         ["-c", "JOURNAL_STREAM=\(journal) exec \"$0\" serve \(serveArguments)", ChildProcess.built("unotify").path],
                                         environment: ServedSystem.environment(directory), name: "unotify serve")
            let line = try await serve.line(containing: "Notification center: ")
            #expect(await serve.stop() != nil)
            return (line, serve.lines, try #require(WebCredential.read(directory.appendingPathComponent("center.key").path)))
        }
        let journal = try await printed("$(stat -L -c %d:%i /proc/$$/fd/1)")
        #expect(!journal.line.contains(journal.secret) && journal.line.contains("unotify center link"), "\(journal.line)")
        #expect(!journal.lines.contains { $0.contains(journal.secret) })
        let inherited = try await printed("8:12345")
        #expect(inherited.line.contains("?secret=\(inherited.secret)"), "\(inherited.line)")
    }
}
