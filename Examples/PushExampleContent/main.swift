// The push example's notification content extension: the custom interface of its "customUI"
// notifications. The notification daemon starts it when the person expands one; register it with
//
//     swift build --product push-example-content
//     swift run unotify apps content-extension com.example.push .build/debug/push-example-content \
//         --info-plist Examples/PushExampleContent/Info.plist
import OpenUserNotificationsUI

NotificationContentExtensionHost.run(NotificationViewController())
