import CloudClient
import CloudModel
import Foundation
import GroupDefaults
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import PropertyList
import SharedFiles

/// The cloud's network face: HTTP/1.1 on one port, where `/v1/sync` upgrades
/// to the WebSocket the agents use and every other path is JSON for curl.
///
/// No peer can hold more than its share: connections are capped below the
/// descriptor limit, and those that have not shown a secret have a budget of
/// their own (`ConnectionLimiter`) and `credentialsTimeout` to show one; a
/// request must arrive whole within `requestTimeout`, a WebSocket silent for
/// `idleTimeout` is closed, and a device that does not read what it is sent
/// is disconnected once `outboxBytes` wait for it.
package enum CloudListener {
    /// Largest message either side sends (a full 1 MB store as JSON fits).
    static let maximumFrameBytes = 16 << 20
    /// From accepting a connection to having its whole request (or its upgrade).
    static let requestTimeout = TimeAmount.seconds(10)
    /// From accepting a connection to its request's head with a secret the cloud accepts.
    static let credentialsTimeout = TimeAmount.seconds(5)
    /// A WebSocket with no frame for this long is gone (agents poll every second).
    static let idleTimeout = TimeAmount.seconds(30)
    /// What may wait to be sent to one device before it is disconnected.
    static let outboxBytes = 8 << 20

    enum Connection: Sendable {
        case websocket(NIOAsyncChannel<WebSocketFrame, WebSocketFrame>, device: String)
        case http(NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>)
    }

    typealias Events = @Sendable (String, [String: PlistValue]) -> Void

    /// Binds, writes the location file, and serves until the task is cancelled.
    /// `listen`: loopback unless the cloud must be reached from other hosts;
    /// port 0: the port of the last run if it is free, else any. The
    /// location file and `ready` give the address this host reaches it at.
    package static func serve(
        root: SimulationRoot, listen: CloudAddress = CloudAddress(host: "127.0.0.1", port: 0),
        events: @escaping @Sendable (String, [String: PlistValue]) -> Void = { _, _ in }, ready: @Sendable (ServerLocation) -> Void
    ) async throws {
        let host = listen.host
        let requested = listen.port
        // Reached from the root through real folders only, as every path in the root: a link is refused, not followed.
        try root.prepareConfinedDirectory(ServerLocation.dataFolder(root: root) + "/accounts")
        let gate = CloudTrust.Gate(root: root, controlSecret: try CloudTrust.controlSecretFile(root: root).readOrCreate())
        let server = try CloudServer(dataFolder: ServerLocation.dataFolder(root: root), top: root.path, events: events)
        let door = Door(
            gate: gate, limiter: ConnectionLimiter(maximum: ConnectionLimiter.maximumForDescriptorLimit()), refusals: RefusalLog(events: events))
        var candidates = [requested]
        if requested == 0, let previous = try? ServerLocation.read(root: root)?.port { candidates = [previous, 0] }
        var bound: NIOAsyncChannel<EventLoopFuture<Connection>, Never>? = nil
        var lastError: (any Error)? = nil
        for port in candidates where bound == nil {
            do { bound = try await bind(host: host, port: port, door: door) } catch { lastError = error }
        }
        guard let channel = bound, let port = channel.channel.localAddress?.port else {
            throw CloudFormatError("cannot listen on \(listen.hostAndPort): \(lastError.map { "\($0)" } ?? "no address")")
        }
        let location = ServerLocation(host: CloudAddress(host: host, port: port).local.host, port: port, pid: getpid())
        try location.write(root: root)
        ready(location)
        try await withThrowingDiscardingTaskGroup { group in
            try await channel.executeThenClose { inbound in
                for try await connection in inbound {
                    group.addTask { await handle(connection, server: server, door: door, events: events) }
                }
            }
        }
    }

    private static func bind(
        host: String, port: Int, door: Door
    ) async throws -> NIOAsyncChannel<EventLoopFuture<Connection>, Never> {
        try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .serverChannelOption(.backlog, value: 256)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            // (NIO adds an AcceptBackoffHandler: at EMFILE it waits a second before accepting again.)
            .bind(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try configure(channel, door: door)
                }
            }
    }

    /// A new connection: a stranger until it shows a secret (the oldest
    /// stranger makes room for it past their budget); HTTP, with deadlines
    /// for its secret and its request, upgraded to the sync WebSocket by `syncUpgrader`.
    private static func configure(_ channel: Channel, door: Door) throws -> EventLoopFuture<Connection> {
        let limiter = door.limiter
        if let oldest = limiter.admit(channel) {
            oldest.close(promise: nil)
            door.refusals.report(
                "dropped-connection",
                [
                    "peer": oldest.remoteAddress.map { "\($0)" } ?? "unknown",
                    "reason":
                        "\(limiter.strangerBudget) connections had not shown a secret, the most this cloud waits for at once: "
                        + "the oldest is closed to make room",
                ])
        }
        channel.closeFuture.whenComplete { _ in limiter.release(channel) }
        // A request sent half, or a byte at a time, is closed when its time is up; a stranger sooner.
        let deadline = channel.eventLoop.scheduleTask(in: requestTimeout) { channel.close(promise: nil) }
        let credentials = channel.eventLoop.scheduleTask(in: credentialsTimeout) {
            if limiter.isStranger(channel) { channel.close(promise: nil) }
        }
        channel.closeFuture.whenComplete { _ in
            deadline.cancel()
            credentials.cancel()
        }
        let configuration = NIOTypedHTTPServerUpgradeConfiguration(
            upgraders: [syncUpgrader(deadline: deadline, door: door)],
            notUpgradingCompletionHandler: { channel in
                channel.eventLoop.makeCompletedFuture {
                    return .http(try NIOAsyncChannel(wrappingChannelSynchronously: channel))
                }
            })
        let connection = try channel.pipeline.syncOperations.configureUpgradableHTTPServerPipeline(
            configuration: .init(upgradeConfiguration: configuration))
        try channel.pipeline.syncOperations.addHandler(CloseAfterBadRequest())
        return connection
    }

    /// `/v1/sync` becomes a device's WebSocket once its secret is checked
    /// (a refusal is answered with 401, the same for every reason); the request's deadline then gives way to the idle timer.
    private static func syncUpgrader(
        deadline: Scheduled<Void>, door: Door
    ) -> NIOTypedWebSocketServerUpgrader<Connection> {
        NIOTypedWebSocketServerUpgrader<Connection>(
            maxFrameSize: maximumFrameBytes,
            shouldUpgrade: { channel, head in
                guard path(of: head) == "/v1/sync" else { return channel.eventLoop.makeSucceededFuture(nil) }
                // The device's secret is a file: read off the event loop (not at all for a connection
                // closed meanwhile, a stranger's made room for: a flood of upgrades costs no file reads).
                return NIOThreadPool.singleton.runIfActive(eventLoop: channel.eventLoop) { () -> CloudServiceError? in
                    guard channel.isActive else { return nil }
                    return refusal(of: head, isSync: true, gate: door.gate)
                }.map { refusal -> HTTPHeaders? in
                    // NIO drops the head of an upgrade it does not make: a refusal is answered here.
                    func answer(_ status: HTTPResponseStatus, _ reply: PlistValue, extra: [(String, String)]) -> HTTPHeaders? {
                        let parts = response(status: status, reply, extra: extra)
                        for part in parts.dropLast() { channel.write(part, promise: nil) }
                        channel.writeAndFlush(parts[parts.count - 1]).whenComplete { _ in channel.close(promise: nil) }
                        return nil
                    }
                    if let refusal {
                        door.logRefusal(refusal, of: head, peer: channel.remoteAddress)
                        return answer(.unauthorized, unauthorizedReply, extra: unauthorizedHeaders)
                    }
                    switch door.trust(channel) {
                    case .admitted: return HTTPHeaders()
                    case .full(let reply): return answer(.serviceUnavailable, reply, extra: busyHeaders)
                    case .gone: return nil
                    }
                }
            },
            upgradePipelineHandler: { channel, head in
                deadline.cancel()
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(IdleStateHandler(readTimeout: idleTimeout))
                    try channel.pipeline.syncOperations.addHandler(CloseWhenIdle())
                    return .websocket(
                        try NIOAsyncChannel<WebSocketFrame, WebSocketFrame>(wrappingChannelSynchronously: channel),
                        device: head.headers.first(name: CloudTrust.deviceHeader) ?? "")
                }
            })
    }

    private static func handle(_ connection: EventLoopFuture<Connection>, server: CloudServer, door: Door, events: @escaping Events) async {
        do {
            switch try await connection.get() {
            case .websocket(let channel, let device): try await serveDevice(channel, device: device, server: server, events: events)
            case .http(let channel): try await serveHTTP(channel, server: server, door: door)
            }
        } catch {
            // One connection's failure (a peer gone mid-frame) never stops the cloud.
        }
    }

    // MARK: A device's agent

    private static func serveDevice(
        _ channel: NIOAsyncChannel<WebSocketFrame, WebSocketFrame>, device: String, server: CloudServer, events: @escaping Events
    ) async throws {
        let (outgoing, continuation) = AsyncStream.makeStream(of: OutgoingFrame.self)
        let connection = channel.channel
        let outbox = DeviceOutbox(continuation, limit: outboxBytes) { reason in
            events("disconnected", ["device": .string(device), "reason": .string(reason)])
            // The reason goes in the close frame too, if the device ever reads that far; it reconnects and resyncs.
            var data = ByteBuffer()
            data.writeInteger(UInt16(1008))
            data.writeString(String(reason.utf8.prefix(120)) ?? "")
            connection.writeAndFlush(WebSocketFrame(fin: true, opcode: .connectionClose, data: data), promise: nil)
            connection.close(promise: nil)
        }
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
                        outbox.sent(frame)
                    }
                }
                group.addTask { await readFrames(inbound, device: device, outbox: outbox, server: server) }
                try await group.next()
                group.cancelAll()
            }
        }
        outbox.finish()
    }

    /// Reads a device's messages until it goes; then its session ends.
    private static func readFrames(
        _ inbound: NIOAsyncChannelInboundStream<WebSocketFrame>, device: String, outbox: DeviceOutbox, server: CloudServer
    ) async {
        var sessionID: Int? = nil
        do {
            for try await frame in inbound {
                switch frame.opcode {
                case .text:
                    let text = String(buffer: frame.unmaskedData)
                    if sessionID != nil {
                        let fault = await server.faults(of: device)
                        if fault.latencyMilliseconds > 0 { try await Task.sleep(for: .milliseconds(fault.latencyMilliseconds)) }
                        if fault.partitioned { continue }
                    }
                    do {
                        let message = try SyncCodec.decodeAgentMessage(text)
                        if let id = sessionID {
                            try await server.receive(message, session: id)
                        } else if case .hello(let name, let account, let stores) = message {
                            guard name == device else {
                                throw CloudFormatError(
                                    "hello names device \(CloudFormatError.brief(name)), but this connection showed the secret of \(device)")
                            }
                            let id = try await server.open(device: name, account: account, outbox: outbox)
                            sessionID = id
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
        _ channel: NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>, server: CloudServer, door: Door
    ) async throws {
        let peer = channel.channel.remoteAddress
        try await channel.executeThenClose { inbound, outbound in
            var head: HTTPRequestHead? = nil
            var body = ByteBuffer()
            for try await part in inbound {
                switch part {
                case .head(let requestHead):
                    // Checked before any body is read: a stranger's request costs nothing more.
                    let isSync = path(of: requestHead) == "/v1/sync"
                    if let refusal = refusal(of: requestHead, isSync: isSync, gate: door.gate) {
                        door.logRefusal(refusal, of: requestHead, peer: peer)
                        try await respond(outbound, status: .unauthorized, unauthorizedReply, extra: unauthorizedHeaders)
                        return
                    }
                    switch door.trust(channel.channel) {
                    case .admitted: break
                    case .full(let reply):
                        try await respond(outbound, status: .serviceUnavailable, reply, extra: busyHeaders)
                        return
                    case .gone: return
                    }
                    if isSync {
                        try await respond(outbound, status: .upgradeRequired, ["error": "/v1/sync is a WebSocket: send the upgrade headers"])
                        return
                    }
                    head = requestHead
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

    /// Why a request may not be served, or nil: `/v1/sync` needs a device's secret (an upgrade
    /// refused for its secret arrives here), everything else the control secret.
    private static func refusal(of head: HTTPRequestHead, isSync: Bool, gate: CloudTrust.Gate) -> CloudServiceError? {
        do throws(CloudServiceError) {
            if isSync { _ = try gate.checkDevice(head) } else { try gate.checkControl(head) }
            return nil
        } catch {
            return error
        }
    }

    static let unauthorizedHeaders = [("WWW-Authenticate", "Bearer realm=\"groupsim cloud\"")]
    /// Every refusal's answer, whatever the reason: why (and so whether a
    /// device of that name exists, or where the root is) is for the cloud's log only.
    static let unauthorizedReply: PlistValue = ["error": "unauthorized"]

    static let busyHeaders = [("Retry-After", "1")]

    /// What every connection meets before it is served: the secrets it must
    /// show, the places it may take (`ConnectionLimiter`), and the log of
    /// those refused (bounded: `RefusalLog`).
    struct Door: Sendable {
        let gate: CloudTrust.Gate
        let limiter: ConnectionLimiter
        let refusals: RefusalLog

        enum Trust {
            case admitted
            /// Every place for connections with a secret is taken: answered 503 with this.
            case full(PlistValue)
            /// Closed as a stranger meanwhile.
            case gone
        }

        /// The connection showed a secret: it takes a place of those who have one, if one is free.
        func trust(_ channel: any Channel) -> Trust {
            switch limiter.trust(channel) {
            case .admitted: return .admitted
            case .gone: return .gone
            case .full(let open):
                let reason =
                    "\(open) connections that showed a secret are open, the most this cloud serves at once "
                    + "(half its descriptor limit, at most \(ConnectionLimiter.ceiling), less \(limiter.strangerBudget) places for connections "
                    + "yet to show one); each has at most \(requestTimeout) for its request and \(idleTimeout) idle"
                refusals.report("refused-connection", ["peer": channel.remoteAddress.map { "\($0)" } ?? "unknown", "reason": reason])
                return .full(["error": .string("the cloud serves as many connections as it can; try again in a second")])
            }
        }

        /// Every refused request is in the cloud's log: who asked for what, and why it was refused.
        func logRefusal(_ refusal: CloudServiceError, of head: HTTPRequestHead, peer: SocketAddress?) {
            refusals.report(
                "unauthorized",
                [
                    "method": "\(head.method)", "path": CloudListener.path(of: head), "peer": peer.map { "\($0)" } ?? "unknown",
                    "reason": refusal.description,
                ])
        }
    }

    fileprivate static func path(of request: HTTPRequestHead) -> String {
        request.uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? request.uri
    }

    private static func route(_ request: HTTPRequestHead, body: String, server: CloudServer) async -> (HTTPResponseStatus, PlistValue) {
        let path = path(of: request)
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
            return (
                .notFound,
                [
                    "error": .string(
                        "no \(method) \(path); try GET /v1/status, /v1/accounts/<account>, "
                            + "/v1/accounts/<account>/stores/<store>, or POST /v1/faults/<device>")
                ]
            )
        } catch let missing as CloudServiceError where missing.isNotFound {
            return (.notFound, ["error": .string(missing.description)])
        } catch {
            return (.badRequest, ["error": .string("\(error)")])
        }
    }

    private static func respond(
        _ outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>, status: HTTPResponseStatus, _ reply: PlistValue,
        extra: [(String, String)] = []
    ) async throws {
        try await outbound.write(contentsOf: response(status: status, reply, extra: extra))
    }

    /// One JSON answer, after which the connection closes.
    private static func response(status: HTTPResponseStatus, _ reply: PlistValue, extra: [(String, String)] = []) -> [HTTPServerResponsePart] {
        let body = ByteBuffer(string: PlistJSON.encode(reply) + "\n")
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "application/json")
        headers.add(name: "Content-Length", value: String(body.readableBytes))
        headers.add(name: "Connection", value: "close")
        headers.add(contentsOf: extra)
        return [.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers)), .body(.byteBuffer(body)), .end(nil)]
    }
}

/// Closes a connection whose request could not be parsed, once NIO's
/// `HTTPServerProtocolErrorHandler` (before this in the pipeline) has
/// answered it 400: nothing more will be read from it, and before the
/// upgrade is decided nothing else would close it until its deadline.
private final class CloseAfterBadRequest: ChannelInboundHandler, Sendable {
    typealias InboundIn = NIOAny

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if error is HTTPParserError { context.close(promise: nil) }
        context.fireErrorCaught(error)
    }
}

/// Closes a connection when `IdleStateHandler` says nothing came for its time.
private final class CloseWhenIdle: ChannelInboundHandler, Sendable {
    typealias InboundIn = NIOAny

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is IdleStateHandler.IdleStateEvent {
            context.close(promise: nil)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }
}
