/// The apps' `requestAuthorization` calls, from the step that asks to the answer: given at once (the
/// app is already decided, or provisional) with the step that asked, or later by the person. An
/// answer to one app's prompt can only complete that app's calls.
struct AuthorizationCalls {
    /// One app's call.
    struct Call: Hashable {
        let app: String
        /// Its number, which the app's machine carries from the question to its answer.
        let number: UInt64
    }

    /// Call numbers start at a random point in each run: a call stored by an earlier run (its prompt
    /// still showing) never shares a number with a call of this one.
    private var nextNumber = UInt64.random(in: 0...(UInt64.max / 2))
    /// Calls whose step is being saved; the answers that came with it.
    private var expected: Set<Call> = []
    private var answers: [Call: Bool] = [:]
    /// Calls waiting for the person.
    private var waiters: [Call: CheckedContinuation<Bool, any Error>] = [:]

    /// Numbers a new call of `app`, expected from now on until ``end(_:)``.
    mutating func begin(_ app: String) -> Call {
        let call = Call(app: app, number: nextNumber)
        nextNumber &+= 1
        expected.insert(call)
        return call
    }

    /// The answer that came with the step that asked, if one did.
    mutating func takeAnswer(_ call: Call) -> Bool? {
        answers.removeValue(forKey: call)
    }

    /// Waits for the person's answer to `call`.
    mutating func wait(_ call: Call, _ continuation: CheckedContinuation<Bool, any Error>) {
        waiters[call] = continuation
    }

    /// The call is over, answered or not.
    mutating func end(_ call: Call) {
        expected.remove(call)
        answers.removeValue(forKey: call)
    }

    /// The app is gone: every call of it waiting for the person fails with `error`, and nothing it
    /// expects is kept.
    mutating func fail(app: String, with error: any Error) {
        for call in waiters.keys where call.app == app {
            waiters.removeValue(forKey: call)?.resume(throwing: error)
        }
        expected = expected.filter { $0.app != app }
        answers = answers.filter { $0.key.app != app }
    }

    /// An app's machine answered its call `number`: the caller waiting hears it, or it is kept for
    /// the caller whose step is being saved.
    mutating func complete(app: String, number: UInt64, granted: Bool) {
        let call = Call(app: app, number: number)
        if let waiter = waiters.removeValue(forKey: call) {
            waiter.resume(returning: granted)
        } else if expected.contains(call) {
            answers[call] = granted
        }
    }
}
