import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging
import NotificationCore
import NotificationEngine

/// An app's event stream (`GET /v1/events`, WebSocket): while it is open the app is running and
/// reachable, and receives its delegate calls; when it closes the app is not running.
///
/// The app speaks first: its first message is `state` (foreground or background); the daemon then
/// connects it and answers `connected`. Sending nothing before the app does means no message of the
/// daemon can arrive before the app's side of the socket is ready. See `Docs/local-api-streams.md`.
enum AppEventStream {
    static func run(
        engine: DaemonEngine,
        request: Request,
        inbound: WebSocketInboundStream,
        outbound: WebSocketOutboundWriter,
        logger: Logger
    ) async throws {
        guard let key = bearerKey(request) else { return }
        let bundle = try await engine.authenticate(key: key)
        let decoder = JSONDecoder()
        var replies = inbound.messages(maxSize: LocalAPI.maximumReplySize).makeAsyncIterator()
        guard case .text(let first)? = try await replies.next(),
              case .state(let state)? = try? JSONLimits.decode(LocalAPI.AppReply.self, from: first.utf8, with: decoder) else {
            logger.notice("an app's event stream did not start with its state", metadata: ["app": .string(bundle)])
            return
        }
        let (connection, messages) = try await engine.connect(bundle, state: state)
        let remaining = RemainingMessages(iterator: replies)
        let encoder = StreamingJSONEncoder()
        // Tells the app it is connected: from here on it is reachable.
        do {
            let hello = try encoder.encode(LocalAPI.AppEvent.connected(contentExtensions: engine.hostsContentExtensions))
            try await outbound.write(.text(String(decoding: hello, as: UTF8.self)))
        } catch {
            try? await engine.disconnect(bundle, connection: connection)
            throw error
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await message in messages {
                    guard let data = try? encoder.encode(message) else { continue }
                    do {
                        try await outbound.write(.text(String(decoding: data, as: UTF8.self)))
                    } catch {
                        return
                    }
                    if case .replaced = message {
                        // The app confirms what it finished and answers `released`, which ends the
                        // replies task; one that does not is closed once the grace is over.
                        try? await Task.sleep(for: engine.takeoverGrace)
                        return
                    }
                }
            }
            group.addTask {
                do {
                    var iterator = remaining.iterator
                    while let message = try await iterator.next() {
                        // The answer to `willPresent`, the busiest reply, has a decoder of its own; every other, `JSONDecoder`.
                        guard case .text(let text) = message,
                              let reply = try? NotificationJSONReader.willPresentAnswer(from: text.utf8)
                                ?? JSONLimits.decode(LocalAPI.AppReply.self, from: text.utf8, with: decoder) else {
                            logger.notice("ignored a malformed message on an app's event stream", metadata: ["app": .string(bundle)])
                            continue
                        }
                        switch reply {
                        case .state(let newState):
                            try await engine.updateState(bundle, connection: connection, newState)
                        case .willPresentAnswer(let ticket, let options):
                            try await engine.answerWillPresent(bundle, ticket: ticket, options: options.map(PresentationOptions.init(rawValue:)))
                        case .responseCompleted(let ticket):
                            try await engine.completeResponse(bundle, ticket: ticket)
                        case .remoteNotificationCompleted(let ticket, let result):
                            try await engine.completeRemoteNotification(bundle, ticket: ticket, result: result)
                        case .released:
                            return
                        }
                    }
                } catch {
                    logger.debug("an app's event stream ended", metadata: ["app": .string(bundle), "error": .string("\(error)")])
                }
            }
            // Either side ending ends the connection.
            _ = await group.next()
            group.cancelAll()
        }
        try? await engine.disconnect(bundle, connection: connection)
    }
}

/// Carries the rest of an app's inbound messages into the task that reads them.
private struct RemainingMessages: @unchecked Sendable {
    // Sendable: the iterator is handed over once, to the one task that reads it from then on.
    var iterator: WebSocketInboundMessageStream.AsyncIterator
}
