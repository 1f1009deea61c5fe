import ExecutableFile
import Foundation
import GroupDefaults
import Guarded

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

    /// Why an executable could not be checked: the file, and what about it the ELF reader refused.
    public struct CheckError: Error, CustomStringConvertible {
        public let description: String
    }

    /// The `Foundation.UserDefaults` members the executable at `path` imports,
    /// demangled ("static Foundation.UserDefaults.standard.getter …"); empty
    /// when it uses none. An executable with Foundation linked in statically
    /// (`--static-swift-stdlib`) imports nothing and cannot be checked so.
    /// - Parameter path: The executable.
    /// - Throws: `CheckError` when the file cannot be read or is no ELF file.
    /// - Returns: The demangled names of the members it imports.
    public static func foundationUserDefaultsUses(inExecutable path: String) throws -> [String] {
        do {
            let file = try ELFFile(path: path)
            defer { file.close() }
            return try file.undefinedDynamicSymbols().filter { $0.hasPrefix(symbolPrefix) }.map(demangled).sorted()
        } catch let failure as ELFFile.Failure {
            throw CheckError(description: failure.description)
        }
    }

    private static let checked = Locked(false)

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
            Diagnostics.report(
                Diagnostic(
                    kind: .foundationUserDefaults,
                    message: "this executable also uses Foundation's own UserDefaults (\(uses.joined(separator: "; "))), "
                        + "which no simulated process sees: its values are neither read from nor written to the simulation. "
                        + "A file imports Foundation in a module without `typealias UserDefaults = SimulatedFoundation.UserDefaults`, "
                        + "or writes Foundation.UserDefaults, or a dependency does (docs/api.md, \"Which UserDefaults a file gets\")"))
        } catch {
            Diagnostics.report(
                Diagnostic(
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
