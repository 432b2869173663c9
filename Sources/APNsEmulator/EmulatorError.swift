/// What went wrong with a request to the emulator's control API or command line, with a code a
/// program can switch on (`Docs/emulator.md`).
package struct EmulatorError: Error, Sendable, CustomStringConvertible {
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        package let name: String
        /// The HTTP status the control API answers it with.
        package let status: Int

        /// A request the emulator cannot do as asked: the message says what to change.
        package static let invalidRequest = Code(name: "invalidRequest", status: 400)
        /// No such fault, device or token.
        package static let notFound = Code(name: "notFound", status: 404)
        /// A request whose body is over the 64 KiB the control API reads.
        package static let tooLarge = Code(name: "tooLarge", status: 413)
        /// A well-formed request the emulator will not do as it stands: the clock moved back or
        /// beyond reach, a window that ends before it starts, a delay over 300 s.
        package static let refused = Code(name: "refused", status: 422)
        /// The emulator could not do it (its store failed).
        package static let internalError = Code(name: "internal", status: 500)

        package var description: String { name }
    }

    package let code: Code
    package let message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    package var description: String { message }
}
