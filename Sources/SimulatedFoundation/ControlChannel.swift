import AppProtocol
import ChildProcess
import CloudDevice
import Foundation
import GroupDefaults
import Guarded
import PropertyList
import SharedFiles
import SimulationValues

#if canImport(Glibc)
    import Glibc
#endif

/// The control protocol (docs/protocol.md), served by any executable that
/// links SimulatedFoundation, on a channel of its own: a connected stream
/// socket it inherits (`GROUPSIM_CONTROL_FD`) or connects to
/// (`GROUPSIM_CONTROL_SOCKET`, listened on by its own user), never its standard streams.
///
/// One thread owns the socket: it reads requests and writes what is queued
/// (responses and events), both without blocking, waiting in `poll`.
/// Requests run one at a time on a serial worker, as in the simulated roles,
/// so `ping` is answered while a command waits for a file lock. Events are
/// queued by whichever thread delivered them and never wait for the peer:
/// past `maximumOutgoingBytes` unsent, events are dropped and counted (an
/// `events-dropped` warning says how many once the peer catches up), and no
/// further request is read until the responses have gone. A peer that
/// closes the channel ends the thread; the program goes on.
/// Unchecked Sendable: the queued output and its counters are under `condition`; the descriptor is read and written by the channel's thread only.
package final class ControlChannel: @unchecked Sendable {
    package struct Limits: Sendable {
        /// A request line longer than this is refused (and skipped up to its newline).
        package var maximumLineBytes = LineSplitter.defaultMaximumLineBytes
        /// Unsent output past which events are dropped and requests wait.
        package var maximumOutgoingBytes = 4 << 20
        /// How long the process's exit waits for unsent lines to go.
        package var exitFlushSeconds = 1.0

        package init() {}
    }

    private let descriptor: Int32
    private let limits: Limits
    /// A pipe whose read end wakes the thread's `poll` when output is queued.
    private let wakeRead: Int32, wakeWrite: Int32
    private let session: ControlSession
    /// The one simulated process whose instances' events this channel sends (nil: every one of the program's).
    private let servedProcess: SimulatedProcess?
    private let worker = DispatchQueue(label: "groupsim.control.requests")

    /// Guards the fields below it (each `withLock` wakes the waits).
    private let condition = LockedCondition()
    private var outgoing: [UInt8] = []
    private var sentCount = 0
    private var isReady = false
    /// Events delivered before `ready` went out, which goes first.
    private var heldBeforeReady: [String] = []
    /// Bytes in `heldBeforeReady`: held events count against the outgoing limit too.
    private var heldBytes = 0
    private var droppedEvents = 0
    private var droppedUnreported = 0
    private var ended = false
    private var recentWarnings: [PlistValue] = []
    /// Requests read and not yet answered.
    private var requestsRunning = 0
    /// Observers called and not yet returned, and the `flush-events` requests waiting for them.
    private var inFlight = EventsInFlight()

    /// Whether `ready` waits for the program to be set up (`ProgramSetUp`): a
    /// program's own channel does; one a test serves for a process of its own does not.
    private let waitsForSetUp: Bool
    /// When the channel was made, as the program loaded: the fallback counts from here.
    private let loaded = Date()

    private init(descriptor: Int32, limits: Limits, wake: (read: Int32, write: Int32), process: SimulatedProcess?, waitsForSetUp: Bool) {
        self.waitsForSetUp = waitsForSetUp
        session = ControlSession(process: process)
        servedProcess = process
        self.descriptor = descriptor
        self.limits = limits
        wakeRead = wake.read
        wakeWrite = wake.write
    }

    // MARK: Starting

    /// Serves on `descriptor` (a connected stream socket this object then
    /// owns) and starts the tap; warnings go to the channel as well as to
    /// where they went before. `process`: whose defaults answer (nil: this
    /// process's `UserDefaults.standard`); a test or a benchmark names its own.
    /// Whether events of `source`'s instances are this channel's to send.
    func serves(_ source: SimulatedProcess) -> Bool { servedProcess.map { $0 === source } ?? true }

    package static func serve(
        descriptor: Int32, limits: Limits = Limits(), process: SimulatedProcess? = nil, waitsForSetUp: Bool = false
    ) throws -> ControlChannel {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw SimulatedFoundationError.wakePipe(errno: errno) }
        for end in ends + [descriptor] {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        }
        let channel = ControlChannel(descriptor: descriptor, limits: limits, wake: (ends[0], ends[1]), process: process, waitsForSetUp: waitsForSetUp)
        ControlTap.start(channel)
        Diagnostics.tee { [weak channel] diagnostic in channel?.warn(diagnostic) }
        let thread = Thread { channel.run() }
        thread.name = "groupsim.control"
        thread.start()
        return channel
    }

    /// At load: serves the channel the environment names, if it names one
    /// (nothing else happens when neither variable is set). The variables are
    /// removed and the descriptor closed on exec, so a program this one starts
    /// does not serve the same channel.
    static func startFromEnvironment() {
        let descriptorText = SimulationEnvironment.current[ControlProtocol.channelDescriptorVariable]
        let socketPath = SimulationEnvironment.current[ControlProtocol.channelSocketVariable]
        guard descriptorText != nil || socketPath != nil else { return }
        unsetenv(ControlProtocol.channelDescriptorVariable)
        unsetenv(ControlProtocol.channelSocketVariable)
        do {
            let descriptor: Int32
            if let descriptorText {
                descriptor = try inheritedSocket(descriptorText)
            } else {
                descriptor = try connectedSocket(socketPath ?? "")
            }
            let channel = try serve(descriptor: descriptor, waitsForSetUp: true)
            atexit { ControlChannel.flushAtExit() }
            exitFlushTarget = channel
        } catch {
            Diagnostics.report(Diagnostic(kind: .invalidEnvironment, message: "\(error); no control channel is served, the program runs without one"))
        }
    }

    nonisolated(unsafe) private static var exitFlushTarget: ControlChannel?

    private static func flushAtExit() {
        guard let channel = exitFlushTarget else { return }
        // A program that ends has done its setup: `ready` goes now if it has not.
        ProgramSetUp.markDone()
        // Deliveries of changes made just before exit are on the notification queue.
        PersistentDomain.deliverPendingNotifications()
        channel.waitUntilSent(timeout: channel.limits.exitFlushSeconds)
    }

    private static func inheritedSocket(_ text: String) throws -> Int32 {
        let variable = ControlProtocol.channelDescriptorVariable
        guard let number = Int32(text), number >= 3 else {
            throw SimulatedFoundationError.notADescriptor(variable: variable, text: text)
        }
        var status = stat()
        guard fstat(number, &status) == 0 else {
            throw SimulatedFoundationError.descriptorNotOpen(variable: variable, text: text, descriptor: number, errno: errno)
        }
        var type: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard (status.st_mode & S_IFMT) == S_IFSOCK, getsockopt(number, SOL_SOCKET, SO_TYPE, &type, &length) == 0,
            type == Int32(SOCK_STREAM.rawValue)
        else {
            throw SimulatedFoundationError.notAStreamSocket(variable: variable, text: text, descriptor: number)
        }
        return number
    }

    /// Connected to the driver listening at `path`, which must be this
    /// program's own user: a listener of another user is told nothing (not
    /// even `ready`, which names the root, the app and its groups).
    private static func connectedSocket(_ path: String) throws -> Int32 {
        do {
            return try UnixSocket.connectToOwnListener(at: path)
        } catch {
            throw SimulatedFoundationError.cannotConnect(variable: ControlProtocol.channelSocketVariable, path: path, error: error)
        }
    }

    // MARK: Output (any thread)

    /// Notes an event that begins now and is queued later (an observer's call): `flush-events` waits for it.
    func begin() -> (token: Int, stamp: UInt64) {
        let stamp = MonotonicClock.now()
        return condition.withLock { (inFlight.begin(at: stamp), stamp) }
    }

    /// Queues an event stamped with when it began (`begun`, or now); dropped (and counted) when the peer has not
    /// read enough of what was queued before. Ending a begun event may answer the `flush-events` it held back.
    func emit(_ event: AppEvent, begun: (token: Int, stamp: UInt64)? = nil) {
        let line = ControlProtocol.event(event, monotonic: begun?.stamp ?? MonotonicClock.now())
        let wasIdle = condition.withLock { () -> Bool in
            guard !ended else { return false }
            var wasIdle = false
            if outgoing.count - sentCount + heldBytes + line.utf8.count >= limits.maximumOutgoingBytes {
                droppedEvents += 1
                droppedUnreported += 1
            } else if !isReady, event.name != "warning" {
                heldBeforeReady.append(line)
                heldBytes += line.utf8.count + 1
            } else {
                wasIdle = appendLocked(line)
            }
            guard let begun else { return wasIdle }
            return endLocked(begun.token) || wasIdle
        }
        if wasIdle { wake() }
    }

    /// Ends a begun event that reports nothing.
    func end(_ begun: (token: Int, stamp: UInt64)) {
        if condition.withLock({ !ended && endLocked(begun.token) }) { wake() }
    }

    /// Ends a begun event and answers the `flush-events` it held back; true if the output was idle before.
    private func endLocked(_ token: Int) -> Bool {
        inFlight.end(token)
        var wasIdle = false
        for id in inFlight.answerable() { wasIdle = appendLocked(ControlProtocol.response(id: id, result: .done)) || wasIdle }
        return wasIdle
    }

    /// Queues a response: never dropped (requests are not read while the output is full).
    private func respond(_ line: String) {
        let wasIdle = condition.withLock { !ended && appendLocked(line) }
        if wasIdle { wake() }
    }

    /// Appends a line; true if nothing was waiting before it (then the
    /// thread may be waiting for input only, and is woken; otherwise it is
    /// already waiting to send, and sends everything queued).
    @discardableResult
    private func appendLocked(_ line: String) -> Bool {
        let wasIdle = sentCount == outgoing.count
        outgoing.append(contentsOf: line.utf8)
        outgoing.append(0x0A)
        return wasIdle
    }

    private func wake() {
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)  // a full pipe already wakes the thread
    }

    private func warn(_ diagnostic: Diagnostic) {
        condition.withLock {
            recentWarnings.append(.dictionary(["kind": .string(diagnostic.kind.rawValue), "message": .string(diagnostic.message)]))
            if recentWarnings.count > 32 { recentWarnings.removeFirst() }
        }
        emit(.warning(kind: diagnostic.kind.rawValue, message: diagnostic.message))
    }

    /// Waits until `ready`, every request received so far is answered, and
    /// everything queued is sent; or the channel ends, or `timeout` passes (a
    /// program that ends at once still says `ready`, and a program that ends
    /// because of a request, an observer it made the program call, still answers it). `answers` false: the requests
    /// are not waited for (a process that ends in one, without its exit handlers, sends what it said first).
    package func waitUntilSent(timeout: TimeInterval, answers: Bool = true) {
        _ = condition.wait(atMost: timeout) {
            ended || (isReady && !(answers && requestsRunning > 0) && sentCount >= outgoing.count)
        }
    }

    /// How long the process's exit waits for unsent lines to go.
    var exitFlushSeconds: TimeInterval { limits.exitFlushSeconds }

    /// Waits until the channel's thread has ended (the peer closed it).
    package func waitUntilEnded(timeout: TimeInterval) -> Bool {
        condition.wait(atMost: timeout) { ended }
    }

    /// Events dropped so far because the peer did not read.
    package var eventsDropped: Int { condition.withLock { droppedEvents } }

    // MARK: The channel's thread

    private func run() {
        if waitsForSetUp, !ProgramSetUp.waitUntilDone(before: loaded.addingTimeInterval(ProgramSetUp.fallbackSeconds)) {
            warn(
                Diagnostic(
                    kind: .setUpUnknown,
                    message: "the program said nothing about its setup within \(Int(ProgramSetUp.fallbackSeconds)) s (no readLine(), no "
                        + "GroupSim.ready(), no exit): ready was sent anyway, and a driver's first write may come before its observers; "
                        + "call GroupSim.ready() where the setup ends"))
        }
        // `ready` first (only warnings before it), then what was delivered meanwhile.
        var info = session.info()
        info["warnings"] = .array(condition.withLock { recentWarnings })
        let ready = ControlProtocol.event(.ready(info: info))
        condition.withLock {
            appendLocked(ready)
            for line in heldBeforeReady { appendLocked(line) }
            heldBeforeReady = []
            heldBytes = 0
            isReady = true
        }
        var lines = LineSplitter(maximumLineBytes: limits.maximumLineBytes)
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var peerFinished = false
        loop: while true {
            let (pending, full, running) = condition.withLock {
                (sentCount < outgoing.count, outgoing.count - sentCount >= limits.maximumOutgoingBytes, requestsRunning)
            }
            if peerFinished && !pending && running == 0 { break }
            // No more is read while the output is full or `queuedRequestLimit` requests wait (one read's lines
            // may go past it): a peer that floods requests meets a full socket, not a growing program.
            let reading = !peerFinished && !full && running < ControlProtocol.queuedRequestLimit
            var fds = [
                // When there is nothing to read or send, only the wake pipe is watched
                // (a closed socket reports POLLHUP on every call, whatever was asked).
                pollfd(
                    fd: reading || pending ? descriptor : -1,
                    events: Int16((reading ? POLLIN : 0) | (pending ? POLLOUT : 0)), revents: 0),
                pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
            ]
            // After the peer's end of input, requests still running are waited
            // for; output the peer does not take within the exit's flush time is given up.
            let ready = poll(&fds, 2, peerFinished && running == 0 ? Int32(limits.exitFlushSeconds * 1000) : -1)
            if ready < 0 {
                if errno == EINTR { continue }
                break
            }
            if ready == 0 { break }
            if fds[1].revents != 0 { while read(wakeRead, &buffer, buffer.count) > 0 {} }
            if fds[0].revents & Int16(POLLNVAL) != 0 { break }
            if fds[0].revents & Int16(POLLIN | POLLHUP | POLLERR) != 0, reading {
                let count = read(descriptor, &buffer, buffer.count)
                if count == 0 || (count < 0 && errno != EAGAIN && errno != EINTR) {
                    // The peer is done sending: answer what it asked, then end.
                    peerFinished = true
                    continue
                }
                if count > 0 {
                    let pieces = buffer.withUnsafeBytes { lines.feed(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
                    for piece in pieces {
                        switch piece {
                        case .line(let line): handle(line)
                        case .tooLong: refuseLongLine()
                        }
                    }
                }
            }
            if fds[0].revents & Int16(POLLOUT | POLLERR | POLLHUP) != 0, pending {
                guard sendQueued() else { break loop }
            }
        }
        finish()
    }

    private func refuseLongLine() {
        let message = LineSplitter.refusal(maximumLineBytes: limits.maximumLineBytes)
        perform { ControlProtocol.failure(id: "null", message: message) }
    }

    /// Runs `answer` on the worker, in request order, once the output has
    /// room: a peer that sends requests without reading the responses
    /// holds up only its own requests, and at most one response past the limit waits.
    private func perform(_ answer: @escaping @Sendable () -> String) {
        condition.withLock { requestsRunning += 1 }
        worker.async {
            let open = self.condition.wait(
                atMost: nil,
                for: { _ -> Bool? in
                    guard self.ended || self.outgoing.count - self.sentCount < self.limits.maximumOutgoingBytes else { return nil }
                    return !self.ended
                })
            if open == true { self.respond(answer()) }
            self.condition.withLock { self.requestsRunning -= 1 }
            self.wake()
        }
    }

    private func handle(_ line: String) {
        if line.allSatisfy({ $0 == " " || $0 == "\t" }) { return }
        let (id, suite, parsed) = ControlProtocol.parseAddressedRequest(line)
        switch parsed {
        case .success(.ping):
            respond(ControlProtocol.response(id: id, result: .done))
        case .success(.flushEvents):
            let came = MonotonicClock.now()
            if condition.withLock({ inFlight.flush(id: id, at: came) }) { respond(ControlProtocol.response(id: id, result: .done)) }
        case .failure(let error):
            let message = error.description
            perform { ControlProtocol.failure(id: id, message: message) }
        case .success(.exit(let status)):
            worker.async {
                // Saved here, before exit(): the program's main thread may be ending at this moment too (a driver
                // that asks for exit also closes the program's input), and two threads in exit() share its
                // handlers, so one can end the process while the other is still in the handler that saves.
                // Not saved: 74, as the exit handler says it.
                let saved = DomainRegistry.shared.synchronizeAll(reason: "at exit", skippingUnchangedSinceLastSave: true)
                UbiquitousStore.flushAll()
                self.respond(ControlProtocol.response(id: id, result: .done))
                // exit() runs the process's exit handlers: queued lines are sent.
                exit(saved ? status : 74)
            }
        case .success(let request):
            perform {
                do {
                    var result = try self.session.perform(request, suite: suite)
                    if case .info(var info) = result {
                        info["droppedEvents"] = .integer(Int64(self.eventsDropped))
                        info["warnings"] = .array(self.condition.withLock { self.recentWarnings })
                        result = .info(info)
                    }
                    return ControlProtocol.response(id: id, result: result)
                } catch {
                    return ControlProtocol.failure(id: id, message: "\(error)")
                }
            }
        }
    }

    /// Sends what the socket takes now; false when the peer is gone.
    private func sendQueued() -> Bool {
        let (bytes, from) = condition.withLock { (outgoing, sentCount) }
        let count = bytes[from...].withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        if count < 0 { return errno == EAGAIN || errno == EINTR }
        condition.withLock {
            sentCount += count
            if sentCount == outgoing.count {
                outgoing.removeAll(keepingCapacity: outgoing.count < 1 << 20)
                sentCount = 0
            }
        }
        reportDrops()
        return true
    }

    /// Once the peer has caught up, says how many events it missed.
    private func reportDrops() {
        let dropped = condition.withLock { () -> Int in
            guard droppedUnreported > 0, sentCount == outgoing.count else { return 0 }
            defer { droppedUnreported = 0 }
            return droppedUnreported
        }
        guard dropped > 0 else { return }
        let message =
            "\(dropped) event\(dropped == 1 ? " was" : "s were") dropped: the driver did not read the control channel "
            + "and more than \(limits.maximumOutgoingBytes) bytes were waiting (\(eventsDropped) in all; info's droppedEvents counts them)"
        condition.withLock { _ = appendLocked(ControlProtocol.event(.warning(kind: "events-dropped", message: message))) }
    }

    private func finish() {
        ControlTap.stop(self)
        condition.withLock {
            ended = true
            outgoing = []
            sentCount = 0
        }
        close(descriptor)
        close(wakeRead)
        close(wakeWrite)
    }
}

extension Diagnostics {
    /// Adds `also` to where diagnostics go, keeping the handler there was.
    static func tee(_ also: @escaping @Sendable (Diagnostic) -> Void) {
        let previous = Locked<(@Sendable (Diagnostic) -> Void)?>(nil)
        let replaced = Diagnostics.setHandler { diagnostic in
            if let handler = previous.withLock({ $0 }) {
                handler(diagnostic)
            } else {
                // Only in the instant between the two calls here: said where diagnostics go by default.
                FileHandle.standardError.write(Data("groupsim: warning: \(diagnostic.message)\n".utf8))
            }
            also(diagnostic)
        }
        previous.withLock { $0 = replaced }
    }
}

/// Run at load by the dynamic loader: a program started by a test or the
/// runner (`ExecutableIdentity`) is tied to its starter and gets its signals
/// unblocked, as the package's executables are tied first thing; then the
/// control channel is served when the environment names one. Without the
/// variables, nothing happens.
@used @section(".init_array")
private let startControlChannelAtLoad: @convention(c) () -> Void = {
    OwnerLifetime.adopt()
    StartingSignalMask.unblockIfAsked()
    ControlChannel.startFromEnvironment()
}
