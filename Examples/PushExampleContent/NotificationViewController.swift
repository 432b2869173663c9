// The tutorials' content extension (seed 001's title, subtitle and body; seed 003's items, whose
// images are the push's attachments, switched by the "switch" action), as written for iOS but for its
// interface: the storyboard's labels and image view are the fields below, drawn as HTML.
import Foundation
import OpenUserNotificationsShim

struct NotificationPresentItem {
    let url: URL
    let title: String
    let text: String
}

final class NotificationViewController: UIViewController, UNNotificationContentExtension {
    // The storyboard's outlets.
    private var titleView = ""
    private var subTitleView = ""
    private var contentView = ""
    private var imageURL: URL?
    private var label = ""
    private var textView = ""

    private var items: [NotificationPresentItem] = []
    private var index = 0

    override func viewDidLoad() {
        super.viewDidLoad()
        // Set here, the title does not become the notification's title.
        self.title = "A custom notification interface"
    }

    func didReceive(_ notification: UNNotification) {
        // Set here, it does.
        self.title = "A custom notification interface!"
        self.titleView = notification.request.content.title
        self.subTitleView = notification.request.content.subtitle
        self.contentView = notification.request.content.body

        let content = notification.request.content
        if let items = content.userInfo["items"] as? [[String: AnyObject]] {
            for i in 0..<items.count {
                let item = items[i]
                guard let title = item["title"] as? String, let text = item["text"] as? String else {
                    continue
                }
                if i > content.attachments.count - 1 {
                    continue
                }
                let url = content.attachments[i].url

                let presentItem = NotificationPresentItem(url: url, title: title, text: text)
                self.items.append(presentItem)
            }
        }
        if !items.isEmpty { updateUI(index: 0) }
    }

    private func updateUI(index: Int) {
        let item = items[index]
        if item.url.startAccessingSecurityScopedResource() {
            imageURL = item.url
            item.url.stopAccessingSecurityScopedResource()
        }
        label = item.title
        textView = item.text
        self.index = index
    }

    func didReceive(_ response: UNNotificationResponse, completionHandler completion: @escaping (UNNotificationContentExtensionResponseOption) -> Void) {
        if response.actionIdentifier == "switch" {
            // (The tutorial assumes two items; with fewer there is nothing to switch to.)
            guard items.count > 1 else { return completion(.doNotDismiss) }
            let nextIndex: Int
            if index == 0 {
                nextIndex = 1
            } else {
                nextIndex = 0
            }

            updateUI(index: nextIndex)
            completion(.doNotDismiss)
        } else if response.actionIdentifier == "open" {
            completion(.dismissAndForwardAction)
        } else if response.actionIdentifier == "dismiss" {
            completion(.dismiss)
        } else {
            completion(.dismissAndForwardAction)
        }
    }
}

// The storyboard, on Linux: the interface as HTML.
extension NotificationViewController: NotificationContentHTML {
    var html: String {
        var page = """
            <style>
              body { padding: 10px; }
              .item { display: flex; gap: 12px; align-items: flex-start; margin-top: 8px; }
              .item img { width: 40%; border-radius: 8px; }
              h2 { margin: 0; font-size: 1.05em; } h3 { margin: 0; font-weight: normal; color: GrayText; }
            </style>
            <h2 id="title">\(escaped(titleView))</h2>
            """
        if !subTitleView.isEmpty { page += "<h3 id=\"subtitle\">\(escaped(subTitleView))</h3>" }
        page += "<p id=\"body\">\(escaped(contentView))</p>"
        if !items.isEmpty {
            page += "<div class=\"item\" data-index=\"\(index)\">"
            if let imageURL { page += "<img id=\"image\" alt=\"\(escaped(label))\" src=\"\(escaped(imageURL.absoluteString))\">" }
            page += "<div><strong id=\"label\">\(escaped(label))</strong><p id=\"text\">\(escaped(textView))</p></div></div>"
        }
        return page
    }

    private func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
