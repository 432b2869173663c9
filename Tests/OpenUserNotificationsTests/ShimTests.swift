import OpenUserNotificationsShim
import Testing

/// Code that imports the shim sees the same API.
@Suite struct ShimTests {
    @Test func theShimExportsTheFramework() {
        let content = UNMutableNotificationContent()
        content.title = "via the shim"
        let request = UNNotificationRequest(identifier: "shim", content: content, trigger: nil)
        #expect(request.content.title == "via the shim")
    }
}
