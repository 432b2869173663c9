import ArgumentParser
import BenchmarkSupport
import Foundation

/// The daemon at scale: a million pending requests across apps, against a reference daemon with a
/// tenth of the apps (a hundred thousand pending), measured back to back in the same session. Both hold
/// the same number per app, so the ratios show what the total adds. See BENCHMARKS.md.
@main
struct DaemonBenchmarks: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "daemon-benchmarks",
        abstract: "Measure the real unotify daemon with a million pending requests, against a reference with a tenth as many."
    )

    @Option(help: "The unotify executable to measure (build it with -c release).")
    var unotify: String = ".build-bench/release/unotify"

    @Option(help: "A folder for the two data directories; kept between runs, so seeding happens once.")
    var workDirectory: String = "/tmp/ubench"

    @Option(help: "How many apps the measured daemon has; the reference has a tenth as many.")
    var apps: Int = 15_625

    @Option(help: "Pending requests per app (Apple's limit is 64).")
    var perApp: Int = 64

    @Option(help: "Seconds of adds through the local API.")
    var loadSeconds: Double = 20

    @Option(help: "Seconds of adds before those measured (0 for none): every app touched then has been resumed after the daemon's start, so the adds measured are the steady state's rather than a start's.")
    var warmUpSeconds: Double = 0

    @Option(help: "Clients adding at the same time.")
    var concurrency: Int = 8

    @Option(help: "Requests due during the load whose lateness is measured.")
    var fires: Int = 200

    @Option(help: "Rounds of reference then measured daemon.")
    var rounds: Int = 2

    mutating func run() async throws {
        guard FileManager.default.isExecutableFile(atPath: unotify) else {
            throw ValidationError("\(unotify) is not an executable: build it first with `swift build -c release --scratch-path .build-bench --product unotify`.")
        }
        let root = URL(fileURLWithPath: workDirectory, isDirectory: true)
        let referenceApps = max(1, apps / 10)
        let reference = root.appendingPathComponent("\(referenceApps)x\(perApp)", isDirectory: true)
        let measured = root.appendingPathComponent("\(apps)x\(perApp)", isDirectory: true)
        for (directory, count) in [(reference, referenceApps), (measured, apps)] {
            let marker = directory.appendingPathComponent("seeded")
            guard !FileManager.default.fileExists(atPath: marker.path) else { continue }
            try? FileManager.default.removeItem(at: directory)
            print("Seeding \(count) apps × \(perApp) pending into \(directory.path)")
            let began = ContinuousClock.now
            try await Seeder(apps: count, perApp: perApp).seed(into: directory)
            try Data().write(to: marker)
            print("  took \(ContinuousClock.now - began)")
        }

        let step = try StepCost.measure(perApp: perApp)
        print("An add to an app with \(perApp) pending writes \(step.bytes) bytes, encoded in \(DaemonReport.microseconds(step.encodeSeconds));"
            + " loading the app builds it in \(DaemonReport.microseconds(step.decodeSeconds)), and it takes \(step.heapBytesPerApp) bytes of memory")

        let raw = try RawSQLiteReference.measure(in: root)
        print("Raw SQLite on this disk: \(String(format: "%.0f", raw.rowsPerSecond)) rows/s of \(raw.rowBytes) bytes, in transactions of 64")
        // The disk every durable add waits for, before the load and after it.
        let syncsBefore = try DiskSyncReference.measure(in: root)
        print("The disk's fsync before the rounds: \(syncsBefore.line)")

        var reports: [DaemonReport] = []
        for round in stride(from: 1, through: rounds, by: 1) {
            for (label, directory, count) in [("reference", reference, referenceApps), ("measured", measured, apps)] {
                let measurement = DaemonMeasurement(unotify: unotify, directory: directory, apps: count, pendingPerApp: perApp,
                                                    loadSeconds: loadSeconds, warmUpSeconds: warmUpSeconds, concurrency: concurrency, fires: fires)
                print("Round \(round): \(label) (\(count * perApp) pending)")
                let report = try await measurement.run(label: "\(label) #\(round)")
                print(report.line)
                reports.append(report)
            }
        }
        let syncsAfter = try DiskSyncReference.measure(in: root)
        print("")
        print("The disk's fsync before the rounds: \(syncsBefore.line)")
        print("The disk's fsync after the rounds:  \(syncsAfter.line)")
        print("")
        print(DaemonReport.table(reports, fires: fires))
        print("")
        print("| run | adds/s | ÷ raw SQLite rows/s (\(String(format: "%.0f", raw.rowsPerSecond)), the limit) | daemon CPU per add | driver CPU per add |")
        print("| --- | --- | --- | --- | --- |")
        for report in reports {
            print("| \(report.label) | \(String(format: "%.0f", report.addsPerSecond)) | \(String(format: "%.3f", report.addsPerSecond / raw.rowsPerSecond))"
                  + " | \(DaemonReport.microseconds(report.daemonCPUPerAdd)) | \(DaemonReport.microseconds(report.driverCPUPerAdd)) |")
        }
    }
}

extension DaemonReport {
    static func percentile(_ values: [Double], _ p: Double) -> Double {
        guard !values.isEmpty else { return .nan }
        let sorted = values.sorted()
        let rank = Int((p / 100 * Double(sorted.count - 1)).rounded())
        return sorted[rank]
    }

    static func ms(_ seconds: Double) -> String { String(format: "%.1f ms", seconds * 1000) }
    static func microseconds(_ seconds: Double) -> String { String(format: "%.0f µs", seconds * 1_000_000) }
    static func mib(_ bytes: Int) -> String { String(format: "%.1f MiB", Double(bytes) / 1_048_576) }

    var startUp: Double { Self.percentile(startUpSeconds, 50) }

    var line: String {
        "  start-up \(startUpSeconds.map(Self.ms)) · RSS idle \(Self.mib(idleResidentBytes)), after load \(Self.mib(loadedResidentBytes)), peak \(Self.mib(peakResidentBytes))"
            + " · database \(Self.mib(databaseBytes))\n"
            + "  adds \(adds) in \(String(format: "%.1f", addSeconds)) s = \(String(format: "%.0f", addsPerSecond))/s,"
            + " latency p50 \(Self.ms(Self.percentile(addLatencies, 50))) p99 \(Self.ms(Self.percentile(addLatencies, 99))),"
            + " CPU per add: daemon \(Self.microseconds(daemonCPUPerAdd)), driver \(Self.microseconds(driverCPUPerAdd))\n"
            + "  fired \(lateness.count) of \(expectedFires): lateness p50 \(Self.ms(Self.percentile(lateness, 50)))"
            + " p99 \(Self.ms(Self.percentile(lateness, 99))) max \(Self.ms(lateness.max() ?? .nan))"
            + " · pending in sampled apps \(sampledPending)\n"
            + "  lock the device \(Self.ms(lockSeconds)), move it \(Self.ms(moveSeconds)), list what is shown (\(listed)) \(Self.ms(listSeconds))\n"
            + "  change the time zone \(Self.ms(timeZoneSeconds)); another app's \(addLatenciesDuringTimeZoneChange.count) adds meanwhile:"
            + " p50 \(Self.ms(Self.percentile(addLatenciesDuringTimeZoneChange, 50))) p99 \(Self.ms(Self.percentile(addLatenciesDuringTimeZoneChange, 99)))"
            + " max \(Self.ms(addLatenciesDuringTimeZoneChange.max() ?? .nan))"
            + " · RSS once every app was touched \(Self.mib(everyAppTouchedResidentBytes))"
    }

    /// Every run, then each measured run against the reference run just before it.
    static func table(_ reports: [DaemonReport], fires: Int) -> String {
        var rows = ["| run | pending | start-up (median of 3) | RSS idle | RSS after load | database | adds/s | add p50 | add p99 | fired | late p50 | late p99 | late max | lock | move | list shown |",
                    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for report in reports {
            rows.append("| \(report.label) | \(report.pending) | \(ms(report.startUp)) | \(mib(report.idleResidentBytes)) | \(mib(report.loadedResidentBytes))"
                + " | \(mib(report.databaseBytes)) | \(String(format: "%.0f", report.addsPerSecond)) | \(ms(percentile(report.addLatencies, 50)))"
                + " | \(ms(percentile(report.addLatencies, 99))) | \(report.lateness.count)/\(fires) | \(ms(percentile(report.lateness, 50)))"
                + " | \(ms(percentile(report.lateness, 99))) | \(ms(report.lateness.max() ?? .nan))"
                + " | \(ms(report.lockSeconds)) | \(ms(report.moveSeconds)) | \(ms(report.listSeconds)) (\(report.listed)) |")
        }
        rows.append("")
        rows.append("| measured ÷ reference | start-up | adds/s | add p99 | late p99 | RSS after load per extra pending request | database bytes per extra pending request |")
        rows.append("| --- | --- | --- | --- | --- | --- | --- |")
        var index = 0
        while index + 1 < reports.count {
            let (reference, measured) = (reports[index], reports[index + 1])
            let perRequest = { (a: Int, b: Int) in String(format: "%.0f B", Double(a - b) / Double(max(1, measured.pending - reference.pending))) }
            rows.append("| \(measured.label) ÷ \(reference.label) | \(String(format: "%.2f", measured.startUp / reference.startUp))"
                + " | \(String(format: "%.2f", measured.addsPerSecond / reference.addsPerSecond))"
                + " | \(String(format: "%.2f", percentile(measured.addLatencies, 99) / percentile(reference.addLatencies, 99)))"
                + " | \(String(format: "%.2f", percentile(measured.lateness, 99) / percentile(reference.lateness, 99)))"
                + " | \(perRequest(measured.loadedResidentBytes, reference.loadedResidentBytes))"
                + " | \(perRequest(measured.databaseBytes, reference.databaseBytes)) |")
            index += 2
        }
        return rows.joined(separator: "\n")
    }
}
