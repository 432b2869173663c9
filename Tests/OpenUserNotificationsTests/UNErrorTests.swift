import Foundation
import OpenUserNotifications
import Testing

@Suite struct UNErrorTests {
    @Test(arguments: [
        (UNError.Code.notificationsNotAllowed, 1),
        (.attachmentInvalidURL, 100),
        (.attachmentUnrecognizedType, 101),
        (.attachmentInvalidFileSize, 102),
        (.attachmentNotInDataStore, 103),
        (.attachmentMoveIntoDataStoreFailed, 104),
        (.attachmentCorrupt, 105),
        (.notificationInvalidNoDate, 1400),
        (.notificationInvalidNoContent, 1401),
        (.contentProvidingObjectNotAllowed, 1500),
        (.contentProvidingInvalid, 1501),
        (.badgeInputInvalid, 1600),
    ])
    func codesHaveApplesRawValues(code: UNError.Code, rawValue: Int) {
        #expect(code.rawValue == rawValue)
        let error = UNError(code)
        #expect(error.errorCode == rawValue)
        #expect(UNError.errorDomain == "UNErrorDomain")
        #expect(!error.localizedDescription.isEmpty)
    }

    @Test func bridgesToNSErrorInTheUNErrorDomain() {
        let error: any Error = UNError(.notificationsNotAllowed)
        let nsError = error as NSError
        #expect(nsError.domain == UNErrorDomain)
        #expect(nsError.code == 1)
    }

    @Test func matchesCodesInCatchPatterns() {
        func fail() throws { throw UNError(.badgeInputInvalid) }
        var caught = false
        do {
            try fail()
        } catch UNError.notificationsNotAllowed {
            Issue.record("matched the wrong code")
        } catch UNError.badgeInputInvalid {
            caught = true
        } catch {
            Issue.record("did not match: \(error)")
        }
        #expect(caught)
    }

    @Test func userInfoDescriptionIsKept() {
        let error = UNError(.attachmentCorrupt, userInfo: [NSLocalizedDescriptionKey: "broken"])
        #expect(error.localizedDescription == "broken")
        #expect(error == UNError(.attachmentCorrupt))
    }
}
