import Foundation
import Testing
import TestSupport

/// The emulator leaves nothing behind: a stop removes its folder and its endpoints file, and the next
/// start removes the folder of one that was killed.
@Suite(.timeLimit(.minutes(1))) struct EmulatorLifeTests {
    @Test func aStoppedEmulatorLeavesNothingAndAKilledOnesFolderGoesAtTheNextStart() async throws {
        let first = try await RunningEmulator.start(topics: ["com.example.app=1"])
        let folder = first.string("folder")
        #expect(FileManager.default.fileExists(atPath: folder))
        await first.stop()
        #expect(!FileManager.default.fileExists(atPath: folder))

        let killed = try await RunningEmulator.start(topics: ["com.example.app=1"])
        let left = killed.string("folder")
        _ = await killed.process.stop(kill: true)
        #expect(FileManager.default.fileExists(atPath: left), "kill -9 leaves it")
        let next = try await RunningEmulator.start(topics: ["com.example.app=1"])
        #expect(!FileManager.default.fileExists(atPath: left))
        #expect(FileManager.default.fileExists(atPath: next.string("folder")))
        await next.stop()
    }
}
