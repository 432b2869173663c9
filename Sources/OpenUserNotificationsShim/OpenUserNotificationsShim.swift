// Code that imports this module uses Apple's User Notifications framework (and UIKit, for the app
// object's remote-notification registration, PushKit, for VoIP pushes, and UserNotificationsUI, for
// content extensions) where they exist, and OpenUserNotifications with its UIKit, PushKit and UI parts
// everywhere else, under the same names.
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
#if canImport(PushKit)
@_exported public import PushKit
#elseif !canImport(UserNotifications)
@_exported public import OpenUserNotificationsPushKit
#endif
#if canImport(UserNotificationsUI)
@_exported public import UserNotificationsUI
#elseif !canImport(UserNotifications)
@_exported public import OpenUserNotificationsUI
#endif
