// A content extension that uses every part of its extension context, for the daemon's and the web
// center's tests: a voice message (its sender, and its audio attachment played through the media
// button), whose actions each call the context:
//   "like"    replaces the notification's actions with "Unlike" (`notificationActions`);
//   "unlike"  puts the actions it was first given back;
//   "play"    starts playing on its own (`mediaPlayingStarted()`), "stop" stops (`mediaPlayingPaused()`);
//   "listen"  opens the app with the default action (`performNotificationDefaultAction()`);
//   "later"   closes the interface, leaving the notification (`dismissNotificationContentExtension()`);
//   anything else goes on to the app.
// Its interface says what it knows: `data-actions` the actions the context gave it when it drew the
// notification, `data-playing` whether its media plays. It also holds a script and an event handler,
// which the frame must not run.
import Foundation
import OpenUserNotifications
import OpenUserNotificationsUI
import OpenUserNotificationsUIKit

final class VoiceMessageViewController: UIViewController, UNNotificationContentExtension, NotificationContentHTML {
    private var sender = ""
    private var audio: URL?
    private var playing = false
    private var liked = false
    private var firstActions: [UNNotificationAction] = []

    override func viewDidLoad() {
        super.viewDidLoad()
        preferredContentSize = CGSize(width: 320, height: 120)
    }

    func didReceive(_ notification: UNNotification) {
        sender = notification.request.content.title
        audio = notification.request.content.attachments.first?.url
        firstActions = extensionContext?.notificationActions ?? []
    }

    var mediaPlayPauseButtonType: UNNotificationContentExtensionMediaPlayPauseButtonType { .overlay }
    var mediaPlayPauseButtonFrame: CGRect { CGRect(x: 12, y: 36, width: 48, height: 48) }
    var mediaPlayPauseButtonTintColor: UIColor { .systemRed }

    func mediaPlay() { playing = true }
    func mediaPause() { playing = false }

    func didReceive(_ response: UNNotificationResponse, completionHandler completion: @escaping (UNNotificationContentExtensionResponseOption) -> Void) {
        switch response.actionIdentifier {
        case "like":
            liked = true
            extensionContext?.notificationActions = [UNNotificationAction(identifier: "unlike", title: "Unlike", options: [])]
        case "unlike":
            liked = false
            extensionContext?.notificationActions = firstActions
        case "play":
            playing = true
            extensionContext?.mediaPlayingStarted()
        case "stop":
            playing = false
            extensionContext?.mediaPlayingPaused()
        case "listen":
            extensionContext?.performNotificationDefaultAction()
        case "later":
            extensionContext?.dismissNotificationContentExtension()
        default:
            return completion(.dismissAndForwardAction)
        }
        completion(.doNotDismiss)
    }

    var html: String {
        var page = """
            <div id="voice" data-playing="\(playing)" data-actions="\(firstActions.map(\.identifier).joined(separator: ","))" \
            style="padding: 12px 12px 12px 72px; min-height: 96px">
            <strong id="sender">\(sender.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;"))</strong>
            <p id="state">\(playing ? "Playing" : "Paused")\(liked ? " · liked" : "")</p>
            """
        // No scripts run in the frame: the audio plays because the document that asks for it is shown.
        if playing, let audio { page += "<audio id=\"audio\" autoplay src=\"\(audio.absoluteString)\"></audio>" }
        // What the frame must never run, however the interface asks.
        page += #"<script>document.body.dataset.ran = "script"</script><img src="data:," onerror="document.body.dataset.ran = 'handler'" alt="">"#
        return page + "</div>"
    }
}

NotificationContentExtensionHost.run(VoiceMessageViewController())
