// Code that imports this module uses Apple's User Notifications framework (and UIKit, for the app
// object's remote-notification registration) where they exist, and OpenUserNotifications with its
// UIKit part everywhere else, under the same names.
#if canImport(UserNotifications)
@_exported public import UserNotifications
#else
@_exported public import OpenUserNotifications
#endif
#if canImport(UIKit)
@_exported public import UIKit
#elseif !canImport(UserNotifications)
@_exported public import OpenUserNotificationsUIKit
#endif
