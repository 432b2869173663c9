import Foundation
import NotificationCore
import Testing

@Suite struct HexadecimalTests {
    @Test func bytesBecomeTwoLowerCaseDigitsEach() {
        #expect(hexadecimal([0x00, 0x0f, 0xa0, 0xff, 0x5c]) == "000fa0ff5c")
        #expect(hexadecimal([UInt8]()) == "")
    }

    @Test func aSequenceWithoutContiguousStorageGivesTheSameText() {
        let bytes: [UInt8] = [0xde, 0xad, 0xbe, 0xef]
        #expect(hexadecimal(bytes.lazy.map { $0 }) == "deadbeef")
        #expect(hexadecimal(Set([UInt8(0x7f)])) == "7f")
    }

    @Test func dashesGoBeforeTheBytesAtTheirPositionsAsInAUUID() {
        let uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
        let bytes = withUnsafeBytes(of: uuid.uuid) { Array($0) }
        #expect(hexadecimal(bytes, dashesBefore: [4, 6, 8, 10]) == uuid.uuidString.lowercased())
        // A position past the end adds nothing.
        #expect(hexadecimal([0x01, 0x02], dashesBefore: [1, 5]) == "01-02")
    }
}
