import AppInstall
import AppModel
import ArgumentParser
import CloudClient
import CloudDevice
import CloudModel
import CloudService
import DefaultsCLI
import Foundation
import GroupDefaults
import PropertyList
import SharedFiles

/// `groupsim cloud …`: the simulated iCloud key-value store.
struct CloudCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cloud",
        abstract: "Run and inspect the simulated iCloud key-value store: the cloud, the devices' sync agents, accounts and network faults.",
        discussion: "docs/cloud.md describes the model, the wire protocol and the files.",
        subcommands: [
            Start.self, Stop.self, Serve.self, Agent.self, Status.self, Account.self, Network.self, Read.self, Write.self, Watch.self,
            Trust.self, Server.self,
        ])

    /// Prints one JSON object per line, flushed at once (drivers read it as it comes).
    static func emit(_ event: String, _ fields: [String: PlistValue]) {
        var line = fields
        line["event"] = .string(event)
        line["time"] = .string(PlistJSON.timestamp(Date()))
        if EventClock.isOn { line["clock"] = .integer(Int64(MonotonicClock.now())) }
        print(PlistJSON.encode(.dictionary(line)))
        fflush(nil)
    }

    struct Start: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Start the cloud and a sync agent for each device (or the given ones) in the background, if not running.",
            discussion:
                "They run until `groupsim cloud stop`; their output goes to <root>/cloud/logs/. An app whose device is signed in starts them itself.")
        @Option(help: "Simulation root.") var root: String?
        @Option(name: .customLong("device"), help: "Only these devices' agents (repeatable; default: every device).") var devices: [String] = []
        @Option(help: "The cloud's HOST:PORT, if it must be reached from other hosts (default: 127.0.0.1, any port).") var listen: String?

        func run() throws {
            let root = SimulationRoot.resolve(explicit: root)
            let daemons = CloudDaemons(root: root, groupsim: try CloudCommand.groupsimExecutable())
            // Checked before anything starts: a device refused must not leave a cloud running.
            for device in devices { try DeviceManager(root: root).requireDevice(device) }
            if let listen { _ = try CloudCommand.listenAddress(listen) }
            let started = try daemons.start(devices: devices.isEmpty ? daemons.devices : devices, listen: listen)
            print(started.isEmpty ? "already running" : "started " + started.joined(separator: ", "))
        }
    }

    struct Stop: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "End the cloud and every agent of the root.")
        @Option(help: "Simulation root.") var root: String?

        func run() throws {
            let root = SimulationRoot.resolve(explicit: root)
            let ended = CloudDaemons(root: root, groupsim: "").stop()
            print(ended.isEmpty ? "nothing was running" : "ended " + ended.joined(separator: ", "))
        }
    }

    /// `--listen`'s HOST:PORT, or a usage error saying how to write it.
    static func listenAddress(_ text: String) throws -> CloudAddress {
        do { return try CloudAddress(listen: text) } catch { throw ValidationError(error.description) }
    }

    /// This executable, to start more of itself.
    static func groupsimExecutable() throws -> String {
        guard let me = ownExecutablePath() else {
            throw ValidationError("cannot tell where groupsim's own executable is (/proc/self/exe is unreadable)")
        }
        return me
    }

    struct Serve: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run the cloud: every account's stores, durable on disk, served over HTTP and WebSocket.",
            discussion:
                "Prints {\"event\":\"listening\",\"url\":…} once bound (and writes <root>/cloud/server.plist so agents find it), then one JSON line per device connected and per upload stored."
        )
        @Option(help: "Simulation root (default: $GROUPSIM_ROOT, else $XDG_DATA_HOME/groupsim, else ~/.local/share/groupsim).")
        var root: String?
        @Option(help: "Port on 127.0.0.1 (0: the last run's if free, else any).") var port: Int?
        @Option(
            help: ArgumentHelp(
                "HOST:PORT to listen on, for devices on other hosts: an address of this host, 0.0.0.0 or [::] for all (no TLS: a test network only).",
                valueName: "host:port"))
        var listen: String?

        func run() throws {
            let address: CloudAddress
            switch (listen, port) {
            case (let text?, nil): address = try CloudCommand.listenAddress(text)
            case (nil, let port):
                guard (0...65_535).contains(port ?? 0) else { throw ValidationError("--port must be from 0 to 65535, found \(port ?? 0)") }
                address = CloudAddress(host: "127.0.0.1", port: port ?? 0)
            case (_?, _?): throw ValidationError("give --listen HOST:PORT or --port PORT (loopback), not both")
            }
            let root = SimulationRoot.resolve(explicit: root)
            let lock = try CloudDaemons.holdServerLock(root: root)
            Task {
                defer { withExtendedLifetime(lock) {} }
                do {
                    try await CloudListener.serve(root: root, listen: address, events: { CloudCommand.emit($0, $1) }) { location in
                        var fields: [String: PlistValue] = ["url": .string(location.url), "data": .string(ServerLocation.dataFolder(root: root))]
                        // What other hosts use (the url is how this host reaches it).
                        if address.host != location.host { fields["listen"] = .string(CloudAddress(host: address.host, port: location.port).url) }
                        CloudCommand.emit("listening", fields)
                    }
                } catch {
                    FileHandle.standardError.write(Data("groupsim cloud serve: \(error)\n".utf8))
                    Foundation.exit(1)
                }
            }
            dispatchMain()
        }
    }

    struct Agent: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run a device's sync agent: it uploads the device's writes and applies what the cloud pushes.",
            discussion: "Prints one JSON object per line for what it does (connected, upload, applied, gap, account, problem).")
        @OptionGroup var location: LocationOptions

        func run() throws {
            let place = try location.simulationRoot
            try place.requireKnownDevice()
            let lock = try CloudDaemons.holdAgentLock(root: place.root, device: place.device)
            let agent = try SyncAgent(cloud: DeviceCloud(root: place.root, device: place.device)) { event, fields in
                CloudCommand.emit(event, fields)
            }
            CloudCommand.emit("ready", ["device": .string(place.device)])
            Task {
                await agent.run()
                withExtendedLifetime(lock) {}
                Foundation.exit(0)
            }
            dispatchMain()
        }
    }

    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the cloud's state and each device's account, network and stores.",
            discussion: "--json prints the cloud's own status (GET /v1/status) as one JSON object instead, for scripts.")
        @Option(help: "Simulation root.") var root: String?
        @Flag(help: "Print the cloud's status as one JSON object (accounts, connected devices, faults, traffic).") var json = false

        func run() throws {
            let root = SimulationRoot.resolve(explicit: root)
            let daemons = CloudDaemons(root: root, groupsim: "")
            let location = daemons.server == nil ? nil : try ServerLocation.read(root: root)
            // The secret is read apart from the request: a cloud that runs but whose secret file is gone is not "not answering".
            let secret = Result { try CloudTrust.controlSecret(root: root) }
            let status = Result { () throws -> PlistValue in
                guard let location else { throw ValidationError("the cloud is not running in \(root.path) (groupsim cloud start)") }
                let endpoint = CloudEndpoint(location: location, secret: try secret.get())
                return try CloudClient.blocking { try await CloudClient.request(endpoint, path: CloudClient.Path.status) }
            }
            if json { return print(PlistJSON.encode(try status.get())) }
            if let holder = daemons.server, let location {
                switch (secret, status) {
                case (.failure(let error), _):
                    print(
                        "cloud  \(location.url)  \(holder) runs, but its control secret cannot be read, so nothing can ask it: \(error). "
                            + "The cloud writes the secret when it starts: restart it (groupsim cloud stop, then groupsim cloud start).")
                case (_, .success(let status)): print("cloud  \(location.url)  \(holder)\n" + Self.describe(status))
                case (_, .failure(let error)): print("cloud  \(location.url)  \(holder) is not answering: \(error)")
                }
            } else {
                let remote = daemons.devices.contains { (try? DeviceCloud(root: root, device: $0).readSettings().server) != nil }
                print(
                    "cloud  not running in \(root.path) (groupsim cloud start)"
                        + (remote ? "; the devices with a cloud URL below sync with a cloud on another host" : ""))
            }
            for device in daemons.devices {
                let cloud = DeviceCloud(root: root, device: device)
                // One unreadable file is shown where it is; the rest of the table still is.
                let settings: DeviceCloudSettings
                do { settings = try cloud.readSettings() } catch {
                    print("\(device)  settings unreadable: \(error)")
                    continue
                }
                print(
                    "\(device)  account \(settings.account ?? "none")  \(settings.online ? "online" : "offline")  clock skew \(settings.clockSkewMilliseconds) ms  "
                        + (settings.uploadIntervalMilliseconds == 0 ? "" : "uploads every \(settings.uploadIntervalMilliseconds) ms  ")
                        + "agent \(daemons.agent(device).map { "running (\($0))" } ?? "not running")"
                        + (settings.server.map { "  cloud \($0.url)" } ?? ""))
                // What the app and the agent say of the file, said here too.
                for problem in settings.problems { print("  ignored: \(problem)") }
                for store in settings.stores {
                    let copy: StoreCopy?
                    do { copy = try cloud.readStore(store) } catch {
                        print("  \(store)  unreadable: \(error)")
                        continue
                    }
                    guard let copy else { continue }
                    print(
                        "  \(store)  \(copy.values.count) keys, \(copy.pending.count) pending, revision \(copy.revision)"
                            + (copy.initialSyncDone ? "" : ", first sync not done"))
                }
            }
        }

        /// The cloud's status (GET /v1/status) as indented lines for people.
        static func describe(_ status: PlistValue) -> String {
            let fields = status.dictionaryValue ?? [:]
            func words(_ value: PlistValue?) -> [String] { value?.arrayValue?.compactMap(\.stringValue) ?? [] }
            func number(_ fields: [String: PlistValue]?, _ name: String) -> Int64 {
                if case .integer(let number)? = fields?[name] { return number }
                return 0
            }
            let accounts = words(fields["accounts"])
            let connected = (fields["connected"]?.arrayValue ?? []).compactMap(\.dictionaryValue).map {
                "\($0["device"]?.stringValue ?? "?") (\($0["account"]?.stringValue ?? "?"))"
            }
            var lines = [
                "  accounts   " + (accounts.isEmpty ? "none yet" : accounts.joined(separator: ", ")),
                "  connected  " + (connected.isEmpty ? "none" : connected.joined(separator: ", ")),
            ]
            for (device, value) in (fields["faults"]?.dictionaryValue ?? [:]).sorted(by: { $0.key < $1.key }) {
                let fault = value.dictionaryValue
                let active = [
                    fault?["partitioned"] == .bool(true) ? "partitioned" : nil,
                    number(fault, "latencyMs") > 0 ? "latency \(number(fault, "latencyMs")) ms" : nil,
                    number(fault, "dropPushes") > 0 ? "drops the next \(number(fault, "dropPushes")) pushes" : nil,
                    number(fault, "duplicatePushes") > 0 ? "duplicates the next \(number(fault, "duplicatePushes")) pushes" : nil,
                ].compactMap { $0 }
                if !active.isEmpty { lines.append("  faults     \(device): " + active.joined(separator: ", ")) }
            }
            for (device, value) in (fields["traffic"]?.dictionaryValue ?? [:]).sorted(by: { $0.key < $1.key }) {
                let traffic = value.dictionaryValue
                lines.append(
                    "  traffic    \(device): \(number(traffic, "uploadedChanges")) changes uploaded, \(number(traffic, "appliedChanges")) applied, "
                        + "\(number(traffic, "pushes")) pushes (\(number(traffic, "droppedPushes")) dropped, \(number(traffic, "duplicatedPushes")) duplicated)"
                )
            }
            return lines.joined(separator: "\n")
        }
    }

    struct Account: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Sign a device in to an iCloud account, out of it, or show who is signed in.",
            discussion: "The device's agent carries it out: signing out (or switching) takes the old account's values off the device.")
        @OptionGroup var location: LocationOptions
        @Argument(help: "sign-in, sign-out or show.") var action: String
        @Argument(help: "The account (sign-in).") var account: String?

        func run() throws {
            let place = try location.simulationRoot
            try place.requireKnownDevice()
            let cloud = DeviceCloud(root: place.root, device: place.device)
            switch (action, account) {
            case ("sign-in", let name?):
                try DomainName.validate(name, what: "account name")
                try cloud.updateSettings { $0.account = name }
            case ("sign-out", nil):
                try cloud.updateSettings { $0.account = nil }
            case ("show", nil):
                print(try cloud.readSettings().account ?? "none")
            default:
                throw ValidationError("usage: groupsim cloud account sign-in ACCOUNT | sign-out | show")
            }
        }
    }

    struct Network: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Change a device's network or clock: online, offline, latency MS, partition, heal, drop-pushes N, duplicate-pushes N, skew MS, upload-interval MS.",
            discussion: """
                online/offline and skew are the device's own (its agent disconnects; its apps stamp writes with the skewed clock); \
                latency, partition, heal, drop-pushes and duplicate-pushes are applied by the cloud to the device's traffic; \
                upload-interval is the device's too: its agent uploads each store at most once per MS, the latest value of each \
                key written since (iCloud's throttling: "several per minute"); 0, the default, uploads at once.
                """)
        @OptionGroup var location: LocationOptions
        @Argument(help: "online, offline, latency, partition, heal, drop-pushes, duplicate-pushes, skew or upload-interval.") var action: String
        // Taken as words, so a negative one (skew -3600000) is a number, not an unknown option.
        @Argument(parsing: .allUnrecognized, help: "MS or N, for latency, skew (may be negative), drop-pushes, duplicate-pushes, upload-interval.")
        var amount: [String] = []

        static let actions = ["online", "offline", "latency", "partition", "heal", "drop-pushes", "duplicate-pushes", "skew", "upload-interval"]

        func run() throws {
            let place = try location.simulationRoot
            guard Self.actions.contains(action) else {
                var message = "'\(action)' is not a network change"
                if let guess = NameSuggestion.closest(to: action, among: Self.actions) { message += "; did you mean \(guess)?" }
                throw ValidationError(message + " (one of \(NetworkAction.words))")
            }
            let amount = amount.filter { $0 != "--" }
            guard amount.count <= 1 else { throw ValidationError("\(action) takes at most one number, found \(amount.joined(separator: " "))") }
            let number = try amount.first.map { text in
                guard let number = Int64(text) else { throw ValidationError("\(action) takes a whole number, found '\(text)'") }
                return number
            }
            let change: NetworkAction
            do { change = try NetworkAction(action, number) } catch let error as CloudFormatError { throw ValidationError(error.description) }
            // The cloud's faults for a device on another host are set where the cloud is, which trusts it.
            let trustedHere = (try? CloudTrust.trustedSecretFile(root: place.root, device: place.device).read()) != nil
            if !(change.isSetByTheCloud && trustedHere) { try place.requireKnownDevice() }
            try CloudControl(root: place.root).apply(change, device: place.device)
        }
    }

    struct Read: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a store as the cloud has it (--account) or as a device has it (--device), as JSON.")
        @Option(help: "Simulation root.") var root: String?
        @Option(help: "Read the cloud's copy for this account.") var account: String?
        @Option(help: "Read this device's copy.") var device: String?
        @Argument var store: String
        @Argument var key: String?

        func run() throws {
            let root = SimulationRoot.resolve(explicit: root)
            var values: [String: PlistValue]
            switch (account, device) {
            case (let account?, nil):
                guard let endpoint = try CloudEndpoint.control(root: root) else {
                    throw ValidationError("the cloud is not started in \(root.path) (groupsim cloud serve)")
                }
                let status = try CloudClient.blocking { try await CloudClient.request(endpoint, path: CloudClient.Path.status) }
                let known = status.dictionaryValue?["accounts"]?.arrayValue?.compactMap(\.stringValue) ?? []
                guard known.contains(account) else {
                    var message = "the cloud has no account \(account)"
                    if let guess = NameSuggestion.closest(to: account, among: known) { message += "; did you mean \(guess)?" }
                    throw ValidationError(
                        message
                            + (known.isEmpty
                                ? " (it has none yet: an account is made by a device's first upload)"
                                : " (accounts: \(known.joined(separator: ", ")))"))
                }
                let path = CloudClient.Path.store(store, of: account)
                let reply = try CloudClient.blocking { try await CloudClient.request(endpoint, path: path) }
                values = (reply.dictionaryValue?["records"]?.dictionaryValue ?? [:]).compactMapValues { $0.dictionaryValue?["value"] }
            case (nil, let device?):
                try DeviceManager(root: root).requireDevice(device)
                guard let copy = try DeviceCloud(root: root, device: device).readStore(store) else {
                    throw ValidationError("\(device) has no copy of \(store): no app there has opened it (its copy is made when one does)")
                }
                values = copy.values
            default:
                throw ValidationError("give exactly one of --account (the cloud's copy) and --device (a device's copy)")
            }
            if let key {
                guard let value = values[key] else { throw ExitCode(1) }
                print(PlistJSON.encode(value))
            } else {
                print(PlistJSON.encode(.dictionary(values)))
            }
        }
    }

    struct Write: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a key of a device's copy of a store, as an app on the device would (the agent uploads it).",
            discussion:
                "VALUE is JSON: \"text\", 42, 1.5, true, [..], {..}, {\"$date\":\"…\"}, {\"$data\":\"base64\"}. Without VALUE, --remove removes the key."
        )
        @OptionGroup var location: LocationOptions
        @Flag(help: "Remove the key.") var remove = false
        @Argument var store: String
        @Argument var key: String
        @Argument var value: String?

        func run() throws {
            let place = try location.simulationRoot
            let newValue: PlistValue?
            switch (value, remove) {
            case (let text?, false):
                do { newValue = try PlistJSON.decode(PlistJSON.parse(text), path: "VALUE") } catch {
                    throw ValidationError(
                        "VALUE is JSON, and \(CloudFormatError.name(text)) is not: \(errorClause(error)). "
                            + "A string is written in double quotes, inside single quotes for the shell: groupsim cloud write \(store) \(key) '\"\(text)\"'"
                    )
                }
            case (nil, true): newValue = nil
            default: throw ValidationError("give a VALUE (JSON) or --remove, not both")
            }
            try place.requireKnownDevice()
            let target = try UbiquitousStore(cloud: DeviceCloud(root: place.root, device: place.device), identifier: store)
            try target.set(newValue, forKey: key)
            for violation in try target.flush() { print("kept on \(place.device) only, never uploaded: \(violation)") }
        }
    }

    struct Watch: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a device's external-change notifications for a store as they arrive (reason and keys), one JSON object per line.")
        @OptionGroup var location: LocationOptions
        @Argument var store: String

        func run() throws {
            let place = try location.simulationRoot
            try place.requireKnownDevice()
            let watched = try UbiquitousStore(cloud: DeviceCloud(root: place.root, device: place.device), identifier: store) { change in
                CloudCommand.emit(
                    "external-change",
                    [
                        "reason": .string(change.reason.rawValue), "keys": .array(change.keys.map { .string($0) }),
                    ])
            }
            ChangeWatcher.shared.waitUntilIdle()
            CloudCommand.emit("ready", ["store": .string(store), "device": .string(place.device)])
            withExtendedLifetime(watched) { dispatchMain() }
        }
    }
}
