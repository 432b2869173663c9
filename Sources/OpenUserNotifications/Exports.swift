// Apple's UserNotifications module re-exports Foundation, so a file that imports only the framework can
// use `Date`, `URL` and `DateComponents`. This module does the same.
@_exported public import Foundation
