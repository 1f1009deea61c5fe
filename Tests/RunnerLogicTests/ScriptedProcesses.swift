import AppProtocol
import ChildProcess
import Foundation
import Guarded
import PropertyList
import Scenarios

/// The runner's processes from a script, in memory: each says `ready` as it
/// starts, and answers each request it is written as its role's script says,
/// on the writer's own thread (so everything it says is recorded before the
/// runner waits for it). Closing its stdin ends it with status 0; a signal
/// that kills ends it as one would.
final class ScriptedProcesses: ProcessLauncher {
    /// What a process of a role does with a request (the request's id is answered by the script, or by nothing).
    typealias Script = @Sendable (_ request: AppRequest, _ id: String, _ process: ScriptedProcess) -> Void

    private let scripts: [String: Script]
    private let started = Locked<[ScriptedProcess]>([])

    /// `scripts`: by role (main-app, widget); a role without one answers every request `ok`.
    init(_ scripts: [String: Script] = [:]) { self.scripts = scripts }

    /// The processes started so far, in order.
    var processes: [ScriptedProcess] { started.withLock { $0 } }

    func launch(_ launch: ProcessLaunch, handlers: RunningProcess.Handlers) throws -> any LaunchedProcess {
        let role = (launch.executable as NSString).lastPathComponent
        let process = ScriptedProcess(role: role, handlers: handlers, script: scripts[role] ?? { _, id, process in process.answer(id, .done) })
        started.withLock { $0.append(process) }
        process.say(ControlProtocol.event(.ready(info: [:])))
        return process
    }

    func warden(groupsim: String) throws -> Warden? { nil }
}

/// One scripted process: what its script says goes to the runner's handlers.
final class ScriptedProcess: LaunchedProcess {
    let role: String
    let pid: Int32 = 0
    private let handlers: RunningProcess.Handlers
    private let script: ScriptedProcesses.Script
    /// Whether it has ended; a script may keep a store of its own here too.
    private let state = Locked<(ended: Bool, store: [String: PlistValue])>((false, [:]))

    init(role: String, handlers: RunningProcess.Handlers, script: @escaping ScriptedProcesses.Script) {
        self.role = role
        self.handlers = handlers
        self.script = script
    }

    /// The script's own values (an in-memory store of defaults, say).
    func withStore<R>(_ body: (inout [String: PlistValue]) -> R) -> R { state.withLock { body(&$0.store) } }

    /// A line on its stdout (a protocol line, or anything else).
    func say(_ line: String) { handlers.stdout(line) }

    /// A line on its stderr.
    func complain(_ line: String) { handlers.stderr(line) }

    func answer(_ id: String, _ response: AppResponse) { say(ControlProtocol.response(id: id, result: response)) }

    func refuse(_ id: String, _ message: String) { say(ControlProtocol.failure(id: id, message: message)) }

    /// Ends it (once): its end goes to the runner after everything it said.
    func end(_ termination: RunningProcess.Termination) {
        guard
            state.withLock({ state in
                defer { state.ended = true }
                return !state.ended
            })
        else { return }
        handlers.ended(termination)
    }

    var ended: Bool { state.withLock { $0.ended } }

    @discardableResult func write(_ line: String) -> Bool {
        guard !ended else { return false }
        let (id, _, request) = ControlProtocol.parseAddressedRequest(line)
        switch request {
        case .success(.ping): answer(id, .done)
        case .success(let request): script(request, id, self)
        case .failure(let error): refuse(id, "\(error)")
        }
        return true
    }

    func write(_ bytes: Data, within timeout: TimeInterval) -> InputWrite { ended ? .closed : .written }

    func closeStdin() { end(.exited(0)) }

    @discardableResult func signal(_ signal: Int32) -> Bool {
        guard !ended else { return false }
        if [SIGKILL, SIGTERM, SIGINT].contains(signal) { end(.signalled(signal)) }
        return true
    }

    @discardableResult func signalGroup(_ signal: Int32) -> Bool { self.signal(signal) }

    @discardableResult func stop(timeout: TimeInterval) -> Bool { !ended }

    func catchUpOutput(timeout: TimeInterval) -> Bool { true }
}
