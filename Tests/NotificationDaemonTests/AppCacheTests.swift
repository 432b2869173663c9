import Foundation
import NotificationCore
@testable import NotificationDaemon
@testable import NotificationEngine
import Testing

/// The engine's cache of apps alone: what leaves when it is full, and what stays.
@Suite struct AppCacheTests {
    let machine = NotificationCenterMachine(now: Date(timeIntervalSince1970: 1_800_000_000), calendar: Calendar(identifier: .gregorian),
                                            timeZone: TimeZone(identifier: "UTC")!, appState: .notRunning, appReachable: false)

    func filled(_ apps: [String], appsAtMost: Int) -> AppCache {
        var cache = AppCache(memory: .max, appsAtMost: appsAtMost)
        for app in apps { cache.insert(app, machine: machine, launchCommand: nil) }
        return cache
    }

    @Test func appsLeaveInTheOrderTheyCameAndAnAppUsedSinceGoesRoundOnceMore() {
        var cache = filled((0..<20).map { "app\($0)" }, appsAtMost: 20)
        let marked = cache.markUsed("app0")
        let markedElsewhere = cache.markUsed("elsewhere")
        #expect(marked)
        #expect(!markedElsewhere, "an app not held is not marked")
        let left = cache.trim(keeping: "new") { _ in false }
        // Down to the bound less a few at a time: the 16 oldest but the one used since, which goes round.
        #expect(left.map(\.app) == (1...16).map { "app\($0)" })
        #expect(cache.count == 4)
        #expect(cache["app0"] != nil)
        // Looked at again, it has used its second chance.
        for index in 0..<16 { cache.insert("more\(index)", machine: machine, launchCommand: nil) }
        let next = cache.trim(keeping: "new") { _ in false }
        #expect(next.first?.app == "app17")
    }

    @Test func anAppThatMustStayStaysAndTheCacheGrowsPastItsBoundForNow() {
        var cache = filled(["a", "b", "c"], appsAtMost: 2)
        let left = cache.trim(keeping: "a") { $0 == "b" }
        #expect(left.map(\.app) == ["c"])
        let none = cache.trim(keeping: "a") { _ in true }
        #expect(none.isEmpty, "every app left is bound to stay")
        #expect(cache.count == 2)
        let removed = cache.remove("b")
        #expect(removed != nil && cache["b"] == nil && cache.count == 1)
    }

    @Test func aChangeCountsTheAppsGrowthAgainstTheMemoryBound() {
        var cache = AppCache(memory: DaemonEngine.estimatedMemory(of: machine) + 100, appsAtMost: nil)
        cache.insert("a", machine: machine, launchCommand: "run-a")
        #expect(cache.bytes == DaemonEngine.estimatedMemory(of: machine))
        let (_, grewPastBound) = cache.change("a") { machine in
            _ = machine.changeSettings(.granting([.alert], status: .authorized))
            var content = NotificationContent()
            content.title = String(repeating: "long title ", count: 100)
            _ = try? machine.add(NotificationRequest(identifier: "big", content: content, trigger: .timeInterval(3600, repeats: false)))
        }
        #expect(grewPastBound)
        #expect(cache.bytes == DaemonEngine.estimatedMemory(of: cache["a"]!.machine))
        #expect(cache["a"]?.launchCommand == "run-a")
    }
}
