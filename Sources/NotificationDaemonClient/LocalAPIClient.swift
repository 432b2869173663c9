package import AsyncHTTPClient
package import Foundation
package import NIOCore
package import NIOHTTP1
package import NotificationCore

/// A failed call of the daemon's local API.
package enum LocalAPIClientError: Error, Sendable, CustomStringConvertible {
    /// The daemon answered with a problem document.
    case problem(LocalAPI.Problem)
    /// The daemon could not be reached, or answered something that is not the local API.
    case transport(String)

    package var description: String {
        switch self {
        case .problem(let problem): "\(problem.title): \(problem.detail)"
        case .transport(let message): message
        }
    }
}

/// A client of the daemon's local API over its Unix domain socket, authenticated with one key (an
/// app's, or the administrator's).
package struct LocalAPIClient: Sendable {
    package let socketPath: String
    package let key: String
    private let http: HTTPClient

    package init(socketPath: String, key: String, http: HTTPClient = .shared) {
        self.socketPath = socketPath
        self.key = key
        self.http = http
    }

    private static let encoder = StreamingJSONEncoder()
    private static let decoder = JSONDecoder()

    /// Calls `method path` with an optional JSON body and decodes the JSON answer.
    package func call<Result: Decodable>(
        _ method: HTTPMethod,
        _ path: String,
        body: (some Encodable)? = nil as String?,
        timeout: TimeAmount = .seconds(30),
        as type: Result.Type
    ) async throws -> Result {
        let data = try await send(method, path, body: body, timeout: timeout)
        do {
            return try Self.decoder.decode(Result.self, from: data)
        } catch {
            throw LocalAPIClientError.transport("The daemon's answer to \(method) \(path) is not a \(Result.self): \(error)")
        }
    }

    /// Calls `method path` with an optional JSON body, expecting no answer body.
    package func call(_ method: HTTPMethod, _ path: String, body: (some Encodable)? = nil as String?, timeout: TimeAmount = .seconds(30)) async throws {
        _ = try await send(method, path, body: body, timeout: timeout)
    }

    /// Calls `method path` and returns the answer as it came: status, content type and body.
    package func raw(_ method: HTTPMethod, _ path: String, body: (some Encodable)? = nil as String?, timeout: TimeAmount = .seconds(30))
        async throws -> (status: Int, contentType: String?, body: Data)
    {
        guard let url = URL(httpURLWithSocketPath: socketPath, uri: path) else {
            throw LocalAPIClientError.transport("\(socketPath) cannot be used as a socket path.")
        }
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(key)")
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: try Self.encoder.encode(body)))
        }
        let response: HTTPClientResponse
        do {
            response = try await http.execute(request, timeout: timeout)
        } catch {
            throw LocalAPIClientError.transport("The daemon at \(socketPath) could not be reached (\(error)). Is `unotify daemon` running?")
        }
        let bytes = try await response.body.collect(upTo: 64 << 20)
        return (Int(response.status.code), response.headers.first(name: "Content-Type"), Data(buffer: bytes))
    }

    private func send(_ method: HTTPMethod, _ path: String, body: (some Encodable)?, timeout: TimeAmount) async throws -> Data {
        let (status, _, data) = try await raw(method, path, body: body, timeout: timeout)
        guard (200..<300).contains(status) else {
            if let problem = try? Self.decoder.decode(LocalAPI.Problem.self, from: data) {
                throw LocalAPIClientError.problem(problem)
            }
            throw LocalAPIClientError.transport("\(method) \(path) answered \(status).")
        }
        return data
    }
}

extension Data {
    init(buffer: ByteBuffer) {
        self = buffer.readableBytesView.withContiguousStorageIfAvailable { Data($0) } ?? Data(buffer.readableBytesView)
    }
}
