import Foundation
import Testing
import TestSupport
import WebNotificationCenter

/// The center's credential file: made private, read again when another process replaces it, and
/// never left half-written or holding a secret no one was given.
@Suite struct WebCredentialTests {
    @Test func itIsMadeOnceKeptPrivateAndAnEmptyOneIsReplaced() throws {
        let path = try makeTestDirectory().appendingPathComponent("center.key").path
        let original = try WebCredential(at: path).secret
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int == 0o600)
        #expect(try WebCredential(at: path).secret == original, "a start keeps the pairing")
        // A crash between creating and writing left it empty: a new one is made.
        #expect(truncate(path, 0) == 0)
        let after = try WebCredential(at: path)
        #expect(!after.secret.isEmpty && after.secret != original)
        #expect(WebCredential.read(path) == after.secret)
    }

    @Test func aReplacementHereOrByAnotherProcessCountsAtTheNextRequest() throws {
        let path = try makeTestDirectory().appendingPathComponent("center.key").path
        let credential = try WebCredential(at: path)
        let old = credential.secret
        let mine = try credential.rotate()
        #expect(credential.accepts(mine) && !credential.accepts(old))
        // `unotify center revoke`, another process: read at the next check.
        let theirs = try WebCredential.rotate(at: path).secret
        #expect(credential.accepts(theirs) && !credential.accepts(mine))
    }

    @Test func replacementsAtOnceLeaveOneWholeSecretThatWasGiven() async throws {
        let folder = try makeTestDirectory()
        let path = folder.appendingPathComponent("center.key").path
        _ = try WebCredential(at: path)
        for _ in 0..<20 {
            let given = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<4 { group.addTask { try WebCredential.rotate(at: path).secret } }
                return try await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
            #expect(given.count == 4)
            #expect(given.contains(try #require(WebCredential.read(path))))
        }
        // No file written aside is left behind.
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["center.key"])
    }
}
