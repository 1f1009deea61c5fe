import Foundation
import GroupDefaults
import PropertyList
import SharedFiles

/// The widgets running on a device (`GroupSim.runWidget`'s processes), as
/// `WidgetCenter.getCurrentConfigurations` reports them: one entry per
/// process in `Library/WidgetCenter/running-widgets.plist`, keyed by its pid
/// and stamped with the process's start time, so the entry of a process that
/// has ended (however it ended, kill -9 included) is ignored, and dropped by
/// the next registration, even when its pid was given to another process.
package struct RunningWidgets: Sendable {
    /// One running widget.
    package struct Entry: Sendable, Equatable {
        package let bundle: String
        package let kind: String
        package let family: String
        /// A configurable widget's `WidgetConfigurationIntent`: its type's name and the parameters it was given.
        package let configuration: Configuration?

        package struct Configuration: Sendable, Hashable {
            package let intent: String
            package let parameters: [String: String]

            package init(intent: String, parameters: [String: String]) {
                self.intent = intent
                self.parameters = parameters
            }
        }

        package init(bundle: String, kind: String, family: String, configuration: Configuration? = nil) {
            self.bundle = bundle
            self.kind = kind
            self.family = family
            self.configuration = configuration
        }
    }

    package let root: SimulationRoot
    package let device: String

    package init(root: SimulationRoot, device: String) {
        self.root = root
        self.device = device
    }

    package var path: String { get throws { try root.devicePath(device) + "/Library/WidgetCenter/running-widgets.plist" } }

    /// Adds this process (dropping the entries of processes that have ended).
    package func register(_ entry: Entry) throws {
        let file = try path
        try root.prepareConfinedDirectory((file as NSString).deletingLastPathComponent)
        let pid = getpid()
        try SharedPlistFile(path: file, durable: try root.durability().waitsForTheDisk, root: root.path).update { contents in
            for (key, value) in contents where !Self.isRunning(key: key, value) { contents[key] = nil }
            var fields: [String: PlistValue] = [
                "bundle": .string(entry.bundle), "kind": .string(entry.kind), "family": .string(entry.family),
                "started": .integer(Self.startTime(of: pid) ?? 0),
            ]
            if let configuration = entry.configuration {
                fields["intent"] = .string(configuration.intent)
                fields["parameters"] = .dictionary(configuration.parameters.mapValues { .string($0) })
            }
            contents[String(pid)] = .dictionary(fields)
        }
    }

    /// The widgets of `bundle` whose processes are running, by kind.
    package func running(bundle: String) throws -> [Entry] {
        let contents = try SharedPlistFile.read(path: try path, root: root.path) ?? [:]
        return contents.keys.sorted().compactMap { key -> Entry? in
            guard let fields = contents[key]?.dictionaryValue, Self.isRunning(key: key, contents[key]!),
                fields["bundle"]?.stringValue == bundle, let kind = fields["kind"]?.stringValue
            else { return nil }
            let configuration = fields["intent"]?.stringValue.map { intent in
                Entry.Configuration(
                    intent: intent, parameters: (fields["parameters"]?.dictionaryValue ?? [:]).compactMapValues { $0.stringValue })
            }
            return Entry(bundle: bundle, kind: kind, family: fields["family"]?.stringValue ?? "", configuration: configuration)
        }.sorted { ($0.kind, $0.family) < ($1.kind, $1.family) }
    }

    /// Whether the process an entry names still runs: its pid exists with the start time it was registered with.
    private static func isRunning(key: String, _ value: PlistValue) -> Bool {
        guard let pid = Int32(key), pid > 0, case .integer(let started)? = value.dictionaryValue?["started"] else { return false }
        guard kill(pid, 0) == 0 || errno == EPERM else { return false }
        return startTime(of: pid) == started
    }

    /// The process's start time in clock ticks since boot (`/proc/PID/stat`, field 22): a pid's reuse changes it.
    private static func startTime(of pid: Int32) -> Int64? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let end = text.lastIndex(of: ")")
        else { return nil }
        // After the command's closing parenthesis: field 3 (state) onwards.
        let fields = text[text.index(after: end)...].split(separator: " ")
        return fields.count > 19 ? Int64(fields[19]) : nil
    }
}
