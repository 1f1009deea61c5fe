import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP connection to 127.0.0.1 driven byte by byte: for tests that behave
/// as no well-made client does (send half a request, never read).
package final class RawSocket {
    package let descriptor: Int32

    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }

    /// `receiveBuffer`: a small SO_RCVBUF set before connecting, so a peer that never reads stops the sender soon.
    package init(port: Int, receiveBuffer: Int32? = nil) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        if var size = receiveBuffer {
            setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw Failure(description: "connect to 127.0.0.1:\(port): \(reason)")
        }
    }

    deinit { close(descriptor) }

    package func send(_ text: String) throws { try send(Array(text.utf8)) }

    package func send(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count < 0 {
                if errno == EINTR { continue }
                throw Failure(description: "send: \(String(cString: strerror(errno)))")
            }
            sent += count
        }
    }

    /// Whatever arrives within `timeout` seconds; empty once the peer closed.
    /// Returns nil if nothing arrived and the connection is still open.
    package func receive(timeout: TimeInterval) -> [UInt8]? {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, Int32(timeout * 1000)) > 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let count = recv(descriptor, &buffer, buffer.count, 0)
        return count <= 0 ? [] : Array(buffer[0..<count])
    }

    /// Reads until `text` has arrived, the peer closes, or `timeout` passes; returns what arrived.
    package func receive(until text: String, timeout: TimeInterval) -> String {
        let deadline = Date().addingTimeInterval(timeout)
        var received: [UInt8] = []
        while !String(decoding: received, as: UTF8.self).contains(text) {
            let left = deadline.timeIntervalSinceNow
            guard left > 0, let chunk = receive(timeout: left), !chunk.isEmpty else { break }
            received += chunk
        }
        return String(decoding: received, as: UTF8.self)
    }

    /// Whether the peer closed the connection within `timeout` seconds (what it sent before is read and dropped).
    package func closedByPeer(within timeout: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while deadline.timeIntervalSinceNow > 0 {
            guard let chunk = receive(timeout: deadline.timeIntervalSinceNow) else { return false }
            if chunk.isEmpty { return true }
        }
        return false
    }

    /// One client WebSocket text frame (masked, as a client's must be, with a mask of zeros, which leaves the text as it is).
    package static func webSocketTextFrame(_ text: String) -> [UInt8] {
        let payload = Array(text.utf8)
        var frame: [UInt8] = [0x81]
        switch payload.count {
        case ..<126: frame.append(0x80 | UInt8(payload.count))
        case ..<65_536: frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xff)]
        default: frame += [0x80 | 127] + (0..<8).reversed().map { UInt8((UInt64(payload.count) >> (8 * UInt64($0))) & 0xff) }
        }
        return frame + [0, 0, 0, 0] + payload
    }
}
