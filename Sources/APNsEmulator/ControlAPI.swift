import ConnectionLifecycle
import Foundation
import Hummingbird
import Logging
import NIOCore
import NotificationCore
import PushGateway
import ServiceLifecycle

/// The emulator's control API (`Docs/emulator.openapi.json`): JSON over HTTP/1.1, on loopback
/// unless told otherwise, for a test in any language to move the clock, script faults, make devices
/// and read what they received.
struct ControlAPI: Service {
    let emulator: Emulator
    let host: String
    let port: Int
    let logger: Logger
    let onListening: @Sendable (Int) -> Void

    /// The largest request body read.
    static let maximumBody = 64 * 1024

    func run() async throws {
        let router = Router()
        let emulator = self.emulator
        router.get("v1/emulator") { _, _ in Self.json(emulator.document().json()) }
        router.get("v1/clock") { _, _ in Self.json(ControlJSON.clock(emulator)) }
        router.post("v1/clock/advance") { request, _ in
            await Self.answer {
                let body = try ControlJSON.decode(ControlJSON.Advance.self, from: try await Self.body(request))
                guard body.to == nil || (body.by ?? body.seconds) == nil else {
                    throw EmulatorError(.invalidRequest, "Move the clock `by` a duration or `to` a time, not both.")
                }
                if let to = body.to {
                    try await emulator.setClock(to: try ControlJSON.time(to, name: "to"))
                } else {
                    guard let seconds = (body.by ?? body.seconds)?.duration else {
                        throw EmulatorError(.invalidRequest, "Say how far to move the clock: `by` (such as \"61m\", \"90s\", \"2h\") or `to` (a time).")
                    }
                    guard seconds <= ControlJSON.longest else {
                        throw EmulatorError(.refused, "Move the clock at most \(Int(ControlJSON.longest)) seconds at a time.")
                    }
                    try await emulator.advance(by: seconds)
                }
                return Self.json(ControlJSON.clock(emulator))
            }
        }
        router.get("v1/faults") { _, _ in Self.json(ControlJSON.faults(emulator.faults, now: emulator.clock.now())) }
        router.post("v1/faults") { request, _ in
            await Self.answer {
                let body = try ControlJSON.decode(ControlJSON.FaultRequest.self, from: try await Self.body(request))
                let fault = try ControlJSON.fault(from: body, now: emulator.clock.now())
                let added = try await emulator.script(fault)
                return Self.json(ControlJSON.fault(added, now: emulator.clock.now()), status: .created)
            }
        }
        router.delete("v1/faults") { _, _ in
            emulator.removeFaults()
            return Response(status: .noContent)
        }
        router.delete("v1/faults/:id") { _, context in
            await Self.answer {
                guard let id = context.parameters.get("id", as: Int.self) else { throw EmulatorError(.notFound, "A fault's identifier is a number.") }
                try emulator.removeFault(id)
                return Response(status: .noContent)
            }
        }
        router.get("v1/devices") { _, _ in Self.json(ControlJSON.devices(emulator.devices.all)) }
        router.post("v1/devices") { request, _ in
            await Self.answer {
                let body = try ControlJSON.decode(ControlJSON.DevicesRequest.self, from: try await Self.body(request))
                let count = body.count ?? 1
                let topics = body.topics
                let environment = body.environment ?? .sandbox
                let acknowledgement = try ControlJSON.acknowledgement(body.acknowledge)
                let made = try await emulator.devices.make(count: count, topics: topics, environment: environment, acknowledgement: acknowledgement,
                                                           maximum: 1_000)
                return Self.json(ControlJSON.devices(made), status: .created)
            }
        }
        router.post("v1/device-credentials") { _, _ in
            await Self.answer {
                let credential = try await emulator.enrollDevice()
                let document = emulator.document()
                return Self.json(ControlJSON.encode([
                    "deviceID": String(credential.prefix { $0 != "." }), "credential": credential, "deviceLink": document.deviceLink, "caFile": document.caFile,
                ]), status: .created)
            }
        }
        router.get("v1/tokens/:token/received") { request, context in
            await Self.answer {
                let token = context.parameters.get("token") ?? ""
                let query = request.uri.queryParameters
                let wait = try query.get("wait").map { text in
                    guard let seconds = EmulatorDuration.seconds(String(text)), seconds <= 300 else {
                        throw EmulatorError(.invalidRequest, "`wait` is 0 to 300 seconds, such as 3 or 3s.")
                    }
                    return seconds
                } ?? 0
                let count = try query.get("count").map { text in
                    guard let count = Int(String(text)), count >= 0 else { throw EmulatorError(.invalidRequest, "`count` is a number of pushes.") }
                    return count
                } ?? (wait > 0 ? 1 : 0)
                let pushes = try await emulator.devices.received(token: token, count: count, wait: wait)
                return Self.json(ControlJSON.received(token: token, pushes))
            }
        }
        router.get("v1/received") { _, _ in
            let counts = emulator.devices.receivedCounts
            return Self.json(ControlJSON.encode(["total": counts.values.reduce(0, +), "byToken": counts]))
        }
        router.delete("v1/received") { _, _ in
            emulator.devices.clearInboxes()
            return Response(status: .noContent)
        }
        router.get("v1/log/:id") { _, context in
            await Self.answer {
                let id = context.parameters.get("id") ?? ""
                let records = try await emulator.deliveryRecords(matching: id)
                guard !records.isEmpty else { throw EmulatorError(.notFound, "The delivery log has no push \(id).") }
                return Self.json(Data(DeliveryLogResponse.json(id: id, records: records)))
            }
        }
        let (host, port, logger, onListening) = (self.host, self.port, self.logger, self.onListening)
        let application = Application(
            router: router,
            server: .http1(lifecycle: ListenerLifecycle(capacity: ConnectionBudget.now.capacity(of: .metrics), deadlines: ListenerLifecycle.httpDeadlines,
                                                        listener: "emulator control API", logger: logger)),
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "unotify emulator"),
            onServerRunning: { channel in onListening(channel.localAddress?.port ?? port) },
            logger: logger
        )
        try await application.run()
    }

    /// The request's body, up to ``maximumBody`` bytes.
    static func body(_ request: Request) async throws -> [UInt8] {
        do {
            let buffer = try await request.body.collect(upTo: maximumBody)
            return Array(buffer.readableBytesView)
        } catch is NIOTooManyBytesError {
            throw EmulatorError(.tooLarge, "The body is over \(maximumBody / 1024) KiB: the control API's requests are small JSON objects.")
        }
    }

    /// Runs `body`; an ``EmulatorError`` is answered with its status and `{"error":{"code","message"}}`.
    static func answer(_ body: () async throws -> Response) async -> Response {
        do {
            return try await body()
        } catch let error as EmulatorError {
            return json(ControlJSON.error(error), status: HTTPResponse.Status(code: error.code.status))
        } catch {
            let failure = EmulatorError(.invalidRequest, "The request could not be read: \(error)")
            return json(ControlJSON.error(failure), status: .badRequest)
        }
    }

    static func json(_ data: Data, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }
}
