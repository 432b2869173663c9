import Foundation
import NotificationCore
import Testing

/// A content extension's Info.plist, read as the system reads it: its categories (one or several),
/// its ratio, its flags; and a clear refusal naming the key for what is missing or wrong.
@Suite struct ContentExtensionAttributesTests {
    static func plist(_ attributes: String, point: String = ContentExtensionAttributes.extensionPoint) -> Data {
        Data("""
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0"><dict><key>NSExtension</key><dict>
            <key>NSExtensionAttributes</key><dict>\(attributes)</dict>
            <key>NSExtensionPointIdentifier</key><string>\(point)</string>
            </dict></dict></plist>
            """.utf8)
    }

    @Test func theSeedsKeysAreRead() throws {
        let attributes = try ContentExtensionAttributes(infoPlist: Self.plist("""
            <key>UNNotificationExtensionCategory</key><array><string>customUI</string><string>photo</string></array>
            <key>UNNotificationExtensionInitialContentSizeRatio</key><real>0.2</real>
            <key>UNNotificationExtensionDefaultContentHidden</key><true/>
            <key>UNNotificationExtensionOverridesDefaultTitle</key><true/>
            <key>UNNotificationExtensionUserInteractionEnabled</key><true/>
            """))
        #expect(attributes == ContentExtensionAttributes(categories: ["customUI", "photo"], initialContentSizeRatio: 0.2, defaultContentHidden: true,
                                                         overridesDefaultTitle: true, userInteractionEnabled: true))
    }

    @Test func oneCategoryAsAStringAndTheFlagsOffWhenAbsent() throws {
        // Xcode's template writes the ratio as a number, and tutorials as a string.
        let attributes = try ContentExtensionAttributes(infoPlist: Self.plist("""
            <key>UNNotificationExtensionCategory</key><string>myNotificationCategory</string>
            <key>UNNotificationExtensionInitialContentSizeRatio</key><string>1</string>
            """))
        #expect(attributes == ContentExtensionAttributes(categories: ["myNotificationCategory"], initialContentSizeRatio: 1))
    }

    @Test func whatIsMissingOrWrongIsNamed() {
        func problem(_ data: Data) -> String {
            do {
                _ = try ContentExtensionAttributes(infoPlist: data)
                return "accepted"
            } catch {
                return error.description
            }
        }
        let ratio = "<key>UNNotificationExtensionInitialContentSizeRatio</key><real>0.5</real>"
        #expect(problem(Self.plist(ratio)).contains("UNNotificationExtensionCategory is required"))
        #expect(problem(Self.plist("<key>UNNotificationExtensionCategory</key><string>a</string>")).contains("UNNotificationExtensionInitialContentSizeRatio is required"))
        #expect(problem(Self.plist("<key>UNNotificationExtensionCategory</key><array><string>a</string><string>a</string></array>" + ratio)).contains("each category once"))
        #expect(problem(Self.plist("<key>UNNotificationExtensionCategory</key><array/>" + ratio)).contains("at least one category"))
        #expect(problem(Self.plist("<key>UNNotificationExtensionCategory</key><string>a</string><key>UNNotificationExtensionInitialContentSizeRatio</key><real>0</real>"))
            .contains("0.01 to 10"))
        #expect(problem(Self.plist("<key>UNNotificationExtensionCategory</key><string>a</string>" + ratio + "<key>UNNotificationExtensionDefaultContentHidden</key><string>maybe</string>"))
            .contains("UNNotificationExtensionDefaultContentHidden must be a Boolean"))
        #expect(problem(Self.plist("<key>UNNotificationExtensionCategory</key><string>a</string>" + ratio, point: "com.apple.usernotifications.service"))
            .contains("NSExtensionPointIdentifier"))
        #expect(problem(Data("not a plist".utf8)).contains("not a property list"))
    }
}
