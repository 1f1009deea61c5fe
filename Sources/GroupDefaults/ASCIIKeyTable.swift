import PropertyList

/// The merged view's ASCII keys (nearly every key an app uses) in an
/// open-addressing table with a cheap seeded hash: a cached read's look-up
/// without SipHash, which cost more than the rest of the read together.
/// Only ASCII keys: for them Swift's `==` (canonical equivalence) is byte
/// equality, so hashing bytes agrees with it. Any other key, and an ASCII
/// query whose canonical equal might be stored under other bytes, is looked
/// up in the snapshot's dictionary instead (see `SearchListSnapshot.value`).
///
/// Its storage is three buffers it owns (no array to retain or bounds-check
/// on a read). Changed only through `update`, by the owner of a snapshot no
/// other thread holds (see `SearchListSnapshot`); `copy` for a shared one.
final class ASCIIKeyTable {
    private struct Slot {
        var hash: UInt64
        /// Index into `keys` and `values`, or -1 for an empty slot.
        var index: Int
    }

    /// A power of two long, at most half full.
    private var slots: UnsafeMutablePointer<Slot>
    private var slotCount: Int
    private var keys: UnsafeMutablePointer<String>
    /// nil: removed by the instance's own set (the key stays, as a miss).
    private var values: UnsafeMutablePointer<PlistValue?>
    private var count = 0
    /// What `keys` and `values` have room for: half of `slotCount`.
    private var capacity: Int { slotCount / 2 }
    private let seed: UInt64
    /// Whether the view has a key that is not ASCII.
    private(set) var hasOtherKeys = false

    /// Random per process, so keys read from files cannot be chosen to collide.
    private static let processSeed = UInt64.random(in: .min ... .max)

    convenience init(_ entries: [String: PlistValue]) {
        var slotCount = 16
        while slotCount < entries.count * 2 { slotCount *= 2 }
        self.init(slotCount: slotCount, seed: Self.processSeed)
        for (key, value) in entries { update(key, to: value) }
    }

    private init(slotCount: Int, seed: UInt64) {
        self.seed = seed
        self.slotCount = slotCount
        slots = .allocate(capacity: slotCount)
        slots.initialize(repeating: Slot(hash: 0, index: -1), count: slotCount)
        keys = .allocate(capacity: slotCount / 2)
        values = .allocate(capacity: slotCount / 2)
    }

    deinit {
        keys.deinitialize(count: count)
        values.deinitialize(count: count)
        keys.deallocate()
        values.deallocate()
        slots.deallocate()
    }

    /// A table of its own with the same contents.
    func copy() -> ASCIIKeyTable {
        let copy = ASCIIKeyTable(slotCount: slotCount, seed: seed)
        copy.slots.update(from: slots, count: slotCount)
        copy.keys.initialize(from: keys, count: count)
        copy.values.initialize(from: values, count: count)
        copy.count = count
        copy.hasOtherKeys = hasOtherKeys
        return copy
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
        while offset &+ 8 <= count {
            let word = raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            highBits |= word
            hash = mix(hash ^ word)
            offset &+= 8
        }
        // The last 0–7 bytes in at most three loads (not a byte loop), byte i at bits 8i as before.
        let rest = count &- offset
        var tail: UInt64 = 0
        var filled = 0
        if rest & 4 != 0 {
            tail = UInt64(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
            filled = 4
        }
        if rest & 2 != 0 {
            let pair = UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: offset &+ filled, as: UInt16.self))
            tail |= UInt64(pair) &<< UInt64(filled &* 8)
            filled &+= 2
        }
        if rest & 1 != 0 { tail |= UInt64(base[offset &+ filled]) &<< UInt64(filled &* 8) }
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
        let mask = slotCount &- 1
        var slot = Int(truncatingIfNeeded: hash) & mask
        while true {
            let found = slots[slot]
            if found.index < 0 { return .none }
            if found.hash == hash, keys[found.index] == key { return .some(values[found.index]) }
            slot = (slot &+ 1) & mask
        }
    }

    /// Sets a key's value (nil: a miss from now on), adding the key if new.
    func update(_ key: String, to value: PlistValue?) {
        guard let hash = hash(key) else {
            hasOtherKeys = true
            return
        }
        let mask = slotCount - 1
        var slot = Int(truncatingIfNeeded: hash) & mask
        while slots[slot].index >= 0 {
            let index = slots[slot].index
            if slots[slot].hash == hash, keys[index] == key {
                values[index] = value
                return
            }
            slot = (slot + 1) & mask
        }
        if count == capacity {
            grow()
            return update(key, to: value)
        }
        slots[slot] = Slot(hash: hash, index: count)
        (keys + count).initialize(to: key)
        (values + count).initialize(to: value)
        count += 1
    }

    /// Twice the slots; keys and values move to buffers twice as long.
    private func grow() {
        let newSlotCount = slotCount * 2
        let newSlots = UnsafeMutablePointer<Slot>.allocate(capacity: newSlotCount)
        newSlots.initialize(repeating: Slot(hash: 0, index: -1), count: newSlotCount)
        let mask = newSlotCount - 1
        for old in UnsafeBufferPointer(start: slots, count: slotCount) where old.index >= 0 {
            var slot = Int(truncatingIfNeeded: old.hash) & mask
            while newSlots[slot].index >= 0 { slot = (slot + 1) & mask }
            newSlots[slot] = old
        }
        let newKeys = UnsafeMutablePointer<String>.allocate(capacity: newSlotCount / 2)
        let newValues = UnsafeMutablePointer<PlistValue?>.allocate(capacity: newSlotCount / 2)
        newKeys.moveInitialize(from: keys, count: count)
        newValues.moveInitialize(from: values, count: count)
        keys.deallocate()
        values.deallocate()
        slots.deallocate()
        (slots, keys, values, slotCount) = (newSlots, newKeys, newValues, newSlotCount)
    }
}
