import AppProtocol
import Foundation
import Terminal

/// Events as JSON lines on stdout.
final class JSONEventSink: AppEventSink {
    let output: LineWriter
    init(output: LineWriter) { self.output = output }
    func emit(_ event: AppEvent) { output.write(ControlProtocol.event(event)) }
}

/// The protocol face's loop: one request per stdin line, until EOF or `exit`.
///
/// Commands run one at a time, in order, on a serial worker, so a command
/// waiting for a file lock (held, say, by a stopped process) delays the
/// commands after it but not the reading of requests: `ping` is answered at
/// once from here, which tells a driver the process is alive, only busy.
///
/// At most `ControlProtocol.queuedRequestLimit` requests wait for the
/// worker. Past that the loop reads no more until one is done, so a driver
/// that floods requests, or stops reading the answers (which holds the
/// worker at its next write), meets a full pipe instead of growing this
/// process's memory without end. A line is at most
/// `LineSplitter.defaultMaximumLineBytes` long: a longer one is refused.
enum ControlProtocolLoop {
    static func run(session: AppSession, output: LineWriter) -> Int32 {
        let worker = DispatchQueue(label: "groupsim.protocol.commands")
        let room = DispatchSemaphore(value: ControlProtocol.queuedRequestLimit)
        var lines = LineSplitter()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                // A non-blocking stdin (shared with a parent that set it so): wait for input.
                if errno == EAGAIN {
                    var input = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
                    _ = poll(&input, 1, -1)
                    continue
                }
                break
            }
            let pieces: [LineSplitter.Piece]
            if count == 0 {
                pieces = lines.finish().map { [$0] } ?? []
            } else {
                pieces = buffer.withUnsafeBytes { lines.feed(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            }
            for piece in pieces {
                if let status = perform(piece, session: session, output: output, worker: worker, room: room) {
                    worker.sync {}
                    return status
                }
            }
            if count == 0 { break }
        }
        worker.sync {}
        return 0
    }

    /// Answers one line: `ping` here, anything else on the worker once it has room.
    /// Returns the status to exit with after an `exit` request.
    private static func perform(
        _ piece: LineSplitter.Piece, session: AppSession, output: LineWriter, worker: DispatchQueue, room: DispatchSemaphore
    ) -> Int32? {
        let line: String
        switch piece {
        case .tooLong:
            room.wait()
            worker.async {
                defer { room.signal() }
                output.write(
                    ControlProtocol.failure(id: "null", message: LineSplitter.refusal(maximumLineBytes: LineSplitter.defaultMaximumLineBytes)))
            }
            return nil
        case .line(let text): line = text
        }
        if line.trimmingCharacters(in: .whitespaces).isEmpty { return nil }
        let (id, parsed) = ControlProtocol.parseRequest(line)
        switch parsed {
        case .success(.ping):
            output.write(ControlProtocol.response(id: id, result: .done))
        case .failure(let error):
            let message = error.description
            room.wait()
            worker.async {
                defer { room.signal() }
                output.write(ControlProtocol.failure(id: id, message: message))
            }
        case .success(let command):
            room.wait()
            worker.async {
                defer { room.signal() }
                do {
                    output.write(ControlProtocol.response(id: id, result: try session.perform(command)))
                } catch {
                    output.write(ControlProtocol.failure(id: id, message: "\(error)"))
                }
            }
            // Nothing after `exit` is read; the loop ends once it has run.
            if case .exit(let status) = command { return status }
        }
        return nil
    }
}
