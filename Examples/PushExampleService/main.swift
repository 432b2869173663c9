// The push example's notification service extension: the daemon starts it for each push to
// com.example.push marked `mutable-content`. Register it once:
//
//     unotify apps extension com.example.push .build/debug/push-example-service
//
// Its `NotificationService` is the tutorial's, unchanged (see NotificationService.swift).
import OpenUserNotificationsLink

NotificationServiceExtensionHost.run(NotificationService())
