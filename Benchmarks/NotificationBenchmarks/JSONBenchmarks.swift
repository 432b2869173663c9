import Benchmark
import Foundation
import NotificationCore

/// Encoding what a push carries through the daemon, with `JSONEncoder` and with
/// `StreamingJSONEncoder`: the notification as the store keeps it (sorted keys, without default
/// fields) and the `willPresent` event as the app receives it; and decoding that event, as the app does.
/// The gateway's `push` message to a device's link, with the encoder and written straight to bytes.
///
/// Each iteration encodes or decodes 1_000 values (the scaling factor, so results read per value).
func registerJSONBenchmarks() {
    var content = NotificationContent()
    (content.title, content.body, content.threadIdentifier, content.categoryIdentifier) = ("Lunch", "Ana: are we still on for noon?", "ana", "message")
    content.badge = 3
    content.sound = NotificationSound(kind: .default)
    content.userInfo = [
        "aps": .dictionary([
            "alert": .dictionary(["title": .string("Lunch"), "body": .string("Ana: are we still on for noon?")]),
            "badge": .integer(3), "sound": .string("default"), "thread-id": .string("ana"), "category": .string("message"),
        ]),
        "conversation": .string("c-1842"), "sender": .integer(77),
    ]
    let delivered = DeliveredNotification(
        request: NotificationRequest(identifier: "3F2504E0-4F89-11D3-9A0C-0305E82C3301", content: content, trigger: .push),
        date: Date(timeIntervalSinceReferenceDate: 785_000_000.25)
    )
    let event = LocalAPI.AppEvent.call(.willPresent(ticket: 18_446, delivered))

    let foundationStored = JSONEncoder()
    foundationStored.outputFormatting = .sortedKeys
    foundationStored.userInfo[.omitsDefaultContent] = true
    let streamingStored = StreamingJSONEncoder(sortsKeys: true, userInfo: [.omitsDefaultContent: true])
    let foundationWire = JSONEncoder()
    let streamingWire = StreamingJSONEncoder()
    let eventJSON = try! JSONEncoder().encode(event)
    let decoder = JSONDecoder()
    // The gateway's `push` message down a device link, as every push crosses it.
    let linkPush = DeviceLink.Push(
        sequence: 184_467, token: String(repeating: "5a", count: 32), bundleIdentifier: "com.example.chat", environment: .production,
        apnsID: "01a21e5a-9a68-724b-b31b-6f2d0e1c5b77", pushType: .alert, priority: 10, expiresAt: 1_764_348_783.5, collapseID: nil,
        payload: #"{"aps":{"alert":{"title":"Lunch","body":"Ana: are we still on for noon?"},"badge":3,"sound":"default","thread-id":"ana"},"conversation":"c-1842"}"#,
        receivedAt: 1_764_262_383.123456, uniqueID: "01a21e5a-9a68-724c-8c1d-2b9e7f00aa41"
    )
    let linkMessage = DeviceLink.GatewayMessage.push(linkPush)
    // What the one decoder of each busy message reads, against `JSONDecoder` on the same bytes: the
    // request an app adds (all its fields, as the framework writes it), the `willPresent` event, the
    // link's `push` message and a device's `report` of 100 deliveries.
    let requestBytes = try! StreamingJSONEncoder().encodeBytes(delivered.request)
    let requestData = Data(requestBytes)
    let eventBytes = Array(eventJSON)
    let linkBytes = try! DeviceLink.pushMessage(linkPush)
    let linkData = Data(linkBytes)
    let reports = (0..<100).map { (index: Int) -> DeliveryLog.Report in
        let stage: DeliveryLog.Stage = index % 2 == 0 ? .acknowledged : .presented
        let detail: String? = index % 10 == 0 ? "shown as a banner" : nil
        let at: Double = 1_764_262_383.123456 + Double(index) / 1000
        return DeliveryLog.Report(uniqueID: "01a21e5a-9a68-724c-8c1d-2b9e7f00\(1000 + index)", stage: stage, secondsSince1970: at, detail: detail)
    }
    let report = DeviceLink.DeviceMessage.report(through: 184_467, reports: reports)
    let reportBytes = try! StreamingJSONEncoder().encodeBytes(report)
    let reportData = Data(reportBytes)

    let cases: [(name: String, encode: @Sendable () throws -> Int)] = [
        ("JSON stored notification: JSONEncoder", { try foundationStored.encode(delivered).count }),
        ("JSON stored notification: streaming", { try streamingStored.encode(delivered).count }),
        ("JSON willPresent event: JSONEncoder", { try foundationWire.encode(event).count }),
        ("JSON willPresent event: streaming", { try streamingWire.encode(event).count }),
        ("JSON willPresent event: decode", { try decoder.decode(LocalAPI.AppEvent.self, from: eventJSON) == event ? 1 : 0 }),
        ("JSON link push message: streaming", { try streamingWire.encodeBytes(linkMessage).count }),
        ("JSON link push message: written straight", { try DeviceLink.pushMessage(linkPush).count }),
    ]
    let decodes: [(name: String, encode: @Sendable () throws -> Int)] = [
        ("JSON willPresent event: one decoder", { try NotificationJSONReader.willPresentEvent(from: eventBytes) == event ? 1 : 0 }),
        ("JSON added request: decode", { try decoder.decode(NotificationRequest.self, from: requestData).identifier.utf8.count }),
        ("JSON added request: one decoder", { try NotificationJSONReader.request(from: requestBytes).identifier.utf8.count }),
        ("JSON link push message: decode", { try decoder.decode(DeviceLink.GatewayMessage.self, from: linkData) == linkMessage ? 1 : 0 }),
        ("JSON link push message: one decoder", { try NotificationJSONReader.linkPush(from: linkBytes) == linkPush ? 1 : 0 }),
        ("JSON link report of 100: decode", { try decoder.decode(DeviceLink.DeviceMessage.self, from: reportData) == report ? 1 : 0 }),
        ("JSON link report of 100: one decoder", { try NotificationJSONReader.linkReport(from: reportBytes) == report ? 1 : 0 }),
    ]
    // What the person's list of shown notifications is answered with (`GET /v1/admin/notifications`):
    // 1,000 of them, each with its keys out of order in Swift's declaration and sorted as written.
    let shown = (0..<1_000).map { index in
        var notification = delivered
        notification.request.identifier = "shown-\(index)"
        let visible = NotificationCenterMachine.VisibleNotification(
            notification: notification, presentation: Presentation(banner: true, list: true, lockScreen: true, sound: true, badge: 3),
            actions: [], categoryOptions: []
        )
        return LocalAPI.VisibleNotification(bundleIdentifier: "com.example.app\(index % 50)", visible)
    }
    let sortedWire = StreamingJSONEncoder(sortsKeys: true)
    let lists: [(name: String, encode: @Sendable () throws -> Int)] = [
        ("JSON list of 1,000 shown notifications: JSONEncoder", { try foundationStored.encode(shown).count }),
        ("JSON list of 1,000 shown notifications: streaming", { try sortedWire.encode(shown).count }),
    ]
    for entry in lists {
        Benchmark(entry.name, configuration: .init(metrics: [.wallClock, .cpuTotal, .mallocCountTotal, .throughput], maxDuration: .seconds(3))) { benchmark in
            var bytes = 0
            for _ in benchmark.scaledIterations { bytes += try entry.encode() }
            blackHole(bytes)
        }
    }
    for entry in cases + decodes {
        Benchmark(
            entry.name,
            configuration: .init(metrics: [.wallClock, .cpuTotal, .mallocCountTotal, .throughput], scalingFactor: .kilo, maxDuration: .seconds(3))
        ) { benchmark in
            var bytes = 0
            for _ in benchmark.scaledIterations { bytes += try entry.encode() }
            blackHole(bytes)
        }
    }
}
