import Foundation
import PropertyList
import TestSupport
import Testing

/// Two hosts on this machine: network namespaces joined by a veth pair, made
/// and removed by the test. The cloud and its root are on one; two devices,
/// their root, agents and apps on the other. Nothing is shared but the
/// network: the device's secret reaches the cloud's root as a copied file.
final class TwoHosts {
    static let ip = ExternalTool("ip", candidates: ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"])

    /// Why two hosts cannot be made here, or nil: `ip netns add` needs root
    /// (CAP_SYS_ADMIN and CAP_NET_ADMIN).
    static let unavailable: String? = {
        guard let ip = ip.path else { return "iproute2's ip is not installed (scripts/setup.sh installs it with GROUPSIM_NEED_IP=1)" }
        let probe = "gs-probe-\(getpid())"
        guard let made = try? runProcess(ip, ["netns", "add", probe]), made.status == 0 else {
            return "this user cannot make network namespaces (`ip netns add` needs root): "
                + ((try? runProcess(ip, ["netns", "add", probe]).stderr.trimmingCharacters(in: .whitespacesAndNewlines)) ?? "")
        }
        _ = try? runProcess(ip, ["netns", "del", probe])
        return nil
    }()

    let cloudHost: String
    let deviceHost: String
    private let cloudLink: String
    private let deviceLink: String
    /// The cloud host's address on the link between them.
    let cloudAddress: String

    init() throws {
        let tag = String(getpid() % 100_000)
        let subnet = Int(getpid() % 250) + 1
        cloudHost = "gs-cloud-\(tag)"
        deviceHost = "gs-dev-\(tag)"
        // Interface names have at most 15 bytes.
        cloudLink = "gsc\(tag)"
        deviceLink = "gsd\(tag)"
        cloudAddress = "10.213.\(subnet).1"
        for (host, link, address) in [(cloudHost, cloudLink, cloudAddress), (deviceHost, deviceLink, "10.213.\(subnet).2")] {
            _ = try? Self.run(["netns", "del", host])  // a namespace left by a killed run with the same pid
            try Self.run(["netns", "add", host])
            if host == cloudHost { try Self.run(["link", "add", cloudLink, "type", "veth", "peer", "name", deviceLink]) }
            try Self.run(["link", "set", link, "netns", host])
            try Self.run(["-n", host, "addr", "add", address + "/24", "dev", link])
            try Self.run(["-n", host, "link", "set", "lo", "up"])
            try Self.run(["-n", host, "link", "set", link, "up"])
        }
    }

    deinit {
        // Removing a namespace removes its end of the veth pair, and with it the other end.
        for host in [cloudHost, deviceHost] { _ = try? Self.run(["netns", "del", host]) }
    }

    @discardableResult
    static func run(_ arguments: [String]) throws -> String {
        guard let ip = ip.path else { throw TestFailure("ip is not installed") }
        let result = try runProcess(ip, arguments)
        guard result.status == 0 else { throw TestFailure("ip \(arguments.joined(separator: " ")) failed: \(result.stderr)") }
        return result.stdout
    }

    /// Cuts (or restores) the link: a real partition, with packets lost on the wire.
    func setLink(up: Bool) throws { try Self.run(["-n", deviceHost, "link", "set", deviceLink, up ? "up" : "down"]) }

    /// A long-lived `groupsim ARGUMENTS` on `host`.
    func start(on host: String, _ arguments: [String]) throws -> RunningProcess {
        guard let ip = Self.ip.path else { throw TestFailure("ip is not installed") }
        return try RunningProcess(
            ip, ["netns", "exec", host, BuiltExecutable.path("groupsim")] + arguments, environment: ["GROUPSIM_CLOUD_AUTOSTART": "0"])
    }

    /// `groupsim ARGUMENTS` on `host`, run to its end; its output, or a failure with its error.
    @discardableResult
    func groupsim(on host: String, _ arguments: [String]) throws -> String {
        guard let ip = Self.ip.path else { throw TestFailure("ip is not installed") }
        let result = try runProcess(
            ip, ["netns", "exec", host, BuiltExecutable.path("groupsim")] + arguments, environment: ["GROUPSIM_CLOUD_AUTOSTART": "0"])
        guard result.status == 0 else { throw TestFailure("groupsim \(arguments.joined(separator: " ")) failed: \(result.stderr)") }
        return result.trimmedOutput
    }

    struct TestFailure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}

@Suite(.serialized, .enabled(if: TwoHosts.unavailable == nil, Comment(rawValue: TwoHosts.unavailable ?? "")))
struct CloudAcrossHostsTests {
    let cloudRoot = TemporaryRoot()
    let deviceRoot = TemporaryRoot()
    let store = "com.example.shared"

    /// The cloud on its host, listening on the link; its URL as other hosts reach it.
    func startCloud(_ hosts: TwoHosts) throws -> (RunningProcess, String) {
        let cloud = try hosts.start(on: hosts.cloudHost, ["cloud", "serve", "--root", cloudRoot.path, "--listen", hosts.cloudAddress + ":0"])
        let listening = try cloud.waitForLine(timeout: 20) { $0.contains("\"event\":\"listening\"") }
        guard case .string(let url)? = try PlistJSON.decode(PlistJSON.parse(listening), path: "listening").dictionaryValue?["url"] else {
            throw TwoHosts.TestFailure("the cloud's listening line has no url: \(listening)")
        }
        #expect(url.hasPrefix("http://\(hosts.cloudAddress):"), "the cloud bound to the link's address says so")
        return (cloud, url)
    }

    /// A device of the device host's root, signed in, pointed at the cloud, and trusted by the cloud's root.
    func enrol(_ device: String, cloudURL: String, hosts: TwoHosts) throws {
        try hosts.groupsim(on: hosts.deviceHost, ["device", "create", device, "--root", deviceRoot.path])
        try hosts.groupsim(on: hosts.deviceHost, ["cloud", "account", "sign-in", "alice", "--root", deviceRoot.path, "--device", device])
        try hosts.groupsim(on: hosts.deviceHost, ["cloud", "server", cloudURL, "--root", deviceRoot.path, "--device", device])
        // The copy a person would carry to the cloud's host.
        let copy = cloudRoot.path + "/\(device).secret.copy"
        try FileManager.default.copyItem(atPath: deviceRoot.path + "/devices/\(device)/cloud/device.secret", toPath: copy)
        try hosts.groupsim(on: hosts.cloudHost, ["cloud", "trust", "--device", device, "--secret-file", copy, "--root", cloudRoot.path])
    }

    func write(_ device: String, _ key: String, _ json: String, hosts: TwoHosts) throws {
        try hosts.groupsim(on: hosts.deviceHost, ["cloud", "write", store, key, json, "--root", deviceRoot.path, "--device", device])
    }

    func read(_ device: String, hosts: TwoHosts) throws -> String {
        try hosts.groupsim(on: hosts.deviceHost, ["cloud", "read", store, "--root", deviceRoot.path, "--device", device])
    }

    @Test func devicesOnAnotherHostSyncPartitionAndHeal() throws {
        let hosts = try TwoHosts()
        let (cloud, url) = try startCloud(hosts)
        defer { cloud.kill() }
        for device in ["A", "B"] { try enrol(device, cloudURL: url, hosts: hosts) }
        let agents = try ["A", "B"].map { device in
            try hosts.start(on: hosts.deviceHost, ["cloud", "agent", "--root", deviceRoot.path, "--device", device])
        }
        defer { for agent in agents { agent.kill() } }
        // Each device's app: its store's external changes.
        let apps = try ["A", "B"].map { device in
            try hosts.start(on: hosts.deviceHost, ["cloud", "watch", store, "--root", deviceRoot.path, "--device", device])
        }
        defer { for app in apps { app.kill() } }
        for app in apps { try app.waitForLine(timeout: 20) { $0.contains("\"event\":\"ready\"") } }
        for agent in agents { try agent.waitForLine(timeout: 20) { $0.contains("\"event\":\"connected\"") && $0.contains(url) } }

        // A write crosses the link.
        try write("A", "greeting", "\"hello\"", hosts: hosts)
        try apps[1].waitForLine(timeout: 20) { $0.contains("external-change") && $0.contains("greeting") }
        #expect(try read("B", hosts: hosts).contains("\"greeting\":\"hello\""))

        // A real partition: the link is down, both devices write.
        try hosts.setLink(up: false)
        try write("A", "color", "\"red\"", hosts: hosts)
        try write("A", "only-a", "1", hosts: hosts)
        try write("B", "color", "\"blue\"", hosts: hosts)  // later: wins everywhere once the link is back
        let cloudCopy = {
            try hosts.groupsim(on: hosts.cloudHost, ["cloud", "read", self.store, "--account", "alice", "--root", self.cloudRoot.path])
        }
        #expect(!(try cloudCopy()).contains("only-a"), "nothing reaches the cloud while the link is down")

        // Healed: each device gets the other's writes, and both keep the newer color.
        try hosts.setLink(up: true)
        try apps[1].waitForLine(timeout: 60) { $0.contains("external-change") && $0.contains("only-a") }
        try apps[0].waitForLine(timeout: 60) { $0.contains("external-change") && $0.contains("color") }
        for device in ["A", "B"] {
            let copy = try read(device, hosts: hosts)
            #expect(copy.contains("\"color\":\"blue\""), "\(device) after the heal: \(copy)")
            #expect(copy.contains("\"only-a\":1"), "\(device) after the heal: \(copy)")
        }
        #expect(try cloudCopy().contains("\"color\":\"blue\""))

        // The cloud's faults are set on its own host for a device it trusts.
        try hosts.groupsim(on: hosts.cloudHost, ["cloud", "network", "partition", "--root", cloudRoot.path, "--device", "B"])
        try write("A", "after", "2", hosts: hosts)
        try hosts.groupsim(on: hosts.cloudHost, ["cloud", "network", "heal", "--root", cloudRoot.path, "--device", "B"])
        try apps[1].waitForLine(timeout: 60) { $0.contains("external-change") && $0.contains("after") }
    }

    @Test func aDeviceTheCloudDoesNotTrustIsRefused() throws {
        let hosts = try TwoHosts()
        let (cloud, url) = try startCloud(hosts)
        defer { cloud.kill() }
        try hosts.groupsim(on: hosts.deviceHost, ["device", "create", "Stranger", "--root", deviceRoot.path])
        try hosts.groupsim(on: hosts.deviceHost, ["cloud", "account", "sign-in", "alice", "--root", deviceRoot.path, "--device", "Stranger"])
        try hosts.groupsim(on: hosts.deviceHost, ["cloud", "server", url, "--root", deviceRoot.path, "--device", "Stranger"])
        let agent = try hosts.start(on: hosts.deviceHost, ["cloud", "agent", "--root", deviceRoot.path, "--device", "Stranger"])
        defer { agent.kill() }
        let problem = try agent.waitForLine(timeout: 20) { $0.contains("\"event\":\"problem\"") }
        #expect(problem.contains("refused"), "\(problem)")
        let log = try cloud.waitForLine(timeout: 20) { $0.contains("Stranger") }
        #expect(log.contains("groupsim cloud trust"), "the cloud says how to trust it: \(log)")
    }
}
