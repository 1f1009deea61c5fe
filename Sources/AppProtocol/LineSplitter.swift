import Foundation
import PropertyList

/// Cuts a stream of request bytes into protocol lines, holding at most
/// `maximumLineBytes` of a line that has not ended yet: a peer that sends a
/// line without end costs the reader that much memory, not more. Each byte is
/// looked at once, however many reads a long line arrives in.
///
/// Used by the simulated roles' stdin loop and by an executable's control
/// channel, so both refuse the same lines the same way (docs/protocol.md).
package struct LineSplitter {
    package enum Piece: Equatable, Sendable {
        /// A whole line, without its newline (nor a carriage return before it).
        case line(String)
        /// A line longer than the limit: refused once, its end skipped when it comes.
        case tooLong
    }

    /// Twice the largest property-list file: a request that sets the largest
    /// value a domain may hold still fits, as JSON.
    package static let defaultMaximumLineBytes = PlistLimits.maximumFileSize * 2

    package let maximumLineBytes: Int
    private var pending: [UInt8] = []
    /// How many bytes at the start of `pending` are known to hold no newline.
    private var searched = 0
    /// Inside a refused line: bytes are dropped up to its newline.
    private var skipping = false

    package init(maximumLineBytes: Int = Self.defaultMaximumLineBytes) {
        self.maximumLineBytes = maximumLineBytes
    }

    /// What a peer is told about a refused line.
    package static func refusal(maximumLineBytes: Int) -> String {
        "request line longer than \(maximumLineBytes) bytes: refused, and skipped up to its end"
    }

    /// The lines that `bytes` completes, in order.
    package mutating func feed(_ bytes: UnsafeRawBufferPointer) -> [Piece] {
        var pieces: [Piece] = []
        pending.append(contentsOf: bytes)
        var start = 0
        while let newline = Self.newline(in: pending, from: max(start, searched)) {
            if skipping {
                skipping = false
            } else if newline - start > maximumLineBytes {
                pieces.append(.tooLong)
            } else {
                var end = newline
                if end > start, pending[end - 1] == 0x0D { end -= 1 }
                pieces.append(.line(String(decoding: pending[start..<end], as: UTF8.self)))
            }
            start = newline + 1
            searched = start
        }
        pending.removeFirst(start)
        searched = pending.count
        if pending.count > maximumLineBytes {
            // Not kept while the rest arrives: refused now, its end skipped when it comes.
            if !skipping { pieces.append(.tooLong) }
            skipping = true
            pending.removeAll(keepingCapacity: false)
            searched = 0
        }
        return pieces
    }

    /// At the end of input: the last line, if it did not end with a newline.
    package mutating func finish() -> Piece? {
        defer {
            pending.removeAll()
            searched = 0
            skipping = false
        }
        guard !skipping, !pending.isEmpty else { return nil }
        var end = pending.count
        if pending[end - 1] == 0x0D { end -= 1 }
        return .line(String(decoding: pending[0..<end], as: UTF8.self))
    }

    private static func newline(in bytes: [UInt8], from offset: Int) -> Int? {
        guard offset < bytes.count else { return nil }
        return bytes.withUnsafeBytes { raw -> Int? in
            guard let found = memchr(raw.baseAddress! + offset, 0x0A, raw.count - offset) else { return nil }
            return UnsafeRawPointer(found) - raw.baseAddress!
        }
    }
}
