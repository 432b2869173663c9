import Foundation
import Synchronization
import NIOCore
import NIOPosix
import NIOSSL
@testable import PushGateway
import Testing
import TestSupport

/// The device links' TLS (``LinkTLSHandler``) against SwiftNIO SSL's client, over real TCP on
/// loopback: an echo server behind it gives back exactly what the client sent, whatever the sizes
/// of its writes and of the records, with TLS 1.2 and 1.3; what is older is refused; a close on
/// either side ends the connection cleanly.
@Suite struct LinkTLSTests {
    static let authority = Result { try GatewayCertificateAuthority(name: "Link TLS test CA") }

    /// A listener on loopback: TLS, then an echo of every byte (a message `bye` closes from the server's side).
    final class EchoServer: Sendable {
        let channel: any Channel
        let closedConnections = Tally()

        init(group: any EventLoopGroup, context: LinkTLSContext) async throws {
            let closed = closedConnections
            channel = try await ServerBootstrap(group: group)
                .childChannelInitializer { channel in
                    channel.closeFuture.whenComplete { _ in closed.add() }
                    return channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandlers([try LinkTLSHandler(context: context), Echo()])
                    }
                }
                .bind(host: "127.0.0.1", port: 0)
                .get()
        }

        var port: Int { channel.localAddress!.port! }
    }

    final class Tally: Sendable {
        private let count = Mutex(0)
        func add() { count.withLock { $0 += 1 } }
        var value: Int { count.withLock { $0 } }
    }

    final class Echo: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let bytes = unwrapInboundIn(data)
            if bytes.readableBytesView.elementsEqual("bye".utf8) {
                context.close(promise: nil)
                return
            }
            context.write(wrapOutboundOut(bytes), promise: nil)
        }

        func channelReadComplete(context: ChannelHandlerContext) {
            context.flush()
        }
    }

    /// The client's side: collects what it reads and the errors it sees.
    final class Collector: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let received = Mutex([UInt8]())
        let errors = Mutex([String]())

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let bytes = unwrapInboundIn(data)
            received.withLock { $0.append(contentsOf: bytes.readableBytesView) }
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            errors.withLock { $0.append(String(describing: error)) }
            context.close(promise: nil)
        }
    }

    struct Setup {
        let group: MultiThreadedEventLoopGroup
        let server: EchoServer
        let clientTLS: NIOSSLContext

        init(lowest: TLSVersion = .tlsv12, highest: TLSVersion = .tlsv13) async throws {
            let authority = try LinkTLSTests.authority.get()
            let issued = try authority.issueServerCertificate(for: ["localhost"])
            let context = try LinkTLSContext(certificateChainPEM: issued.certificatePEM, privateKeyPEM: issued.privateKeyPEM, listener: "test listener")
            group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
            server = try await EchoServer(group: group, context: context)
            var configuration = TLSConfiguration.makeClientConfiguration()
            configuration.trustRoots = .certificates([try NIOSSLCertificate(bytes: Array(try authority.certificatePEM.utf8), format: .pem)])
            configuration.minimumTLSVersion = lowest
            configuration.maximumTLSVersion = highest
            clientTLS = try NIOSSLContext(configuration: configuration)
        }

        func connect(_ collector: Collector) async throws -> any Channel {
            try await ClientBootstrap(group: group)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandlers([
                            try NIOSSLClientHandler(context: clientTLS, serverHostname: "localhost"), collector,
                        ])
                    }
                }
                .connect(host: "127.0.0.1", port: server.port)
                .get()
        }

        func shutdown() async throws {
            try await server.channel.close()
            try await group.shutdownGracefully()
        }
    }

    @Test(arguments: [TLSVersion.tlsv12, .tlsv13])
    func whatTheDeviceSendsComesBackWhateverTheSizesOfWritesAndRecords(version: TLSVersion) async throws {
        let setup = try await Setup(lowest: version, highest: version)
        let collector = Collector()
        let client = try await setup.connect(collector)
        var generator = SystemRandomNumberGenerator()
        // One byte, a few, one record and one more, several records, and many small writes in one flush.
        let sizes = [1, 7, 16_385, 70_000] + Array(repeating: 33, count: 300)
        var sent: [UInt8] = []
        for size in sizes {
            let chunk = (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
            sent += chunk
            client.write(ByteBuffer(bytes: chunk), promise: nil)
            if size > 33 { client.flush() }
        }
        client.flush()
        let expected = sent.count
        try await waitFor("the echo of \(expected) bytes", within: 20) { collector.received.withLock { $0.count } >= expected }
        #expect(collector.received.withLock { $0 } == sent)
        #expect(collector.errors.withLock { $0 }.isEmpty)
        try await client.close()
        try await setup.shutdown()
    }

    @Test func aClientOfferingOnlyTLS11IsRefused() async throws {
        let setup = try await Setup(lowest: .tlsv11, highest: .tlsv11)
        let collector = Collector()
        let client = try await setup.connect(collector)
        try await waitFor("the refused handshake to close the connection", within: 20) { !client.isActive }
        #expect(collector.errors.withLock { $0 }.contains { $0.contains("handshakeFailed") })
        #expect(collector.received.withLock { $0 }.isEmpty)
        try await waitFor("the server's side to close", within: 20) { setup.server.closedConnections.value == 1 }
        try await setup.shutdown()
    }

    @Test func aCloseFromTheServerSendsCloseNotify() async throws {
        let setup = try await Setup()
        let collector = Collector()
        let client = try await setup.connect(collector)
        try await client.writeAndFlush(ByteBuffer(string: "bye"))
        try await waitFor("the server to close", within: 20) { !client.isActive }
        // Without close_notify, SwiftNIO SSL reports an unclean shutdown.
        #expect(collector.errors.withLock { $0 }.isEmpty)
        try await setup.shutdown()
    }

    @Test func aCloseFromTheDeviceEndsTheLink() async throws {
        let setup = try await Setup()
        let collector = Collector()
        let client = try await setup.connect(collector)
        try await client.writeAndFlush(ByteBuffer(string: "ping"))
        try await waitFor("the echo", within: 20) { collector.received.withLock { $0 } == Array("ping".utf8) }
        try await client.close()
        try await waitFor("the server's side to close", within: 20) { setup.server.closedConnections.value == 1 }
        try await setup.shutdown()
    }

    @Test func bytesThatAreNotTLSCloseTheConnection() async throws {
        let setup = try await Setup()
        let plain = try await ClientBootstrap(group: setup.group).connect(host: "127.0.0.1", port: setup.server.port).get()
        try await plain.writeAndFlush(ByteBuffer(string: "GET /v1/device-link HTTP/1.1\r\nHost: localhost\r\n\r\n"))
        try await waitFor("the server to close", within: 20) { setup.server.closedConnections.value == 1 }
        try await plain.closeFuture.get()
        try await setup.shutdown()
    }

    @Test func aKeyThatDoesNotMatchTheCertificateIsRefusedAtStart() throws {
        let authority = try Self.authority.get()
        let issued = try authority.issueServerCertificate(for: ["localhost"])
        let other = try authority.issueServerCertificate(for: ["localhost"])
        #expect(throws: ProviderServerError.self) {
            try LinkTLSContext(certificateChainPEM: issued.certificatePEM, privateKeyPEM: other.privateKeyPEM, listener: "test listener")
        }
        #expect(throws: ProviderServerError.self) {
            try LinkTLSContext(certificateChainPEM: "not PEM", privateKeyPEM: issued.privateKeyPEM, listener: "test listener")
        }
    }
}
