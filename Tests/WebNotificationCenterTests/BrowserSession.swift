import AsyncHTTPClient
import Foundation
import TestSupport
import NIOCore
import NIOHTTP1
import Testing

/// Debian's Chromium, headless, driven through chromedriver's WebDriver protocol: the browser tests
/// use the page as a person does (find, click, type, look).
final class BrowserSession: Sendable {
    struct WebDriverError: Error, CustomStringConvertible {
        let description: String
    }

    private static let elementKey = "element-6066-11e4-a52e-4f735466cecf"

    private let driver: ChildProcess
    private let client: HTTPClient
    /// `http://127.0.0.1:<port>/session/<id>`.
    private let session: String

    private init(driver: ChildProcess, client: HTTPClient, session: String) {
        self.driver = driver
        self.client = client
        self.session = session
    }

    /// Starts chromedriver on a free port and opens a headless Chromium window of `width` × `height`.
    /// Elements are waited for up to `wait` seconds before a lookup fails.
    static func start(width: Int = 480, height: Int = 900, wait: Double = 20) async throws -> BrowserSession {
        let (driver, port) = try await startDriver()
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        let base = "http://127.0.0.1:\(port)"
        do {
            let capabilities: [String: Any] = [
                "capabilities": ["alwaysMatch": [
                    "browserName": "chrome",
                    "goog:chromeOptions": [
                        "binary": "/usr/bin/chromium",
                        "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=\(width),\(height)"],
                    ],
                ]],
            ]
            let created = try await call(client, .POST, "\(base)/session", capabilities)
            guard let id = (created as? [String: Any])?["sessionId"] as? String else {
                throw WebDriverError(description: "no session: \(String(describing: created))")
            }
            let browser = BrowserSession(driver: driver, client: client, session: "\(base)/session/\(id)")
            _ = try await browser.call(.POST, "/timeouts", ["implicit": Int(wait * 1000)])
            return browser
        } catch {
            try? await client.shutdown()
            await driver.stop(kill: true)
            throw error
        }
    }

    /// Starts chromedriver on a free port. Once in a full test run it exited at once without a word;
    /// it is then started again (at most three times), and the error says how it ended.
    private static func startDriver() async throws -> (ChildProcess, String) {
        var failures: [String] = []
        for _ in 1...3 {
            let driver = try ChildProcess(URL(fileURLWithPath: "/usr/bin/chromedriver"), ["--port=0"], name: "chromedriver")
            do {
                let started = try await driver.line(containing: "started successfully on port")
                if let port = started.firstMatch(of: /port (\d+)/).map({ String($0.1) }) { return (driver, port) }
                failures.append("no port in \(started)")
            } catch {
                failures.append("\(error)")
            }
            await driver.stop(kill: true)
            failures[failures.count - 1] += " (exit status \(await driver.waitUntilExit(within: 5).map(String.init) ?? "none"))"
        }
        throw WebDriverError(description: "chromedriver did not start: \(failures.joined(separator: "; "))")
    }

    /// Closes the window (which ends the browser) and stops chromedriver, which does not stop on SIGTERM.
    func close() async {
        _ = try? await call(.DELETE, "", nil)
        try? await client.shutdown()
        await driver.stop(kill: true)
    }

    func go(to url: String) async throws {
        _ = try await call(.POST, "/url", ["url": url])
    }

    var currentURL: String {
        get async throws { try await call(.GET, "/url", nil) as? String ?? "" }
    }

    /// The browser's cookies for the page's site, HttpOnly ones included, as WebDriver gives them
    /// (`name`, `value`, `expiry` in seconds since 1970, `httpOnly`, `sameSite`…).
    var cookies: [[String: Any]] {
        get async throws { try await call(.GET, "/cookie", nil) as? [[String: Any]] ?? [] }
    }

    /// Lets `origin`'s pages show notifications, as a person answering the browser's prompt does.
    func allowNotifications(for origin: String) async throws {
        _ = try await call(.POST, "/goog/cdp/execute", ["cmd": "Browser.grantPermissions", "params": ["origin": origin, "permissions": ["notifications"]]])
    }

    /// The window (tab) in front.
    var window: String {
        get async throws { try await call(.GET, "/window", nil) as? String ?? "" }
    }

    /// Opens a new tab and brings it to the front (the others go to the background); returns it.
    func newTab() async throws -> String {
        let opened = try await call(.POST, "/window/new", ["type": "tab"]) as? [String: Any]
        let handle = opened?["handle"] as? String ?? ""
        try await switchTo(handle)
        return handle
    }

    /// Brings the tab `handle` to the front.
    func switchTo(_ handle: String) async throws {
        _ = try await call(.POST, "/window", ["handle": handle])
    }

    /// Every tab's title, in the background ones included, as the browser's tab strip shows them.
    var tabTitles: [String] {
        get async throws {
            let targets = try await call(.POST, "/goog/cdp/execute", ["cmd": "Target.getTargets", "params": [String: Any]()]) as? [String: Any]
            let infos = targets?["targetInfos"] as? [[String: Any]] ?? []
            return infos.filter { $0["type"] as? String == "page" }.compactMap { $0["title"] as? String }
        }
    }

    /// Resizes the window, as a person does (a phone's width, a desktop's).
    func resize(width: Int, height: Int) async throws {
        _ = try await call(.POST, "/window/rect", ["width": width, "height": height])
    }

    /// Presses keys on whatever has the focus, one after the other, as a person types them
    /// (WebDriver's key codes: `Key.down`, `Key.tab`…).
    func press(_ keys: String...) async throws {
        var actions: [[String: Any]] = []
        for key in keys {
            actions.append(["type": "keyDown", "value": key])
            actions.append(["type": "keyUp", "value": key])
        }
        _ = try await call(.POST, "/actions", ["actions": [["type": "key", "id": "keyboard", "actions": actions]]])
    }

    /// WebDriver's codes of the keys that are not characters.
    enum Key {
        static let tab = "\u{E004}"
        static let enter = "\u{E007}"
        static let delete = "\u{E017}"
        static let up = "\u{E013}"
        static let down = "\u{E015}"
        static let home = "\u{E011}"
        static let end = "\u{E010}"
    }

    /// The first element matching a CSS selector, waited for.
    func element(_ selector: String) async throws -> String {
        let found = try await call(.POST, "/element", ["using": "css selector", "value": selector])
        guard let id = (found as? [String: Any])?[Self.elementKey] as? String else {
            throw WebDriverError(description: "no element \(selector)")
        }
        return id
    }

    /// How many elements match a CSS selector now (not waited for).
    func count(_ selector: String) async throws -> Int {
        try await execute("return document.querySelectorAll(arguments[0]).length", [selector]) as? Int ?? 0
    }

    func click(_ selector: String) async throws {
        try await onElement(selector) { id in _ = try await self.call(.POST, "/element/\(id)/click", [String: Any]()) }
    }

    func type(_ text: String, into selector: String) async throws {
        try await onElement(selector) { id in _ = try await self.call(.POST, "/element/\(id)/value", ["text": text]) }
    }

    /// The text of the first element matching a CSS selector, waited for (its text content, shown or
    /// not yet: a banner sliding in has no rendered text for a moment).
    func text(of selector: String) async throws -> String {
        try await onElement(selector) { id in
            try await self.execute("return arguments[0].textContent", [[Self.elementKey: id]]) as? String ?? ""
        }
    }

    /// Runs `body` on the element a selector finds; when the page drew it again in between (the list
    /// is drawn anew at each event), on the new one.
    private func onElement<T>(_ selector: String, _ body: (String) async throws -> T) async throws -> T {
        var attempts = 0
        while true {
            do {
                return try await body(try await element(selector))
            } catch let error as WebDriverError where error.description.contains("stale element") && attempts < 5 {
                attempts += 1
            }
        }
    }

    /// Runs `body` inside the frame a selector finds (commands then reach the frame's document), then
    /// returns to the page; when the page drew the frame again meanwhile, in the new one.
    func inFrame<T>(_ selector: String, _ body: () async throws -> T) async throws -> T {
        var attempts = 0
        while true {
            do {
                let frame = try await element(selector)
                _ = try await call(.POST, "/frame", ["id": [Self.elementKey: frame]])
                let value = try await body()
                _ = try await call(.POST, "/frame/parent", [String: Any]())
                return value
            } catch let error as WebDriverError {
                _ = try? await call(.POST, "/frame/parent", [String: Any]())
                let redrawn = ["stale element", "no such frame", "detached", "no such window"].contains(where: error.description.contains)
                guard redrawn, attempts < 5 else { throw error }
                attempts += 1
            }
        }
    }

    /// Runs a script in the page and returns its result.
    func execute(_ script: String, _ arguments: [Any] = []) async throws -> Any? {
        try await call(.POST, "/execute/sync", ["script": script, "args": arguments])
    }

    /// Runs a script that calls its last argument with its result, and returns that result.
    func executeAsync(_ script: String, _ arguments: [Any] = [], within seconds: Double = 20) async throws -> Any? {
        try await call(.POST, "/execute/async", ["script": script, "args": arguments], timeout: seconds)
    }

    /// Waits until `script` returns true in the page, or fails after `seconds`.
    func waitUntil(_ what: String, within seconds: Double = 20, _ script: String, _ arguments: [Any] = []) async throws {
        _ = try await call(.POST, "/execute/async", [
            "script": """
                const done = arguments[arguments.length - 1];
                const args = Array.from(arguments).slice(0, -1);
                const check = new Function(...args.map((_, i) => "a" + i), \(Self.quoted(script)));
                const tick = () => { try { if (check(...args)) return done(true); } catch (_) {} requestAnimationFrame(tick); };
                tick();
                """,
            "args": arguments,
        ], timeout: seconds, what: what)
    }

    /// Makes the page see the person's system in dark mode (`prefers-color-scheme: dark`), or light again.
    func prefersDarkColorScheme(_ dark: Bool) async throws {
        _ = try await call(.POST, "/goog/cdp/execute", [
            "cmd": "Emulation.setEmulatedMedia",
            "params": ["features": [["name": "prefers-color-scheme", "value": dark ? "dark" : "light"]]],
        ])
    }

    /// Saves a screenshot of the window as a PNG.
    func screenshot(to url: URL) async throws {
        guard let base64 = try await call(.GET, "/screenshot", nil) as? String, let data = Data(base64Encoded: base64) else {
            throw WebDriverError(description: "no screenshot")
        }
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: url)
    }

    private static func quoted(_ text: String) -> String {
        let data = try? JSONSerialization.data(withJSONObject: [text])
        return String(String(decoding: data ?? Data("[\"\"]".utf8), as: UTF8.self).dropFirst().dropLast())
    }

    private func call(_ method: HTTPMethod, _ path: String, _ body: Any?, timeout: Double = 60, what: String? = nil) async throws -> Any? {
        if method == .POST, path == "/execute/async" {
            _ = try await Self.call(client, .POST, "\(session)/timeouts", ["script": Int(timeout * 1000)])
        }
        do {
            return try await Self.call(client, method, session + path, body)
        } catch let error as WebDriverError {
            throw WebDriverError(description: what.map { "waiting for \($0): \(error)" } ?? error.description)
        }
    }

    private static func call(_ client: HTTPClient, _ method: HTTPMethod, _ url: String, _ body: Any?) async throws -> Any? {
        var request = HTTPClientRequest(url: url)
        request.method = method
        request.headers.add(name: "Content-Type", value: "application/json")
        if let body { request.body = .bytes(ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: body))) }
        let response = try await client.execute(request, timeout: .seconds(90))
        let bytes = try await response.body.collect(upTo: 64 << 20)
        let json = try? JSONSerialization.jsonObject(with: Data(bytes.readableBytesView), options: [.fragmentsAllowed])
        let value = (json as? [String: Any])?["value"]
        guard response.status == .ok else {
            let message = ((value as? [String: Any])?["message"] as? String) ?? "\(response.status)"
            throw WebDriverError(description: message)
        }
        return value is NSNull ? nil : value
    }
}
