import Foundation
import SimulationValues

/// Who a process of the simulation is: the root and device it runs on, its
/// bundle identifier and the app groups it is entitled to. `groupsim exec`
/// hands it to a user's executable in environment variables; code built on
/// the Foundation face reads them, so the code itself names nothing.
///
///     GROUPSIM_ROOT        the simulation root (default: as for every groupsim tool)
///     GROUPSIM_DEVICE      the device (default: iPhone)
///     GROUPSIM_BUNDLE_ID   the bundle identifier (default: the executable's name,
///                          as for a command-line tool on macOS)
///     GROUPSIM_APP_GROUPS  the app-group entitlement, comma-separated (default: none)
public struct ProcessIdentity: Sendable, Hashable {
    public var root: SimulationRoot
    public var device: String
    public var bundleIdentifier: String
    public var appGroups: Set<String>

    public enum Variable {
        public static let root = SimulationEnvironment.Name.root
        public static let device = SimulationEnvironment.Name.device
        public static let bundleIdentifier = SimulationEnvironment.Name.bundleIdentifier
        public static let appGroups = SimulationEnvironment.Name.appGroups
    }

    /// Used when neither the environment nor the executable's name gives a usable bundle identifier.
    public static let fallbackBundleIdentifier = "groupsim.tool"

    /// - Parameters:
    ///   - root: The simulation root.
    ///   - device: The device the process runs on.
    ///   - bundleIdentifier: The process's bundle identifier.
    ///   - appGroups: The app groups it is entitled to.
    public init(root: SimulationRoot, device: String = SimulationRoot.defaultDevice, bundleIdentifier: String, appGroups: Set<String> = []) {
        self.root = root
        self.device = device
        self.bundleIdentifier = bundleIdentifier
        self.appGroups = appGroups
    }

    /// Where this process's domains are, with its entitlement.
    public var context: DefaultsContext {
        DefaultsContext(root: root, device: device, bundleIdentifier: bundleIdentifier, appGroups: appGroups)
    }

    /// The variables that make a process this one.
    public var environment: [String: String] {
        [
            Variable.root: root.path, Variable.device: device, Variable.bundleIdentifier: bundleIdentifier,
            Variable.appGroups: appGroups.sorted().joined(separator: ","),
        ]
    }

    /// The identity the variables describe. A value that cannot be used (a
    /// device or bundle id that is not a folder name, an app group that is
    /// not `group.…`) is reported, and the default is used in its place.
    /// - Parameters:
    ///   - environment: The variables to read.
    ///   - executablePath: The executable, whose file name is the bundle identifier when `GROUPSIM_BUNDLE_ID` is unset.
    ///   - report: Where unusable values are reported.
    /// - Returns: The identity.
    public static func fromEnvironment(
        _ environment: [String: String] = ProcessInfo.processInfo.environment,
        executablePath: String = CommandLine.arguments.first ?? "",
        report: (Diagnostic) -> Void = Diagnostics.report
    ) -> ProcessIdentity {
        func refuse(_ variable: String, _ value: String, _ error: Error, using fallback: String) {
            report(
                Diagnostic(
                    kind: .invalidEnvironment,
                    message: "\(variable)=\(DefaultsError.show(value)) cannot be used (\(error)); using \(DefaultsError.show(fallback)) instead"))
        }

        let device: String
        do { device = try SimulationRoot.resolveDevice(environment: environment) } catch {
            refuse(Variable.device, environment[Variable.device] ?? "", error, using: SimulationRoot.defaultDevice)
            device = SimulationRoot.defaultDevice
        }

        var bundle =
            environment[Variable.bundleIdentifier].flatMap { $0.isEmpty ? nil : $0 }
            ?? (executablePath as NSString).lastPathComponent
        do { try DomainName.validate(bundle, what: "bundle identifier") } catch {
            refuse(Variable.bundleIdentifier, bundle, error, using: fallbackBundleIdentifier)
            bundle = fallbackBundleIdentifier
        }

        var groups = Set<String>()
        for entry in (environment[Variable.appGroups] ?? "").split(separator: ",") {
            let group = entry.trimmingCharacters(in: .whitespaces)
            if group.isEmpty { continue }
            do {
                guard DomainName.isGroup(group) else {
                    throw DefaultsError.invalidName(name: group, what: "app group identifier", problem: "does not start with 'group.'")
                }
                try DomainName.validate(group, what: "app group identifier")
                groups.insert(group)
            } catch {
                report(
                    Diagnostic(
                        kind: .invalidEnvironment,
                        message: "\(Variable.appGroups): \(error); that group is left out of the entitlement"))
            }
        }
        return ProcessIdentity(root: SimulationRoot.resolve(environment: environment), device: device, bundleIdentifier: bundle, appGroups: groups)
    }
}
