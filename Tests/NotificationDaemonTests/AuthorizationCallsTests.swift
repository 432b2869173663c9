@testable import NotificationDaemon
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

    private actor Calls {
        var calls = AuthorizationCalls()
        var isWaiting = false
        func begin(_ app: String) -> AuthorizationCalls.Call { calls.begin(app) }
        func complete(app: String, number: UInt64, granted: Bool) { calls.complete(app: app, number: number, granted: granted) }
        func wait(_ call: AuthorizationCalls.Call) async throws -> Bool {
            try await withCheckedThrowingContinuation { continuation in
                calls.wait(call, continuation)
                isWaiting = true
            }
        }
    }
}
