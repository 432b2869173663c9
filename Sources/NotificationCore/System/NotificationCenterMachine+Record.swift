package import Foundation

/// How a store keeps a machine: its clock and sequence (written at every step), a small core (written
/// when it changed), and rows (pending requests, visible notifications, what waits for the app) of
/// which a step writes only those it changed.
extension NotificationCenterMachine {
    /// Everything of the machine but its rows, its categories, its clock and its sequence: a few
    /// hundred bytes, whatever the app holds, and the same from one step to the next unless the app's
    /// settings, state or open questions changed.
    package struct Core: Sendable, Hashable, Codable {
        package var configuration: Configuration
        package var calendar: Calendar
        package var timeZone: TimeZone
        package var settings: NotificationSettings
        package var badge: Int
        package var appState: AppState
        package var location: Coordinate?
        package var isDeviceLocked: Bool
        package var isAppReachable: Bool
        package var promptCalls: [UInt64]?
        package var promptOptions: AuthorizationOptions
        /// `willPresent` questions and responses handed over, not yet answered: few, and each lives
        /// only until its deadline.
        package var awaitingPresentation: [UInt64: DeliveredNotification]
        package var awaitingResponse: [UInt64: NotificationResponse]
        package var deadlines: [Deadline]
        /// Background and VoIP pushes handed to the app and not yet confirmed, the one held for it, and
        /// its background budget. Absent from cores stored before remote notifications.
        package var awaitingRemoteNotification: [UInt64: RemoteNotification] = [:]
        package var heldRemoteNotification: RemoteNotification?
        package var backgroundBudget: BackgroundPushBudget?
        /// Pushes the app's service extension is preparing (each with its own deadline); `nil` when
        /// there are none, so that a core without any is stored as before service extensions.
        package var preparing: [UInt64: ContentPreparation]?

        private enum CodingKeys: String, CodingKey {
            case configuration, calendar, timeZone, settings, badge, appState, location, isDeviceLocked, isAppReachable
            case promptCalls, promptOptions, awaitingPresentation, awaitingResponse, deadlines
            case awaitingRemoteNotification, heldRemoteNotification, backgroundBudget, preparing
        }

        package init(
            configuration: Configuration, calendar: Calendar, timeZone: TimeZone, settings: NotificationSettings, badge: Int,
            appState: AppState, location: Coordinate?, isDeviceLocked: Bool, isAppReachable: Bool, promptCalls: [UInt64]?,
            promptOptions: AuthorizationOptions, awaitingPresentation: [UInt64: DeliveredNotification],
            awaitingResponse: [UInt64: NotificationResponse], deadlines: [Deadline],
            awaitingRemoteNotification: [UInt64: RemoteNotification], heldRemoteNotification: RemoteNotification?,
            backgroundBudget: BackgroundPushBudget?, preparing: [UInt64: ContentPreparation]? = nil
        ) {
            self.configuration = configuration
            self.calendar = calendar
            self.timeZone = timeZone
            self.settings = settings
            self.badge = badge
            self.appState = appState
            self.location = location
            self.isDeviceLocked = isDeviceLocked
            self.isAppReachable = isAppReachable
            self.promptCalls = promptCalls
            self.promptOptions = promptOptions
            self.awaitingPresentation = awaitingPresentation
            self.awaitingResponse = awaitingResponse
            self.deadlines = deadlines
            self.awaitingRemoteNotification = awaitingRemoteNotification
            self.heldRemoteNotification = heldRemoteNotification
            self.backgroundBudget = backgroundBudget
            self.preparing = preparing
        }

        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            configuration = try container.decode(Configuration.self, forKey: .configuration)
            calendar = try container.decode(Calendar.self, forKey: .calendar)
            timeZone = try container.decode(TimeZone.self, forKey: .timeZone)
            settings = try container.decode(NotificationSettings.self, forKey: .settings)
            badge = try container.decode(Int.self, forKey: .badge)
            appState = try container.decode(AppState.self, forKey: .appState)
            location = try container.decodeIfPresent(Coordinate.self, forKey: .location)
            isDeviceLocked = try container.decode(Bool.self, forKey: .isDeviceLocked)
            isAppReachable = try container.decode(Bool.self, forKey: .isAppReachable)
            promptCalls = try container.decodeIfPresent([UInt64].self, forKey: .promptCalls)
            promptOptions = try container.decode(AuthorizationOptions.self, forKey: .promptOptions)
            awaitingPresentation = try container.decode([UInt64: DeliveredNotification].self, forKey: .awaitingPresentation)
            awaitingResponse = try container.decode([UInt64: NotificationResponse].self, forKey: .awaitingResponse)
            deadlines = try container.decode([Deadline].self, forKey: .deadlines)
            awaitingRemoteNotification = try container.decodeIfPresent([UInt64: RemoteNotification].self, forKey: .awaitingRemoteNotification) ?? [:]
            heldRemoteNotification = try container.decodeIfPresent(RemoteNotification.self, forKey: .heldRemoteNotification)
            backgroundBudget = try container.decodeIfPresent(BackgroundPushBudget.self, forKey: .backgroundBudget)
            preparing = try container.decodeIfPresent([UInt64: ContentPreparation].self, forKey: .preparing)
        }
    }

    /// When a delegate's answer is due.
    package struct Deadline: Sendable, Hashable, Codable {
        package enum Kind: String, Sendable, Hashable, Codable {
            case willPresent, response, remoteNotification
        }

        package var kind: Kind
        package var ticket: UInt64
        package var date: Date
    }

    /// A notification the person can see, with its place in the order they were shown.
    package struct VisibleRow: Sendable, Hashable {
        package var shown: VisibleNotification
        package var position: UInt64

        package init(shown: VisibleNotification, position: UInt64) {
            self.shown = shown
            self.position = position
        }
    }

    /// Something waiting for the app, at its place in the queue.
    package struct QueuedRow: Sendable, Hashable {
        package var position: Int64
        package var item: QueuedForApp

        package init(position: Int64, item: QueuedForApp) {
            self.position = position
            self.item = item
        }
    }

    /// What a store writes for one step, or for a whole new machine.
    package struct Changes: Sendable {
        /// The machine's time, and the next number it gives out: they move at almost every step.
        package var now: Date
        package var nextSequence: UInt64
        /// The core, when it changed (always, for the whole machine).
        package var core: Core?
        /// The categories, when they changed.
        package var categories: [NotificationCategory]?
        package var pending: [PendingRequest]
        package var removedPending: [String]
        package var visible: [VisibleRow]
        package var removedVisible: [String]
        package var queued: [QueuedRow]
        package var removedQueued: [Int64]
    }

    /// How many rows of each kind the machine holds: its pending requests, the notifications the
    /// person can see, and what waits for the app.
    package var rowCounts: (pending: Int, visible: Int, queued: Int) {
        (pending.count, visible.count, queuedForApp.count)
    }

    /// From now on, notes which rows each step changes, for ``takeChanges()``.
    package mutating func startRecordingChanges() {
        isRecordingChanges = true
        pending.isRecording = true
        visible.isRecording = true
        queuedForApp.isRecording = true
    }

    /// The rows changed since the last call (or since recording started), and the core.
    package mutating func takeChanges() -> Changes {
        let pendingChanges = pending.takeChanges()
        let visibleChanges = visible.takeChanges()
        let queueChanges = queuedForApp.takeChanges()
        defer { categoriesChanged = false }
        let current = core
        let changedCore = current == recordedCore ? nil : current
        recordedCore = current
        return Changes(
            now: now,
            nextSequence: nextSequence,
            core: changedCore,
            categories: categoriesChanged ? sortedCategories : nil,
            pending: Array(pendingChanges.written.values),
            removedPending: pendingChanges.removed,
            visible: visibleChanges.written.map { VisibleRow(shown: $0.value, position: visibleOrder[$0.key]!) },
            removedVisible: visibleChanges.removed,
            queued: queueChanges.added.map { QueuedRow(position: $0.key, item: $0.value) },
            removedQueued: queueChanges.removed
        )
    }

    /// Every row of the machine, and its core: what a store writes for a new app. Changes noted so far
    /// are forgotten, as these include them.
    package mutating func takeWhole() -> Changes {
        pending.forgetChanges()
        visible.forgetChanges()
        queuedForApp.forgetChanges()
        categoriesChanged = false
        recordedCore = core
        return Changes(
            now: now,
            nextSequence: nextSequence,
            core: recordedCore,
            categories: sortedCategories,
            pending: Array(pending.values),
            removedPending: [],
            visible: visible.elements.map { VisibleRow(shown: $0.1, position: visibleOrder[$0.0]!) },
            removedVisible: [],
            queued: queuedForApp.entries.map { QueuedRow(position: $0.position, item: $0.item) },
            removedQueued: []
        )
    }

    /// A machine as a store kept it.
    package init(now: Date, nextSequence: UInt64, core: Core, categories: [NotificationCategory], pending: [PendingRequest], visible: [VisibleRow], queued: [QueuedRow]) {
        self.init(
            now: now,
            calendar: core.calendar,
            timeZone: core.timeZone,
            appState: core.appState,
            appReachable: core.isAppReachable,
            configuration: core.configuration
        )
        settings = core.settings
        badge = core.badge
        location = core.location
        isDeviceLocked = core.isDeviceLocked
        promptCalls = core.promptCalls
        promptOptions = core.promptOptions
        awaitingPresentation = core.awaitingPresentation
        awaitingResponse = core.awaitingResponse
        awaitingRemoteNotification = core.awaitingRemoteNotification
        heldRemoteNotification = core.heldRemoteNotification
        backgroundBudget = core.backgroundBudget
        preparing = core.preparing ?? [:]
        self.nextSequence = nextSequence
        recordedCore = core
        self.categories = Dictionary(categories.map { ($0.identifier, $0) }, uniquingKeysWith: { _, last in last })
        // Filled in place, with room for all: a store builds an app this way each time it reads one.
        self.pending = Journaled(keysAndValues: pending.lazy.map { ($0.request.identifier, $0) }, count: pending.count)
        locationRequestCount = pending.count(where: { Self.waitsForARegion($0.request) })
        self.visible = Journaled(keysAndValues: visible.lazy.map { ($0.shown.notification.request.identifier, $0.shown) }, count: visible.count)
        visibleOrder = Dictionary(visible.map { ($0.shown.notification.request.identifier, $0.position) }, uniquingKeysWith: { _, last in last })
        queuedForApp = QueueForApp(entries: queued.map { (position: $0.position, item: $0.item) })
        // Requests in the order they were added, then the deadlines in theirs: among wake-ups at the
        // same moment, that is the order in which they were scheduled.
        // Only what the queue needs is sorted, not whole requests.
        let scheduled = pending.compactMap { entry in
            entry.nextFireDate.map { (sequence: entry.sequence, key: WakeUp.request(entry.request.identifier), date: $0) }
        }.sorted { $0.sequence < $1.sequence }
        wakeUps = TriggerQueue(scheduled.lazy.map { (key: $0.key, date: $0.date) })
        for deadline in core.deadlines {
            switch deadline.kind {
            case .willPresent: wakeUps.schedule(.willPresentDeadline(deadline.ticket), at: deadline.date)
            case .response: wakeUps.schedule(.responseDeadline(deadline.ticket), at: deadline.date)
            case .remoteNotification: wakeUps.schedule(.remoteNotificationDeadline(deadline.ticket), at: deadline.date)
            }
        }
        for ticket in preparing.keys { scheduleWakeUps(ofPreparation: ticket) }
        // A held background push is looked at again at once: the app may be started for it.
        if heldRemoteNotification != nil { wakeUps.schedule(.heldRemoteNotification, at: now) }
        scheduleSummaryDelivery()
    }

    private var core: Core {
        Core(
            configuration: configuration,
            calendar: calendar,
            timeZone: timeZone,
            settings: settings,
            badge: badge,
            appState: appState,
            location: location,
            isDeviceLocked: isDeviceLocked,
            isAppReachable: isAppReachable,
            promptCalls: promptCalls,
            promptOptions: promptOptions,
            awaitingPresentation: awaitingPresentation,
            awaitingResponse: awaitingResponse,
            deadlines: deadlines,
            awaitingRemoteNotification: awaitingRemoteNotification,
            heldRemoteNotification: heldRemoteNotification,
            backgroundBudget: backgroundBudget,
            preparing: preparing.isEmpty ? nil : preparing
        )
    }

    /// Each open ticket's deadline, by ticket (every open ticket has one).
    private var deadlines: [Deadline] {
        let presentations = awaitingPresentation.keys.compactMap { ticket in
            wakeUps.date(of: .willPresentDeadline(ticket)).map { Deadline(kind: .willPresent, ticket: ticket, date: $0) }
        }
        let responses = awaitingResponse.keys.compactMap { ticket in
            wakeUps.date(of: .responseDeadline(ticket)).map { Deadline(kind: .response, ticket: ticket, date: $0) }
        }
        let remoteNotifications = awaitingRemoteNotification.keys.compactMap { ticket in
            wakeUps.date(of: .remoteNotificationDeadline(ticket)).map { Deadline(kind: .remoteNotification, ticket: ticket, date: $0) }
        }
        return (presentations + responses + remoteNotifications).sorted { $0.ticket < $1.ticket }
    }

    private var sortedCategories: [NotificationCategory] {
        categories.values.sorted { $0.identifier < $1.identifier }
    }
}
