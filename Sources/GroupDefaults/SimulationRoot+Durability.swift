import Foundation
import PropertyList
import SharedFiles
import SimulationValues

extension SimulationRoot {
    /// `<root>/settings.plist`: the root's settings (docs/layout.md).
    public var settingsPath: String { path + "/settings.plist" }

    static let durabilityKey = "durability"

    /// The root's durability: `durable` when no setting says otherwise. A
    /// setting that is not one of the names is an error naming the file.
    /// - Throws: `DefaultsError.badSetting` for an unknown name; the file's error when the settings cannot be read.
    /// - Returns: The durability new processes use.
    public func durability() throws -> Durability {
        guard let settings = try SharedPlistFile.read(path: settingsPath, root: path),
            let value = settings[Self.durabilityKey]
        else { return .durable }
        guard case .string(let name) = value, let durability = Durability(rawValue: name) else {
            throw DefaultsError.badSetting(
                path: settingsPath, key: Self.durabilityKey, found: value.stringValue.map { DefaultsError.show($0) } ?? "not a string",
                expected: Durability.allCases.map(\.rawValue).joined(separator: " or "))
        }
        return durability
    }

    /// Stores the root's durability (durably: the setting itself survives a
    /// power loss). Processes running now keep the durability their open
    /// domains were opened with; processes started afterwards use this one.
    /// - Parameter durability: The durability for processes started from now on.
    /// - Throws: The file system's error when the settings cannot be written.
    public func setDurability(_ durability: Durability) throws {
        try createDirectories(path)
        try SharedPlistFile(path: settingsPath, root: path).update { $0[Self.durabilityKey] = .string(durability.rawValue) }
    }
}
