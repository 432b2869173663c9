import Foundation
import Testing
import TestSupport

/// A provider that authenticates with a client certificate, as APNs' certificate-based connections
/// do, pushes through the emulator: the certificate is issued by the emulator's authority in its
/// folder (`unotify gateway certificates create --gateway-dir`).
@Suite(.timeLimit(.minutes(1))) struct CertificateProviderTests {
    @Test func aPushSentWithACertificateTheEmulatorIssuedReachesTheDevice() async throws {
        let emulator = try await RunningEmulator.start(topics: ["com.example.app=1"])
        let folder = try makeTestDirectory()
        let issued = try await Program.run(ChildProcess.built("unotify").path, [
            "gateway", "certificates", "create", "--gateway-dir", emulator.string("folder"), "--app", "com.example.app",
            "--output", folder.appendingPathComponent("provider").path,
        ], environment: ["UNOTIFY_CONFIG": "/dev/null"], mergingErrors: true)
        #expect(issued.succeeded, "\(issued.output)")
        let device = emulator.tokens("com.example.app")[0]
        let sent = try await Program.run("/usr/bin/curl", [
            "-s", "--http2", "--cacert", emulator.string("caFile"), "-o", "/dev/null", "-w", "%{http_code}",
            "--cert", folder.appendingPathComponent("provider.pem").path, "--key", folder.appendingPathComponent("provider-key.pem").path,
            "-H", "apns-topic: com.example.app", "-d", #"{"aps":{"alert":"Signed by a certificate"}}"#,
            "\(emulator.string("sandbox"))/3/device/\(device)",
        ])
        #expect(sent.output == "200")
        let pushes = try await emulator.received(device, count: 1)
        #expect(pushes.count == 1)
        await emulator.stop()
    }
}
