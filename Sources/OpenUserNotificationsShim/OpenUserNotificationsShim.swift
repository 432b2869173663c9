// Code that imports this module uses Apple's User Notifications framework where it exists, and
// OpenUserNotifications everywhere else, under the same names.
#if canImport(UserNotifications)
@_exported public import UserNotifications
#else
@_exported public import OpenUserNotifications
#endif
