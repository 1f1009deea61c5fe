import CloudModel
import Foundation
import GroupDefaults
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import PropertyList
import SharedFiles

/// Where a simulation's cloud listens: `<root>/cloud/server.plist`, written
/// by the server once it is bound, read by agents on every connection attempt
/// (a restarted server may come back on another port) and by the CLI.
public struct ServerLocation: Sendable, Equatable {
    public var host: String
    public var port: Int
    public var pid: Int32

    public static func path(root: SimulationRoot) -> String { root.path + "/cloud/server.plist" }
    public static func dataFolder(root: SimulationRoot) -> String { root.path + "/cloud/data" }

    public static func read(root: SimulationRoot) throws -> ServerLocation? {
        let path = path(root: root)
        guard let fields = try SharedPlistFile.read(path: path, root: root.path) else { return nil }
        guard case .string(let host)? = fields["host"], case .integer(let port)? = fields["port"], (1...65_535).contains(port),
              case .integer(let pid)? = fields["pid"], let pid32 = Int32(exactly: pid) else {
            throw CloudFormatError("\(path) does not say where the cloud listens (host, port, pid); start it again with `groupsim cloud serve`")
        }
        return ServerLocation(host: host, port: Int(port), pid: pid32)
    }

    func write(root: SimulationRoot) throws {
        try SharedPlistFile(path: Self.path(root: root), root: root.path).update {
            $0 = ["host": .string(host), "port": .integer(Int64(port)), "pid": .integer(Int64(pid))]
        }
    }

    public var url: String { "http://\(host):\(port)" }
}

/// The cloud's network face: HTTP/1.1 on one port, where `/v1/sync` upgrades
/// to the WebSocket the agents use and every other path is JSON for curl.
public enum CloudListener {
    /// Largest message either side sends (a full 1 MB store as JSON fits).
    static let maximumFrameBytes = 16 << 20

    enum Connection: Sendable {
        case websocket(NIOAsyncChannel<WebSocketFrame, WebSocketFrame>)
        case http(NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>)
    }

    /// Binds, writes the location file, and serves until the task is cancelled.
    /// `port` 0: the port of the last run if it is free, else any.
    public static func serve(
        root: SimulationRoot, host: String = "127.0.0.1", port requested: Int,
        events: @escaping @Sendable (String, [String: PlistValue]) -> Void = { _, _ in }, ready: @Sendable (ServerLocation) -> Void
    ) async throws {
        let server = try CloudServer(dataFolder: ServerLocation.dataFolder(root: root), events: events)
        var candidates = [requested]
        if requested == 0, let previous = try? ServerLocation.read(root: root)?.port { candidates = [previous, 0] }
        var bound: NIOAsyncChannel<EventLoopFuture<Connection>, Never>? = nil
        var lastError: (any Error)? = nil
        for port in candidates where bound == nil {
            do { bound = try await bind(host: host, port: port) } catch { lastError = error }
        }
        guard let channel = bound, let port = channel.channel.localAddress?.port else {
            throw CloudFormatError("cannot listen on \(host):\(requested): \(lastError.map { "\($0)" } ?? "no address")")
        }
        let location = ServerLocation(host: host, port: port, pid: getpid())
        try location.write(root: root)
        ready(location)
        try await withThrowingDiscardingTaskGroup { group in
            try await channel.executeThenClose { inbound in
                for try await connection in inbound {
                    group.addTask { await handle(connection, server: server) }
                }
            }
        }
    }

    private static func bind(host: String, port: Int) async throws -> NIOAsyncChannel<EventLoopFuture<Connection>, Never> {
        try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .bind(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    let upgrader = NIOTypedWebSocketServerUpgrader<Connection>(
                        maxFrameSize: maximumFrameBytes,
                        shouldUpgrade: { channel, head in
                            channel.eventLoop.makeSucceededFuture(head.uri.hasPrefix("/v1/sync") ? HTTPHeaders() : nil)
                        },
                        upgradePipelineHandler: { channel, _ in
                            channel.eventLoop.makeCompletedFuture {
                                .websocket(try NIOAsyncChannel<WebSocketFrame, WebSocketFrame>(wrappingChannelSynchronously: channel))
                            }
                        })
                    let configuration = NIOTypedHTTPServerUpgradeConfiguration(
                        upgraders: [upgrader],
                        notUpgradingCompletionHandler: { channel in
                            channel.eventLoop.makeCompletedFuture {
                                return .http(try NIOAsyncChannel(wrappingChannelSynchronously: channel))
                            }
                        })
                    return try channel.pipeline.syncOperations.configureUpgradableHTTPServerPipeline(
                        configuration: .init(upgradeConfiguration: configuration))
                }
            }
    }

    private static func handle(_ connection: EventLoopFuture<Connection>, server: CloudServer) async {
        do {
            switch try await connection.get() {
            case .websocket(let channel): try await serveDevice(channel, server: server)
            case .http(let channel): try await serveHTTP(channel, server: server)
            }
        } catch {
            // One connection's failure (a peer gone mid-frame) never stops the cloud.
        }
    }

    // MARK: A device's agent

    private static func serveDevice(_ channel: NIOAsyncChannel<WebSocketFrame, WebSocketFrame>, server: CloudServer) async throws {
        let (outgoing, outbox) = AsyncStream.makeStream(of: OutgoingFrame.self)
        try await channel.executeThenClose { inbound, outbound in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await frame in outgoing {
                        switch frame {
                        case .text(let text, let notBefore):
                            if notBefore > .now { try await Task.sleep(until: notBefore) }
                            try await outbound.write(WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(string: text)))
                        case .pong(let data):
                            try await outbound.write(WebSocketFrame(fin: true, opcode: .pong, data: data))
                        }
                    }
                }
                group.addTask { await readFrames(inbound, outbox: outbox, server: server) }
                try await group.next()
                group.cancelAll()
            }
        }
        outbox.finish()
    }

    /// Reads a device's messages until it goes; then its session ends.
    private static func readFrames(
        _ inbound: NIOAsyncChannelInboundStream<WebSocketFrame>, outbox: AsyncStream<OutgoingFrame>.Continuation, server: CloudServer
    ) async {
        var sessionID: Int? = nil
        do {
            var device: String? = nil
            for try await frame in inbound {
                switch frame.opcode {
                case .text:
                    let text = String(buffer: frame.unmaskedData)
                    if let device {
                        let fault = await server.faults(of: device)
                        if fault.latencyMilliseconds > 0 { try await Task.sleep(for: .milliseconds(fault.latencyMilliseconds)) }
                        if fault.partitioned { continue }
                    }
                    do {
                        let message = try SyncCodec.decodeAgentMessage(text)
                        if let id = sessionID {
                            try await server.receive(message, session: id)
                        } else if case .hello(let name, let account, let stores) = message {
                            let id = try await server.open(device: name, account: account, outbox: outbox)
                            sessionID = id
                            device = name
                            try await server.greet(id, stores: stores)
                        } else {
                            throw CloudFormatError("the first message of a connection must be hello")
                        }
                    } catch {
                        outbox.yield(.text(SyncCodec.encode(CloudMessage.error("\(error)")), notBefore: .now))
                    }
                case .ping:
                    outbox.yield(.pong(frame.unmaskedData))
                case .connectionClose:
                    break
                default:
                    // Fragmented frames are not part of the protocol: every message is one frame.
                    outbox.yield(.text(SyncCodec.encode(CloudMessage.error("every message must be one text frame")), notBefore: .now))
                }
                if frame.opcode == .connectionClose { break }
            }
        } catch {
            // The device went mid-frame: the same as a close.
        }
        if let sessionID { await server.close(sessionID) }
        outbox.finish()
    }

    // MARK: JSON for people and curl

    private static func serveHTTP(
        _ channel: NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>, server: CloudServer
    ) async throws {
        try await channel.executeThenClose { inbound, outbound in
            var head: HTTPRequestHead? = nil
            var body = ByteBuffer()
            for try await part in inbound {
                switch part {
                case .head(let requestHead): head = requestHead
                case .body(var chunk):
                    guard body.readableBytes + chunk.readableBytes <= 1 << 20 else {
                        try await respond(outbound, status: .payloadTooLarge, ["error": "a request body may have at most 1 MiB"])
                        return
                    }
                    body.writeBuffer(&chunk)
                case .end:
                    guard let request = head else { return }
                    let (status, reply) = await route(request, body: String(buffer: body), server: server)
                    try await respond(outbound, status: status, reply)
                    return
                }
            }
        }
    }

    private static func route(_ request: HTTPRequestHead, body: String, server: CloudServer) async -> (HTTPResponseStatus, PlistValue) {
        let path = request.uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? request.uri
        let parts = path.split(separator: "/").map { $0.removingPercentEncoding ?? String($0) }
        do {
            let method = request.method
            if method == .GET && (parts.isEmpty || parts == ["v1", "status"]) {
                return (.ok, await server.status())
            }
            if method == .GET && parts.count == 3 && parts[0] == "v1" && parts[1] == "accounts" {
                return (.ok, try await server.account(parts[2]))
            }
            if method == .GET && parts.count == 5 && parts[0] == "v1" && parts[1] == "accounts" && parts[3] == "stores" {
                return (.ok, try await server.store(parts[4], of: parts[2]))
            }
            if method == .POST && parts.count == 3 && parts[0] == "v1" && parts[1] == "faults" {
                guard let fields = try PlistJSON.decode(PlistJSON.parse(body.isEmpty ? "{}" : body), path: "body").dictionaryValue else {
                    return (.badRequest, ["error": "the body must be a JSON object"])
                }
                return (.ok, try await server.setFaults(fields, device: parts[2]).plist)
            }
            return (.notFound, ["error": .string("no \(method) \(path); try GET /v1/status, /v1/accounts/<account>, "
                + "/v1/accounts/<account>/stores/<store>, or POST /v1/faults/<device>")])
        } catch {
            return (.badRequest, ["error": .string("\(error)")])
        }
    }

    private static func respond(
        _ outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>, status: HTTPResponseStatus, _ reply: PlistValue
    ) async throws {
        let body = ByteBuffer(string: PlistJSON.encode(reply) + "\n")
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "application/json")
        headers.add(name: "Content-Length", value: String(body.readableBytes))
        headers.add(name: "Connection", value: "close")
        try await outbound.write(contentsOf: [.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers)), .body(.byteBuffer(body)), .end(nil)])
    }
}
