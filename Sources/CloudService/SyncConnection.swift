import CloudClient
import CloudModel
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket

/// Opens the WebSocket an agent speaks to the cloud on (`GET /v1/sync`,
/// upgraded), as `device`, showing the device's secret.
enum SyncConnection {
    private enum Upgrade: Sendable {
        case websocket(NIOAsyncChannel<WebSocketFrame, WebSocketFrame>)
        case refused
    }

    static func open(_ address: CloudAddress, device: String, secret: String) async throws -> NIOAsyncChannel<WebSocketFrame, WebSocketFrame> {
        let upgrade: EventLoopFuture<Upgrade> = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .connectTimeout(.seconds(2))
            .connect(host: address.host, port: address.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    let upgrader = NIOTypedWebSocketClientUpgrader<Upgrade>(
                        maxFrameSize: CloudListener.maximumFrameBytes,
                        upgradePipelineHandler: { channel, _ in
                            channel.eventLoop.makeCompletedFuture {
                                .websocket(try NIOAsyncChannel<WebSocketFrame, WebSocketFrame>(wrappingChannelSynchronously: channel))
                            }
                        })
                    var headers = HTTPHeaders()
                    headers.add(name: "Host", value: address.hostAndPort)
                    headers.add(name: "Content-Length", value: "0")
                    headers.add(name: CloudTrust.deviceHeader, value: device)
                    headers.add(name: "Authorization", value: "Bearer \(secret)")
                    let configuration = NIOTypedHTTPClientUpgradeConfiguration<Upgrade>(
                        upgradeRequestHead: HTTPRequestHead(version: .http1_1, method: .GET, uri: "/v1/sync", headers: headers),
                        upgraders: [upgrader],
                        notUpgradingCompletionHandler: { channel in channel.eventLoop.makeCompletedFuture { .refused } })
                    return try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(
                        configuration: .init(upgradeConfiguration: configuration))
                }
            }
        switch try await upgrade.get() {
        case .websocket(let channel): return channel
        case .refused:
            throw CloudFormatError(
                "the cloud at \(address.url) refused the WebSocket of \(device) (a wrong or missing device secret? its log says why)")
        }
    }
}

/// A sync connection driven by hand: for tests that send the cloud what no
/// agent would, and for looking at the wire.
package enum RawSyncClient {
    /// Sends `frames` as masked text frames, in order, then returns the first
    /// `replies` text frames the cloud sends back (fewer if it closes first,
    /// or when `timeout` passes).
    package static func exchange(
        _ location: ServerLocation, device: String, secret: String, send frames: [String], replies: Int, timeout: Duration = .seconds(10)
    ) async throws -> [String] {
        let channel = try await SyncConnection.open(location.address, device: device, secret: secret)
        return try await channel.executeThenClose { inbound, outbound in
            for text in frames {
                try await outbound.write(WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: ByteBuffer(string: text)))
            }
            return try await withThrowingTaskGroup(of: [String]?.self) { group in
                group.addTask {
                    var collected: [String] = []
                    for try await frame in inbound where frame.opcode == .text {
                        collected.append(String(buffer: frame.unmaskedData))
                        if collected.count == replies { break }
                    }
                    return collected
                }
                group.addTask {
                    try await Task.sleep(for: timeout)
                    return nil
                }
                let first = try await group.next() ?? nil
                group.cancelAll()
                return first ?? []
            }
        }
    }
}
