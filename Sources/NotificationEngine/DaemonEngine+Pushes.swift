import Foundation
import Logging
package import NotificationCore

/// Pushes: from the gateway's device link (each delivered once, acknowledged once durable) or handed
/// to an app directly; the delivery-log reports that go back up the link.
extension DaemonEngine {
    /// The oldest delivery-log reports the gateway does not have yet (at most `limit`), and the number
    /// to confirm them by; nil when there are none.
    package func unsentDeliveryReports(limit: Int) async throws(DaemonError) -> (through: Int64, reports: [DeliveryLog.Report])? {
        try await store.deliveryReports(limit: limit)
    }

    /// The gateway recorded the reports up to `number`.
    package func forgetDeliveryReports(through number: Int64) async throws(DaemonError) {
        try await store.forgetDeliveryReports(through: number)
    }

    /// A push from the gateway's device link: delivered to its app's machine (shown as a local
    /// notification fires) once, however often the link sends it; returns once that is durable, when
    /// the link may acknowledge it. See ``receivePushes(_:)``.
    package func receivePush(_ push: DeviceLink.Push) async throws {
        try await receivePushes([push])
    }

    /// Pushes from the gateway's device link, as ``takePushes(_:)`` takes them; returns once they
    /// are durable across a power cut too, when the link may acknowledge them.
    package func receivePushes(_ pushes: [DeviceLink.Push]) async throws {
        try await takePushes(pushes)
        try await waitForTheDisk()
    }

    /// Pushes from the gateway's device link, in the link's order: each delivered to its app's machine
    /// once, however often the link sends it. Each is stepped at once and their saves share one commit
    /// (with whatever else is being saved); returns once that is written and what the steps do is
    /// carried out (an app in the foreground asked `willPresent`), safe from a crash of the process.
    /// The link acknowledges them (``linkSequence``) only after ``waitForTheDisk()``: the commit does
    /// not wait for the disk, so that the app is not asked a sync later (half a millisecond to a few
    /// here), nor the next pushes' commit kept waiting behind that sync; a power cut that undoes it
    /// undoes the step whole, and the gateway, not told, sends the push again. A push for an app not
    /// on this device, or whose payload cannot be read, is dropped (and acknowledged). Called by one
    /// link at a time, in its order.
    package func takePushes(_ pushes: [DeviceLink.Push]) async throws {
        var highest = linkSequence
        var taken: [(sequence: Int64, outcome: TakenPush)] = []
        func drop(_ push: DeviceLink.Push, because reason: String) {
            let report = push.uniqueID.map { DeliveryLog.Report(uniqueID: $0, stage: .notShown, at: clock.now, detail: reason) }
            taken.append((push.sequence, .dropped(report)))
        }
        for push in pushes where push.sequence > highest {
            highest = push.sequence
            let resources: ResourcesOfApp
            do {
                resources = try await self.resources(of: push.bundleIdentifier)
            } catch {
                // As a step that fails (below): what was taken before it is settled first.
                try? await settle(taken)
                throw error
            }
            switch APNs.payload(Array(push.payload.utf8), localize: resources.localizer) {
            case .success(let payload):
                do {
                    let serviceExtension = resources.serviceExtension?.serviceExtension
                    let ticket = try await stepQueued(push.bundleIdentifier, linkSequence: push.sequence, waitsForTheDisk: false) {
                        (machine: inout NotificationCenterMachine) throws(Never) in
                        ((), machine.receivePush(payload, apnsID: push.apnsID, collapseID: push.collapseID, pushType: push.pushType,
                                                 uniqueID: push.uniqueID, serviceExtension: serviceExtension))
                    }.1
                    taken.append((push.sequence, .stepped(ticket)))
                    // Before the step is carried out (once it is durable): its presentation is timed from here.
                    metrics.pushArrived(uniqueID: push.uniqueID, acceptedAt: Date(timeIntervalSince1970: push.receivedAt))
                } catch let error as DaemonError where error.code == .appNotFound {
                    logger.notice("a push for an app not on this device was dropped", metadata: ["app": .string(push.bundleIdentifier)])
                    metrics.dropped(because: "app_not_found")
                    drop(push, because: "the app is not on the device")
                } catch let error as DaemonError where error.code == .appQuarantined {
                    metrics.dropped(because: "app_quarantined")
                    drop(push, because: "the app's stored state cannot be read; it is quarantined until it is reset")
                } catch {
                    // The pushes taken before this one are settled whatever comes: known as received,
                    // they are not stepped again when the link sends them again, and the link can
                    // acknowledge them before it fails with this one.
                    try? await settle(taken)
                    throw error
                }
            case .failure(let error):
                logger.notice("a push whose payload cannot be read was dropped", metadata: ["app": .string(push.bundleIdentifier), "error": .string(error.description)])
                metrics.dropped(because: "unreadable_payload")
                drop(push, because: "its payload could not be read")
            }
        }
        try await settle(taken)
        linkSequence = max(linkSequence, highest)
    }

    /// What became of a push the link handed over.
    enum TakenPush {
        /// Stepped into its app's machine: durable once its ticket is.
        case stepped(UInt64)
        /// Not for this device, or not readable: recorded as not shown (when the push has a unique
        /// identifier, with this report).
        case dropped(DeliveryLog.Report?)
    }

    /// Makes the pushes taken durable, in the link's order, and moves ``linkSequence`` past them; a
    /// push that cannot be made durable stops there (and is thrown), what came before it kept. The
    /// store keeps the highest sequence it is told of: a dropped push before a stepped one costs
    /// nothing more, one after it is recorded, with the drops' reports.
    func settle(_ taken: [(sequence: Int64, outcome: TakenPush)]) async throws {
        var through: Int64?
        var reports: [DeliveryLog.Report] = []
        var droppedThrough: Int64?
        var failure: (any Error)?
        for (sequence, outcome) in taken {
            switch outcome {
            case .stepped(let ticket):
                do { try await makeDurable(ticket) } catch { failure = error }
            case .dropped(let report):
                if let report { reports.append(report) }
                droppedThrough = sequence
            }
            if failure != nil { break }
            through = sequence
        }
        if let droppedThrough {
            try await store.saveLinkSequence(droppedThrough, reports: reports)
            if !reports.isEmpty { reportWatchers.notify() }
        }
        if let through { linkSequence = max(linkSequence, through) }
        if let failure { throw failure }
    }

    /// Returns once everything saved before the call is durable across a power cut too, the steps
    /// that did not wait for the disk included (``takePushes(_:)``). Beside the writer: saves go on
    /// meanwhile.
    package nonisolated func waitForTheDisk() async throws(DaemonError) {
        try await store.waitForTheDisk()
    }

    /// A push handed to an app on this device directly, as `xcrun simctl push` does: the same
    /// delivery as a push from the gateway, with no device link involved.
    ///
    /// - Throws: `appNotFound`; `invalidRequest` for a payload that is not a JSON object or is over
    ///   what its type carries (4,096 bytes for an alert: Apple's limit for `simctl push` too).
    package func deliverPush(
        _ bundleIdentifier: String, payload: [UInt8], pushType: APNs.PushType = .alert, apnsID: String = UUID().uuidString.lowercased(), collapseID: String? = nil
    ) async throws {
        guard payload.count <= pushType.maximumPayloadBytes else {
            throw DaemonError(.invalidRequest, "The payload is \(payload.count) bytes; a push carries at most \(Self.grouped(pushType.maximumPayloadBytes)).")
        }
        let resources = try await resources(of: bundleIdentifier)
        let parsed: APNs.Payload
        switch APNs.payload(payload, localize: resources.localizer) {
        case .success(let value): parsed = value
        case .failure(let error): throw DaemonError(.invalidRequest, error.description)
        }
        if let collapseID, collapseID.utf8.count > 64 {
            throw DaemonError(.invalidRequest, "A collapse identifier is at most 64 bytes.")
        }
        if let collapseID, let violation = RequestRules.violation(inIdentifier: collapseID, what: "collapse identifier") {
            throw DaemonError(violation)
        }
        let serviceExtension = resources.serviceExtension?.serviceExtension
        try await step(bundleIdentifier) { (machine: inout NotificationCenterMachine) throws(Never) in
            ((), machine.receivePush(parsed, apnsID: apnsID, collapseID: collapseID, pushType: pushType, serviceExtension: serviceExtension))
        }
    }

    /// A count with its thousands grouped, as the messages write them: 4,096.
    private static func grouped(_ count: Int) -> String {
        var digits = String(count)
        var place = digits.count - 3
        while place > 0 {
            digits.insert(",", at: digits.index(digits.startIndex, offsetBy: place))
            place -= 3
        }
        return digits
    }
}
