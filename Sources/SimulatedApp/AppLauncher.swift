import AppInstall
import AppModel
import AppProtocol
import ArgumentParser
import Foundation
import GroupDefaults
import PropertyList
import Terminal

/// Options every simulated process takes.
struct AppProcessOptions: ParsableArguments {
    @Option(help: "Simulation root (default: $GROUPSIM_ROOT, else $XDG_DATA_HOME/groupsim, else ~/.local/share/groupsim).")
    var root: String?

    @Option(help: "Simulated device (default: $GROUPSIM_DEVICE, else iPhone).")
    var device: String?

    @Option(help: "App manifest (YAML). Default: the built-in example app (groupsim app example prints it).")
    var manifest: String?

    @Flag(help: "Speak the line-delimited JSON control protocol on stdin/stdout (docs/protocol.md) instead of the prompt.")
    var json = false

    @Flag(
        help:
            "The system launched it in the background to run an intent (manifest intents: in-app), not the person: its ready event's info says launch: background."
    )
    var background = false

    @Flag(
        help:
            "The system launched it ahead of time (prewarming), maybe before the device's first unlock: its ready event's info says launch: prewarm."
    )
    var prewarm = false

    @Flag(
        help: "Read nothing from stdin: print what happens and run until SIGTERM or SIGINT (for running it in the background: widget --no-input &).")
    var noInput = false

    package init() {}

    func loadManifest() throws -> AppManifest {
        guard let manifest else { return .example }
        return try AppManifest.load(manifest)
    }
}

/// Starts a simulated process of one role and runs it until it ends.
enum AppLauncher {
    static func makeSink(_ options: AppProcessOptions, role: Role) -> AppEventSink {
        options.json ? JSONEventSink(output: .standardOutput) : ConsoleEventSink(output: .standardOutput, role: role, readsInput: !options.noInput)
    }

    /// Everything up to "ready"; on failure the process says why and exits 1.
    static func start(_ options: AppProcessOptions, launchArguments: [String], role: Role, sink: AppEventSink) -> AppSession {
        Diagnostics.setHandler { diagnostic in sink.emit(.warning(kind: diagnostic.kind.rawValue, message: diagnostic.message)) }
        do {
            let session = try AppSession(
                role: role, manifest: try options.loadManifest(),
                root: SimulationRoot.resolve(explicit: options.root), device: SimulationRoot.resolveDevice(explicit: options.device),
                launchArguments: launchArguments, launchedInBackground: options.background, prewarmed: options.prewarm, events: sink)
            TerminationFlush.install { signal in
                PersistentDomain.deliverPendingNotifications()
                sink.emit(.exit(status: 128 + signal))
            }
            return session
        } catch {
            sink.emit(.error(message: "\(error)"))
            sink.emit(.exit(status: 1))
            exit(1)
        }
    }

    /// The long-lived roles: main app and widget.
    static func runInteractive(_ options: AppProcessOptions, launchArguments: [String], role: Role) -> Never {
        let sink = makeSink(options, role: role)
        let session = start(options, launchArguments: launchArguments, role: role, sink: sink)
        if let console = sink as? ConsoleEventSink { ConsoleLoop.prepareScreen(for: session, sink: console) }
        sink.emit(.ready(info: session.info))
        session.start()
        // In the background a process is ended by a signal, which saves what is pending (TerminationFlush).
        if options.noInput { dispatchMain() }
        let status: Int32 =
            if let console = sink as? ConsoleEventSink { ConsoleLoop.run(session: session, sink: console) } else {
                ControlProtocolLoop.run(session: session, output: .standardOutput)
            }
        exit(session.finish(status: status))
    }
}

/// What sets the long-lived roles apart: the role, and how its command describes it.
package protocol LongLivedRole {
    static var role: Role { get }
    static var abstract: String { get }
}

package enum MainAppRole: LongLivedRole {
    package static let role = Role.mainApp
    package static let abstract = "The simulated main app: long-lived, reads and writes its suite."
}

package enum WidgetRole: LongLivedRole {
    package static let role = Role.widget
    package static let abstract = "The simulated widget: renders a card of its keys, again only when its timeline reloads."
}

/// The command of a long-lived role (main app, widget): named after the role.
package struct LongLivedAppCommand<Kind: LongLivedRole>: ParsableCommand {
    package static var configuration: CommandConfiguration {
        CommandConfiguration(commandName: Kind.role.rawValue, abstract: Kind.abstract)
    }
    @OptionGroup var options: AppProcessOptions
    @Argument(parsing: .postTerminator, help: "Launch arguments after --, e.g. -- -theme dark (this process's argument domain).")
    var launchArguments: [String] = []
    package init() {}
    package func run() throws { AppLauncher.runInteractive(options, launchArguments: launchArguments, role: Kind.role) }
}

package typealias MainAppCommand = LongLivedAppCommand<MainAppRole>
package typealias WidgetCommand = LongLivedAppCommand<WidgetRole>

package struct IntentExtensionCommand: ParsableCommand {
    package static let configuration = CommandConfiguration(
        commandName: "intent-extension",
        abstract: "The simulated intent extension: performs one intent and exits (0 done, 1 failed), as Siri and Shortcuts run it.")
    @OptionGroup var options: AppProcessOptions
    @Argument(
        parsing: .captureForPassthrough,
        help: ArgumentHelp(
            "INTENT [NAME=VALUE ...] [-- LAUNCH ARGUMENTS]",
            discussion:
                "The intent's name as in the manifest (e.g. AddNote), its parameters as name=value (a value starting with { ( [ < \" is a property list), then launch arguments after --."
        ))
    var invocation: [String] = []
    package init() {}

    package func run() throws {
        let sink = AppLauncher.makeSink(options, role: .intentExtension)
        let split = invocation.firstIndex(of: "--") ?? invocation.endIndex
        // The intent's words are passed through as they are, so help is looked for here.
        if invocation[..<split].contains(where: { ["--help", "-h", "-help"].contains($0) }) {
            print(Self.helpMessage())
            return
        }
        guard let intent = invocation[..<split].first else {
            throw ValidationError("name the intent to perform, e.g. intent-extension AddNote text=hello")
        }
        let parameters = invocation[..<split].dropFirst()
        let launchArguments = Array(invocation[split...].dropFirst())
        var values: [String: String] = [:]
        for parameter in parameters {
            guard let equals = parameter.firstIndex(of: "="), equals != parameter.startIndex else {
                throw ValidationError("parameter '\(parameter)' is not name=value")
            }
            values[String(parameter[..<equals])] = String(parameter[parameter.index(after: equals)...])
        }
        let session = AppLauncher.start(options, launchArguments: launchArguments, role: .intentExtension, sink: sink)
        sink.emit(.ready(info: session.info))
        var status: Int32 = 0
        do {
            let value = try IntentPerformer.perform(intent, parameters: values, session: session)
            sink.emit(.intentResult(intent: intent, key: session.target.intents[intent]!.key, value: value))
        } catch {
            sink.emit(.error(message: "\(error)"))
            status = 1
        }
        Foundation.exit(session.finish(status: status))
    }
}
