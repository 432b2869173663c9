// A service extension as iOS tutorials write it: it appends to the body of the push whose identifier
// (its `apns-collapse-id`) is "mutableContent", and downloads the image a push names in its "image"
// key and attaches it. Only the imports differ from an iOS project.
import Crypto
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import OpenUserNotificationsShim

class NotificationService: UNNotificationServiceExtension {
    var contentHandler: ((UNNotificationContent) -> Void)?
    var bestAttemptContent: UNMutableNotificationContent?
    override func didReceive(_ request: UNNotificationRequest, withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void) {
        self.contentHandler = contentHandler
        bestAttemptContent = (request.content.mutableCopy() as? UNMutableNotificationContent)

        if let bestAttemptContent = bestAttemptContent {
            if request.identifier == "mutableContent" {
                bestAttemptContent.body = "\(bestAttemptContent.body), 科比·布莱恩特"
            }
            if let imageURLString = bestAttemptContent.userInfo["image"] as? String,
               let URL = URL(string: imageURLString)
            {
                downloadAndSave(url: URL) { localURL in
                    if let localURL = localURL {
                        do {
                            let attachment = try UNNotificationAttachment(identifier: "image_downloaded", url: localURL, options: nil)
                            bestAttemptContent.attachments = [attachment]
                        } catch {
                            print(error)
                        }
                    }
                    contentHandler(bestAttemptContent)
                }
            } else {
                contentHandler(bestAttemptContent)
            }
        }
    }
    override func serviceExtensionTimeWillExpire() {
        if let contentHandler = contentHandler, let bestAttemptContent =  bestAttemptContent {
            contentHandler(bestAttemptContent)
        }
    }

    private func downloadAndSave(url: URL, handler: @escaping (_ localURL: URL?) -> Void) {
        let task = URLSession.shared.dataTask(with: url, completionHandler: {
            data, res, error in

            var localURL: URL? = nil

            if let data = data {
                let ext = (url.absoluteString as NSString).pathExtension
                let cacheURL = URL(fileURLWithPath: FileManager.default.cachesDirectory)
                let url = cacheURL.appendingPathComponent(url.absoluteString.md5).appendingPathExtension(ext)

                if let _ = try? data.write(to: url) {
                    localURL = url
                }
            }

            handler(localURL)
        })

        task.resume()
    }
}

// The two helpers the tutorial's project defines elsewhere.
extension FileManager {
    /// The user's caches folder (for an extension run by the daemon, its own).
    var cachesDirectory: String {
        urls(for: .cachesDirectory, in: .userDomainMask)[0].path
    }
}

extension String {
    /// The MD5 digest of the string, in hexadecimal: a file name for a URL.
    var md5: String {
        Insecure.MD5.hash(data: Data(utf8)).map { String(format: "%02x", $0) }.joined()
    }
}
