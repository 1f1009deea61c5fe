import AppProtocol
import Foundation
import GroupDefaults
import Guarded
import Synchronization

/// Where this process's deliveries and warnings go while a control channel
/// serves (docs/protocol.md, "The control channel of your own executable"):
/// to the channel's outgoing lines. With no channel, each delivery and
/// each `set` pays one atomic load here, and nothing else.
enum ControlTap {
    private static let serving = Atomic<Bool>(false)
    /// Read from every thread that delivers while a channel serves.
    private static let channel = Locked<ControlChannel?>(nil)

    @inline(__always)
    static var isServing: Bool { serving.load(ordering: .acquiring) }

    static func start(_ sink: ControlChannel) {
        channel.withLock { $0 = sink }
        serving.store(true, ordering: .releasing)
    }

    /// Stops the tap if `sink` is still the one it feeds (a later channel may have replaced it).
    static func stop(_ sink: ControlChannel) {
        channel.withLock { channel in
            guard channel === sink else { return }
            channel = nil
            serving.store(false, ordering: .releasing)
        }
    }

    /// Sends `event` to the channel, if one serves `source` (the simulated process whose instance the event is of): a
    /// program's channel serves every instance of it; a test's or a benchmark's channel, made for one process of its
    /// own, only that one's, so events of other tests running beside it in the same process never reach it.
    static func emit(_ event: AppEvent, from source: SimulatedProcess) {
        guard isServing, let sink = channel.withLock({ $0 }), sink.serves(source) else { return }
        sink.emit(event)
    }

    /// Sends `event` (an `error` saying why) and waits, at most the channel's exit flush time, until it has gone: the
    /// process is about to end without running its exit handlers (an uncaught exception), which would send it. A
    /// program that ends has done its setup, as at exit: `ready` goes first if it has not.
    static func sayBeforeEnding(_ event: AppEvent, from source: SimulatedProcess) {
        guard isServing, let sink = channel.withLock({ $0 }), sink.serves(source) else { return }
        ProgramSetUp.markDone()
        sink.emit(event)
        sink.waitUntilSent(timeout: sink.exitFlushSeconds, answers: false)
    }

    /// Calls `observer` (the program's observer, or a post to them), then sends `event` to the channel serving `source`:
    /// stamped as the call began, so a line the observer prints is ordered after it, and queued once it returned,
    /// so a `flush-events` that came meanwhile waits for it. Without a channel, only the call.
    static func delivering(_ event: () -> AppEvent?, from source: SimulatedProcess, _ observer: () -> Void) {
        guard isServing, let sink = channel.withLock({ $0 }), sink.serves(source) else { return observer() }
        let begun = sink.begin()
        observer()
        // nil: nothing to report (a store whose notices are not the driver's): the begun event still ends.
        if let event = event() { sink.emit(event, begun: begun) } else { sink.end(begun) }
    }

    /// `delivering` for one observer of `mechanism` told of a change of a `UserDefaults` instance of `domain`.
    @inline(__always)
    static func delivering(
        _ mechanism: DeliveryMechanism, _ change: GroupSim.KeyChange, domain: String, from source: SimulatedProcess, _ observer: () -> Void
    ) {
        delivering(
            {
                .delivery(
                    Delivery(
                        mechanism: mechanism, key: change.key, old: change.stored.old, new: change.stored.new,
                        origin: change.stored.origin.rawValue, domain: domain))
            }, from: source, observer)
    }
}
