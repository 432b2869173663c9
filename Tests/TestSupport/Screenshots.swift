import Foundation

/// Where the tests that drive a surface as a person does keep their screenshots: `.build/screenshots/`.
package enum Screenshots {
    package static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent(".build/screenshots", isDirectory: true)
}
