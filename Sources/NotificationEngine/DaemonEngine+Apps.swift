import Crypto
package import Foundation
import Logging
import NotificationAttachmentStore
package import NotificationCore
import Synchronization

/// The apps on the device: registered with a key, listed, removed; their strings and extensions (kept
/// in the store, ``AppResources``) and the folders their extensions run in.
extension DaemonEngine {
    /// Registers an app and returns its key, which authenticates every call it makes.
    package func registerApp(_ bundleIdentifier: String, launchCommand: String? = nil) async throws(DaemonError) -> String {
        if let violation = RequestRules.violation(inBundleIdentifier: bundleIdentifier) { throw DaemonError(violation) }
        let key = Self.makeKey()
        let machine = NotificationCenterMachine(
            now: clock.now,
            calendar: configuration.calendar,
            timeZone: device.conditions.timeZone,
            appState: .notRunning,
            appReachable: false,
            configuration: configuration.machine
        )
        try await store.insert(StoredApp(
            bundleIdentifier: bundleIdentifier,
            keyHash: Self.hash(key),
            launchCommand: launchCommand,
            machine: machine,
            bootID: bootID
        ))
        // A new app has nothing due; one of the same name removed before may have had.
        noteWakeUp(bundleIdentifier, nil)
        logger.info("registered app", metadata: ["app": .string(bundleIdentifier)])
        return key
    }

    /// Issues a new key for an app; the old one stops working.
    package func renewKey(of bundleIdentifier: String) async throws(DaemonError) -> String {
        let key = Self.makeKey()
        try await store.replaceKey(of: bundleIdentifier, with: Self.hash(key))
        keys.forgetAll()
        return key
    }

    /// Removes an app with all its notifications.
    package func removeApp(_ bundleIdentifier: String) async throws(DaemonError) {
        try await store.delete(bundleIdentifier)
        noteWakeUp(bundleIdentifier, nil)
        resources.forget(bundleIdentifier)
        shownIdentities.withLock { $0.forget(bundleIdentifier) }
        if let folder = extensionFolder(of: bundleIdentifier) { try? FileManager.default.removeItem(at: folder) }
        keys.forgetAll()
        forget(bundleIdentifier)
        held.drop(bundleIdentifier)
        // Nothing of it will ever be answered.
        resumeAnswerWaiters(of: bundleIdentifier)
        authorizationCalls.fail(app: bundleIdentifier, with: DaemonError(
            .appNotFound, "\(bundleIdentifier) was removed while it waited for the person to answer its request for authorization."
        ))
        loads.removeValue(forKey: bundleIdentifier)
        connections.close(bundleIdentifier)
        if configuration.attachmentFolderPerApp, let folder = attachmentStore(of: bundleIdentifier)?.root {
            try? FileManager.default.removeItem(at: folder)
        }
    }

    /// Sets the strings a push's `loc-key`, `title-loc-key` and `subtitle-loc-key` are looked up in, as
    /// iOS looks them up in the app's `Localizable.strings`; an empty table removes them. Kept in the
    /// store with the app (``AppResource``).
    package func setStrings(_ bundleIdentifier: String, _ table: [String: String]) async throws {
        _ = try await appState(bundleIdentifier)
        try await store.setResource(.strings, of: bundleIdentifier, to: table.isEmpty ? nil : AppResources.encode(table))
        resources.wrote(bundleIdentifier) { $0.strings = table }
    }

    /// Registers the app's service extension (`nil` removes it): from now on a push for the app marked
    /// `mutable-content` goes through it before it is shown. Kept in the store with the app.
    ///
    /// - Throws: `invalidRequest` for an executable that is not an absolute path or a time limit out of
    ///   bounds; `extensionNotExecutable` for a path that is not an executable file; `appNotFound`.
    package func setServiceExtension(_ bundleIdentifier: String, _ registration: ServiceExtensionRegistration?) async throws {
        _ = try await appState(bundleIdentifier)
        if let registration {
            try Self.checkExecutable(registration.executable, of: "service extension")
            let limits = ServiceExtension.shortestTimeLimit...ServiceExtension.longestTimeLimit
            guard limits.contains(registration.timeLimit) else {
                throw DaemonError(.invalidRequest, "A service extension's time limit is \(Int(limits.lowerBound)) to \(Int(limits.upperBound)) seconds; got \(registration.timeLimit).")
            }
        }
        try await store.setResource(.serviceExtension, of: bundleIdentifier, to: registration.map(AppResources.encode))
        resources.wrote(bundleIdentifier) { $0.serviceExtension = registration }
    }

    /// Registers the app's content extension (`nil` removes it): from now on its categories' notifications
    /// show its interface when the person expands them, where a surface hosts content extensions. Kept
    /// in the store with the app.
    ///
    /// - Throws: `invalidRequest` for an executable that is not an absolute path or attributes that
    ///   break a rule; `extensionNotExecutable` for a path that is not an executable file; `appNotFound`.
    package func setContentExtension(_ bundleIdentifier: String, _ registration: ContentExtensionRegistration?) async throws {
        _ = try await appState(bundleIdentifier)
        if let registration {
            try Self.checkExecutable(registration.executable, of: "content extension")
            if let violation = registration.attributes.violation { throw DaemonError(.invalidRequest, violation) }
        }
        try await store.setResource(.contentExtension, of: bundleIdentifier, to: registration.map(AppResources.encode))
        resources.wrote(bundleIdentifier) { $0.contentExtension = registration }
    }

    /// Sets the app's display name and icon (`nil`, or one with neither, removes them). Kept in the
    /// store with the app.
    ///
    /// - Throws: `invalidRequest` for a name or icon that breaks ``AppIdentity/violation``; `appNotFound`.
    package func setIdentity(_ bundleIdentifier: String, _ identity: AppIdentity?) async throws {
        _ = try await appState(bundleIdentifier)
        let kept = identity.flatMap { $0.isEmpty ? nil : $0 }
        if let violation = kept?.violation ?? kept?.fileViolation { throw DaemonError(.invalidRequest, violation) }
        try await store.setResource(.identity, of: bundleIdentifier, to: kept.map(AppResources.encode))
        resources.wrote(bundleIdentifier) { $0.identity = kept }
        shownIdentities.withLock { $0.forget(bundleIdentifier) }
    }

    /// The app's display name and icon as registered, if they were.
    package func identity(of bundleIdentifier: String) async throws(DaemonError) -> AppIdentity? {
        try await resources(of: bundleIdentifier).identity
    }

    /// How surfaces show the app: its registered identity, completed from its `.desktop` entry when the
    /// machine has one, else its bundle identifier. Never throws: an app whose resources cannot be
    /// read now is shown by its bundle identifier. The machine's files are read off the engine, and
    /// what was found is kept for half a minute (a change of the app's identity is seen at once).
    package nonisolated func shownIdentity(of bundleIdentifier: String) async -> ShownAppIdentity {
        let now = ContinuousClock.now
        let (known, generation) = shownIdentities.withLock { ($0.known(bundleIdentifier, at: now), $0.generation) }
        if let known { return known }
        let registered = try? await identity(of: bundleIdentifier)
        let entry = registered?.name != nil && registered?.icon != nil
            ? nil : DesktopEntries.find(bundleIdentifier, environment: ProcessInfo.processInfo.environment)
        let shown = ShownAppIdentity.of(bundleIdentifier, registered: registered, entry: entry)
        shownIdentities.withLock { $0.keep(shown, of: bundleIdentifier, at: now, foundIn: generation) }
        return shown
    }

    /// Whether something shows apps' content extensions: see ``Configuration/hostsContentExtensions``.
    package nonisolated var hostsContentExtensions: Bool { configuration.hostsContentExtensions }

    /// The app's content extension, if it has one (none when its resources cannot be read now).
    package func contentExtension(of bundleIdentifier: String) async -> ContentExtensionRegistration? {
        do {
            return try await resources(of: bundleIdentifier).contentExtension
        } catch {
            logger.error("could not read an app's content extension", metadata: ["app": .string(bundleIdentifier), "error": .string(error.message)])
            return nil
        }
    }

    /// The app's service extension, if it has one.
    package func serviceExtension(of bundleIdentifier: String) async throws(DaemonError) -> ServiceExtensionRegistration? {
        try await resources(of: bundleIdentifier).serviceExtension
    }

    /// The app's strings and extensions: known, or else read from the store (and then known).
    func resources(of bundleIdentifier: String) async throws(DaemonError) -> ResourcesOfApp {
        if let known = resources[bundleIdentifier] { return known }
        let mark = resources.beginRead()
        let read = AppResources.decode(try await store.resources(of: bundleIdentifier), of: bundleIdentifier, logger: logger)
        resources.finishRead(bundleIdentifier, read, begunAt: mark)
        return read
    }

    /// A new folder for one open interface of the app's content extension, and its kept `Caches`.
    package func contentExtensionFolders(of bundleIdentifier: String) throws -> (run: URL, caches: URL) {
        do {
            return try extensionFolders(of: bundleIdentifier, run: "content-\(UUID().uuidString)")
        } catch {
            throw DaemonError(.extensionFailed, "The content extension's folder could not be made: \(error).")
        }
    }

    /// Makes a folder for one run of an app's extension (its `TMPDIR`, removed after it), and the
    /// extension's `Caches` (kept from run to run).
    func extensionFolders(of bundleIdentifier: String, run name: String) throws -> (run: URL, caches: URL) {
        guard let folder = extensionFolder(of: bundleIdentifier) else {
            throw DaemonError(.invalidRequest, "\(bundleIdentifier) is not a bundle identifier.")
        }
        let run = folder.appendingPathComponent("tmp", isDirectory: true).appendingPathComponent(name, isDirectory: true)
        let caches = folder.appendingPathComponent("Caches", isDirectory: true)
        try FileManager.default.createDirectory(at: run, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try FileManager.default.createDirectory(at: caches, withIntermediateDirectories: true)
        return (run, caches)
    }

    private static func checkExecutable(_ executable: String, of kind: String) throws {
        guard executable.hasPrefix("/") else {
            throw DaemonError(.invalidRequest, "The \(kind)'s executable must be an absolute path; got \"\(executable)\".")
        }
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: executable, isDirectory: &isFolder), !isFolder.boolValue,
              FileManager.default.isExecutableFile(atPath: executable) else {
            throw DaemonError(.extensionNotExecutable, "\(executable) is not an executable file.")
        }
    }

    /// The extension's own folder: `Caches` (kept) and `tmp` (a folder per run, removed after it).
    func extensionFolder(of bundleIdentifier: String) -> URL? {
        guard RequestRules.violation(inBundleIdentifier: bundleIdentifier) == nil else { return nil }
        let root = configuration.privateFolder ?? FileManager.default.temporaryDirectory.appendingPathComponent("unotify", isDirectory: true)
        return root.appendingPathComponent("extensions", isDirectory: true).appendingPathComponent(bundleIdentifier, isDirectory: true)
    }

    /// Every registered app, with its launch command, and why it is quarantined if it is.
    package func apps() async throws(DaemonError) -> [(bundleIdentifier: String, launchCommand: String?, quarantined: Quarantine?)] {
        try await store.apps()
    }

    /// The app a key belongs to.
    ///
    /// Keys once found are remembered, so an app's calls cost no store read, no hash and no wait for
    /// the engine; renewing or removing any app's key forgets them all.
    ///
    /// - Throws: `unauthorized` for a key that belongs to no app.
    package nonisolated func authenticate(key: String) async throws(DaemonError) -> String {
        if let bundleIdentifier = keys.bundleIdentifier(forKey: key) { return bundleIdentifier }
        let generation = keys.generation
        guard let bundleIdentifier = try await store.bundleIdentifier(forKeyHash: Self.hash(key)) else {
            throw DaemonError(.unauthorized, "The key does not belong to any registered app.")
        }
        keys.remember(key, bundleIdentifier, ifStillAt: generation)
        return bundleIdentifier
    }

    /// A new random key: 32 bytes, base64url.
    package static func makeKey() -> String {
        let bytes = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }
        return bytes.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    package static func hash(_ key: String) -> String {
        hexadecimal(SHA256.hash(data: Data(key.utf8)))
    }
}
