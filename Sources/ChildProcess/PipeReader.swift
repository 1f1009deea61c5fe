import Foundation

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
/// Unchecked Sendable: its variables are under `condition`; the rest is set in `init`.
final class PipeReader: @unchecked Sendable {
    /// A test seam, read from the variables given for the child: with "1", the
    /// reader holds each chunk it read until a caller catches up (at most
    /// `holdBound`), so a check that does not catch up misses what the child
    /// wrote, every time rather than now and then.
    static let holdVariable = "CHILDPROCESS_TEST_HOLD_OUTPUT"
    static let holdBound: TimeInterval = 30

    private let condition = NSCondition()
    private let handle: FileHandle
    private let holds: Bool
    /// Between taking bytes out of the pipe and counting them in `read`.
    private var reading = false
    /// Bytes taken out of the pipe so far, and bytes handed over (`deliver` returned).
    private var read = 0
    private var delivered = 0
    /// End of file was handed over and the descriptor closed.
    private var closed = false
    /// Callers in `catchUp` (a held chunk goes on while there are any).
    private var catchingUp = 0

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
            condition.withLock { reading = true }
            let chunk = PipeReading.nextChunk(handle)
            condition.withLock {
                reading = false
                read += chunk.count
            }
            condition.broadcast()
            if holds, !chunk.isEmpty { holdUntilCaughtUp() }
            deliver(chunk)
            condition.withLock {
                delivered += chunk.count
                if chunk.isEmpty {
                    closed = true
                    // Under the lock: `catchUp` asks about the descriptor only while it is open.
                    try? handle.close()
                }
            }
            condition.broadcast()
            if chunk.isEmpty { return }
        }
    }

    private func holdUntilCaughtUp() {
        let deadline = Date().addingTimeInterval(Self.holdBound)
        condition.withLock {
            while catchingUp == 0 { if !condition.wait(until: deadline) { return } }
        }
    }

    /// Waits until every byte the pipe held when this was called has been
    /// handed over, or the pipe was read to its end; false if `deadline` came first.
    func catchUp(before deadline: Date) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        catchingUp += 1
        condition.broadcast()
        defer { catchingUp -= 1 }
        while reading, !closed {
            if !condition.wait(until: deadline) { break }
        }
        if closed { return true }
        if reading { return false }
        // The reader cannot take bytes out of the pipe while this holds the lock: written so far = read + held.
        var held: Int32 = 0
        guard ioctl(handle.fileDescriptor, UInt(FIONREAD), &held) == 0 else { return false }
        let target = read + Int(held)
        while delivered < target, !closed {
            if !condition.wait(until: deadline) { return delivered >= target || closed }
        }
        return true
    }
}
