import PropertyList

/// The merged view's ASCII keys (nearly every key an app uses) in an
/// open-addressing table with a cheap seeded hash: a cached read's look-up
/// without SipHash, which costs more than the rest of the read together.
/// Only ASCII keys: for them Swift's `==` (canonical equivalence) is byte
/// equality, so hashing bytes agrees with it. Any other key, and an ASCII
/// query whose canonical equal might be stored under other bytes, is looked
/// up in the snapshot's dictionary instead (see `SearchListSnapshot.value`).
struct ASCIIKeyTable {
    /// Index into `keys`, or -1 for an empty slot; a power of two long, at most half full.
    private var slots: [Int32]
    private var keys: [String] = []
    private var hashes: [UInt64] = []
    /// nil: removed by the instance's own set (the key stays, as a miss).
    private var values: [PlistValue?] = []
    private let seed: UInt64
    /// Whether the view has a key that is not ASCII.
    private(set) var hasOtherKeys = false

    /// Random per process, so keys read from files cannot be chosen to collide.
    private static let processSeed = UInt64.random(in: .min ... .max)

    init(_ entries: [String: PlistValue]) {
        seed = Self.processSeed
        var capacity = 16
        while capacity < entries.count * 2 { capacity *= 2 }
        slots = Array(repeating: -1, count: capacity)
        keys.reserveCapacity(entries.count)
        hashes.reserveCapacity(entries.count)
        values.reserveCapacity(entries.count)
        for (key, value) in entries { update(key, to: value) }
    }

    /// The key's hash, or nil if it is not ASCII (or not stored contiguously).
    @inline(__always)
    func hash(_ key: String) -> UInt64? {
        let seed = seed
        return key.utf8.withContiguousStorageIfAvailable { Self.hash($0, seed: seed) } ?? nil
    }

    @inline(__always)
    private static func hash(_ bytes: UnsafeBufferPointer<UInt8>, seed: UInt64) -> UInt64? {
        let count = bytes.count
        var hash = seed ^ UInt64(truncatingIfNeeded: count)
        guard count > 0, let base = bytes.baseAddress else { return mix(hash) }
        let raw = UnsafeRawPointer(base)
        var highBits: UInt64 = 0
        var offset = 0
        while offset + 8 <= count {
            let word = raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            highBits |= word
            hash = mix(hash ^ word)
            offset += 8
        }
        var tail: UInt64 = 0
        var shift: UInt64 = 0
        while offset < count {
            tail |= UInt64(base[offset]) << shift
            shift += 8
            offset += 1
        }
        highBits |= tail
        guard highBits & 0x8080_8080_8080_8080 == 0 else { return nil }
        return mix(hash ^ tail)
    }

    /// A multiply whose two halves are folded together: every input bit reaches every output bit.
    @inline(__always)
    private static func mix(_ value: UInt64) -> UInt64 {
        let product = value.multipliedFullWidth(by: 0x9E37_79B9_7F4A_7C15)
        return product.high ^ product.low
    }

    /// `.none` when the key is not in the table; `.some(nil)` when the
    /// instance's own set removed it. `hash`: `hash(key)`.
    @inline(__always)
    func value(forKey key: String, hash: UInt64) -> PlistValue?? {
        let mask = slots.count &- 1
        var slot = Int(truncatingIfNeeded: hash) & mask
        while true {
            let index = Int(slots[slot])
            if index < 0 { return .none }
            if hashes[index] == hash, keys[index] == key { return .some(values[index]) }
            slot = (slot &+ 1) & mask
        }
    }

    /// Sets a key's value (nil: a miss from now on), adding the key if new.
    mutating func update(_ key: String, to value: PlistValue?) {
        guard let hash = hash(key) else {
            hasOtherKeys = true
            return
        }
        let mask = slots.count - 1
        var slot = Int(truncatingIfNeeded: hash) & mask
        while slots[slot] >= 0 {
            let index = Int(slots[slot])
            if hashes[index] == hash, keys[index] == key {
                values[index] = value
                return
            }
            slot = (slot + 1) & mask
        }
        slots[slot] = Int32(keys.count)
        keys.append(key)
        hashes.append(hash)
        values.append(value)
        if keys.count * 2 > slots.count { grow() }
    }

    private mutating func grow() {
        slots = Array(repeating: -1, count: slots.count * 2)
        let mask = slots.count - 1
        for (index, hash) in hashes.enumerated() {
            var slot = Int(truncatingIfNeeded: hash) & mask
            while slots[slot] >= 0 { slot = (slot + 1) & mask }
            slots[slot] = Int32(index)
        }
    }
}
