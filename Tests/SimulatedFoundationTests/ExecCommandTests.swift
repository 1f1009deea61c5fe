import Foundation
import TestSupport
import Testing

/// `groupsim exec` runs a command as a target of an installed app: refusals,
/// the identity it hands over, and the command's own status and signals.
@Suite struct ExecCommandTests {
    @Test func unknownDevicesAppsAndTargetsAreRefusedByName() throws {
        let empty = TemporaryRoot()
        let noDevice = try groupsim(["exec", "--app", "com.example.notes", "--", "/bin/true"], root: empty)
        #expect(noDevice.status == 1)
        #expect(noDevice.stderr.contains("no device named iPhone"))
        #expect(noDevice.stderr.contains("groupsim device create iPhone"))

        let root = try rootWithExampleApp()
        let otherDevice = try groupsim(["exec", "--device", "iPad", "--app", "com.example.notes", "--", "/bin/true"], root: root)
        #expect(otherDevice.stderr.contains("no device named iPad") && otherDevice.stderr.contains("devices: iPhone"))
        let unknownApp = try groupsim(["exec", "--app", "com.example.nope", "--", "/bin/true"], root: root)
        #expect(unknownApp.status == 1)
        #expect(unknownApp.stderr.contains("com.example.nope is not installed on iPhone; installed: com.example.notes"))

        let manifest = root.path + "/solo.yaml"
        try "name: Solo\ntargets:\n  main-app:\n    bundle-id: com.example.solo\n".write(toFile: manifest, atomically: true, encoding: .utf8)
        let noWidget = try groupsim(
            ["exec", "--app", "com.example.solo", "--manifest", manifest, "--target", "widget", "--", "/bin/true"], root: root)
        #expect(noWidget.status == 1)
        #expect(noWidget.stderr.contains("has no widget target; it has: main-app"))
        let wrongApp = try groupsim(["exec", "--app", "com.example.notes", "--manifest", manifest, "--", "/bin/true"], root: root)
        #expect(wrongApp.stderr.contains("not the app com.example.notes"))

        let noCommand = try groupsim(["exec", "--app", "com.example.notes"], root: root)
        #expect(noCommand.status != 0)
        #expect(noCommand.stderr.contains("name the executable to run after --"))
        let missing = try groupsim(["exec", "--app", "com.example.notes", "--", root.path + "/no-such-tool"], root: root)
        #expect(missing.status == 127)
        #expect(missing.stderr.contains("cannot run"))
    }

    @Test func theCommandIsTheTargetWithItsEntitlements() throws {
        let root = try rootWithExampleApp()
        let widget = try execAsExampleApp(["/usr/bin/env"], target: "widget", root: root)
        #expect(widget.status == 0, "\(widget.stderr)")
        let variables = Set(widget.stdout.split(separator: "\n").map(String.init))
        #expect(variables.contains("GROUPSIM_BUNDLE_ID=com.example.notes.widget"))
        #expect(variables.contains("GROUPSIM_APP_GROUPS=group.com.example.notes"))
        #expect(variables.contains("GROUPSIM_DEVICE=iPhone"))
        #expect(variables.contains("GROUPSIM_ROOT=\(root.path)"))
        let intent = try execAsExampleApp(["/usr/bin/env"], target: "intent", root: root)
        #expect(intent.stdout.contains("GROUPSIM_BUNDLE_ID=com.example.notes.intents"))
    }

    @Test func theCommandReplacesGroupsimSoStatusAndSignalsAreItsOwn() throws {
        let root = try rootWithExampleApp()
        let status = try execAsExampleApp(["/bin/sh", "-c", "exit 7"], root: root)
        #expect(status.status == 7)

        // The shell reports its own pid: the one groupsim started with.
        let shell = try RunningProcess(
            BuiltExecutable.path("groupsim"), ["exec", "--app", "com.example.notes", "--", "/bin/sh", "-c", "echo $$; read line"],
            environment: ["GROUPSIM_ROOT": root.path])
        let pid = try #require(try shell.nextLine())
        #expect(pid == "\(shell.pid)")
        shell.signal(SIGTERM)
        #expect(try shell.waitForTermination() == .signalled(SIGTERM))
    }
}
