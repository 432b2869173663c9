import Foundation

/// What the person's Show Previews setting hides, as iOS hides it: every surface shows a hidden
/// preview the same way.
package enum PreviewPolicy {
    /// What iOS shows for the body when a category has no `hiddenPreviewsBodyPlaceholder`.
    package static let defaultPlaceholder = "Notification"

    /// Whether the person's settings hide previews now.
    package static func hidesPreviews(_ settings: NotificationSettings, locked: Bool) -> Bool {
        switch settings.showPreviewsSetting {
        case .always: false
        case .whenAuthenticated: locked
        case .never: true
        }
    }

    /// What may be shown of `content` while its preview is hidden: the title and subtitle only when its
    /// category says so, the category's placeholder (`%u`: how many notifications share its thread) for
    /// the body, and nothing else.
    package static func hiddenContent(
        of content: NotificationContent, categoryOptions: CategoryOptions, placeholder: String?, inThread count: Int
    ) -> NotificationContent {
        var shown = NotificationContent()
        shown.threadIdentifier = content.threadIdentifier
        shown.categoryIdentifier = content.categoryIdentifier
        if categoryOptions.contains(.hiddenPreviewsShowTitle) { shown.title = content.title }
        if categoryOptions.contains(.hiddenPreviewsShowSubtitle) { shown.subtitle = content.subtitle }
        shown.body = (placeholder ?? defaultPlaceholder).replacingOccurrences(of: "%u", with: String(count))
        return shown
    }
}
