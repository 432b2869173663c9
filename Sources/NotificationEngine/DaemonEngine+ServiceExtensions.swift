import Foundation
import Logging
import NotificationAttachmentStore
import NotificationCore

/// Apps' service extensions: started for a push marked `mutable-content`, what they hand back stepped
/// into the app's machine, resumed after a restart, stopped with the daemon.
extension DaemonEngine {
    /// Starts the app's extension for the push of `ticket`; what it hands back is stepped into the
    /// app's machine by ``preparationFinished(_:ticket:result:run:)``. Its registration is known (the
    /// push's step has just read it) unless the app left the engine's memory meanwhile, or this is a
    /// restart resuming the preparation: then it is read first.
    func startServiceExtension(_ app: String, ticket: UInt64, request: NotificationRequest) {
        if let known = resources[app] {
            runServiceExtension(known.serviceExtension, of: app, ticket: ticket, request: request)
            return
        }
        Task {
            do throws(DaemonError) {
                runServiceExtension(try await serviceExtension(of: app), of: app, ticket: ticket, request: request)
            } catch {
                await preparationFinished(app, ticket: ticket, result: .failure("its registration could not be read (\(error.message))"), run: nil)
            }
        }
    }

    private func runServiceExtension(_ registration: ServiceExtensionRegistration?, of app: String, ticket: UInt64, request: NotificationRequest) {
        let key = ServiceExtensionRunner.Key(app: app, ticket: ticket)
        guard let registration, extensionFolder(of: app) != nil else {
            Task { await preparationFinished(app, ticket: ticket, result: .failure("the app has no service extension now"), run: nil) }
            return
        }
        let run: URL, caches: URL
        do {
            (run, caches) = try extensionFolders(of: app, run: "\(ticket)-\(UUID().uuidString)")
        } catch {
            Task { await preparationFinished(app, ticket: ticket, result: .failure("its folder could not be made (\(error))"), run: nil) }
            return
        }
        extensionRunner.start(key, registration: registration, request: request, folder: run, caches: caches) { [weak self] result in
            Task { await self?.preparationFinished(app, ticket: ticket, result: result, run: run) }
        }
    }

    /// What an app's service extension handed back for the push of `ticket`: its attachments are
    /// checked and copied into the app's store (only files the extension wrote in its folder), and the
    /// machine shows the new content, or the original when anything is wrong.
    /// - Parameter run: the run's own folder, removed once its files are copied.
    private func preparationFinished(_ app: String, ticket: UInt64, result: ServiceExtensionResult, run: URL?) async {
        var content: NotificationContent?
        var failure: String?
        var copies: URL?
        let store = attachmentStore(of: app)
        switch result {
        case .content(let answer):
            content = answer
            if !answer.attachments.isEmpty, let store, let folder = extensionFolder(of: app) {
                let request = NotificationRequest(identifier: "prepared", content: answer, trigger: .push)
                do throws(DaemonError) {
                    let (stored, folderOfCopies) = try await Self.copyAttachments(of: request, into: store, from: folder)
                    content = stored.content
                    copies = folderOfCopies
                } catch {
                    content = nil
                    failure = "an attachment was refused: \(error.message)"
                }
            }
        case .failure(let reason):
            failure = reason
        }
        if let run { try? FileManager.default.removeItem(at: run) }
        do {
            let ended = try await step(app) { (machine: inout NotificationCenterMachine) throws(Never) in
                let effects = machine.finishPreparation(ticket: ticket, content: content, failure: failure)
                return (!effects.isEmpty, effects)
            }
            if !ended { store?.discard(copies) }
        } catch {
            store?.discard(copies)
            logger.error("could not keep what a service extension prepared", metadata: ["app": .string(app), "error": .string("\(error)")])
        }
    }

    /// Loads the apps whose service extension was preparing a push when the daemon stopped: loading
    /// resumes each (``NotificationCenterMachine/resume(at:)``), which starts its extension again once,
    /// or shows the push as it came if it was interrupted before.
    package func resumePreparations() async {
        do {
            try await stepInTurns(try await store.appsPreparingContent())
        } catch {
            logger.error("could not resume the service extensions that were running", metadata: ["error": .string("\(error)")])
        }
    }

    /// How many service extensions run now, and how many wait for their turn.
    package nonisolated var serviceExtensionRuns: (running: Int, waiting: Int) { extensionRunner.counts }

    /// Stops every service extension: the daemon is stopping. Each runs again, once, when the daemon
    /// next loads its app.
    package nonisolated func stopServiceExtensions() {
        extensionRunner.stopAll()
    }
}
