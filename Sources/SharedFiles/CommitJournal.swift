import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What makes a `durable` commit survive a power loss with one flush and no
/// file-system journal commit: before the new file is exchanged into place,
/// its bytes are written into one of two slot files in the scratch folder,
/// `.<name>.journal-0` and `-1`, over blocks already on disk, and
/// `fdatasync`ed. Writing over allocated blocks changes no metadata the
/// data needs, so the flush is one disk write and a cache flush (a fsync of
/// a new file and of its folder are each a file-system journal commit).
///
/// The two slots alternate: a record torn by a power loss leaves the other
/// slot's record, the last whole one. Each record names the file it was
/// written for (device and inode of the temporary that became the plist)
/// and the boot it was written in, so a process opening the file after a
/// reboot can tell whether the file at the path is the last commit's and
/// whole, and put the record's bytes back when it is not
/// (`SharedPlistFile`'s recovery).
///
/// A record: a 72-byte header (magic, generation, length, hash of the
/// bytes, device, inode, hash of the boot id, hash of the header), then the bytes.
enum CommitJournal {
    static let slotCount = 2
    static let headerSize = 72
    private static let magic: UInt32 = 0x314A_5347  // "GSJ1", little-endian

    static func slotName(_ fileName: String, _ slot: Int) -> String { ".\(fileName).journal-\(slot)" }

    /// A slot's header, as read.
    struct Header: Equatable {
        var generation: UInt64
        var length: Int
        var bytesHash: UInt64
        var device: UInt64
        var inode: UInt64
        var boot: UInt64
    }

    /// A slot's whole record, its bytes checked against the header.
    struct Record {
        var slot: Int
        var header: Header
        var bytes: [UInt8]

        var identity: Identity { Identity(device: header.device, inode: header.inode) }
    }

    /// The file a record was written for.
    struct Identity: Equatable {
        var device: UInt64
        var inode: UInt64

        init(device: UInt64, inode: UInt64) {
            self.device = device
            self.inode = inode
        }

        init(_ info: stat) {
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
        }
    }

    // MARK: Writing (under the file's lock)

    /// Writes `bytes`, for the file `identity`, into the slot with the older
    /// record (never into `keeping`), and flushes it. Throws, naming the
    /// slot's path, if it cannot; the commit is then not made.
    /// `slotMade`: called once a slot is made or grown and on disk, before
    /// the record is written (the caller flushes the folders above).
    static func append(
        _ bytes: [UInt8], for identity: Identity, fileName: String, in scratch: Int32, scratchPath: String, keeping: Int? = nil,
        slotMade: () throws -> Void = {}
    ) throws {
        var slots: [(descriptor: Int32, created: Bool, size: Int, header: Header?)] = []
        defer { for slot in slots { close(slot.descriptor) } }
        for slot in 0..<slotCount {
            let (descriptor, created, size) = try openSlot(slotName(fileName, slot), in: scratch, path: scratchPath)
            slots.append((descriptor, created, size, readHeader(descriptor)))
        }
        let newest = slots.compactMap { $0.header?.generation }.max() ?? 0
        var target = (slots[0].header?.generation ?? 0) <= (slots[1].header?.generation ?? 0) ? 0 : 1
        if let keeping, target == keeping { target = 1 - keeping }
        let path = scratchPath + "/" + slotName(fileName, target)
        let header = Header(
            generation: newest + 1, length: bytes.count, bytesHash: hash(bytes), device: identity.device, inode: identity.inode,
            boot: BootIdentity.current ?? 0)
        let recordSize = headerSize + bytes.count
        let descriptor = slots[target].descriptor
        if recordSize > slots[target].size || slots[target].created {
            // Grown (or made) once, with zeros written and fsync'd, so every later record overwrites blocks already on disk.
            let size = max(4096, (recordSize + 4095) / 4096 * 4096 * 2)
            try writeAll(
                [UInt8](repeating: 0, count: size - slots[target].size), at: slots[target].size, to: descriptor, path: path)
            try systemCall("fsync", path) { fsync(descriptor) }
            // The slot's name too (made now, or by an attempt that failed before it was on disk).
            try systemCall("fsync the folder", scratchPath) { fsync(scratch) }
            try slotMade()
        }
        // Header and bytes in one write (one system call less per commit); flushed together either way.
        var record = encode(header)
        record.append(contentsOf: bytes)
        try writeAll(record, at: 0, to: descriptor, path: path)
        try systemCall("fdatasync", path) { fdatasync(descriptor) }
    }

    /// Removes both slots (the file was deleted or set aside: its last record must not come back after a reboot).
    static func remove(fileName: String, in scratch: Int32) {
        for slot in 0..<slotCount { unlinkat(scratch, slotName(fileName, slot), 0) }
    }

    // MARK: Reading

    /// The newest record's header, whether or not its bytes are whole (nil: no slot holds one).
    static func newestHeader(fileName: String, in scratch: Int32) -> Header? {
        (0..<slotCount).compactMap { slot -> Header? in
            let descriptor = openat(scratch, slotName(fileName, slot), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
            guard descriptor >= 0 else { return nil }
            defer { close(descriptor) }
            return readHeader(descriptor)
        }.max { $0.generation < $1.generation }
    }

    /// Every slot's record whose header and bytes are whole, newest first.
    /// A slot that is not a regular file, or holds more than `limit` bytes, holds none.
    static func records(fileName: String, in scratch: Int32, limit: Int) -> [Record] {
        (0..<slotCount).compactMap { slot -> Record? in
            let descriptor = openat(scratch, slotName(fileName, slot), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
            guard descriptor >= 0 else { return nil }
            defer { close(descriptor) }
            var info = stat()
            guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG, let header = readHeader(descriptor),
                header.length <= limit, headerSize + header.length <= Int(info.st_size)
            else { return nil }
            var bytes = [UInt8](repeating: 0, count: header.length)
            let count = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, off_t(headerSize)) }
            guard count == header.length, hash(bytes) == header.bytesHash else { return nil }
            return Record(slot: slot, header: header, bytes: bytes)
        }.sorted { $0.header.generation > $1.header.generation }
    }

    // MARK: Parts

    /// The slot open for reading and writing, whether it was made now, and its size.
    private static func openSlot(_ name: String, in scratch: Int32, path folderPath: String) throws -> (Int32, Bool, Int) {
        let path = folderPath + "/" + name
        let flags = O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK
        var created = false
        var descriptor = openat(scratch, name, flags)
        if descriptor == -1 && errno == ENOENT {
            descriptor = openat(scratch, name, flags | O_CREAT | O_EXCL, 0o600)
            created = descriptor >= 0
            if descriptor == -1 && errno == EEXIST { descriptor = openat(scratch, name, flags) }
        }
        if descriptor == -1 {
            let code = errno
            var info = stat()
            if code == ELOOP || code == ENXIO, fstatat(scratch, name, &info, AT_SYMLINK_NOFOLLOW) == 0 {
                throw SharedFileError.notARegularFile(path: path, kind: describeFileType(info.st_mode))
            }
            if code == ENOENT { throw SharedFileError.folderRemoved(operation: "open", path: path, errno: code) }
            throw SharedFileError.systemCall(operation: "open", path: path, errno: code)
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            close(descriptor)
            throw SharedFileError.notARegularFile(path: path, kind: describeFileType(info.st_mode))
        }
        return (descriptor, created, Int(info.st_size))
    }

    private static func writeAll(_ bytes: [UInt8], at offset: Int, to descriptor: Int32, path: String) throws {
        var written = 0
        while written < bytes.count {
            let count = try bytes.withUnsafeBytes { raw in
                try systemCall("write", path) { Int32(pwrite(descriptor, raw.baseAddress! + written, raw.count - written, off_t(offset + written))) }
            }
            written += Int(count)
        }
    }

    private static func readHeader(_ descriptor: Int32) -> Header? {
        var raw = [UInt8](repeating: 0, count: headerSize)
        let count = raw.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count == headerSize else { return nil }
        return decode(raw)
    }

    static func encode(_ header: Header) -> [UInt8] {
        var raw: [UInt8] = []
        raw.reserveCapacity(headerSize)
        func put<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { raw.append(contentsOf: $0) } }
        put(magic)
        put(UInt32(headerSize))
        put(header.generation)
        put(UInt64(header.length))
        put(header.bytesHash)
        put(header.device)
        put(header.inode)
        put(header.boot)
        put(UInt64(0))
        put(hash(raw))
        return raw
    }

    /// nil unless `raw` is a whole header (magic, size and its own hash); a length is never trusted beyond Int32,
    /// nor a generation so high that counting on from it could wrap.
    static func decode(_ raw: [UInt8]) -> Header? {
        guard raw.count == headerSize else { return nil }
        func get<T: FixedWidthInteger>(_ offset: Int, _: T.Type) -> T {
            raw.withUnsafeBytes { T(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: T.self)) }
        }
        guard get(0, UInt32.self) == magic, get(4, UInt32.self) == UInt32(headerSize), get(64, UInt64.self) == hash(Array(raw[0..<64])),
            get(16, UInt64.self) <= UInt64(Int32.max), get(8, UInt64.self) < 1 << 62
        else { return nil }
        return Header(
            generation: get(8, UInt64.self), length: Int(get(16, UInt64.self)), bytesHash: get(24, UInt64.self),
            device: get(32, UInt64.self), inode: get(40, UInt64.self), boot: get(48, UInt64.self))
    }

    /// A fast hash for telling a torn record from a whole one (not a defence
    /// against a writer who means harm: one who can write here can write the plist).
    static func hash(_ bytes: [UInt8]) -> UInt64 {
        bytes.withUnsafeBytes { raw in
            var state: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(raw.count)
            var offset = 0
            while offset + 8 <= raw.count {
                state = (state ^ raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) &* 0xFF51_AFD7_ED55_8CCD
                state ^= state >> 29
                offset += 8
            }
            while offset < raw.count {
                state = (state ^ UInt64(raw[offset])) &* 0xC4CE_B9FE_1A85_EC53
                offset += 1
            }
            return state ^ (state >> 32)
        }
    }
}

/// This boot of the machine, from `/proc/sys/kernel/random/boot_id` (a
/// commit's record carries it: a record of an earlier boot means the
/// machine stopped since, and the file may have lost what the record holds).
enum BootIdentity {
    /// nil where /proc does not say (then every first open checks the file against its record).
    static let current: UInt64? = {
        guard let text = try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8) else { return nil }
        let trimmed = Array(text.trimmingCharacters(in: .whitespacesAndNewlines).utf8)
        guard !trimmed.isEmpty else { return nil }
        return CommitJournal.hash(trimmed) | 1  // never 0, which a record of an unknown boot holds
    }()
}
