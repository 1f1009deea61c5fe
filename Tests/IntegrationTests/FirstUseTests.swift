import Foundation
import PropertyList
import TestSupport
import Testing

/// What a new user runs into, tried as one would: a typo in a name makes
/// nothing and names the likely one meant; a cloud value that is not JSON,
/// a negative latency, the status and the help say what to do.
@Suite(.serialized) struct FirstUseTests {
    let root = TemporaryRoot()

    func devices() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: root.path + "/devices").sorted()
    }

    @Test func aMistypedDeviceMakesNoDevice() throws {
        #expect(try groupsim(["device", "create", "iPad"], root: root).status == 0)
        for command in [
            ["cloud", "write", "--device", "ipda", "com.example.notes", "theme", "\"dark\""],
            ["cloud", "account", "--device", "ipda", "sign-in", "alice"],
            ["cloud", "network", "--device", "ipda", "offline"],
            ["cloud", "read", "--device", "ipda", "com.example.notes"],
        ] {
            let result = try groupsim(command, root: root)
            #expect(result.status != 0, "\(command)")
            #expect(
                result.stderr.contains("no device named ipda") && result.stderr.contains("did you mean iPad?")
                    && result.stderr.contains("(devices: iPad)"), "\(command): \(result.stderr)")
        }
        #expect(try devices() == ["iPad"])
    }

    @Test func aMistypedAppMakesNoContainer() throws {
        #expect(try groupsim(["app", "install"], root: root).status == 0)
        let result = try groupsim(["defaults", "write", "--app", "com.example.noes", "com.example.noes", "k", "v"], root: root)
        #expect(result.status != 0)
        #expect(
            result.stderr.contains("no app com.example.noes on iPhone") && result.stderr.contains("did you mean com.example.notes?")
                && result.stderr.contains("com.example.notes.widget"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: root.path + "/devices/iPhone/Containers/Data/Application/com.example.noes"))
        // The app meant works.
        #expect(try groupsim(["defaults", "write", "--app", "com.example.notes", "com.example.notes", "k", "v"], root: root).status == 0)
    }

    @Test func aMistypedAccountMakesNoAccount() throws {
        #expect(try groupsim(["cloud", "account", "sign-in", "alice"], root: root).status == 0)
        let server = try CloudChild(["serve"], root: root)
        try server.waitFor("listening")
        let agent = try CloudChild(["agent", "--device", "iPhone"], root: root)
        try agent.waitFor("connected")
        #expect(try groupsim(["cloud", "write", "com.example.notes", "theme", "\"dark\""], root: root).status == 0)
        try agent.waitFor("acknowledged")
        let result = try groupsim(["cloud", "read", "--account", "alcie", "com.example.notes"], root: root)
        #expect(result.status == 64)
        #expect(result.stderr.contains("the cloud has no account alcie; did you mean alice? (accounts: alice)"), "\(result.stderr)")
        let status = try groupsim(["cloud", "status", "--json"], root: root)
        #expect(status.stdout.contains("\"accounts\":[\"alice\"]"), "\(status.stdout)")
        #expect(try groupsim(["cloud", "read", "--account", "alice", "com.example.notes", "theme"], root: root).trimmedOutput == "\"dark\"")
        withExtendedLifetime((server, agent)) {}
    }

    @Test func aCloudValueThatIsNotJSONSaysHowToQuoteIt() throws {
        let result = try groupsim(["cloud", "write", "com.example.notes", "theme", "dark"], root: root)
        #expect(result.status == 64)
        #expect(result.stderr.contains("VALUE is JSON, and dark is not"), "\(result.stderr)")
        #expect(result.stderr.contains(#"groupsim cloud write com.example.notes theme '"dark"'"#), "\(result.stderr)")
        #expect(!result.stderr.contains("Usage:"), "\(result.stderr)")
    }

    @Test func cloudStatusIsATableAndJSONOnRequest() throws {
        #expect(try groupsim(["cloud", "account", "sign-in", "alice"], root: root).status == 0)
        let server = try CloudChild(["serve"], root: root)
        try server.waitFor("listening")
        #expect(try groupsim(["cloud", "network", "latency", "200"], root: root).status == 0)
        let table = try groupsim(["cloud", "status"], root: root)
        #expect(table.status == 0, "\(table.stderr)")
        #expect(!table.stdout.contains("{"), "\(table.stdout)")
        #expect(table.stdout.contains("  faults     iPhone: latency 200 ms"), "\(table.stdout)")
        #expect(table.stdout.contains("iPhone  account alice  online  clock skew 0 ms  agent not running"), "\(table.stdout)")
        // For scripts: the cloud's own status object, as GET /v1/status answers it.
        let json = try groupsim(["cloud", "status", "--json"], root: root)
        #expect(json.status == 0, "\(json.stderr)")
        let object = try #require(try PlistJSON.decode(PlistJSON.parse(json.stdout.trimmingCharacters(in: .whitespacesAndNewlines))).dictionaryValue)
        #expect(object["faults"] != nil && object["traffic"] != nil && object["server"] != nil, "\(json.stdout)")
        withExtendedLifetime(server) {}
        // With no cloud, --json is an error (nothing to print), the table says how to start it.
        try server.killHard()
        let stopped = try groupsim(["cloud", "status", "--json"], root: root)
        #expect(stopped.status != 0 && stopped.stdout.isEmpty, "\(stopped.stdout)")
        #expect(stopped.stderr.contains("groupsim cloud start"), "\(stopped.stderr)")
    }

    @Test func defaultsHelpSaysOptionsFollowTheSubcommand() throws {
        let help = try groupsim(["defaults", "--help"], root: root)
        #expect(help.stdout.replacingOccurrences(of: "\n", with: " ").contains("go after the subcommand and before the domain"), "\(help.stdout)")
        #expect(!help.stdout.contains("go before the domain."), "\(help.stdout)")
        // What the help says works.
        #expect(try groupsim(["device", "create", "iPad"], root: root).status == 0)
        #expect(try groupsim(["defaults", "write", "--device", "iPad", "group.com.example.notes", "k", "v"], root: root).status == 0)
        #expect(try groupsim(["defaults", "read", "--device", "iPad", "group.com.example.notes", "k"], root: root).trimmedOutput == "v")
    }
}
