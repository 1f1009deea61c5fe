import AppInstall
import AppModel
import AppProtocol
import ChildProcess
import Foundation
import GroupDefaults
import Guarded
import PropertyList
import ScenarioModel

/// One run of one scenario: it prepares the root (devices, the app's
/// manifest, the cloud), then hands each step to the part whose job it is —
/// the roster (processes), the waits, the faults, the one-shot processes,
/// the checks and the cloud rig — and records what the runner did.
/// Unchecked Sendable: the cloud rig, set once in `prepare` and read by parallel steps, is under `lock`; the rest is immutable or Sendable.
final class Execution: @unchecked Sendable {
    let context: RunContext
    let roster: ProcessRoster
    private let waits: Waits
    private let faults: FaultInjector
    private let oneShots: OneShotProcesses
    private let lock = Locked()
    /// The cloud's processes, when the scenario uses the cloud.
    private var cloud: CloudRig?

    var log: ScenarioLog { context.log }
    var root: String { context.root }
    var lanes: [String] { context.log.lanes }

    init(scenario: Scenario, binaries: String, warden: Warden?, processes: any ProcessLauncher, clock: any RunnerClock) {
        var template = Array((NSTemporaryDirectory() as NSString).appendingPathComponent("groupsim-scenario-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        let root = made.map { String(cString: $0) } ?? NSTemporaryDirectory() + "/groupsim-scenario-\(getpid())"
        let manifestPath: String?
        switch scenario.appSource {
        case .example: manifestPath = nil
        // Absolute: processes run in the scenario file's folder, not in the runner's.
        case .file(let path): manifestPath = URL(fileURLWithPath: path).standardizedFileURL.path
        case .inline: manifestPath = root + "/scenario-app.yaml"
        }
        context = RunContext(
            scenario: scenario, binaries: binaries, root: root, log: ScenarioLog(clock: clock), manifestPath: manifestPath, warden: warden,
            processes: processes)
        roster = ProcessRoster(context: context)
        waits = Waits(context: context, roster: roster)
        faults = FaultInjector(context: context, roster: roster)
        oneShots = OneShotProcesses(context: context)
    }

    func prepare() throws {
        let scenario = context.scenario
        // A scenario's root is thrown away with the run: no fsync there is ever used (docs/architecture.md, "Durability").
        try SimulationRoot(path: root).setDurability(.process)
        if case .inline(let yaml) = scenario.appSource, let path = context.manifestPath {
            try yaml.write(toFile: path, atomically: true, encoding: .utf8)
        }
        for device in scenario.deviceSpecs {
            try DeviceManager(root: SimulationRoot(path: root)).create(device.name, settings: device.settings)
        }
        if scenario.usesCloud {
            let rig = CloudRig(root: SimulationRoot(path: root), groupsim: context.binaries + "/groupsim", log: log)
            lock.withLock { cloud = rig }
            for lane in [CloudRig.serverLane] + scenario.devices.map(CloudRig.agentLane) { log.openLane(lane) }
            try rig.start(devices: scenario.deviceSpecs)
        }
    }

    private func cloudRig() throws -> CloudRig {
        guard let rig = lock.withLock({ cloud }) else { throw ScenarioRunError.check("this scenario has no cloud") }
        return rig
    }

    func endAll() {
        // Marked in the log, so what the processes say from here on reads as the runner ending them.
        log.record(process: "runner", kind: .action, name: "teardown", text: "the runner ends every process it started")
        roster.endAll()
        lock.withLock { cloud }?.endAll()
    }

    // MARK: Steps

    func perform(_ step: Step) throws {
        do {
            // Nothing new starts once the run is stopped.
            try LiveProcesses.shared.checkNotInterrupted()
            roster.noteStepStart()
            try execute(step)
        } catch let failure as ScenarioRunError where failure.isStep {
            throw failure
        } catch {
            log.record(process: "runner", kind: .action, name: "failure", text: "\(error)")
            throw ScenarioRunError.step(line: step.line, step: step.summary, message: "\(error)")
        }
    }

    private func execute(_ step: Step) throws {
        switch step.action {
        case .launch(let names): for name in names { try roster.launch(name) }
        case .launchFails(let name, let message, let status): try roster.launchExpectingFailure(name, message: message, status: status)
        case .restart(let process, let arguments): try roster.restart(process, arguments: arguments)
        case .quit(let process): try roster.quit(process)
        case .command(let process, let command, let suite):
            // A set's value too: the timeline draws its arrow from here when the writer's own change is read late.
            var value: PlistValue? = nil
            if case .set(_, let written) = command { value = written }
            log.action(process, step, key: Self.key(of: command), value: value)
            let driver = try roster.driver(process)
            let suiteName = context.scenario.suiteName(of: process, suite)
            if let exits = step.exits {
                try driver.expectExit(exits, after: driver.send(command, suite: suiteName), timeout: RunnerTimeouts.request)
            } else {
                try driver.request(command, suite: suiteName, timeout: RunnerTimeouts.request)
            }
        case .intent(let intent):
            switch intent.place {
            case .builtInApp(let host): try roster.performIntentInApp(intent, in: host, step: step)
            case .builtInExtension: try oneShots.runIntent(intent, device: intent.device ?? context.scenario.defaultDevice, step: step)
            case .executable(let process, oneShot: true): try roster.runIntentOnce(intent, in: process, step: step)
            case .executable(let process, oneShot: false): try roster.performIntentInProgram(intent, in: process, step: step)
            }
        case .defaults(let arguments, let status, let output):
            log.action("defaults", step, key: arguments.count > 2 ? arguments[2] : nil)
            try oneShots.runDefaults(arguments, status: status, output: output)
        case .run(let arguments, let status, let output):
            log.action("run", step)
            try oneShots.runCommand(arguments, status: status, output: output)
        case .wait(let process, let matcher, let timeout): try waits.wait(in: process, for: matcher, timeout: timeout)
        case .quiet(let process, let matcher, let seconds): try waits.quiet(in: process, for: matcher, seconds: seconds)
        case .burst(let burst): try waits.burst(burst, noting: step)
        case .waitBurst(let process): try waits.waitForBurst(of: process)
        case .kill(let process, let signal, let afterAcks): try faults.kill(process, signal: signal, afterAcks: afterAcks, noting: step)
        case .suspend(let process): try faults.signal(process, SIGSTOP, noting: step)
        case .resume(let process): try faults.signal(process, SIGCONT, noting: step)
        case .corrupt(let domain, let device, let content): try faults.corrupt(domain, device: device, content: content, noting: step)
        case .deleteFile(let domain, let device): try faults.deleteFile(domain, device: device, noting: step)
        case .eraseDevice(let device): try faults.erase(device, noting: step)
        case .managed(let device, let app, let change, _): try faults.manage(app, device: device, change, noting: step)
        case .advanceClock(let device, let seconds): try faults.advanceClock(device: device, by: seconds, noting: step)
        case .editFile(let domain, let device, let key, let value): try faults.edit(domain, device: device, key: key, value: value, noting: step)
        case .parallel(let steps): try performTogether(steps)
        case .repeated(let times, let steps): try performRepeatedly(times, steps)
        case .expect(let checks): try verify(checks)
        case .cloud(let cloudAction): try performCloud(cloudAction, step)
        case .send(let process, let line):
            log.action(process, step)
            try roster.driver(process).writeInput(line, timeout: RunnerTimeouts.input)
        case .reboot(let device, let protection):
            let rebooted = device ?? context.scenario.defaultDevice
            roster.endAll(on: rebooted, because: "the reboot of \(rebooted)")
            try faults.reboot(device, protection: protection, noting: step)
        case .unlock(let device): try faults.unlock(device, noting: step)
        case .prewarm(let process): try roster.launch(process, prewarm: true)
        }
    }

    /// A failing step stops the repeat, its round named.
    private func performRepeatedly(_ times: Int, _ steps: [Step]) throws {
        for round in 1...times {
            for step in steps {
                do { try perform(step) } catch ScenarioRunError.step(let line, let summary, let message) {
                    throw ScenarioRunError.step(line: line, step: summary, message: "round \(round) of \(times): \(message)")
                }
            }
        }
    }

    private func performTogether(_ steps: [Step]) throws {
        let failures = FailureBox()
        DispatchQueue.concurrentPerform(iterations: steps.count) { index in
            do { try perform(steps[index]) } catch { failures.add(error) }
        }
        if let first = failures.first { throw first }
    }

    private func verify(_ checks: [LocatedCheck]) throws {
        let verifier = CheckVerifier(context: context, roster: roster, cloud: cloudRig)
        for item in checks {
            // A failing check is reported at its own line, not the expect's.
            do { try verifier.verify(item.check) } catch ScenarioRunError.check(let text) {
                log.record(process: "runner", kind: .action, name: "failure", text: text)
                throw ScenarioRunError.step(line: item.line, step: "expect", message: text)
            }
        }
    }

    private func performCloud(_ cloudAction: CloudAction, _ step: Step) throws {
        log.action(CloudRig.serverLane, step)
        guard case .waitForQuiescence = cloudAction else { return try cloudRig().perform(cloudAction) }
        // Writes an app made are in its device's copy only once saved: save them
        // first. What the wait brings (a first download) can make an app's bridge
        // write again: save once more after it, and wait again until a save adds nothing.
        for _ in 0..<Self.quiescenceRounds {
            try saveAppsWithCloudStores()
            try cloudRig().perform(cloudAction)
            try saveAppsWithCloudStores()
            if try cloudRig().isSettled() { return }
        }
        try cloudRig().perform(cloudAction)
    }

    /// Enough for a bridge that answers a download with an upload; each round is bounded by the wait's timeout.
    private static let quiescenceRounds = 4

    private func saveAppsWithCloudStores() throws {
        let scenario = context.scenario
        for driver in roster.running
        where driver.transport != .none
            && scenario.app.targets[scenario.processes[driver.name]?.role ?? .mainApp]?.keyValueStore != nil
        {
            if !driver.suspended { try driver.request(.synchronize, timeout: RunnerTimeouts.request) }
        }
    }

    static func key(of command: AppRequest) -> String? {
        switch command {
        case .set(let key, _), .remove(let key), .increment(let key, _), .append(let key, _), .mergeDictionary(let key, _), .get(let key),
            .typedGet(let key, _):
            key
        case .cloudSet(let key, _), .cloudRemove(let key), .cloudGet(let key): key
        default: nil
        }
    }
}

/// The failures of a parallel step. Unchecked Sendable: `errors` is under `lock` only.
final class FailureBox: @unchecked Sendable {
    private let lock = Locked()
    private var errors: [Error] = []
    func add(_ error: Error) { lock.withLock { errors.append(error) } }
    var first: Error? { lock.withLock { errors.first } }
}
