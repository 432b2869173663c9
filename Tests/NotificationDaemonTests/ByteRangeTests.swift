import Testing
import WebNotificationCenter

/// The byte ranges the notification center's players ask for (RFC 9110 §14.1.2), on a 100-byte file.
@Suite struct ByteRangeTests {
    @Test(arguments: [
        ("bytes=0-9", ByteRange.part(0...9)),
        ("bytes=90-", .part(90...99)),
        ("bytes=95-200", .part(95...99)),  // past the end: up to it
        ("bytes=-10", .part(90...99)),  // the last ten
        ("bytes=-500", .part(0...99)),
        ("bytes=100-", .unsatisfiable),  // starts past the end
        ("bytes=-0", .unsatisfiable),
        ("bytes=5-1", .whole),  // not a range: ignored, as the RFC allows
        ("bytes=0-1,5-9", .whole),  // several: the whole file
        ("items=0-9", .whole),
        ("bytes=x-9", .whole),
    ])
    func aRangeHeaderIsReadAsTheRFCSays(header: String, expected: ByteRange) {
        #expect(ByteRange.parse(header, size: 100) == expected)
    }

    @Test func noHeaderMeansTheWholeFile() {
        #expect(ByteRange.parse(nil, size: 100) == .whole)
        #expect(ByteRange.parse("bytes=0-", size: 0) == .unsatisfiable)
    }
}
