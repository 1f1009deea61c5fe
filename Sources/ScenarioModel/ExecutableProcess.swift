import AppModel
import AppProtocol
import Foundation
import SimulationValues
import SpecFormat

extension ScenarioParser {
    /// How long an executable has to connect to its control channel and answer, when its process gives no `start-timeout`.
    package static let defaultStartTimeout: Double = 20

    /// One entry of `processes:`: a built-in role (`role:`) or a user's executable (`exec:`).
    static func parseProcess(
        _ name: String, _ node: SpecNode, app: AppManifest, devices: [String], file: String, fileSystem: any ScenarioFileSystem
    ) throws -> ProcessSpec {
        let spec = try node.fields(allowed: ["role", "device", "args", "exec", "target", "env", "control", "start-timeout", "launch"])
        let device = try spec["device"]?.string() ?? devices[0]
        guard devices.contains(device) else {
            throw spec["device"]!.error("unknown device '\(device)'; declared: \(devices.joined(separator: ", "))")
        }
        let arguments = try spec["args"]?.strings() ?? []
        if let execNode = spec["exec"] {
            if let roleNode = spec["role"] { throw roleNode.error("a process has 'role' (a built-in process) or 'exec' (your executable), not both") }
            let targetText = try spec["target"]?.string() ?? "app"
            guard let role = AppTarget(rawValue: targetText)?.role else {
                throw spec["target"]!.error(
                    "target is app, widget or intent (which of the app's targets the executable plays), found '\(targetText)'")
            }
            guard app.targets[role] != nil else { throw (spec["target"] ?? execNode).error("the app '\(app.name)' has no \(role.rawValue) target") }
            var executable = try parseExecutable(
                execNode, environment: spec["env"], control: spec["control"], file: file, fileSystem: fileSystem)
            executable.startTimeout = try spec["start-timeout"]?.seconds(atMost: maximumWait) ?? defaultStartTimeout
            var process = ProcessSpec(name: name, role: role, device: device, arguments: arguments, executable: executable)
            // `launch: background`: its WidgetCenter's reloads count against the widget's budget (GROUPSIM_LAUNCH).
            process.launchesInBackground = try parseLaunch(spec["launch"], role: role)
            return process
        }
        for key in ["target", "env", "control", "start-timeout"] where spec[key] != nil {
            throw spec[key]!.error("'\(key)' goes with 'exec' (your own executable), not with a built-in role")
        }
        guard let roleNode = spec["role"] else {
            throw node.error("a process needs 'role' (main-app or widget) or 'exec' (your executable and its arguments)")
        }
        let roleText = try roleNode.string()
        guard let role = Role(rawValue: roleText), role != .intentExtension else {
            throw roleNode.error("role must be main-app or widget (run the intent extension with the 'intent' step), found '\(roleText)'")
        }
        guard app.targets[role] != nil else { throw roleNode.error("the app '\(app.name)' has no \(roleText) target") }
        var process = ProcessSpec(name: name, role: role, device: device, arguments: arguments)
        process.launchesInBackground = try parseLaunch(spec["launch"], role: role)
        return process
    }

    /// `launch: foreground` (the default) or `launch: background`, for the main app only.
    static func parseLaunch(_ node: SpecNode?, role: Role) throws -> Bool {
        guard let node else { return false }
        let text = try node.string()
        guard text == "background" || text == "foreground" else {
            throw node.error("launch is foreground (the person opens the app) or background (the system does), found '\(text)'")
        }
        if role != .mainApp { throw node.error("launch: \(text) is for the main-app process; a widget is never in the foreground") }
        return text == "background"
    }

    /// `exec: [PATH, ARG…]`, with its `env` and `control`: the file is found now
    /// in `fileSystem`, which also says whether it links SimulatedFoundation.
    static func parseExecutable(
        _ node: SpecNode, environment: SpecNode?, control: SpecNode?, file: String, fileSystem: any ScenarioFileSystem
    ) throws -> ExecutableSpec {
        let words = try node.listOrSingle().map { try $0.string() }
        guard let name = words.first, !name.isEmpty else {
            throw node.error("exec needs the executable, e.g. exec: [../.build/debug/MyTool, --verbose]")
        }
        let (path, found) = try locateExecutable(name, at: node, lookup: fileSystem.resolveExecutable(name, relativeTo: file))
        let variables = try parseEnvironment(environment)
        let linkage = SimulatedFoundationLinkage.of(path, found)
        let wanted = try control?.bool()
        if wanted == true, case .absent(let reason) = linkage { throw control!.error("control: true, but \(reason)") }
        let hasChannel = wanted ?? linkage.links
        let reason: String? = hasChannel ? nil : wanted == false ? "it is declared with control: false" : linkage.reason
        return ExecutableSpec(
            path: path, arguments: Array(words.dropFirst()), environment: variables, control: hasChannel, noControlReason: reason,
            linksSimulatedFoundation: linkage.links)
    }

    /// What the runner sets in an executable's environment itself: its identity, its control channel, its tie to the runner.
    static let runnerVariables = SimulationEnvironment.Name.startersVariables

    /// `env: { NAME: value }`: strings only, and none of the runner's own GROUPSIM_* variables.
    static func parseEnvironment(_ node: SpecNode?) throws -> [String: String] {
        var variables: [String: String] = [:]
        for (variable, value) in try node?.entries() ?? [] {
            guard case .scalar = value.node else {
                throw value.error("env values are strings (NAME: \"value\"), found \(value.kindName) for \(variable)")
            }
            if variable.hasPrefix("GROUPSIM_") {
                throw value.error(
                    "env cannot set \(variable): the runner sets the GROUPSIM_* variables itself (\(runnerVariables.joined(separator: ", "))) "
                        + "from the app's manifest (target, app groups, icloud-kvs) and the run; change the manifest or the process's target instead")
            }
            variables[variable] = try value.string()
        }
        return variables
    }

    /// The executable's path and linkage, or the error at `node` that says why there is none.
    static func locateExecutable(_ name: String, at node: SpecNode, lookup: ExecutableLookup) throws -> (String, ExecutableLinkage) {
        switch lookup {
        case .found(let path, let linkage):
            return (path, linkage)
        case .notOnPath(let folders):
            throw node.error(
                "no executable '\(name)' among the build's products or on PATH (\(folders.joined(separator: ":"))); "
                    + "build it (swift build), or give its path (relative to this file)")
        case .missing(let path):
            throw node.error("no executable at '\(path)' (exec paths are relative to the scenario file's folder); build it first, e.g. swift build")
        case .notRunnable(let path):
            throw node.error("'\(path)' is not an executable file (a folder, a device, or a file not marked executable: chmod +x)")
        }
    }
}

/// Whether an executable links SimulatedFoundation, as the scenario's
/// errors word it (the file system reads it from the file's symbols).
package enum SimulatedFoundationLinkage {
    case links
    /// It does not: why, and how to link it.
    case absent(String)
    /// The file cannot be read as an ELF executable (a script, say): `control: true` is believed.
    case unknown(String)

    static let howToLink =
        "link SimulatedFoundation: add `.product(name: \"SimulatedFoundation\", package: …)` to the target's dependencies "
        + "and `import SimulatedFoundation` where it uses UserDefaults (docs/api.md), or leave out the steps that need the channel"

    package static func of(_ path: String, _ linkage: ExecutableLinkage) -> SimulatedFoundationLinkage {
        switch linkage {
        case .links: .links
        case .doesNotLink:
            .absent("'\(path)' does not link SimulatedFoundation (no symbol of its control channel in the file); \(howToLink)")
        case .unreadable(let error):
            .unknown(
                "the runner cannot tell whether '\(path)' links SimulatedFoundation (\(error)); if it does, say control: true; otherwise \(howToLink)"
            )
        }
    }

    package var links: Bool { if case .links = self { true } else { false } }
    var reason: String? {
        switch self {
        case .links: nil
        case .absent(let reason), .unknown(let reason): reason
        }
    }
}
