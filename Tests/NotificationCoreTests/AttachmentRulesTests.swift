import NotificationCore
import Testing

/// A supported type with a file header that carries its signature, padded to 16 bytes.
struct AttachmentSample: Sendable, CustomTestStringConvertible {
    var identifier: String
    var family: AttachmentRules.Family
    var extensions: [String]
    var header: [UInt8]
    /// How many of the header's first bytes the signature check reads.
    var signatureLength: Int
    var testDescription: String { identifier }
}

private func padded(_ bytes: [UInt8]) -> [UInt8] { bytes + [UInt8](repeating: 0, count: max(0, 16 - bytes.count)) }
private func ascii(_ text: String) -> [UInt8] { Array(text.utf8) }
private let anyFourBytes: [UInt8] = [0x00, 0x00, 0x10, 0x00]

private let samples: [AttachmentSample] = [
    AttachmentSample(identifier: "public.aiff-audio", family: .audio, extensions: ["aif", "aiff", "aifc"],
                     header: padded(ascii("FORM") + anyFourBytes + ascii("AIFF")), signatureLength: 12),
    AttachmentSample(identifier: "com.microsoft.waveform-audio", family: .audio, extensions: ["wav", "wave"],
                     header: padded(ascii("RIFF") + anyFourBytes + ascii("WAVE")), signatureLength: 12),
    AttachmentSample(identifier: "public.mp3", family: .audio, extensions: ["mp3"], header: padded(ascii("ID3") + [0x04, 0x00]), signatureLength: 3),
    AttachmentSample(identifier: "public.mpeg-4-audio", family: .audio, extensions: ["m4a"],
                     header: padded(anyFourBytes + ascii("ftypM4A ")), signatureLength: 8),
    AttachmentSample(identifier: "public.jpeg", family: .image, extensions: ["jpg", "jpeg"], header: padded([0xFF, 0xD8, 0xFF, 0xE0]), signatureLength: 3),
    AttachmentSample(identifier: "com.compuserve.gif", family: .image, extensions: ["gif"], header: padded(ascii("GIF89a")), signatureLength: 6),
    AttachmentSample(identifier: "public.png", family: .image, extensions: ["png"],
                     header: padded([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]), signatureLength: 8),
    AttachmentSample(identifier: "public.mpeg", family: .movie, extensions: ["mpg", "mpeg"], header: padded([0x00, 0x00, 0x01, 0xBA]), signatureLength: 4),
    AttachmentSample(identifier: "public.mpeg-2-video", family: .movie, extensions: ["m2v"], header: padded([0x00, 0x00, 0x01, 0xB3]), signatureLength: 4),
    AttachmentSample(identifier: "public.mpeg-4", family: .movie, extensions: ["mp4", "m4v"], header: padded(anyFourBytes + ascii("ftypisom")), signatureLength: 8),
    AttachmentSample(identifier: "public.avi", family: .movie, extensions: ["avi"],
                     header: padded(ascii("RIFF") + anyFourBytes + ascii("AVI ")), signatureLength: 12),
]

private func failureCode(_ result: Result<AttachmentRules.FileType, NotificationFailure>) -> NotificationErrorCode? {
    if case .failure(let failure) = result { failure.code } else { nil }
}

private func acceptedType(_ result: Result<AttachmentRules.FileType, NotificationFailure>) -> String? {
    if case .success(let type) = result { type.identifier } else { nil }
}

@Suite("Attachment rules")
struct AttachmentRulesTests {
    @Test("the supported types are exactly Apple's documented ones")
    func supportedTypes() {
        #expect(AttachmentRules.supportedTypes.map(\.identifier) == samples.map(\.identifier))
        for sample in samples {
            let type = AttachmentRules.supportedTypes.first { $0.identifier == sample.identifier }
            #expect(type?.family == sample.family, "\(sample.identifier)")
            #expect(type?.extensions == sample.extensions, "\(sample.identifier)")
        }
    }

    @Test("the size limits are 5 MB for audio, 10 MB for images and 50 MB for movies")
    func sizeLimits() {
        #expect(AttachmentRules.Family.audio.maximumSize == 5_242_880)
        #expect(AttachmentRules.Family.image.maximumSize == 10_485_760)
        #expect(AttachmentRules.Family.movie.maximumSize == 52_428_800)
    }

    @Test("each type is recognised by each of its extensions, in any case", arguments: samples)
    func recognisedByExtension(_ sample: AttachmentSample) {
        for ext in sample.extensions {
            for spelling in [ext, ext.uppercased()] {
                let result = AttachmentRules.validate(pathExtension: spelling, typeHint: nil, fileSize: 1024, header: sample.header)
                #expect(acceptedType(result) == sample.identifier, ".\(spelling)")
            }
        }
    }

    @Test("each type is recognised by its type hint, whatever the extension", arguments: samples)
    func recognisedByTypeHint(_ sample: AttachmentSample) {
        for ext in ["", "bin", "png", "mp3"] {
            let result = AttachmentRules.validate(pathExtension: ext, typeHint: sample.identifier, fileSize: 1024, header: sample.header)
            #expect(acceptedType(result) == sample.identifier, ".\(ext)")
        }
    }

    struct UnknownCase: Sendable, CustomTestStringConvertible {
        var pathExtension: String
        var typeHint: String?
        var testDescription: String { "extension \"\(pathExtension)\", hint \(typeHint ?? "none")" }
    }

    @Test("an unknown extension or type hint is an unrecognized type", arguments: [
        UnknownCase(pathExtension: "txt", typeHint: nil),
        UnknownCase(pathExtension: "", typeHint: nil),
        UnknownCase(pathExtension: "heic", typeHint: nil),
        UnknownCase(pathExtension: "webp", typeHint: nil),
        UnknownCase(pathExtension: "png ", typeHint: nil),
        UnknownCase(pathExtension: "png", typeHint: "public.heic"),
        UnknownCase(pathExtension: "png", typeHint: ""),
        UnknownCase(pathExtension: "png", typeHint: "PUBLIC.PNG"),
    ])
    func unknownType(_ testCase: UnknownCase) {
        let png = samples.first { $0.identifier == "public.png" }!
        let result = AttachmentRules.validate(pathExtension: testCase.pathExtension, typeHint: testCase.typeHint, fileSize: 1024, header: png.header)
        #expect(failureCode(result) == .attachmentUnrecognizedType)
    }

    @Test("a file exactly at its family's limit is accepted; one byte more is too large", arguments: samples)
    func sizeBoundary(_ sample: AttachmentSample) {
        let limit = sample.family.maximumSize
        let ext = sample.extensions[0]
        let atLimit = AttachmentRules.validate(pathExtension: ext, typeHint: nil, fileSize: limit, header: sample.header)
        #expect(acceptedType(atLimit) == sample.identifier)
        let over = AttachmentRules.validate(pathExtension: ext, typeHint: nil, fileSize: limit + 1, header: sample.header)
        #expect(failureCode(over) == .attachmentInvalidFileSize)
    }

    @Test("the size is checked against the hinted type's family, not the extension's")
    func sizeFollowsTypeHint() {
        let mp4 = samples.first { $0.identifier == "public.mpeg-4" }!
        let size = 20 * 1024 * 1024
        let asMovie = AttachmentRules.validate(pathExtension: "png", typeHint: "public.mpeg-4", fileSize: size, header: mp4.header)
        #expect(acceptedType(asMovie) == "public.mpeg-4")
        let png = samples.first { $0.identifier == "public.png" }!
        let asImage = AttachmentRules.validate(pathExtension: "mp4", typeHint: "public.png", fileSize: size, header: png.header)
        #expect(failureCode(asImage) == .attachmentInvalidFileSize)
    }

    @Test("an empty file is corrupt", arguments: samples)
    func emptyFileIsCorrupt(_ sample: AttachmentSample) {
        let empty = AttachmentRules.validate(pathExtension: sample.extensions[0], typeHint: nil, fileSize: 0, header: [])
        #expect(failureCode(empty) == .attachmentCorrupt)
        // A size of zero is corrupt even if the header bytes handed in look right.
        let zeroSize = AttachmentRules.validate(pathExtension: sample.extensions[0], typeHint: nil, fileSize: 0, header: sample.header)
        #expect(failureCode(zeroSize) == .attachmentCorrupt)
    }

    @Test("a file whose first bytes are not its type's signature is corrupt", arguments: samples)
    func wrongMagicBytesAreCorrupt(_ sample: AttachmentSample) {
        let ext = sample.extensions[0]
        let text = padded(ascii("hello, world"))
        #expect(failureCode(AttachmentRules.validate(pathExtension: ext, typeHint: nil, fileSize: 1024, header: text)) == .attachmentCorrupt)
        // Another family's signature is just as wrong. (MPEG-4 audio and video share the ISO container, and
        // the two MPEG program and video streams share start codes, so those are not told apart by bytes.)
        let mpeg4 = ["public.mpeg-4", "public.mpeg-4-audio"]
        for other in samples where other.family != sample.family && !(mpeg4.contains(other.identifier) && mpeg4.contains(sample.identifier)) {
            let result = AttachmentRules.validate(pathExtension: ext, typeHint: nil, fileSize: 1024, header: other.header)
            #expect(failureCode(result) == .attachmentCorrupt, "\(other.identifier) bytes as .\(ext)")
        }
        // A header cut short inside the signature is corrupt too.
        let truncated = Array(sample.header.prefix(sample.signatureLength - 1))
        #expect(failureCode(AttachmentRules.validate(pathExtension: ext, typeHint: nil, fileSize: 1024, header: truncated)) == .attachmentCorrupt)
    }

    @Test("the alternative signatures of GIF, AIFF, MP3 and MPEG are accepted")
    func alternativeSignatures() {
        let cases: [(ext: String, header: [UInt8])] = [
            ("gif", padded(ascii("GIF87a"))),
            ("aifc", padded(ascii("FORM") + anyFourBytes + ascii("AIFC"))),
            ("mp3", padded([0xFF, 0xFB, 0x90, 0x64])),
            ("mp3", padded([0xFF, 0xE3, 0x18, 0xC4])),
            ("mpg", padded([0x00, 0x00, 0x01, 0xB3])),
            ("m2v", padded([0x00, 0x00, 0x01, 0xBA])),
        ]
        for (ext, header) in cases {
            #expect(failureCode(AttachmentRules.validate(pathExtension: ext, typeHint: nil, fileSize: 100, header: header)) == nil, ".\(ext)")
        }
    }

    @Test("RIFF files are told apart by their form type")
    func riffFormTypes() {
        let wave = padded(ascii("RIFF") + anyFourBytes + ascii("WAVE"))
        let avi = padded(ascii("RIFF") + anyFourBytes + ascii("AVI "))
        #expect(failureCode(AttachmentRules.validate(pathExtension: "avi", typeHint: nil, fileSize: 100, header: wave)) == .attachmentCorrupt)
        #expect(failureCode(AttachmentRules.validate(pathExtension: "wav", typeHint: nil, fileSize: 100, header: avi)) == .attachmentCorrupt)
    }

    @Test("checks run in Apple's order: type, then size, then contents")
    func checkOrder() {
        let garbage = padded(ascii("garbage"))
        #expect(failureCode(AttachmentRules.validate(pathExtension: "txt", typeHint: nil, fileSize: Int.max, header: garbage)) == .attachmentUnrecognizedType)
        #expect(failureCode(AttachmentRules.validate(pathExtension: "png", typeHint: nil, fileSize: Int.max, header: garbage)) == .attachmentInvalidFileSize)
    }

    @Test("failures say what was wrong")
    func failureDetails() {
        let unknown = AttachmentRules.validate(pathExtension: "txt", typeHint: nil, fileSize: 1, header: [])
        #expect((try? unknown.get()) == nil)
        if case .failure(let failure) = unknown {
            #expect(failure.message == "The attachment's file type is not supported. Unsupported extension .txt.")
        }
        let tooBig = AttachmentRules.validate(pathExtension: "mp3", typeHint: nil, fileSize: 5_242_881, header: [])
        if case .failure(let failure) = tooBig {
            #expect(failure.detail == "5242881 bytes is over the 5242880-byte limit for audio.")
        } else {
            Issue.record("expected a failure")
        }
    }
}
