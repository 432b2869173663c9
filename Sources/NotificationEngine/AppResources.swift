import Foundation
import Logging
package import NotificationCore

/// The resources of one app (see ``AppResource``), decoded.
struct ResourcesOfApp: Sendable, Equatable {
    /// What a push's localization keys are looked up in; empty when the app set none.
    var strings: [String: String] = [:]
    var serviceExtension: ServiceExtensionRegistration?
    var contentExtension: ContentExtensionRegistration?
    var identity: AppIdentity?

    /// Looks a push's localization keys up in the app's strings.
    var localizer: APNs.Localizer {
        let table = strings
        return { key in table[key] }
    }
}

/// The apps' strings and extension registrations as the engine uses them: the store keeps them
/// (``DaemonStore/resources(of:)``), and this keeps those of the apps used lately, decoded, so that a
/// push costs no read for them. A value type with no I/O; the engine reads and writes the store.
///
/// A read of the store that began before a write of any app's resources is not kept (its app's may be
/// the ones written meanwhile): the next use reads again.
struct AppResources {
    private var known: [String: ResourcesOfApp] = [:]
    private var writes: UInt64 = 0
    /// How many apps' resources are kept at most; beyond, one leaves for each that comes.
    let capacity: Int

    init(capacity: Int = 1024) {
        self.capacity = max(1, capacity)
    }

    /// The app's resources, if they are known.
    subscript(app: String) -> ResourcesOfApp? { known[app] }

    /// Marks the start of a read of the store, to hand to ``finishRead(_:_:begunAt:)``.
    func beginRead() -> UInt64 { writes }

    /// Keeps what a read of the store found, unless a write came after it began.
    mutating func finishRead(_ app: String, _ resources: ResourcesOfApp, begunAt mark: UInt64) {
        guard mark == writes else { return }
        if known[app] == nil, known.count >= capacity { known.remove(at: known.startIndex) }
        known[app] = resources
    }

    /// A write of the app's resources is durable: the known ones change as it did.
    mutating func wrote(_ app: String, _ change: (inout ResourcesOfApp) -> Void) {
        writes &+= 1
        if known[app] != nil { change(&known[app]!) }
    }

    /// The app is gone: nothing of it is kept.
    mutating func forget(_ app: String) {
        writes &+= 1
        known.removeValue(forKey: app)
    }

    /// The resources stored for an app, decoded. One that cannot be decoded (stored by a bug, or
    /// damaged) is left out, and said in the log: the app goes on without it.
    static func decode(_ stored: [AppResource: Data], of app: String, logger: Logger) -> ResourcesOfApp {
        var resources = ResourcesOfApp()
        for (kind, data) in stored {
            do {
                try read(data, as: kind, into: &resources)
            } catch {
                logger.error("an app's stored resource cannot be read; the app goes on without it", metadata: [
                    "app": .string(app), "resource": .string(kind.rawValue), "error": .string("\(error)"),
                ])
            }
        }
        return resources
    }

    /// Decodes `data` as a resource of `kind`, into its place in `resources`.
    static func read(_ data: Data, as kind: AppResource, into resources: inout ResourcesOfApp) throws {
        let decoder = JSONDecoder()
        switch kind {
        case .strings: resources.strings = try decoder.decode([String: String].self, from: data)
        case .serviceExtension: resources.serviceExtension = try decoder.decode(ServiceExtensionRegistration.self, from: data)
        case .contentExtension: resources.contentExtension = try decoder.decode(ContentExtensionRegistration.self, from: data)
        case .identity: resources.identity = try decoder.decode(AppIdentity.self, from: data)
        }
    }

    /// A resource as the store keeps it: its JSON, the same bytes for the same value.
    static func encode(_ value: some Encodable) throws(DaemonError) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        do {
            return try encoder.encode(value)
        } catch {
            throw DaemonError(.invalidRequest, "The value could not be encoded: \(error).")
        }
    }
}

/// The files earlier versions kept an app's resources in, beside the database: `strings/<app>.json`,
/// `extensions/<app>.json` (its service extension) and `extensions/<app>.content-extension.json`.
/// Moved into the store as the engine starts, each file removed once its content is stored; one of
/// an app no longer registered is removed; one that cannot be read stays where it is, said in the log.
enum LooseResourceFiles {
    static func moveIntoStore(from folder: URL, _ store: any DaemonStore, logger: Logger) async {
        for (file, app, kind) in files(in: folder) {
            do throws(DaemonError) {
                guard let data = FileManager.default.contents(atPath: file.path), Self.decodes(data, as: kind) else {
                    logger.error("an app's resource file cannot be read; it is left where it is", metadata: [
                        "file": .string(file.path), "app": .string(app),
                    ])
                    continue
                }
                try await store.setResource(kind, of: app, to: data)
            } catch where error.code == .appNotFound {
                // The app was removed; its file was left behind.
            } catch {
                logger.error("could not move an app's resource file into the store; it is tried again at the next start", metadata: [
                    "file": .string(file.path), "error": .string(error.message),
                ])
                continue
            }
            try? FileManager.default.removeItem(at: file)
            logger.info("moved an app's resource file into the store", metadata: ["file": .string(file.path), "app": .string(app)])
        }
        let strings = folder.appendingPathComponent("strings", isDirectory: true)
        if (try? FileManager.default.contentsOfDirectory(atPath: strings.path))?.isEmpty == true {
            try? FileManager.default.removeItem(at: strings)
        }
    }

    /// Every file of the old layout in `folder`, with its app and what it holds.
    static func files(in folder: URL) -> [(file: URL, app: String, kind: AppResource)] {
        var found: [(URL, String, AppResource)] = []
        func names(in subfolder: String) -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent(subfolder).path)) ?? []).sorted()
        }
        for name in names(in: "strings") where name.hasSuffix(".json") {
            found.append((folder.appendingPathComponent("strings/\(name)"), String(name.dropLast(".json".count)), .strings))
        }
        for name in names(in: "extensions") {
            let file = folder.appendingPathComponent("extensions/\(name)")
            if name.hasSuffix(".content-extension.json") {
                found.append((file, String(name.dropLast(".content-extension.json".count)), .contentExtension))
            } else if name.hasSuffix(".json") {
                found.append((file, String(name.dropLast(".json".count)), .serviceExtension))
            }
        }
        return found.filter { RequestRules.violation(inBundleIdentifier: $0.1) == nil }
    }

    private static func decodes(_ data: Data, as kind: AppResource) -> Bool {
        var scratch = ResourcesOfApp()
        return (try? AppResources.read(data, as: kind, into: &scratch)) != nil
    }
}

/// An app's content extension as registered with the daemon (`unotify apps content-extension`, or the
/// app's own `PUT /v1/content-extension`): exactly what the local API's call gives, its executable and
/// its `Info.plist` attributes.
package typealias ContentExtensionRegistration = LocalAPI.ContentExtension

extension ContentExtensionRegistration {
    /// Whether it draws notifications of `category`.
    package func draws(_ category: String) -> Bool {
        !category.isEmpty && attributes.categories.contains(category)
    }
}
