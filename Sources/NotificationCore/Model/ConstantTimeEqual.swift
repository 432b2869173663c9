/// Whether two secrets are equal, in a time that does not depend on where they differ.
package func constantTimeEqual(_ a: String, _ b: String) -> Bool {
    constantTimeEqual(Array(a.utf8), Array(b.utf8))
}

/// Whether two byte strings (keys, digests) are equal, in a time that does not depend on where they differ.
package func constantTimeEqual(_ x: some Collection<UInt8>, _ y: some Collection<UInt8>) -> Bool {
    guard x.count == y.count else { return false }
    return zip(x, y).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
}
