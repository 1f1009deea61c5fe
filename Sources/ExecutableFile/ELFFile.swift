import Foundation

/// Just enough of a 64-bit little-endian ELF file to list its symbols: the
/// ones its dynamic symbol table imports (SimulatedFoundation's check for
/// Foundation's own UserDefaults) and the ones it defines (the scenario
/// runner's check that an executable links SimulatedFoundation, which Swift
/// links statically: the static `.symtab` has it, the dynamic table may not).
/// Every offset and size read from the file is checked against what was
/// read, so a damaged file is an error, not a crash.
package struct ELFFile {
    package enum Failure: Error, CustomStringConvertible {
        case unreadable(path: String, reason: String)
        case notELF64(path: String, reason: String)

        package var description: String {
            switch self {
            case .unreadable(let path, let reason): "'\(path)' cannot be read: \(reason)"
            case .notELF64(let path, let reason): "'\(path)' is not a 64-bit little-endian ELF executable (\(reason)); the check knows only those"
            }
        }
    }

    package let path: String
    private let handle: FileHandle
    private let size: UInt64
    /// No section table or symbol table of an executable is near this; more means a damaged file.
    private static let largestPart: UInt64 = 256 << 20
    private static let staticSymbolTable: UInt64 = 2  // SHT_SYMTAB
    private static let dynamicSymbolTable: UInt64 = 11  // SHT_DYNSYM

    package init(path: String) throws {
        self.path = path
        do {
            handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
            size = try handle.seekToEnd()
        } catch {
            throw Failure.unreadable(path: path, reason: "\(error)")
        }
    }

    package func close() { try? handle.close() }

    /// The symbols the dynamic symbol table imports (empty for a statically linked file).
    package func undefinedDynamicSymbols() throws -> [String] {
        try symbols(in: [Self.dynamicSymbolTable], defined: false, where: { _ in true })
    }

    /// Whether the file defines a symbol starting with `prefix`, in its static
    /// symbol table (`.symtab`, absent once stripped) or its dynamic one.
    package func definesSymbol(withPrefix prefix: String) throws -> Bool {
        let bytes = Array(prefix.utf8)
        return try !symbols(
            in: [Self.staticSymbolTable, Self.dynamicSymbolTable], defined: true, limit: 1,
            where: { $0.starts(with: bytes) }
        ).isEmpty
    }

    /// The names of the symbols of the tables of `types` that are defined
    /// (or undefined) and whose name bytes satisfy `predicate`, at most `limit`.
    private func symbols(in types: [UInt64], defined: Bool, limit: Int = .max, where predicate: (ArraySlice<UInt8>) -> Bool) throws -> [String] {
        let header = try read(at: 0, count: 64)
        guard header.starts(with: [0x7F, 0x45, 0x4C, 0x46]) else { throw bad("no ELF magic number") }
        guard header[4] == 2, header[5] == 1 else { throw bad("class \(header[4]), data encoding \(header[5])") }
        let sectionTable = try integer(header, at: 0x28, width: 8)
        let sectionSize = try integer(header, at: 0x3A, width: 2)
        let sectionCount = try integer(header, at: 0x3C, width: 2)
        guard sectionSize >= 64 else { throw bad("section header size \(sectionSize)") }
        let sections = try read(at: sectionTable, count: sectionSize * sectionCount)
        func section(_ index: UInt64) throws -> (type: UInt64, offset: UInt64, size: UInt64, link: UInt64, entrySize: UInt64) {
            guard index < sectionCount else { throw bad("section \(index) of \(sectionCount)") }
            let base = Int(index * sectionSize)
            return (
                try integer(sections, at: base + 0x04, width: 4), try integer(sections, at: base + 0x18, width: 8),
                try integer(sections, at: base + 0x20, width: 8), try integer(sections, at: base + 0x28, width: 4),
                try integer(sections, at: base + 0x38, width: 8)
            )
        }
        var result: [String] = []
        for index in 0..<sectionCount where types.contains(try section(index).type) {
            let symbols = try section(index)
            guard symbols.entrySize >= 24, symbols.entrySize <= 256 else { throw bad("symbol size \(symbols.entrySize)") }
            let names = try section(symbols.link)
            let symbolData = try read(at: symbols.offset, count: symbols.size)
            let nameData = try read(at: names.offset, count: names.size)
            for start in stride(from: 0, to: symbolData.count - Int(symbols.entrySize) + 1, by: Int(symbols.entrySize)) {
                let nameOffset = try integer(symbolData, at: start, width: 4)
                let sectionIndex = try integer(symbolData, at: start + 6, width: 2)
                guard (sectionIndex != 0) == defined, nameOffset > 0, nameOffset < UInt64(nameData.count) else { continue }
                let nameBytes = nameData[Int(nameOffset)...].prefix { $0 != 0 }
                guard predicate(nameBytes) else { continue }
                result.append(String(decoding: nameBytes, as: UTF8.self))
                if result.count >= limit { return result }
            }
        }
        return result
    }

    private func read(at offset: UInt64, count: UInt64) throws -> [UInt8] {
        guard count <= Self.largestPart, offset <= size, count <= size - offset else {
            throw bad("\(count) bytes at \(offset) are beyond its \(size) bytes")
        }
        do {
            try handle.seek(toOffset: offset)
            let data = try handle.read(upToCount: Int(count)) ?? Data()
            guard data.count == Int(count) else { throw bad("short read at \(offset)") }
            return [UInt8](data)
        } catch let error as Failure {
            throw error
        } catch {
            throw Failure.unreadable(path: path, reason: "\(error)")
        }
    }

    private func integer(_ bytes: [UInt8], at offset: Int, width: Int) throws -> UInt64 {
        guard offset >= 0, offset + width <= bytes.count else { throw bad("a field at \(offset) is beyond its table") }
        var value: UInt64 = 0
        for index in (0..<width).reversed() { value = value << 8 | UInt64(bytes[offset + index]) }
        return value
    }

    private func bad(_ reason: String) -> Failure { .notELF64(path: path, reason: reason) }
}
