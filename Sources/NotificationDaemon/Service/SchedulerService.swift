import NotificationEngine
import ServiceLifecycle

/// Fires triggers on time: processes what is due, then sleeps until the next due date or until a
/// change may have brought it forward.
struct SchedulerService: Service {
    let engine: DaemonEngine

    func run() async {
        await cancelWhenGracefulShutdown {
            // At a higher priority than the local API's calls: the engine's actor runs waiting jobs
            // highest priority first, so a due notification does not queue behind a flood of adds.
            await withDiscardingTaskGroup { group in
                group.addTask(priority: .high) {
                    while !Task.isCancelled {
                        let next = await engine.processDue()
                        await engine.waitForWork(until: next)
                    }
                }
            }
        }
        // Notifications made durable ahead of their time are shown now, not lost with the stop.
        await engine.carryOutEverythingHeld()
        // Extensions still running are stopped with the daemon; each runs again when it next starts.
        engine.stopServiceExtensions()
    }
}
