import AppInstall
import AppModel
import AppProtocol
import ArgumentParser
import ChildProcess
import DefaultsCLI
import Foundation
import GroupDefaults

/// `groupsim exec`: runs a user's own executable as an app of the simulation
/// (or its widget or intent extension). The identity goes in GROUPSIM_*
/// variables (`ProcessIdentity`), which code built on SimulatedFoundation
/// reads; then groupsim replaces itself with the executable, so signals,
/// standard streams and the exit status are the executable's own.
struct ExecCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "exec",
        abstract: "Run your own executable as an installed app (or its widget or intent extension) of a simulated device.",
        discussion: """
            The executable finds out who it is from the environment: \(ProcessIdentity.Variable.root), \
            \(ProcessIdentity.Variable.device), \(ProcessIdentity.Variable.bundleIdentifier) and \
            \(ProcessIdentity.Variable.appGroups) (the target's app-group entitlement) and \
            \(ExecutableIdentity.keyValueStoreVariable) (its iCloud key-value store, if it has one), and the app's widget and its \
            reload budget for WidgetCenter (GROUPSIM_WIDGET_BUNDLE_ID, GROUPSIM_WIDGET_RELOAD_BUDGET), set from the app's manifest. \
            Launch arguments are the executable's own arguments: groupsim exec --app com.example.notes -- ./tool -theme dark
            With --control-socket or --control-fd, an executable that links SimulatedFoundation serves the control \
            protocol there (docs/protocol.md): in one terminal `mkdir -m 700 ~/gs; socat UNIX-LISTEN:$HOME/gs/control.sock,unlink-early -`, \
            in another `groupsim exec --app com.example.notes --control-socket ~/gs/control.sock -- ./tool`, then type requests \
            such as {"id":1,"cmd":"get","key":"theme"} in the first. Whoever listens is told the app's root, bundle id and groups \
            and may read and change its values: the socket must be yours, in a folder of yours that no one else may write \
            (not /tmp; groupsim exec refuses any other), and the program talks only to a listener of its own user.
            """)

    @OptionGroup var location: LocationOptions

    @Option(help: "The app's bundle id, as installed on the device (groupsim app list shows them).")
    var app: String

    @Option(help: "Which of the app's targets to be: app, widget or intent.")
    var target: AppTarget = .app

    @Option(help: "Take the app from this manifest instead of the one installed on the device.")
    var manifest: String?

    @Flag(
        help:
            "Launched by the system (a background fetch, a push), not by the person: the app's WidgetCenter reloads count against its widget's daily budget (sets GROUPSIM_LAUNCH=background)."
    )
    var background = false

    @Option(
        name: .customLong("control-socket"),
        help: ArgumentHelp(
            "Serve the control protocol by connecting to the Unix socket listening at PATH, which must be yours, in a folder no one else may write (sets \(ControlProtocol.channelSocketVariable)).",
            valueName: "PATH"))
    var controlSocket: String?

    @Option(
        name: .customLong("control-fd"),
        help: ArgumentHelp(
            "Serve the control protocol on descriptor N, a connected stream socket left open for the executable (sets \(ControlProtocol.channelDescriptorVariable)).",
            valueName: "N"))
    var controlDescriptor: Int32?

    @Argument(parsing: .postTerminator, help: "The executable and its arguments, after --.")
    var command: [String] = []

    func validate() throws {
        guard let executable = command.first, !executable.isEmpty else {
            throw ValidationError("name the executable to run after --, e.g. groupsim exec --app \(app) -- ./my-tool -theme dark")
        }
        guard controlSocket == nil || controlDescriptor == nil else {
            throw ValidationError("give --control-socket or --control-fd, not both: the executable serves one control channel")
        }
        if let controlDescriptor {
            guard controlDescriptor >= 3 else {
                throw ValidationError(
                    "--control-fd \(controlDescriptor): 0, 1 and 2 are the executable's own standard streams; pass a socket as descriptor 3 or more")
            }
            var status = stat()
            guard fstat(controlDescriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFSOCK else {
                throw ValidationError(
                    "--control-fd \(controlDescriptor): no socket is open on that descriptor (e.g. 3<>… in the shell is a file, not a socket)")
            }
        }
        if let controlSocket {
            var status = stat()
            guard lstat(controlSocket, &status) == 0 else {
                throw ValidationError(
                    "--control-socket \(controlSocket): no socket listens there; start the listener first, in a folder only you can write, "
                        + "e.g. mkdir -m 700 ~/gs; socat UNIX-LISTEN:$HOME/gs/control.sock,unlink-early -")
            }
            // Whoever listens is told who the program is, and may change its values: only a listener that is surely this user's.
            if let problem = UnixSocket.problemWithListener(at: controlSocket) {
                throw ValidationError(
                    "--control-socket \(controlSocket): \(problem). The program would tell whoever listens there its root, app and groups, "
                        + "and answer what they ask; nothing was started. \(UnixSocket.privateFolderAdvice), and listen there.")
            }
        }
    }

    func run() throws {
        let place = try location.simulationRoot
        var executable = try ExecutableIdentity.resolve(
            root: place.root, device: place.device, app: app, role: target.role, manifestPath: manifest)
        if background { executable.launchedInBackground = true }
        // The control channel is read by SimulatedFoundation as the executable loads (the option replaces either variable).
        let control: ControlChannelAddress? = controlSocket.map { .socket($0) } ?? controlDescriptor.map { .descriptor($0) }
        for (name, value) in executable.environment(control: control) {
            if let value { setenv(name, value, 1) } else { unsetenv(name) }
        }
        fflush(nil)
        let status = ExecReplacement.replaceProcess(with: command)
        throw ExitCode(status)
    }
}

/// The exec itself: `groupsim exec` becomes the executable.
enum ExecReplacement {
    /// Replaces this process with `command` (looked up on PATH unless it has a
    /// '/'). Returns only if that failed: the status a shell gives then (127
    /// not found, 126 not runnable), after saying why.
    static func replaceProcess(with command: [String]) -> Int32 {
        // A launched app starts with no signal blocked; a mask inherited from
        // whoever started groupsim (a thread pool's, say) would keep SIGTERM
        // from ever reaching the executable. Ignored signals stay ignored, so
        // `nohup groupsim exec …` still works.
        var nothingBlocked = sigset_t()
        sigemptyset(&nothingBlocked)
        sigprocmask(SIG_SETMASK, &nothingBlocked, nil)
        var arguments = command.map { strdup($0) }
        arguments.append(nil)
        execvp(command[0], &arguments)
        let error = errno
        for argument in arguments { free(argument) }
        FileHandle.standardError.write(Data("groupsim exec: cannot run '\(command[0])': \(String(cString: strerror(error)))\n".utf8))
        return error == ENOENT ? 127 : 126
    }
}

extension AppTarget: ExpressibleByArgument {}
