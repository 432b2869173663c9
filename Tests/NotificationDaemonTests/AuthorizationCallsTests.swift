import DaemonTestSupport
import Foundation
@testable import NotificationDaemon
@testable import NotificationEngine
import Testing
import TestSupport

/// The apps' authorization calls alone: an answer reaches the call it answers, and only while the
/// call is under way.
@Suite struct AuthorizationCallsTests {
    @Test func anAnswerThatCameWithTheStepIsKeptForItsCallerUntilTheCallEnds() {
        var calls = AuthorizationCalls()
        let call = calls.begin("com.example.todo")
        calls.complete(app: "com.example.todo", number: call.number, granted: true)
        let answer = calls.takeAnswer(call)
        #expect(answer == true)
        let again = calls.takeAnswer(call)
        #expect(again == nil, "taken once")
        calls.end(call)
        calls.complete(app: "com.example.todo", number: call.number, granted: false)
        let afterTheEnd = calls.takeAnswer(call)
        #expect(afterTheEnd == nil, "an answer to a call that ended is not kept")
    }

    @Test func anotherAppsAnswerDoesNotCompleteACall() {
        var calls = AuthorizationCalls()
        let call = calls.begin("com.example.todo")
        calls.complete(app: "com.example.other", number: call.number, granted: true)
        let answer = calls.takeAnswer(call)
        #expect(answer == nil)
        let next = calls.begin("com.example.todo")
        #expect(next.number == call.number &+ 1, "each call has a number of its own")
    }

    @Test func aCallWaitingForThePersonHearsTheAnswer() async throws {
        let box = Calls()
        let call = await box.begin("com.example.todo")
        async let granted = box.wait(call)
        try await eventually("the call to wait for the person") { await box.isWaiting }
        await box.complete(app: "com.example.todo", number: call.number, granted: true)
        #expect(try await granted)
    }

    /// The app removed while its call waits: the call fails, and another app's call waits on.
    @Test func aCallOfAnAppThatIsRemovedFails() async throws {
        let box = Calls()
        let removed = await box.begin("com.example.todo")
        let other = await box.begin("com.example.other")
        async let failed = box.wait(removed)
        try await eventually("the call to wait for the person") { await box.isWaiting }
        await box.fail(app: "com.example.todo")
        do {
            _ = try await failed
            Issue.record("the removed app's call was answered")
        } catch let error as DaemonError {
            #expect(error.code == .appNotFound)
        }
        async let granted = box.wait(other)
        try await eventually("the other call to wait") { await box.waiting == 2 }
        await box.complete(app: "com.example.other", number: other.number, granted: true)
        #expect(try await granted)
    }

    /// Through the engine over a real SQLite file: an app removed while its `requestAuthorization`
    /// waits for the person gets `appNotFound`, not a call that never returns.
    @Test(.timeLimit(.minutes(1))) func anAppRemovedWhileItAsksHearsItWasRemoved() async throws {
        let path = try makeTestDirectory().appendingPathComponent("db.sqlite").path
        let engine = await DaemonEngine(store: try SQLiteDaemonStore(path: path), clock: ManualDaemonClock())
        _ = try await engine.registerApp("com.example.todo")
        async let asked = engine.requestAuthorization("com.example.todo", options: [.alert])
        try await eventually("the prompt to show") { (try? await engine.authorizationPrompts().isEmpty) == false }
        try await engine.removeApp("com.example.todo")
        do {
            _ = try await asked
            Issue.record("the call of a removed app returned an answer")
        } catch let error as DaemonError {
            #expect(error.code == .appNotFound)
        }
    }

    private actor Calls {
        var calls = AuthorizationCalls()
        var isWaiting = false
        var waiting = 0
        func begin(_ app: String) -> AuthorizationCalls.Call { calls.begin(app) }
        func complete(app: String, number: UInt64, granted: Bool) { calls.complete(app: app, number: number, granted: granted) }
        func fail(app: String) { calls.fail(app: app, with: DaemonError(.appNotFound, "removed")) }
        func wait(_ call: AuthorizationCalls.Call) async throws -> Bool {
            try await withCheckedThrowingContinuation { continuation in
                calls.wait(call, continuation)
                isWaiting = true
                waiting += 1
            }
        }
    }
}
