/// The order both writers put a dictionary's keys in (a binary property
/// list's file, JSON text): `String`'s `<`, decided
/// from each key's first 16 UTF-8 bytes when both keys are ASCII (for
/// ASCII, byte order is `<`'s order), so most comparisons are two integer
/// compares on plain values; ties beyond 16 bytes and non-ASCII keys use `<` itself.
enum KeyOrder {
    /// One key's first 16 bytes (big-endian, zero-padded), its length, whether
    /// it is ASCII, and where it is in the dictionary: no reference, so sorting moves no counts.
    struct Rank {
        var head: UInt64 = 0
        var tail: UInt64 = 0
        var length = 0
        var ascii = true
        let index: Dictionary<String, PlistValue>.Index

        init(_ key: String, index: Dictionary<String, PlistValue>.Index) {
            self.index = index
            var key = key
            key.withUTF8 { bytes in
                length = bytes.count
                for index in 0..<min(bytes.count, 16) {
                    let byte = UInt64(bytes[index])
                    if index < 8 { head |= byte << UInt64(56 - 8 * index) } else { tail |= byte << UInt64(120 - 8 * index) }
                }
                ascii = bytes.count <= 16 ? (head | tail) & 0x8080_8080_8080_8080 == 0 : BinaryPropertyList.isASCII(bytes)
            }
        }

        /// Whether `self` comes first, when the prefixes decide it.
        @inline(__always)
        func precedes(_ other: Rank) -> Bool? {
            guard ascii && other.ascii else { return nil }
            if head != other.head { return head < other.head }
            if tail != other.tail { return tail < other.tail }
            // Equal up to the shorter one's end, and both whole: the shorter first.
            if length <= 16 && other.length <= 16 { return length < other.length }
            return nil
        }
    }

    /// `dictionary`'s indices in the order of its keys.
    static func sorted(_ dictionary: [String: PlistValue]) -> [Dictionary<String, PlistValue>.Index] {
        withSortedRanks(dictionary) { ranks in ranks.map(\.index) }
    }

    /// `body` with `dictionary`'s keys ranked in order; the ranks are on the
    /// stack while they fit (a small dictionary is sorted without a heap allocation).
    static func withSortedRanks<Result>(_ dictionary: [String: PlistValue], _ body: (UnsafeMutableBufferPointer<Rank>) -> Result) -> Result {
        withUnsafeTemporaryAllocation(of: Rank.self, capacity: dictionary.count) { ranks in
            var filled = 0
            for index in dictionary.indices {
                (ranks.baseAddress! + filled).initialize(to: Rank(dictionary[index].key, index: index))
                filled += 1
            }
            defer { _ = ranks.prefix(filled).deinitialize() }
            let ranks = UnsafeMutableBufferPointer(rebasing: ranks[0..<filled])
            mergeSort(ranks) { a, b in a.precedes(b) ?? (dictionary[a.index].key < dictionary[b.index].key) }
            return body(ranks)
        }
    }

    /// A stable merge sort (insertion sort for short runs): the standard
    /// library's generic sort cost four times as much here.
    static func mergeSort(_ items: UnsafeMutableBufferPointer<Rank>, by precedes: (Rank, Rank) -> Bool) {
        let count = items.count
        guard count > 1 else { return }
        let run = 16
        for start in stride(from: 0, to: count, by: run) {
            let end = min(start + run, count)
            for index in (start + 1)..<end {
                let item = items[index]
                var hole = index
                while hole > start && precedes(item, items[hole - 1]) {
                    items[hole] = items[hole - 1]
                    hole -= 1
                }
                items[hole] = item
            }
        }
        guard count > run else { return }
        let spare = UnsafeMutableBufferPointer<Rank>.allocate(capacity: count)
        defer { spare.deallocate() }
        var (from, to) = (items, spare)
        var width = run
        while width < count {
            for start in stride(from: 0, to: count, by: 2 * width) {
                let middle = min(start + width, count)
                let end = min(start + 2 * width, count)
                var (left, right, out) = (start, middle, start)
                while left < middle && right < end {
                    // Ties take the left: stable.
                    if precedes(from[right], from[left]) {
                        to[out] = from[right]
                        right += 1
                    } else {
                        to[out] = from[left]
                        left += 1
                    }
                    out += 1
                }
                while left < middle {
                    to[out] = from[left]
                    left += 1
                    out += 1
                }
                while right < end {
                    to[out] = from[right]
                    right += 1
                    out += 1
                }
            }
            swap(&from, &to)
            width *= 2
        }
        if from.baseAddress != items.baseAddress { _ = items.update(fromContentsOf: from) }
    }
}
