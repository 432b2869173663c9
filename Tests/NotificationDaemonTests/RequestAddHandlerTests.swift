import DaemonTestSupport
import Foundation
import NotificationCore
@testable import NotificationDaemon
import NotificationDaemonClient
import Testing

/// An app's adds are answered on their connection, ahead of the router (`RequestAddHandler`): the
/// same answers, in the order the requests came, on a real Unix socket.
@Suite(.timeLimit(.minutes(2))) struct RequestAddHandlerTests {
    func body(_ identifier: String) throws -> Data {
        var content = NotificationContent()
        content.title = identifier
        return try JSONEncoder().encode(NotificationRequest(identifier: identifier, content: content, trigger: .timeInterval(3600, repeats: false)))
    }

    func problem(_ response: RawHTTPConnection.Response) throws -> LocalAPI.Problem {
        #expect(response.headers["content-type"] == "application/problem+json")
        return try JSONDecoder().decode(LocalAPI.Problem.self, from: response.body)
    }

    @Test func refusedAddsGetTheProblemTheRouterGivesForTheSameMistake() async throws {
        try await withDaemon { daemon in
            let app = try await daemon.authorizedApp("com.example.todo")
            let key = app.key
            let connection = try RawHTTPConnection(socketPath: daemon.socketPath)
            let tooLarge = Data(repeating: UInt8(ascii: " "), count: 2 * 1024 * 1024 + 1)
            // Each mistake, made in an add and in a call the router answers, one call at a time (the
            // router's answer owed would take the add too).
            let mistakes: [(add: Data, routed: Data)] = [
                (RawHTTPConnection.request("POST", "/v1/requests", key: nil, body: try body("a")), RawHTTPConnection.request("GET", "/v1/requests", key: nil)),
                (RawHTTPConnection.request("POST", "/v1/requests", key: "not-a-key", body: try body("a")),
                 RawHTTPConnection.request("GET", "/v1/requests", key: "not-a-key")),
            ]
            for (add, routed) in mistakes {
                try await connection.send(add)
                let added = try await connection.responses(1)[0]
                try await connection.send(routed)
                let answered = try await connection.responses(1)[0]
                #expect(added.status == 401 && answered.status == 401)
                #expect(try problem(added) == problem(answered))
                #expect(added.headers["server"] == "unotify" && added.headers["date"] != nil)
            }
            // A body past the limit: `413` with the same problem as the router's, and the connection goes on.
            try await connection.send(RawHTTPConnection.request("POST", "/v1/requests", key: key, body: tooLarge))
            let added = try await connection.responses(1)[0]
            try await connection.send(RawHTTPConnection.request("PUT", "/v1/strings", key: key, body: tooLarge))
            let answered = try await connection.responses(1)[0]
            #expect(added.status == 413 && answered.status == 413)
            #expect(try problem(added) == problem(answered))
            #expect(try problem(added).code == "bodyTooLarge")

            // A body that is not a request: refused as the router refused it, and nothing is added.
            try await connection.send(RawHTTPConnection.request("POST", "/v1/requests", key: key, body: Data(#"{"identifier": 3}"#.utf8)))
            let malformed = try problem(try await connection.responses(1)[0])
            #expect(malformed.status == 400 && malformed.code == "invalidRequest")
            #expect(malformed.detail.hasPrefix("The body is not a valid NotificationRequest"), "\(malformed.detail)")
            #expect(try await app.pending().isEmpty)
        }
    }

    @Test func pipelinedCallsAreAnsweredInTheOrderTheyCame() async throws {
        try await withDaemon { daemon in
            let app = try await daemon.authorizedApp("com.example.todo")
            // An add first: what follows it waits for its answer, then goes on to the router.
            let connection = try RawHTTPConnection(socketPath: daemon.socketPath)
            try await connection.send(
                RawHTTPConnection.request("POST", "/v1/requests", key: app.key, body: try body("a"))
                    + RawHTTPConnection.request("GET", "/v1/requests", key: app.key)
                    + RawHTTPConnection.request("GET", "/v1/health", key: nil)
            )
            let first = try await connection.responses(3)
            #expect(first.map(\.status) == [201, 200, 200])
            let listed = try JSONDecoder().decode([LocalAPI.PendingRequest].self, from: first[1].body)
            #expect(listed.map(\.request.identifier) == ["a"], "the list answered after the add saw it")
            #expect(String(decoding: first[2].body, as: UTF8.self).contains("ok"))

            // A call the router answers first: the adds after it go to the router too, in order.
            try await connection.send(
                RawHTTPConnection.request("GET", "/v1/health", key: nil)
                    + RawHTTPConnection.request("POST", "/v1/requests", key: app.key, body: try body("b"))
                    + RawHTTPConnection.request("POST", "/v1/requests", key: app.key, body: try body("c"))
                    + RawHTTPConnection.request("GET", "/v1/requests", key: app.key)
            )
            let second = try await connection.responses(4)
            #expect(second.map(\.status) == [200, 201, 201, 200])
            let all = try JSONDecoder().decode([LocalAPI.PendingRequest].self, from: second[3].body)
            #expect(all.map(\.request.identifier) == ["a", "b", "c"])

            // An add asking to close: answered, then the connection closes.
            try await connection.send(RawHTTPConnection.request("POST", "/v1/requests", key: app.key, body: try body("d"), headers: ["Connection: close"]))
            #expect(try await connection.responses(1).map(\.status) == [201])
            #expect(try await connection.isClosed())
            #expect(try await app.pending().map(\.request.identifier) == ["a", "b", "c", "d"])
        }
    }

    @Test func aClientThatShutsItsSideAfterSendingStillGetsItsAnswers() async throws {
        try await withDaemon { daemon in
            let app = try await daemon.authorizedApp("com.example.todo")
            // As `printf … | nc -N -U` sends: two adds and a list, then the end of its input at once,
            // which the daemon reads while the first add waits for the disk.
            let connection = try RawHTTPConnection(socketPath: daemon.socketPath)
            try await connection.send(
                RawHTTPConnection.request("POST", "/v1/requests", key: app.key, body: try body("a"))
                    + RawHTTPConnection.request("POST", "/v1/requests", key: app.key, body: try body("b"))
                    + RawHTTPConnection.request("GET", "/v1/requests", key: app.key)
            )
            try connection.finishSending()
            let answers = try await connection.responses(3)
            #expect(answers.map(\.status) == [201, 201, 200])
            let listed = try JSONDecoder().decode([LocalAPI.PendingRequest].self, from: answers[2].body)
            #expect(listed.map(\.request.identifier) == ["a", "b"])
            #expect(try await connection.isClosed())

            // An add cut short by the end of the input is dropped: 400, as for any cut request, then the
            // connection closes.
            let cut = try RawHTTPConnection(socketPath: daemon.socketPath)
            try await cut.send(RawHTTPConnection.request("POST", "/v1/requests", key: app.key, body: try body("c")).dropLast(10))
            try cut.finishSending()
            #expect(try await cut.responses(1).map(\.status) == [400])
            #expect(try await cut.isClosed())
            #expect(try await app.pending().map(\.request.identifier) == ["a", "b"])
        }
    }
}
