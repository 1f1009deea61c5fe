import Foundation

/// The bytes a writer makes, appended piece by piece into one buffer that
/// doubles when full. An array's `append` checks that its storage is unique
/// and large enough on every call, which cost more than the byte itself in
/// the binary writer's one- and two-byte appends (markers, lengths,
/// references). Owned by one writer for one encoding; `bytes` copies the result out.
final class ByteOutput {
    private var start: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    private(set) var count = 0

    init(capacity: Int) {
        self.capacity = max(capacity, 64)
        start = .allocate(capacity: self.capacity)
    }

    deinit { start.deallocate() }

    /// Everything appended so far.
    var bytes: [UInt8] { withUnsafeBytes { Array($0) } }

    /// `body` with everything appended so far, without a copy (valid only during the call).
    func withUnsafeBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        body(UnsafeBufferPointer(start: start, count: count))
    }

    @inline(__always)
    func append(_ byte: UInt8) {
        if count == capacity { grow(toHold: 1) }
        start[count] = byte
        count &+= 1
    }

    @inline(__always)
    func append(contentsOf bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        if capacity - count < bytes.count { grow(toHold: bytes.count) }
        UnsafeMutableRawPointer(start + count).copyMemory(from: base, byteCount: bytes.count)
        count &+= bytes.count
    }

    @inline(__always)
    func append(contentsOf bytes: UnsafeBufferPointer<UInt8>) { append(contentsOf: UnsafeRawBufferPointer(bytes)) }

    func append(contentsOf bytes: [UInt8]) { bytes.withUnsafeBytes { append(contentsOf: $0) } }

    func append(contentsOf data: Data) { data.withUnsafeBytes { append(contentsOf: $0) } }

    /// Any other sequence of bytes (a string's UTF-8 not stored contiguously), one at a time.
    func append<Bytes: Sequence<UInt8>>(contentsOf bytes: Bytes) {
        for byte in bytes { append(byte) }
    }

    /// Room for `more` bytes past `count`: at least twice the capacity, so appends stay amortized O(1).
    @inline(never)
    private func grow(toHold more: Int) {
        let (needed, overflow) = count.addingReportingOverflow(more)
        precondition(!overflow, "ByteOutput: more bytes than memory can address")
        let newCapacity = Swift.max(needed, capacity > Int.max / 2 ? Int.max : capacity * 2)
        let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        moved.moveInitialize(from: start, count: count)
        start.deallocate()
        (start, capacity) = (moved, newCapacity)
    }
}
