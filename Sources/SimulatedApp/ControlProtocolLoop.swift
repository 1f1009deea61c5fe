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
enum ControlProtocolLoop {
    static func run(session: AppSession, output: LineWriter) -> Int32 {
        let worker = DispatchQueue(label: "groupsim.protocol.commands")
        while let line = readLine() {
            if line.trimmingCharacters(in: .whitespaces).isEmpty { continue }
            let (id, parsed) = ControlProtocol.parseRequest(line)
            switch parsed {
            case .success(.ping):
                output.write(ControlProtocol.response(id: id, result: .done))
            case .failure(let error):
                let message = error.description
                worker.async { output.write(ControlProtocol.failure(id: id, message: message)) }
            case .success(let command):
                worker.async {
                    do {
                        output.write(ControlProtocol.response(id: id, result: try session.perform(command)))
                    } catch {
                        output.write(ControlProtocol.failure(id: id, message: "\(error)"))
                    }
                }
                // Nothing after `exit` is read; the loop ends once it has run.
                if case .exit(let status) = command {
                    worker.sync {}
                    return status
                }
            }
        }
        worker.sync {}
        return 0
    }
}
