import DaemonTestSupport
import Foundation
import NIOHTTP1
import NotificationCore
import NotificationDaemonClient
import Synchronization
import TestSupport
import Testing

/// The local API's spec, `Docs/local-api.openapi.json`, read as plain JSON.
struct OpenAPISpec: @unchecked Sendable {
    // Sendable: the document is read once and never changed.
    let document: [String: Any]

    static let url = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Docs/local-api.openapi.json")

    init() throws {
        document = try JSONSerialization.jsonObject(with: Data(contentsOf: Self.url)) as! [String: Any]
    }

    var paths: [String: [String: Any]] { document["paths"] as! [String: [String: Any]] }

    /// Every operation as "METHOD /path/{template}".
    var operations: Set<String> {
        Set(paths.flatMap { path, methods in methods.keys.map { "\($0.uppercased()) \(path)" } })
    }

    /// The path template a concrete path matches.
    func template(for path: String) -> String? {
        let concrete = path.split(separator: "?").first.map(String.init) ?? path
        let parts = concrete.split(separator: "/")
        return paths.keys.first { template in
            let templateParts = template.split(separator: "/")
            return templateParts.count == parts.count && zip(templateParts, parts).allSatisfy { $0.hasPrefix("{") || $0 == $1 }
        }
    }

    /// The problems with an answer: its status must be declared for the operation, and its body must
    /// match the declared schema.
    func problems(method: String, path: String, status: Int, contentType: String?, body: Data) -> [String] {
        guard let template = template(for: path),
              let operation = paths[template]?[method.lowercased()] as? [String: Any],
              let responses = operation["responses"] as? [String: Any] else {
            return ["\(method) \(path) is not in the spec"]
        }
        guard let response = responses[String(status)] as? [String: Any] else {
            return ["\(method) \(template) answered \(status), which the spec does not declare"]
        }
        guard let content = response["content"] as? [String: Any] else {
            return body.isEmpty ? [] : ["\(method) \(template) \(status) has a body the spec does not declare"]
        }
        let mediaType = contentType?.split(separator: ";").first.map(String.init) ?? ""
        guard let media = content[mediaType] as? [String: Any], let schema = media["schema"] as? [String: Any] else {
            return ["\(method) \(template) \(status) answered \(mediaType), which the spec does not declare"]
        }
        guard let value = try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed]) else {
            return ["\(method) \(template) \(status): the body is not JSON"]
        }
        return validate(value, against: schema, at: "\(method) \(template) \(status)")
    }

    /// A validator for the subset of JSON Schema the spec uses.
    func validate(_ value: Any, against schema: [String: Any], at location: String) -> [String] {
        if let reference = schema["$ref"] as? String {
            let name = String(reference.split(separator: "/").last!)
            let schemas = (document["components"] as! [String: Any])["schemas"] as! [String: [String: Any]]
            return validate(value, against: schemas[name]!, at: location)
        }
        var problems: [String] = []
        if let allowed = schema["enum"] as? [Any], !allowed.contains(where: { "\($0)" == "\(value)" }) {
            problems.append("\(location): \(value) is not one of \(allowed)")
        }
        switch schema["type"] as? String {
        case "object":
            guard let object = value as? [String: Any] else { return ["\(location): expected an object"] }
            for key in schema["required"] as? [String] ?? [] where object[key] == nil {
                problems.append("\(location): missing \(key)")
            }
            let properties = schema["properties"] as? [String: [String: Any]] ?? [:]
            for (key, item) in object {
                if let property = properties[key] {
                    problems += validate(item, against: property, at: "\(location).\(key)")
                } else if let additional = schema["additionalProperties"] as? [String: Any] {
                    problems += validate(item, against: additional, at: "\(location).\(key)")
                } else if !properties.isEmpty {
                    problems.append("\(location): \(key) is not in the spec")
                }
            }
        case "array":
            guard let array = value as? [Any] else { return ["\(location): expected an array"] }
            if let items = schema["items"] as? [String: Any] {
                for (index, item) in array.enumerated() { problems += validate(item, against: items, at: "\(location)[\(index)]") }
            }
        case "string":
            if !(value is String) { problems.append("\(location): expected a string") }
        case "integer":
            guard let number = value as? NSNumber, number.doubleValue == number.doubleValue.rounded() else {
                problems.append("\(location): expected an integer")
                break
            }
        case "number":
            if !(value is NSNumber) { problems.append("\(location): expected a number") }
        case "boolean":
            if !(value is Bool) { problems.append("\(location): expected a boolean") }
        default:
            break
        }
        return problems
    }
}

/// Records every answer and checks it against the spec.
final class SpecRecorder: Sendable {
    let spec: OpenAPISpec
    private let state = Mutex<(problems: [String], exercised: Set<String>)>(([], []))

    init(spec: OpenAPISpec) { self.spec = spec }

    @discardableResult
    func call(_ client: LocalAPIClient, _ method: HTTPMethod, _ path: String, body: (some Encodable & Sendable)? = nil as String?) async throws -> (status: Int, body: Data) {
        let answer = try await client.raw(method, path, body: body)
        let name = "\(method)"
        let found = spec.problems(method: name, path: path, status: answer.status, contentType: answer.contentType, body: answer.body)
        let template = spec.template(for: path) ?? path
        state.withLock {
            $0.problems += found
            $0.exercised.insert("\(name) \(template)")
        }
        return (answer.status, answer.body)
    }

    var problems: [String] { state.withLock { $0.problems } }
    var exercised: Set<String> { state.withLock { $0.exercised } }
}

/// The server answers exactly as its spec says: every declared operation is exercised, every status it
/// answers is declared, and every body matches its schema.
@Suite(.timeLimit(.minutes(2))) struct OpenAPIConformanceTests {
    @Test func theSpecIsAValidOpenAPIDocument() async throws {
        let run = try await Program.run("/usr/bin/env", ["python3", "-c", "import json, sys; from openapi_spec_validator import validate; validate(json.load(open(sys.argv[1])))", OpenAPISpec.url.path])
        #expect(run.succeeded, "openapi-spec-validator: \(run.errors)")
    }

    @Test func everyAnswerMatchesTheSpec() async throws {
        let spec = try OpenAPISpec()
        let recorder = SpecRecorder(spec: spec)
        try await withDaemon { daemon in
            let admin = daemon.admin
            let unknown = LocalAPIClient(socketPath: daemon.socketPath, key: "wrong")
            try await recorder.call(unknown, .GET, "/v1/health")
            try await recorder.call(unknown, .GET, "/v1/settings")
            try await recorder.call(unknown, .GET, "/v1/admin/apps")

            // Registering apps.
            let (_, issued) = try await recorder.call(admin, .POST, "/v1/admin/apps", body: LocalAPI.RegisterApp(bundleIdentifier: "com.example.spec", launchCommand: "true"))
            let key = try JSONDecoder().decode(LocalAPI.AppKey.self, from: issued).key
            try await recorder.call(admin, .POST, "/v1/admin/apps", body: LocalAPI.RegisterApp(bundleIdentifier: "com.example.spec"))
            try await recorder.call(admin, .POST, "/v1/admin/apps", body: LocalAPI.RegisterApp(bundleIdentifier: "no spaces allowed"))
            try await recorder.call(admin, .GET, "/v1/admin/apps")
            let (_, renewed) = try await recorder.call(admin, .POST, "/v1/admin/apps/com.example.spec/key")
            let app = LocalAPIClient(socketPath: daemon.socketPath, key: try JSONDecoder().decode(LocalAPI.AppKey.self, from: renewed).key)
            #expect(key != app.key)

            // The app's calls, refused and accepted.
            var content = NotificationContent()
            content.title = "hello"
            content.userInfo = ["n": .integer(1), "when": .date(Date(timeIntervalSince1970: 0))]
            try await recorder.call(app, .POST, "/v1/requests", body: NotificationRequest(identifier: "a", content: content, trigger: nil))
            try await recorder.call(admin, .POST, "/v1/admin/apps/com.example.spec/authorization", body: LocalAPI.AuthorizationDecision(decision: "maybe"))
            try await recorder.call(admin, .POST, "/v1/admin/apps/com.example.spec/authorization", body: LocalAPI.AuthorizationDecision(decision: "grant"))
            try await recorder.call(app, .POST, "/v1/authorization", body: LocalAPI.AuthorizationRequest(options: 7))
            try await recorder.call(app, .GET, "/v1/settings")
            try await recorder.call(app, .PUT, "/v1/categories", body: [
                NotificationCategory(identifier: "C", actions: [
                    NotificationAction(identifier: "OK", title: "OK", icon: .system("checkmark")),
                    NotificationAction(identifier: "R", title: "Reply", textInput: .init(buttonTitle: "Send", placeholder: "…")),
                ], options: [.customDismissAction]),
            ])
            try await recorder.call(app, .GET, "/v1/categories")
            content.categoryIdentifier = "C"
            content.sound = NotificationSound(kind: .named("a.caf"))
            content.badge = 2
            try await recorder.call(app, .POST, "/v1/requests", body: NotificationRequest(identifier: "a", content: content, trigger: nil))
            try await recorder.call(app, .POST, "/v1/requests", body: NotificationRequest(identifier: "b", content: content, trigger: .timeInterval(60, repeats: true)))
            try await recorder.call(app, .POST, "/v1/requests", body: NotificationRequest(identifier: "c", content: content, trigger: .calendar(DateComponents(hour: 8), repeats: false)))
            try await recorder.call(app, .POST, "/v1/requests", body: NotificationRequest(identifier: "x", content: NotificationContent(), trigger: nil))
            try await recorder.call(app, .POST, "/v1/requests", body: ["not": "a request"])
            try await recorder.call(app, .GET, "/v1/requests")
            try await recorder.call(app, .GET, "/v1/delivered")
            try await recorder.call(app, .PUT, "/v1/badge", body: LocalAPI.BadgeRequest(count: 3))
            try await recorder.call(app, .PUT, "/v1/badge", body: LocalAPI.BadgeRequest(count: -3))
            try await recorder.call(app, .DELETE, "/v1/requests?identifier=c")
            // No gateway here: the app hears so (RemotePushTests registers through a real one).
            try await recorder.call(app, .POST, "/v1/remote-notifications", body: LocalAPI.RemoteNotificationRegistration(environment: .production))
            try await recorder.call(app, .POST, "/v1/remote-notifications", body: ["environment": "moon"])
            try await recorder.call(app, .DELETE, "/v1/remote-notifications")
            try await recorder.call(app, .PUT, "/v1/remote-notifications/channels/Y2hhbm5lbA%3D%3D?environment=sandbox")
            try await recorder.call(app, .PUT, "/v1/remote-notifications/channels/Y2hhbm5lbA%3D%3D?environment=moon")
            try await recorder.call(app, .DELETE, "/v1/remote-notifications/channels/Y2hhbm5lbA%3D%3D")
            try await recorder.call(app, .PUT, "/v1/strings", body: ["GREETING": "Hello"])
            try await recorder.call(app, .PUT, "/v1/strings", body: ["GREETING": 1])

            // The person's and the developer's calls.
            try await recorder.call(admin, .GET, "/v1/admin/apps/com.example.spec/settings")
            var change = LocalAPI.SettingsChange()
            change.soundSetting = .disabled
            change.alertStyle = .alert
            try await recorder.call(admin, .PATCH, "/v1/admin/apps/com.example.spec/settings", body: change)
            try await recorder.call(admin, .GET, "/v1/admin/apps/com.example.spec/requests")
            try await recorder.call(admin, .GET, "/v1/admin/apps/com.example.spec/delivered")
            try await recorder.call(admin, .GET, "/v1/admin/notifications")
            try await recorder.call(admin, .GET, "/v1/admin/notifications?app=com.example.spec")
            try await recorder.call(admin, .GET, "/v1/admin/prompts")
            try await recorder.call(app, .POST, "/v1/requests", body: NotificationRequest(identifier: "spin", content: content, trigger: .timeInterval(0, repeats: true)))
            try await recorder.call(app, .GET, "/v1/events")
            try await recorder.call(admin, .POST, "/v1/admin/apps/com.example.spec/notifications/a/respond", body: LocalAPI.Respond(kind: "action", actionIdentifier: "NOPE"))
            try await recorder.call(admin, .POST, "/v1/admin/apps/com.example.spec/notifications/a/respond", body: LocalAPI.Respond(kind: "reply"))
            try await recorder.call(admin, .POST, "/v1/admin/device", body: LocalAPI.DeviceChange(locked: true))
            try await recorder.call(admin, .POST, "/v1/admin/apps/com.example.spec/notifications/a/respond", body: LocalAPI.Respond(kind: "open"))
            try await recorder.call(admin, .POST, "/v1/admin/device", body: LocalAPI.DeviceChange(latitude: 48.85, longitude: 2.35, locked: false, timeZone: "Europe/Paris"))
            try await recorder.call(admin, .POST, "/v1/admin/device", body: LocalAPI.DeviceChange(latitude: 100, longitude: 0))
            try await recorder.call(admin, .GET, "/v1/admin/focus")
            try await recorder.call(admin, .PUT, "/v1/admin/focus", body: LocalAPI.DeviceFocus(focus: Focus(name: "Sleep", allowsTimeSensitive: false, allowedApps: ["com.example.spec"])))
            try await recorder.call(admin, .GET, "/v1/admin/focus")
            try await recorder.call(admin, .PUT, "/v1/admin/focus", body: LocalAPI.DeviceFocus(focus: Focus(name: " ")))
            try await recorder.call(admin, .PUT, "/v1/admin/focus", body: ["focus": "on"])
            try await recorder.call(unknown, .GET, "/v1/admin/focus")
            try await recorder.call(admin, .PUT, "/v1/admin/focus", body: LocalAPI.DeviceFocus(focus: nil))
            try await recorder.call(admin, .GET, "/v1/admin/summary")
            try await recorder.call(admin, .PUT, "/v1/admin/summary", body: LocalAPI.DeviceSummary(summary: ScheduledSummary(times: [.init(hour: 21, minute: 30)], showsNextSummary: true)))
            var inSummary = LocalAPI.SettingsChange()
            inSummary.scheduledDeliverySetting = .enabled
            try await recorder.call(admin, .PATCH, "/v1/admin/apps/com.example.spec/settings", body: inSummary)
            try await recorder.call(app, .POST, "/v1/requests", body: NotificationRequest(identifier: "held", content: content, trigger: nil))
            try await recorder.call(admin, .GET, "/v1/admin/notifications?app=com.example.spec")
            try await recorder.call(admin, .GET, "/v1/admin/summary")
            try await recorder.call(admin, .PUT, "/v1/admin/summary", body: ["summary": ["times": ["25:00"]]])
            try await recorder.call(admin, .PUT, "/v1/admin/summary", body: ["summary": ["times": [String]()]])
            try await recorder.call(admin, .PUT, "/v1/admin/summary", body: [String: String]())
            try await recorder.call(unknown, .GET, "/v1/admin/summary")
            try await recorder.call(admin, .PUT, "/v1/admin/summary", body: LocalAPI.DeviceSummary(summary: nil))
            try await recorder.call(admin, .POST, "/v1/admin/apps/com.example.spec/notifications/a/respond", body: LocalAPI.Respond(kind: "reply", actionIdentifier: "R", text: "hi"))
            try await recorder.call(admin, .POST, "/v1/admin/apps/com.example.spec/notifications/gone/respond", body: LocalAPI.Respond(kind: "open"))
            try await recorder.call(admin, .POST, "/v1/admin/apps/com.example.spec/open-settings")
            // Not linked to a gateway here (RemotePushTests checks the token's answer against the spec).
            try await recorder.call(admin, .POST, "/v1/admin/apps/com.example.spec/remote-notifications",
                                    body: LocalAPI.RemoteNotificationRegistration(environment: .sandbox))
            try await recorder.call(admin, .POST, "/v1/admin/apps/com.example.spec/remote-notifications", body: ["environment": "moon"])
            try await recorder.call(admin, .PUT, "/v1/admin/apps/com.example.spec/channels/Y2hhbm5lbA%3D%3D")
            try await recorder.call(admin, .PUT, "/v1/admin/apps/nobody/channels/Y2hhbm5lbA%3D%3D")
            try await recorder.call(admin, .DELETE, "/v1/admin/apps/com.example.spec/channels/Y2hhbm5lbA%3D%3D?environment=production")
            try await recorder.call(admin, .POST, "/v1/admin/apps/com.example.spec/remote-notifications/renewal",
                                    body: LocalAPI.RemoteNotificationRegistration(environment: .sandbox))
            try await recorder.call(admin, .POST, "/v1/admin/apps/nobody/remote-notifications/renewal",
                                    body: LocalAPI.RemoteNotificationRegistration(environment: .sandbox))
            try await recorder.call(admin, .POST, "/v1/admin/apps/com.example.spec/pushes", body: LocalAPI.LocalPush(payload: #"{"aps":{"alert":"hi"}}"#))
            try await recorder.call(admin, .POST, "/v1/admin/apps/com.example.spec/pushes", body: LocalAPI.LocalPush(payload: "[1]"))
            try await recorder.call(admin, .POST, "/v1/admin/apps/nobody/pushes", body: LocalAPI.LocalPush(payload: "{}"))
            try await recorder.call(admin, .PUT, "/v1/admin/apps/com.example.spec/strings", body: ["GREETING": "Bonjour"])
            try await recorder.call(admin, .PUT, "/v1/admin/apps/nobody/strings", body: ["GREETING": "Bonjour"])
            try await recorder.call(admin, .PUT, "/v1/admin/apps/com.example.spec/identity", body: AppIdentity(name: "Spec"))
            try await recorder.call(admin, .PUT, "/v1/admin/apps/com.example.spec/identity", body: AppIdentity(icon: "relative.png"))
            try await recorder.call(admin, .PUT, "/v1/admin/apps/nobody/identity", body: AppIdentity(name: "Nobody"))
            try await recorder.call(app, .PUT, "/v1/service-extension", body: LocalAPI.ServiceExtension(executable: "/bin/true", timeLimit: 5))
            try await recorder.call(app, .PUT, "/v1/service-extension", body: LocalAPI.ServiceExtension(executable: "/nonexistent"))
            try await recorder.call(app, .PUT, "/v1/service-extension", body: LocalAPI.ServiceExtension(executable: "/bin/true", timeLimit: 0))
            try await recorder.call(app, .DELETE, "/v1/service-extension")
            let drawn = ContentExtensionAttributes(categories: ["customUI"], initialContentSizeRatio: 0.5)
            try await recorder.call(app, .PUT, "/v1/content-extension", body: LocalAPI.ContentExtension(executable: "/bin/true", attributes: drawn))
            try await recorder.call(app, .PUT, "/v1/content-extension", body: LocalAPI.ContentExtension(executable: "/nonexistent", attributes: drawn))
            try await recorder.call(app, .PUT, "/v1/content-extension", body: LocalAPI.ContentExtension(
                executable: "/bin/true", attributes: ContentExtensionAttributes(categories: ["a", "a"], initialContentSizeRatio: 0.5)))
            try await recorder.call(app, .DELETE, "/v1/content-extension")
            try await recorder.call(admin, .PUT, "/v1/admin/apps/com.example.spec/content-extension", body: LocalAPI.ContentExtension(executable: "/bin/true", attributes: drawn))
            try await recorder.call(admin, .PUT, "/v1/admin/apps/nobody/content-extension", body: LocalAPI.ContentExtension(executable: "/bin/true", attributes: drawn))
            try await recorder.call(admin, .DELETE, "/v1/admin/apps/com.example.spec/content-extension")
            try await recorder.call(admin, .DELETE, "/v1/admin/apps/nobody/content-extension")
            try await recorder.call(admin, .PUT, "/v1/admin/apps/com.example.spec/service-extension", body: LocalAPI.ServiceExtension(executable: "/bin/true"))
            try await recorder.call(admin, .PUT, "/v1/admin/apps/com.example.spec/background-pushes", body: LocalAPI.BackgroundPushBudget(perHour: 10))
            try await recorder.call(admin, .PUT, "/v1/admin/apps/com.example.spec/background-pushes", body: LocalAPI.BackgroundPushBudget(perHour: nil))
            try await recorder.call(admin, .PUT, "/v1/admin/apps/com.example.spec/background-pushes", body: LocalAPI.BackgroundPushBudget(perHour: 0))
            try await recorder.call(admin, .PUT, "/v1/admin/apps/com.example.missing/background-pushes", body: LocalAPI.BackgroundPushBudget(perHour: 1))
            try await recorder.call(admin, .PUT, "/v1/admin/apps/nobody/service-extension", body: LocalAPI.ServiceExtension(executable: "/bin/true"))
            try await recorder.call(admin, .DELETE, "/v1/admin/apps/com.example.spec/service-extension")
            try await recorder.call(admin, .DELETE, "/v1/admin/apps/nobody/service-extension")
            try await recorder.call(app, .DELETE, "/v1/delivered")
            try await recorder.call(app, .DELETE, "/v1/requests")
            try await recorder.call(admin, .GET, "/v1/admin/apps/nobody/settings")
            // Only a quarantined app is reset (TrustBoundaryTests quarantines one).
            try await recorder.call(admin, .POST, "/v1/admin/apps/com.example.spec/reset")
            try await recorder.call(admin, .POST, "/v1/admin/apps/nobody/reset")
            try await recorder.call(admin, .DELETE, "/v1/admin/apps/com.example.spec")
            try await recorder.call(admin, .DELETE, "/v1/admin/apps/com.example.spec")
        }
        #expect(recorder.problems == [])
        // The presenters' WebSocket upgrade is exercised by the stream tests.
        let missing = spec.operations.subtracting(recorder.exercised).subtracting(["GET /v1/admin/events"])
        #expect(missing == [], "operations no test exercised")
    }
}
