import AppInstall
import AppModel
import ChildProcess
import CloudDevice
import CloudModel
import DeviceState
import Foundation
import GroupDefaults
import Guarded
import ScenarioModel
import Scenarios
import SimulationValues
import SpecFormat

/// Whether a simulation saw a failure, so that its root is kept for
/// inspection then (and removed otherwise). Every `Failure` the library
/// throws passes through `failure(_:at:)`.
/// Unchecked Sendable: `failed` is under `lock`.
final class SimulationOutcome: @unchecked Sendable {
    private let lock = Locked()
    private var failed = false

    func failure(_ message: String, at place: SourcePlace) -> Failure {
        markFailed()
        return Failure(message, at: place)
    }

    func markFailed() { lock.withLock { failed = true } }
    var hasFailed: Bool { lock.withLock { failed } }
}

/// An app to install: the built-in example (Notes: com.example.notes, its
/// widget and intent extension, group.com.example.notes), a manifest file,
/// or a manifest's YAML text (docs/scenarios.md, "The app").
public enum AppManifestSource: Sendable {
    case example
    case file(String)
    case yaml(String)
}

/// An executable to launch: a product built next to the tests (on Linux,
/// in the same `.build/<configuration>/` folder as the test bundle), or a path
/// (any executable: one that does not link SimulatedFoundation has no control channel).
/// A string literal names a built product: `"NotesWidget"`.
public struct Executable: Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    enum Location: Sendable {
        case built(String)
        case path(String)
    }
    let location: Location

    /// The executable product `name` of your package, built beside the tests.
    /// - Parameters:
    ///   - name: The product's name.
    /// - Returns: The executable.
    public static func built(_ name: String) -> Executable { Executable(location: .built(name)) }
    /// The executable at `path`.
    /// - Parameters:
    ///   - path: The executable's path.
    /// - Returns: The executable.
    public static func path(_ path: String) -> Executable { Executable(location: .path(path)) }

    public init(stringLiteral name: String) { location = .built(name) }
    init(location: Location) { self.location = location }

    public var description: String {
        switch location {
        case .built(let name): name
        case .path(let path): (path as NSString).lastPathComponent
        }
    }
}

/// A simulation for one test: a fresh simulation root in the temporary
/// folder, with devices, installed apps, your executables running as the
/// apps' targets, and (once a device has an iCloud account) the cloud and
/// each device's sync agent, all real processes.
///
/// `finish()` (or `withSimulation`, which calls it) ends every process and
/// removes the root, or, when the test failed, keeps it and prints its path.
/// A simulation let go without `finish()` is finished then.
///
/// ```swift
/// let simulation = try Simulation()
/// try simulation.install(.example, on: "iPhone")
/// let widget = try await simulation.launch("NotesWidget", as: .widget)
/// let app = try await simulation.launch("NotesApp")
/// try await app.set("theme", "dark")
/// let delivery = try await widget.waitForChange(key: "theme", value: "dark")
/// ```
/// Unchecked Sendable: the launched executables, devices, apps, cloud and the finished flag are under `lock`; the rest is set in `init`.
public final class Simulation: @unchecked Sendable {
    /// The simulation root (`GROUPSIM_ROOT` of every process it starts).
    public let root: String
    /// The folder of the built executables: your products, and groupsim's
    /// own (`groupsim` for the cloud, `main-app`, `widget`, `intent-extension` for scenarios).
    public let binaries: String

    let outcome = SimulationOutcome()
    private let lock = Locked()
    private var launched: [LaunchedExecutable] = []
    private var cloud: CloudRig?
    private var finished = false
    private var launches = 0

    /// Set to 1 to keep every simulation's root, passed or failed.
    public static let keepRootsVariable = SimulationEnvironment.Name.keepRoots

    /// A fresh, empty simulation root. `binaries`: where the built
    /// executables are (default: `$GROUPSIM_BIN_DIR`, else the folder of the
    /// running test bundle).
    /// - Parameters:
    ///   - binaries: The folder of the built executables (nil: `$GROUPSIM_BIN_DIR`, else the test bundle's folder).
    ///   - fileID: The caller's `#fileID` (the default): where a failure is reported.
    ///   - filePath: The caller's `#filePath` (the default).
    ///   - line: The caller's `#line` (the default).
    ///   - column: The caller's `#column` (the default).
    /// - Throws: `Failure`, at the caller's line, when the root cannot be made.
    public init(
        binaries: String? = nil,
        fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
    ) throws {
        let place = SourcePlace(fileID: fileID, filePath: filePath, line: line, column: column)
        self.binaries = binaries ?? Self.defaultBinaries()
        var template = Array((NSTemporaryDirectory() as NSString).appendingPathComponent("groupsim-test-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard let made else {
            throw outcome.failure("cannot make a simulation root in \(NSTemporaryDirectory()): \(String(cString: strerror(errno)))", at: place)
        }
        root = String(cString: made)
    }

    deinit { finish() }

    /// `$GROUPSIM_BIN_DIR`, else the folder of this process's executable
    /// (the test bundle, which SwiftPM builds beside the products).
    static func defaultBinaries() -> String {
        if let folder = SimulationEnvironment.current.nonEmpty(SimulationEnvironment.Name.binDir) { return folder }
        let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return (me as NSString).deletingLastPathComponent
    }

    var simulationRoot: SimulationRoot { SimulationRoot(path: root) }

    // MARK: Devices and apps

    /// Makes a device. With `iCloudAccount`, the device is signed in: the
    /// cloud (`groupsim cloud serve`) is started if it is not running yet,
    /// and the device's sync agent, so its apps' iCloud key-value stores sync.
    /// - Parameters:
    ///   - name: The device's name.
    ///   - iCloudAccount: The iCloud account it is signed in to (nil: none).
    ///   - fileID: The caller's `#fileID` (the default): where a failure is reported.
    ///   - filePath: The caller's `#filePath` (the default).
    ///   - line: The caller's `#line` (the default).
    ///   - column: The caller's `#column` (the default).
    /// - Throws: `Failure`, at the caller's line, when the device cannot be made, or the cloud or its agent does not start.
    public func addDevice(
        _ name: String, iCloudAccount: String? = nil,
        fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
    ) async throws {
        let place = SourcePlace(fileID: fileID, filePath: filePath, line: line, column: column)
        try await Blocking.run { [self] in
            do {
                try DeviceManager(root: simulationRoot).create(name)
            } catch {
                throw outcome.failure("cannot make the device \(name): \(error)", at: place)
            }
            guard let iCloudAccount else { return }
            do {
                try DeviceCloud(root: simulationRoot, device: name).updateSettings { $0.account = iCloudAccount }
                try cloudRig(at: place).startAgent(name)
            } catch let failure as Failure {
                throw failure
            } catch {
                throw outcome.failure("cannot sign \(name) in to iCloud as \(iCloudAccount): \(error)", at: place)
            }
        }
    }

    /// Installs an app on `device` (made, without an account, if it does not
    /// exist yet); returns the main app's bundle id.
    /// - Parameters:
    ///   - app: The app's manifest: `.example`, `.file(path)` or `.yaml(text)`.
    ///   - device: The device's name.
    ///   - fileID: The caller's `#fileID` (the default): where a failure is reported.
    ///   - filePath: The caller's `#filePath` (the default).
    ///   - line: The caller's `#line` (the default).
    ///   - column: The caller's `#column` (the default).
    /// - Throws: `Failure`, at the caller's line, when the manifest is refused or cannot be installed.
    /// - Returns: The bundle id of the app's main target (else of its first target).
    @discardableResult
    public func install(
        _ app: AppManifestSource = .example, on device: String = "iPhone",
        fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
    ) throws -> String {
        let place = SourcePlace(fileID: fileID, filePath: filePath, line: line, column: column)
        do {
            let manager = DeviceManager(root: simulationRoot)
            if (try? manager.requireDevice(device)) == nil { try manager.create(device) }
            let (text, manifest): (String, AppManifest)
            switch app {
            case .example: (text, manifest) = (AppManifest.exampleYAML, AppManifest.example)
            case .file(let path): (text, manifest) = try DeviceManager.loadManifest(path)
            case .yaml(let yaml): (text, manifest) = (yaml, try AppManifest.parse(SpecNode.parse(yaml, file: "the manifest given to install")))
            }
            try manager.install(manifest, manifestText: text, device: device)
            guard let bundle = manifest.targets[.mainApp]?.bundleIdentifier ?? manifest.targets.values.first?.bundleIdentifier else {
                throw DeviceError("the manifest has no targets")
            }
            return bundle
        } catch {
            throw outcome.failure("cannot install the app on \(device): \(error)", at: place)
        }
    }

    // MARK: Launching

    /// Starts `executable` as `target` of the app `app` (by default the one
    /// app installed on `device`) with `arguments` (its launch arguments:
    /// `["-theme", "dark"]` fills its argument domain). One that links
    /// SimulatedFoundation is waited for until it is ready on its control
    /// channel; any other executable is launched too, with the target's identity
    /// in its environment, and has its output, input, end and signals only
    /// (`hasControlChannel` is false; the channel's calls fail, saying how to link it).
    /// - Parameters:
    ///   - executable: A product built beside the tests (`"Name"`), or `.path(…)`.
    ///   - target: Which of the app's targets it runs as.
    ///   - app: The app's bundle id (nil: the one app installed on `device`).
    ///   - device: The device's name.
    ///   - arguments: Its launch arguments (`-key value` fills its argument domain).
    ///   - environment: Variables added to its environment.
    ///   - fileID: The caller's `#fileID` (the default): where a failure is reported.
    ///   - filePath: The caller's `#filePath` (the default).
    ///   - line: The caller's `#line` (the default).
    ///   - column: The caller's `#column` (the default).
    /// - Throws: `Failure`, at the caller's line, when it cannot be started, or does not say ready within 20 s.
    /// - Returns: The running program.
    public func launch(
        _ executable: Executable, as target: AppTarget = .app, of app: String? = nil, on device: String = "iPhone",
        arguments: [String] = [], environment: [String: String] = [:],
        fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
    ) async throws
        -> LaunchedExecutable
    {
        let place = SourcePlace(fileID: fileID, filePath: filePath, line: line, column: column)
        return try await Blocking.run { [self] in
            let path = try resolve(executable, at: place)
            let bundle = try app ?? onlyApp(on: device, at: place)
            let identity: ExecutableIdentity
            do {
                identity = try ExecutableIdentity.resolve(root: simulationRoot, device: device, app: bundle, role: target.role, manifestPath: nil)
            } catch {
                throw outcome.failure("cannot launch \(executable) as \(target.rawValue): \(error)", at: place)
            }
            var variables = environment
            // The simulation starts the cloud and the agents itself: the program must not start its own.
            variables[CloudDaemons.autostartVariable] = "0"
            let spec = LaunchSpec(
                name: "\(executable) (\(target.rawValue) of \(bundle) on \(device))", executable: path, arguments: arguments,
                identity: identity, environment: variables,
                linksSimulatedFoundation: SimulatedFoundationLinkage.of(path, DiskScenarioFiles.linkage(of: path)).links)
            return try start(spec, at: place)
        }
    }

    /// Starts `program` again: the same executable with the same identity,
    /// with `arguments` in place of its launch arguments when given. A running
    /// program is ended first (SIGTERM, then SIGKILL after 10 s), as iOS ends an
    /// app before it launches it again. Returns the new program; the old one stays
    /// as it ended (its output, its status).
    /// - Parameters:
    ///   - program: A program this simulation launched.
    ///   - arguments: Its new launch arguments (nil: the same).
    ///   - fileID: The caller's `#fileID` (the default): where a failure is reported.
    ///   - filePath: The caller's `#filePath` (the default).
    ///   - line: The caller's `#line` (the default).
    ///   - column: The caller's `#column` (the default).
    /// - Throws: `Failure`, at the caller's line, when the old one does not end, or the new one does not start.
    /// - Returns: The new program.
    public func restart(
        _ program: LaunchedExecutable, arguments: [String]? = nil,
        fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
    ) async throws -> LaunchedExecutable {
        let place = SourcePlace(fileID: fileID, filePath: filePath, line: line, column: column)
        return try await Blocking.run { [self] in
            if program.process.signal(SIGTERM), (try? program.process.waitForTermination(timeout: 10)) == nil,
                program.process.kill(timeout: 10) == nil
            {
                throw outcome.failure("\(program.name) did not end within 10 s of SIGTERM and SIGKILL: cannot restart it", at: place)
            }
            return try start(program.spec.with(arguments: arguments), at: place)
        }
    }

    /// Starts the program of `spec`, with a control socket of its own in the root.
    private func start(_ spec: LaunchSpec, at place: SourcePlace) throws -> LaunchedExecutable {
        let number = lock.withLock { () -> Int in
            launches += 1
            return launches
        }
        let process = try LaunchedExecutable(spec, socketPath: root + "/control-\(number).sock", outcome: outcome, place: place)
        lock.withLock { launched.append(process) }
        return process
    }

    private func resolve(_ executable: Executable, at place: SourcePlace) throws -> String {
        switch executable.location {
        case .path(let path):
            guard FileManager.default.isExecutableFile(atPath: path) else { throw outcome.failure("no executable at \(path)", at: place) }
            return path
        case .built(let name):
            let path = binaries + "/" + name
            guard FileManager.default.isExecutableFile(atPath: path) else {
                throw outcome.failure(
                    "no built executable \(name) in \(binaries): build it (swift build --build-tests builds it when the "
                        + "test target depends on it), or set GROUPSIM_BIN_DIR to the folder that holds it", at: place)
            }
            return path
        }
    }

    private func onlyApp(on device: String, at place: SourcePlace) throws -> String {
        let installed = (try? DeviceManager(root: simulationRoot).installed(device: device)) ?? []
        guard installed.count == 1, let only = installed.first else {
            throw outcome.failure(
                installed.isEmpty
                    ? "no app is installed on \(device): call install(…, on: \"\(device)\") first"
                    : "\(device) has several apps (\(installed.map(\.bundle).joined(separator: ", "))): say which with launch(…, of: BUNDLE)",
                at: place)
        }
        return only.bundle
    }

    // MARK: The cloud

    /// The cloud of this simulation, started at first use.
    private func cloudRig(at place: SourcePlace) throws -> CloudRig {
        if let running = lock.withLock({ cloud }) { return running }
        let groupsim = binaries + "/groupsim"
        guard FileManager.default.isExecutableFile(atPath: groupsim) else {
            throw outcome.failure(
                "the cloud needs groupsim's own executable, not found in \(binaries): make the test target depend on "
                    + ".product(name: \"groupsim\", package: \"groupsim\") so that it is built, or set GROUPSIM_BIN_DIR", at: place)
        }
        let rig = CloudRig(root: simulationRoot, groupsim: groupsim, log: ScenarioLog())
        lock.withLock { cloud = rig }
        try rig.startServer()
        return rig
    }

    /// Takes `device` off the network (its agent can no longer reach the cloud) or puts it back.
    /// - Parameters:
    ///   - online: Whether the device can reach the cloud.
    ///   - device: The device's name.
    ///   - fileID: The caller's `#fileID` (the default): where a failure is reported.
    ///   - filePath: The caller's `#filePath` (the default).
    ///   - line: The caller's `#line` (the default).
    ///   - column: The caller's `#column` (the default).
    /// - Throws: `Failure`, at the caller's line, when the cloud (started at first use) does not start, or the device's network cannot be changed.
    public func setOnline(
        _ online: Bool, device: String,
        fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
    ) async throws {
        let place = SourcePlace(fileID: fileID, filePath: filePath, line: line, column: column)
        try await Blocking.run { [self] in
            do {
                try cloudRig(at: place).perform(.network(device: device, online ? .online : .offline))
            } catch let failure as Failure {
                throw failure
            } catch {
                throw outcome.failure("cannot take \(device) \(online ? "online" : "offline"): \(error)", at: place)
            }
        }
    }

    /// Erases `device`, as the scenario step `erase-device` does: every
    /// container and preference on it is removed, its installed apps with them;
    /// the device itself stays, and its running programs keep running (they find
    /// their files gone).
    /// - Parameters:
    ///   - device: The device's name.
    ///   - fileID: The caller's `#fileID` (the default): where a failure is reported.
    ///   - filePath: The caller's `#filePath` (the default).
    ///   - line: The caller's `#line` (the default).
    ///   - column: The caller's `#column` (the default).
    /// - Throws: `Failure`, at the caller's line, when the device cannot be erased.
    public func eraseDevice(
        _ device: String,
        fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
    ) async throws {
        try await changeDevice("erase \(device)", at: SourcePlace(fileID: fileID, filePath: filePath, line: line, column: column)) {
            try $0.erase(device)
        }
    }

    /// Waits until every signed-in, online device has uploaded what its apps
    /// wrote and has every revision the cloud has (the scenario step
    /// `wait-cloud`). The running executables with an iCloud store are
    /// synchronized first, so their writes are in their devices' copies.
    /// - Parameters:
    ///   - timeout: How long to wait at most.
    ///   - fileID: The caller's `#fileID` (the default): where a failure is reported.
    ///   - filePath: The caller's `#filePath` (the default).
    ///   - line: The caller's `#line` (the default).
    ///   - column: The caller's `#column` (the default).
    /// - Throws: `Failure`, at the caller's line, when the devices and the cloud do not agree within `timeout`.
    public func waitForCloud(
        timeout: Duration = .seconds(20),
        fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
    ) async throws {
        let place = SourcePlace(fileID: fileID, filePath: filePath, line: line, column: column)
        let seconds = timeout.seconds
        let rig = try await Blocking.run { [self] in try cloudRig(at: place) }
        // What a wait brings (a first download) can make a program write again (a bridge): save and wait
        // until a save adds nothing, as the scenario step does.
        for _ in 0..<4 {
            try await saveProgramsWithCloudStores(timeout: timeout, at: place)
            try await Blocking.run { [outcome = self.outcome] in
                do { try rig.perform(.waitForQuiescence(timeout: seconds)) } catch { throw outcome.failure("\(error)", at: place) }
            }
            try await saveProgramsWithCloudStores(timeout: timeout, at: place)
            if (try? rig.isSettled()) == true { return }
        }
        throw outcome.failure("the devices and the cloud kept changing: a program answers each download with a write", at: place)
    }

    /// Opens and saves the iCloud store of every running program entitled to
    /// one (so its device downloads the store, and its writes are in the
    /// device's copy), then its defaults (which takes in what was downloaded).
    /// The launched programs still running on `device`.
    func programsRunning(on device: String) -> [LaunchedExecutable] {
        lock.withLock { launched.filter { $0.isRunning && $0.spec.identity.identity.device == device } }
    }

    private func saveProgramsWithCloudStores(timeout: Duration, at place: SourcePlace) async throws {
        let running = lock.withLock { launched.filter { $0.isRunning && $0.hasKeyValueStore } }
        for program in running {
            try await program.request(.cloudSynchronize, suite: nil, timeout: timeout, at: place)
            try await program.request(.synchronize, suite: nil, timeout: timeout, at: place)
        }
    }

    // MARK: The end

    /// Records that the test failed for a reason of its own (an `#expect`
    /// the simulation did not see), so the root is kept.
    public func markFailed() { outcome.markFailed() }

    /// Whether a call of this simulation failed (or `markFailed()` was called).
    public var hasFailed: Bool { outcome.hasFailed }

    /// Ends every process of the simulation; then removes the root, or keeps
    /// it when the simulation failed (or `GROUPSIM_KEEP_ROOTS=1`) and prints
    /// its path on standard error. Calling it again does nothing.
    public func finish() {
        let state = lock.withLock { () -> (programs: [LaunchedExecutable], rig: CloudRig?)? in
            if finished { return nil }
            finished = true
            return (launched, cloud)
        }
        guard let (programs, rig) = state else { return }
        for program in programs { program.end() }
        rig?.endAll()
        if outcome.hasFailed || SimulationEnvironment.current[Self.keepRootsVariable] == "1" {
            FileHandle.standardError.write(Data("groupsim: the simulation root is kept for inspection: \(root)\n".utf8))
        } else {
            try? FileManager.default.removeItem(atPath: root)
        }
    }
}
