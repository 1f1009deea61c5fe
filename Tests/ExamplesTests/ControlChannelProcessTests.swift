import AppProtocol
import Foundation
import PropertyList
import TestSupport
import Testing

/// The examples' own program, `settings-examples`, run as the example app
/// with a control channel (docs/protocol.md, "The control channel of your
/// own executable"), driven as the simulated roles are: its effective
/// values, its observers' deliveries, writes performed inside it, its search
/// list and its warnings.
@Suite struct ControlChannelProcessTests {
    /// `groupsim exec --control-socket`, the program watching ShowLineNumbers
    /// with Apple's key-value observer, with a launch argument and its own
    /// `register(defaults:)`.
    private func startEditorWatch(_ root: TemporaryRoot, changes: Int = 2, launchArguments: [String] = []) throws -> AppProcess {
        let program = try AppProcess(
            controlling: [
                BuiltExecutable.path("groupsim"), "exec", "--app", "com.example.notes", "--control-socket", AppProcess.controlSocketPlaceholder, "--",
                BuiltExecutable.path("settings-examples"), "editor-watch", String(changes),
            ] + launchArguments, root: root)
        // The program has registered its defaults and added its observer.
        try program.process.waitForLine(timeout: 20) { $0 == "ready=true" }
        return program
    }

    @Test func effectiveValuesIncludeLaunchArgumentsAndTheProgramsRegistration() throws {
        let root = try rootWithExampleApp()
        let program = try startEditorWatch(root, launchArguments: ["-TitleString", "Launched"])
        #expect(program.ready["role"] == .string("executable"))
        #expect(program.ready["bundleId"] == .string("com.example.notes"))
        #expect(program.ready["appGroups"] == .array([.string("group.com.example.notes")]))

        let title = try program.get("TitleString")
        #expect(title.value == .string("Launched") && title.domain == "NSArgumentDomain", "the launch argument hides the registered Untitled")
        let lineNumbers = try program.get("ShowLineNumbers")
        #expect(lineNumbers.value == .bool(false) && lineNumbers.domain == "NSRegistrationDomain", "registered by the program itself")
        let typed = try program.request(.typedGet(key: "ShowLineNumbers", as: .integer))
        #expect(typed.value == .integer(0))

        let searchList = try program.request(.searchList)
        #expect(
            searchList.fields["searchList"]
                == .array(
                    ["NSArgumentDomain", "com.example.notes", "NSGlobalDomain", "NSLanguagesDomain", "NSRegistrationDomain"].map { .string($0) }))
        #expect(searchList.fields["searchList"] == program.ready["searchList"])

        // A suite named in the request answers as UserDefaults(suiteName:) does in the program.
        let shared = try program.request(.searchList, suite: "group.com.example.notes")
        #expect(shared.fields["searchList"]?.arrayValue?.prefix(2) == [.string("NSArgumentDomain"), .string("group.com.example.notes")])
        program.closeInput()
    }

    /// A program that never uses UserDefaults still answers: who it is, the
    /// values it would see (its launch arguments), writes through its standard defaults.
    @Test func aProgramThatNeverUsesDefaultsStillAnswers() throws {
        let root = try rootWithExampleApp()
        let program = try AppProcess(
            controlling: [
                BuiltExecutable.path("groupsim"), "exec", "--app", "com.example.notes", "--target", "widget", "--",
                BuiltExecutable.path("settings-examples"), "wait-input", "-theme", "dark",
            ], root: root)
        #expect(program.ready["bundleId"] == .string("com.example.notes.widget"))
        let theme = try program.get("theme")
        #expect(theme.value == .string("dark") && theme.domain == "NSArgumentDomain")
        #expect(try program.request(.set(key: "seen", value: .bool(true))).ok)
        #expect(try program.request(.synchronize).ok)
        let read = try groupsim(["defaults", "read", "com.example.notes.widget", "seen"], root: root)
        #expect(read.trimmedOutput == "1", "\(read.stdout) \(read.stderr)")
        program.process.closeStdin()
        #expect(try program.process.waitForExit(timeout: 20) == 0)
        #expect(program.channel?.waitUntilClosed(timeout: 20) == true)
    }

    /// `exit` ends the program with its status, after saving what it holds.
    @Test func exitEndsTheProgramAndSavesWhatItHolds() throws {
        let root = try rootWithExampleApp()
        let program = try AppProcess(
            controlling: [
                BuiltExecutable.path("groupsim"), "exec", "--app", "com.example.notes", "--",
                BuiltExecutable.path("settings-examples"), "wait-input",
            ], root: root)
        #expect(try program.request(.set(key: "unsaved", value: .string("kept"))).ok)
        #expect(try program.request(.exit(status: 3)).ok)
        #expect(try program.process.waitForExit(timeout: 20) == 3)
        let read = try groupsim(["defaults", "read", "com.example.notes", "unsaved"], root: root)
        #expect(read.trimmedOutput == "kept", "\(read.stderr)")
    }

    /// A program that ends at once still says `ready` before it goes.
    @Test func aProgramThatEndsAtOnceStillSaysReady() throws {
        let root = try rootWithExampleApp()
        let program = try AppProcess(
            controlling: [BuiltExecutable.path("settings-examples"), "no-such-command"], root: root,
            environment: ["GROUPSIM_BUNDLE_ID": "com.example.notes"])
        #expect(program.ready["role"] == .string("executable"))
        #expect(try program.process.waitForExit(timeout: 20) == 64)
    }

    /// Another real process (the defaults tool) changes the key the program
    /// observes: the delivery event names Apple's key-value observer, the
    /// value, and where the change came from; a write of the same value
    /// delivers nothing. A change made through the channel is delivered too,
    /// on the program's own instance, as this-process.
    @Test func deliveriesToTheProgramsObserverAreReported() throws {
        let root = try rootWithExampleApp()
        let program = try startEditorWatch(root, changes: 3)

        let write = try groupsim(["defaults", "write", "com.example.notes", "ShowLineNumbers", "-bool", "true"], root: root)
        #expect(write.status == 0, "\(write.stderr)")
        let delivered = try program.delivery(.keyValueObserver, key: "ShowLineNumbers")
        #expect(delivered.old == .bool(false) && delivered.new == .bool(true))
        #expect(delivered.origin == "other-process" && delivered.domain == "com.example.notes")
        try program.process.waitForLine(timeout: 20) { $0 == "Setting changed: ShowLineNumbers from 0 to 1" }

        // The same value again: the observer is not called, so no delivery;
        // the next one is of the change written after it (changes are seen in order).
        for value in ["true", "false"] {
            let write = try groupsim(["defaults", "write", "com.example.notes", "ShowLineNumbers", "-bool", value], root: root)
            #expect(write.status == 0, "\(write.stderr)")
        }
        let next = try program.delivery(.keyValueObserver, key: "ShowLineNumbers")
        #expect(next.old == .bool(true) && next.new == .bool(false), "no delivery for the same-value write: \(next)")

        // Through the channel, inside the program: its observer hears it on the writing thread.
        #expect(try program.request(.set(key: "ShowLineNumbers", value: .bool(true))).ok)
        let own = try program.delivery(.keyValueObserver, key: "ShowLineNumbers")
        #expect(own.new == .bool(true) && own.origin == "this-process")
        #expect(try program.process.waitForExit(timeout: 20) == 0, "the program saw its three changes and ended")
        #expect(program.channel?.waitUntilClosed(timeout: 20) == true)
    }

    /// A driver that floods the channel meets a full socket, not a growing
    /// program: while a request waits for a lock, the channel reads about
    /// `queuedRequestLimit` requests ahead (one read's lines past it at most),
    /// so a ping sent well behind them is read, and answered, only once many are done.
    @Test(.timeLimit(.minutes(3))) func theChannelReadsAtMostItsQueueOfRequestsAhead() throws {
        let root = try rootWithExampleApp()
        let group = "group.com.example.notes"
        let program = try AppProcess(
            controlling: [
                BuiltExecutable.path("groupsim"), "exec", "--app", "com.example.notes", "--control-socket", AppProcess.controlSocketPlaceholder, "--",
                BuiltExecutable.path("settings-examples"), "editor-watch", "2",
            ], root: root, environment: ["GROUPSIM_LOCK_TIMEOUT": "120"])
        try program.process.waitForLine(timeout: 20) { $0 == "ready=true" }
        let channel = try #require(program.channel)
        let holder = try StoppedLockHolder(root: root, domain: group)
        #expect(try program.request(.set(key: "theme", value: .string("dark")), suite: group).ok)
        let sync = program.send(.synchronize, suite: group)
        // Sent from a thread of its own: once the program stops reading, the socket fills and the write waits.
        let beyond = 2_000
        let gets = (0..<ControlProtocol.queuedRequestLimit + beyond).map { 100_000 + $0 }
        let ping = 99_999
        let flood =
            gets.map { ControlProtocol.requestLine(id: $0, .get(key: "theme"), suite: group) + "\n" }.joined()
            + ControlProtocol.requestLine(id: ping, .ping) + "\n"
        let sent = DispatchSemaphore(value: 0)
        Thread {
            channel.writeRaw(Array(flood.utf8))
            sent.signal()
        }.start()
        // Read at once, the ping would be answered now, with the worker still held by the lock.
        #expect(throws: (any Error).self) { try program.response(id: .integer(Int64(ping)), timeout: 3) }
        try holder.end()
        #expect(try program.response(id: .integer(Int64(ping)), timeout: 60).ok)
        let answeredFirst = program.unconsumed.filter { if case .response = $0 { true } else { false } }.count
        #expect(answeredFirst >= beyond / 2)
        #expect(try program.response(id: sync).ok)
        for id in gets { #expect(try program.response(id: .integer(Int64(id))).value == .string("dark")) }
        #expect(sent.wait(timeout: .now() + 20) == .success)
        program.closeInput()
    }

    @Test func writesThroughTheChannelReachTheFile() throws {
        let root = try rootWithExampleApp()
        let program = try startEditorWatch(root)
        #expect(try program.request(.set(key: "Note", value: .string("from the driver"))).ok)
        let notification = try program.delivery(.didChangeNotification, key: "Note")
        #expect(notification.new == .string("from the driver") && notification.origin == "this-process")
        #expect(try program.request(.increment(key: "Count", by: 2)).value == .integer(2))
        #expect(try program.request(.remove(key: "Gone")).ok)
        #expect(try program.request(.synchronize).ok)

        let read = try groupsim(["defaults", "read", "com.example.notes", "Note"], root: root)
        #expect(read.trimmedOutput == "from the driver", "\(read.stderr)")
        let count = try groupsim(["defaults", "read", "com.example.notes", "Count"], root: root)
        #expect(count.trimmedOutput == "2")

        // The suite named in a request is the app group's shared file.
        #expect(try program.request(.set(key: "theme", value: .string("dark")), suite: "group.com.example.notes").ok)
        #expect(try program.request(.synchronize, suite: "group.com.example.notes").ok)
        let theme = try groupsim(["defaults", "read", "group.com.example.notes", "theme"], root: root)
        #expect(theme.trimmedOutput == "dark")
        program.closeInput()
    }

    /// The program (not the channel) opens the group suite without the
    /// entitlement: the warning is an event; then the key-path observation it
    /// made on that suite is delivered.
    @Test func theProgramsWarningsAndKeyPathObservationsAreReported() throws {
        let root = try rootWithExampleApp()
        // Started without groupsim exec: a bundle id and no app groups.
        let program = try AppProcess(
            controlling: [BuiltExecutable.path("settings-examples"), "reading-watch", "1"], root: root,
            environment: ["GROUPSIM_BUNDLE_ID": "com.example.notes", "GROUPSIM_APP_GROUPS": ""])
        let warning = try program.warning(kind: "missing-entitlement")
        #expect(warning.message.contains("group.com.example.notes"))
        try program.process.waitForLine(timeout: 20) { $0 == "ready=true" }
        let info = try program.request(.info)
        let warnings = info.fields["info"]?.dictionaryValue?["warnings"]?.arrayValue ?? []
        #expect(warnings.contains { $0.dictionaryValue?["kind"] == .string("missing-entitlement") })

        #expect(try program.request(.set(key: "ReadingMode", value: .string("night")), suite: "group.com.example.notes").ok)
        let delivered = try program.delivery(.keyPathObservation, key: "ReadingMode")
        #expect(delivered.new == .string("night") && delivered.origin == "this-process")
        #expect(delivered.domain == "group.com.example.notes")
        try program.process.waitForLine(timeout: 20) { $0 == "ReadingMode=night" }
        #expect(try program.process.waitForExit(timeout: 20) == 0)
    }

    /// Garbage gets error responses and the channel goes on; closing the
    /// channel ends only the channel: the program goes on and ends as it would.
    @Test func garbageIsAnsweredAndClosingTheChannelLeavesTheProgramRunning() throws {
        let root = try rootWithExampleApp()
        let program = try startEditorWatch(root, changes: 1)
        let channel = try #require(program.channel)

        #expect(try program.send(raw: "not json").error?.contains("invalid JSON") == true)
        #expect(try program.send(raw: #"{"id":1}"#).error == #"missing "cmd" (a string)"#)
        #expect(try program.send(raw: #"{"id":2,"cmd":"get","key":"k","suite":5}"#).error?.contains(#""suite" must be a string"#) == true)
        #expect(try program.send(raw: #"{"id":3,"cmd":"reload"}"#).ok == false)
        #expect(try program.send(raw: #"{"id":4,"cmd":"get","key":"k","suite":"NSGlobalDomain"}"#).error?.contains("is nil") == true)
        #expect(try program.send(rawBytes: [0xFF, 0xFE, 0x7B, 0x0A]).ok == false, "not UTF-8")
        #expect(try program.request(.ping).ok)

        program.closeInput()
        #expect(channel.waitUntilClosed(timeout: 20), "the program ended its side")
        let write = try groupsim(["defaults", "write", "com.example.notes", "ShowLineNumbers", "-bool", "true"], root: root)
        #expect(write.status == 0, "\(write.stderr)")
        try program.process.waitForLine(timeout: 20) { $0 == "Setting changed: ShowLineNumbers from 0 to 1" }
        #expect(try program.process.waitForExit(timeout: 20) == 0)
    }

    /// The other way to pass the channel: one end of a socket pair, left
    /// open as the program's descriptor 3 (`groupsim exec --control-fd 3`).
    @Test(.timeLimit(.minutes(2))) func anInheritedSocketDescriptorIsAChannelToo() throws {
        let root = try rootWithExampleApp()
        var ends: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0)
        let output = Pipe()
        let pid = try spawn(
            [
                BuiltExecutable.path("groupsim"), "exec", "--app", "com.example.notes", "--control-fd", "3", "--",
                BuiltExecutable.path("settings-examples"), "editor-watch", "1", "-TitleString", "Passed",
            ], output: output.fileHandleForWriting.fileDescriptor, giving: ends[1], asDescriptor: 3,
            environment: ["GROUPSIM_ROOT": root.path, "GROUPSIM_DEVICE": "iPhone"])
        // The program holds the only other copies: its exit closes the channel and the output.
        close(ends[1])
        try output.fileHandleForWriting.close()
        let channel = LineConnection(descriptor: ends[0])
        defer { channel.close() }
        try channel.waitForLine(timeout: 20) { $0.hasPrefix(#"{"event":"ready""#) }
        channel.write(ControlProtocol.requestLine(id: 1, .get(key: "TitleString")))
        let answer = try channel.waitForLine(timeout: 20) { $0.hasPrefix(#"{"id":1,"#) }
        #expect(answer == #"{"id":1,"ok":true,"key":"TitleString","value":"Passed","domain":"NSArgumentDomain"}"#)

        // Once the program says it observes (ready=true on its output), another process changes the key.
        var printed = ""
        while !printed.contains("ready=true\n") {
            let chunk = PipeReading.nextChunk(output.fileHandleForReading)
            try #require(!chunk.isEmpty, "the program ended before observing: \(printed)")
            printed += String(decoding: chunk, as: UTF8.self)
        }
        #expect(try groupsim(["defaults", "write", "com.example.notes", "ShowLineNumbers", "-bool", "true"], root: root).status == 0)
        try channel.waitForLine(timeout: 20) { $0.contains(#""mechanism":"key-value-observer""#) && $0.contains(#""new":true"#) }
        var status: Int32 = 0
        #expect(waitpid(pid, &status, 0) == pid)
        #expect(status == 0, "exit status \(status)")
        #expect(channel.waitUntilClosed(timeout: 20))
    }

    @Test func execRefusesAChannelItCannotPass() throws {
        let root = try rootWithExampleApp()
        let standardStream = try groupsim(["exec", "--app", "com.example.notes", "--control-fd", "1", "--", "/bin/true"], root: root)
        #expect(standardStream.status == 64 && standardStream.stderr.contains("standard streams"), "\(standardStream.stderr)")
        let closed = try groupsim(["exec", "--app", "com.example.notes", "--control-fd", "77", "--", "/bin/true"], root: root)
        #expect(closed.status == 64 && closed.stderr.contains("no socket is open"), "\(closed.stderr)")
        let nobody = try groupsim(
            ["exec", "--app", "com.example.notes", "--control-socket", root.path + "/none.sock", "--", "/bin/true"], root: root)
        #expect(nobody.status == 64 && nobody.stderr.contains("no socket listens"), "\(nobody.stderr)")
    }

    /// `--control-socket` names a socket someone listens on, and whoever
    /// listens is told the program's root, app and groups and may change its
    /// values: a socket that may not be this user's is refused before
    /// anything starts. One in a folder others may write (another user could
    /// have listened there first, or replace it), or a link to one.
    @Test func execRefusesASocketThatMayNotBeTheUsers() throws {
        let root = try rootWithExampleApp()
        let shared = root.path + "/shared"
        try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: false)
        #expect(chmod(shared, 0o1777) == 0)
        let listener = try LineSocketListener(path: shared + "/gs.sock")
        let open = try groupsim(["exec", "--app", "com.example.notes", "--control-socket", listener.path, "--", "/bin/true"], root: root)
        #expect(open.status == 64 && open.stderr.contains("may be written by others (mode 1777)"), "\(open.stderr)")
        #expect(open.stderr.contains("mkdir -m 700"), "\(open.stderr)")
        let own = try LineSocketListener(path: root.path + "/own.sock")
        #expect(symlink(own.path, root.path + "/link.sock") == 0)
        let link = try groupsim(["exec", "--app", "com.example.notes", "--control-socket", root.path + "/link.sock", "--", "/bin/true"], root: root)
        #expect(link.status == 64 && link.stderr.contains("symbolic link"), "\(link.stderr)")
        // In the root (a folder of mkdtemp's, 0700), the user's own socket is taken.
        let taken = try groupsim(["exec", "--app", "com.example.notes", "--control-socket", own.path, "--", "/bin/true"], root: root)
        #expect(taken.status == 0, "\(taken.stderr)")
    }

    /// Another local user listening first, where the user meant to (a folder
    /// like /tmp that everyone may write): `groupsim exec` refuses the socket,
    /// and a program given its path directly connects, finds that the
    /// listener is not its own user, and sends it nothing, not even `ready`.
    @Test(.enabled(if: OtherUser.available == nil, Comment(rawValue: OtherUser.available ?? "")))
    func anotherUsersListenerIsToldNothing() throws {
        let root = try rootWithExampleApp()
        let shared = try OtherUser.sharedFolder()
        defer { try? FileManager.default.removeItem(atPath: shared) }
        let path = shared + "/gs.sock"
        let stranger = try OtherUser.listen(at: path)
        defer { stranger.kill() }
        let exec = try groupsim(
            ["exec", "--app", "com.example.notes", "--control-socket", path, "--", BuiltExecutable.path("settings-examples"), "theme-show"],
            root: root)
        #expect(exec.status == 64 && exec.stderr.contains("belongs to user \(OtherUser.uid)"), "\(exec.stderr)")
        let direct = try runProcess(
            BuiltExecutable.path("settings-examples"), ["theme-show"],
            environment: ["GROUPSIM_ROOT": root.path, "GROUPSIM_BUNDLE_ID": "com.example.notes", "GROUPSIM_CONTROL_SOCKET": path])
        #expect(direct.status == 0 && direct.stdout.contains("theme="))
        #expect(
            direct.stderr.contains("is listened on by user \(OtherUser.uid)") && direct.stderr.contains("no control channel is served"),
            "\(direct.stderr)")
        let heard = try stranger.waitForLine(timeout: 20) { $0.hasPrefix("received") || $0.hasPrefix("no connection") }
        #expect(heard == "received 0 bytes", "the other user's listener heard: \(heard)")
    }

    /// A program started with a channel variable it cannot use says so and runs without one.
    @Test func anUnusableChannelIsReportedAndTheProgramRuns() throws {
        let root = try rootWithExampleApp()
        let run = try runProcess(
            BuiltExecutable.path("settings-examples"), ["theme-show"],
            environment: ["GROUPSIM_ROOT": root.path, "GROUPSIM_BUNDLE_ID": "com.example.notes", "GROUPSIM_CONTROL_FD": "2"])
        #expect(run.status == 0)
        #expect(run.stdout.contains("theme="))
        #expect(run.stderr.contains("GROUPSIM_CONTROL_FD=2") && run.stderr.contains("no control channel is served"), "\(run.stderr)")
    }
}

/// Starts `command` with `descriptor` as its descriptor `number`, `output`
/// as its standard output, and every other descriptor closed.
private func spawn(
    _ command: [String], output: Int32, giving descriptor: Int32, asDescriptor number: Int32,
    environment: [String: String]
) throws -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_adddup2(&actions, output, 1)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_adddup2(&actions, descriptor, number)
    typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    let closeFrom = try #require(dlsym(nil, "posix_spawn_file_actions_addclosefrom_np"))
    _ = unsafeBitCast(closeFrom, to: AddCloseFrom.self)(&actions, number + 1)
    let argv = command.map { strdup($0) } + [nil]
    let variables = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { for word in argv + variables { free(word) } }
    var pid: pid_t = 0
    let result = posix_spawn(&pid, command[0], &actions, nil, argv, variables)
    try #require(result == 0, "posix_spawn: \(String(cString: strerror(result)))")
    return pid
}

/// Another local user, for tests of what one user can do to another's
/// processes: `nobody`, whose processes the test starts with setpriv (it
/// needs root).
enum OtherUser {
    static let uid: uid_t = 65_534
    static let setpriv = ExternalTool("setpriv", candidates: ["/usr/bin/setpriv", "/bin/setpriv"])
    static let python = ExternalTool("python3", candidates: ["/usr/bin/python3"])

    /// Why the tests cannot act as another user here, or nil.
    static let available: String? = {
        guard geteuid() == 0 else { return "acting as another user needs root (setpriv --reuid)" }
        guard setpriv.path != nil else { return "setpriv (util-linux) is not installed" }
        guard python.path != nil else { return "/usr/bin/python3 is not installed" }
        return nil
    }()

    /// A folder everyone may write, sticky, as /tmp is.
    static func sharedFolder() throws -> String {
        var template = Array((NSTemporaryDirectory() as NSString).appendingPathComponent("groupsim-shared-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        let path = try #require(made.map { String(cString: $0) })
        try #require(chmod(path, 0o1777) == 0)
        return path
    }

    /// A Unix socket listening at `path` as the other user, which reads one
    /// connection to its end and says `received N bytes` (or `no connection`
    /// after 20 s).
    static func listen(at path: String) throws -> RunningProcess {
        let script = """
            import socket, sys
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.bind(sys.argv[1]); s.listen(4); s.settimeout(20)
            print("listening", flush=True)
            try:
                c, _ = s.accept()
            except socket.timeout:
                print("no connection", flush=True); sys.exit(0)
            c.settimeout(20)
            n = 0
            while True:
                d = c.recv(65536)
                if not d: break
                n += len(d)
            print("received %d bytes" % n, flush=True)
            """
        let process = try RunningProcess(
            try #require(setpriv.path),
            ["--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", try #require(python.path), "-c", script, path])
        try process.waitForLine(timeout: 20) { $0 == "listening" }
        return process
    }
}
