package import Foundation
import Hummingbird
import Logging
package import HummingbirdWebSocket
package import NotificationCore
package import NotificationEngine

/// The routes of the person and the developer, under `/v1/admin`, authenticated with the
/// administrator's key (written by the daemon to `admin.key` in its data directory, readable only by
/// its user).
package struct AdminRoutes: Sendable {
    let engine: DaemonEngine
    let adminKey: String
    let link: DeviceLinkClient?

    func authenticate(_ request: Request) throws {
        guard let key = bearerKey(request), constantTimeEqual(key, adminKey) else {
            throw DaemonError(.unauthorized, "Send the administrator's key (the daemon's admin.key file) as `Authorization: Bearer <key>`.")
        }
    }

    func addRoutes(to router: Router<LocalAPIRouter.Context>) {
        let engine = self.engine
        router.get("/v1/admin/apps") { request, _ in
            try authenticate(request)
            let running = await engine.runningApps()
            var summaries: [LocalAPI.AppSummary] = []
            for app in try await engine.apps() {
                let name = app.quarantined == nil ? await engine.shownIdentity(of: app.bundleIdentifier).name : app.bundleIdentifier
                summaries.append(LocalAPI.AppSummary(bundleIdentifier: app.bundleIdentifier, launchCommand: app.launchCommand,
                                                     state: (running[app.bundleIdentifier] ?? .notRunning).rawValue, quarantined: app.quarantined?.reason,
                                                     name: name))
            }
            return jsonResponse(summaries)
        }
        router.post("/v1/admin/apps/:app/reset") { request, context in
            try authenticate(request)
            let bundle = try context.parameters.decoded("app")
            return jsonResponse(LocalAPI.AppReset(bundleIdentifier: bundle, setAside: try await engine.resetApp(bundle)))
        }
        router.post("/v1/admin/apps") { request, context in
            try authenticate(request)
            let body = try await decode(LocalAPI.RegisterApp.self, request, context)
            let key = try await engine.registerApp(body.bundleIdentifier, launchCommand: body.launchCommand)
            return jsonResponse(LocalAPI.AppKey(bundleIdentifier: body.bundleIdentifier, key: key), status: .created)
        }
        router.delete("/v1/admin/apps/:app") { request, context in
            try authenticate(request)
            try await engine.removeApp(try context.parameters.decoded("app"))
            // The gateway ends the app's tokens before this answers, when the device is linked; else
            // when it next links (``DeviceLinkClient/reportApps()``).
            if let link, link.isLinked {
                do {
                    try await link.reportApps()
                } catch {
                    context.logger.notice("the gateway did not take note of a removed app; it will when the device links again",
                                  metadata: ["error": .string("\(error)")])
                }
            }
            return Response(status: .noContent)
        }
        router.post("/v1/admin/apps/:app/key") { request, context in
            try authenticate(request)
            let bundle = try context.parameters.decoded("app")
            return jsonResponse(LocalAPI.AppKey(bundleIdentifier: bundle, key: try await engine.renewKey(of: bundle)))
        }
        router.post("/v1/admin/apps/:app/remote-notifications") { request, context in
            try authenticate(request)
            let bundle = try context.parameters.decoded("app")
            let body = try await decode(LocalAPI.RemoteNotificationRegistration.self, request, context)
            // The app must be on this device (this throws appNotFound otherwise).
            _ = try await engine.appState(bundle)
            guard let link else { throw LocalAPIRouter.noGateway }
            let token = try await link.register(bundle, environment: body.environment)
            return jsonResponse(LocalAPI.DeviceToken(bundleIdentifier: bundle, environment: body.environment, token: token))
        }
        // A new token for the app, as when an iOS app is restored to a new device: the old one
        // answers 410 Unregistered from now on, and the app's delegate hears the new one.
        router.post("/v1/admin/apps/:app/remote-notifications/renewal") { request, context in
            try authenticate(request)
            let bundle = try context.parameters.decoded("app")
            let body = try await decode(LocalAPI.RemoteNotificationRegistration.self, request, context)
            _ = try await engine.appState(bundle)
            guard let link else { throw LocalAPIRouter.noGateway }
            try await link.unregister(bundle)
            let token = try await link.register(bundle, environment: body.environment)
            await engine.deviceTokenChanged(bundle, token: token, environment: body.environment)
            return jsonResponse(LocalAPI.DeviceToken(bundleIdentifier: bundle, environment: body.environment, token: token))
        }
        // A subscription of the app to a broadcast channel of its own, at the gateway.
        for subscribe in [true, false] {
            let handler: @Sendable (Request, LocalAPIRouter.Context) async throws -> Response = { request, context in
                try authenticate(request)
                let bundle = try context.parameters.decoded("app")
                _ = try await engine.appState(bundle)
                guard let link else { throw LocalAPIRouter.noGateway }
                try await link.setSubscribed(subscribe, bundle, environment: try LocalAPIRouter.environment(in: request),
                                             channelID: try context.parameters.decoded("channel"))
                return Response(status: .noContent)
            }
            if subscribe { router.put("/v1/admin/apps/:app/channels/:channel", use: handler) } else { router.delete("/v1/admin/apps/:app/channels/:channel", use: handler) }
        }
        router.put("/v1/admin/apps/:app/strings") { request, context in
            try authenticate(request)
            let bundle = try context.parameters.decoded("app")
            try await engine.setStrings(bundle, try await decode([String: String].self, request, context))
            return Response(status: .noContent)
        }
        router.put("/v1/admin/apps/:app/identity") { request, context in
            try authenticate(request)
            let bundle = try context.parameters.decoded("app")
            try await engine.setIdentity(bundle, try await decode(AppIdentity.self, request, context))
            return Response(status: .noContent)
        }
        router.put("/v1/admin/apps/:app/service-extension") { request, context in
            try authenticate(request)
            let bundle = try context.parameters.decoded("app")
            let body = try await decode(LocalAPI.ServiceExtension.self, request, context)
            try await engine.setServiceExtension(bundle, ServiceExtensionRegistration(body))
            return Response(status: .noContent)
        }
        router.delete("/v1/admin/apps/:app/service-extension") { request, context in
            try authenticate(request)
            try await engine.setServiceExtension(try context.parameters.decoded("app"), nil)
            return Response(status: .noContent)
        }
        router.put("/v1/admin/apps/:app/content-extension") { request, context in
            try authenticate(request)
            let bundle = try context.parameters.decoded("app")
            let body = try await decode(LocalAPI.ContentExtension.self, request, context)
            try await engine.setContentExtension(bundle, body)
            return Response(status: .noContent)
        }
        router.delete("/v1/admin/apps/:app/content-extension") { request, context in
            try authenticate(request)
            try await engine.setContentExtension(try context.parameters.decoded("app"), nil)
            return Response(status: .noContent)
        }
        router.put("/v1/admin/apps/:app/background-pushes") { request, context in
            try authenticate(request)
            let bundle = try context.parameters.decoded("app")
            let body = try await decode(LocalAPI.BackgroundPushBudget.self, request, context)
            let perHour = try await engine.setBackgroundPushesPerHour(bundle, body.perHour)
            return jsonResponse(LocalAPI.BackgroundPushBudget(perHour: perHour))
        }
        router.post("/v1/admin/apps/:app/pushes") { request, context in
            try authenticate(request)
            let bundle = try context.parameters.decoded("app")
            let body = try await decode(LocalAPI.LocalPush.self, request, context)
            try await engine.deliverPush(bundle, payload: Array(body.payload.utf8), collapseID: body.collapseID)
            return Response(status: .noContent)
        }
        router.post("/v1/admin/apps/:app/authorization") { request, context in
            try authenticate(request)
            let body = try await decode(LocalAPI.AuthorizationDecision.self, request, context)
            guard let decision = DaemonEngine.AuthorizationDecision(rawValue: body.decision) else {
                throw DaemonError(.invalidRequest, "decision must be grant, deny, provisional or reset; got \"\(body.decision)\".")
            }
            return jsonResponse(try await engine.authorize(try context.parameters.decoded("app"), decision))
        }
        router.get("/v1/admin/apps/:app/settings") { request, context in
            try authenticate(request)
            return jsonResponse(try await engine.settings(try context.parameters.decoded("app")))
        }
        router.patch("/v1/admin/apps/:app/settings") { request, context in
            try authenticate(request)
            let change = try await decode(LocalAPI.SettingsChange.self, request, context)
            return jsonResponse(try await engine.changeSettings(try context.parameters.decoded("app")) { change.apply(to: &$0) })
        }
        router.get("/v1/admin/apps/:app/requests") { request, context in
            try authenticate(request)
            let pending = try await engine.pendingRequests(try context.parameters.decoded("app"))
            return jsonResponse(pending.map { LocalAPI.PendingRequest(request: $0.request, nextFireDate: $0.nextFireDate) })
        }
        router.get("/v1/admin/apps/:app/delivered") { request, context in
            try authenticate(request)
            return jsonResponse(try await engine.deliveredNotifications(try context.parameters.decoded("app")))
        }
        router.get("/v1/admin/notifications") { request, _ in
            try authenticate(request)
            // Only the apps that show something are read, however many apps there are.
            let apps: [String]
            if let only = request.uri.queryParameters.get("app") { apps = [only] } else { apps = try await engine.appsShowingNotifications() }
            var visible: [LocalAPI.VisibleNotification] = []
            for app in apps {
                visible += try await engine.visibleNotifications(app).map { LocalAPI.VisibleNotification(bundleIdentifier: app, $0) }
            }
            return jsonResponse(visible.sorted { $0.notification.date < $1.notification.date })
        }
        router.get("/v1/admin/prompts") { request, _ in
            try authenticate(request)
            let prompts = try await engine.authorizationPrompts()
            return jsonResponse(prompts.map { LocalAPI.AuthorizationPrompt(bundleIdentifier: $0.bundleIdentifier, options: $0.options.rawValue) })
        }
        router.post("/v1/admin/apps/:app/notifications/:identifier/respond") { request, context in
            try authenticate(request)
            let bundle = try context.parameters.decoded("app")
            let identifier = try context.parameters.decoded("identifier")
            try await Self.perform(try await decode(LocalAPI.Respond.self, request, context), on: identifier, of: bundle, engine: engine)
            return Response(status: .noContent)
        }
        router.post("/v1/admin/apps/:app/open-settings") { request, context in
            try authenticate(request)
            try await engine.openAppSettings(try context.parameters.decoded("app"), from: nil)
            return Response(status: .noContent)
        }
        router.post("/v1/admin/device") { request, context in
            try authenticate(request)
            let change = try await decode(LocalAPI.DeviceChange.self, request, context)
            try await Self.apply(change, to: engine)
            return Response(status: .noContent)
        }
        // The person's Focus (Do Not Disturb and the like), for every app.
        router.get("/v1/admin/focus") { request, _ in
            try authenticate(request)
            return jsonResponse(LocalAPI.DeviceFocus(focus: await engine.focus))
        }
        router.put("/v1/admin/focus") { request, context in
            try authenticate(request)
            let change = try await decode(LocalAPI.DeviceFocus.self, request, context)
            try await engine.setFocus(change.focus)
            return jsonResponse(LocalAPI.DeviceFocus(focus: await engine.focus))
        }
        // The Scheduled Summary, for every app put in it.
        router.get("/v1/admin/summary") { request, _ in
            try authenticate(request)
            return jsonResponse(LocalAPI.DeviceSummary(summary: await engine.scheduledSummary))
        }
        router.put("/v1/admin/summary") { request, context in
            try authenticate(request)
            let change = try await decode(LocalAPI.DeviceSummary.self, request, context)
            try await engine.setScheduledSummary(change.summary)
            return jsonResponse(LocalAPI.DeviceSummary(summary: await engine.scheduledSummary))
        }
        router.ws("/v1/admin/events") { request, _ in
            try authenticate(request)
            try requireWebSocketUpgrade(request)
            return .upgrade([:])
        } onUpgrade: { inbound, outbound, _ in
            // The presenter speaks first (`subscribe`), so nothing the daemon sends can arrive before the
            // presenter's side of the socket is ready.
            var messages = inbound.messages(maxSize: 1 << 16).makeAsyncIterator()
            guard try await messages.next() != nil else { return }
            try await Self.servePresenter(engine: engine, remaining: messages, outbound: outbound)
        }
    }

    /// Serves a presenter's event stream once it may receive: `subscribed` first (every event from
    /// there on reaches it), then each event as it happens, until either side of the socket ends. A
    /// presenter that fell too far behind is told `overflowed` rather than given a gap, reads what is
    /// on screen again, and gets every event of a new watch. The presenter sends nothing more:
    /// reading `remaining` is how its closing is noticed.
    ///
    /// - Parameter describe: each event as the presenter receives it, as JSON; `nil` skips it.
    package static func servePresenter(
        engine: DaemonEngine,
        remaining: WebSocketInboundMessageStream.AsyncIterator,
        outbound: WebSocketOutboundWriter,
        describe: @escaping @Sendable (DaemonEvent) async -> Data? = { try? AdminRoutes.eventEncoder.encode(LocalAPI.WatchEvent.event($0)) }
    ) async throws {
        let firstWatch = await engine.watch()
        try await outbound.write(.text(String(decoding: try eventEncoder.encode(LocalAPI.WatchEvent.subscribed), as: UTF8.self)))
        let remaining = RemainingPresenterMessages(iterator: remaining)
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                var watch = firstWatch
                while true {
                    for await event in watch.events {
                        guard let data = await describe(event) else { continue }
                        do {
                            try await outbound.write(.text(String(decoding: data, as: UTF8.self)))
                        } catch {
                            return
                        }
                    }
                    guard watch.overflowed, !Task.isCancelled else { return }
                    watch = await engine.watch()
                    do {
                        try await outbound.write(.text(String(decoding: try eventEncoder.encode(LocalAPI.WatchEvent.overflowed), as: UTF8.self)))
                    } catch {
                        return
                    }
                }
            }
            group.addTask {
                var iterator = remaining.iterator
                while (try? await iterator.next()) != nil {}
            }
            _ = await group.next()
            group.cancelAll()
        }
    }

    /// Encodes the events sent to presenters: one for every event of every presenter, not one each.
    package static let eventEncoder = StreamingJSONEncoder()

    /// Carries out the person's action on a notification, as every surface sends it.
    package static func perform(_ body: LocalAPI.Respond, on identifier: String, of app: String, engine: DaemonEngine) async throws {
        if body.kind == "settings" {
            try await engine.openAppSettings(app, from: identifier)
        } else {
            try await engine.respond(app, to: identifier, with: try action(body))
        }
    }

    package static func action(_ body: LocalAPI.Respond) throws -> PersonAction {
        switch body.kind {
        case "open": return .open
        case "dismiss": return .dismiss
        case "action":
            guard let identifier = body.actionIdentifier else {
                throw DaemonError(.invalidRequest, "kind \"action\" needs actionIdentifier.")
            }
            return .action(identifier)
        case "reply":
            guard let identifier = body.actionIdentifier, let text = body.text else {
                throw DaemonError(.invalidRequest, "kind \"reply\" needs actionIdentifier and text.")
            }
            return .reply(identifier, text: text)
        default:
            throw DaemonError(.invalidRequest, "kind must be open, action, reply, dismiss or settings; got \"\(body.kind)\".")
        }
    }

    static func apply(_ change: LocalAPI.DeviceChange, to engine: DaemonEngine) async throws {
        switch (change.latitude, change.longitude) {
        case (let latitude?, let longitude?):
            guard (-90...90).contains(latitude), (-180...180).contains(longitude) else {
                throw DaemonError(.invalidRequest, "latitude must be within ±90 and longitude within ±180.")
            }
            try await engine.updateLocation(Coordinate(latitude: latitude, longitude: longitude))
        case (nil, nil):
            break
        default:
            throw DaemonError(.invalidRequest, "Give both latitude and longitude, or neither.")
        }
        if let locked = change.locked { try await engine.setDeviceLocked(locked) }
        if let identifier = change.timeZone {
            guard let zone = TimeZone(identifier: identifier) else {
                throw DaemonError(.invalidRequest, "\"\(identifier)\" is not a time zone identifier such as Europe/Paris.")
            }
            try await engine.changeTimeZone(zone)
        }
    }
}

/// Carries the rest of a presenter's inbound messages into the task that reads them.
private struct RemainingPresenterMessages: @unchecked Sendable {
    // Sendable: the iterator is handed over once, to the one task that reads it from then on.
    var iterator: WebSocketInboundMessageStream.AsyncIterator
}
