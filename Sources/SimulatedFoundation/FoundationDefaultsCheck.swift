import Foundation
import GroupDefaults
import Synchronization

/// Whether an executable also uses Foundation's own `UserDefaults`, which
/// no simulated process sees: a file that imports Foundation in a module
/// without `typealias UserDefaults = SimulatedFoundation.UserDefaults`, a
/// dependency that imports Foundation, or `Foundation.UserDefaults` written
/// out. The compiler picks it silently there, so the linker's record is
/// asked instead: an executable linked to Foundation dynamically (as
/// `swift build` links it) imports each `Foundation.UserDefaults` member it
/// calls by name, from its ELF dynamic symbol table.
public enum FoundationDefaultsCheck {
    /// The mangled prefix of every member of `Foundation.UserDefaults`.
    static let symbolPrefix = "$s10Foundation12UserDefaultsC"

    public enum CheckError: Error, CustomStringConvertible {
        case unreadable(path: String, reason: String)
        case notELF64(path: String, reason: String)

        public var description: String {
            switch self {
            case .unreadable(let path, let reason): "'\(path)' cannot be read: \(reason)"
            case .notELF64(let path, let reason): "'\(path)' is not a 64-bit little-endian ELF executable (\(reason)); the check knows only those"
            }
        }
    }

    /// The `Foundation.UserDefaults` members the executable at `path` imports,
    /// demangled ("static Foundation.UserDefaults.standard.getter …"); empty
    /// when it uses none. An executable with Foundation linked in statically
    /// (`--static-swift-stdlib`) imports nothing and cannot be checked so.
    public static func foundationUserDefaultsUses(inExecutable path: String) throws -> [String] {
        let file = try ELFFile(path: path)
        defer { file.close() }
        return try file.undefinedDynamicSymbols().filter { $0.hasPrefix(symbolPrefix) }.map(demangled).sorted()
    }

    private static let checked = Mutex(false)

    /// Once per process, in a process started under the simulation (`groupsim
    /// exec` names its bundle): says loudly if the executable also uses
    /// Foundation's own `UserDefaults`. An executable the check cannot read is
    /// not checked (said once, too).
    static func warnIfThisExecutableUsesFoundationDefaults(environment: [String: String]) {
        guard environment[ProcessIdentity.Variable.bundleIdentifier] != nil else { return }
        let first = checked.withLock { done in
            defer { done = true }
            return !done
        }
        guard first else { return }
        let executable = "/proc/self/exe"
        do {
            let uses = try foundationUserDefaultsUses(inExecutable: executable)
            guard !uses.isEmpty else { return }
            Diagnostics.report(Diagnostic(
                kind: .foundationUserDefaults,
                message: "this executable also uses Foundation's own UserDefaults (\(uses.joined(separator: "; "))), "
                    + "which no simulated process sees: its values are neither read from nor written to the simulation. "
                    + "A file imports Foundation in a module without `typealias UserDefaults = SimulatedFoundation.UserDefaults`, "
                    + "or writes Foundation.UserDefaults, or a dependency does (docs/api.md, \"Which UserDefaults a file gets\")"))
        } catch {
            Diagnostics.report(Diagnostic(
                kind: .foundationUserDefaults,
                message: "whether this executable also uses Foundation's own UserDefaults was not checked: \(error)"))
        }
    }

    static func demangled(_ symbol: String) -> String {
        symbol.withCString { name in
            guard let text = swiftDemangle(name, strlen(name), nil, nil, 0) else { return symbol }
            defer { free(text) }
            return String(cString: text)
        }
    }
}

/// The Swift runtime's demangler (the one `swift demangle` uses).
@_silgen_name("swift_demangle")
private func swiftDemangle(
    _ mangledName: UnsafePointer<CChar>?, _ mangledNameLength: Int, _ outputBuffer: UnsafeMutablePointer<CChar>?,
    _ outputBufferSize: UnsafeMutablePointer<Int>?, _ flags: UInt32
) -> UnsafeMutablePointer<CChar>?

/// Just enough of a 64-bit little-endian ELF file to list the symbols its
/// dynamic symbol table imports. Every offset and size read from the file is
/// checked against what was read, so a damaged file is an error, not a crash.
struct ELFFile {
    let path: String
    private let handle: FileHandle
    private let size: UInt64
    /// No section table or symbol table of an executable is near this; more means a damaged file.
    private static let largestPart: UInt64 = 256 << 20

    init(path: String) throws {
        self.path = path
        do {
            handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
            size = try handle.seekToEnd()
        } catch {
            throw FoundationDefaultsCheck.CheckError.unreadable(path: path, reason: "\(error)")
        }
    }

    func close() { try? handle.close() }

    func undefinedDynamicSymbols() throws -> [String] {
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
                try integer(sections, at: base + 0x38, width: 8))
        }
        let dynamicSymbolTable: UInt64 = 11  // SHT_DYNSYM
        guard let symbolsIndex = try (0..<sectionCount).first(where: { try section($0).type == dynamicSymbolTable }) else {
            return []  // statically linked: it imports nothing
        }
        let symbols = try section(symbolsIndex)
        guard symbols.entrySize >= 24, symbols.entrySize <= 256 else { throw bad("symbol size \(symbols.entrySize)") }
        let names = try section(symbols.link)
        let symbolData = try read(at: symbols.offset, count: symbols.size)
        let nameData = try read(at: names.offset, count: names.size)
        var result: [String] = []
        for start in stride(from: 0, to: symbolData.count - Int(symbols.entrySize) + 1, by: Int(symbols.entrySize)) {
            let nameOffset = try integer(symbolData, at: start, width: 4)
            let sectionIndex = try integer(symbolData, at: start + 6, width: 2)
            guard sectionIndex == 0, nameOffset > 0, nameOffset < UInt64(nameData.count) else { continue }
            let nameBytes = nameData[Int(nameOffset)...].prefix { $0 != 0 }
            result.append(String(decoding: nameBytes, as: UTF8.self))
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
        } catch let error as FoundationDefaultsCheck.CheckError {
            throw error
        } catch {
            throw FoundationDefaultsCheck.CheckError.unreadable(path: path, reason: "\(error)")
        }
    }

    private func integer(_ bytes: [UInt8], at offset: Int, width: Int) throws -> UInt64 {
        guard offset >= 0, offset + width <= bytes.count else { throw bad("a field at \(offset) is beyond its table") }
        var value: UInt64 = 0
        for index in (0..<width).reversed() { value = value << 8 | UInt64(bytes[offset + index]) }
        return value
    }

    private func bad(_ reason: String) -> FoundationDefaultsCheck.CheckError { .notELF64(path: path, reason: reason) }
}
