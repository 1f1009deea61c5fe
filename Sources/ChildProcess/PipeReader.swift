import Foundation
import Guarded

#if canImport(Glibc)
    import Glibc
#endif

/// The one reader of a child's stdout or stderr: a thread that owns the
/// pipe's read end until end of file, hands each chunk it reads to `deliver`
/// (which splits it into lines and hands them on), then closes it.
///
/// `catchUp` lets a caller wait until every byte already in the pipe when it
/// asks has been handed over: a program that wrote a line and then said
/// `ready` on another channel has its line in the pipe, not yet read, when the
/// `ready` arrives. The caller never reads the descriptor itself; it asks the
/// kernel how much the pipe holds (FIONREAD) at a moment the reader is not
/// between taking bytes out of it and counting them, so that what was
/// written so far is exactly what was read plus what the pipe holds.
/// Unchecked Sendable: its variables are in `state`; the rest is set in `init`.
final class PipeReader: @unchecked Sendable {
    /// A test seam, read from the variables given for the child: with "1", the
    /// reader holds each chunk it read until a caller catches up (at most
    /// `holdBound`), so a check that does not catch up misses what the child
    /// wrote, every time rather than now and then.
    static let holdVariable = "CHILDPROCESS_TEST_HOLD_OUTPUT"
    static let holdBound: TimeInterval = 30

    private let handle: FileHandle
    private let holds: Bool
    private struct State {
        /// Between taking bytes out of the pipe and counting them in `read`.
        var reading = false
        /// Bytes taken out of the pipe so far, and bytes handed over (`deliver` returned).
        var read = 0
        var delivered = 0
        /// End of file was handed over and the descriptor closed.
        var closed = false
        /// Callers in `catchUp` (a held chunk goes on while there are any).
        var catchingUp = 0
    }
    private let state = LockedCondition(State())

    init(_ handle: FileHandle, name: String, holds: Bool, deliver: @escaping @Sendable (Data) -> Void) {
        self.handle = handle
        self.holds = holds
        let thread = Thread { [self] in run(deliver) }
        thread.name = name
        thread.start()
    }

    private func run(_ deliver: (Data) -> Void) {
        while true {
            // Waits for bytes without taking them, so that `reading` is set only around a read that does not block.
            PipeReading.waitReadable(handle)
            state.withLock { $0.reading = true }
            let chunk = PipeReading.nextChunk(handle)
            state.withLock {
                $0.reading = false
                $0.read += chunk.count
            }
            if holds, !chunk.isEmpty { holdUntilCaughtUp() }
            deliver(chunk)
            state.withLock {
                $0.delivered += chunk.count
                if chunk.isEmpty {
                    $0.closed = true
                    // Under the lock: `catchUp` asks about the descriptor only while it is open.
                    try? handle.close()
                }
            }
            if chunk.isEmpty { return }
        }
    }

    private func holdUntilCaughtUp() {
        state.wait(atMost: Self.holdBound, for: { $0.catchingUp > 0 ? () : nil }, timedOut: { _ in () })
    }

    /// Waits until every byte the pipe held when this was called has been
    /// handed over, or the pipe was read to its end; false if `deadline` came first.
    func catchUp(before deadline: Date) -> Bool {
        state.withLock { $0.catchingUp += 1 }
        defer { state.withLock { $0.catchingUp -= 1 } }
        // What was written so far: what was read plus what the pipe holds, asked while the reader is not mid-read
        // (it cannot take bytes out of the pipe while this holds the lock).
        var target: Int? = nil
        let handle = handle
        return state.wait(
            atMost: max(0, deadline.timeIntervalSinceNow),
            for: { state -> Bool? in
                if state.closed { return true }
                if target == nil {
                    if state.reading { return nil }
                    var held: Int32 = 0
                    guard ioctl(handle.fileDescriptor, UInt(FIONREAD), &held) == 0 else { return false }
                    target = state.read + Int(held)
                }
                return state.delivered >= target! ? true : nil
            },
            timedOut: { state in state.closed || target.map { state.delivered >= $0 } ?? false })
    }
}
