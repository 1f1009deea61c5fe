#if canImport(Glibc)
    import Glibc
#endif

/// CLOCK_MONOTONIC in nanoseconds: comparable between processes on one machine,
/// which is what propagation latencies are measured with.
package enum MonotonicClock {
    package static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}

/// Where one commit's time went, in nanoseconds.
package struct CommitTimings: Sendable, Equatable {
    package var lockWait: UInt64 = 0
    package var readAndDecode: UInt64 = 0
    package var encode: UInt64 = 0
    package var writeAndJournal: UInt64 = 0
    package var exchange: UInt64 = 0

    package init() {}

    package static func + (a: CommitTimings, b: CommitTimings) -> CommitTimings {
        var sum = CommitTimings()
        sum.lockWait = a.lockWait + b.lockWait
        sum.readAndDecode = a.readAndDecode + b.readAndDecode
        sum.encode = a.encode + b.encode
        sum.writeAndJournal = a.writeAndJournal + b.writeAndJournal
        sum.exchange = a.exchange + b.exchange
        return sum
    }
}
