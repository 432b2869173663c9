// swift-tools-version: 6.1
import PackageDescription

/// Settings every target of ours is built with: Swift 6 mode and the upcoming features that keep
/// imports and existentials explicit.
let strictSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

/// Where Apple's frameworks do not exist: the shim and the UIKit part use ours there.
let nonApplePlatforms: [Platform] = [.linux, .windows, .android, .wasi, .openbsd]

/// Tests hold app code written as for iOS (`Error`, not `any Error`), so they use Swift 6 mode only.
let testSettings: [SwiftSetting] = [.swiftLanguageMode(.v6)]

let package = Package(
    name: "OpenUserNotifications",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "OpenUserNotifications", targets: ["OpenUserNotifications"]),
        .library(name: "OpenUserNotificationsShim", targets: ["OpenUserNotificationsShim"]),
        .library(name: "OpenUserNotificationsUIKit", targets: ["OpenUserNotificationsUIKit"]),
        .library(name: "OpenUserNotificationsPushKit", targets: ["OpenUserNotificationsPushKit"]),
        .library(name: "OpenUserNotificationsUI", targets: ["OpenUserNotificationsUI"]),
        .library(name: "OpenUserNotificationsTesting", targets: ["OpenUserNotificationsTesting"]),
        .library(name: "OpenUserNotificationsLink", targets: ["OpenUserNotificationsLink"]),
        .executable(name: "unotify", targets: ["unotify"]),
        .executable(name: "todo-example", targets: ["TodoExample"]),
        .executable(name: "push-example", targets: ["PushExample"]),
        .executable(name: "push-example-service", targets: ["PushExampleService"]),
        .executable(name: "push-example-content", targets: ["PushExampleContent"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.6.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.8.1"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.3"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
    ],
    targets: [
        .target(
            name: "NotificationCore",
            dependencies: [.product(name: "HeapModule", package: "swift-collections")],
            swiftSettings: strictSettings
        ),
        .target(
            name: "PrivateFiles",
            swiftSettings: strictSettings
        ),
        // The client's end of a WebSocket: the device link's, the apps' and the watch's one path.
        .target(
            name: "EventLoopWebSocket",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: strictSettings
        ),
        // What every listener holds its connections to: deadlines, a share of the open files, 431.
        .target(
            name: "ConnectionLifecycle",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "ProcessSpawning",
            swiftSettings: strictSettings
        ),
        .target(
            name: "SQLiteDurability",
            dependencies: [
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "NotificationAttachmentStore",
            dependencies: ["NotificationCore"],
            swiftSettings: strictSettings
        ),
        .target(
            name: "OpenUserNotifications",
            dependencies: [
                "NotificationCore",
                "NotificationAttachmentStore",
                "NotificationEngine",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "OpenUserNotificationsShim",
            dependencies: [
                .target(name: "OpenUserNotifications", condition: .when(platforms: nonApplePlatforms)),
                .target(name: "OpenUserNotificationsUIKit", condition: .when(platforms: nonApplePlatforms)),
                .target(name: "OpenUserNotificationsPushKit", condition: .when(platforms: nonApplePlatforms)),
                .target(name: "OpenUserNotificationsUI", condition: .when(platforms: nonApplePlatforms)),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "OpenUserNotificationsUI",
            dependencies: [
                .target(name: "OpenUserNotifications", condition: .when(platforms: nonApplePlatforms)),
                .target(name: "OpenUserNotificationsUIKit", condition: .when(platforms: nonApplePlatforms)),
                .target(name: "OpenUserNotificationsLink", condition: .when(platforms: nonApplePlatforms)),
                .target(name: "NotificationCore", condition: .when(platforms: nonApplePlatforms)),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "OpenUserNotificationsPushKit",
            dependencies: [
                .target(name: "OpenUserNotifications", condition: .when(platforms: nonApplePlatforms)),
                .target(name: "NotificationCore", condition: .when(platforms: nonApplePlatforms)),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "OpenUserNotificationsUIKit",
            dependencies: [
                .target(name: "OpenUserNotifications", condition: .when(platforms: nonApplePlatforms)),
                .target(name: "OpenUserNotificationsLink", condition: .when(platforms: nonApplePlatforms)),
                .target(name: "NotificationCore", condition: .when(platforms: nonApplePlatforms)),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "OpenUserNotificationsTesting",
            dependencies: ["OpenUserNotifications", "NotificationCore", "NotificationEngine"],
            swiftSettings: strictSettings
        ),
        // The daemon's engine: every app's machine kept in a store, its steps, what they do, the
        // scheduler's rounds. No network, no SQLite: the daemon serves it, a store keeps it.
        .target(
            name: "NotificationEngine",
            dependencies: [
                "NotificationCore",
                "NotificationAttachmentStore",
                "ProcessSpawning",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "NotificationDaemon",
            dependencies: [
                "EventLoopWebSocket",
                "ConnectionLifecycle",
                "NotificationCore",
                "NotificationEngine",
                "SQLiteDurability",
                "PrivateFiles",
                "NotificationAttachmentStore",
                "ProcessSpawning",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                "MetricsEndpoint",
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "PushGateway",
            dependencies: [
                "ConnectionLifecycle",
                "NotificationCore",
                "SQLiteDurability",
                "PrivateFiles",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                "MetricsEndpoint",
            ],
            swiftSettings: strictSettings
        ),
        // The APNs emulator for providers' tests: the gateway on a clock that moves when told, with
        // scripted faults, simulated devices and a control API (Docs/emulator.md).
        .target(
            name: "APNsEmulator",
            dependencies: [
                "ConnectionLifecycle",
                "NotificationCore",
                "PrivateFiles",
                "PushGateway",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
        // The D-Bus wire protocol, spoken over the bus's Unix socket: no C library needed to build or run.
        .target(
            name: "DBus",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        // The Linux desktop: the daemon's notifications through the desktop's freedesktop.org server.
        .target(
            name: "DesktopNotifications",
            dependencies: [
                "DBus",
                "NotificationCore",
                "NotificationEngine",
                "ProcessSpawning",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
        // The web notification center: the page, its files (Page/, shipped as they are) and its routes.
        .target(
            name: "WebNotificationCenter",
            dependencies: [
                "ConnectionLifecycle",
                "NotificationCore",
                "NotificationDaemon",
                "NotificationEngine",
                "PrivateFiles",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            resources: [.copy("Page")],
            swiftSettings: strictSettings
        ),
        // The Prometheus endpoint of `unotify`'s servers: one registry per process, served on loopback.
        .target(
            name: "MetricsEndpoint",
            dependencies: [
                "ConnectionLifecycle",
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "NotificationDaemonClient",
            dependencies: [
                "EventLoopWebSocket",
                "NotificationCore",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "OpenUserNotificationsLink",
            dependencies: [
                "OpenUserNotifications",
                "NotificationCore",
                "NotificationDaemonClient",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "unotify",
            dependencies: [
                "ConnectionLifecycle",
                "NotificationCore",
                "NotificationDaemon",
                "NotificationEngine",
                "WebNotificationCenter",
                "DesktopNotifications",
                "PrivateFiles",
                "PushGateway",
                "APNsEmulator",
                "MetricsEndpoint",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                "NotificationDaemonClient",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "TodoExample",
            dependencies: ["OpenUserNotifications", "OpenUserNotificationsLink"],
            path: "Examples/TodoExample",
            swiftSettings: testSettings
        ),
        .executableTarget(
            name: "PushExample",
            dependencies: ["OpenUserNotificationsShim"],
            path: "Examples/PushExample",
            swiftSettings: testSettings
        ),
        .executableTarget(
            name: "PushExampleService",
            dependencies: ["OpenUserNotificationsShim", "OpenUserNotificationsLink", .product(name: "Crypto", package: "swift-crypto")],
            path: "Examples/PushExampleService",
            // The tutorial's code is Swift 5 (its URLSession handler is not `@Sendable`), as iOS
            // projects of its day were.
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        .executableTarget(
            name: "PushExampleContent",
            dependencies: ["OpenUserNotificationsShim", "OpenUserNotificationsUI"],
            path: "Examples/PushExampleContent",
            exclude: ["Info.plist"],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        // Service extensions that misbehave on purpose, for the daemon's tests.
        .executableTarget(
            name: "ServiceExtensionFixture",
            dependencies: ["OpenUserNotifications", "OpenUserNotificationsLink"],
            path: "Tests/Fixtures/ServiceExtensionFixture",
            swiftSettings: testSettings
        ),
        // A content extension that calls every part of its extension context, for the daemon's tests.
        .executableTarget(
            name: "ContentExtensionFixture",
            dependencies: ["OpenUserNotifications", "OpenUserNotificationsUI", "OpenUserNotificationsUIKit"],
            path: "Tests/Fixtures/ContentExtensionFixture",
            swiftSettings: testSettings
        ),
        // What several test targets share (they all run in one test process).
        .target(
            name: "TestSupport",
            dependencies: ["ProcessSpawning"],
            path: "Tests/TestSupport",
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "SQLiteDurabilityTests",
            dependencies: ["SQLiteDurability", "TestSupport", .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "ProcessSpawningTests",
            dependencies: ["ProcessSpawning", "TestSupport"],
            swiftSettings: testSettings
        ),
        // A daemon run in the test process over a real SQLite file, with a manual clock, reached through
        // its local API as apps and presenters reach it: for the daemon's tests and its surfaces'.
        .target(
            name: "DaemonTestSupport",
            dependencies: [
                "TestSupport",
                "NotificationCore",
                "NotificationDaemon",
                "NotificationEngine",
                "NotificationDaemonClient",
                "WebNotificationCenter",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Tests/DaemonTestSupport",
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "WebNotificationCenterTests",
            dependencies: [
                "DaemonTestSupport",
                "TestSupport",
                "NotificationCore",
                "NotificationDaemon",
                "NotificationDaemonClient",
                "WebNotificationCenter",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "NotificationDaemonTests",
            dependencies: [
                "DaemonTestSupport",
                "EventLoopWebSocket",
                "TestSupport",
                "ProcessSpawning",
                "NotificationCore",
                "NotificationDaemon",
                "NotificationEngine",
                "PushGateway",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                "NotificationDaemonClient",
                "OpenUserNotifications",
                "OpenUserNotificationsLink",
                "OpenUserNotificationsTesting",
                "OpenUserNotificationsUIKit",
                "OpenUserNotificationsPushKit",
                "WebNotificationCenter",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            // A hostile client of its own, run by the tests.
            exclude: ["Clients"],
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "PushGatewayTests",
            dependencies: [
                "TestSupport",
                "ProcessSpawning",
                "NotificationCore",
                "PushGateway",
                "APNsEmulator",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            // APNs clients of other languages, run by the tests.
            exclude: ["Clients"],
            swiftSettings: testSettings
        ),
        .testTarget(
            // The APNs emulator: its parts alone, and providers' tests (Swift, Python, the shell)
            // against the real `unotify emulator`.
            name: "APNsEmulatorTests",
            dependencies: [
                "TestSupport",
                "APNsEmulator",
                "NotificationCore",
                "PushGateway",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: testSettings
        ),
        .testTarget(
            // The metrics of `unotify serve` and `unotify gateway`, read from their endpoints.
            name: "MetricsEndpointTests",
            dependencies: ["TestSupport"],
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "DesktopNotificationsTests",
            dependencies: [
                "DBus",
                "DaemonTestSupport",
                "DesktopNotifications",
                "NotificationCore",
                "NotificationDaemon",
                "NotificationEngine",
                "TestSupport",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "ConnectionLifecycleTests",
            dependencies: [
                "ConnectionLifecycle",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "NotificationCoreTests",
            dependencies: [
                "TestSupport",
                "NotificationCore",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "OpenUserNotificationsTests",
            dependencies: ["TestSupport", "NotificationCore", "OpenUserNotifications", "OpenUserNotificationsShim", "OpenUserNotificationsTesting"],
            resources: [.copy("Fixtures")],
            swiftSettings: testSettings
        ),
    ]
)

// Benchmarks build only when asked for, so the everyday build and CI stay lean:
// `OUN_BENCHMARKS=1 swift package --package-path . benchmark` (see BENCHMARKS.md).
if Context.environment["OUN_BENCHMARKS"] != nil {
    package.dependencies.append(
        .package(url: "https://github.com/ordo-one/benchmark.git", from: "1.38.1", traits: ["MallocInterposer"])
    )
    package.targets.append(
        .target(name: "BenchmarkSupport", path: "Benchmarks/BenchmarkSupport", swiftSettings: strictSettings)
    )
    package.targets.append(
        .executableTarget(
            name: "NotificationBenchmarks",
            dependencies: [
                "BenchmarkSupport",
                "NotificationCore",
                "OpenUserNotifications",
                "OpenUserNotificationsTesting",
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/NotificationBenchmarks",
            swiftSettings: strictSettings,
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        )
    )
    // The daemon at scale: a driver that seeds a million pending requests and measures the real
    // `unotify` binary (see BENCHMARKS.md).
    package.targets.append(
        .executableTarget(
            name: "DaemonBenchmarks",
            dependencies: [
                "BenchmarkSupport",
                "NotificationCore",
                "NotificationDaemon",
                "NotificationEngine",
                "NotificationDaemonClient",
                "PrivateFiles",
                "ProcessSpawning",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Benchmarks/DaemonBenchmarks",
            swiftSettings: testSettings
        )
    )
    // The service extension the push-path benchmark measures pushes through.
    package.targets.append(
        .executableTarget(
            name: "TrivialServiceExtension",
            dependencies: ["OpenUserNotifications", "OpenUserNotificationsLink"],
            path: "Benchmarks/TrivialServiceExtension",
            swiftSettings: testSettings
        )
    )
    // The push path with the real `unotify` binary: provider → delegate latency, memory per device link.
    package.dependencies.append(.package(url: "https://github.com/HdrHistogram/hdrhistogram-swift.git", from: "0.2.0"))
    package.targets.append(
        .executableTarget(
            name: "GatewayBenchmarks",
            dependencies: [
                "BenchmarkSupport",
                "NotificationCore",
                "PushGateway",
                "SQLiteDurability",
                .product(name: "GRDB", package: "GRDB.swift"),
                "OpenUserNotifications",
                "OpenUserNotificationsLink",
                "NotificationDaemonClient",
                "ProcessSpawning",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Benchmarks/GatewayBenchmarks",
            exclude: ["provider-api.sh"],
            swiftSettings: testSettings
        )
    )
}
