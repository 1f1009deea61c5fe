import CloudClient
import CloudDevice
import CloudService
import Foundation
import GroupDefaults
import PropertyList
import TestSupport
import Testing

/// Who may talk to the cloud, and what one peer may cost it: real cloud
/// processes, real sockets, peers that behave as no agent does.
@Suite(.serialized) struct CloudTrustTests: CloudProcessSuite {
    let root = TemporaryRoot()
}

extension CloudTrustTests {
    /// An HTTP request written by hand, so the test chooses every header; the
    /// answer's head, or with `whole` everything until the cloud closes.
    func rawHTTP(_ request: String, port: Int, whole: Bool = false) throws -> String {
        let socket = try RawSocket(port: port)
        try socket.send(request)
        return socket.receive(until: whole ? "\u{0}" : "\r\n\r\n", timeout: 10)
    }

    /// The body of an answer read whole.
    func body(_ answer: String) -> String {
        answer.range(of: "\r\n\r\n").map { String(answer[$0.upperBound...]) } ?? ""
    }

    func upgradeRequest(device: String?, secret: String?) -> String {
        var request =
            "GET /v1/sync HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
        if let device { request += "Groupsim-Device: \(device)\r\n" }
        if let secret { request += "Authorization: Bearer \(secret)\r\n" }
        return request + "\r\n"
    }

    @Test func theHTTPFaceAnswersOnlyTheRootsControlSecret() throws {
        let server = try startCloud()
        let location = try location()
        // The secret is the cloud's own, private to the root's user.
        var info = stat()
        #expect(stat(root.path + "/cloud/control.secret", &info) == 0 && info.st_mode & 0o777 == 0o600)
        let none = try rawHTTP("GET /v1/accounts/alice HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", port: location.port, whole: true)
        #expect(none.hasPrefix("HTTP/1.1 401"), "\(none)")
        let wrong = try rawHTTP(
            "GET /v1/status HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(String(repeating: "0", count: 64))\r\n\r\n", port: location.port,
            whole: true)
        #expect(wrong.hasPrefix("HTTP/1.1 401"), "\(wrong)")
        // A stranger learns nothing from a refusal (not where the root is, not why); the cloud's log says why.
        #expect(body(none) == "{\"error\":\"unauthorized\"}\n" && body(wrong) == body(none), "\(none)\n\(wrong)")
        try server.waitFor("unauthorized") { $0.contains("no control secret") && $0.contains(root.path) }
        try server.waitFor("unauthorized") { $0.contains("wrong control secret") }
        let right = try rawHTTP(
            "GET /v1/status HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(try CloudTrust.controlSecret(root: simulation))\r\n\r\n",
            port: location.port)
        #expect(right.hasPrefix("HTTP/1.1 200"), "\(right)")
        // What the cloud does not have is not found, not an empty answer.
        let endpoint = try endpoint()
        let account = Result { try CloudClient.blocking { try await CloudClient.request(endpoint, path: "/v1/accounts/nobody") } }
        #expect("\(account)".contains("404") && "\(account)".contains("no account nobody"), "\(account)")
        let store = Result { try CloudClient.blocking { try await CloudClient.request(endpoint, path: "/v1/accounts/nobody/stores/s") } }
        #expect("\(store)".contains("404"), "\(store)")
        withExtendedLifetime(server) {}
    }

    @Test func aWebSocketWithoutItsDevicesSecretIsRefused() throws {
        let server = try startCloud()
        let location = try location()
        let secret = try secret(of: "iPhone")
        var bodies: Set<String> = []
        for (device, offered) in [
            ("iPhone", nil), ("iPhone", String(repeating: "a", count: 64)), ("iPad", secret), (nil, secret), ("Ghost", secret), ("../x", secret),
        ] as [(String?, String?)] {
            let answer = try rawHTTP(upgradeRequest(device: device, secret: offered), port: location.port, whole: true)
            #expect(answer.hasPrefix("HTTP/1.1 401"), "\(device ?? "no device") with \(offered == nil ? "no" : "a wrong") secret: \(answer)")
            bodies.insert(body(answer))
        }
        // Whether a device exists, and why its secret was refused, is for the cloud's log only.
        #expect(bodies == ["{\"error\":\"unauthorized\"}\n"], "\(bodies)")
        try server.waitFor("unauthorized") { $0.contains("wrong secret for device iPhone") }
        try server.waitFor("unauthorized") { $0.contains("device Ghost has no secret") }
        let refused = Result {
            try CloudClient.blocking { try await RawSyncClient.exchange(location, device: "iPad", secret: secret, send: [], replies: 0) }
        }
        #expect("\(refused)".contains("refused the WebSocket of iPad"), "\(refused)")
        // The device's own secret opens it, for that device only.
        let accepted = try rawHTTP(upgradeRequest(device: "iPhone", secret: secret), port: location.port)
        #expect(accepted.hasPrefix("HTTP/1.1 101"), "\(accepted)")
        var info = stat()
        #expect(stat(root.path + "/devices/iPhone/cloud/device.secret", &info) == 0 && info.st_mode & 0o777 == 0o600)
        withExtendedLifetime(server) {}
    }

    @Test func aStampFarInTheFutureIsRefused() throws {
        let server = try startCloud()
        let location = try location()
        let hello = #"{"type":"hello","device":"iPhone","account":"alice","stores":{}}"#
        let upload =
            #"{"type":"upload","store":"s","changes":[{"key":"pinned","value":1,"time":9223372036854775807,"device":"iPhone","sequence":1}]}"#
        let replies = try CloudClient.blocking {
            try await RawSyncClient.exchange(location, device: "iPhone", secret: try secret(of: "iPhone"), send: [hello, upload], replies: 2)
        }
        #expect(replies.last?.contains("\"refused\":[{") == true && replies.last?.contains("the largest clock skew") == true, "\(replies)")
        let records = Result { try cloudStore("s", account: "alice") }
        #expect((try? records.get())?["pinned"] == nil, "\(records)")
        withExtendedLifetime(server) {}
    }

    @Test func theFaultTableIsBounded() throws {
        let server = try startCloud()
        let endpoint = try endpoint()
        let refusal: String? = try CloudClient.blocking {
            for index in 0...1024 {
                do {
                    _ = try await CloudClient.request(endpoint, path: CloudClient.Path.faults("device\(index)"), body: ["latencyMs": 5])
                } catch {
                    return "\(index): \(error)"
                }
            }
            return nil
        }
        #expect(
            refusal?.hasPrefix("1024: ") == true && refusal?.contains("the most the cloud keeps") == true,
            "\(refusal ?? "all 1025 devices got faults")")
        // Healing one makes room.
        _ = try CloudClient.blocking { try await CloudClient.request(endpoint, path: CloudClient.Path.faults("device0"), body: ["latencyMs": 0]) }
        _ = try CloudClient.blocking { try await CloudClient.request(endpoint, path: CloudClient.Path.faults("device1024"), body: ["latencyMs": 5]) }
        withExtendedLifetime(server) {}
    }

    @Test func theCloudsDataFolderAsALinkIsRefused() throws {
        let outside = TemporaryRoot()
        try FileManager.default.createDirectory(atPath: root.path + "/cloud", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: root.path + "/cloud/data", withDestinationPath: outside.path)
        let serve = try runBounded(BuiltExecutable.path("groupsim"), ["cloud", "serve", "--root", root.path], timeout: 20)
        #expect(serve.status != 0)
        #expect(serve.stderr.contains(root.path + "/cloud/data") && serve.stderr.contains("symbolic link"), "\(serve.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path).isEmpty)
    }

    /// A link swapped in for the data folder while the cloud runs is refused
    /// at the next write, as at start: nothing is written through it, and the
    /// device is told its change was not stored.
    @Test func aLinkSwappedInForTheDataFolderWhileTheCloudRunsIsRefused() throws {
        let server = try startCloud()
        let location = try location()
        let secret = try secret(of: "iPhone")
        let hello = #"{"type":"hello","device":"iPhone","account":"alice","stores":{}}"#
        func upload(_ store: String, _ key: String, sequence: Int) throws -> String {
            let frame =
                #"{"type":"upload","store":"\#(store)","changes":[{"key":"\#(key)","value":1,"time":1000,"device":"iPhone","sequence":\#(sequence)}]}"#
            return try CloudClient.blocking {
                try await RawSyncClient.exchange(location, device: "iPhone", secret: secret, send: [hello, frame], replies: 2)
            }.last ?? ""
        }
        #expect(try upload("s", "before", sequence: 1).contains("\"accepted\":[1]"))
        let outside = TemporaryRoot()
        let data = ServerLocation.dataFolder(root: simulation)
        try FileManager.default.moveItem(atPath: data, toPath: data + "-moved")
        try FileManager.default.createSymbolicLink(atPath: data, withDestinationPath: outside.path)
        for (store, sequence) in [("s", 2), ("t", 3)] {
            let reply = try upload(store, "after", sequence: sequence)
            #expect(reply.contains("\"type\":\"error\"") && reply.contains("symbolic link"), "\(reply)")
        }
        try server.waitFor("write-failed") { $0.contains("symbolic link") }
        #expect(try FileManager.default.subpathsOfDirectory(atPath: outside.path).isEmpty)
    }

    @Test func aDeviceThatDoesNotReadIsDisconnectedInsteadOfBufferedFor() throws {
        let server = try startCloud()
        let location = try location()
        let socket = try RawSocket(port: location.port, receiveBuffer: 4096)
        try socket.send(upgradeRequest(device: "iPhone", secret: try secret(of: "iPhone")))
        let answer = socket.receive(until: "\r\n\r\n", timeout: 10)
        try #require(answer.hasPrefix("HTTP/1.1 101"), "\(answer)")
        // A store of 800 KB, then the whole of it asked for forty times, and nothing read.
        let value = String(repeating: "v", count: 200_000)
        let changes = (0..<4).map { #"{"key":"k\#($0)","value":"\#(value)","time":1,"device":"iPhone","sequence":\#($0 + 1)}"# }
        try socket.send(RawSocket.webSocketTextFrame(#"{"type":"hello","device":"iPhone","account":"alice","stores":{}}"#))
        try socket.send(RawSocket.webSocketTextFrame(#"{"type":"upload","store":"s","changes":[\#(changes.joined(separator: ","))]}"#))
        for _ in 0..<40 { try socket.send(RawSocket.webSocketTextFrame(#"{"type":"subscribe","store":"s","since":0}"#)) }
        try server.waitFor("disconnected") { $0.contains("iPhone") && $0.contains("fell behind") }
        // It comes back and syncs like any device.
        let again = try CloudClient.blocking {
            try await RawSyncClient.exchange(
                location, device: "iPhone", secret: try secret(of: "iPhone"),
                send: [#"{"type":"hello","device":"iPhone","account":"alice","stores":{"s":0}}"#], replies: 2)
        }
        #expect(again.last?.contains("\"revision\":1") == true, "\(again.map { $0.prefix(100) })")
        withExtendedLifetime(server) {}
    }

    @Test func halfARequestAndASilentWebSocketAreClosedWhenTheirTimeIsUp() throws {
        let server = try startCloud()
        let port = try location().port
        let request = try RawSocket(port: port)
        try request.send("GET /v1/status HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        // A device's WebSocket that says hello, then nothing (a peer gone without closing, a stuck agent).
        let device = try RawSocket(port: port)
        try device.send(upgradeRequest(device: "iPhone", secret: try secret(of: "iPhone")))
        try #require(device.receive(until: "\r\n\r\n", timeout: 10).hasPrefix("HTTP/1.1 101"))
        try device.send(RawSocket.webSocketTextFrame(#"{"type":"hello","device":"iPhone","account":"alice","stores":{}}"#))
        #expect(request.closedByPeer(within: 30), "a request left half-sent kept its connection open")
        #expect(device.closedByPeer(within: 60), "a silent WebSocket was kept open")
        withExtendedLifetime(server) {}
    }

    /// A stranger's refusals cost the cloud's log (on the disk of its data)
    /// a bounded line each, and a bounded number of lines a second: 200
    /// requests with a 60 kB path or device name make at most 10 lines a second
    /// of at most a few hundred bytes a field, and the rest are counted in
    /// `refusals-suppressed` lines.
    @Test func refusalsAreLoggedBoundedAndAtMostTenASecond() throws {
        let server = try startCloud()
        let port = try location().port
        let started = Date()
        let requests = 200
        let path = "/" + String(repeating: "p", count: 60_000)
        let header = "X-Filler: " + String(repeating: "h", count: 10_000)
        // A long path, and a device name as long (quoted by the reason) on an upgrade.
        let device = String(repeating: "d", count: 60_000)
        for index in 0..<requests {
            let request =
                index % 2 == 0
                ? "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(header)\r\n\r\n"
                : upgradeRequest(device: device, secret: String(repeating: "a", count: 64))
            let answer = try rawHTTP(request, port: port)
            try #require(answer.hasPrefix("HTTP/1.1 401"), "\(answer.prefix(200))")
        }
        let seconds = Date().timeIntervalSince(started)
        var logged = 0
        var suppressed = 0
        // Every refusal is in a line or a count, once the last second's summary is out.
        try until(server, timeout: 30) {
            let lines = server.process.allLines
            logged = lines.filter { $0.contains("\"event\":\"unauthorized\"") }.count
            suppressed = lines.filter { $0.contains("\"event\":\"refusals-suppressed\"") }.compactMap { line -> Int? in
                guard case .integer(let count)? = (try? PlistJSON.decode(PlistJSON.parse(line), path: "line"))?.dictionaryValue?["count"] else {
                    return nil
                }
                return Int(count)
            }.reduce(0, +)
            return logged + suppressed == requests
        }
        #expect(suppressed > 0)
        #expect(Double(logged) <= 10 * (seconds.rounded(.up) + 1), "\(logged) lines in \(seconds) s")
        let lines = server.process.allLines.filter { $0.contains("\"event\":\"unauthorized\"") }
        #expect(lines.allSatisfy { $0.utf8.count < 2_000 }, "\(lines.map(\.utf8.count).max() ?? 0) bytes in the longest line")
        #expect(lines.first?.contains("(60001 bytes)") == true, "\(lines.first?.prefix(600) ?? "")")
        withExtendedLifetime(server) {}
    }

    /// Hellos with made-up accounts, and stores named that nothing was
    /// uploaded to, leave nothing in the cloud once their connections end:
    /// no folder or lock file, no account it knows of (before, each was kept
    /// until the cloud restarted: 30 s of them, 250,202 lock files and 378 MB).
    @Test func madeUpAccountsAndStoresLeaveNothingInTheCloud() throws {
        let server = try startCloud()
        let location = try location()
        let secret = try secret(of: "iPhone")
        @Sendable func hello(_ account: String, stores: [String]) -> String {
            #"{"type":"hello","device":"iPhone","account":"\#(account)","stores":{\#(stores.map { #""\#($0)":0"# }.joined(separator: ","))}}"#
        }
        for index in 0..<100 {
            let stores = (0..<20).map { "com.example.hello.\(index).\($0)" }
            let frame = hello("ghost\(index)", stores: stores)
            let replies = try CloudClient.blocking {
                try await RawSyncClient.exchange(location, device: "iPhone", secret: secret, send: [frame], replies: 21)
            }
            try #require(replies.count == 21, "\(replies.suffix(2))")
        }
        // Polls name stores the cloud answers only for when it has more: 3,000 unknown ones, then one subscribe to know they were read.
        let polled = (0..<3_000).map { #""com.example.poll.\#($0)":0"# }.joined(separator: ",")
        let frames = [
            hello("ghost-poll", stores: []), #"{"type":"poll","stores":{\#(polled)}}"#, #"{"type":"subscribe","store":"com.example.last","since":0}"#,
        ]
        let replies = try CloudClient.blocking {
            try await RawSyncClient.exchange(location, device: "iPhone", secret: secret, send: frames, replies: 2)
        }
        try #require(replies.count == 2 && replies[1].contains("com.example.last"), "\(replies)")
        let endpoint = try endpoint()
        // The last connection's end reaches the cloud soon after the test's side closed it (the cloud says nothing of it).
        let deadline = Date().addingTimeInterval(20)
        var status = try CloudClient.blocking { try await CloudClient.request(endpoint, path: CloudClient.Path.status) }
        while status.dictionaryValue?["connected"] != [], Date() < deadline {
            usleep(50_000)
            status = try CloudClient.blocking { try await CloudClient.request(endpoint, path: CloudClient.Path.status) }
        }
        #expect(status.dictionaryValue?["accounts"] == [] && status.dictionaryValue?["connected"] == [], "\(status)")
        let data = ServerLocation.dataFolder(root: simulation) + "/accounts"
        let left = try FileManager.default.subpathsOfDirectory(atPath: data)
        #expect(left.isEmpty, "\(left.count) files and folders, such as \(left.prefix(5))")
        let account = Result { try CloudClient.blocking { try await CloudClient.request(endpoint, path: CloudClient.Path.account("ghost0")) } }
        #expect("\(account)".contains("404"), "\(account)")
        withExtendedLifetime(server) {}
    }

    /// A request the cloud cannot parse (garbage, a head over NIO's 80 kB) is
    /// answered 400 and closed at once, not held until the request's deadline.
    @Test func aRequestThatCannotBeParsedIsAnsweredAndClosed() throws {
        let server = try startCloud()
        let port = try location().port
        for request in ["GARBAGE \u{1} nonsense\r\n\r\n", "GET /v1/status HTTP/1.1\r\nX: \(String(repeating: "a", count: 90_000))\r\n\r\n"] {
            let socket = try RawSocket(port: port)
            try socket.send(request)
            let started = Date()
            let answer = socket.receive(until: "\r\n\r\n", timeout: 10)
            #expect(answer.hasPrefix("HTTP/1.1 400"), "\(answer.prefix(200))")
            #expect(socket.closedByPeer(within: 3), "the connection stayed open after its 400")
            #expect(Date().timeIntervalSince(started) < 3)
        }
        withExtendedLifetime(server) {}
    }

    /// A stranger's flood of connections that show no secret (idle, or a
    /// request left half-sent) holds up no one who has one: the CLI and an
    /// agent get in at once, while the flood goes on (before, the cap was
    /// shared and taken before any secret was checked: `cloud status` failed
    /// until the flood's connections timed out, and agents got in only by
    /// winning a freed place).
    @Test func aFloodOfConnectionsWithoutASecretHoldsUpNeitherTheCLINorAnAgent() throws {
        #expect(try groupsim(["cloud", "account", "sign-in", "alice"], root: root).status == 0)
        // A descriptor limit of 256: at most 128 connections, 32 of them without a secret yet.
        let server = try CloudChild(root: root, shell: "ulimit -n 256 && exec \"$0\" cloud serve --root \"$1\"")
        try server.waitFor("listening")
        let port = try location().port
        /// 200 connections on loopback, some silent, some with half a request; closed when the test ends.
        func flood() throws -> [RawSocket] {
            try (0..<200).map { index in
                let socket = try RawSocket(port: port)
                if index % 2 == 0 { try socket.send("GET /v1/status HTTP/1.1\r\n") }
                return socket
            }
        }
        var held = try flood()
        var started = Date()
        let status = try runBounded(
            BuiltExecutable.path("groupsim"), ["cloud", "status", "--json", "--root", root.path], environment: ["GROUPSIM_CLOUD_AUTOSTART": "0"])
        // Bounds far below the 40 s the flood held them for, far above a loaded machine's start-up.
        #expect(status.status == 0 && status.stdout.contains("\"server\""), "\(status.stdout)\(status.stderr)")
        #expect(Date().timeIntervalSince(started) < 20)
        held += try flood()
        started = Date()
        let agent = try CloudChild(["agent", "--device", "iPhone"], root: root)
        try agent.waitFor("connected", timeout: 20)
        #expect(Date().timeIntervalSince(started) < 20)
        try server.waitFor("dropped-connection") { $0.contains("32 connections had not shown a secret") }
        held.removeAll()
        withExtendedLifetime(server) {}
    }

    /// Connections that showed a secret have their own cap (what is left of
    /// the cloud's, after the strangers' place): past it they are answered
    /// 503 and logged, and once they are gone the cloud serves again.
    @Test func connectionsBeyondTheCapAreRefusedAndTheCloudServesAgainAfter() throws {
        // A descriptor limit of 64: at most 32 connections, 8 of them without a secret yet; the rest of the descriptors stay the cloud's.
        let server = try CloudChild(root: root, shell: "ulimit -n 64 && exec \"$0\" cloud serve --root \"$1\"")
        try server.waitFor("listening")
        let port = try location().port
        let secret = try CloudTrust.controlSecret(root: simulation)
        // A body announced and never sent: each holds its place until its request's time is up.
        var held: [RawSocket] = []
        var refused = 0
        for _ in 0..<30 {
            let socket = try RawSocket(port: port)
            try socket.send("POST /v1/faults/iPad HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(secret)\r\nContent-Length: 100\r\n\r\n")
            if let answer = socket.receive(timeout: 0.2), String(decoding: answer, as: UTF8.self).hasPrefix("HTTP/1.1 503") { refused += 1 }
            held.append(socket)
        }
        #expect(refused == 6, "\(refused) of 30 refused")
        try server.waitFor("refused-connection") { $0.contains("24 connections that showed a secret are open") }
        held.removeAll()
        // Once the connections are gone, their places are free again.
        let endpoint = try endpoint()
        let deadline = Date().addingTimeInterval(20)
        var answer = Result<PlistValue, any Error> {
            try CloudClient.blocking { try await CloudClient.request(endpoint, path: CloudClient.Path.status) }
        }
        while (try? answer.get()) == nil && Date() < deadline {
            usleep(100_000)
            answer = Result { try CloudClient.blocking { try await CloudClient.request(endpoint, path: CloudClient.Path.status) } }
        }
        #expect((try? answer.get())?.dictionaryValue?["server"] != nil, "\(answer)")
    }
}

extension CloudTrustTests {
    @Test func aDeviceIsCreatedWithItsSecret() throws {
        #expect(try groupsim(["device", "create", "iPad"], root: root).status == 0)
        var info = stat()
        #expect(
            lstat(root.path + "/devices/iPad/cloud/device.secret", &info) == 0 && info.st_mode & S_IFMT == S_IFREG && info.st_mode & 0o777 == 0o600)
        let secret = try DeviceCloud(root: simulation, device: "iPad").secretFile().read()
        #expect(secret?.count == 64)
    }

    @Test func aSecretMissingOrOpenToOthersIsAClearError() throws {
        #expect(try groupsim(["cloud", "account", "sign-in", "alice"], root: root).status == 0)
        let server = try startCloud()
        // The CLI needs the control secret, and says where it is and who makes it.
        try FileManager.default.removeItem(atPath: root.path + "/cloud/control.secret")
        let read = try groupsim(["cloud", "read", "com.example.kvs", "--account", "alice"], root: root)
        #expect(read.status != 0)
        #expect(
            read.stderr.contains(root.path + "/cloud/control.secret does not exist") && read.stderr.contains("groupsim cloud serve"), "\(read.stderr)"
        )
        // A device secret others may read is no secret: its agent says so and does not connect.
        let secret = root.path + "/devices/iPhone/cloud/device.secret"
        #expect(chmod(secret, 0o644) == 0)
        let agent = try CloudChild(["agent", "--device", "iPhone"], root: root)
        try agent.waitFor("problem") { $0.contains(secret) && $0.contains("must be mode 0600") }
        // Made private again, it connects.
        #expect(chmod(secret, 0o600) == 0)
        #expect(try groupsim(["cloud", "write", "com.example.kvs", "k", "1"], root: root).status == 0)
        try agent.waitFor("connected")
        withExtendedLifetime(server) {}
    }
}

extension CloudTrustTests {
    @Test func anAgentThatFallsBehindIsToldWhyAndResyncs() throws {
        #expect(try groupsim(["cloud", "account", "sign-in", "alice"], root: root).status == 0)
        #expect(try groupsim(["cloud", "write", "com.example.kvs", "k", "1"], root: root).status == 0)
        let server = try startCloud()
        let agent = try CloudChild(["agent", "--device", "iPhone"], root: root)
        try agent.waitFor("acknowledged")
        // Every message to iPhone waits 20 s in the cloud: what iPad uploads meanwhile piles up for it.
        #expect(try groupsim(["cloud", "network", "latency", "20000"], root: root).status == 0)
        let value = String(repeating: "v", count: 200_000)
        var sequence = 0
        let uploads = (0..<12).map { _ in
            let changes = (0..<4).map { key in
                sequence += 1
                return #"{"key":"big\#(key)","value":"\#(value)","time":\#(DeviceCloudSettings.realTime()),"device":"iPad","sequence":\#(sequence)}"#
            }
            return #"{"type":"upload","store":"com.example.kvs","changes":[\#(changes.joined(separator: ","))]}"#
        }
        let location = try location()
        let secret = try secret(of: "iPad")
        let hello = #"{"type":"hello","device":"iPad","account":"alice","stores":{}}"#
        let replies = try CloudClient.blocking {
            try await RawSyncClient.exchange(
                location, device: "iPad", secret: secret, send: [hello] + uploads, replies: 1 + uploads.count, timeout: .seconds(60))
        }
        #expect(replies.filter { $0.contains("\"type\":\"ack\"") }.count == uploads.count, "\(replies.map { $0.prefix(80) })")
        try server.waitFor("disconnected") { $0.contains("iPhone") && $0.contains("fell behind") }
        try agent.waitFor("closed-by-cloud") { $0.contains("fell behind") }
        #expect(try groupsim(["cloud", "network", "heal"], root: root).status == 0)
        // It reconnects at once and is brought up to date (within the latency, if it said hello before the heal):
        // the store's revision 13 (k, then twelve uploads).
        try agent.waitFor("applied", where: { $0.contains("\"revision\":13") }, timeout: 60)
        #expect(try DeviceCloud(root: simulation, device: "iPhone").readStore("com.example.kvs")?.values["big3"] == .string(value))
    }
}
