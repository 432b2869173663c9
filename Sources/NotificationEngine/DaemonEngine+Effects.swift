import CoreMetrics
import Foundation
import Logging
package import NotificationCore

/// What a step does, carried out: each effect of the machine where its route sends it (the app's
/// connection, the presenters, the log and metrics, a launch, an extension).
extension DaemonEngine {
    /// Carries out a step's effects, each where ``NotificationCenterMachine/Effect/routes`` sends it.
    func carryOut(_ effects: [NotificationCenterMachine.Effect], for app: String) {
        if let observer = configuration.effectObserver { effects.forEach { observer(app, $0) } }
        for route in effects.flatMap(\.routes) {
            switch route {
            case .authorizationCompleted(let call, let granted):
                authorizationCalls.complete(app: app, number: call, granted: granted)
            case .app(let call):
                connections.send(.call(call), to: app)
            case .person(let event):
                log(event, of: app)
                measure(event)
                publish(.app(app, event))
                if case .badgeChanged(let badge) = event { connections.send(.badge(count: badge), to: app) }
            case .launch:
                if let cached = cache[app], let command = cached.launchCommand {
                    logger.info("launching app for what waits for it", metadata: ["app": .string(app)])
                    launcher(AppLaunch(command: command, bundleIdentifier: app, remoteNotification: cached.machine.launchRemoteNotification))
                }
            case .serviceExtension(.prepare(let ticket, let preparation)):
                startServiceExtension(app, ticket: ticket, request: preparation.request)
            case .serviceExtension(.timeWillExpire(let ticket)):
                extensionRunner.timeWillExpire(.init(app: app, ticket: ticket))
            case .serviceExtension(.stop(let ticket)):
                extensionRunner.stop(.init(app: app, ticket: ticket))
            }
        }
    }

    /// Logs what a person event says about an app's behaviour.
    func log(_ event: PersonEvent, of app: String) {
        switch event {
        case .willPresentTimedOut(let notification):
            logger.notice("app did not answer willPresent in time", metadata: ["app": .string(app), "notification": .string(notification.request.identifier)])
        case .responseNotCompleted(let response):
            logger.warning("app did not confirm a response in time", metadata: ["app": .string(app), "notification": .string(response.notification.request.identifier)])
        case .discardedOverLimit(let request):
            logger.notice("pending request discarded over the limit", metadata: ["app": .string(app), "request": .string(request.identifier)])
        case .remoteNotificationNotCompleted(let remote):
            logger.warning("app did not call didReceiveRemoteNotification's completion handler in time", metadata: ["app": .string(app), "apns-id": .string(remote.identifier)])
        case .remoteNotificationHeld(let remote):
            logger.info("background push held for the app", metadata: ["app": .string(app), "apns-id": .string(remote.identifier)])
        case .contentPrepared(let request, let outcome) where outcome != .prepared:
            logger.notice("a push was shown as it came: its service extension's work did not end well", metadata: [
                "app": .string(app), "notification": .string(request.identifier), "outcome": .string(outcome.name),
                "reason": .string(outcome.reason ?? ""),
            ])
        case .summaryDelivered(let shown):
            logger.info("the Scheduled Summary came", metadata: ["app": .string(app), "notifications": .stringConvertible(shown.count)])
        case .authorizationPrompt, .settingsChanged, .presented, .badgeChanged, .appStateChanged, .responseDelivered, .remoteNotificationDelivered,
             .contentPreparing, .contentPrepared, .notificationsRemoved, .actedOn:
            break
        }
    }

    /// Counts and times what a person event says about notifications and pushes.
    func measure(_ event: PersonEvent) {
        switch event {
        case .presented(let shown): metrics.presented(shown.notification, shown.presentation, at: clock.now)
        case .contentPreparing(let request): metrics.pushPreparing(uniqueID: request.pushUniqueID)
        case .contentPrepared(_, let outcome): metrics.extensionRan(outcome)
        case .remoteNotificationDelivered(let remote): metrics.handedToApp(uniqueID: remote.pushUniqueID, at: clock.now)
        default: break
        }
    }

    /// Sets the gauges that describe the daemon now (apps connected, extensions, what waits for
    /// apps and for the gateway); run before each exposition of its metrics.
    package func sampleMetrics() async {
        metrics.appsConnected.record(connections.count)
        let runs = extensionRunner.counts
        metrics.extensionsRunning.record(runs.running)
        metrics.extensionsWaiting.record(runs.waiting)
        if let waiting = try? await store.waitingCounts() {
            metrics.appMessagesWaiting.record(waiting.appMessages)
            metrics.deliveryReportsUnsent.record(waiting.deliveryReports)
        }
    }

    /// Tells every presenter (see ``Presenters``).
    func publish(_ event: DaemonEvent) {
        presenters.publish(event)
    }
}

/// An app to start for what waits for it (a response, a background push, its settings).
package struct AppLaunch: Sendable, Equatable {
    /// The app's launch command, run by `/bin/sh -c`.
    package var command: String
    package var bundleIdentifier: String
    /// The payload of the push the app is started for, if it is one (``NotificationCenterMachine/launchRemoteNotification``).
    package var remoteNotification: [String: PropertyListValue]?
}
